"""The training step's optimiser (attnexp.train): the protocols' fused Adam against torch's
per-parameter loop (the step before 2026-11-23, the reference of benchmarks/train_speed.py), the
lazy embedding update (`embedding_update: lazy`) against dense Adam, and `train_epochs`, the
epoch-at-a-time form of `train_model` the benchmark alternates. Tiny models (tiny_tasks)."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import subprocess
import sys

import pytest
import torch
from tiny_tasks import ROOT, VOCAB, load_config, quiet, task_examples, tiny_settings
from torch import nn

from attnexp.models import parse_model_name
from attnexp.models.inputs import collate
from attnexp.models.splits import SplitData
from attnexp.train import build_and_initialise
from attnexp.train.loop import train_epochs, train_model
from attnexp.train.objectives import supervised_objective
from attnexp.train.optimizers import OPTIMIZER_IMPLEMENTATIONS, Adam, AdamW, LazyAdam, LazyAdamW, build_optimizer

torch.use_deterministic_algorithms(True)

CPU = torch.device("cpu")


@pytest.fixture(scope="module")
def config():
    return load_config()


def tiny_splits() -> dict[str, SplitData]:
    return {
        "train": SplitData(task_examples(48, 0, "tr")),
        "dev": SplitData(task_examples(16, 1, "d")),
        "test": SplitData(task_examples(16, 2, "te")),
    }


def lstm(settings, seed=0):
    torch.manual_seed(seed)
    model, _ = build_and_initialise(parse_model_name("lstm-tanh", "binary"), VOCAB, 2, None, settings)
    return model


def train_steps(model, settings, steps=5):
    """`steps` training steps on fixed batches, as the training loop takes them."""
    optimizer = build_optimizer(model, settings)
    objective = supervised_objective(1.0)
    batches = [collate(task_examples(16, 10 + i, "s"), model.layout) for i in range(steps)]
    for batch in batches:
        loss = objective(model, batch)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return optimizer


# --------------------------------------------------------------------------------------------------
# the optimiser each protocol builds


@pytest.mark.parametrize(
    "model, kind",
    [("lstm-tanh", Adam), ("han-rnn", Adam), ("transformer-cls", AdamW)],
)
def test_every_protocol_builds_torchs_fused_optimiser_updating_every_embedding_row(config, model, kind):
    settings = tiny_settings(config, model)
    assert settings["optimizer_implementation"] == "fused" and settings["embedding_update"] == "dense"
    torch.manual_seed(0)
    built, _ = build_and_initialise(parse_model_name(model, "binary"), VOCAB, 2, None, settings)
    optimizer = build_optimizer(built, settings)
    assert type(optimizer) is kind and all(g["fused"] for g in optimizer.param_groups)
    assert all(g["amsgrad"] == settings["amsgrad"] for g in optimizer.param_groups)


@pytest.mark.parametrize("implementation", list(OPTIMIZER_IMPLEMENTATIONS))
@pytest.mark.parametrize("eager, torchs", [(Adam, torch.optim.Adam), (AdamW, torch.optim.AdamW)])
def test_the_eager_optimiser_is_torchs_bit_for_bit_through_a_saved_and_restored_state(eager, torchs, implementation):
    """Without torch.compile's wrappers: the same weights after 6 steps, a warm-up schedule and a
    state dict saved after 3 steps and loaded into a new optimiser in between."""
    kwargs = {"lr": 1e-2, "amsgrad": True, "weight_decay": 1e-2} | OPTIMIZER_IMPLEMENTATIONS[implementation]
    weights = {}
    for kind in (eager, torchs):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1))
        x = torch.randn(32, 6, generator=torch.Generator().manual_seed(1))
        optimizer = kind(model.parameters(), **kwargs)
        schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / 3))
        for step in range(6):
            if step == 3:
                saved = optimizer.state_dict()
                optimizer = kind(model.parameters(), **kwargs)
                optimizer.load_state_dict(saved)
            optimizer.zero_grad()
            model(x).pow(2).mean().backward()
            optimizer.step()
            schedule.step()
        weights[kind] = torch.cat([p.detach().flatten() for p in model.parameters()])
    assert torch.equal(weights[eager], weights[torchs])


# Each protocol's training (J&W's amsgrad Adam, S&S's clipping and plateau schedule, the Transformer's
# AdamW with warm-up, a stopped training's snapshot and its resumption) in a fresh interpreter
NO_DYNAMO = """
import sys
from pathlib import Path
from tiny_tasks import load_config, run_fit, write_dataset
config, out = load_config(), Path(sys.argv[1])
data = write_dataset(out / "data")
for model in ("lstm-tanh", "han-rnn", "transformer-cls"):
    run_fit(config, data, out / model, model=model, epochs=2)
print(" ".join(m for m in sys.modules if m.startswith("torch._dynamo")))
"""


def test_training_never_imports_torch_dynamo(tmp_path):
    """torch._dynamo costs a training process as much CPU as torch's own import (`_Eager`)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), str(ROOT / "src")])}
    result = subprocess.run(
        [sys.executable, "-c", NO_DYNAMO, str(tmp_path)], capture_output=True, text=True, env=env, timeout=600
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == []
    assert torch_optim_imports_dynamo(tmp_path)  # the check sees the import torch's own optimiser makes


def torch_optim_imports_dynamo(tmp_path) -> bool:
    code = "import sys, torch\nmodel = torch.nn.Linear(2, 1)\ntorch.optim.Adam(model.parameters())\n"
    code += "print('torch._dynamo' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    return result.stdout.split() == ["True"]


def test_the_jain_wallace_groups_keep_the_protocols_weight_decay(config):
    settings = tiny_settings(config, "lstm-tanh")
    optimizer = build_optimizer(lstm(settings), settings)
    rest, attention = optimizer.param_groups
    assert rest["weight_decay"] == 1e-5 and attention["weight_decay"] == 0.0 and rest["lr"] == 1e-3 and rest["amsgrad"]
    assert not any(g["foreach"] for g in optimizer.param_groups)


def test_for_loop_is_the_step_before_the_fused_default(config):
    """`optimizer_implementation: for_loop` is bit for bit what `build_optimizer` built before: torch's
    Adam with no implementation named (its per-parameter loop on the CPU)."""
    settings = tiny_settings(config, "lstm-tanh", optimizer_implementation="for_loop", lr=1e-2)
    loop = lstm(settings)
    optimizer = train_steps(loop, settings)
    assert not any(g["fused"] or g["foreach"] for g in optimizer.param_groups)
    before = lstm(settings)
    attention = [p for n, p in before.named_parameters() if n.startswith("attention.")]
    rest = [p for n, p in before.named_parameters() if not n.startswith("attention.")]
    plain = torch.optim.Adam(
        [{"params": rest, "weight_decay": 1e-5}, {"params": attention, "weight_decay": 0.0}], lr=1e-2, amsgrad=True
    )
    objective = supervised_objective(1.0)
    for i in range(5):
        batch = collate(task_examples(16, 10 + i, "s"), before.layout)
        loss = objective(before, batch)
        plain.zero_grad()
        loss.backward()
        plain.step()
    assert all(torch.equal(a, b) for a, b in zip(loop.state_dict().values(), before.state_dict().values()))


@pytest.mark.parametrize("implementation", ["fused", "foreach"])
def test_fused_and_foreach_steps_match_the_for_loop_step(config, implementation):
    """The same update rule: after 5 steps the weights agree to rounding (foreach: exactly)."""
    states = {}
    for name in ("for_loop", implementation):
        settings = tiny_settings(config, "lstm-tanh", optimizer_implementation=name, lr=1e-2)
        model = lstm(settings)
        train_steps(model, settings)
        states[name] = model.state_dict()
    moved = lstm(tiny_settings(config, "lstm-tanh")).state_dict()
    for key, reference in states["for_loop"].items():
        torch.testing.assert_close(states[implementation][key], reference, rtol=1e-5, atol=1e-6)
        if implementation == "foreach":
            assert torch.equal(states[implementation][key], reference)
    assert any(not torch.equal(states["for_loop"][k], moved[k]) for k in moved)  # the steps moved the weights


# --------------------------------------------------------------------------------------------------
# the embedding's gradient: written sparse, clipped and stepped dense


@pytest.mark.parametrize(
    "model_name, clip", [("lstm-tanh", None), ("han-conv", 10.0), ("han-rnn", 1e-3), ("flan-none", 1e-3)]
)
def test_the_sparse_backward_gives_the_dense_backwards_training(config, model_name, clip):
    """Five steps through `EmbeddingGradients` (sparse backward, rows scattered into a dense
    gradient, clipping with the embedding's norm over its rows) end where nn.Embedding's dense
    backward and torch's clip_grad_norm_ end, to float rounding; clipping active (1e-3) or not."""
    from attnexp.train.parts import EmbeddingGradients

    settings = tiny_settings(config, model_name, lr=1e-2, grad_clip=clip)
    kind = "binary" if model_name == "lstm-tanh" else "multiclass"
    states = []
    for sparse in (True, False):
        torch.manual_seed(0)
        model, _ = build_and_initialise(parse_model_name(model_name, kind), VOCAB, 2, None, settings)
        optimizer, gradients = build_optimizer(model, settings), EmbeddingGradients(model, settings)
        objective = supervised_objective(1.0 if kind == "binary" else None)
        start = model.embedding.weight.detach().clone()
        with gradients.sparse() if sparse else contextlib.nullcontext():
            for i in range(5):
                torch.manual_seed(100 + i)  # the same dropout draws on both sides
                loss = objective(model, collate(task_examples(16, 10 + i, "s"), model.layout))
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                assert model.embedding.weight.grad.is_sparse is sparse
                if sparse:
                    gradients.after_backward(model, clip)
                    assert not model.embedding.weight.grad.is_sparse
                elif clip is not None:
                    nn.utils.clip_grad_norm_(model.parameters(), clip)
                optimizer.step()
        assert model.embedding.sparse is False
        assert not torch.equal(model.embedding.weight, start)
        states.append(model.state_dict())
    for key, dense in states[1].items():
        torch.testing.assert_close(
            states[0][key], dense, rtol=1e-4, atol=1e-5
        )  # Adam divides by |g|: rounding of tiny gradients shows


def test_the_dense_gradient_holds_only_the_last_batchs_rows():
    from attnexp.train.parts import EmbeddingGradients

    class Embedded(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = embedding_model(sparse=False)[0]

        def forward(self, tokens):
            return self.embedding(tokens)

    model = Embedded()
    gradients = EmbeddingGradients(model, {"embedding_update": "dense", "grad_clip": None})
    with gradients.sparse():
        for tokens in ([[1, 2, 3, 1, 0, 0]], [[4, 5, 5, 0, 0, 0]]):
            model.zero_grad(set_to_none=True)
            model(torch.tensor(tokens)).pow(2).sum().backward()
            gradients.after_backward(model, None)
    grad = model.embedding.weight.grad
    assert grad.abs().sum(dim=1).nonzero().flatten().tolist() == [4, 5]  # PAD (0) has none; rows 1-3 were zeroed


# --------------------------------------------------------------------------------------------------
# the lazy embedding update (a named deviation)


def embedding_model(sparse: bool) -> nn.Module:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Embedding(12, 4, padding_idx=0, sparse=sparse), nn.Flatten(), nn.Linear(4 * 6, 1))
    return model


def embedding_steps(model, optimizer_class, tokens_per_step, **kwargs):
    optimizer = optimizer_class(model.parameters(), lr=0.05, **kwargs)
    for tokens in tokens_per_step:
        loss = model(torch.tensor(tokens)).pow(2).sum()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return optimizer


@pytest.mark.parametrize(
    "dense_class, lazy_class, kwargs",
    [
        (torch.optim.Adam, LazyAdam, {"amsgrad": True, "weight_decay": 1e-2}),
        (torch.optim.Adam, LazyAdam, {"amsgrad": False, "weight_decay": 0.0}),
        (torch.optim.AdamW, LazyAdamW, {"amsgrad": True, "weight_decay": 1e-2}),
    ],
)
def test_lazy_adam_is_dense_adam_when_every_row_is_in_every_batch(dense_class, lazy_class, kwargs):
    every_row = [
        [[1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 11, 3]],
        [[11, 10, 9, 8, 7, 6], [5, 4, 3, 2, 1, 1]],
    ] * 3  # duplicates too
    dense, lazy = embedding_model(False), embedding_model(True)
    embedding_steps(dense, dense_class, every_row, **kwargs)
    optimizer = embedding_steps(lazy, lazy_class, every_row, **kwargs)
    assert lazy[0].weight.grad.is_sparse  # the lazy path was taken
    assert optimizer.state[lazy[0].weight]["step"].item() == 6
    for a, b in zip(dense.parameters(), lazy.parameters()):
        torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-7)


def test_lazy_adam_leaves_absent_rows_where_dense_adam_moves_them():
    """Rows 7-11 never appear: dense Adam moves them anyway (L2 decay through the moments), lazy
    Adam leaves them as they were; the padding row stays zero under both."""
    steps = [[[1, 2, 3, 4, 5, 6], [6, 5, 4, 3, 2, 0]]] * 4
    start = embedding_model(False)[0].weight.detach().clone()
    dense, lazy = embedding_model(False), embedding_model(True)
    embedding_steps(dense, torch.optim.Adam, steps, amsgrad=True, weight_decay=1e-2)
    embedding_steps(lazy, LazyAdam, steps, amsgrad=True, weight_decay=1e-2)
    assert torch.equal(lazy[0].weight[7:], start[7:])
    assert (dense[0].weight[7:] - start[7:]).abs().min() > 0.01  # about lr per step
    assert (lazy[0].weight[1:7] != start[1:7]).all()
    assert (lazy[0].weight[0] == 0).all() and (dense[0].weight[0] == 0).all()


def test_lazy_training_is_deterministic_and_leaves_the_embedding_dense(config):
    settings = tiny_settings(config, "lstm-tanh", embedding_update="lazy", epochs=2, lr=1e-2)
    results = []
    for _ in range(2):
        model = lstm(settings)
        results.append(train_model(model, tiny_splits(), settings, select_on="dev", seed=0, device=CPU, log=quiet))
        assert model.embedding.sparse is False  # restored after training
    assert results[0].history == results[1].history
    assert all(torch.equal(results[0].state_dict[k], results[1].state_dict[k]) for k in results[0].state_dict)
    # <UNK> (row 1) is in no batch: lazy Adam leaves it as initialised, dense Adam moves it
    start = lstm(settings).embedding.weight.detach()
    dense = train_model(
        lstm(settings),
        tiny_splits(),
        settings | {"embedding_update": "dense"},
        select_on="dev",
        seed=0,
        device=CPU,
        log=quiet,
    )
    assert torch.equal(results[0].state_dict["embedding.weight"][1], start[1])
    assert not torch.equal(dense.state_dict["embedding.weight"][1], start[1])


def test_lazy_embedding_update_refuses_gradient_clipping(config):
    settings = tiny_settings(config, "lstm-tanh", embedding_update="lazy", grad_clip=1.0)
    model = lstm(settings)
    with pytest.raises(ValueError, match="grad_clip"):
        train_model(model, tiny_splits(), settings, select_on="dev", seed=0, device=CPU, log=quiet)
    assert model.embedding.sparse is False


# --------------------------------------------------------------------------------------------------
# train_epochs: what the benchmark alternates


def test_train_epochs_yields_each_epoch_and_returns_train_models_result(config):
    settings = tiny_settings(config, "lstm-tanh", epochs=3, lr=1e-2)
    expected = train_model(lstm(settings), tiny_splits(), settings, select_on="dev", seed=0, device=CPU, log=quiet)
    epochs = train_epochs(lstm(settings), tiny_splits(), settings, select_on="dev", seed=0, device=CPU, log=quiet)
    records = [next(epochs) for _ in range(3)]
    with pytest.raises(StopIteration) as finished:
        next(epochs)
    result = finished.value.value
    assert records == result.history == expected.history and result.best_epoch == expected.best_epoch
    assert all(torch.equal(result.state_dict[k], expected.state_dict[k]) for k in expected.state_dict)
    timing = result.timing
    assert timing["train_seconds"] == pytest.approx(timing["step_seconds"] + timing["eval_seconds"], abs=2e-3)


def test_the_benchmarks_variants_switch_the_models_engines():
    spec = importlib.util.spec_from_file_location("train_speed", ROOT / "benchmarks" / "train_speed.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    older = {"embedding_backward": "dense", "han_layout": "chunks"}
    assert (
        module.VARIANTS["reference"]
        == {"recurrence": "per_direction", "dropout_draws": "bernoulli", "han_chunks": "fixed"} | older
    )
    assert module.VARIANTS["previous"] == older
    assert module.VARIANTS["default"] == {}  # config.yaml as it stands
    from tiny_models import flat, hierarchical, random_examples
    from torch import nn

    from attnexp.models.encoders import Dropout
    from attnexp.models.inputs import collate

    # the packed reference: the same BiLSTM states as today's, by another path
    model = flat("lstm", "tanh")
    packed, overrides = module.prepared(model, module.VARIANTS["packed_for_loop"])
    assert overrides == {"optimizer_implementation": "for_loop"}
    assert type(packed.embedding) is module.DenseBackwardEmbedding and type(model.embedding) is nn.Embedding
    packed.embedding.sparse = True  # what training asks: this one keeps its dense backward
    assert packed.embedding.sparse is False
    assert packed.encoder.implementation == "packed" and model.encoder.implementation == "per_direction"
    batch = collate(random_examples([7, 3, 11, 1]), "sos_eos")
    with torch.no_grad():
        assert torch.allclose(packed.encode(batch).hidden, model.encode(batch).hidden, atol=1e-6)
    # the reference HAN: per-direction GRU, torch's dropout, fixed chunks; the model itself untouched
    han = hierarchical("han", "rnn")
    reference, overrides = module.prepared(han, module.VARIANTS["reference"])
    assert overrides == {}
    assert reference.word_encoder.implementation == "per_direction" and han.word_encoder.implementation == "fused"
    assert type(reference.embedding_dropout) is nn.Dropout and type(han.embedding_dropout) is Dropout
    assert reference.step_cost_words == float("inf") and han.step_cost_words == 8
    conv = hierarchical("han", "conv")
    chunked, _ = module.prepared(conv, module.VARIANTS["previous"])
    assert chunked.lay_out_sentences is False and conv.lay_out_sentences is True
