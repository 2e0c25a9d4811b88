"""Training (attnexp.train): class weights, objectives (the supervised default and a custom hook),
model construction, the training loop with checkpoint selection, and `fit` from files to files. Tiny
models on a tiny generated task (tiny_tasks), settings taken from the real config.yaml."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from tiny_tasks import VOCAB, load_config, quiet, run_fit, task_examples, tiny_settings, write_dataset

from attnexp.checkpoints import load_checkpoint
from attnexp.metrics import classification_metrics
from attnexp.models import parse_model_name
from attnexp.models.inputs import collate
from attnexp.models.splits import SplitData
from attnexp.runtime import predict
from attnexp.train import TrainingJob, build_and_initialise, fit
from attnexp.train.loop import train_model
from attnexp.train.objectives import class_weights, supervised_objective

torch.use_deterministic_algorithms(True)

CPU = torch.device("cpu")


@pytest.fixture(scope="module")
def config():
    return load_config()


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return write_dataset(tmp_path_factory.mktemp("data"))


@pytest.fixture(scope="module")
def fitted(config, data, tmp_path_factory):
    """One lstm-tanh trained through `fit`: (metrics, checkpoint path)."""
    return run_fit(config, data, tmp_path_factory.mktemp("fit-a"))


@pytest.fixture(scope="module")
def fitted_again(config, data, tmp_path_factory):
    """The same `fit` call again, into another folder."""
    return run_fit(config, data, tmp_path_factory.mktemp("fit-b"))


def tiny_splits(train=64, dev=32, test=40) -> dict[str, SplitData]:
    return {
        "train": SplitData(task_examples(train, 0, "tr")),
        "dev": SplitData(task_examples(dev, 1, "d")),
        "test": SplitData(task_examples(test, 2, "te")),
    }


# --------------------------------------------------------------------------------------------------
# class weights and objectives


def test_class_weights():
    assert class_weights(np.array([1, 0, 0, 0])) == 3.0
    assert class_weights(np.array([1, 1, 0, 0, 0, 0])) == 2.0
    assert class_weights(np.array([1, 1, 1, 0])) == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="no positive"):
        class_weights(np.array([0, 0]))


def test_supervised_objective_is_the_summed_class_weighted_bce_by_hand(config):
    torch.manual_seed(0)
    model, _ = build_and_initialise(
        parse_model_name("lstm-tanh", "binary"), VOCAB, 2, None, tiny_settings(config, "lstm-tanh")
    )
    batch = collate(task_examples(6, 3, "o"), model.layout)
    with torch.no_grad():
        loss = supervised_objective(3.0)(model, batch)
        logits = model(batch)[0][:, 0].double()
    p = torch.sigmoid(logits)
    y = batch.labels.double()
    by_hand = -(3.0 * y * torch.log(p) + (1 - y) * torch.log(1 - p)).sum()  # positives weigh 3, negatives 1
    assert loss.item() == pytest.approx(by_hand.item(), rel=1e-5)
    assert batch.labels.tolist().count(1) not in (0, len(batch))  # both classes take part


def test_supervised_objective_is_the_summed_cross_entropy_for_several_classes(config):
    torch.manual_seed(0)
    model, _ = build_and_initialise(
        parse_model_name("lstm-tanh", "multiclass"), VOCAB, 3, None, tiny_settings(config, "lstm-tanh")
    )
    batch = collate(task_examples(6, 3, "o"), model.layout)
    with torch.no_grad():
        loss = supervised_objective(None)(model, batch)
        log_p = torch.log_softmax(model(batch)[0].double(), -1)
    assert loss.item() == pytest.approx(-log_p[torch.arange(6), batch.labels].sum().item(), rel=1e-5)


def test_the_default_objective_is_the_protocols_supervised_loss(config):
    """No `objective`: the class-weighted supervised loss of the training split, exactly."""
    settings = tiny_settings(config, "average-tanh", epochs=3, lr=3e-2)
    results = []
    for objective in (None, supervised_objective(class_weights(tiny_splits()["train"].labels()))):
        torch.manual_seed(0)
        model, _ = build_and_initialise(parse_model_name("average-tanh", "binary"), VOCAB, 2, None, settings)
        results.append(
            train_model(
                model, tiny_splits(), settings, select_on="dev", seed=0, device=CPU, log=quiet, objective=objective
            )
        )
    default, explicit = results
    assert default.history == explicit.history and default.best_epoch == explicit.best_epoch
    assert all(torch.equal(default.state_dict[k], explicit.state_dict[k]) for k in default.state_dict)
    # and the class weight is used: on a skewed split (4 negatives per positive) the default loss
    # differs from an unweighted one
    examples = task_examples(64, 0, "tr")
    skewed = tiny_splits()
    skewed["train"] = SplitData([e for e in examples if e.label == 0] + [e for e in examples if e.label == 1][:8])
    assert class_weights(skewed["train"].labels()) == pytest.approx(4.0)
    losses = []
    for objective in (None, supervised_objective(1.0)):
        torch.manual_seed(0)
        model, _ = build_and_initialise(parse_model_name("average-tanh", "binary"), VOCAB, 2, None, settings)
        losses.append(
            train_model(
                model, skewed, settings, select_on="dev", seed=0, device=CPU, log=quiet, objective=objective
            ).history[0]["train_loss"]
        )
    assert losses[0] != pytest.approx(losses[1], rel=1e-3)


def test_a_custom_objective_replaces_the_loss(config):
    """An objective that ignores the labels and only pushes logit 0 up: it is called once per
    training batch, its loss is what is minimised, and the default path is not taken."""
    settings = tiny_settings(config, "average-tanh", epochs=3, lr=3e-2, batch_size=16)
    torch.manual_seed(0)
    model, _ = build_and_initialise(parse_model_name("average-tanh", "binary"), VOCAB, 2, None, settings)
    splits = tiny_splits()
    calls = []

    def push_logit(model, batch):
        calls.append(len(batch))
        logits, _ = model(batch)
        return -logits[:, 0].sum()

    train_batch = collate(splits["train"].examples, model.layout)
    with torch.no_grad():
        before = model(train_batch)[0][:, 0].mean().item()
    result = train_model(model, splits, settings, select_on="dev", seed=0, device=CPU, log=quiet, objective=push_logit)
    assert sum(calls) == 3 * 64 and len(calls) == 3 * 4  # every training instance once per epoch, batches of 16
    model.load_state_dict(result.state_dict)
    model.eval()
    with torch.no_grad():
        after = model(train_batch)[0][:, 0].mean().item()
    assert after > before + 1.0  # the logit was pushed up, whatever the labels
    # the recorded train loss is the custom objective's (negative: -Σ logits), not a BCE (>= 0)
    assert all(h["train_loss"] < 0 for h in result.history[1:])


# --------------------------------------------------------------------------------------------------
# models and training


def test_build_and_initialise(config):
    settings = tiny_settings(config, "lstm-tanh")
    vectors = np.random.RandomState(0).randn(len(VOCAB), 6).astype(np.float32)
    spec = parse_model_name("lstm-tanh", "binary")
    model, cfg = build_and_initialise(spec, VOCAB, 2, vectors, settings)
    assert model.spec == spec  # the spec rides along
    assert cfg.embedding_dim == 6 and cfg.n_classes == 1 and model.decoder.out_features == 1  # J&W binary: one sigmoid
    assert torch.equal(model.embedding.weight[1:], torch.from_numpy(vectors[1:]))
    assert (model.embedding.weight[0] == 0).all()
    _, cfg = build_and_initialise(parse_model_name("lstm-tanh", "multiclass"), VOCAB, 4, None, settings)
    assert cfg.n_classes == 4 and cfg.embedding_dim == 8
    han_settings = tiny_settings(config, "han-rnn")
    model, cfg = build_and_initialise(parse_model_name("han-rnn", "binary"), VOCAB, 2, None, han_settings)
    assert cfg.n_classes == 2  # S&S: softmax over both classes
    assert model.spec.name == "han-rnn" and model.layout == model.spec.layout == "sentences"
    with pytest.raises(ValueError, match="rows"):
        build_and_initialise(parse_model_name("lstm-tanh", "binary"), VOCAB, 2, vectors[:-1], settings)


def test_a_tiny_flat_model_learns_a_separable_task(config):
    settings = tiny_settings(config, "average-tanh", epochs=10, lr=3e-2, select_metric="accuracy")
    torch.manual_seed(0)
    model, _ = build_and_initialise(parse_model_name("average-tanh", "binary"), VOCAB, 2, None, settings)
    splits = tiny_splits()
    result = train_model(model, splits, settings, select_on="dev", seed=0, device=CPU, log=quiet)
    assert result.test["accuracy"] > 0.95 and result.test["roc_auc"] > 0.95
    assert len(result.history) == 10 and result.best_epoch >= 2
    assert result.history[-1]["train_loss"] < result.history[0]["train_loss"]
    assert 0 <= result.timing["padding_share"] < 1
    model.load_state_dict(result.state_dict)
    probs, attention = predict(model, splits["test"], 16, CPU)
    assert classification_metrics(splits["test"].labels(), probs)["accuracy"] == pytest.approx(
        result.test["accuracy"], abs=1e-6
    )
    assert [len(a) for a in attention] == [len(e.tokens) for e in splits["test"].examples]


# --------------------------------------------------------------------------------------------------
# checkpoint selection, scripted: the evaluation is replaced by fixed scores per epoch


@pytest.fixture
def scripted(config, monkeypatch):
    """-> run(dev_scores, test_scores, select_on, **settings) -> (result, state dict after each epoch)."""

    def run(dev_scores, test_scores, select_on, **overrides):
        settings = tiny_settings(config, "average-tanh", epochs=len(dev_scores), **overrides)
        torch.manual_seed(0)
        model, _ = build_and_initialise(parse_model_name("average-tanh", "binary"), VOCAB, 2, None, settings)
        splits = tiny_splits(16, 4, 4)
        scores = {"dev": list(dev_scores), "test": list(test_scores)}
        states = []

        def fake_evaluate(model, split, settings, device):
            name = "dev" if split is splits["dev"] else "test"
            if name == "dev":
                states.append(copy.deepcopy(model.state_dict()))
            score = scores[name].pop(0)
            return {"n": 4, "accuracy": score, "macro_f1": score, "f1": [score, score], "roc_auc": score}

        monkeypatch.setattr("attnexp.train.loop._evaluate", fake_evaluate)
        return train_model(model, splits, settings, select_on=select_on, seed=0, device=CPU, log=quiet), states

    return run


DEV = [0.9, 0.6, 0.8, 0.7]
TEST = [0.5, 0.9, 0.6, 0.95]


@pytest.mark.parametrize(
    "select_on, skip_first, expected", [("dev", True, 3), ("test", True, 4), ("dev", False, 1), ("test", False, 4)]
)
def test_selection_follows_the_chosen_split(scripted, select_on, skip_first, expected):
    result, states = scripted(DEV, TEST, select_on, skip_first_epoch=skip_first)
    assert result.best_epoch == expected
    assert result.dev["roc_auc"] == DEV[expected - 1] and result.test["roc_auc"] == TEST[expected - 1]
    assert len(states) == len(DEV) == len(result.history)
    for key, value in result.state_dict.items():  # the kept weights are those of the selected epoch
        assert torch.equal(value, states[expected - 1][key])
    assert any(not torch.equal(result.state_dict[k], states[-1][k]) for k in states[-1]) or expected == len(DEV)


def test_selection_uses_the_select_metric(scripted):
    result, _ = scripted([0.5, 0.6, 0.7], [0.5, 0.5, 0.5], "dev", select_metric="accuracy", skip_first_epoch=False)
    assert result.best_epoch == 3


def test_a_single_epoch_is_selected_even_when_skip_first_epoch(scripted):
    result, _ = scripted([0.4], [0.4], "dev", skip_first_epoch=True)
    assert result.best_epoch == 1


def test_early_stopping_after_patience_epochs_without_improvement(scripted):
    dev = [0.5, 0.6, 0.7, 0.65, 0.6, 0.99, 0.99, 0.99]
    result, states = scripted(dev, [0.5] * 8, "dev", patience=2, skip_first_epoch=False)
    assert len(result.history) == 5 and len(states) == 5
    assert result.best_epoch == 3 and result.timing["epochs_run"] == 5


def test_learning_rate_halves_on_a_plateau(scripted):
    result, _ = scripted([0.5, 0.4, 0.3, 0.6], [0.5] * 4, "dev", lr=1e-2, lr_plateau={"factor": 0.5, "patience": 0})
    assert [h["lr"] for h in result.history] == pytest.approx([1e-2, 1e-2, 5e-3, 2.5e-3])


# --------------------------------------------------------------------------------------------------
# from files to files: fit


@pytest.mark.parametrize("select_on", ["dev", "test"])
def test_fit_selects_the_best_epoch_on_the_chosen_split(config, data, tmp_path, select_on):
    metrics, _ = run_fit(config, data, tmp_path, model="average-tanh", select_on=select_on, epochs=5, lr=3e-2)
    assert metrics["select_on"] == select_on and metrics["select_metric"] == "roc_auc"
    scores = [h[select_on]["roc_auc"] for h in metrics["history"]]
    assert len(scores) == 5
    assert metrics["selected_epoch"] == 2 + int(np.argmax(scores[1:]))  # J&W: epoch 1 is never selected
    chosen = metrics["history"][metrics["selected_epoch"] - 1]
    assert (
        metrics["dev"]["roc_auc"] == chosen["dev"]["roc_auc"]
        and metrics["test"]["roc_auc"] == chosen["test"]["roc_auc"]
    )
    written = json.loads((tmp_path / "metrics.json").read_text())
    assert written["selected_epoch"] == metrics["selected_epoch"] and written["settings"]["epochs"] == 5
    assert written["spec"] == parse_model_name("average-tanh", "binary").record()  # the model's spec is recorded
    assert set(json.loads((tmp_path / "timing.json").read_text())) >= {"train_seconds", "epochs_run", "padding_share"}


def test_fit_is_deterministic(config, data, fitted, fitted_again, tmp_path):
    metrics, model_path = fitted
    again, again_path = fitted_again
    assert again == metrics
    assert (again_path.parent / "metrics.json").read_bytes() == (model_path.parent / "metrics.json").read_bytes()
    state, meta = load_checkpoint(model_path)
    state_again, meta_again = load_checkpoint(again_path)
    assert meta == meta_again and state.keys() == state_again.keys()
    assert all(torch.equal(state[k], state_again[k]) for k in state)
    other, _ = run_fit(config, data, tmp_path / "other-seed", seed=11)
    assert other["history"] != metrics["history"]  # the seed matters, so the equality above means something


def test_fit_writes_byte_identical_checkpoints(fitted, fitted_again):
    _, model_path = fitted
    _, again_path = fitted_again
    assert again_path.read_bytes() == model_path.read_bytes()


def test_fit_records_the_spec_in_metrics_and_checkpoint(fitted):
    metrics, model_path = fitted
    spec = parse_model_name("lstm-tanh", "binary")
    assert metrics["spec"] == spec.record() and metrics["model"] == "lstm-tanh"
    assert json.loads((model_path.parent / "metrics.json").read_text())["spec"] == spec.record()
    _, meta = load_checkpoint(model_path)
    assert meta["spec"] == spec.record()


def test_supervised_objective_loss_matches_binary_cross_entropy_helper(config):
    """Cross-check of the hand formula above against torch's own weighted BCE."""
    torch.manual_seed(0)
    model, _ = build_and_initialise(
        parse_model_name("cnn-dot", "binary"), VOCAB, 2, None, tiny_settings(config, "cnn-dot")
    )
    batch = collate(task_examples(5, 4, "x"), model.layout)
    with torch.no_grad():
        logits = model(batch)[0].squeeze(-1)
        expected = F.binary_cross_entropy_with_logits(
            logits, batch.labels.float(), pos_weight=torch.tensor(2.5), reduction="sum"
        )
        assert supervised_objective(2.5)(model, batch).item() == pytest.approx(expected.item(), rel=1e-6)


# --------------------------------------------------------------------------------------------------
# W&P's adversary: keep the epoch of the lowest training loss; per-epoch monitor in the history


def adversary_like_settings(config, **overrides):
    """The selection terms training_settings gives an adversary, on a tiny average-tanh."""
    terms = {
        "select_metric": "loss",
        "skip_first_epoch": False,
        "loss_reduction": "mean",
        "lr_plateau": None,
        "patience": None,
    }
    return tiny_settings(config, "average-tanh", **(terms | overrides))


def test_train_loss_selection_keeps_the_epoch_of_the_lowest_training_loss(config):
    """A supervised run with a large step: the kept epoch is the argmin of the recorded training
    loss, whatever dev and test say, and the reported dev/test metrics are that epoch's."""
    settings = adversary_like_settings(config, epochs=6, lr=1.0)  # a step large enough for the loss to go up and down
    torch.manual_seed(5)  # an initialisation whose lowest-loss epoch is neither the last nor the best on dev
    model, _ = build_and_initialise(parse_model_name("average-tanh", "binary"), VOCAB, 2, None, settings)
    result = train_model(model, tiny_splits(), settings, select_on="train", seed=0, device=CPU, log=quiet)
    losses = [h["train_loss"] for h in result.history]
    assert len(losses) == 6 and len(set(losses)) == 6
    assert result.best_epoch == 1 + int(np.argmin(losses))
    # not the last epoch, nor the best dev epoch: the test tells the rules apart
    assert result.best_epoch != 6 and result.best_epoch != 1 + int(
        np.argmax([h["dev"]["roc_auc"] for h in result.history])
    )
    chosen = result.history[result.best_epoch - 1]
    assert result.dev["roc_auc"] == chosen["dev"]["roc_auc"] and result.test["accuracy"] == chosen["test"]["accuracy"]


@pytest.fixture
def scripted_loss(config):
    """-> run(offsets, **settings) -> (result, monitor calls, weights after each epoch). The recorded
    training loss of epoch k is the true loss plus offsets[k-1] (a constant: same gradients), so the
    lowest-loss epoch is scripted; the monitor records its epoch and a nested value."""

    def run(offsets, **overrides):
        settings = adversary_like_settings(config, epochs=len(offsets), lr=1e-2, **overrides)
        torch.manual_seed(0)
        model, _ = build_and_initialise(parse_model_name("average-tanh", "binary"), VOCAB, 2, None, settings)
        splits = tiny_splits(32, 8, 8)
        calls, states = [], []
        base = supervised_objective(1.0)

        def objective(model, batch):
            return base(model, batch) + offsets[len(calls)] * len(batch)  # per instance: + offset

        def monitor(model, given, device):
            assert given is splits and device == CPU
            states.append(copy.deepcopy(model.state_dict()))
            calls.append(len(calls) + 1)
            return {"monitored_epoch": len(calls), "adversary": {"train": {"tvd": 0.1234567891 * len(calls)}}}

        result = train_model(
            model,
            splits,
            settings,
            select_on="train",
            seed=0,
            device=CPU,
            log=quiet,
            objective=objective,
            monitor=monitor,
        )
        return result, calls, states

    return run


@pytest.mark.parametrize(
    "offsets, expected", [([5.0, 1.0, 3.0, 4.0], 2), ([1.0, 5.0, 5.0, 5.0], 1), ([9.0, 8.0, 7.0, 0.0], 4)]
)
def test_train_loss_selection_keeps_the_scripted_lowest_loss_epoch_and_its_weights(scripted_loss, offsets, expected):
    result, _, states = scripted_loss(offsets)
    losses = [h["train_loss"] for h in result.history]
    assert result.best_epoch == expected == 1 + int(np.argmin(losses))  # epoch 1 may be kept (skip_first_epoch off)
    assert losses[expected - 1] < min(o for i, o in enumerate(offsets) if i != expected - 1)
    for key, value in result.state_dict.items():
        assert torch.equal(value, states[expected - 1][key])
    if expected != len(offsets):  # the last epoch's weights differ: the selection did something
        assert any(not torch.equal(result.state_dict[k], states[-1][k]) for k in states[-1])


def test_train_loss_selection_stops_after_patience_epochs_without_a_lower_loss(scripted_loss):
    result, calls, _ = scripted_loss([3.0, 2.0, 2.5, 2.6, 0.0, 0.0], patience=2)
    assert result.best_epoch == 2 and len(result.history) == 4 and calls == [1, 2, 3, 4]
    assert result.timing["epochs_run"] == 4


def test_the_monitor_output_is_in_every_history_record(scripted_loss):
    result, calls, _ = scripted_loss([3.0, 2.0, 1.0])
    assert calls == [1, 2, 3]  # once per epoch, after its training batches
    assert [h["epoch"] for h in result.history] == [h["monitored_epoch"] for h in result.history] == [1, 2, 3]
    for epoch, record in enumerate(result.history, 1):
        assert {"epoch", "train_loss", "lr", "dev", "test", "monitored_epoch", "adversary"} == set(record)
        assert record["adversary"] == {
            "train": {"tvd": round(0.1234567891 * epoch, 6)}
        }  # merged and rounded like the rest


def test_without_a_monitor_the_history_has_only_the_standard_keys(config):
    settings = adversary_like_settings(config, epochs=2)
    torch.manual_seed(0)
    model, _ = build_and_initialise(parse_model_name("average-tanh", "binary"), VOCAB, 2, None, settings)
    result = train_model(model, tiny_splits(16, 8, 8), settings, select_on="train", seed=0, device=CPU, log=quiet)
    assert all(set(h) == {"epoch", "train_loss", "lr", "dev", "test"} for h in result.history)


def test_fit_with_train_loss_selection_records_it(config, data, tmp_path):
    seen = []
    job = TrainingJob(
        data=data,
        vectors_path=None,
        guide_path=None,
        settings=adversary_like_settings(config, epochs=4, lr=0.3),
        select_on="train",
        seed=10,
        threads=1,
        device_setting="cpu",
        out_model=tmp_path / "model.pt",
        out_metrics=tmp_path / "metrics.json",
        out_timing=tmp_path / "timing.json",
        provenance={},
    )
    metrics = fit(
        parse_model_name("average-tanh", "binary"),
        job,
        log=quiet,
        monitor=lambda model, splits, device: seen.append(len(splits["train"].examples)) or {"n_train": seen[-1]},
    )
    assert metrics["select_on"] == "train" and metrics["select_metric"] == "loss"
    losses = [h["train_loss"] for h in metrics["history"]]
    assert metrics["selected_epoch"] == 1 + int(np.argmin(losses))
    assert seen == [48] * 4 and all(h["n_train"] == 48 for h in metrics["history"])
    written = json.loads((tmp_path / "metrics.json").read_text())
    assert written["history"] == metrics["history"] and written["selected_epoch"] == metrics["selected_epoch"]


@pytest.mark.parametrize("model", ["lstm-diversity-tanh", "lstm-ortho-tanh", "lstm-sparsemax"])
def test_fit_trains_the_zoo_and_records_the_test_conicity(config, data, tmp_path, model):
    metrics, path = run_fit(config, data, tmp_path, model=model, epochs=2)
    vanilla = run_fit(config, data, tmp_path / "vanilla", model="lstm-tanh", epochs=2)[0]
    assert 0 < metrics["conicity"]["test"] <= 1 and 0 < vanilla["conicity"]["test"] <= 1
    assert json.loads((tmp_path / "metrics.json").read_text())["conicity"] == metrics["conicity"]
    if model == "lstm-diversity-tanh":  # the penalty is in the loss, and it lowers the conicity
        assert metrics["conicity"]["test"] < vanilla["conicity"]["test"]
    _, meta = load_checkpoint(path)
    assert meta["spec"]["name"] == model


# --------------------------------------------------------------------------------------------------
# A stopped training resumes from its last epoch's snapshot, with the result of a run never stopped


class Stopped(Exception):
    """The job stopped mid-training, as by a signal."""


def stopping_at(epoch: int, messages: list[str]):
    """A log that stops the training when epoch `epoch` ends, before its snapshot is written (the
    snapshot of the epoch before it is the one left)."""

    def log(message: str) -> None:
        messages.append(message)
        if message.startswith(f"epoch {epoch}/"):
            raise Stopped

    return log


def written(out_dir) -> dict[str, bytes]:
    return {name: (out_dir / name).read_bytes() for name in ("model.pt", "metrics.json")}


RESUMED = {
    "lstm-tanh": {},  # J&W: dense embedding update, batch noise, epoch 1 never selected
    "lstm-tanh-lazy": {"embedding_update": "lazy"},  # the lazy optimiser's own row moments
    "han-rnn": {},  # S&S: dropout, gradient clipping, the lr halved on a plateau, a padded-token cap
    "transformer-cls": {},  # AdamW with warm-up then decay, stepped per batch
}


@pytest.mark.parametrize("name", list(RESUMED))
def test_a_training_stopped_mid_way_resumes_with_the_result_of_a_run_never_stopped(config, data, tmp_path, name):
    model, overrides = name.removesuffix("-lazy"), RESUMED[name] | {"epochs": 4}
    run_fit(config, data, tmp_path / "whole", model=model, **overrides)
    messages = []
    with pytest.raises(Stopped):
        run_fit(config, data, tmp_path / "stopped", model=model, log=stopping_at(3, messages), **overrides)
    assert not (tmp_path / "stopped" / "model.pt").exists() and (tmp_path / "stopped" / ".model.resume").exists()
    messages.clear()
    run_fit(config, data, tmp_path / "stopped", model=model, log=messages.append, **overrides)
    assert any(m.startswith("resumed after epoch 2 ") for m in messages)
    assert [m.split(":")[0] for m in messages if m.startswith("epoch ")] == ["epoch 3/4", "epoch 4/4"]
    assert written(tmp_path / "stopped") == written(tmp_path / "whole")
    files = lambda folder: sorted(p.name for p in folder.iterdir())  # noqa: E731
    assert files(tmp_path / "stopped") == files(tmp_path / "whole")  # the snapshot and its seal are gone


def test_a_training_stopped_after_its_last_epoch_writes_its_model_from_the_snapshot(
    config, data, tmp_path, monkeypatch
):
    run_fit(config, data, tmp_path / "whole", epochs=3)
    import attnexp.train

    def lost_node(*_args, **_kwargs):
        raise Stopped

    with monkeypatch.context() as patched:
        patched.setattr(attnexp.train, "save_checkpoint", lost_node)
        with pytest.raises(Stopped):
            run_fit(config, data, tmp_path / "stopped", epochs=3)
    messages = []
    run_fit(config, data, tmp_path / "stopped", log=messages.append, epochs=3)
    assert any(m.startswith("resumed after epoch 3 ") for m in messages)
    assert not any(m.startswith("epoch ") for m in messages)  # no epoch trained again
    assert written(tmp_path / "stopped") == written(tmp_path / "whole")


def test_the_snapshot_of_another_training_or_a_damaged_one_is_not_resumed_from(config, data, tmp_path):
    run_fit(config, data, tmp_path / "whole", seed=11, epochs=3)
    with pytest.raises(Stopped):
        run_fit(config, data, tmp_path / "stopped", seed=10, log=stopping_at(3, []), epochs=3)
    messages = []
    run_fit(config, data, tmp_path / "stopped", seed=11, log=messages.append, epochs=3)  # another seed
    assert any("not resumed from, the snapshot of another training" in m for m in messages)
    assert written(tmp_path / "stopped") == written(tmp_path / "whole")

    with pytest.raises(Stopped):
        run_fit(config, data, tmp_path / "damaged", seed=11, log=stopping_at(3, []), epochs=3)
    snapshot = tmp_path / "damaged" / ".model.resume"
    snapshot.write_bytes(snapshot.read_bytes()[:-100])
    messages = []
    run_fit(config, data, tmp_path / "damaged", seed=11, log=messages.append, epochs=3)
    assert any("not resumed from, unreadable" in m and "damaged" in m for m in messages)
    assert written(tmp_path / "damaged") == written(tmp_path / "whole")
