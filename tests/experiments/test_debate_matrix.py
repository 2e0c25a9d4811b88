"""The debate matrix (attnexp.experiments.debate_matrix): each paper's debate cells (its `debate` module)
summarised by hand from its stage's per-run files, runs a stage did not cover left blank, the W&P tables
matched by run, the cells merged in the registry's measure order, and the markdown layout."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from attnexp import io
from attnexp.experiments.debate_matrix import CELL_COLUMNS, debate_matrix, write_debate_cells, write_debate_matrix
from attnexp.papers import DEBATE_MEASURES as MEASURES
from attnexp.papers.faithfulness.debate import debate_cells as faithfulness_cells
from attnexp.papers.jain_wallace.debate import debate_cells as jain_wallace_cells
from attnexp.papers.serrano_smith.debate import debate_cells as serrano_smith_cells
from attnexp.papers.wiegreffe_pinter.debate import debate_cells as wiegreffe_pinter_cells
from attnexp.plan import RunKey


def write(path: Path, rows: list[dict]) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(path, index=False)
    io.write_seal(path)
    return str(path)


def stage_files(root: Path, model: str, stages=("jw", "ss", "ff")) -> dict[str, str]:
    run = f"sst/{model}/seed10"
    files = {}
    if "jw" in stages:
        files["jw_correlations"] = write(
            root / "jain_wallace" / run / "correlations.csv",
            [
                {"id": "a", "pair": "attention~gradient", "tau": 0.5},
                {"id": "b", "pair": "attention~gradient", "tau": 0.1},
                {"id": "c", "pair": "attention~gradient", "tau": None},  # undefined τ: left out of the mean
                {"id": "a", "pair": "attention~loo", "tau": -0.2},
                {"id": "a", "pair": "gradient~loo", "tau": 0.9},
            ],
        )
        files["jw_permutation"] = write(
            root / "jain_wallace" / run / "permutation.csv", [{"median_output_difference": v} for v in (0.1, 0.3, 0.2)]
        )
        files["jw_adversarial"] = write(
            root / "jain_wallace" / run / "adversarial.csv", [{"eps_max_jsd": v} for v in (0.2, 0.4)]
        )
    if "ss" in stages:
        # 4 instances: the top item flips in 2 (one of them with the random item too), the random one in 1 more
        flips = [(True, True), (True, False), (False, True), (False, False)]
        files["ss_erasure"] = write(
            root / "serrano_smith" / run / "single_erasure.csv",
            [
                {"id": str(i), "top_by": by, "flip_top": t, "flip_random": r, "delta_js": 0.1}
                for by in ("attention", "gradient", "attn_x_grad")
                for i, (t, r) in enumerate(flips)
            ],
        )
        removal = []
        for name, fractions in {
            "attention": [0.2, 0.4, None],
            "gradient": [0.1, 0.1, 0.3],
            "random": [0.5, None, None],
        }.items():
            for i, f in enumerate(fractions):
                removal.append(
                    {"id": str(i), "ranking": name, "flipped": f is not None, "fraction": f, "removed_mass": f}
                )
        files["ss_removal"] = write(root / "serrano_smith" / run / "removal.csv", removal)
    if "ff" in stages:
        files["ff_eraser"] = write(
            root / "faithfulness" / run / "eraser.csv",
            [
                {
                    "ranking": r,
                    "id": i,
                    "bin": b,
                    "comprehensiveness": c + (0.1 if b == 0.5 else 0.0),
                    "sufficiency": s,
                    "unit": "tokens",
                }
                for r, c, s in (("attention", 0.2, 0.3), ("loo", 0.4, 0.1), ("random", 0.05, 0.5))
                for i in ("a", "b")
                for b in (0.1, 0.5)
            ],
        )
    return files


def merged(*dicts) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for d in dicts:
        for kind, path in d.items():
            out.setdefault(kind, []).append(path)
    return out


def cells(root: Path, files: dict[str, list[str]], uniform=None, diagnostic=None, adversary=None) -> list[Path]:
    """Each paper's debate cells as its rule writes them (results/debate_cells/<paper>.csv)."""
    per_paper = {
        "jain_wallace": jain_wallace_cells(
            *(files.get(f"jw_{k}", []) for k in ("correlations", "permutation", "adversarial"))
        ),
        "serrano_smith": serrano_smith_cells(files.get("ss_erasure", []), files.get("ss_removal", [])),
        "faithfulness": faithfulness_cells(files.get("ff_eraser", [])),
        "wiegreffe_pinter": wiegreffe_pinter_cells(uniform, diagnostic, adversary),
    }
    paths = []
    for paper, numbers in per_paper.items():
        paths.append(root / "debate_cells" / f"{paper}.csv")
        paths[-1].parent.mkdir(parents=True, exist_ok=True)
        write_debate_cells(paths[-1], numbers)
    return paths


def test_each_stage_is_summarised_as_by_hand(tmp_path):
    matrix = debate_matrix(cells(tmp_path, merged(stage_files(tmp_path, "transformer-cls"))), MEASURES)
    value = matrix.set_index("measure")["value"]
    assert value["jw_tau_gradient"] == pytest.approx(0.3) and value["jw_tau_loo"] == pytest.approx(-0.2)
    assert value["jw_permutation"] == pytest.approx(0.2) and value["jw_adversarial_jsd"] == pytest.approx(0.3)
    assert value["ss_flip_top"] == pytest.approx(50.0) and value["ss_flip_random"] == pytest.approx(50.0)
    assert value["ss_fraction_attention"] == pytest.approx(0.3)  # median over the flipping instances
    assert value["ss_fraction_gradient"] == pytest.approx(0.1) and value["ss_fraction_random"] == pytest.approx(0.5)
    assert value["ss_no_flip_attention"] == pytest.approx(100 / 3)
    assert value["ff_comp_attention"] == pytest.approx(0.25) and value["ff_comp_loo"] == pytest.approx(0.45)
    assert value["ff_comp_random"] == pytest.approx(0.1) and value["ff_suff_attention"] == pytest.approx(0.3)
    assert "ff_suff_loo" not in value and not any(m.startswith("wp_") for m in value.index)  # no W&P tables given
    assert list(matrix["measure"]) == [m for m in MEASURES if m in set(matrix["measure"])]  # MEASURES order
    assert set(matrix[["dataset", "model", "seed"]].itertuples(index=False, name=None)) == {
        ("sst", "transformer-cls", 10)
    }


def test_a_run_with_one_item_per_instance_keeps_the_stages_that_measured_it(tmp_path):
    """One-token texts: S&S and the ERASER battery score no instance (their tables have columns, no
    rows); the run keeps its J&W numbers and gets none of theirs."""
    files = stage_files(tmp_path, "lstm-tanh")
    for kind in ("ss_erasure", "ss_removal", "ff_eraser"):
        columns = list(pd.read_csv(files[kind]).columns)
        io.write_csv(files[kind], pd.DataFrame(columns=columns), seal=True)
    matrix = debate_matrix(cells(tmp_path, merged(files)), MEASURES)
    assert set(matrix["paper"]) == {"Jain & Wallace"} and "jw_tau_gradient" in set(matrix["measure"])


def test_wiegreffe_pinter_rows_are_matched_by_run_and_missing_stages_stay_blank(tmp_path):
    files = merged(stage_files(tmp_path, "transformer-cls"), stage_files(tmp_path, "han-rnn", stages=("ss", "ff")))
    run = {"dataset": "sst", "model": "transformer-cls", "seed": 10}
    other = {"dataset": "sst", "model": "lstm-tanh", "seed": 10}
    uniform = pd.DataFrame([run | {"base_f1": 0.8, "uniform_f1": 0.79}, other | {"base_f1": 0.7, "uniform_f1": 0.6}])
    diagnostic = pd.DataFrame(
        [
            run | {"guide": g, "f1": f}
            for g, f in (("uniform", 0.7), ("trained", 0.75), ("base", 0.72), ("adversary", 0.6))
        ]
    )
    adversary = pd.DataFrame([run | {"jsd": 0.4}])
    matrix = debate_matrix(cells(tmp_path, files, uniform, diagnostic, adversary), MEASURES)
    by_model = {model: part.set_index("measure")["value"] for model, part in matrix.groupby("model")}
    t = by_model["transformer-cls"]
    assert (
        t["wp_f1"],
        t["wp_uniform_f1"],
        t["wp_mlp_guided_f1"],
        t["wp_mlp_uniform_f1"],
        t["wp_mlp_trained_f1"],
        t["wp_adversary_jsd"],
    ) == (0.8, 0.79, 0.72, 0.7, 0.75, 0.4)
    assert not any(
        m.startswith("jw_") or m.startswith("wp_") for m in by_model["han-rnn"].index
    )  # HAN: S&S and the battery only
    assert by_model["lstm-tanh"].index.tolist() == ["wp_f1", "wp_uniform_f1"]  # W&P Table 2 only


def test_markdown_puts_models_side_by_side_and_refuses_an_empty_matrix(tmp_path):
    files = merged(stage_files(tmp_path, "transformer-cls"), stage_files(tmp_path, "lstm-tanh", stages=("jw",)))
    out = {"out_csv": tmp_path / "m.csv", "out_md": tmp_path / "m.md"}
    write_debate_matrix(cells(tmp_path, files), MEASURES, **out)
    text = out["out_md"].read_text()
    assert "## sst" in text and "| paper | test | lstm-tanh | transformer-cls | reading |" in text
    assert (
        "| Serrano & Smith | erasing the top-attention item flips the decision, % |  | 50.0 |" in text
    )  # blank: not run
    assert "| Jain & Wallace | τ(attention, gradient magnitude), mean | 0.300 | 0.300 |" in text
    assert pd.read_csv(out["out_csv"]).shape[1] == 8
    with pytest.raises(ValueError, match="no numbers"):
        write_debate_matrix([], MEASURES, out_csv=tmp_path / "e.csv", out_md=tmp_path / "e.md")


def test_cells_keep_every_digit_and_a_table_of_another_shape_is_refused(tmp_path):
    path = tmp_path / "cells.csv"
    value = 0.1234995678901234  # 6 significant digits would round it to 0.1235, and the matrix's 3 decimals up
    written = write_debate_cells(path, {RunKey("sst", "lstm-tanh", 10): {"jw_tau_gradient": value}})
    assert list(written.columns) == CELL_COLUMNS
    matrix = debate_matrix([path], MEASURES)
    assert matrix["value"].tolist() == [value] and matrix["seed"].tolist() == [10]
    write(path, [{"run": "sst/lstm-tanh/seed10", "measure": "jw_tau_gradient", "value": 1.0}])
    with pytest.raises(ValueError, match=r"cells.csv: columns \['run', 'measure', 'value'\], expected \['dataset'"):
        debate_matrix([path], MEASURES)
