"""The replication scorecard (attnexp.scorecard): the tolerance basis and the named cause of each kind
of miss, the per-paper summary, the CSV/Markdown round trip, the README status block, bad input."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from attnexp import io
from attnexp.claims import CLAIM_COLUMNS, Setting, claim, claims_frame, write_claims
from attnexp.scorecard import (
    END,
    SCORECARD_COLUMNS,
    START,
    breakdown,
    cause,
    main,
    read_scorecard,
    readme_status,
    scorecard,
    summary,
    tolerance_basis,
    update_readme,
    write_scorecard,
)

JW, SS, WP = "Jain & Wallace 2019", "Serrano & Smith 2019", "Wiegreffe & Pinter 2019"
W2V = Setting("test", "word2vec_local", "none")
PRETRAINED = Setting("test", "fasttext_simple", "none")
NOTE = "loo_op=delete; scipy 1.17.1"


def table2(
    ours=0.45,
    quantity="mean tau(attention, gradient), class 0",
    setting=PRETRAINED,
    model="lstm-tanh",
    dataset="sst",
    **kw,
):
    tolerance = 0.07 if quantity.startswith("mean") else 0.12
    return claim(
        JW,
        "Table 2",
        dataset,
        model,
        10,
        quantity,
        ours=ours,
        published=0.40,
        tolerance=tolerance,
        source="J&W Table 2",
        condition=NOTE,
        setting=setting,
        **kw,
    )


def qualitative(paper=WP, verdict="does not hold", setting=PRETRAINED, model="lstm-tanh", dataset="sst"):
    return claim(
        paper,
        "Table 3",
        dataset,
        model,
        10,
        "F1(Base model guide) - F1(Uniform guide); holds above 0",
        ours=-0.01,
        verdict=verdict,
        condition="epochs=8",
        setting=setting,
    )


# --------------------------------------------------------------------------------------------------
# causes


def test_a_match_or_a_claim_that_holds_has_no_cause():
    assert cause(table2(ours=0.42, setting=W2V)) == ""  # a match, even with word2vec embeddings
    assert cause(qualitative(verdict="holds", setting=Setting("dev", "random"))) == ""


def test_word2vec_instead_of_pretrained_embeddings_is_named_D_EMB():
    assert cause(table2(ours=0.60, setting=W2V)) == "embeddings (D-EMB)"


def test_the_cause_is_read_from_the_setting_not_the_conditions_words():
    # the words may say anything: only the setting's fields count
    row = claim(
        JW,
        "Table 2",
        "sst",
        "lstm-tanh",
        10,
        "mean tau(attention, gradient), class 0",
        ours=0.6,
        published=0.4,
        tolerance=0.07,
        condition="embeddings=word2vec_local; stand-ins=x.csv; our sst stands for S&S's yahoo (D-DATA)",
        setting=PRETRAINED,
    )
    assert cause(row) == "unexplained"


def test_stand_in_pretrained_vectors_are_named_with_what_they_stand_in_for():
    glove = table2(ours=0.60, setting=Setting("test", "glove6b50", "none"))
    assert cause(glove) == "embeddings (GloVe 6B 50-d for the paper's 300-d pretrained vectors, D-EMB)"


def test_the_committed_mean_tau_rows_have_a_registered_tolerance_basis():
    row = claim(
        JW,
        "mean tau, all test instances",
        "sst",
        "lstm-tanh",
        10,
        "mean tau(gradient, loo), all classes",
        ours=0.55,
        published=0.66,
        tolerance=0.07,
        setting=W2V,
    )
    assert tolerance_basis(row).startswith(
        "jain_wallace.table2_tolerance.lstm.mean"
    ) and "either selection" in tolerance_basis(row)
    assert cause(row) == "embeddings (D-EMB)"


def test_the_papers_own_random_embeddings_are_no_cause():
    # J&W's bAbI models start from random embeddings: ours are theirs there, and the miss stays unexplained
    babi = table2(ours=0.60, dataset="babi2", setting=Setting("test", "random", "none"))
    assert cause(babi) == "unexplained"
    assert (
        cause(table2(ours=0.60, setting=Setting("test", "random", "none")))
        == "embeddings (random; the paper: pretrained)"
    )


def test_random_embeddings_are_named_with_what_the_paper_used():
    assert cause(qualitative(setting=Setting("test", "random", "none"))) == "embeddings (random; the paper: pretrained)"
    # S&S trained word2vec on the dataset: our word2vec is their kind
    ss = qualitative(paper=SS, model="han-rnn", setting=Setting("dev", "word2vec_local", "none"))
    assert cause(ss) == "unexplained"


def test_stand_in_files_and_stand_in_datasets_are_named():
    row = table2(ours=0.60, setting=Setting("test", "fasttext_simple", "train.first581rows.csv"), dataset="agnews")
    assert cause(row) == "data stand-in (agnews: train.first581rows.csv)"
    ss = qualitative(
        paper=SS, model="flan-rnn", dataset="20news20", setting=Setting("dev", "word2vec", "none", stands_for="yahoo")
    )
    assert cause(ss) == "data stand-in (our 20news20 for the paper's yahoo)"


def test_a_stand_in_that_repackages_the_same_data_is_no_cause():
    from attnexp.scorecard import same_data_stand_ins

    config = {
        "datasets": {
            "imdb": {
                "sources": [
                    {"file": "a.tar.gz", "substitute": {"splits_affected": [], "files": [{"file": "a.repack.tar.gz"}]}}
                ]
            },
            "babi3": {
                "sources": [
                    {
                        "file": "b.tar.gz",
                        "substitute": {"splits_affected": ["train", "dev"], "files": [{"file": "b.first1k.txt"}]},
                    }
                ]
            },
            "sst": {"sources": [{"file": "c.zip"}]},
        }
    }
    same = same_data_stand_ins(config)
    assert same == {"a.repack.tar.gz"}
    repack = table2(ours=0.60, dataset="imdb", setting=Setting("test", "fasttext_simple", "a.repack.tar.gz"))
    assert cause(repack, same) == "unexplained" and cause(repack) == "data stand-in (imdb: a.repack.tar.gz)"
    subset = table2(
        ours=0.60, dataset="babi3", setting=Setting("test", "fasttext_simple", "b.first1k.txt, a.repack.tar.gz")
    )
    assert cause(subset, same) == "data stand-in (babi3: b.first1k.txt)"


def test_a_named_deviation_is_a_protocol_deviation():
    row = table2(ours=0.60, quantity="mean tau(attention, loo), class 0", setting=PRETRAINED.deviating("D-LOO-OP"))
    assert cause(row) == "protocol deviation (D-LOO-OP)"
    data = table2(ours=0.60, setting=PRETRAINED.deviating("D-DATA"))
    assert cause(data) == "data stand-in (D-DATA)"  # a data deviation is named as a stand-in
    budget = claim(
        SS,
        "§6",
        "imdb_ratings",
        "han-rnn",
        10,
        "q",
        ours=None,
        verdict="not comparable: not trained",
        setting=Setting(deviations=("D-SS-BUDGET",)),
    )
    assert cause(budget) == "budget cut (D-SS-BUDGET)" and budget["deviations"] == "D-SS-BUDGET"


def test_checkpoint_selection_explains_a_qualitative_miss_only():
    assert cause(qualitative(setting=Setting("dev", "fasttext_simple", "none"))) == "checkpoint selection (D-SEL)"
    # numeric comparisons compare like with like: a dev-selected Table 2 cell is `not comparable`, never a miss
    dev = table2(
        ours=0.60,
        setting=Setting("dev", "fasttext_simple", "none").deviating("D-SEL"),
        verdict="not comparable: our checkpoint was selected on dev, J&W's on test (D-SEL)",
    )
    assert cause(dev) == "checkpoint selection (D-SEL)"
    same_selection = claim(
        JW,
        "test performance",
        "sst",
        "lstm-tanh",
        10,
        "accuracy",
        ours=0.70,
        published=0.808,
        tolerance=0.03,
        setting=Setting("dev", "fasttext_simple", "none"),
    )
    assert same_selection["verdict"] == "differs" and cause(same_selection) == "unexplained"


def test_a_model_outside_the_paper_is_named_before_the_other_causes():
    row = qualitative(model="transformer-cls", setting=Setting("dev", "random", "none"))
    assert (
        cause(row)
        == "model outside the paper (transformer-cls); embeddings (random; the paper: pretrained); checkpoint selection (D-SEL)"
    )
    ordering = claim(
        SS,
        "prob_predictor.py shares (ordering)",
        "20news20",
        "flan-rnn vs han-rnn",
        10,
        "FLAN minus HAN",
        ours=-0.1,
        published=0.5,
        tolerance=None,
        verdict="does not hold",
        condition="our 20news20 stands for S&S's yahoo",
        setting=Setting(stands_for="yahoo"),
    )
    assert cause(ordering) == "data stand-in (our 20news20 for the paper's yahoo)"  # both models are S&S's


def test_a_miss_without_a_known_difference_is_unexplained():
    assert cause(table2(ours=0.60)) == "unexplained"
    assert (
        cause(
            claim(
                "DeYoung et al. 2020",
                "AOPC",
                "sst",
                "transformer-cls",
                10,
                "AOPC gap",
                ours=-0.01,
                verdict="does not hold",
                condition="1725 test instances, ranked tokens",
            )
        )
        == "unexplained"
    )
    assert (
        cause(claim("A new paper", "Table 9", "sst", "lstm-tanh", 10, "q", ours=0.1, verdict="does not hold"))
        == "unexplained"
    )


def test_not_compared_rows_other_than_not_comparable_have_no_cause():
    assert (
        cause(
            claim(
                SS,
                "prob_predictor.py shares",
                "sst",
                "han-rnn",
                10,
                "share",
                ours=0.3,
                published=0.6,
                tolerance=None,
                verdict="reference only",
            )
        )
        == ""
    )
    assert cause(claim(WP, "Table 4", "sst", "lstm-tanh", 10, "F1", ours=0.8, verdict="not public: no value")) == ""
    assert (
        cause(
            claim(
                SS,
                "x",
                "sst",
                "han-rnn",
                10,
                "q",
                ours=0.3,
                published=0.6,
                tolerance=None,
                verdict="not comparable: other data",
            )
        )
        == "other data"
    )


# --------------------------------------------------------------------------------------------------
# tolerance basis


def test_tolerance_basis_from_the_registry_or_qualitative():
    assert tolerance_basis(table2()).startswith("jain_wallace.table2_tolerance.<encoder>.mean (D-TARGETS)")
    assert "0.015 BiLSTM" in tolerance_basis(table2(quantity="sig_frac tau(attention, gradient), class 0"))
    perf = claim(
        WP, "test performance", "sst", "lstm-uniform", 10, "f1_class1", ours=0.8, published=0.79, tolerance=0.03
    )
    assert tolerance_basis(perf).startswith("claims.performance_tolerance")
    assert tolerance_basis(qualitative()) == "qualitative"
    assert (
        tolerance_basis(
            claim(
                SS,
                "shares",
                "sst",
                "han-rnn",
                10,
                "share",
                ours=0.3,
                published=0.6,
                tolerance=None,
                verdict="reference only",
            )
        )
        == "none: reference only"
    )
    assert (
        tolerance_basis(claim(WP, "Table 4", "sst", "lstm-tanh", 10, "F1", ours=0.8, verdict="not public: no value"))
        == "none: no published value"
    )
    assert tolerance_basis(
        claim("A new paper", "Table 9", "sst", "m", 1, "q", ours=0.1, published=0.2, tolerance=0.05)
    ).startswith("unregistered: no entry for ('A new paper', 'Table 9')")


# --------------------------------------------------------------------------------------------------
# the table, the summary, the files


def example_claims() -> pd.DataFrame:
    return claims_frame(
        [
            table2(ours=0.42),  # match
            table2(ours=0.60, setting=W2V),  # differs: embeddings
            table2(ours=0.60),  # differs: unexplained
            table2(
                ours=0.60,
                setting=Setting("dev", "word2vec_local", "none").deviating("D-SEL"),
                verdict="not comparable: our checkpoint was selected on dev, J&W's on test (D-SEL)",
            ),
            qualitative(verdict="holds"),
            qualitative(model="transformer-cls", setting=Setting("dev", "random", "none")),
            claim(WP, "Table 4", "sst", "lstm-tanh", 10, "F1", ours=0.8, verdict="not public: no value"),
        ]
    )


def test_scorecard_keeps_the_claims_order_and_adds_six_columns():
    claims = example_claims()
    card = scorecard(claims)
    assert (
        tuple(card.columns)
        == SCORECARD_COLUMNS
        == CLAIM_COLUMNS + ("location", "statement", "tolerance_basis", "cause", "cause_status", "setting")
    )
    pd.testing.assert_frame_equal(card[list(CLAIM_COLUMNS)], claims)
    assert list(card["cause"]) == [
        "",
        "embeddings (D-EMB)",
        "unexplained",
        "checkpoint selection (D-SEL)",
        "",
        "model outside the paper (transformer-cls); embeddings (random; the paper: pretrained); checkpoint selection (D-SEL)",
        "",
    ]
    # a named cause of a miss is suspected until a run without it establishes it (publish's companion run)
    assert list(card["cause_status"]) == ["", "suspected", "", "", "", "suspected", ""]
    # how each row's setting differs from the paper's, matched or not
    assert list(card["setting"]) == [
        "paper's",
        "embeddings (D-EMB)",
        "paper's",
        "embeddings (D-EMB); checkpoint selection (D-SEL)",
        "paper's",
        "model outside the paper (transformer-cls); embeddings (random; the paper: pretrained); checkpoint selection (D-SEL)",
        "paper's",
    ]


def test_summary_counts_per_paper_in_the_claims_order():
    card = scorecard(example_claims())
    rows = summary(card).set_index("paper")
    assert list(rows.index) == [JW, WP]
    assert rows.loc[JW, ["claims", "matched", "missed", "unexplained", "not_compared"]].tolist() == [4, 1, 2, 1, 1]
    assert rows.loc[WP, ["claims", "matched", "missed", "unexplained", "not_compared"]].tolist() == [3, 1, 1, 0, 1]
    assert rows.loc[JW, "role"] == "replicated"
    assert rows.loc[JW, ["at the paper's setting", "under a stand-in"]].tolist() == [1, 0]
    detail = breakdown(card)
    assert detail.values.tolist() == [
        [JW, "missed", "embeddings (D-EMB)", 1],
        [JW, "missed", "unexplained", 1],
        [JW, "not compared", "checkpoint selection (D-SEL)", 1],
        [
            WP,
            "missed",
            "model outside the paper (transformer-cls); embeddings (random; the paper: pretrained); checkpoint selection (D-SEL)",
            1,
        ],
        [WP, "not compared", "not public: no value", 1],
    ]


def test_files_round_trip_and_are_deterministic(tmp_path):
    claims = tmp_path / "claims.csv"
    write_claims(claims, example_claims().to_dict("records"))
    card = write_scorecard(claims, tmp_path / "a.csv", tmp_path / "a.md")
    write_scorecard(claims, tmp_path / "b.csv", tmp_path / "b.md")
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    assert (tmp_path / "a.md").read_bytes() == (tmp_path / "b.md").read_bytes()
    back = read_scorecard(tmp_path / "a.csv")
    assert list(back["cause"]) == list(card["cause"]) and list(back["tolerance_basis"]) == list(card["tolerance_basis"])
    assert summary(back).equals(summary(card))
    md = (tmp_path / "a.md").read_text()
    assert md.startswith("# Replication scorecard") and md.index("## Per paper") < md.index("## Every claim")
    assert (
        "| Jain & Wallace 2019 | replicated | 4 | 1 | 1 | 0 | 2 | 1 | 0 | 1 |" in md
        and "| 0.600 | – | 0.400 | 0.070 | differs |" in md
    )


def test_bad_input_names_the_file(tmp_path):
    bad = tmp_path / "claims.csv"
    pd.DataFrame({"paper": [JW], "ours": [0.4]}).to_csv(bad, index=False)
    with pytest.raises(ValueError, match=f"{bad}: expected the claim columns"):
        write_scorecard(bad, tmp_path / "s.csv", tmp_path / "s.md")
    with pytest.raises(ValueError, match=f"{bad}: expected the scorecard columns"):
        read_scorecard(bad)
    assert main([str(bad), "--csv", str(tmp_path / "s.csv"), "--md", str(tmp_path / "s.md")]) == 1
    assert not (tmp_path / "s.csv").exists()


# --------------------------------------------------------------------------------------------------
# the README block


README = "# Project\n\nIntro.\n\n## Replication status\n\nHand-written text.\n\n{START}\nstale: 99 claims matched\n{END}\n\n## Next section\n"


def test_readme_block_is_replaced_and_regeneration_is_idempotent(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(README.format(START=START, END=END))
    card = scorecard(example_claims())
    assert update_readme(readme, card, "`results/tables/scorecard.csv`") is True
    text = readme.read_text()
    assert "stale" not in text and "99 claims" not in text
    assert text.startswith("# Project\n\nIntro.\n\n## Replication status\n\nHand-written text.\n\n" + START + "\n")
    assert text.endswith(END + "\n\n## Next section\n")
    block = text.split(START)[1].split(END)[0]
    assert block == "\n" + readme_status(card, "`results/tables/scorecard.csv`")
    assert "| Jain & Wallace 2019 | replicated | 4 | 1 | 1 | 0 | 2 | 1 | 0 | 1 |" in block
    assert f"- {JW}: 1 × embeddings (D-EMB)" in block and f"- {WP}: 1 × not public: no value" in block
    assert update_readme(readme, card, "`results/tables/scorecard.csv`") is False  # idempotent
    assert readme.read_text() == text


def test_readme_cli_from_a_scorecard_file(tmp_path, capsys):
    claims = tmp_path / "claims.csv"
    write_claims(claims, example_claims().to_dict("records"))
    assert main([str(claims), "--csv", str(tmp_path / "scorecard.csv"), "--md", str(tmp_path / "scorecard.md")]) == 0
    readme = tmp_path / "README.md"
    readme.write_text(README.format(START=START, END=END))
    assert main(["--readme", str(readme), str(tmp_path / "scorecard.csv"), "--source", "run X"]) == 0
    assert main(["--readme", str(readme), str(tmp_path / "scorecard.csv"), "--source", "run X"]) == 0
    assert capsys.readouterr().out.splitlines()[-2:] == [f"{readme}: updated", f"{readme}: already up to date"]
    assert "Generated from run X by" in readme.read_text()


def test_readme_without_markers_is_an_error_naming_the_file(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# Project\n")
    with pytest.raises(ValueError, match=f"{readme}: expected one {START} line followed by one {END} line"):
        update_readme(readme, scorecard(example_claims()), "x")
    readme.write_text(f"{END}\n{START}\n")
    with pytest.raises(ValueError, match="expected one"):
        update_readme(readme, scorecard(example_claims()), "x")


# --------------------------------------------------------------------------------------------------
# the papers' condition strings carry what the rules read


def test_jain_wallace_conditions_name_stand_ins_and_a_non_jw_loo_operation():
    from attnexp.papers.jain_wallace.tables import table2_claims

    cells = pd.DataFrame(
        [
            {
                "dataset": "agnews",
                "label": "0",
                "column": column,
                "model": model,
                "seed": 10,
                "select_on": "test",
                "embeddings": "word2vec_local",
                "stand_ins": "train.first581rows.csv",
                "loo_op": "unk",
                "scipy": "1.17",
                "mean": 0.9,
                "sig_frac": 1.0,
                "published_mean": 0.42,
                "published_sig_frac": 0.93,
                "source": "J&W Table 2",
            }
            for column, model in (("gradient_lstm", "lstm-tanh"), ("loo_lstm", "lstm-tanh"))
        ]
    )
    card = scorecard(
        claims_frame(
            table2_claims(
                cells, {"lstm": {"mean": 0.07, "sig_frac": 0.12}, "average": {"mean": 0.07, "sig_frac": 0.12}}
            )
        )
    )
    causes = dict(zip(card["quantity"], card["cause"]))
    assert (
        causes["mean tau(attention, gradient), class 0"]
        == "data stand-in (agnews: train.first581rows.csv); embeddings (D-EMB)"
    )
    assert (
        causes["mean tau(attention, loo), class 0"]
        == "data stand-in (agnews: train.first581rows.csv); embeddings (D-EMB); protocol deviation (D-LOO-OP)"
    )


def test_serrano_smith_conditions_name_the_dataset_ours_stands_for(tmp_path):
    import json

    from attnexp.papers.serrano_smith import tables as sst
    from attnexp.spec import parse_model_name

    def write_run(name, gradient_ks, attention_ks, seed):
        run = tmp_path / name / str(seed)
        run.mkdir(parents=True)
        rows = [
            {
                "id": f"d{i}",
                "n": 4,
                "predicted": 0,
                "ranking": ranking,
                "permutation": 0,
                "flipped": k is not None,
                "removed": k,
                "fraction": None if k is None else k / 4,
                "removed_mass": None if k is None else 0.5,
            }
            for ranking, ks in (("gradient", gradient_ks), ("attention", attention_ks))
            for i, k in enumerate(ks)
        ]
        pd.DataFrame(rows).to_csv(run / "removal.csv", index=False)
        pd.DataFrame(
            [
                {
                    "id": "d0",
                    "n": 4,
                    "predicted": 0,
                    "top_by": "attention",
                    "delta_attention": 0.3,
                    "delta_js": 0.05,
                    "flip_top": True,
                    "flip_random": False,
                }
            ]
        ).to_csv(run / "single_erasure.csv", index=False)
        (run / "metrics.json").write_text(
            json.dumps(
                {
                    "model": name,
                    "seed": seed,
                    "spec": parse_model_name(name, "multiclass").record(),
                    "select_on": "dev",
                    "test": {"accuracy": 0.6},
                    "provenance": {"dataset": "20news20", "embeddings": "word2vec", "substitutes": "none"},
                }
            )
        )
        for written in ("single_erasure.csv", "removal.csv", "metrics.json"):
            io.write_seal(run / written)
        return run / "single_erasure.csv", run / "removal.csv", run / "metrics.json"

    runs = [
        run
        for seed in (10, 11, 12)
        for run in (
            write_run("han-rnn", [2, 3, None, 3], [2, 2, 1, 3], seed),
            write_run("flan-rnn", [1, 1, 2, None], [3, 3, 4, None], seed),
        )
    ]
    out = {f"{n}_{e}": tmp_path / f"{n}.{e}" for n in ("erasure", "removal", "flip_sooner") for e in ("csv", "md")} | {
        "claims": tmp_path / "claims.csv"
    }
    sst.write_tables(
        *zip(*runs),
        Path(__file__).resolve().parents[1] / "references" / "serrano_smith_flip_sooner.csv",
        reference_datasets={"20news20": "yahoo"},
        out=out,
    )
    card = scorecard(pd.read_csv(out["claims"]))
    missed = card[card["verdict"] == "does not hold"]
    assert len(missed) and set(missed["cause"]) == {"data stand-in (our 20news20 for the paper's yahoo)"}


def permutation_finding() -> dict:
    """J&W's §4.2 finding on sst lstm-tanh over three seeds that show it."""
    from attnexp.claims import finding

    return finding(
        "Jain & Wallace 2019",
        "§4.2, attention permutation (Figure 4)",
        "sst",
        "lstm-tanh",
        "share of test instances whose median output change under permutation is at most 0.05",
        {10: 0.8, 11: 0.7, 12: 0.9},
        threshold=0.5,
        side="above",
        rule="rule",
        source="J&W",
    )


def test_the_findings_tally_counts_finding_claims_not_numbers_pooled_over_seeds():
    from attnexp.claims import over_seeds, with_q_values
    from attnexp.scorecard import findings_tally, is_finding

    jw = "Jain & Wallace 2019"
    rows = [
        permutation_finding(),
        *(
            table2(ours=0.40 + seed / 1000) | {"seed": seed} for seed in (10, 11, 12)
        ),  # one Table 2 number on three seeds: pooled, no seed
    ]
    card = scorecard(with_q_values(over_seeds(claims_frame(rows))))
    assert card["seed"].isna().tolist() == [True, True]
    assert is_finding(card).tolist() == [True, False]
    # (paper, hold, do not hold, inconclusive, decided at a 5 % false discovery rate, not compared)
    assert findings_tally(card) == [(jw, 1, 0, 0, 1, 0)]


def test_a_model_that_does_not_learn_its_task_is_not_compared():
    """A model whose test performance is below 0.8 of the paper's: its other rows are not comparable,
    its performance row stays as it is (the evidence)."""
    from attnexp.claims import claim

    jw = "Jain & Wallace 2019"
    rows = [
        claim(jw, "test performance", "snli", "lstm-tanh", 10, "accuracy", ours=0.59, published=0.784, tolerance=0.03),
        claim(
            jw,
            "Table 2",
            "snli",
            "lstm-tanh",
            10,
            "mean tau(attention, gradient), class 0",
            ours=0.30,
            published=0.31,
            tolerance=0.04,
        ),
        claim(jw, "test performance", "sst", "lstm-tanh", 10, "f1_class1", ours=0.78, published=0.81, tolerance=0.03),
        claim(
            jw,
            "Table 2",
            "sst",
            "lstm-tanh",
            10,
            "mean tau(attention, gradient), class 0",
            ours=0.30,
            published=0.31,
            tolerance=0.04,
        ),
    ]
    card = scorecard(claims_frame(rows))
    assert card["verdict"].tolist() == [
        "differs",
        "not comparable: the model does not learn the task (accuracy 0.590, below 0.8 of the paper's 0.784)",
        "match",  # 0.78 is 0.96 of 0.81: it learns the task
        "match",
    ]


def test_every_finding_row_carries_its_paper_location_and_statement():
    """Every registered finding of the three papers names where the paper says it; a claim row gets
    its finding's location and statement, a numeric row its table's location."""
    from attnexp.papers import PAPERS

    for paper in PAPERS.values():
        for found in paper.findings:
            assert found.location.strip() and found.statement.strip(), f"{paper.key}: {found.prefix!r}"
    card = scorecard(claims_frame([permutation_finding(), table2()]))
    assert card.loc[0, "location"] == "§4.2 and Figure 4"
    assert card.loc[0, "statement"].startswith(
        "Randomly permuting the attention weights often changes the output only minimally"
    )
    assert "Diabetes" in card.loc[0, "statement"]  # the exception J&W name
    assert card.loc[1, "location"].startswith("Table 2 (")
