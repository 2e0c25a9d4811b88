"""ERASER comprehensiveness / sufficiency and AOPC (attnexp.papers.faithfulness.experiment, DeYoung et al. 2020),
checked by hand on a linear bag-of-words model, then on the project's own models."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import torch
from tiny_models import VOCAB, flat, hierarchical, random_documents, random_examples
from torch import nn

from attnexp import io
from attnexp.claims import read_claims
from attnexp.explain.perturb import variant_probabilities
from attnexp.models.inputs import Encoded, collate
from attnexp.papers.faithfulness import experiment as ff
from attnexp.papers.faithfulness import plots as ffp
from attnexp.papers.faithfulness import summary as fs
from attnexp.papers.faithfulness import tables as fft


class BagOfWords(nn.Module):
    """logit = Σ_t w[token_t] over the real tokens: p_1 = σ(Σ w), so every erasure is closed-form."""

    layout = "tokens"

    def __init__(self, weights: np.ndarray):
        super().__init__()
        self.weights = torch.tensor(weights, dtype=torch.float64)

    def encode(self, batch) -> Encoded:
        return Encoded(self.weights[batch.tokens].unsqueeze(-1), batch.tokens != 0)

    def decode(self, encoded: Encoded):
        hidden = encoded.hidden.squeeze(-1) * encoded.mask
        return hidden.sum(dim=1, keepdim=True), encoded.mask / encoded.mask.sum(dim=1, keepdim=True)


def sigmoid(x: float) -> float:
    return 1 / (1 + np.exp(-x))


@pytest.fixture
def bow():
    weights = np.random.RandomState(3).normal(size=VOCAB)
    weights[:4] = 0.0  # PAD, UNK, SOS, EOS carry nothing
    return BagOfWords(weights), weights


def by_hand(weights, tokens, scores, b):
    """comprehensiveness and sufficiency of one instance and bin, from the formulas."""
    n = len(tokens)
    k = max(1, int(np.ceil(round(b * n, 9))))
    top = sorted(range(n), key=lambda t: (-scores[t], t))[:k]
    full = sigmoid(weights[tokens].sum())
    without = sigmoid(weights[np.delete(tokens, top)].sum())
    only = sigmoid(weights[tokens[sorted(top)]].sum())
    p = (lambda q: q) if full >= 0.5 else (lambda q: 1 - q)  # p_j: the class predicted on x
    return p(full) - p(without), p(full) - p(only)


def test_bin_size_is_exact_where_floats_are_not():
    assert 0.07 * 100 > 7  # the float trap: ⌈0.07·100⌉ would be 8
    assert ff.bin_size(0.07, 100) == 7
    assert ff.bin_size(0.01, 30) == 1  # at least one token
    assert ff.bin_size(0.5, 3) == 2 and ff.bin_size(0.2, 10) == 2 and ff.bin_size(0.05, 41) == 3


def test_top_positions_breaks_ties_by_the_lower_position():
    assert list(ff.top_positions(np.array([0.1, 0.5, 0.5, 0.9, 0.5]), 3)) == [3, 1, 2]
    assert list(ff.top_positions(np.zeros(4), 2)) == [0, 1]


def test_comprehensiveness_and_sufficiency_by_hand(bow):
    model, weights = bow
    examples = random_examples([2, 5, 13, 30], seed=1)
    rng = np.random.RandomState(0)
    scores = [np.round(rng.uniform(size=len(e.tokens)), 1) for e in examples]  # rounded: ties happen
    frame = ff.eraser(model, examples, {"mine": scores})
    assert len(frame) == len(examples) * len(ff.BINS)
    for row in frame.itertuples():
        i = int(row.id[3:])
        comp, suff = by_hand(weights, examples[i].tokens, scores[i], row.bin)
        assert row.comprehensiveness == pytest.approx(comp, abs=1e-12)
        assert row.sufficiency == pytest.approx(suff, abs=1e-12)
        assert row.k == ff.bin_size(row.bin, len(examples[i].tokens))


def test_an_instance_of_one_token_is_left_out(bow):
    model, _ = bow
    examples = random_examples([1, 6], seed=2)
    frame = ff.eraser(model, examples, {"mine": [np.ones(1), np.arange(6.0)]})
    assert set(frame["id"]) == {"doc1"}


def test_random_is_the_mean_of_its_draws(bow):
    model, _ = bow
    examples = random_examples([7, 12, 20], seed=3)
    draws = ff.random_rankings([len(e.tokens) for e in examples], seed=5)
    frame = ff.eraser(model, examples, {}, random=draws)
    assert set(frame["ranking"]) == {ff.RANDOM}
    one_by_one = [ff.eraser(model, examples, {"draw": [d[r] for d in draws]}) for r in range(ff.RANDOM_RANKINGS)]
    expected = pd.concat(one_by_one).groupby(["id", "bin"])[["comprehensiveness", "sufficiency"]].mean()
    got = frame.set_index(["id", "bin"])[["comprehensiveness", "sufficiency"]].sort_index()
    pd.testing.assert_frame_equal(got, expected.sort_index(), check_exact=False, rtol=1e-12)


def test_random_rankings_do_not_depend_on_the_other_instances():
    alone = ff.random_rankings([9], seed=5)
    together = ff.random_rankings([9, 4, 11], seed=5)
    assert all(np.array_equal(a, b) for a, b in zip(alone[0], together[0]))
    assert not np.array_equal(together[0][0], together[0][1])  # the draws differ


def test_aopc_is_the_mean_over_bins_then_over_instances(bow):
    model, weights = bow
    examples = random_examples([4, 9, 16], seed=4)
    scores = [weights[e.tokens] for e in examples]  # the model's own weights: a faithful ranking
    frame = ff.eraser(model, examples, {"weights": scores, "reversed": [-s for s in scores]})
    summary = fs.aopc(frame).set_index("ranking")
    for name, sign in (("weights", 1), ("reversed", -1)):
        per_instance = [
            np.mean([by_hand(weights, e.tokens, sign * s, b)[0] for b in ff.BINS]) for e, s in zip(examples, scores)
        ]
        assert summary.loc[name, "aopc_comprehensiveness"] == pytest.approx(np.mean(per_instance), abs=1e-12)
        assert summary.loc[name, "aopc_comprehensiveness_sd"] == pytest.approx(np.std(per_instance, ddof=1), abs=1e-12)
        assert summary.loc[name, "instances"] == 3


def test_the_faithful_ranking_beats_its_reverse_on_a_linear_model(bow):
    model, weights = bow
    examples = [e for e in random_examples([20] * 40, seed=6)]
    probs = variant_probabilities(model, examples, np.arange(len(examples)), [np.zeros(20, dtype=bool)] * len(examples))
    sign = np.where(probs.argmax(1) == 1, 1.0, -1.0)  # support for the predicted class
    scores = [s * weights[e.tokens] for s, e in zip(sign, examples)]
    summary = fs.aopc(ff.eraser(model, examples, {"support": scores, "against": [-s for s in scores]})).set_index(
        "ranking"
    )
    assert summary.loc["support", "aopc_comprehensiveness"] > 0 > summary.loc["against", "aopc_comprehensiveness"]
    assert summary.loc["support", "aopc_sufficiency"] < summary.loc["against", "aopc_sufficiency"]


def test_a_ranking_of_the_wrong_length_is_refused(bow):
    model, _ = bow
    examples = random_examples([5, 6], seed=7)
    with pytest.raises(ValueError, match="ranking 'mine'.*'doc1'"):
        ff.eraser(model, examples, {"mine": [np.ones(5), np.ones(5)]})


@pytest.mark.parametrize(
    "make, docs",
    [
        (lambda: flat("lstm", "tanh"), False),
        (lambda: flat("cnn", "dot", n_classes=3), False),
        (lambda: hierarchical("han", "rnn"), True),
        (lambda: flat("lstm", "sparsemax"), False),  # the zoo: exact zeros in the attention
        (lambda: flat("lstm-ortho", "tanh"), False),
    ],
)
def test_project_models_agree_with_one_forward_pass_per_variant(make, docs):
    """The batched variants equal running each erased input alone (the models, not only the toy)."""
    model = make()
    examples = random_documents([6, 11, 17], seed=8) if docs else random_examples([6, 11, 17], seed=8)
    scores = [np.random.RandomState(i).uniform(size=len(e.tokens)) for i, e in enumerate(examples)]
    frame = ff.eraser(model, examples, {"mine": scores}, bins=(0.1, 0.5))
    for row in frame.itertuples():
        i = int(row.id[3:])
        top = np.zeros(len(scores[i]), dtype=bool)
        top[ff.top_positions(scores[i], row.k)] = True
        alone = lambda mask: variant_probabilities(model, [examples[i]], np.array([0]), [mask])[0]  # noqa: E731
        full = alone(np.zeros_like(top))
        j = full.argmax()
        assert row.comprehensiveness == pytest.approx(full[j] - alone(top)[j], abs=1e-5)
        assert row.sufficiency == pytest.approx(full[j] - alone(~top)[j], abs=1e-5)


# --- HAN and FLAN: their own attention and leave-one-unit-out, over the units they attend to ---


def test_attended_units_are_tokens_or_non_empty_sentences():
    doc = random_documents([9], seed=11, empty_sentence=True)[0]
    sentences = ff.attended_units(doc, "sentences")
    assert [list(u) for u in sentences] == [list(range(a, b)) for a, b in doc.sentences if b > a]
    assert len(sentences) < len(doc.sentences)  # the empty sentence is no unit (HAN drops it)
    assert [list(u) for u in ff.attended_units(doc, "tokens")] == [[t] for t in range(9)]
    with pytest.raises(ValueError, match="'tokens' or 'sentences'"):
        ff.attended_units(doc, "paragraphs")


def test_sentence_units_erase_whole_sentences_one_pass_each():
    """HAN ranked over sentences: a bin erases its top sentences' tokens; batched = one pass per variant."""
    model = hierarchical("han", "rnn")
    examples = random_documents([7, 12, 19], seed=12)
    units = [ff.attended_units(e, "sentences") for e in examples]
    scores = [np.random.RandomState(i).uniform(size=len(u)) for i, u in enumerate(units)]
    frame = ff.eraser(model, examples, {"mine": scores}, bins=(0.2, 0.5), units=units, unit="sentences")
    assert set(frame["unit"]) == {"sentences"}
    assert {(r.id, r.n) for r in frame.itertuples()} == {(e.id, len(u)) for e, u in zip(examples, units) if len(u) >= 2}
    for row in frame.itertuples():
        i = int(row.id[3:])
        top = np.zeros(len(examples[i].tokens), dtype=bool)
        for u in ff.top_positions(scores[i], row.k):
            top[units[i][u]] = True
        alone = lambda mask: variant_probabilities(model, [examples[i]], np.array([0]), [mask])[0]  # noqa: E731
        full = alone(np.zeros_like(top))
        j = full.argmax()
        assert row.comprehensiveness == pytest.approx(full[j] - alone(top)[j], abs=1e-5)
        assert row.sufficiency == pytest.approx(full[j] - alone(~top)[j], abs=1e-5)


@pytest.mark.parametrize("architecture, attended", [("han", "sentences"), ("flan", "tokens")])
def test_unit_rankings_are_the_models_attention_and_leave_one_unit_out(architecture, attended):
    model = hierarchical(architecture, "rnn")
    examples = random_documents([1, 8, 15], seed=13)  # doc0: one token, one unit: not scored, no error
    units = [ff.attended_units(e, attended) for e in examples]
    rankings = ff.unit_rankings(model, examples, units, max_tokens=40)  # several batches
    assert set(rankings) == {*ff.UNIT_RANKINGS, ff.REMOVAL}
    for i, (e, u) in enumerate(zip(examples, units)):
        batch = collate([e], model.layout)
        with torch.no_grad():
            logits, attention = model.decode(model.encode(batch))
        assert np.allclose(rankings["attention"][i], attention[0].numpy(), atol=1e-6)
        assert len(rankings["loo"][i]) == len(u)
        if len(u) < 2:
            assert not rankings["loo"][i].any()
            continue
        full = variant_probabilities(model, [e], np.array([0]), [np.zeros(len(e.tokens), dtype=bool)])[0]
        for k, positions in enumerate(u):
            mask = np.zeros(len(e.tokens), dtype=bool)
            mask[positions] = True
            erased = variant_probabilities(model, [e], np.array([0]), [mask])[0]
            assert rankings["loo"][i][k] == pytest.approx(0.5 * np.abs(erased - full).sum(), abs=1e-6)
            j = full.argmax()
            assert rankings[ff.REMOVAL][i][k] == pytest.approx(full[j] - erased[j], abs=1e-6)
    # the same signed changes as the violation test's own removals
    changes = ff.removal_changes(model, examples, units=units, max_tokens=40)
    for i, change in enumerate(changes):
        assert np.allclose(change, rankings[ff.REMOVAL][i], atol=1e-6)


def test_a_violation_is_an_attribution_whose_sign_disagrees_with_its_removals_output_change():
    assert ff.violation_ratio(np.array([0.5, 0.2, -0.1, 0.0]), np.array([0.3, -0.1, -0.2, 0.4])) == (1, 3)
    assert ff.violation_ratio(np.array([1.0, 1.0]), np.array([0.0, 0.1])) == (1, 2)  # no change is no support
    assert ff.violation_ratio(np.zeros(3), np.ones(3)) == (0, 0)  # zero attributions claim nothing


def test_sparse_attentions_zero_weights_claim_nothing_in_the_violation_test():
    model = flat("lstm", "sparsemax")
    with torch.no_grad():
        model.attention.proj.weight.mul_(40)  # sharp scores: a small support
    examples = random_examples([9, 12, 7], seed=4)
    attention = ff.unit_rankings(model.eval(), examples, [ff.attended_units(e, "tokens") for e in examples])
    changes = ff.removal_changes(model, examples)
    frame = ff.violations(examples, {"attention": attention["attention"]}, changes, seed=7, random_draws=0)
    support = [int((a > 0).sum()) for a in attention["attention"]]
    assert frame["claimed"].tolist() == support
    assert all(0 < n < len(e.tokens) for n, e in zip(support, examples))  # every instance: some tokens left out


def test_the_violation_table_counts_each_explainer_and_random_per_instance():
    examples = random_examples([3, 1, 4], seed=2)  # the one-token instance is not scored
    changes = [np.array([0.2, -0.1, 0.05]), np.zeros(0), np.array([-0.3, 0.1, 0.2, 0.0])]
    attributions = {
        "attention": [np.array([0.5, 0.3, 0.2]), np.array([1.0]), np.array([0.1, 0.2, 0.3, 0.4])],
        "gradient": [np.array([1.0, -2.0, 0.5]), np.array([0.0]), np.array([-1.0, 1.0, 1.0, 0.0])],
    }
    frame = ff.violations(examples, attributions, changes, seed=7, random_draws=4)
    rows = {(r.explainer, r.id): r for r in frame.itertuples()}
    assert set(frame["explainer"]) == {"attention", "gradient", "random"} and set(frame["unit"]) == {"tokens"}
    assert examples[1].id not in set(frame["id"])
    assert rows[("attention", examples[0].id)].violation_ratio == pytest.approx(1 / 3)  # the -0.1 unit
    assert rows[("attention", examples[2].id)].violation_ratio == pytest.approx(2 / 4)  # -0.3 and 0.0
    assert rows[("gradient", examples[0].id)].violation_ratio == 0.0
    assert rows[("gradient", examples[2].id)].violation_ratio == 0.0 and rows[("gradient", examples[2].id)].claimed == 3
    again = ff.violations(examples, attributions, changes, seed=7, random_draws=4)
    pd.testing.assert_frame_equal(frame, again)  # Random's draws are seeded per instance
    with pytest.raises(ValueError, match="attribution 'attention'"):
        ff.violations(examples, {"attention": attributions["attention"][:2]}, changes, seed=7)


def test_a_han_table_says_its_unit_in_the_tables_and_claims(tmp_path):
    rows = [
        *[("loo", i, 0.5, 1, 3, 0.4, 0.1) for i in ("a", "b")],
        *[("random", i, 0.5, 1, 3, 0.1, 0.2) for i in ("a", "b")],
    ]
    out = {
        f"{name}_{ext}": tmp_path / f"{name}.{ext}"
        for name in ("aopc", "envelopes", "violation")
        for ext in ("csv", "md")
    }
    out["claims"] = tmp_path / "claims.csv"
    fft.write_tables([write_eraser(tmp_path, "yelp", "han-rnn", rows, unit="sentences")], [], out, [], LIU)
    assert set(pd.read_csv(out["aopc_csv"])["unit"]) == {"sentences"}
    assert "| sentences |" in out["aopc_md"].read_text()
    assert set(read_claims(out["claims"])["condition"]) == {"2 test instances, ranked sentences"}
    unlabelled = tmp_path / "old" / "sst" / "lstm-tanh" / "seed1" / "eraser.csv"
    unlabelled.parent.mkdir(parents=True)
    pd.DataFrame(rows, columns=["ranking", "id", "bin", "k", "n", "comprehensiveness", "sufficiency"]).to_csv(
        unlabelled, index=False
    )
    io.write_seal(unlabelled)
    with pytest.raises(
        ValueError, match="eraser.csv: every row needs a `unit` \\(tokens or sentences\\), got no `unit` column"
    ):
        fft.aopc_table([unlabelled])


def test_a_han_ranked_over_sentences_and_tokens_has_a_row_and_claims_per_unit(tmp_path):
    rows = [
        *[("attention", i, 0.5, 1, 3, 0.4, 0.1) for i in ("a", "b")],
        *[("random", i, 0.5, 1, 3, 0.1, 0.2) for i in ("a", "b")],
    ]
    frame = pd.concat(
        [
            pd.DataFrame(rows, columns=["ranking", "id", "bin", "k", "n", "comprehensiveness", "sufficiency"]).assign(
                unit=u
            )
            for u in ("sentences", "tokens")
        ]
    )
    frame.loc[frame["unit"] == "tokens", "comprehensiveness"] -= 0.05  # the units differ: never averaged together
    path = tmp_path / "yelp" / "han-rnn" / "seed1" / "eraser.csv"
    path.parent.mkdir(parents=True)
    frame.to_csv(path, index=False)
    io.write_seal(path)
    table = fft.aopc_table([path]).set_index(["unit", "ranking"])
    assert table.loc[("sentences", "attention"), "aopc_comprehensiveness"] == pytest.approx(0.4)
    assert table.loc[("tokens", "attention"), "aopc_comprehensiveness"] == pytest.approx(0.35)
    claims = fft.faithfulness_claims(table.reset_index())
    assert (
        sorted(c["condition"] for c in claims)
        == ["2 test instances, ranked sentences"] * 2 + ["2 test instances, ranked tokens"] * 2
    )


def test_ranked_units_and_a_hans_token_attention():
    assert ff.ranked_units("tokens", ["sentences"]) == ["tokens"]  # FLAN, flat: what they attend to
    assert ff.ranked_units("sentences", ["tokens", "sentences"]) == ["sentences", "tokens"]
    assert ff.ranked_units("sentences", ["tokens"]) == ["tokens"]
    with pytest.raises(ValueError, match="'faithfulness.han_units' is missing or empty"):
        ff.ranked_units("sentences", [])
    assert ff.ranked_units("tokens", None) == ["tokens"]  # only a HAN's settings carry the key
    model = hierarchical("han", "rnn")
    examples = random_documents([6, 11, 4], seed=3, empty_sentence=True)
    weights = ff.han_token_attention(model, examples, max_tokens=30)
    for e, w in zip(examples, weights):
        assert w.shape == (len(e.tokens),) and w.sum() == pytest.approx(1.0, abs=1e-5)  # Σ_s α_s Σ_w α_sw = 1
        with torch.no_grad():
            sentences = model(collate([e], "sentences"))[1][0]  # (S,) sentence attention
        spans = [(a, b) for a, b in e.sentences if b > a]
        assert np.allclose([w[a:b].sum() for a, b in spans], sentences[: len(spans)].numpy(), atol=1e-5)
    units = [ff.attended_units(e, "tokens") for e in examples]
    rankings = ff.unit_rankings(model, examples, units, max_tokens=30, unit="tokens")
    assert all(np.allclose(a, w) for a, w in zip(rankings["attention"], weights))
    assert [len(s) for s in rankings["loo"]] == [len(e.tokens) for e in examples]
    with pytest.raises(ValueError, match="its units can be those or tokens, not 'paragraphs'"):
        ff.unit_rankings(model, examples, units, unit="paragraphs")


# --- explanation records -> rankings (D-ALIGN) ---


def record(example, **vectors):
    n = len(example.tokens)
    base = {name: np.arange(n, dtype=float) for name in ("attention", "gradient", "loo", "ig")}
    return {"id": example.id, "length": n, **base, **vectors}


def test_rankings_of_reads_each_method_as_the_spec_says():
    examples = random_examples([3], seed=9)
    gradient = np.array([-5.0, 1.0, 2.0])
    ig = np.array([-5.0, 1.0, 2.0])
    rankings = ff.rankings_of([record(examples[0], gradient=gradient, ig=ig)], examples)
    assert list(ff.top_positions(rankings["gradient"][0], 1)) == [0]  # |gradient|: the largest magnitude
    assert list(ff.top_positions(rankings["ig"][0], 1)) == [2]  # signed IG: the strongest support
    assert rankings["attention_x_gradient"][0] == pytest.approx([0.0, 1.0, 4.0])  # α = (0, 1, 2) times |g|
    assert set(rankings) == set(ff.SCORES) - {"rollout", "attattr"}  # a recurrent model's records have neither
    transformer_record = {
        **record(examples[0]),
        "rollout": np.array([0.2, 0.5, 0.3]),
        "attattr": np.array([0.1, -0.4, 0.2]),
    }
    rankings = ff.rankings_of([transformer_record], examples)
    assert set(rankings) == set(ff.SCORES)
    assert list(ff.top_positions(rankings["attattr"][0], 1)) == [2]  # signed: the strongest support


def test_rankings_of_refuses_records_of_another_test_set():
    examples = random_examples([3, 4], seed=9)
    with pytest.raises(ValueError, match="'doc1' \\(length 3\\) does not match test instance 'doc1' \\(length 4\\)"):
        ff.rankings_of([record(examples[0]), {**record(examples[0]), "id": "doc1"}], examples)
    with pytest.raises(ValueError, match="1 explanation records for 2 test instances"):
        ff.rankings_of([record(examples[0])], examples)
    with pytest.raises(ValueError, match="unknown rankings \\['flow'\\]"):
        ff.rankings_of([record(e) for e in examples], examples, ("attention", "flow"))


# --- the summary table and its claims ---


def write_eraser(root, dataset, model, rows, unit="tokens") -> Path:
    path = root / dataset / model / "seed1" / "eraser.csv"
    path.parent.mkdir(parents=True)
    pd.DataFrame(rows, columns=["ranking", "id", "bin", "k", "n", "comprehensiveness", "sufficiency"]).assign(
        unit=unit
    ).to_csv(path, index=False)
    io.write_seal(path)
    return path


LIU = Path(__file__).resolve().parents[2] / "references" / "liu_2022_violation.csv"


def write_violation(root, rows) -> Path:
    path = root / "sst" / "lstm-tanh" / "seed1" / "violation.csv"
    path.parent.mkdir(parents=True)
    columns = ["explainer", "id", "n", "violations", "claimed", "violation_ratio"]
    pd.DataFrame(rows, columns=columns).assign(unit="tokens").to_csv(path, index=False)
    io.write_seal(path)
    return path


def test_tables_and_claims(tmp_path):
    rows = [
        # loo beats random on both metrics; attention loses on comprehensiveness, wins on sufficiency
        *[("loo", i, b, 1, 9, 0.5, 0.1) for i in ("a", "b") for b in (0.1, 0.5)],
        *[("attention", i, b, 1, 9, 0.0, 0.2) for i in ("a", "b") for b in (0.1, 0.5)],
        *[("random", i, b, 1, 9, c, 0.3) for i, c in (("a", 0.1), ("b", 0.3)) for b in (0.1, 0.5)],
    ]
    out = {
        f"{name}_{ext}": tmp_path / f"{name}.{ext}"
        for name in ("aopc", "envelopes", "violation")
        for ext in ("csv", "md")
    }
    out["claims"] = tmp_path / "claims.csv"
    violation = write_violation(
        tmp_path / "v",
        [
            # attention violates on half its units, IG on none; Random on 0.6 and 0.4
            ("attention", "a", 4, 2.0, 4.0, 0.5),
            ("attention", "b", 4, 2.0, 4.0, 0.5),
            ("ig", "a", 4, 0.0, 4.0, 0.0),
            ("ig", "b", 4, 0.0, 3.0, 0.0),
            ("random", "a", 4, 2.4, 4.0, 0.6),
            ("random", "b", 4, 1.6, 4.0, 0.4),
        ],
    )
    fft.write_tables([write_eraser(tmp_path, "sst", "lstm-tanh", rows)], [], out, [violation], LIU)
    table = pd.read_csv(out["aopc_csv"]).set_index("ranking")
    assert table.loc["random", "aopc_comprehensiveness"] == pytest.approx(0.2)
    assert table.loc["random", "aopc_comprehensiveness_sd"] == pytest.approx(
        np.std([0.1, 0.3], ddof=1), abs=1e-6
    )  # csv keeps 6 significant digits
    assert table.loc["loo", "dataset"] == "sst" and table.loc["loo", "seed"] == 1 and table.loc["loo", "instances"] == 2
    assert set(table["unit"]) == {"tokens"}
    assert "0.200 ± 0.141" in out["aopc_md"].read_text()
    claims = read_claims(out["claims"]).set_index("quantity")["verdict"]
    assert claims["AOPC-comprehensiveness(loo) - AOPC-comprehensiveness(random); holds above 0"] == "holds"
    assert claims["AOPC-sufficiency(loo) - AOPC-sufficiency(random); holds below 0"] == "holds"
    assert (
        claims["AOPC-comprehensiveness(attention) - AOPC-comprehensiveness(random); holds above 0"] == "does not hold"
    )
    assert claims["AOPC-sufficiency(attention) - AOPC-sufficiency(random); holds below 0"] == "holds"
    assert claims["violation ratio(attention) - violation ratio(ig); holds above 0"] == "holds"
    assert claims["violation ratio(random) - the largest other explainer's; holds above 0"] == "does not hold"
    assert len(claims) == 6  # random is the reference, not a claim of its own
    violations = pd.read_csv(out["violation_csv"]).set_index("explainer")
    assert violations.loc["attention", "violation_ratio"] == pytest.approx(0.5)
    assert violations.loc["random", "violation_ratio"] == pytest.approx(0.5) and violations.loc["ig", "instances"] == 2
    text = out["violation_md"].read_text()
    assert "attention 0.263" in text and "0.500 ± 0.000" in text
    assert pd.read_csv(out["envelopes_csv"]).empty  # no W&P seed models in this run


def test_envelope_table_one_row_per_run_and_measure(tmp_path):
    path = tmp_path / "sst" / "lstm-tanh" / "seed10" / "seed_envelope.csv"
    path.parent.mkdir(parents=True)
    pd.DataFrame(
        {
            "id": ["a", "b", "a", "b"],
            "measure": ["loo", "loo", "ig", "ig"],
            "seed_median_tau": [0.5, 0.7, 0.2, float("nan")],
            "attention_tau": [0.1, 0.9, 0.0, 0.3],
        }
    ).to_csv(path, index=False)
    io.write_seal(path)
    table = fft.envelope_table([path]).set_index("measure")
    assert table.loc["loo", "dataset"] == "sst" and table.loc["loo", "seed"] == 10
    assert table.loc["loo", "seed_median_tau"] == pytest.approx(0.6)
    assert table.loc["loo", "share_attention_below_envelope"] == pytest.approx(0.5)
    assert table.loc["ig", "instances"] == 1 and table.loc["ig", "undefined"] == 1


# --- the perturbation-curve figure ---


def test_perturbation_curves_one_column_per_model_one_line_per_ranking(bow):
    model, weights = bow
    examples = random_examples([8, 15, 22], seed=10)
    frame = ff.eraser(
        model, examples, {"loo": [weights[e.tokens] for e in examples]}, random=ff.random_rankings([8, 15, 22], seed=1)
    )
    fig = ffp.perturbation_curves({"bow": frame, "empty": frame.iloc[:0]}, "toy")
    axes = np.array(fig.axes).reshape(2, 2)
    assert [ax.get_title() for ax in axes[0]] == ["bow", "empty"]
    assert [line.get_label() for line in axes[0, 0].get_lines() if not line.get_label().startswith("_")] == [
        "Random",
        "Leave-one-out",
    ]
    assert axes[1, 0].get_lines()[1].get_ydata() == pytest.approx(
        frame[frame.ranking == "loo"].groupby("bin")["sufficiency"].mean().to_numpy()
    )
    assert "no data" in [text.get_text() for text in axes[0, 1].texts]
    plt.close(fig)


# --- the rule's entry point: a trained HAN, ranked over its sentences, on a budget of instances ---


def test_evenly_spaced_follows_the_test_file_and_keeps_its_ends():
    assert (
        list(ff.evenly_spaced(10, None))
        == list(range(10))
        == list(ff.evenly_spaced(10, 10))
        == list(ff.evenly_spaced(10, 50))
    )
    assert list(ff.evenly_spaced(10, 4)) == [0, 3, 6, 9]
    assert list(ff.evenly_spaced(7532, 2000)[[0, -1]]) == [0, 7531] and len(ff.evenly_spaced(7532, 2000)) == 2000


def test_write_faithfulness_ranks_a_han_over_its_sentences(tmp_path):
    from tiny_tasks import load_config, run_fit, write_dataset

    data = write_dataset(tmp_path / "data")
    config = load_config()
    _, checkpoint = run_fit(
        config, data, tmp_path / "models" / "synthetic" / "han-rnn" / "seed10", model="han-rnn", epochs=1
    )
    bounds = {"exact_max_units": 10, "beam_width": 2, "beam_max_units": None, "max_instances": None}
    settings = config["faithfulness"] | {"random_rankings": 2, "max_instances": 10, "bounds": bounds}
    out = tmp_path / "eraser.csv"
    ff.write_faithfulness(checkpoint, data, None, out, settings=settings, seed=10, threads=1)
    frame = pd.read_csv(out, dtype={"id": str})
    assert list(frame.columns) == [
        "ranking",
        "id",
        "bin",
        "k",
        "n",
        "comprehensiveness",
        "sufficiency",
        "unit",
        "comprehensiveness_min",
        "comprehensiveness_max",
        "sufficiency_min",
        "sufficiency_max",
        "bounds",
        "operator",
    ]
    assert set(frame["operator"]) == {"delete"}
    assert set(frame.loc[frame["unit"] == "sentences", "bounds"]) == {"exact"}  # two sentences each
    sentences, tokens = frame[frame["unit"] == "sentences"], frame[frame["unit"] == "tokens"]
    assert len(sentences) and len(tokens) and set(frame["unit"]) == {"sentences", "tokens"}  # han_units
    assert set(sentences["n"]) == {2}  # every tiny document has two sentences
    assert (tokens["n"] > 2).all()
    only = ff.write_faithfulness(
        checkpoint, data, None, tmp_path / "s.csv", settings=settings | {"han_units": ["sentences"]}, seed=10, threads=1
    )
    assert only is None and pd.read_csv(tmp_path / "s.csv", dtype={"id": str}).equals(sentences.reset_index(drop=True))
    assert set(frame["ranking"]) == {"attention", "loo", "random"}
    assert sorted(set(frame["id"]), key=lambda i: int(i.split("-")[1])) == [
        f"test-{i}" for i in ff.evenly_spaced(24, 10)
    ]
    with pytest.raises(ValueError, match="'han-rnn': explanations are the rankings of models with attributable input"):
        ff.write_faithfulness(
            checkpoint, data, tmp_path / "explanations.jsonl", out, settings=settings, seed=10, threads=1
        )
    off = tmp_path / "off.csv"  # normalised AOPC off: the raw battery alone
    ff.write_faithfulness(checkpoint, data, None, off, settings=settings | {"bounds": None}, seed=10, threads=1)
    raw = pd.read_csv(off, dtype={"id": str})
    assert "bounds" not in raw and raw.equals(frame[raw.columns])
    # every removal operator a battery of its own; a HAN's sentences cannot be masked out of its attention
    several = settings | {"ops": ["delete", "zero", "attention_mask"], "han_units": ["sentences"]}
    ff.write_faithfulness(
        checkpoint,
        data,
        None,
        tmp_path / "ops.csv",
        settings=several,
        seed=10,
        threads=1,
        violation_out=tmp_path / "v.csv",
    )
    by_op = pd.read_csv(tmp_path / "ops.csv", dtype={"id": str})
    assert list(dict.fromkeys(by_op["operator"])) == ["delete", "zero"]
    first = by_op[by_op["operator"] == "delete"].drop(columns="operator").reset_index(drop=True)
    pd.testing.assert_frame_equal(first, sentences.drop(columns="operator").reset_index(drop=True))  # as alone
    zero = by_op[by_op["operator"] == "zero"]
    assert not np.allclose(zero["comprehensiveness"], first["comprehensiveness"])
    summary = fs.aopc(by_op)
    assert list(summary.columns[:3]) == ["operator", "unit", "ranking"]
    assert set(summary["operator"]) == {"delete", "zero"}
    assert fs.primary_operator(by_op).equals(by_op[by_op["operator"] == "delete"])
    assert set(pd.read_csv(tmp_path / "v.csv")["operator"]) == {"delete", "zero"}
    with pytest.raises(ValueError, match="none of the removal operators \\['attention_mask'\\]"):
        ff.write_faithfulness(
            checkpoint, data, None, out, settings=several | {"ops": ["attention_mask"]}, seed=10, threads=1
        )


def test_ranking_names_have_one_home():
    """The rankings' names, labels and explanation methods live in the study's record; the scores,
    the schema's choices and the run plan follow it."""
    import yaml

    from attnexp.papers.faithfulness import RANKINGS
    from attnexp.plan import RANKING_METHODS

    schema = yaml.safe_load((Path(__file__).resolve().parents[2] / "schemas" / "config.schema.yaml").read_text())
    choices = schema["properties"]["faithfulness"]["properties"]["rankings"]["items"]["enum"]
    drawn = [name for name, (_, methods) in RANKINGS.items() if not methods]
    assert drawn == [ff.RANDOM]
    assert list(ff.SCORES) == choices == list(RANKING_METHODS) == [name for name in RANKINGS if name not in drawn]


def test_integrated_gradients_rows_carry_their_convergence_and_the_tables_its_share():
    frame = pd.DataFrame(
        {
            "ranking": ["ig", "ig", "ig", "attention", "ig", "ig"],
            "id": ["a", "b", "c", "a", "a", "b"],
            "bin": [0.1, 0.1, 0.1, 0.1, 0.5, 0.5],
            "k": 1,
            "n": 4,
            "comprehensiveness": 0.1,
            "sufficiency": 0.2,
        }
    )
    records = [{"id": "a", "ig_converged": True}, {"id": "b", "ig_converged": False}, {"id": "c", "ig_converged": True}]
    flagged = ff.with_ig_convergence(frame, records, "ranking")
    assert flagged["ig_converged"].tolist() == [True, False, True, pd.NA, True, False]
    table = fs.aopc(flagged).set_index("ranking")
    assert table.loc["ig", "ig_unconverged"] == pytest.approx(1 / 3) and np.isnan(
        table.loc["attention", "ig_unconverged"]
    )
    assert np.isnan(fs.aopc(frame)["ig_unconverged"]).all()  # a table written before the flags
