"""Training (attnexp.train), batching and collation (attnexp.models.inputs) and classification metrics
(attnexp.metrics): tiny models on tiny generated tasks, settings taken from the real config.yaml."""

from __future__ import annotations

import copy
import dataclasses
import json
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from attnexp import io
from attnexp.config import training_settings, validate_config
from attnexp.metrics import classification_metrics, f1_per_class, roc_auc
from attnexp.models import parse_model_name
from attnexp.models.inputs import (
    UNK,
    Example,
    collate,
    label_classes,
    length_bucketed_batches,
    sorted_batches,
    to_examples,
)
from attnexp.train import (
    CheckpointError,
    SplitData,
    build_and_initialise,
    checkpoint_metadata,
    class_weights,
    export_attention,
    fit,
    load_checkpoint,
    predict,
    read_guides,
    restore_from_checkpoint,
    restore_model,
    save_checkpoint,
    train_model,
)

torch.use_deterministic_algorithms(True)

ROOT = Path(__file__).resolve().parents[1]
CPU = torch.device("cpu")
SPECIALS = ["<PAD>", "<UNK>", "<SOS>", "<EOS>"]
FILLERS = [f"w{i}" for i in range(20)]
VOCAB = SPECIALS + ["good", "bad"] + FILLERS


def quiet(_message: str) -> None:
    pass


@pytest.fixture(scope="module")
def config():
    return validate_config(yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8")))


def tiny_settings(config, model, **overrides):
    """The synthetic dataset's real settings for `model`, shrunk to a tiny model."""
    settings = training_settings(config, "synthetic", model)
    settings.update(epochs=2, hidden_size=8, embedding_dim=8, batch_size=16, eval_batch_size=16)
    settings.update(overrides)
    return settings


# --------------------------------------------------------------------------------------------------
# a tiny separable task: positives contain "good", negatives "bad", among random filler words


def task_records(n: int, seed: int, prefix: str) -> list[dict]:
    rng = np.random.RandomState(seed)
    records = []
    for i in range(n):
        label = i % 2
        words = list(rng.choice(FILLERS, size=rng.randint(4, 12)))
        words[rng.randint(len(words))] = "good" if label else "bad"
        cut = rng.randint(1, len(words))
        records.append({"id": f"{prefix}{i}", "tokens": words, "label": label, "sentences": [[0, cut], [cut, len(words)]]})
    return records


def task_examples(n: int, seed: int, prefix: str) -> list[Example]:
    return to_examples(task_records(n, seed, prefix), VOCAB, [0, 1])


def write_dataset(root: Path, sizes=(48, 24, 24), vocab=VOCAB) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for seed, (split, n) in enumerate(zip(("train", "dev", "test"), sizes)):
        io.write_jsonl(root / f"{split}.jsonl", task_records(n, seed, f"{split}-"))
    (root / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    return root


def run_fit(config, data_dir, out_dir, model="lstm-tanh", select_on="dev", guide=None, seed=10, **overrides):
    out_dir = Path(out_dir)
    metrics = fit(
        parse_model_name(model, "binary"), data_dir, None, guide, tiny_settings(config, model, **overrides), select_on,
        seed, 1, "cpu", out_dir / "model.pt", out_dir / "metrics.json", out_dir / "timing.json",
        {"test": True}, log=quiet,
    )
    return metrics, out_dir / "model.pt"


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return write_dataset(tmp_path_factory.mktemp("data"))


@pytest.fixture(scope="module")
def fitted(config, data_dir, tmp_path_factory):
    """One lstm-tanh trained through `fit`: (metrics, checkpoint path)."""
    return run_fit(config, data_dir, tmp_path_factory.mktemp("fit-a"))


@pytest.fixture(scope="module")
def fitted_again(config, data_dir, tmp_path_factory):
    """The same `fit` call again, into another folder."""
    return run_fit(config, data_dir, tmp_path_factory.mktemp("fit-b"))


# --------------------------------------------------------------------------------------------------
# batching


def skewed_lengths(n=400, seed=0):
    return np.maximum(1, np.random.RandomState(seed).lognormal(3.0, 1.0, size=n).astype(int))


@pytest.mark.parametrize("max_tokens", [None, 200])
def test_length_bucketed_batches_cover_every_index_once_within_the_limits(max_tokens):
    lengths = skewed_lengths()
    batches = length_bucketed_batches(lengths, 16, np.random.RandomState(0), 0.1, max_tokens)
    assert np.array_equal(np.sort(np.concatenate(batches)), np.arange(len(lengths)))
    assert all(1 <= len(b) <= 16 for b in batches)
    if max_tokens is not None:
        # a batch's padded size stays under the cap, unless one instance alone exceeds it
        assert all(lengths[b].max() * len(b) <= max_tokens or len(b) == 1 for b in batches)
        assert any(len(b) < 16 for b in batches if lengths[b].max() * len(b) <= max_tokens)
        assert any(len(b) == 1 and lengths[b].max() > max_tokens for b in batches)


def test_length_bucketed_batches_are_deterministic_for_a_seed():
    lengths = skewed_lengths()
    a = length_bucketed_batches(lengths, 16, np.random.RandomState(7), 0.1, None)
    b = length_bucketed_batches(lengths, 16, np.random.RandomState(7), 0.1, None)
    c = length_bucketed_batches(lengths, 16, np.random.RandomState(8), 0.1, None)
    assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not (len(a) == len(c) and all(np.array_equal(x, y) for x, y in zip(a, c)))


def padding_share(batches, lengths) -> float:
    real = sum(lengths[b].sum() for b in batches)
    padded = sum(lengths[b].max() * len(b) for b in batches)
    return 1 - real / padded


def test_length_bucketing_pads_much_less_than_random_batches():
    lengths = skewed_lengths(1000)
    rng = np.random.RandomState(0)
    bucketed = padding_share(length_bucketed_batches(lengths, 32, rng, 0.1, None), lengths)
    random_batches = np.array_split(rng.permutation(len(lengths)), len(lengths) // 32)
    shuffled = padding_share(random_batches, lengths)
    assert shuffled > 0.6  # the skew makes random batches mostly padding
    assert bucketed < 0.25 and bucketed < shuffled / 3


def test_length_bucketed_batch_order_is_shuffled():
    lengths = np.arange(1, 321)
    batches = length_bucketed_batches(lengths, 32, np.random.RandomState(0), 0.0, None)
    longest = [lengths[b].max() for b in batches]
    assert sorted(longest) != longest or len(batches) == 1
    assert [list(np.sort(lengths[b])) for b in sorted(batches, key=lambda b: lengths[b].max())] == [
        list(range(1 + 32 * i, 33 + 32 * i)) for i in range(10)
    ]  # without noise each batch is a run of consecutive lengths


def test_sorted_batches_are_in_length_order():
    lengths = skewed_lengths(100)
    batches = sorted_batches(lengths, 8, max_tokens=200)
    order = np.concatenate(batches)
    assert np.array_equal(np.sort(order), np.arange(100))
    assert np.all(np.diff(lengths[order]) >= 0)
    assert all(lengths[b].max() * len(b) <= 200 or len(b) == 1 for b in batches)
    assert all(len(b) <= 8 for b in batches)


# --------------------------------------------------------------------------------------------------
# examples and collation


def test_collate_refuses_a_guide_of_the_wrong_length():
    examples = [Example("a", np.array([4, 5, 6, 7]), 0, [(0, 4)]), Example("b", np.array([5, 6]), 1, [(0, 2)])]
    guides = {"a": np.full(3, 1 / 3), "b": np.array([0.5, 0.5])}
    with pytest.raises(ValueError, match=r"guide attention for 'a' has 3 weights, the instance has 4 tokens"):
        collate(examples, "sos_eos", guides)
    guides["a"] = np.full(5, 0.2)
    with pytest.raises(ValueError, match="'a' has 5 weights"):
        collate(examples, "tokens", guides)


@pytest.mark.parametrize("layout, offset", [("sos_eos", 1), ("tokens", 0)])
def test_collate_places_the_guide_on_the_words(layout, offset):
    examples = [Example("a", np.array([4, 5, 6]), 0, [(0, 3)]), Example("b", np.array([5]), 1, [(0, 1)])]
    guides = {"a": np.array([0.2, 0.3, 0.5]), "b": np.array([1.0])}
    batch = collate(examples, layout, guides)
    assert batch.guide.shape == batch.tokens.shape and batch.guide.dtype == torch.float32
    width = batch.tokens.shape[1]
    assert torch.allclose(batch.guide[0], torch.tensor([0.0] * offset + [0.2, 0.3, 0.5] + [0.0] * (width - 3 - offset)))
    assert torch.equal(batch.guide[1], torch.tensor([0.0] * offset + [1.0] + [0.0] * (width - 1 - offset)))


def test_collate_unknown_layout():
    with pytest.raises(ValueError, match="unknown layout"):
        collate([Example("a", np.array([4]), 0, [(0, 1)])], "words")


def test_to_examples_maps_words_and_labels():
    records = [{"id": "x", "tokens": ["good", "zzz", "w3"], "label": "pos", "sentences": [[0, 3]], "question": ["w1", "nope"]}]
    (e,) = to_examples(records, VOCAB, ["neg", "pos"])
    assert e.tokens.tolist() == [VOCAB.index("good"), UNK, VOCAB.index("w3")] and e.label == 1
    assert e.question.tolist() == [VOCAB.index("w1"), UNK] and e.sentences == [(0, 3)]
    with pytest.raises(ValueError, match="'x'.*not one of the training labels"):
        to_examples(records, VOCAB, ["neg", "neutral"])


def test_label_classes_sorts_numbers_numerically():
    records = [{"label": x} for x in ["10", "2", "b", "-1", "a", "2"]]
    assert label_classes(records) == ["-1", "2", "10", "a", "b"]
    assert label_classes([{"label": 1}, {"label": 0}]) == [0, 1]


def test_example_length_per_layout():
    e = Example("x", np.arange(4, 11), 0, [(0, 2), (2, 2), (2, 7)])
    assert (e.length("sos_eos"), e.length("tokens"), e.length("sentences")) == (9, 7, 2 * 5)


# --------------------------------------------------------------------------------------------------
# metrics


def brute_force_auc(y, s) -> float:
    pos, neg = s[y == 1], s[y == 0]
    return float(np.mean([1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg]))


@pytest.mark.parametrize("seed", range(5))
def test_roc_auc_is_the_pairwise_probability_with_ties_half(seed):
    rng = np.random.RandomState(seed)
    y = rng.randint(0, 2, size=40)
    y[:2] = [0, 1]
    score = rng.randint(0, 6, size=40) / 5.0  # many ties
    assert roc_auc(y, score) == pytest.approx(brute_force_auc(y, score), abs=1e-12)
    continuous = rng.randn(40)
    assert roc_auc(y, continuous) == pytest.approx(brute_force_auc(y, continuous), abs=1e-12)


def test_roc_auc_edge_cases():
    assert roc_auc(np.array([0, 0, 1, 1]), np.array([0.1, 0.2, 0.3, 0.4])) == 1.0
    assert roc_auc(np.array([1, 1, 0, 0]), np.array([0.1, 0.2, 0.3, 0.4])) == 0.0
    assert roc_auc(np.array([0, 1, 0, 1]), np.full(4, 0.5)) == 0.5
    assert np.isnan(roc_auc(np.array([1, 1, 1]), np.array([0.1, 0.2, 0.3])))
    assert np.isnan(roc_auc(np.array([0, 0]), np.array([0.1, 0.2])))


def test_f1_per_class_by_hand():
    y_true = np.array([0, 0, 0, 1, 1, 2])
    y_pred = np.array([0, 1, 0, 1, 2, 2])
    # class 0: tp 2 fp 0 fn 1 -> 4/5; class 1: tp 1 fp 1 fn 1 -> 1/2; class 2: tp 1 fp 1 fn 0 -> 2/3; class 3: absent -> 0
    assert f1_per_class(y_true, y_pred, 4) == pytest.approx([0.8, 0.5, 2 / 3, 0.0])
    assert f1_per_class(np.array([1, 1]), np.array([0, 0]), 2) == [0.0, 0.0]


def test_classification_metrics_binary_and_multiclass():
    y = np.array([0, 1, 1, 0, 1])
    p1 = np.array([0.2, 0.9, 0.5, 0.6, 0.7])  # 0.5 -> class 0 (argmax takes the first of a tie)
    binary = classification_metrics(y, np.stack([1 - p1, p1], axis=1))
    assert binary["n"] == 5 and binary["accuracy"] == pytest.approx(3 / 5)
    # predicted [0, 1, 0, 1, 1]: class 0 tp 1 fp 1 fn 1 -> 1/2; class 1 tp 2 fp 1 fn 1 -> 2/3
    assert binary["f1"] == pytest.approx([0.5, 2 / 3])
    assert binary["macro_f1"] == pytest.approx(np.mean(binary["f1"]))
    assert binary["roc_auc"] == pytest.approx(brute_force_auc(y, p1))
    probs = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6], [0.5, 0.4, 0.1]])
    multi = classification_metrics(np.array([0, 1, 2, 1]), probs)
    assert "roc_auc" not in multi
    assert multi["accuracy"] == 0.75 and multi["f1"] == pytest.approx([2 / 3, 2 / 3, 1.0])


def test_class_weights():
    assert class_weights(np.array([1, 0, 0, 0])) == 3.0
    assert class_weights(np.array([1, 1, 0, 0, 0, 0])) == 2.0
    assert class_weights(np.array([1, 1, 1, 0])) == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="no positive"):
        class_weights(np.array([0, 0]))


# --------------------------------------------------------------------------------------------------
# models, prediction, training


def test_build_and_initialise(config):
    settings = tiny_settings(config, "lstm-tanh")
    vectors = np.random.RandomState(0).randn(len(VOCAB), 6).astype(np.float32)
    model, cfg = build_and_initialise(parse_model_name("lstm-tanh", "binary"), VOCAB, 2, vectors, settings)
    assert cfg.embedding_dim == 6 and cfg.n_classes == 1 and model.decoder.out_features == 1  # J&W binary: one sigmoid
    assert torch.equal(model.embedding.weight[1:], torch.from_numpy(vectors[1:]))
    assert (model.embedding.weight[0] == 0).all()
    _, cfg = build_and_initialise(parse_model_name("lstm-tanh", "multiclass"), VOCAB, 4, None, settings)
    assert cfg.n_classes == 4 and cfg.embedding_dim == 8
    han_settings = tiny_settings(config, "han-rnn")
    _, cfg = build_and_initialise(parse_model_name("han-rnn", "binary"), VOCAB, 2, None, han_settings)
    assert cfg.n_classes == 2  # S&S: softmax over both classes
    with pytest.raises(ValueError, match="rows"):
        build_and_initialise(parse_model_name("lstm-tanh", "binary"), VOCAB, 2, vectors[:-1], settings)


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


def test_a_tiny_flat_model_learns_a_separable_task(config):
    settings = tiny_settings(config, "average-tanh", epochs=10, lr=3e-2, select_metric="accuracy")
    torch.manual_seed(0)
    model, _ = build_and_initialise(parse_model_name("average-tanh", "binary"), VOCAB, 2, None, settings)
    splits = {"train": SplitData(task_examples(64, 0, "tr")), "dev": SplitData(task_examples(32, 1, "d")), "test": SplitData(task_examples(40, 2, "te"))}
    result = train_model(model, splits, settings, "dev", 0, CPU, log=quiet)
    assert result.test["accuracy"] > 0.95 and result.test["roc_auc"] > 0.95
    assert len(result.history) == 10 and result.best_epoch >= 2
    assert result.history[-1]["train_loss"] < result.history[0]["train_loss"]
    assert 0 <= result.timing["padding_share"] < 1
    model.load_state_dict(result.state_dict)
    probs, attention = predict(model, splits["test"], 16, CPU)
    assert classification_metrics(splits["test"].labels(), probs)["accuracy"] == pytest.approx(result.test["accuracy"], abs=1e-6)
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
        splits = {"train": SplitData(task_examples(16, 0, "tr")), "dev": SplitData(task_examples(4, 1, "d")), "test": SplitData(task_examples(4, 2, "te"))}
        scores = {"dev": list(dev_scores), "test": list(test_scores)}
        states = []

        def fake_evaluate(model, split, settings, device):
            name = "dev" if split is splits["dev"] else "test"
            if name == "dev":
                states.append(copy.deepcopy(model.state_dict()))
            score = scores[name].pop(0)
            return {"n": 4, "accuracy": score, "macro_f1": score, "f1": [score, score], "roc_auc": score}

        monkeypatch.setattr("attnexp.train._evaluate", fake_evaluate)
        return train_model(model, splits, settings, select_on, 0, CPU, log=quiet), states

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
# from files to files: fit, checkpoints, export


@pytest.mark.parametrize("select_on", ["dev", "test"])
def test_fit_selects_the_best_epoch_on_the_chosen_split(config, data_dir, tmp_path, select_on):
    metrics, _ = run_fit(config, data_dir, tmp_path, model="average-tanh", select_on=select_on, epochs=5, lr=3e-2)
    assert metrics["select_on"] == select_on and metrics["select_metric"] == "roc_auc"
    scores = [h[select_on]["roc_auc"] for h in metrics["history"]]
    assert len(scores) == 5
    assert metrics["selected_epoch"] == 2 + int(np.argmax(scores[1:]))  # J&W: epoch 1 is never selected
    chosen = metrics["history"][metrics["selected_epoch"] - 1]
    assert metrics["dev"]["roc_auc"] == chosen["dev"]["roc_auc"] and metrics["test"]["roc_auc"] == chosen["test"]["roc_auc"]
    written = json.loads((tmp_path / "metrics.json").read_text())
    assert written["selected_epoch"] == metrics["selected_epoch"] and written["settings"]["epochs"] == 5
    assert set(json.loads((tmp_path / "timing.json").read_text())) >= {"train_seconds", "epochs_run", "padding_share"}


def test_fit_is_deterministic(config, data_dir, fitted, fitted_again, tmp_path):
    metrics, model_path = fitted
    again, again_path = fitted_again
    assert again == metrics
    assert (again_path.parent / "metrics.json").read_bytes() == (model_path.parent / "metrics.json").read_bytes()
    state, meta = load_checkpoint(model_path)
    state_again, meta_again = load_checkpoint(again_path)
    assert meta == meta_again and state.keys() == state_again.keys()
    assert all(torch.equal(state[k], state_again[k]) for k in state)
    other, _ = run_fit(config, data_dir, tmp_path / "other-seed", seed=11)
    assert other["history"] != metrics["history"]  # the seed matters, so the equality above means something


def test_fit_writes_byte_identical_checkpoints(fitted, fitted_again):
    _, model_path = fitted
    _, again_path = fitted_again
    assert again_path.read_bytes() == model_path.read_bytes()


def test_checkpoint_metadata(fitted, config):
    _, model_path = fitted
    _, meta = load_checkpoint(model_path)
    assert meta["model"] == "lstm-tanh" and meta["family"] == "flat" and meta["classes"] == ["0", "1"]
    assert meta["vocab_size"] == len(VOCAB) and meta["config"]["class"] == "FlatConfig" and meta["config"]["hidden_size"] == 8
    spec = parse_model_name("lstm-tanh", "binary")
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


def test_load_checkpoint_refuses_other_files(tmp_path):
    text = tmp_path / "notes.pt"
    text.write_text("not a checkpoint")
    with pytest.raises(CheckpointError, match="not a readable"):
        load_checkpoint(text)
    with pytest.raises(CheckpointError, match="not a readable"):
        load_checkpoint(tmp_path / "missing.pt")
    plain = tmp_path / "plain.pt"
    torch.save({"weights": torch.ones(2)}, plain)
    with pytest.raises(CheckpointError, match="'metadata' and 'state_dict'"):
        load_checkpoint(plain)
    pickled = tmp_path / "pickled.pt"
    torch.save({"metadata": {}, "state_dict": NotAStateDict()}, pickled)  # weights_only: no arbitrary objects
    with pytest.raises(CheckpointError, match="not a readable"):
        load_checkpoint(pickled)
    good = tmp_path / "good.pt"
    save_checkpoint(good, {"w": torch.zeros(1)}, {"model": "x"})
    assert load_checkpoint(good, {"model": "x"})[1] == {"model": "x"}


def test_restore_model_checks_vocabulary_config_and_classes(fitted, config):
    _, model_path = fitted
    spec = parse_model_name("lstm-tanh", "binary")
    _, cfg = build_and_initialise(spec, VOCAB, 2, None, tiny_settings(config, "lstm-tanh"))
    model = restore_model(model_path, spec, cfg, VOCAB, [0, 1])
    assert not model.training
    state, _ = load_checkpoint(model_path)
    assert all(torch.equal(v, model.state_dict()[k]) for k, v in state.items())
    other_vocab = VOCAB[:-1] + ["zebra"]  # same size, one word differs
    with pytest.raises(CheckpointError, match="vocab_sha256"):
        restore_model(model_path, spec, cfg, other_vocab, [0, 1])
    with pytest.raises(CheckpointError, match="classes"):
        restore_model(model_path, spec, cfg, VOCAB, [0, 1, 2])
    bigger = dataclasses.replace(cfg, hidden_size=16)
    with pytest.raises(CheckpointError, match="config_sha256"):
        restore_model(model_path, spec, bigger, VOCAB, [0, 1])


def test_restore_from_checkpoint_refuses_a_data_dir_with_another_vocabulary(fitted, tmp_path):
    metrics, model_path = fitted
    other = write_dataset(tmp_path / "other", vocab=VOCAB[:-1] + ["zebra"])
    with pytest.raises(CheckpointError, match="vocab_sha256"):
        restore_from_checkpoint(model_path, other)


def exported(path) -> dict[str, list[dict]]:
    by_split: dict[str, list[dict]] = {}
    for record in io.read_jsonl(path):
        by_split.setdefault(record["split"], []).append(record)
    return by_split


def test_export_attention_one_record_per_instance(fitted, data_dir, tmp_path):
    _, model_path = fitted
    export_attention(model_path, data_dir, tmp_path / "attention.jsonl", batch_size=8)
    by_split = exported(tmp_path / "attention.jsonl")
    assert set(by_split) == {"train", "dev", "test"}
    for split, records in by_split.items():
        source = io.read_jsonl(data_dir / f"{split}.jsonl")
        assert [r["id"] for r in records] == [s["id"] for s in source]
        for r, s in zip(records, source):
            assert r["length"] == len(r["attention"]) == len(s["tokens"])
            assert sum(r["attention"]) == pytest.approx(1, abs=1e-5) and min(r["attention"]) > 0
            assert len(r["probs"]) == 2 and sum(r["probs"]) == pytest.approx(1, abs=1e-5)
    guides = read_guides(tmp_path / "attention.jsonl")
    assert set(guides) == {"train", "dev", "test"} and len(guides["dev"]) == 24


def test_guided_model_trains_and_exports_the_imposed_attention(config, fitted, data_dir, tmp_path):
    _, model_path = fitted
    guide_path = tmp_path / "guide.jsonl"
    export_attention(model_path, data_dir, guide_path, batch_size=8)
    _, guided_path = run_fit(config, data_dir, tmp_path / "guided", model="average-guided-lstm-tanh", guide=guide_path, epochs=2)
    export_attention(guided_path, data_dir, tmp_path / "guided.jsonl", batch_size=8, guide_path=guide_path)
    source = exported(guide_path)
    for split, records in exported(tmp_path / "guided.jsonl").items():
        for r, s in zip(records, source[split], strict=True):
            assert r["id"] == s["id"] and r["attention"] == s["attention"]  # the guide, exactly (D-ALIGN)


def test_guides_are_checked(tmp_path, data_dir, config):
    bad = tmp_path / "bad.jsonl"
    io.write_jsonl(bad, [{"id": "a", "split": "train", "length": 3, "attention": [0.5, 0.5]}])
    with pytest.raises(ValueError, match="'a' stores 2 weights for length 3"):
        read_guides(bad)
    partial = tmp_path / "partial.jsonl"
    io.write_jsonl(partial, [{"id": "train-0", "split": "train", "length": 1, "attention": [1.0]}])
    with pytest.raises(ValueError, match="lacks"):
        run_fit(config, data_dir, tmp_path / "out", model="average-guided-lstm-tanh", guide=partial)


def test_hierarchical_model_exports_sentence_attention(config, data_dir, tmp_path):
    metrics, model_path = run_fit(config, data_dir, tmp_path, model="han-rnn", epochs=2, hidden_size=4)
    assert metrics["select_metric"] == "accuracy"  # S&S protocol
    export_attention(model_path, data_dir, tmp_path / "attention.jsonl", batch_size=8)
    for split, records in exported(tmp_path / "attention.jsonl").items():
        source = io.read_jsonl(data_dir / f"{split}.jsonl")
        for r, s in zip(records, source, strict=True):
            assert r["length"] == len(r["attention"]) == sum(1 for a, b in s["sentences"] if b > a) == 2
            assert sum(r["attention"]) == pytest.approx(1, abs=1e-5)
