"""What every job after training shares: probabilities, prediction, determinism and device
(attnexp.runtime), checkpoints (attnexp.checkpoints: metadata, loading, refusals), restoring a trained
run from its own spec, test examples and attention export (attnexp.runs), and a split's guides checked
(attnexp.models.splits). Tiny models on the tiny task of tiny_tasks, settings from the real config.yaml."""

from __future__ import annotations

import os
import pickle
import re
import warnings
from dataclasses import dataclass

import numpy as np
import pytest
import torch
from tiny_tasks import VOCAB, load_config, run_fit, task_examples, tiny_settings, write_dataset

from attnexp import io
from attnexp.checkpoints import CheckpointError, checkpoint_metadata, load_checkpoint, save_checkpoint, weights_digest
from attnexp.data.splits import read_classes, read_guides, read_vocab
from attnexp.models import parse_model_name
from attnexp.models.inputs import collate
from attnexp.models.outputs import probabilities
from attnexp.models.splits import SplitData, load_splits
from attnexp.runs import Run, export_attention, load_test_examples, restore_run
from attnexp.runtime import DeviceError, model_device, predict, resolve_device
from attnexp.train import build_and_initialise

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
    return run_fit(config, data, tmp_path_factory.mktemp("fit"))


# --------------------------------------------------------------------------------------------------
# probabilities and prediction


def test_probabilities_of_one_sigmoid_logit_and_of_several():
    binary = probabilities(torch.tensor([[0.0], [2.0]]))
    p = 1 / (1 + np.exp(-2.0))
    assert torch.allclose(binary, torch.tensor([[0.5, 0.5], [1 - p, p]], dtype=torch.float32))
    multi = probabilities(torch.tensor([[1.0, 2.0, 3.0]]))
    assert torch.allclose(multi, torch.softmax(torch.tensor([[1.0, 2.0, 3.0]]), -1))
    stacked = probabilities(torch.zeros(4, 3, 1))  # leading axes are kept
    assert stacked.shape == (4, 3, 2)


def test_predict_returns_the_splits_order(config):
    settings = tiny_settings(config, "cnn-dot")
    torch.manual_seed(0)
    model, _ = build_and_initialise(parse_model_name("cnn-dot", "binary"), VOCAB, 2, None, settings)
    examples = task_examples(20, 5, "p")
    probs, attention = predict(model, SplitData(examples), 4, CPU)
    assert probs.shape == (20, 2) and np.allclose(probs.sum(1), 1)
    for e, p, a in zip(examples, probs, attention):
        with torch.no_grad():
            logits, alpha = model(collate([e], model.layout))
        assert np.allclose(p[1], torch.sigmoid(logits[0, 0]).item(), atol=1e-6)
        assert len(a) == len(e.tokens) and np.allclose(a, alpha[0, 1:-1].numpy(), atol=1e-6)


# --------------------------------------------------------------------------------------------------
# checkpoints


def test_checkpoint_metadata(fitted, config):
    _, model_path = fitted
    state, meta = load_checkpoint(model_path)
    assert meta.pop("weights_sha256") == weights_digest(state)
    assert meta["model"] == "lstm-tanh" and meta["family"] == "flat" and meta["classes"] == ["0", "1"]
    assert (
        meta["vocab_size"] == len(VOCAB)
        and meta["config"]["class"] == "FlatConfig"
        and meta["config"]["hidden_size"] == 8
    )
    spec = parse_model_name("lstm-tanh", "binary")
    assert meta["spec"] == spec.record()
    _, cfg = build_and_initialise(spec, VOCAB, 2, None, tiny_settings(config, "lstm-tanh"))
    assert checkpoint_metadata(spec, cfg, VOCAB, [0, 1]) == meta
    assert checkpoint_metadata(spec, cfg, VOCAB[::-1], [0, 1])["vocab_sha256"] != meta["vocab_sha256"]
    cfg.hidden_size = 16
    assert checkpoint_metadata(spec, cfg, VOCAB, [0, 1])["config_sha256"] != meta["config_sha256"]


@pytest.mark.parametrize("key", ["vocab_sha256", "config_sha256", "model"])
def test_load_checkpoint_refuses_a_mismatch_naming_the_key(fitted, key):
    _, model_path = fitted
    _, meta = load_checkpoint(model_path)
    expected = {k: meta[k] for k in ("vocab_sha256", "config_sha256", "model", "classes")}
    state, _ = load_checkpoint(model_path, expected)  # the right expectations load
    assert state
    expected[key] = "something else"
    with pytest.raises(CheckpointError) as err:
        load_checkpoint(model_path, expected)
    message = str(err.value)
    assert f"\n  {key}: checkpoint has" in message and "'something else'" in message
    assert all(f"\n  {other}:" not in message for other in expected if other != key)


@dataclass
class NotAStateDict:
    x: int = 1


FOREIGN = "not a checkpoint this pipeline wrote"


def test_load_checkpoint_refuses_other_files(tmp_path):
    text = tmp_path / "notes.pt"
    text.write_text("not a checkpoint")
    with pytest.raises(CheckpointError, match=FOREIGN):
        load_checkpoint(text)
    with pytest.raises(FileNotFoundError):  # one line through fail_cleanly: "<path>: No such file or directory"
        load_checkpoint(tmp_path / "missing.pt")
    plain = tmp_path / "plain.pt"
    torch.save({"weights": torch.ones(2)}, plain)
    with pytest.raises(
        CheckpointError, match=f"^{re.escape(str(plain))}: {FOREIGN} \\(not a dict of 'metadata' and 'state_dict'\\)"
    ):
        load_checkpoint(plain)
    pickled = tmp_path / "pickled.pt"
    torch.save({"metadata": {}, "state_dict": NotAStateDict()}, pickled)  # weights_only: no arbitrary objects
    with pytest.raises(
        CheckpointError,
        match=rf"{FOREIGN} \(Unsupported global: GLOBAL .*NotAStateDict was not an allowed global by default\)",
    ):
        load_checkpoint(pickled)
    good = tmp_path / "good.pt"
    save_checkpoint(good, {"w": torch.zeros(1)}, {"model": "x"})
    assert load_checkpoint(good, {"model": "x"})[1] == {
        "model": "x",
        "weights_sha256": weights_digest({"w": torch.zeros(1)}),
    }


class _Hostile:
    def __reduce__(self):
        return (os.system, ("touch pwned",))


CASES = {
    "empty": (lambda p: p.write_bytes(b""), "empty file"),
    "plain-pickle": (
        lambda p: p.write_bytes(pickle.dumps({"metadata": {}, "state_dict": _Hostile()}, protocol=4)),
        "Unsupported operand 149",
    ),
    "torch-pickle": (
        lambda p: torch.save({"metadata": {}, "state_dict": _Hostile()}, p),
        "Trying to load unsupported GLOBAL",
    ),
    "truncated": (
        lambda p: p.write_bytes(_checkpoint_bytes(p)[:100]),
        "PytorchStreamReader failed reading zip archive",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_foreign_or_empty_checkpoint_is_one_line_with_a_short_reason_and_never_torch_advice(
    tmp_path, monkeypatch, case
):
    """A hostile pickle in place of model.pt must not be met with torch's advice to load it with
    weights_only=False (that would run it); an empty file says so rather than giving a blank reason."""
    monkeypatch.chdir(tmp_path)
    write, reason = CASES[case]
    path = tmp_path / "model.pt"
    write(path)
    with warnings.catch_warnings(record=True) as warned, pytest.raises(CheckpointError) as err:
        warnings.simplefilter("always")
        load_checkpoint(path)
    assert not [str(w.message) for w in warned if "issue" in str(w.message)]  # torch's advice, in a warning
    message = str(err.value)
    assert message.startswith(f"{path}: {FOREIGN} ({reason}") and message.endswith(
        "); retrain it (delete the file and rerun)"
    )
    assert "\n" not in message and len(message) < len(str(path)) + 200
    assert not re.search(r"weights.only|file an issue|safe_globals|\(\)", message, re.IGNORECASE), message
    assert not (tmp_path / "pwned").exists()


def _checkpoint_bytes(path) -> bytes:
    save_checkpoint(path, {"w": torch.zeros(8)}, {"model": "x"})
    return path.read_bytes()


def _flip_inside(path, tensor: torch.Tensor, n: int = 64) -> None:
    """Flip n bytes in the middle of the tensor's bytes as stored in the file (torch stores them
    uncompressed, so they appear verbatim)."""
    data = bytearray(path.read_bytes())
    raw = tensor.contiguous().numpy().tobytes()
    at = data.find(raw)
    assert at >= 0 and len(raw) > 2 * n
    start = at + len(raw) // 2
    data[start : start + n] = bytes(b ^ 0xFF for b in data[start : start + n])
    path.write_bytes(bytes(data))


def test_a_checkpoint_with_flipped_weight_bytes_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "model.pt"
    weights = {"encoder.weight": torch.linspace(-1, 1, 4096).reshape(64, 64), "bias": torch.ones(3)}
    save_checkpoint(path, weights, {"model": "x"})
    load_checkpoint(path)  # intact: loads
    _flip_inside(path, weights["encoder.weight"])
    torch.load(path, weights_only=True)  # torch itself loads the damaged archive without complaint
    with pytest.raises(
        CheckpointError, match=rf"^{re.escape(str(path))}: damaged, its weights do not match the digest"
    ):
        load_checkpoint(path)


def test_non_finite_weights_are_refused_at_save_and_at_load(tmp_path):
    path = tmp_path / "model.pt"
    weights = {"w": torch.tensor([1.0, float("nan"), float("inf")]), "b": torch.zeros(2)}
    with pytest.raises(CheckpointError, match=r"not written, the weights are not finite: w \(2 of 3 values\)"):
        save_checkpoint(path, weights, {"model": "x"})
    assert not path.exists()
    # written by something else with a matching digest: refused when read
    torch.save({"metadata": {"model": "x", "weights_sha256": weights_digest(weights)}, "state_dict": weights}, path)
    with pytest.raises(CheckpointError, match=r"the weights are not finite: w \(2 of 3 values\)"):
        load_checkpoint(path)


def test_a_checkpoint_without_a_weights_digest_is_refused(tmp_path):
    path = tmp_path / "model.pt"
    torch.save({"metadata": {"model": "x"}, "state_dict": {"w": torch.zeros(2)}}, path)
    with pytest.raises(CheckpointError, match="no weights digest in its metadata"):
        load_checkpoint(path)


# --------------------------------------------------------------------------------------------------
# restore_run: a trained model rebuilt from its own spec


# (model name, task, dataset whose settings it takes, n_classes)
FAMILIES = [
    ("lstm-tanh", "binary", "synthetic", 2),
    ("cnn-dot", "multiclass", "synthetic", 3),
    ("average-uniform", "binary", "synthetic", 2),
    ("average-guided-lstm-tanh", "binary", "synthetic", 2),
    ("cnn-dot", "qa", "synthetic_qa", 3),
    ("han-rnn", "binary", "synthetic", 2),
    ("flan-conv", "multiclass", "synthetic", 3),
]


def saved_model(config, tmp_path, name, task, dataset, n_classes, seed=3):
    """A freshly initialised model of `name`, saved as a checkpoint -> (model, checkpoint path)."""
    spec = parse_model_name(name, task)
    torch.manual_seed(seed)
    model, cfg = build_and_initialise(
        spec, VOCAB, n_classes, None, tiny_settings(config, name, dataset=dataset, hidden_size=4)
    )
    path = tmp_path / f"{name}-{task}.pt"
    save_checkpoint(path, model.state_dict(), checkpoint_metadata(spec, cfg, VOCAB, list(range(n_classes))))
    return model.eval(), path


@pytest.mark.parametrize("name, task, dataset, n_classes", FAMILIES, ids=[f"{n}-{t}" for n, t, _, _ in FAMILIES])
def test_restore_run_round_trip_gives_the_original_outputs(config, data, tmp_path, name, task, dataset, n_classes):
    original, path = saved_model(config, tmp_path, name, task, dataset, n_classes)
    run = restore_run(path, data, expected_model=name)
    assert isinstance(run, Run)
    assert run.spec == original.spec == parse_model_name(name, task)
    assert run.model.spec == run.spec and type(run.model) is type(original) and not run.model.training
    assert run.vocab == VOCAB and run.classes == [str(c) for c in range(n_classes)]
    assert run.model.state_dict().keys() == original.state_dict().keys()
    assert all(torch.equal(v, run.model.state_dict()[k]) for k, v in original.state_dict().items())
    examples = task_examples(9, 7, "r", question=task == "qa")
    rng = np.random.RandomState(0)
    guides = (
        {e.id: rng.dirichlet(np.ones(len(e.tokens))).astype(np.float32) for e in examples} if original.guided else None
    )
    batch = collate(examples, run.model.layout, guides)
    with torch.no_grad():
        ours, ours_alpha = run.model(batch)
        theirs, theirs_alpha = original(batch)
    assert torch.equal(ours, theirs) and torch.equal(ours_alpha, theirs_alpha)
    assert ours.abs().max() > 0  # a real output, not zeros


def test_resolve_device_without_a_gpu_names_the_config_key(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto") == CPU and resolve_device("cpu") == CPU
    with pytest.raises(DeviceError, match="config key 'device' is 'cuda' but torch sees no GPU"):
        resolve_device("cuda")


def test_a_job_logs_the_device_its_setting_resolves_to(monkeypatch):
    from attnexp.workflow import logged_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    lines = []
    assert logged_device("auto", lines.append) == "auto"  # the setting itself goes on to the job
    assert lines == ["device: cpu (setting 'auto')"]
    with pytest.raises(DeviceError, match="torch sees no GPU"):
        logged_device("cuda", lines.append)


def test_model_device_is_where_the_parameters_are_and_the_cpu_without_any():
    assert model_device(torch.nn.Linear(2, 1)) == CPU and model_device(torch.nn.Identity()) == CPU


def test_restore_run_on_a_device_gives_the_same_weights(fitted, data):
    _, path = fitted
    plain, on_cpu = restore_run(path, data), restore_run(path, data, device=CPU)
    assert {p.device for p in on_cpu.model.parameters()} == {CPU} and not on_cpu.model.training
    assert all(torch.equal(v, on_cpu.model.state_dict()[k]) for k, v in plain.model.state_dict().items())


def test_restore_run_of_a_fitted_model(fitted, data):
    metrics, path = fitted
    run = restore_run(path, data)
    assert run.spec.name == "lstm-tanh" and run.metadata["spec"] == metrics["spec"]
    state, _ = load_checkpoint(path)
    assert all(torch.equal(v, run.model.state_dict()[k]) for k, v in state.items())
    examples = run.test_examples(data)
    assert [e.id for e in examples] == [r["id"] for r in io.read_jsonl(data.test)]
    probs, _ = predict(run.model, SplitData(examples), 8, CPU)
    accuracy = float(np.mean(probs.argmax(1) == np.array([e.label for e in examples])))
    assert accuracy == pytest.approx(metrics["test"]["accuracy"], abs=1e-6)  # the selected epoch's weights


def rewritten(path, tmp_path, state=None, metadata=None):
    """The checkpoint at `path` saved again with its state dict and/or metadata changed."""
    old_state, old_meta = load_checkpoint(path)
    out = tmp_path / "changed.pt"
    save_checkpoint(
        out,
        old_state if state is None else state(dict(old_state)),
        old_meta if metadata is None else metadata(dict(old_meta)),
    )
    return out


def _without(d, key):
    d.pop(key)
    return d


@pytest.mark.parametrize(
    "change, expected",
    [
        (lambda s: _without(s, "decoder.bias"), "missing decoder.bias"),
        (lambda s: s | {"decoder.extra": torch.zeros(2)}, "unexpected decoder.extra"),
        (
            lambda s: s | {"decoder.weight": torch.zeros(1, 3)},
            "decoder.weight: checkpoint shape (1, 3), model shape (1, 16)",
        ),
    ],
    ids=["missing", "extra", "mis-shaped"],
)
def test_restore_run_refuses_weights_that_do_not_fit_naming_the_key(fitted, data, tmp_path, change, expected):
    _, path = fitted
    with pytest.raises(CheckpointError) as err:
        restore_run(rewritten(path, tmp_path, state=change), data)
    message = str(err.value)
    assert "do not fit the model its spec describes" in message and f"\n  {expected}" in message
    assert message.count("\n  ") == 1  # only the changed key is named


def test_restore_run_names_every_problem_at_once(fitted, data, tmp_path):
    _, path = fitted
    both = lambda s: _without(s, "decoder.bias") | {"stray": torch.ones(1)}  # noqa: E731
    with pytest.raises(CheckpointError) as err:
        restore_run(rewritten(path, tmp_path, state=both), data)
    assert "\n  missing decoder.bias" in str(err.value) and "\n  unexpected stray" in str(err.value)


def test_restore_run_refuses_metadata_without_a_spec(fitted, data, tmp_path):
    _, path = fitted
    with pytest.raises(CheckpointError, match="no model spec in its metadata"):
        restore_run(rewritten(path, tmp_path, metadata=lambda m: _without(m, "spec")), data)


def test_restore_run_refuses_an_unreadable_spec(fitted, data, tmp_path):
    _, path = fitted
    broken = lambda m: m | {"spec": {"name": "lstm-tanh"}}  # noqa: E731
    with pytest.raises(CheckpointError, match="unreadable model spec"):
        restore_run(rewritten(path, tmp_path, metadata=broken), data)


def test_restore_run_refuses_a_spec_that_disagrees_with_the_config(fitted, data, tmp_path):
    _, path = fitted
    tampered = lambda m: m | {"spec": m["spec"] | {"attention": "dot"}}  # noqa: E731 (tanh weights, dot spec)
    with pytest.raises(CheckpointError, match="attention: spec 'dot', config 'tanh'"):
        restore_run(rewritten(path, tmp_path, metadata=tampered), data)


def test_restore_run_refuses_another_model_than_expected(fitted, data):
    _, path = fitted
    assert restore_run(path, data, expected_model="lstm-tanh").spec.name == "lstm-tanh"
    with pytest.raises(CheckpointError) as err:
        restore_run(path, data, expected_model="lstm-dot")
    assert "model: checkpoint has 'lstm-tanh', expected 'lstm-dot'" in str(err.value)


def test_restore_run_refuses_data_files_with_another_vocabulary(fitted, tmp_path):
    _, model_path = fitted
    other = write_dataset(tmp_path / "other", vocab=VOCAB[:-1] + ["zebra"])  # same size, one word differs
    with pytest.raises(CheckpointError, match="vocab_sha256"):
        restore_run(model_path, other)


def test_test_examples_refuse_data_files_with_other_classes(fitted, data, tmp_path):
    _, model_path = fitted
    run = restore_run(model_path, data)
    other = write_dataset(tmp_path / "other", relabel=lambda label: label + 1)  # labels 1, 2: no "0"
    with pytest.raises(CheckpointError, match=r"classes \['0'\] are not labels") as err:
        run.test_examples(other)
    assert str(err.value).endswith(f"are not labels of {other.train}")  # the file itself


def test_load_test_examples_maps_labels_through_the_checkpoints_classes(data):
    examples = load_test_examples(data, VOCAB, ["0", "1"])
    records = io.read_jsonl(data.test)
    assert [e.label for e in examples] == [r["label"] for r in records]
    flipped = load_test_examples(data, VOCAB, ["1", "0"])  # class index follows the stored order
    assert [e.label for e in flipped] == [1 - r["label"] for r in records]
    assert flipped[0].tokens.tolist() == [VOCAB.index(w) for w in records[0]["tokens"]]


# --------------------------------------------------------------------------------------------------
# exporting attention


def exported(path) -> dict[str, list[dict]]:
    by_split: dict[str, list[dict]] = {}
    for record in io.read_jsonl(path):
        by_split.setdefault(record["split"], []).append(record)
    return by_split


def test_export_attention_one_record_per_instance(fitted, data, tmp_path):
    _, model_path = fitted
    export_attention(model_path, data, tmp_path / "attention.jsonl", batch_size=8)
    by_split = exported(tmp_path / "attention.jsonl")
    assert set(by_split) == {"train", "dev", "test"}
    for split, records in by_split.items():
        source = io.read_jsonl(data.path(split))
        assert [r["id"] for r in records] == [s["id"] for s in source]
        for r, s in zip(records, source):
            assert r["length"] == len(r["attention"]) == len(s["tokens"])
            assert sum(r["attention"]) == pytest.approx(1, abs=1e-5) and min(r["attention"]) > 0
            assert len(r["probs"]) == 2 and sum(r["probs"]) == pytest.approx(1, abs=1e-5)
    guides = read_guides(tmp_path / "attention.jsonl")
    assert set(guides) == {"train", "dev", "test"} and len(guides["dev"]) == 24


def test_guided_model_trains_and_exports_the_imposed_attention(config, fitted, data, tmp_path):
    _, model_path = fitted
    guide_path = tmp_path / "guide.jsonl"
    export_attention(model_path, data, guide_path, batch_size=8)
    _, guided_path = run_fit(
        config, data, tmp_path / "guided", model="average-guided-lstm-tanh", guide=guide_path, epochs=2
    )
    export_attention(guided_path, data, tmp_path / "guided.jsonl", batch_size=8, guide_path=guide_path)
    source = exported(guide_path)
    for split, records in exported(tmp_path / "guided.jsonl").items():
        for r, s in zip(records, source[split], strict=True):
            assert r["id"] == s["id"] and r["attention"] == s["attention"]  # the guide, exactly (D-ALIGN)


def test_guides_are_checked(tmp_path, data, config):
    bad = tmp_path / "bad.jsonl"
    io.write_jsonl(bad, [{"id": "a", "split": "train", "length": 3, "attention": [0.5, 0.5]}], seal=True)
    with pytest.raises(ValueError, match="'a' stores 2 weights for length 3"):
        read_guides(bad)
    partial = tmp_path / "partial.jsonl"
    io.write_jsonl(partial, [{"id": "train-0", "split": "train", "length": 1, "attention": [1.0]}], seal=True)
    with pytest.raises(ValueError, match="the guide attention of train instance 'train-0' has 1 weights"):
        run_fit(config, data, tmp_path / "out", model="average-guided-lstm-tanh", guide=partial)


def test_hierarchical_model_exports_sentence_attention(config, data, tmp_path):
    metrics, model_path = run_fit(config, data, tmp_path, model="han-rnn", epochs=2, hidden_size=4)
    assert metrics["select_metric"] == "accuracy"  # S&S protocol
    export_attention(model_path, data, tmp_path / "attention.jsonl", batch_size=8)
    for split, records in exported(tmp_path / "attention.jsonl").items():
        source = io.read_jsonl(data.path(split))
        for r, s in zip(records, source, strict=True):
            assert r["length"] == len(r["attention"]) == sum(1 for a, b in s["sentences"] if b > a) == 2
            assert sum(r["attention"]) == pytest.approx(1, abs=1e-5)


# --------------------------------------------------------------------------------------------------
# another model's attention (W&P's guided models and adversaries) must match the data, instance by instance


def full_guides(data) -> dict[str, dict[str, np.ndarray]]:
    """Uniform weights of the right length for every instance of every split, as read_guides gives them."""
    return {
        split: {
            r["id"]: np.full(len(r["tokens"]), 1 / len(r["tokens"]), dtype=np.float32)
            for r in io.read_jsonl(data.path(split))
        }
        for split in ("train", "dev", "test")
    }


def test_load_splits_carries_guides_that_match_every_instance(data):
    vocab, classes = read_vocab(data.vocab), read_classes(data)
    guides = full_guides(data)
    splits = load_splits(data, vocab, classes, guides)
    for split in ("train", "dev", "test"):
        assert [e.id for e in splits[split].examples] == [r["id"] for r in io.read_jsonl(data.path(split))]
        assert splits[split].guides is guides[split]
    assert all(s.guides is None for s in load_splits(data, vocab, classes).values())


@pytest.mark.parametrize("split, position", [("train", 0), ("dev", 5), ("test", 23)])
def test_load_splits_refuses_a_guide_without_an_instance_naming_it(data, split, position):
    guides = full_guides(data)
    victim = list(guides[split])[position]
    del guides[split][victim]
    with pytest.raises(ValueError) as err:
        load_splits(data, read_vocab(data.vocab), read_classes(data), guides)
    assert str(err.value) == f"the guide attention has no {split} instance {victim!r}"


@pytest.mark.parametrize("split, position, change", [("train", 3, 1), ("dev", 0, -1), ("test", 10, 2)])
def test_load_splits_refuses_a_guide_of_the_wrong_length_naming_the_instance(data, split, position, change):
    guides = full_guides(data)
    victim = list(guides[split])[position]
    n = len(guides[split][victim])
    guides[split][victim] = np.full(n + change, 1 / (n + change), dtype=np.float32)
    with pytest.raises(ValueError) as err:
        load_splits(data, read_vocab(data.vocab), read_classes(data), guides)
    assert (
        str(err.value)
        == f"the guide attention of {split} instance {victim!r} has {n + change} weights, the instance has {n} tokens"
    )


@pytest.mark.parametrize("split", ["train", "dev", "test"])
def test_load_splits_refuses_a_guide_with_extra_instances_naming_one(data, split):
    guides = full_guides(data)
    guides[split] |= {"zz-extra": np.ones(3, dtype=np.float32) / 3, "a-extra": np.ones(2, dtype=np.float32) / 2}
    with pytest.raises(ValueError) as err:
        load_splits(data, read_vocab(data.vocab), read_classes(data), guides)
    assert str(err.value) == f"the guide attention has 2 {split} instances the dataset lacks, e.g. 'a-extra'"


def test_load_splits_names_the_first_mismatch(data):
    """Several problems: the first instance in file order (train before dev before test) is named,
    a missing one before any extra one."""
    guides = full_guides(data)
    ids = list(guides["dev"])
    del guides["dev"][ids[7]]
    guides["dev"][ids[2]] = guides["dev"][ids[2]][:-1]
    guides["dev"]["dev-extra"] = np.ones(1, dtype=np.float32)
    del guides["test"][list(guides["test"])[0]]
    with pytest.raises(ValueError, match=f"of dev instance {ids[2]!r} has"):
        load_splits(data, read_vocab(data.vocab), read_classes(data), guides)
    guides["dev"][ids[2]] = np.ones(len(guides["dev"][ids[2]]) + 1, dtype=np.float32)
    with pytest.raises(ValueError, match=f"^the guide attention has no dev instance {ids[7]!r}$"):
        load_splits(data, read_vocab(data.vocab), read_classes(data), guides)


def test_load_splits_refuses_guides_without_a_split(data):
    guides = full_guides(data)
    del guides["test"]
    with pytest.raises(ValueError, match="^the guide attention has no test instance 'test-0'$"):
        load_splits(data, read_vocab(data.vocab), read_classes(data), guides)


def test_an_exported_attention_passes_the_guide_check(fitted, data, tmp_path):
    _, model_path = fitted
    export_attention(model_path, data, tmp_path / "attention.jsonl", batch_size=8)
    splits = load_splits(data, read_vocab(data.vocab), read_classes(data), read_guides(tmp_path / "attention.jsonl"))
    assert sum(len(s.guides) for s in splits.values()) == 48 + 24 + 24


# --------------------------------------------------------------------------------------------------
# start-up: what a job pays before its work (benchmarks/job_startup.py)


def _in_a_fresh_interpreter(code: str) -> str:
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_set_determinism_is_torchs_deterministic_mode_without_importing_the_compiler():
    out = _in_a_fresh_interpreter(
        "import sys, torch\n"
        "from attnexp.runtime import set_determinism\n"
        "set_determinism(3, 1)\n"
        "print(torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled(), 'torch._inductor' in sys.modules, 'torch._dynamo' in sys.modules)\n"
        "import torch._inductor.config as c\n"
        "print(c.deterministic)\n"  # what torch.use_deterministic_algorithms(True) sets, read when the compiler loads
    )
    assert out.split() == ["True", "False", "False", "False", "True"]
    already = _in_a_fresh_interpreter(
        "import torch._inductor.config as c\nfrom attnexp.runtime import set_determinism\nset_determinism(3, 1)\nprint(c.deterministic)"
    )
    assert already == "True"


def test_the_model_jobs_modules_leave_out_what_they_do_not_use():
    """explain and the J&W jobs import neither the compiler, captum (IG only), scipy.stats (τ only)
    nor plotting; jw_correlations not even torch; the adversary's optimizer loads nothing more."""
    heavy = ("torch._dynamo", "torch._inductor", "captum", "scipy.stats", "pandas", "matplotlib", "seaborn")
    out = _in_a_fresh_interpreter(
        "import sys, torch\n"
        "import attnexp.explain, attnexp.papers.jain_wallace.experiment as jw, attnexp.workflow\n"
        "from attnexp.runtime import set_determinism\n"
        "set_determinism(3, 1)\n"
        "jw.FusedAdam(torch.zeros(2, requires_grad=True), lr=0.01, amsgrad=True).step()\n"
        f"print([m for m in {heavy!r} if m in sys.modules])"
    )
    assert out == "[]"
    out = _in_a_fresh_interpreter(
        "import sys\nimport attnexp.papers.jain_wallace.correlations, attnexp.workflow\n"
        "print([m for m in ('torch', 'scipy.stats', 'pandas') if m in sys.modules])"
    )
    assert out == "[]"


def test_set_determinism_keeps_freed_memory_and_skips_nan_fills():
    out = _in_a_fresh_interpreter(
        "import ctypes, torch\n"
        "from attnexp.runtime import set_determinism\n"
        "set_determinism(3, 1)\n"
        "import torch.utils.deterministic as d\n"
        "print(d.fill_uninitialized_memory, torch.are_deterministic_algorithms_enabled())\n"
        "runs = []\n"
        "for _ in range(2):\n"
        "    torch.manual_seed(3)\n"
        "    runs.append(torch.randn(1000, 100) @ torch.randn(100, 10))\n"
        "print(torch.equal(*runs))\n"
    )
    assert out.split() == ["False", "True", "True"]


def test_set_determinism_flushes_denormals_to_zero_in_every_torch_thread():
    # a job's first torch call: the worker threads, started by the first parallel operation after
    # it, inherit the setting (threads started before would not)
    out = _in_a_fresh_interpreter(
        "import torch\n"
        "from attnexp.runtime import set_determinism\n"
        "set_determinism(3, 2)\n"
        "tiny = torch.full((1 << 20,), 1e-39)\n"  # a denormal float32, on enough elements for both threads
        "print(torch.get_num_threads(), bool((tiny * 1.5).eq(0).all()), bool((torch.full((4,), 1e-30) * 1.5).ne(0).all()))\n"
    )
    assert out.split() == ["2", "True", "True"]
