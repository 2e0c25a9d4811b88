"""The published results section (attnexp.publish): pages from a run folder, the note at the top of
an incomplete run or one from another config or commit, the one-line error on a folder without
results, the refusal to replace a page with an emptier one, small deterministic PNGs, the README's
status block, and byte-identical republishing on a real quick-preset run (slow)."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
from io import BytesIO
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from attnexp import io
from attnexp.claims import CLAIM_COLUMNS, Setting, claim, claims_frame
from attnexp.config import load_config
from attnexp.publish.cli import _relative, main
from attnexp.publish.figures import MAX_PNG_BYTES, small_png
from attnexp.publish.record import write_run_record
from attnexp.scorecard import END, START, read_scorecard, scorecard

REPO = Path(__file__).resolve().parents[1]
JW, SS, DY = "Jain & Wallace 2019", "Serrano & Smith 2019", "DeYoung et al. 2020"
TABLE2 = "# Jain & Wallace Table 2: Kendall τ\n\nOurs beside the published values.\n\n| dataset | ours | published |\n|---|---|---|\n| sst | 0.41 | 0.40 |\n"
SS_TABLE = "# Serrano & Smith §5: single-weight erasure\n\n| model | flips |\n|---|---|\n| han-rnn | 0.5 |\n"


def png(path: Path, size: int = 64, noise: bool = False) -> None:
    """A PNG as matplotlib writes one (RGBA, a Software text chunk); noise makes it big."""
    from PIL.PngImagePlugin import PngInfo

    pixels = (
        np.random.default_rng(0).integers(0, 256, (size, size, 4), dtype=np.uint8)
        if noise
        else np.full((size, size, 4), 200, np.uint8)
    )
    pixels[..., 3] = 255
    info = PngInfo()
    info.add_text("Software", "matplotlib version3.11.2, https://matplotlib.org/")
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(pixels, "RGBA").save(path, pnginfo=info)


def claims(with_ss: bool = True) -> list[dict]:
    condition = "select_on=test; embeddings=fasttext_simple; stand-ins=none"
    rows = [
        claim(
            JW,
            "Table 2",
            "sst",
            "lstm-tanh",
            10,
            "mean tau(attention, gradient), class 0",
            ours=0.41,
            published=0.40,
            tolerance=0.07,
            source="J&W",
            condition=condition,
        ),
        claim(
            JW,
            "Table 2",
            "sst",
            "lstm-tanh",
            10,
            "mean tau(attention, loo), class 0",
            ours=0.60,
            published=0.40,
            tolerance=0.07,
            source="J&W",
            condition=condition,
        ),
        claim(
            DY,
            "AOPC",
            "sst",
            "lstm-tanh",
            10,
            "AOPC(loo) > AOPC(random)",
            ours=0.1,
            verdict="does not hold",
            setting=Setting("dev"),
        ),
    ]
    if with_ss:
        rows.append(
            claim(SS, "§5", "sst", "han-rnn", 10, "ΔJS < 0 share", ours=0.2, verdict="holds", setting=Setting("dev"))
        )
    return rows


def fake_run(root: Path, *, with_ss: bool = True, record: bool = True, commit: str | None = None) -> Path:
    """A minimal run folder: J&W Table 2 and two figures, the scorecard, S&S if `with_ss`, a run
    record whose targets expect S&S and the W&P Table 2 either way."""
    tables = root / "results" / "tables"
    tables.mkdir(parents=True)
    (tables / "jain_wallace_table2.md").write_text(TABLE2)
    io.write_csv(tables / "scorecard.csv", scorecard(claims_frame(claims(with_ss))))
    png(root / "results/figures/jain_wallace/encoder_comparison.png")
    png(root / "results/figures/jain_wallace/sst/lstm-tanh/seed10/tau_histograms.png", size=400, noise=True)
    if with_ss:
        (tables / "serrano_smith_erasure.md").write_text(SS_TABLE)
        png(root / "results/figures/serrano_smith/delta_js/han-rnn/seed10.png")
    if record:
        targets = [
            "results/tables/jain_wallace_table2.md",
            "results/tables/serrano_smith_erasure.md",
            "results/tables/wiegreffe_pinter_uniform.md",
            "results/figures/jain_wallace/encoder_comparison.png",
            "results/figures/jain_wallace/sst/lstm-tanh/seed10/tau_histograms.png",
            "results/figures/serrano_smith/delta_js/han-rnn/seed10.png",
        ]
        source = {
            "commit": commit,
            "uncommitted_changes": False,
            "configfiles": [{"path": "config.yaml", "in_checkout": True, "sha256": None}],
            "config_overrides": {},
        }
        write_run_record(
            {"datasets": {"sst": {"enabled": True}}},
            source,
            targets,
            "9.27.1",
            root / "results/run/config.yaml",
            root / "results/run/run.json",
        )
    bench = root / "results/benchmarks/train_model/sst/lstm-tanh/seed10.tsv"
    bench.parent.mkdir(parents=True)
    bench.write_text("s\th:m:s\tmax_rss\n61.5\t0:01:01\t100\n")
    return root


def digests(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def publish(run: Path, out: Path, *args: str) -> int:
    return main([str(run), "--out", str(out), "--name", "runs/test", *args])


# ----------------------------------------------------------------------------- pages


def test_a_run_becomes_an_index_and_a_page_per_paper(tmp_path):
    run = fake_run(tmp_path / "run", commit="0" * 40)
    out = tmp_path / "out"
    assert publish(run, out) == 0
    pages = {p.name for p in out.glob("*.md")}
    assert pages == {
        "README.md",
        "jain-wallace-2019.md",
        "serrano-smith-2019.md",
        "wiegreffe-pinter-2019.md",
        "beyond-the-papers.md",
        "data-and-models.md",
    }
    index = (out / "README.md").read_text()
    assert "| [Jain & Wallace 2019](jain-wallace-2019.md) | replicated | 2 | 1 | 1 | 0 | 1 | 1 | 0 | 0 |" in index
    # every miss with its cause, the unexplained ones first (the J&W miss has no named cause)
    misses = index.split("## Misses", 1)[1].split("##", 1)[0]
    assert misses.index("unexplained") < misses.index("AOPC(loo)")
    assert "## Provenance" in index and "`python -m attnexp.publish runs/test --out" in index
    assert "1 min 2 s: the `s` column of the 1 benchmark files" in index
    assert "| train_model | 1 | 0.02 | 100 % |" in index  # compute time per stage
    assert (out / "config.yaml").read_bytes() == (run / "results/run/config.yaml").read_bytes()
    jw = (out / "jain-wallace-2019.md").read_text()
    assert (
        "### Jain & Wallace Table 2: Kendall τ" in jw and "| sst | 0.41 | 0.40 |" in jw
    )  # the run's table, not retyped
    assert "Kendall τ-b between attention and gradient" in jw  # its caption from report/
    assert "](figures/jain_wallace-sst-lstm-tanh-seed10-tau_histograms.png)" in jw and "lstm-tanh on sst, seed 10" in jw
    assert jw.rstrip().endswith("<!-- attnexp.publish: tables=1 figures=2 claims=2 -->")
    for figure in (out / "figures").glob("*.png"):
        data = figure.read_bytes()
        assert len(data) <= MAX_PNG_BYTES and b"tEXt" not in data and b"iTXt" not in data and b"tIME" not in data, (
            figure.name
        )


def test_the_index_opens_with_what_was_found_in_numbers_of_the_claims(tmp_path):
    """'What we found' comes first, says per paper where each finding holds and where not, and every
    number in it is a value of the published claims; the claims and the scorecard are published too."""
    from attnexp.claims import finding

    run = fake_run(tmp_path / "run")
    permutation = "share of test instances whose median output change under permutation is at most 0.05"
    rows = claims() + [
        finding(
            JW,
            "§4.2, attention permutation (Figure 4)",
            "sst",
            "lstm-tanh",
            permutation,
            {1: 0.61, 2: 0.65, 3: 0.7},
            threshold=0.5,
            side="above",
            rule="rule",
            source="J&W",
        ),
        finding(
            JW,
            "§4.2, attention permutation (Figure 4)",
            "imdb",
            "lstm-tanh",
            permutation,
            {1: 0.41, 2: 0.45, 3: 0.40},
            threshold=0.5,
            side="above",
            rule="rule",
            source="J&W",
        ),
        finding(
            JW,
            "§4.2, attention permutation (Figure 4)",
            "20news",
            "lstm-tanh",
            permutation,
            {1: 0.9},
            threshold=0.5,
            side="above",
            rule="rule",
            source="J&W",
        ),
        finding(
            SS,
            "§5, single-weight erasure",
            "20news20",
            "han-rnn",
            "share of instances whose decision erasing the highest-attention item flips",
            {1: 0.02, 2: 0.03, 3: 0.04},
            threshold=0.1,
            side="below",
            rule="rule",
            source="S&S",
        ),
    ]
    io.write_csv(run / "results/tables/scorecard.csv", scorecard(claims_frame(rows)))
    out = tmp_path / "out"
    assert publish(run, out) == 0
    index = (out / "README.md").read_text()
    assert (
        index.index("## What we found")
        < index.index("## Scorecard")
        < index.index("## Pages")
        < index.index("## Misses")
        < index.index("## Provenance")
    )
    found = index.split("## What we found", 1)[1].split("## Scorecard", 1)[0]
    assert (
        "**[Jain & Wallace 2019](jain-wallace-2019.md)**: 1 finding–model pairs hold, 1 do not hold, 0 inconclusive "
        "(0 of the 2 decided at a 5 % false discovery rate; 1 not compared)." in found
    )
    assert (
        "- Randomly permuting the attention weights often changes the output only minimally — §4.2 and Figure 4: "
        "holds on sst lstm-tanh (0.653 [0.610, 0.700], 3 seeds); does not hold on imdb lstm-tanh (0.420 [0.400, 0.450], 3 seeds); "
        "not compared on 1 model (1 seed, a finding needs 3)."
    ) in found
    assert (
        "- Erasing the highest-attention item rarely flips the decision — §5 (single attention weight erasure): "
        "holds on 20news20 han-rnn (0.030 [0.020, 0.040], 3 seeds)." in found
    )
    # each paper's page opens with its own findings, then a key figure
    page = (out / "jain-wallace-2019.md").read_text()
    first_screen = page.split("## Findings", 1)[1].split("\n## ", 1)[0]
    assert "- Randomly permuting the attention weights often changes the output only minimally" in first_screen
    assert "Erasing the highest-attention item" not in first_screen and "](figures/" in first_screen
    card = read_scorecard(out / "scorecard.csv")
    values = {f"{v:.3f}" for column in ("ours", "sd", "low", "high") for v in card[column].dropna()}
    listed = "\n".join(line for line in found.splitlines() if line.startswith(("- ", "**[")))  # not the rule's words
    numbers = re.findall(r"(?<![§\d.])\d+\.\d+", listed)  # not the paper's section numbers
    assert numbers and set(numbers) <= values
    published = pd.read_csv(out / "claims.csv")
    assert list(published.columns) == [*CLAIM_COLUMNS, "location", "statement"] and len(card) == len(rows)


def test_a_note_on_how_the_run_was_made_is_shown_at_the_top(tmp_path, capsys):
    run = fake_run(tmp_path / "run", commit="0" * 40)
    note = tmp_path / "notes.md"
    note.write_text(
        "The models were trained by commit `abc`.\nThe tables were remade\nby commit `def`.\n\nA second paragraph.\n"
    )
    assert publish(run, tmp_path / "out", "--note", str(note)) == 0
    index = (tmp_path / "out" / "README.md").read_text()
    top = index.split("## Scorecard", 1)[0]
    assert (
        "> The models were trained by commit `abc`. The tables were remade by commit `def`.\n>\n> A second paragraph."
        in top
    )
    assert "notes.md` |" in index.split("| published with |", 1)[1].splitlines()[0]  # the command names the note
    assert publish(run, tmp_path / "out2", "--note", str(tmp_path / "missing.md")) == 2
    assert "missing.md: cannot read the note" in capsys.readouterr().err


def test_republishing_the_same_run_writes_the_same_bytes(tmp_path):
    run, out = fake_run(tmp_path / "run"), tmp_path / "out"
    assert publish(run, out) == 0
    published = digests(out)
    shutil.rmtree(out)
    assert publish(run, out) == 0 and digests(out) == published
    assert publish(run, out) == 0 and digests(out) == published  # over itself: not emptier, unchanged


def add_jw_model(root: Path, embeddings: str, taus: dict[str, list[float]], accuracy: float) -> None:
    """A J&W model's per-instance correlation table and metrics.json in a run folder."""
    folder = root / "results/jain_wallace/sst/lstm-tanh/seed10"
    folder.mkdir(parents=True, exist_ok=True)
    rows = ["id,length,predicted,pair,tau,p_value"] + [
        f"i{i},5,0,{pair},{tau},0.01" for pair, values in taus.items() for i, tau in enumerate(values)
    ]
    (folder / "correlations.csv").write_text("\n".join(rows) + "\n")
    io.write_json(
        root / "results/models/sst/lstm-tanh/seed10/metrics.json",
        {"test": {"accuracy": accuracy}, "provenance": {"dataset": "sst", "embeddings": embeddings}},
    )


def test_an_embeddings_comparison_puts_both_runs_side_by_side_and_names_the_other_number_in_causes(tmp_path):
    run = fake_run(tmp_path / "run")
    add_jw_model(
        run,
        "glove6b50",
        {"attention~loo": [0.3, 0.3], "attention~gradient": [0.4, 0.2], "gradient~loo": [0.6, 0.6]},
        0.81,
    )
    io.write_csv(
        run / "results/tables/scorecard.csv",
        scorecard(
            claims_frame(
                [
                    claim(
                        JW,
                        "Table 2",
                        "sst",
                        "lstm-tanh",
                        10,
                        "mean tau(attention, loo), class 0",
                        ours=0.60,
                        published=0.40,
                        tolerance=0.07,
                        source="J&W",
                        setting=Setting("test", "glove6b50", "none"),
                    ),
                ]
            )
        ),
    )
    other = tmp_path / "w2v"
    (other / "results/tables").mkdir(parents=True)
    add_jw_model(
        other,
        "word2vec_local",
        {"attention~loo": [0.1, None], "attention~gradient": [0.2, 0.2], "gradient~loo": [0.4, 0.4]},
        0.79,
    )
    io.write_csv(
        other / "results/tables/scorecard.csv",
        scorecard(
            claims_frame(
                [
                    claim(
                        JW,
                        "Table 2",
                        "sst",
                        "lstm-tanh",
                        10,
                        "mean tau(attention, loo), class 0",
                        ours=0.45,
                        published=0.40,
                        tolerance=0.07,
                        source="J&W",
                        setting=Setting("test", "word2vec_local", "none"),
                    ),
                ]
            )
        ),
    )
    out = tmp_path / "out"
    assert publish(run, out, "--embeddings-comparison", str(other), "--comparison-name", "runs/w2v") == 0
    jw = (out / "jain-wallace-2019.md").read_text()
    section = jw.split("## Embeddings: the GloVe stand-in against word2vec", 1)[1].split("\n## ", 1)[0]
    assert "Companion run: `runs/w2v`." in section
    assert "| sst | lstm-tanh | 10 | glove6b50 | 0.810 | 0.300 | 0.300 | 0.600 |" in section
    assert (
        "| sst | lstm-tanh | 10 | word2vec_local | 0.790 | 0.100 | 0.200 | 0.400 |" in section
    )  # undefined tau left out of the mean
    assert "| sst | lstm-tanh |  | J&W's committed means (dev-selected) |  | 0.290 | 0.350 | 0.660 |" in section
    # mean |ours - J&W|: GloVe (0.01 + 0.05 + 0.06) / 3, word2vec (0.19 + 0.15 + 0.26) / 3
    assert "0.040 with glove6b50, 0.200 with word2vec_local: glove6b50 comes closer to J&W's means." in section
    cause = "embeddings (GloVe 6B 50-d for the paper's 300-d pretrained vectors, D-EMB); with word2vec_local vectors (runs/w2v): 0.450, match"
    assert cause in jw and cause in (out / "README.md").read_text()
    assert "--embeddings-comparison runs/w2v" in (out / "README.md").read_text()
    unrelated = fake_run(tmp_path / "unrelated")
    assert (
        publish(run, tmp_path / "out2", "--embeddings-comparison", str(unrelated)) == 2
    )  # no model in common: one line


def test_small_png_fits_the_limit_deterministically_without_metadata(tmp_path):
    png(tmp_path / "big.png", size=600, noise=True)
    data = (tmp_path / "big.png").read_bytes()
    assert len(data) > MAX_PNG_BYTES
    small = small_png(data)
    assert small == small_png(data) and len(small) <= MAX_PNG_BYTES
    assert b"tEXt" not in small and b"pHYs" not in small
    png(tmp_path / "plain.png")
    with Image.open(BytesIO(small_png((tmp_path / "plain.png").read_bytes()))) as plain:
        assert plain.size == (64, 64) and plain.mode == "RGB"  # a small one keeps its size


# ----------------------------------------------------------------------------- bad input


def test_an_incomplete_run_is_published_with_what_is_missing_at_the_top(tmp_path):
    run = fake_run(tmp_path / "run", with_ss=False)
    out = tmp_path / "out"
    assert publish(run, out) == 0
    index = (out / "README.md").read_text()
    top = "\n".join(line for line in index.split("## Scorecard", 1)[0].splitlines() if line.startswith(">"))
    assert "**Incomplete run.**" in top
    assert (
        "[Serrano & Smith 2019](serrano-smith-2019.md): `results/tables/serrano_smith_erasure.md`; 1 of the 1 figures"
        in top
    )
    assert "[Wiegreffe & Pinter 2019](wiegreffe-pinter-2019.md): `results/tables/wiegreffe_pinter_uniform.md`" in top
    assert "Jain & Wallace" not in top  # complete: its table and figures are all there
    assert (
        "> **Incomplete run**: missing `results/tables/serrano_smith_erasure.md`"
        in (out / "serrano-smith-2019.md").read_text()
    )
    # a table the run's config never asked for is named on its page, not counted as missing
    assert (
        "Tables this run's config does not make: `results/tables/debate_matrix.md`"
        in (out / "beyond-the-papers.md").read_text()
    )


def test_a_run_from_another_commit_or_without_a_record_says_so(tmp_path):
    out = tmp_path / "out"
    assert publish(fake_run(tmp_path / "old", commit="0" * 40), out) == 0
    top = (out / "README.md").read_text().split("## Scorecard", 1)[0]
    assert "this checkout is at" not in top  # a published page never compares itself with the reader's checkout
    reproduce = (
        "| to reproduce | `git checkout 000000000000`, then, in the checkout, the command above with `--directory` "
        "naming an empty folder (the same command resumes there after any stop) |"
    )
    assert reproduce in (out / "README.md").read_text()  # the run's code is that commit's, not this checkout's
    assert "Made with another config than the project's default" in top
    assert publish(fake_run(tmp_path / "bare", record=False), tmp_path / "bare_out") == 0
    top = (tmp_path / "bare_out" / "README.md").read_text().split("## Scorecard", 1)[0]
    assert (
        "no run record (`results/run/run.json`)" in top and "**Incomplete run.** Missing (without a run record" in top
    )


def job_log(root: Path, relative: str, first_line: str) -> None:
    """A job's log at `relative` to the run's results/, opening with `first_line`."""
    path = root / "results" / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(first_line + "\nepoch 1/8 ...\n")


def test_a_run_of_the_replication_preset_with_a_mirror_is_the_default_config(tmp_path):
    """The default config is the replication: a run made with presets/replication.yaml and a mirror
    (where the data come from, not a setting) is not noted as another config, nor its config files as
    changed when only their comments differ; a preset that changes a setting is noted."""

    def notes(name: str, config: dict) -> str:
        run = fake_run(tmp_path / name, record=False)
        source = {
            "commit": None,
            "uncommitted_changes": False,
            "configfiles": [
                {"path": "config.yaml", "in_checkout": True, "sha256": "0" * 64},  # comments edited since
                {"path": "presets/replication.yaml", "in_checkout": True, "sha256": None},
            ],
            "config_overrides": {"mirror": "/data/mirror"},
        }
        write_run_record(config, source, [], "9.27.1", run / "results/run/config.yaml", run / "results/run/run.json")
        assert publish(run, tmp_path / f"{name}_out") == 0
        return (tmp_path / f"{name}_out" / "README.md").read_text().split("## Scorecard", 1)[0]

    replication = {**load_config(REPO / "presets" / "replication.yaml"), "mirror": "/data/mirror"}
    top = notes("replication", replication)
    assert "another config" not in top and "config files changed" not in top
    other = {**replication, "train": {**replication["train"], "seeds": [10]}}
    top = notes("one_seed", other)
    assert "Made with another config than the project's default" in top and "config files changed" in top


def test_the_commit_every_job_ran_under_is_named_and_a_mixture_refused(tmp_path, capsys):
    run, out = fake_run(tmp_path / "run", commit="a" * 40), tmp_path / "out"
    # a training's log lies beside its model (rules/train.smk), every other job's under results/logs
    job_log(run, "models/sst/lstm-tanh/seed10/train.log", "attnexp commit: " + "a" * 40)
    job_log(run, "logs/explain_together/sst/lstm-tanh/seed10.log", "attnexp commit: " + "a" * 40)
    assert publish(run, out) == 0
    assert (
        f"| jobs | every one of the 2 jobs ran at commit `{'a' * 40}` (the first line of its log) |"
        in (out / "README.md").read_text()
    )
    # one job of another commit: refused in one line, nothing written
    job_log(run, "logs/jw_tables.log", "attnexp commit: " + "b" * 40 + " with uncommitted changes")
    capsys.readouterr()
    assert publish(run, tmp_path / "mixed") == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "its jobs ran under 2 commits" in err and "--allow-mixed-commits" in err
    assert not (tmp_path / "mixed").exists()
    # forced: said at the top, and which rules' jobs ran under which commit
    assert publish(run, tmp_path / "mixed", "--allow-mixed-commits") == 0
    index = (tmp_path / "mixed" / "README.md").read_text()
    assert "**Mixed commits.**" in index.split("## Scorecard", 1)[0]
    assert f"| {'b' * 40} with uncommitted changes | 1 | jw_tables (1) |" in index
    assert f"| {'a' * 40} | 2 | explain_together (1), train_model (1) |" in index
    assert "--allow-mixed-commits`" in index  # the command that published it
    assert "| to reproduce |" not in index  # no one commit reproduces a mixture


def test_a_job_log_opens_with_the_commit_of_the_code_that_runs_it(tmp_path):
    script = "import sys; from attnexp.workflow import log_to; log = log_to(sys.argv[1]); log('done')"
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "job.log")], check=True, cwd=REPO, capture_output=True)
    first, second = (tmp_path / "job.log").read_text().splitlines()[:2]
    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    assert first.startswith(f"attnexp commit: {commit}") and second == "done"


def test_a_folder_without_results_is_a_one_line_error(tmp_path):
    empty = tmp_path / "empty"
    (empty / "results" / "logs").mkdir(parents=True)
    result = subprocess.run(
        [sys.executable, "-m", "attnexp.publish", str(empty), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert (
        result.stderr.startswith("error: ")
        and "no results to publish" in result.stderr
        and "results/tables/*.md" in result.stderr
    )
    assert not (tmp_path / "out").exists()
    assert main([str(tmp_path / "nowhere"), "--out", str(tmp_path / "out")]) == 2


def test_an_emptier_page_is_refused_without_force(tmp_path, capsys):
    out = tmp_path / "out"
    assert publish(fake_run(tmp_path / "full"), out) == 0
    before = digests(out)
    capsys.readouterr()
    assert publish(fake_run(tmp_path / "partial", with_ss=False), out) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and error.startswith("error: refusing to overwrite: ")
    assert (
        "serrano-smith-2019.md would get fewer tables 1 -> 0, figures 1 -> 0, claims 1 -> 0" in error
        and "--force" in error
    )
    assert digests(out) == before  # nothing written
    assert publish(fake_run(tmp_path / "partial2", with_ss=False), out, "--force") == 0
    assert "tables=0 figures=0 claims=0" in (out / "serrano-smith-2019.md").read_text()
    assert not (out / "figures" / "serrano_smith-delta_js-han-rnn-seed10.png").exists()  # its figure went with it


def test_readme_status_block_is_regenerated_with_a_link_to_the_pages(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"# Project\n\n{START}\nold\n{END}\n\nRest.\n")
    run = fake_run(tmp_path / "run")
    assert (
        main(
            [str(run), "--out", str(tmp_path / "docs" / "replication"), "--readme", str(readme), "--name", "runs/test"]
        )
        == 0
    )
    text = readme.read_text()
    block = text.split(START, 1)[1].split(END, 1)[0]
    out = _relative(tmp_path / "docs" / "replication")
    assert (
        f"Generated from the run in `runs/test` by `python -m attnexp.publish runs/test --out {out} --readme {_relative(readme)}`"
        in block
    )
    assert "[docs/replication](docs/replication/README.md)" in block
    assert "| Jain & Wallace 2019 | replicated | 2 | 1 | 1 | 0 | 1 | 1 | 0 | 0 |" in block
    assert text.startswith("# Project\n") and text.endswith("\n\nRest.\n")
    # a run with fewer claims does not replace the block without --force
    assert (
        main(
            [
                str(fake_run(tmp_path / "partial", with_ss=False)),
                "--out",
                str(tmp_path / "other"),
                "--readme",
                str(readme),
            ]
        )
        == 1
    )
    assert readme.read_text() == text


# ----------------------------------------------------------------------------- the quick preset


@pytest.mark.slow
def test_quick_preset_run_is_published_byte_identically(quick_runs, tmp_path):
    """The CI reproducibility check's runs, published: complete, the same bytes on every rerun, and
    the same pages from both runs (but for their timings)."""
    first, second = quick_runs
    out = tmp_path / "a"
    assert main([str(first), "--out", str(out), "--name", "quick"]) == 0
    published = digests(out)
    index = (out / "README.md").read_text()
    assert (
        "Incomplete run" not in index
        and "## Scorecard" in index
        and "| made with | `snakemake --cores N --configfile presets/quick.yaml`" in index
    )
    assert (
        "Made with another config than the project's default: `config.yaml` with `presets/quick.yaml` over it" in index
    )
    assert "| jobs | every one of the " in index and "Mixed commits" not in index
    pngs = [p for p in published if p.endswith(".png")]
    assert len(pngs) >= 10 and all((out / p).stat().st_size <= MAX_PNG_BYTES for p in pngs)
    assert "### Jain & Wallace Table 2" in (out / "jain-wallace-2019.md").read_text()
    assert "### The debate matrix" in (out / "beyond-the-papers.md").read_text()
    for page in ("serrano-smith-2019.md", "wiegreffe-pinter-2019.md", "data-and-models.md"):
        assert "tables=0" not in (out / page).read_text(), page
    # rerun over the published pages, and into the same folder made afresh: byte for byte
    assert main([str(first), "--out", str(out), "--name", "quick"]) == 0 and digests(out) == published
    shutil.rmtree(out)
    assert main([str(first), "--out", str(out), "--name", "quick"]) == 0 and digests(out) == published
    # the second run publishes the same pages and figures; only its timings differ (and the index's command, naming --out)
    other = tmp_path / "b"
    assert main([str(second), "--out", str(other), "--name", "quick"]) == 0
    assert {p: d for p, d in digests(other).items() if p != "README.md"} == {
        p: d for p, d in published.items() if p != "README.md"
    }

    def untimed(path):
        """The index without its timings: the provenance rows that hold them, and the tables of compute
        per stage and of the Snakemake invocations (everything from the first to the page's counts)."""
        skip = ("| compute time |", "| wall time |", "| published with |")
        lines = [line for line in path.read_text().splitlines() if not line.startswith(skip)]
        start = next(i for i, line in enumerate(lines) if line.startswith("Compute time per stage"))
        end = next(i for i, line in enumerate(lines) if line.startswith("<!-- attnexp.publish:"))
        assert any(line.startswith("Snakemake invocations that ran jobs") for line in lines[start:end])
        return lines[:start] + lines[end:]

    assert untimed(other / "README.md") == untimed(out / "README.md")


def test_invocations_are_read_from_the_snakemake_logs(tmp_path):
    from attnexp.publish.record import invocations

    logs = tmp_path / ".snakemake" / "log"
    logs.mkdir(parents=True)
    (logs / "2026-11-26T000000.snakemake.log").write_text(
        "SNAKEMAKE\n  Date: 2026-11-26 00:00:00\n  Command: snakemake --cores 2 -- jain_wallace\n"
        "[Thu Nov 26 00:01:00 2026]\nFinished jobid: 3 (Rule: train_model)\n[Thu Nov 26 00:10:30 2026]\nFinished jobid: 4 (Rule: explain)\n"
    )
    (logs / "2026-11-26T010000.snakemake.log").write_text(
        "SNAKEMAKE\n  Date: 2026-11-26 01:00:00\nNothing to be done.\n"
    )  # ran no job
    (logs / "2026-11-26T020000.123456.snakemake.log").write_text(
        "Building DAG of jobs...\n[Thu Nov 26 02:00:05 2026]\nFinished jobid: 5 (Rule: jw_tables)\n"
    )  # written with `--quiet host`: no header, the start from the log's name, no command
    assert invocations(tmp_path) == [
        {
            "start": "2026-11-26 00:00:00",
            "end": "2026-11-26 00:10:30",
            "seconds": 630.0,
            "jobs": 2,
            "targets": "jain_wallace",
        },
        {
            "start": "2026-11-26 02:00:00",
            "end": "2026-11-26 02:00:05",
            "seconds": 5.0,
            "jobs": 1,
            "targets": "not recorded",
        },
    ]


def test_the_folders_of_the_machine_that_ran_are_not_published(tmp_path):
    run = fake_run(tmp_path / "run")
    source = {
        "commit": None,
        "uncommitted_changes": False,
        "configfiles": [{"path": "config.yaml", "in_checkout": True, "sha256": None}],
        "config_overrides": {"mirror": "/home/someone/datasets"},
    }
    write_run_record(
        {"mirror": "/home/someone/datasets", "datasets": {"sst": {"enabled": True}}},
        source,
        [],
        "9.27.1",
        run / "results/run/config.yaml",
        run / "results/run/run.json",
    )
    out = tmp_path / "out"
    assert publish(run, out) == 0
    published = "".join(p.read_text() for p in out.rglob("*") if p.suffix in (".md", ".yaml"))
    assert "/home/someone" not in published
    assert "--config mirror=DIR" in (out / "README.md").read_text()
    assert "mirror: DIR  # a folder of the machine that ran, not published" in (out / "config.yaml").read_text()


def test_the_readme_groups_misses_by_what_the_other_vectors_gave_not_by_their_numbers():
    import pandas as pd

    from attnexp.publish.comparison import grouped_comparisons

    emb = "embeddings (GloVe 6B 50-d for the paper's 300-d pretrained vectors, D-EMB)"
    card = pd.DataFrame(
        {
            "cause": [
                f"{emb}; with word2vec_local vectors (../w2v): 0.211, differs",
                f"{emb}; with word2vec_local vectors (../w2v): 0.636, match",
                "unexplained",
                "",
            ]
        }
    )
    assert grouped_comparisons(card)["cause"].tolist() == [
        f"{emb}; with word2vec_local vectors (../w2v): differs",
        f"{emb}; with word2vec_local vectors (../w2v): match",
        "unexplained",
        "",
    ]


def test_figures_show_one_seed_of_each_model_and_count_the_others():
    from attnexp.papers.descriptor import Figures
    from attnexp.publish.figures import figure_groups

    figures = Figures(
        ("jain_wallace/{dataset}/{model}/seed{seed}/permutation.png",),
        "caption",
        "{model} on {dataset}, seed {seed}",
        limit=4,
    )
    pngs = [
        f"jain_wallace/sst/{model}/seed{seed}/permutation.png"
        for model in ("lstm-tanh", "average-tanh")
        for seed in (12, 10, 11)
    ]
    shown, more = figure_groups(figures, pngs, ["sst"])
    assert [(w["model"], w["seed"]) for w, _ in shown] == [("average-tanh", "10"), ("lstm-tanh", "10")]
    assert more == 4
