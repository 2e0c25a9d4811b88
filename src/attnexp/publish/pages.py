"""Building the pages in memory (`build`): each page's findings, claims, tables and key figures, with
what the run misses; the index with what we found, the scorecard, the misses and the provenance
(config, commits, compute and wall time); the effective config and the claims beside them."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from attnexp.claims import CLAIM_COLUMNS
from attnexp.markdown import to_markdown
from attnexp.papers import PAPERS
from attnexp.papers.descriptor import Page
from attnexp.publish.comparison import _with_comparison, embeddings_comparison
from attnexp.publish.contents import PAGES
from attnexp.publish.figures import _figure_name, _groups, _pattern, small_png
from attnexp.publish.record import (
    NOT_RECORDED,
    RECORD,
    REPO,
    RUN_CONFIG,
    Run,
    _job_seconds,
    _sha256,
    _wall_time,
    compute_by_stage,
    config_digest,
    invocations,
    log_stage,
)
from attnexp.publish.text import (
    _count,
    _demoted,
    _duration,
    _empty_tables_marked,
    _folded,
    _misses,
    _not_compared,
    _number,
    _summary_line,
    caption,
)
from attnexp.scorecard import NOT_COMPARED, breakdown, findings_line, findings_tally, summary

INDEX = "README.md"
# config keys that name a folder of the machine that ran (not published: nothing in the results depends on it)
LOCAL_KEYS, LOCAL_FOLDER = ("mirror",), "DIR"


@dataclass
class Built:
    files: dict[str, bytes]  # path relative to OUT -> bytes
    counts: dict[str, tuple[int, int, int]]  # page -> (tables, figures, claims)
    card: pd.DataFrame | None
    notes: list[str]  # the index's note at the top


def _page_of(paper: str) -> str:
    for page in PAGES.values():
        if paper in page.papers:
            return page.slug
    return "beyond-the-papers"


def _datasets(run: Run) -> list[str]:
    if run.config and isinstance(run.config.get("datasets"), dict):
        return list(run.config["datasets"])
    return []


def _expected(run: Run) -> set[str] | None:
    return set(run.record.get("targets", [])) if run.record else None


def _missing(page: Page, run: Run) -> tuple[list[str], list[str], int, int]:
    """(missing tables, tables not in this run's config, missing figures, expected figures)."""
    expected = _expected(run)
    missing, unconfigured = [], []
    for table in page.tables:
        path = f"results/tables/{table.name}.md"
        if table.name in run.tables:
            continue
        (missing if expected is None or path in expected else unconfigured).append(path)
    figures_missing = figures_expected = 0
    if expected is not None:
        patterns = [_pattern(f) for figures in page.figures for f in figures.files]
        wanted = [
            t
            for t in expected
            if t.startswith("results/figures/") and any(p.match(t[len("results/figures/") :]) for p in patterns)
        ]
        figures_expected = len(wanted)
        figures_missing = sum(t[len("results/figures/") :] not in run.pngs for t in wanted)
    return missing, unconfigured, figures_missing, figures_expected


def _claims_section(part: pd.DataFrame) -> list[str]:
    lines = ["## Claims", "", _summary_line(part), ""]
    misses = _misses(
        part, ["table", "dataset", "model", "seed", "quantity", "ours", "published", "tolerance", "verdict", "cause"]
    )
    if len(misses):
        lines += ["Misses, unexplained first:", "", to_markdown(misses)]
    not_compared = _not_compared(part)
    if not_compared:
        lines += ["Not compared, by cause:", "", *not_compared, ""]
    return lines


def _every_claim(part: pd.DataFrame) -> list[str]:
    shown = part.drop(columns=["paper"]).copy()
    for column in ("ours", "sd", "published", "tolerance"):
        shown[column] = shown[column].map(_number)
    return [
        "## Every claim",
        "",
        "<details>",
        f"<summary>{len(shown)} claims: ours beside the published value, the verdict, "
        "the tolerance basis and, for a miss, its cause</summary>",
        "",
        to_markdown(shown),
        "</details>",
        "",
    ]


def _tables_section(page: Page, run: Run) -> tuple[list[str], int]:
    """The page's tables the run has, under `## Tables` (none: no lines), and how many."""
    body: list[str] = []
    n_tables = 0
    for table in page.tables:
        if table.name not in run.tables:
            continue
        title, text = _demoted(run.tables[table.name])
        text = _empty_tables_marked(text)
        body += [f"### {title or table.name}", ""]
        if caption(table.caption):
            body += [caption(table.caption), ""]
        body += [
            _folded(text) if table.fold else text,
            "",
            f"*From `results/tables/{table.name}.md` (and `.csv`) of the run.*",
            "",
        ]
        n_tables += 1
    return (["## Tables", ""] + body if body else body), n_tables


def _figures_section(page: Page, run: Run, files: dict[str, bytes], datasets: list[str]) -> tuple[list[str], int]:
    """The page's key figures under `## Figures` (none: no lines), each PNG added to `files` once,
    and how many are shown."""
    shown_figures: list[str] = []
    more = n_figures = 0
    for figures in page.figures:
        groups, hidden = _groups(figures, run.pngs, datasets)
        more += hidden
        for wildcards, pngs in groups:
            heading = figures.heading.format(**wildcards) if wildcards else figures.heading
            shown_figures += [f"### {heading}", "", caption(figures.caption, wildcards), ""]
            for png in pngs:
                target = _figure_name(png)
                if target not in files:
                    files[target] = small_png((run.root / "results" / "figures" / png).read_bytes())
                label = Path(png).stem if not re.fullmatch(r"seed\d+", Path(png).stem) else Path(png).parent.parent.name
                words = label.replace("_", " ")
                shown_figures += [
                    f"![{words}: {heading}]({target})",
                    "",
                    f"*{words[:1].upper() + words[1:]}, {heading}* (the run's `results/figures/{png}`)",
                    "",
                ]
                n_figures += 1
    if not shown_figures:
        return [], n_figures
    lines = ["## Figures", ""] + shown_figures
    if more:
        lines += [f"{more} more figure groups of this kind are in the run folder's results/figures/.", ""]
    return lines, n_figures


def _incomplete_notes(page: Page, run: Run) -> tuple[list[str], list[str]]:
    """What the page misses: the notes at its top, and its line for the index's note (if any)."""
    missing, unconfigured, figures_missing, figures_expected = _missing(page, run)
    lines, index_note = [], []
    if missing or figures_missing:
        parts = [", ".join(f"`{m}`" for m in missing)] if missing else []
        if figures_missing:
            parts.append(f"{figures_missing} of the {figures_expected} figures the key figures are chosen from")
        index_note.append(f"[{page.title.split(':')[0]}]({page.slug}.md): {'; '.join(parts)}")
        lines += [f"> **Incomplete run**: missing {'; '.join(parts)}. See [the index]({INDEX}).", ""]
    if unconfigured:
        lines += [f"Tables this run's config does not make: {', '.join(f'`{u}`' for u in unconfigured)}.", ""]
    return lines, index_note


def _build_page(
    page: Page, run: Run, name: str, files: dict[str, bytes], datasets: list[str], extra: list[str] = ()
) -> tuple[str, tuple[int, int, int], list[str]]:
    """A page's Markdown, its counts and its lines for the index's note (what is missing); `extra`: a
    section of tables after the run's own (counted as one table)."""
    part = run.card[run.card["paper"].map(_page_of) == page.slug] if run.card is not None else None
    body, n_tables = _tables_section(page, run)
    if extra:
        body += list(extra)
        n_tables += 1
    figures, n_figures = _figures_section(page, run, files, datasets)
    body += figures
    notes, index_note = _incomplete_notes(page, run)
    lines = [f"# {page.title}", "", *notes]
    lines += [page.about, "", f"From the run in `{name}` ([provenance]({INDEX}#provenance)).", ""]
    if part is not None and len(part):  # the first screen: the findings, then a key figure
        findings = [
            sentence
            for paper in PAPERS.values()
            if paper.citation in page.papers and paper.findings
            for sentence in _paper_findings(part, paper)
        ]
        if findings:
            lines += ["## Findings", "", FINDINGS_INTRO, "", *findings, ""]
            lines += [line for line in figures if line.startswith("![")][:1] + [""]
    n_claims = 0
    if part is not None and len(part):
        lines += _claims_section(part)
        n_claims = len(part)
    elif page.papers:
        lines += ["## Claims", "", "No claims of this page's papers in this run.", ""]
    lines += body
    if not n_tables and not n_figures:
        lines += ["Nothing of this page is in this run.", ""]
    if n_claims:
        lines += _every_claim(part)
    counts = (n_tables, n_figures, n_claims)
    lines.append(f"<!-- attnexp.publish: tables={counts[0]} figures={counts[1]} claims={counts[2]} -->")
    return "\n".join(lines) + "\n", counts, index_note


def _without_local_folders(config_text: bytes) -> bytes:
    """The run's config with the folders of the machine that ran (`LOCAL_KEYS`) named `DIR`."""
    text = config_text.decode("utf-8")
    for key in LOCAL_KEYS:
        text = re.sub(
            rf"^{key}: (?!null$).*$",
            f"{key}: {LOCAL_FOLDER}  # a folder of the machine that ran, not published",
            text,
            flags=re.M,
        )
    return text.encode("utf-8")


def _made_with(run: Run) -> tuple[str, str]:
    """The Snakemake command (its config part) and the config files in words."""
    files = [f["path"] for f in run.record.get("configfiles", [])]
    overlays = files[1:]
    command = "snakemake --cores N" + "".join(f" --configfile {f}" for f in overlays)
    overrides = run.record.get("config_overrides") or {}
    if overrides:
        command += " --config " + " ".join(
            f"{k}={LOCAL_FOLDER if k in LOCAL_KEYS else v}" for k, v in sorted(overrides.items())
        )
    words = "`config.yaml`" + (" with " + ", ".join(f"`{f}`" for f in overlays) + " over it" if overlays else " alone")
    return command, words


@functools.cache
def _checkout_config(overlays: tuple[str, ...], overrides: tuple[tuple[str, str], ...]) -> dict | None:
    """The config this checkout's config.yaml with `overlays` (paths in it) and the run's --config
    `overrides` (a mirror folder: where the data come from, not a setting) gives; None when it cannot be read."""
    from snakemake.cli import parse_config  # the values as Snakemake read them from the command line

    from attnexp.config import load_config

    try:
        config = load_config(*[REPO / o for o in overlays])
        return {**config, **parse_config([f"{key}={value}" for key, value in overrides])}
    except Exception:  # noqa: BLE001 - any failure means: no comparison
        return None


def _same_plan_digest(config: dict | None) -> str | None:
    """The digest of `config` with each experiment's dataset and model selection replaced by the runs
    it selects (a selection left open means every enabled dataset of its task and every eligible
    model), so that a preset naming the default's choices one by one compares equal to the default;
    None for a config it cannot read."""
    from attnexp.plan import experiment_runs

    try:
        spelled = {
            key: {
                **section,
                "datasets": None,
                "models": None,
                "runs": [list(run) for run in experiment_runs(config, key)],
            }
            for key, section in config.items()
            if isinstance(section, dict) and "datasets" in section and "models" in section
        }
    except (AttributeError, KeyError, TypeError, ValueError):
        return None
    return config_digest({**config, **spelled})


def _config_notes(record: dict, words: str, run_config: dict | None) -> list[str]:
    """Notes where the run's config is not the project's default, or not this checkout's."""
    notes = []
    digest = record.get("config_digest", "")
    overrides = tuple(sorted((record.get("config_overrides") or {}).items()))
    default = _checkout_config((), overrides)
    ours = _same_plan_digest(run_config)
    if default is not None and (ours is None or ours != _same_plan_digest(default)):
        notes.append(f"Made with another config than the project's default: {words} (config digest `{digest[:16]}`).")
    in_checkout = [f for f in record.get("configfiles", [])]
    if default is not None and in_checkout and all(f.get("in_checkout") for f in in_checkout):
        changed = [f["path"] for f in in_checkout if f.get("sha256") != _sha256(REPO / f["path"])]
        now = _checkout_config(tuple(f["path"] for f in in_checkout[1:]), overrides)
        now = None if now is None else config_digest(now)
        if changed and now != digest:  # edits that change no setting (comments) are not worth a note
            notes.append(
                f"The config files changed since the run: this checkout's {', '.join(f'`{c}`' for c in changed)} "
                f"{'is' if len(changed) == 1 else 'are'} not the run's."
            )
        elif now is not None and now != digest:
            notes.append(
                "This checkout fills in other defaults (`schemas/config.schema.yaml`) than the run's config has."
            )
    return notes


def _record_rows(run: Run) -> tuple[list[tuple[str, str]], list[str]]:
    """The provenance rows of the run record (config, commit, Snakemake, outputs) and its notes."""
    record = run.record
    snake, words = _made_with(run)
    rows = [("made with", f"`{snake}` ({words})")]
    digest = record.get("config_digest", "")
    rows.append(
        (
            "config",
            f"digest `{digest[:16]}` (sha256 of the effective config); the effective config: [config.yaml](config.yaml) here, "
            f"`{RUN_CONFIG}` in the run folder",
        )
    )
    notes = _config_notes(record, words, run.config)
    commit, dirty = record.get("commit"), record.get("uncommitted_changes")
    shown = f"`{commit}`" + (" with uncommitted changes" if dirty else "") if commit else "unknown (not a git checkout)"
    rows.append(("commit", shown))
    if commit and not dirty and len(run.job_commits) <= 1:  # every job ran that commit's code
        rows.append(
            (
                "to reproduce",
                f"`git checkout {commit[:12]}`, then, in the checkout, the command above with `--directory` naming an empty folder "
                "(the same command resumes there after any stop)",
            )
        )
    if commit and dirty:
        notes.append(f"Made by commit `{commit[:12]}` with uncommitted changes.")
    rows.append(("Snakemake", str(record.get("snakemake", "unknown"))))
    targets = record.get("targets", [])
    present = sum((run.root / t).exists() for t in targets)
    rows.append(("outputs", f"{present} of the {len(targets)} outputs of the run's `all` exist"))
    return rows, notes


def _job_commit_rows(run: Run) -> tuple[list[tuple[str, str]], list[str]]:
    """The provenance row of the commits the jobs ran under, a table of them when there are several,
    and the note for the top of the index."""
    commits = run.job_commits
    total = sum(map(len, commits.values()))
    if not commits:
        return [], []
    if len(commits) == 1:
        ((commit, logs),) = commits.items()
        if commit == NOT_RECORDED:
            return [("jobs", f"{_count(total, 'job log')}; none names the commit it ran under")], []
        return [
            ("jobs", f"every one of the {_count(total, 'job')} ran at commit `{commit}` (the first line of its log)")
        ], []
    rows = [
        (
            "jobs",
            f"{_count(total, 'job')} under {len(commits)} commits: "
            + "; ".join(f"`{c}` {len(logs)}" for c, logs in sorted(commits.items())),
        )
    ]
    note = (
        f"**Mixed commits.** The jobs of this run ran under {len(commits)} different commits (published with "
        "`--allow-mixed-commits`); the provenance lists which jobs ran under which."
    )
    return rows, [note]


def _job_commit_table(run: Run) -> list[str]:
    """Which rules' jobs ran under which commit, when there are several."""
    if len(run.job_commits) < 2:
        return []
    rows = []
    for commit, logs in sorted(run.job_commits.items()):
        stages: dict[str, int] = {}
        for log in logs:
            stage = log_stage(log)
            stages[stage] = stages.get(stage, 0) + 1
        rows.append(
            {
                "commit": commit,
                "jobs": len(logs),
                "rules (jobs)": ", ".join(f"{k} ({v})" for k, v in sorted(stages.items())),
            }
        )
    return [
        "Jobs per commit (from the first line of each job's log):",
        "",
        to_markdown(pd.DataFrame(rows)),
    ]


def _time_rows(root: Path, jobs: list[tuple[str, float]]) -> list[tuple[str, str]]:
    """The compute time (benchmark files) and wall time (Snakemake's logs) rows, where known."""
    rows = []
    total, count = sum(seconds for _, seconds in jobs), len(jobs)
    if count:
        rows.append(
            (
                "compute time",
                f"{_duration(total)}: the `s` column of the {count} benchmark files under `results/benchmarks/` summed "
                "(the jobs of the rules with a benchmark: preprocessing, training, explanations, experiments; "
                "tables, figures and claims are not timed)",
            )
        )
    wall = _wall_time(root)
    if wall:
        total_wall, n_invocations, last = wall
        rows.append(
            (
                "wall time",
                f"{_duration(total_wall)}: from the start to the last job of each Snakemake invocation that ran jobs, summed "
                f"({_count(n_invocations, 'invocation')}, logged in `.snakemake/log/`); the last ended {last}",
            )
        )
    return rows


def _time_tables(root: Path, jobs: list[tuple[str, float]]) -> list[str]:
    """Compute time per stage and the Snakemake invocations, where known."""
    lines = []
    if jobs:
        stages = compute_by_stage(root, jobs)
        stages["hours"] = stages["seconds"].map(lambda v: f"{v / 3600:.2f}")
        stages["share"] = stages["share"].map(lambda v: f"{100 * v:.0f} %")
        lines += [
            "Compute time per stage (job seconds from `results/benchmarks/`; one job's threads are in the run's config):",
            "",
            to_markdown(stages[["stage", "jobs", "hours", "share"]]),
        ]
    found = invocations(root)
    if found:
        table = pd.DataFrame(found)
        table["wall time"] = table["seconds"].map(_duration)
        lines += [
            "Snakemake invocations that ran jobs (from `.snakemake/log/`), in order:",
            "",
            to_markdown(table[["start", "end", "wall time", "jobs", "targets"]]),
        ]
    return lines


def _provenance(run: Run, name: str, command: str) -> tuple[list[str], list[str]]:
    """The provenance block and the notes for the top of the index (other config, other commit)."""
    rows, notes = [("run folder", f"`{name}`")], []
    if run.record is None:
        notes.append(
            f"The run folder has no run record (`{RECORD}`): the config and the commit that made it are unknown."
        )
        rows.append(("config, commit", f"not recorded (no `{RECORD}` in the run folder)"))
    else:
        record_rows, notes = _record_rows(run)
        rows += record_rows
    commit_rows, commit_notes = _job_commit_rows(run)
    rows += commit_rows
    notes += commit_notes
    jobs = _job_seconds(run.root)
    rows += _time_rows(run.root, jobs)
    rows.append(("published with", f"`{command}`"))
    table = pd.DataFrame(rows, columns=["", "value"])
    return ["## Provenance", "", to_markdown(table)] + _job_commit_table(run) + _time_tables(run.root, jobs), notes


def _companion(run: Run, comparison: Run, comparison_name: str) -> dict[str, list[str]]:
    """The embeddings comparison with the companion run, as a section of the J&W page (page slug ->
    lines); the run's claim card gets the comparison's causes of embedding misses."""
    lines, _ = embeddings_comparison(run.root, comparison.root)
    extra = {"jain-wallace-2019": lines[:2] + [f"Companion run: `{comparison_name}`.", ""] + lines[2:]}
    if run.card is not None and comparison.card is not None:
        run.card = _with_comparison(run.card, comparison.card, comparison_name)
    return extra


FOUND_SHOWN = 6  # models named per verdict in a finding's sentence; the rest are counted


def _finding_models(part: pd.DataFrame) -> str:
    """ "sst lstm-tanh (0.654 [0.630, 0.671], 3 seeds)" for each row (at most `FOUND_SHOWN`, then how many more)."""
    named = [
        f"{r.dataset} {r.model} ({_number(r.ours)}"
        + (f" [{_number(r.low)}, {_number(r.high)}]" if not pd.isna(r.low) else "")
        + f", {r.seeds} seeds)"
        for r in part.head(FOUND_SHOWN).itertuples()
    ]
    more = len(part) - len(named)
    return ", ".join(named) + (f" and {more} more" if more > 0 else "")


def _paper_findings(card: pd.DataFrame, paper) -> list[str]:
    """One sentence per finding of `paper` (`Paper.findings`) with finding claims in `card`: the
    models where it holds, where it does not (ours: mean ± sd over the seeds), how many were not
    compared and why."""
    found = card[card["seed"].isna() & (card["paper"] == paper.citation)]
    sentences = []
    for f in paper.findings:
        part = found[(found["table"] == f.table) & found["quantity"].str.startswith(f.prefix)]
        if not len(part):
            continue
        held, missed = part[part["verdict"] == "holds"], part[part["verdict"] == "does not hold"]
        open_ = part[part["verdict"] == "inconclusive"]
        rest = part[~part.index.isin(held.index.union(missed.index).union(open_.index))]
        said = []
        if len(held):
            said.append(f"holds on {_finding_models(held)}")
        if len(missed):
            said.append(f"does not hold on {_finding_models(missed)}")
        if len(open_):
            said.append(f"inconclusive on {_finding_models(open_)}")
        if len(rest):
            reasons = sorted({v.split(":", 1)[-1].strip() for v in rest["verdict"]})
            said.append(f"not compared on {_count(len(rest), 'model')} ({'; '.join(reasons)})")
        sensitive = int(part["threshold_sensitive"].fillna(False).astype(bool).sum())
        if sensitive:
            said.append(f"threshold-sensitive on {_count(sensitive, 'model')}")
        sentences.append(f"- {f.statement} — {f.location}: {'; '.join(said)}.")
    return sentences


FINDINGS_INTRO = (
    "Each finding is tested on every seed of the models it concerns, by one rule: its statistic gets a 95 % interval "
    "from a two-stage bootstrap (the seeds, then the test instances within each seed). It **holds** when the whole "
    "interval lies on the finding's side of the threshold, **does not hold** when it lies on the other side, and is "
    "**inconclusive** when the interval straddles the threshold; with fewer than three seeds it is not compared. "
    "Across all findings, Benjamini-Hochberg q-values say which verdicts stand at a 5 % false discovery rate. A "
    "threshold the paper does not state is ours, named, and the verdict is also read at half and double it "
    "(threshold-sensitive when that changes it). A test that cannot fail on a model (permuting near-uniform attention) "
    "and a model that does not learn its task (test performance below 0.8 of the paper's) are not counted. The number "
    "after a model is its statistic, the mean over the seeds, with its interval; the claims below say what is measured "
    "and against which threshold."
)


def what_we_found(card: pd.DataFrame | None) -> list[str]:
    """The index's opening section: per paper, its findings (`_paper_findings`), from the finding
    claims alone."""
    lines = ["## What we found", ""]
    if card is None or not len(card):
        return lines + ["No claims in this run.", ""]
    lines += [FINDINGS_INTRO.replace("the claims below say", "each paper's page says"), ""]
    tally = {paper: counts for paper, *counts in findings_tally(card)}
    for paper in PAPERS.values():
        sentences = _paper_findings(card, paper) if paper.findings and paper.citation in tally else []
        if sentences:
            lines += [
                f"**[{paper.citation}]({_page_of(paper.citation)}.md)**: {findings_line(paper.citation, *tally[paper.citation])}.",
                "",
                *sentences,
                "",
            ]
    return lines


def _scorecard_section(run: Run) -> list[str]:
    """The index's scorecard: its summary per paper."""
    card = run.card
    if card is None or not len(card):
        return ["## Scorecard", "", "No claims in this run.", ""]
    table = summary(card).rename(columns={"not_compared": "not compared"})
    table["paper"] = [f"[{p}]({_page_of(p)}.md)" for p in table["paper"]]
    return [
        "## Scorecard",
        "",
        f"From `{run.card_source}` of the run; every claim: [scorecard.csv](scorecard.csv) "
        "(the claims with the basis of each tolerance and the cause of each miss) and [claims.csv](claims.csv).",
        "",
        to_markdown(table),
    ]


def _misses_section(run: Run) -> list[str]:
    """Every missed claim (unexplained first) and what was not compared, and why."""
    card = run.card
    if card is None or not len(card):
        return []
    lines = []
    misses = _misses(
        card, ["paper", "table", "dataset", "model", "quantity", "ours", "published", "cause", "cause_status"]
    )
    if len(misses):
        lines += [
            "## Misses",
            "",
            "Every missed claim with its cause, the unexplained ones first.",
            "",
            to_markdown(misses),
        ]
    detail = breakdown(card)
    detail = detail[detail["outcome"] == NOT_COMPARED]
    if len(detail):
        lines += ["## Not compared", "", *[f"- {r.paper}: {r.rows} × {r.reason}" for r in detail.itertuples()], ""]
    return lines


def build(
    run: Run, name: str, command: str, comparison: Run | None = None, comparison_name: str = "", note: str = ""
) -> Built:
    """Every page in memory. `comparison`: the companion run of the embeddings comparison (its J&W
    models with other vectors), shown on the J&W page and named in the causes of embedding misses.
    `note`: Markdown from whoever ran it, on how the run was made, shown at the top of the index (one
    paragraph per blank-line-separated block)."""
    files: dict[str, bytes] = {}
    extra = _companion(run, comparison, comparison_name) if comparison is not None else {}
    counts: dict[str, tuple[int, int, int]] = {}
    datasets = _datasets(run) or sorted({p.split("/")[1] for p in run.pngs if p.count("/") >= 2})
    incomplete: list[str] = []
    for page in PAGES.values():
        text, page_counts, missing = _build_page(page, run, name, files, datasets, extra.get(page.slug, ()))
        files[f"{page.slug}.md"] = text.encode("utf-8")
        counts[f"{page.slug}.md"] = page_counts
        incomplete += missing
    provenance, notes = _provenance(run, name, command)
    top = []
    if incomplete or run.notes:
        unsure = (
            " (without a run record, outputs this run's config never asked for count as missing too)"
            if run.record is None
            else ""
        )
        top.append(
            f"**Incomplete run.** Missing{unsure}:\n>\n" + "\n".join(f"> - {item}" for item in incomplete + run.notes)
        )
    top += notes + [" ".join(block.split()) for block in re.split(r"\n\s*\n", note) if block.strip()]
    lines = ["# Replication results", ""]
    if top:
        lines += [line for note in top for line in (f"> {note}", ">")][:-1] + [""]
    lines += [
        "Jain & Wallace 2019, Serrano & Smith 2019 and Wiegreffe & Pinter 2019 regenerated from raw public data, and the "
        f"extensions beyond them, from the run in `{name}`. Every table and figure comes from the run's files; nothing is "
        "typed in. A claim is one published number or qualitative statement compared with ours: matched (`match`, `holds`), "
        "missed (`differs`, `does not hold`) with its named cause (a model outside the paper, a data stand-in, embeddings, "
        "checkpoint selection, a protocol deviation, or `unexplained`), or not compared (`not comparable`, `reference only`, "
        "`not public`, `undefined`).",
        "",
    ]
    lines += what_we_found(run.card)
    lines += _scorecard_section(run)
    lines += ["## Pages", ""]
    for page in PAGES.values():
        t, f, c = counts[f"{page.slug}.md"]
        lines.append(
            f"- [{page.title}]({page.slug}.md): {_count(t, 'table')}, {_count(f, 'figure')}, {_count(c, 'claim')}"
        )
    lines += [""] + _misses_section(run) + provenance
    totals = tuple(sum(c[i] for c in counts.values()) for i in range(3))
    lines.append(f"<!-- attnexp.publish: tables={totals[0]} figures={totals[1]} claims={totals[2]} -->")
    files[INDEX] = ("\n".join(lines) + "\n").encode("utf-8")
    counts[INDEX] = totals
    if run.config_text is not None:
        files["config.yaml"] = _without_local_folders(run.config_text)
    if run.card is not None:  # every claim beside the pages, as the run's tables hold them
        files["scorecard.csv"] = run.card.to_csv(index=False, lineterminator="\n").encode("utf-8")
        files["claims.csv"] = (
            run.card[[*CLAIM_COLUMNS, "location", "statement"]].to_csv(index=False, lineterminator="\n").encode("utf-8")
        )
    return Built(files, counts, run.card, top)
