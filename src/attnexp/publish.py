"""The published results section: one command turns a run folder into Markdown pages for GitHub.

    python -m attnexp.publish RUN --out docs/replication [--readme README.md] [--name NAME] [--force]
        [--embeddings-comparison RUN2 [--comparison-name NAME2]] [--allow-mixed-commits]

Pages written into OUT (`PAGES`): `README.md`, the index (a note at the top when the run is
incomplete or comes from another config or commit, the scorecard per paper with links, every miss
with its cause, unexplained first, the provenance block), one page per paper (its claims, its
headline tables beside the published values, its key figures with their captions, every claim),
`figures/*.png` (each at most `MAX_PNG_BYTES`) and `config.yaml` (the run's effective config).

What it reads from RUN; everything is optional, but a folder without a single table, claims file
or figure is refused with one line:

- `results/tables/<name>.md`: the tables of `PAGES`, embedded as they are (headings demoted);
- `results/tables/scorecard.csv`, else `results/tables/claims.csv`, else `results/claims/*.csv`
  (then scored here with `attnexp.scorecard`);
- `results/figures/**.png`: the key figures of `PAGES`, re-encoded without metadata and shrunk
  until they fit; their captions come from `report/*.rst`;
- `results/run/run.json`, `results/run/config.yaml` (rule `record_run`): the effective config, its
  config files, the commit, the run's targets (what counts as missing);
- `results/logs/**/*.log`: the commit each job ran under (each log's first line); a run whose jobs
  ran under several commits is refused unless `--allow-mixed-commits`, and then the provenance says
  which jobs ran under which;
- `results/benchmarks/**/*.tsv` (compute time) and `.snakemake/log/*.snakemake.log` (wall time).

With `--embeddings-comparison RUN2` (a run of `presets/replication_word2vec.yaml`), the J&W page also
puts the models both runs trained, with different vectors, side by side (test accuracy, mean τ of
each pair, J&W's committed means), and each miss blamed on embeddings names RUN2's number for it.

The output depends only on RUN, the checkout (captions, commit, config files) and the arguments:
the same command on the same run folder writes the same bytes. An existing page is replaced by one
with fewer tables, figures or claims only with `--force` (each page ends with its counts).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import re
import sys
from dataclasses import dataclass, field, replace
from datetime import datetime
from io import BytesIO
from pathlib import Path

import pandas as pd
import yaml

from attnexp import io
from attnexp.claims import CLAIM_COLUMNS, concatenate, read_claims
from attnexp.markdown import to_markdown
from attnexp.papers import PAPERS, RegistryView
from attnexp.papers.descriptor import BEYOND_THE_PAPERS, Figures, Page, Table
from attnexp.scorecard import (
    END,
    MATCHED,
    MISSED,
    NOT_COMPARED,
    START,
    breakdown,
    findings_line,
    findings_tally,
    outcome,
    read_scorecard,
    same_data_stand_ins,
    scorecard,
    summary,
    update_readme,
)
from attnexp.workflow import JOB_COMMIT, checkout_commit

__all__ = [
    "PAGES",
    "Table",
    "Figures",
    "Page",
    "MAX_PNG_BYTES",
    "PublishError",
    "config_digest",
    "workflow_source",
    "write_run_record",
    "read_run",
    "build",
    "publish",
    "small_png",
    "embeddings_comparison",
    "compute_by_stage",
    "invocations",
    "main",
]

REPO = Path(__file__).resolve().parents[2]
CAPTIONS = REPO / "report"
RECORD, RUN_CONFIG = "results/run/run.json", "results/run/config.yaml"
MAX_PNG_BYTES = 200_000
MAX_PNG_WIDTH = 1600
INDEX = "README.md"
# config keys that name a folder of the machine that ran (not published: nothing in the results depends on it)
LOCAL_KEYS, LOCAL_FOLDER = ("mirror",), "DIR"
COUNTS = re.compile(r"<!-- attnexp\.publish: tables=(\d+) figures=(\d+) claims=(\d+) -->")


class PublishError(ValueError):
    """Bad input or a refused overwrite: one line, exit status `code`."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code


# ----------------------------------------------------------------------------- what is published


# The pages of the papers and studies come from their descriptors (`Paper.page`, `attnexp.papers`); the
# debate matrix heads the page the extension studies share, and the data and models page closes.
BEYOND = Page(
    BEYOND_THE_PAPERS,
    "Beyond the papers: faithfulness, the Transformer and the debate matrix",
    "Every paper's test on every model side by side (the debate matrix), ERASER faithfulness of every ranking "
    "(DeYoung et al. 2020), and a small Transformer with head pruning by attention attribution (Hao et al. 2021) "
    "and attention rollout (Abnar & Zuidema 2020).",
    (),
    (Table("debate_matrix", "debate_matrix", fold=False),),
)
DATA_AND_MODELS = Page(
    "data-and-models",
    "Data and models",
    "The datasets after preprocessing beside Jain & Wallace's Table 1, and every trained model's test performance "
    "beside the published values (their claims are on the pages of the papers that published them).",
    (),
    (Table("datasets", "datasets"), Table("performance", "performance")),
)


def _pages(papers: dict) -> tuple[Page, ...]:
    """The registered papers' pages in registry order, a shared page where its first study comes (the
    shared parts first), then the data and models page; each page holds its papers' claims."""
    pages: dict[str, Page] = {}
    for paper in papers.values():
        if paper.page is None:
            continue
        page = pages.get(paper.page.slug) or (
            BEYOND if paper.page.slug == BEYOND.slug else replace(paper.page, tables=(), figures=())
        )
        pages[page.slug] = replace(
            page,
            papers=page.papers + tuple(paper.anchors),
            tables=page.tables + paper.page.tables,
            figures=page.figures + paper.page.figures,
        )
    pages.setdefault(BEYOND.slug, BEYOND)
    return (*pages.values(), DATA_AND_MODELS)


PAGES = RegistryView(lambda papers: {page.slug: page for page in _pages(papers)})  # slug -> page, in page order


# ----------------------------------------------------------------------------- the run's record


def config_digest(config: dict) -> str:
    """sha256 of the config as canonical JSON (sorted keys)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _shown_path(path: str | Path, base: str | Path) -> str:
    """A path relative to `base` when inside it, else its file name."""
    path, base = Path(os.path.abspath(path)), Path(os.path.abspath(base))
    return path.relative_to(base).as_posix() if path.is_relative_to(base) else path.name


def _sha256(path: str | Path) -> str | None:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def workflow_source(basedir: str | Path, configfiles, overrides) -> dict:
    """What made a run besides its config: the commit of the workflow's checkout (and whether it had
    uncommitted changes), the config files (the workflow's config.yaml, then each --configfile, by
    their path in the checkout or their name) and the --config overrides."""
    commit, dirty = checkout_commit(basedir)
    files = [Path(basedir) / "config.yaml", *map(Path, configfiles)]
    return {
        "commit": commit,
        "uncommitted_changes": dirty,
        "configfiles": [
            {
                "path": _shown_path(f, basedir),
                "in_checkout": Path(os.path.abspath(f)).is_relative_to(os.path.abspath(basedir)),
                "sha256": _sha256(f),
            }
            for f in files
        ],
        "config_overrides": {str(k): str(v) for k, v in dict(overrides or {}).items()},
    }


def write_run_record(
    config: dict, source: dict, targets, snakemake_version: str, out_config: str | Path, out_record: str | Path
) -> dict:
    """results/run/config.yaml (the effective config) and results/run/run.json (its digest, the
    source, the Snakemake version and every target of the run's `all`)."""
    config = json.loads(json.dumps(dict(config), default=str))
    io.write_text(out_config, yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    record = {
        "config_digest": config_digest(config),
        **source,
        "snakemake": snakemake_version,
        "targets": sorted(set(targets)),
    }
    io.write_json(out_record, record)
    return record


# ----------------------------------------------------------------------------- reading a run folder


@dataclass
class Run:
    root: Path
    tables: dict[str, str]  # name -> Markdown text, for the tables of PAGES present
    card: pd.DataFrame | None  # the scorecard
    card_source: str  # where it came from
    pngs: list[str]  # every PNG under results/figures, relative to it
    record: dict | None
    config: dict | None
    config_text: bytes | None
    notes: list[str]  # problems reading the run
    job_commits: dict[str, list[str]] = field(default_factory=dict)  # `job_commits`


def _claims_order(path: Path) -> tuple[int, str]:
    order = ("performance", *PAPERS)
    return (order.index(path.stem) if path.stem in order else len(order), path.stem)


def _load_scorecard(
    root: Path, notes: list[str], same_data: frozenset[str] = frozenset()
) -> tuple[pd.DataFrame | None, str]:
    tables = root / "results" / "tables"
    try:
        if (tables / "scorecard.csv").is_file():
            return read_scorecard(tables / "scorecard.csv"), "results/tables/scorecard.csv"
        if (tables / "claims.csv").is_file():
            notes.append(
                "no scorecard (results/tables/scorecard.csv): the claims of results/tables/claims.csv were scored here"
            )
            return scorecard(read_claims(tables / "claims.csv"), same_data), "results/tables/claims.csv"
        files = sorted((root / "results" / "claims").glob("*.csv"), key=_claims_order)
        if files:
            notes.append(
                f"no claims table (results/tables/claims.csv): the claims of {', '.join(f'results/claims/{f.name}' for f in files)} were scored here"
            )
            return scorecard(concatenate(files), same_data), "results/claims/*.csv"
    except (OSError, ValueError) as err:
        notes.append(f"the claims could not be read ({err})")
        return None, "none"
    notes.append("no claims: neither results/tables/scorecard.csv nor results/claims/*.csv exists")
    return None, "none"


def read_run(root: str | Path) -> Run:
    root = Path(root)
    results = root / "results"
    if not results.is_dir():
        raise PublishError(f"{root}: no results/ folder (not a run folder, or nothing has run in it yet)")
    notes: list[str] = []
    tables = {}
    for page in PAGES.values():
        for table in page.tables:
            path = results / "tables" / f"{table.name}.md"
            if path.is_file():
                tables[table.name] = path.read_text(encoding="utf-8")
    figures = results / "figures"
    pngs = sorted(p.relative_to(figures).as_posix() for p in figures.rglob("*.png")) if figures.is_dir() else []
    record = config = config_text = None
    if (root / RECORD).is_file():
        try:
            record = io.read_json(root / RECORD)
            config_text = (root / RUN_CONFIG).read_bytes()
            config = yaml.safe_load(config_text)
        except (OSError, ValueError, yaml.YAMLError) as err:
            notes.append(f"the run record could not be read ({err})")
            record = config = config_text = None
    card, card_source = _load_scorecard(
        root, notes, same_data_stand_ins(config) if isinstance(config, dict) else frozenset()
    )
    if not tables and card is None and not pngs:
        raise PublishError(
            f"{root}: no results to publish: none of results/tables/*.md, results/claims/*.csv, results/figures/**/*.png"
        )
    return Run(root, tables, card, card_source, pngs, record, config, config_text, notes, job_commits(root))


NOT_RECORDED = "not recorded"


def job_commits(root: str | Path) -> dict[str, list[str]]:
    """The commit each job of the run folder ran under, from the first line of its log
    (`results/logs/**/*.log`, written by `attnexp.workflow.log_to`): {commit in words: [its logs,
    relative to results/logs]}. A log without that line (a job run before jobs recorded their commit)
    counts under `NOT_RECORDED`."""
    found: dict[str, list[str]] = {}
    base = Path(root) / "results" / "logs"
    for path in sorted(base.rglob("*.log")) if base.is_dir() else []:
        with open(path, encoding="utf-8", errors="replace") as f:
            first = f.readline().rstrip("\n")
        commit = first[len(JOB_COMMIT) :] if first.startswith(JOB_COMMIT) else NOT_RECORDED
        found.setdefault(commit, []).append(path.relative_to(base).as_posix())
    return found


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
            stage = log.split("/")[0].removesuffix(".log")
            stages[stage] = stages.get(stage, 0) + 1
        rows.append(
            {
                "commit": commit,
                "jobs": len(logs),
                "rules (jobs)": ", ".join(f"{k} ({v})" for k, v in sorted(stages.items())),
            }
        )
    return [
        "Jobs per commit (from the first line of each job's log under `results/logs/`):",
        "",
        to_markdown(pd.DataFrame(rows)),
    ]


def _job_seconds(root: Path) -> list[tuple[str, float]]:
    """(stage, seconds) of every benchmark file (results/benchmarks/<rule>/**.tsv, its `s` column): the
    stage is the rule, the explanation jobs by method (`explain (loo)`)."""
    jobs = []
    base = root / "results" / "benchmarks"
    for path in sorted(base.rglob("*.tsv")):
        lines = path.read_text(encoding="utf-8").splitlines()
        try:
            column = lines[0].split("\t").index("s")
            seconds = sum(float(line.split("\t")[column]) for line in lines[1:] if line.strip())
        except (IndexError, ValueError):
            continue
        rule = path.relative_to(base).parts[0]
        jobs.append((f"{rule} ({path.stem})" if rule == "explain" else rule, seconds))
    return jobs


def compute_by_stage(root: str | Path, jobs: list[tuple[str, float]] | None = None) -> pd.DataFrame:
    """Jobs and compute seconds per stage (`_job_seconds`, read from `root` unless given), the most
    expensive first."""
    jobs = pd.DataFrame(_job_seconds(Path(root)) if jobs is None else jobs, columns=["stage", "seconds"])
    table = jobs.groupby("stage", sort=True).agg(jobs=("seconds", "size"), seconds=("seconds", "sum")).reset_index()
    table["share"] = table["seconds"] / max(table["seconds"].sum(), 1e-9)
    return table.sort_values(["seconds", "stage"], ascending=[False, True], kind="stable").reset_index(drop=True)


_DATE = re.compile(r"^\s*Date: (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)", re.M)
_STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]", re.M)


_COMMAND = re.compile(r"^\s*Command: (.*)$", re.M)


def invocations(root: str | Path) -> list[dict]:
    """The Snakemake invocations that ran jobs, from their logs (.snakemake/log): start, end, wall
    seconds (start to the last timestamp), jobs finished, and the targets of the command line."""
    found = []
    for path in sorted((Path(root) / ".snakemake" / "log").glob("*.snakemake.log")):
        text = path.read_text(encoding="utf-8", errors="replace")
        start, stamps = _DATE.search(text), _STAMP.findall(text)
        if not start or not stamps or "Finished job" not in text:
            continue
        begin = datetime.strptime(start.group(1), "%Y-%m-%d %H:%M:%S")
        end = datetime.strptime(" ".join(stamps[-1].split()), "%a %b %d %H:%M:%S %Y")
        command = _COMMAND.search(text)
        targets = command.group(1).split(" -- ", 1)[1].split() if command and " -- " in command.group(1) else []
        found.append(
            {
                "start": begin.strftime("%Y-%m-%d %H:%M:%S"),
                "end": end.strftime("%Y-%m-%d %H:%M:%S"),
                "seconds": max(0.0, (end - begin).total_seconds()),
                "jobs": len(re.findall(r"^Finished job", text, re.M)),
                "targets": " ".join(targets) or "all",
            }
        )
    return found


def _wall_time(root: Path) -> tuple[float, int, str] | None:
    """Seconds from start to last timestamp, summed over the Snakemake logs (.snakemake/log) of the
    invocations that ran jobs; their count; the last timestamp."""
    found = invocations(root)
    return (
        (sum(i["seconds"] for i in found), len(found), max(i["end"] for i in found)) if found else None
    )  # overlapping invocations end out of order


# ----------------------------------------------------------------------------- figures


def _pattern(template: str) -> re.Pattern:
    regex = re.escape(template)
    for key in ("dataset", "model"):
        regex = regex.replace(re.escape("{" + key + "}"), f"(?P<{key}>[^/]+)")
    return re.compile(regex.replace(re.escape("{seed}"), r"(?P<seed>\d+)") + "$")


def _groups(figures: Figures, pngs: list[str], datasets: list[str]) -> tuple[list[tuple[dict, list[str]]], int]:
    """The groups shown (wildcards, files in `figures.files` order: one seed per model, the first) and
    how many more there are."""
    patterns = [_pattern(f) for f in figures.files]
    found: dict[tuple, dict] = {}
    for png in pngs:
        for i, pattern in enumerate(patterns):
            match = pattern.match(png)
            if match:
                wildcards = match.groupdict()
                key = tuple(sorted(wildcards.items()))
                found.setdefault(key, {"wildcards": wildcards, "files": {}})["files"][i] = png

    def order(group):
        w = group["wildcards"]
        dataset = w.get("dataset", "")
        model = w.get("model", "")
        return (
            datasets.index(dataset) if dataset in datasets else len(datasets),
            dataset,
            figures.models.index(model) if model in figures.models else len(figures.models),
            model,
            int(w.get("seed", 0)),
        )

    groups = sorted(found.values(), key=order)
    # one seed of each model (the first): the other seeds' figures show the same kind of result
    first_seeds: dict[tuple, dict] = {}
    for group in groups:
        first_seeds.setdefault(tuple(sorted((k, v) for k, v in group["wildcards"].items() if k != "seed")), group)
    groups = list(first_seeds.values())
    if figures.per_dataset:
        seen, kept = set(), []
        for group in groups:
            if group["wildcards"].get("dataset") not in seen:
                seen.add(group["wildcards"].get("dataset"))
                kept.append(group)
        groups = kept
    shown = groups[: figures.limit]
    return [(g["wildcards"], [g["files"][i] for i in sorted(g["files"])]) for g in shown], len(found) - len(shown)


def small_png(data: bytes, limit: int = MAX_PNG_BYTES, width: int = MAX_PNG_WIDTH) -> bytes:
    """The image as an RGB PNG of at most `limit` bytes and `width` pixels, without metadata
    (transparency flattened onto white; a 256-colour palette, then smaller sizes, while too big).
    Deterministic: the same input gives the same bytes."""
    from PIL import Image  # matplotlib's dependency; only publishing needs it

    with Image.open(BytesIO(data)) as source:
        source.load()
        rgba = source.convert("RGBA")
    image = Image.new("RGB", rgba.size, (255, 255, 255))
    image.paste(rgba, mask=rgba.getchannel("A"))
    if image.width > width:
        image = image.resize((width, max(1, round(image.height * width / image.width))), Image.Resampling.LANCZOS)

    def encode(picture) -> bytes:
        picture.info.clear()
        buffer = BytesIO()
        picture.save(buffer, "PNG", compress_level=9)
        return buffer.getvalue()

    encoded = encode(image)
    scale = 1.0
    while len(encoded) > limit and image.width * scale >= 32:
        sized = (
            image
            if scale == 1.0
            else image.resize(
                (max(1, round(image.width * scale)), max(1, round(image.height * scale))), Image.Resampling.LANCZOS
            )
        )
        encoded = encode(sized.quantize(256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE))
        # the encoded size goes roughly with the pixel count: aim below the limit, then step down
        scale *= min(0.9, (limit / len(encoded)) ** 0.5 * 0.95)
    return encoded


def _figure_name(png: str) -> str:
    return "figures/" + png[: -len(".png")].replace("/", "-") + ".png"


# ----------------------------------------------------------------------------- text


def caption(name: str, wildcards: dict | None = None) -> str:
    """A report caption (reStructuredText) as one Markdown paragraph, its `{{ snakemake.wildcards.x }}`
    filled in."""
    path = CAPTIONS / f"{name}.rst"
    if not path.is_file():
        return ""
    text = path.read_text(encoding="utf-8")
    text = re.sub(
        r"\{\{\s*snakemake\.wildcards\.(\w+)\s*\}\}", lambda m: str((wildcards or {}).get(m.group(1), m.group(1))), text
    )
    text = re.sub(r"``(.+?)``", r"`\1`", text, flags=re.S)
    text = text.replace("\\|", "|").replace("\\*", "*")
    return " ".join(text.split())


def _demoted(markdown: str, levels: int = 2) -> tuple[str, str]:
    """A table page's title and its body with every heading `levels` deeper."""
    lines = markdown.rstrip("\n").split("\n")
    title = ""
    if lines and lines[0].startswith("# "):
        title, lines = lines[0][2:].strip(), lines[1:]
    body = [("#" * levels + line) if re.match(r"#+ ", line) else line for line in lines]
    return title, "\n".join(body).strip("\n")


def _folded(text: str, rows: int = 40) -> str:
    """A table page's body with everything from its first table on folded away (`<details>`) when
    its tables have more than `rows` rows in all."""
    lines = text.split("\n")
    table_lines = [i for i, line in enumerate(lines) if line.startswith("|")]
    tables = sum(1 for i in table_lines if i == 0 or not lines[i - 1].startswith("|"))
    total = len(table_lines) - 2 * tables  # less each table's header and separator
    if total <= rows:
        return text
    start = table_lines[0]
    head = "\n".join(lines[:start]).rstrip("\n")
    return (
        (head + "\n\n" if head else "")
        + f"<details>\n<summary>{total} rows</summary>\n\n"
        + "\n".join(lines[start:]).strip("\n")
        + "\n\n</details>"
    )


def _number(value):
    return value if isinstance(value, str) else ("" if pd.isna(value) else f"{value:.3f}")


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours} h {minutes} min {secs} s" if hours else (f"{minutes} min {secs} s" if minutes else f"{secs} s")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _with_outcome(card: pd.DataFrame) -> pd.DataFrame:
    return card.assign(outcome=card["verdict"].map(outcome), cause=card["cause"].fillna(""))


def _misses(card: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """The missed rows, `unexplained` first (otherwise in the scorecard's order)."""
    missed = _with_outcome(card)
    missed = missed[missed["outcome"] == MISSED]
    missed = missed.assign(_first=(missed["cause"] != "unexplained").astype(int)).sort_values("_first", kind="stable")
    shown = missed[columns].copy()
    for column in ("ours", "published", "tolerance"):
        if column in shown:
            shown[column] = shown[column].map(_number)
    return shown


def _summary_line(part: pd.DataFrame) -> str:
    s = summary(part).iloc[0]
    return (
        f"**{s.claims} claims**: {s.matched} matched, {s.missed} missed ({s.unexplained} unexplained), "
        f"{s.not_compared} not compared."
    )


def _not_compared(card: pd.DataFrame) -> list[str]:
    detail = breakdown(card)
    return [f"- {r.rows} × {r.reason}" for r in detail[detail["outcome"] == NOT_COMPARED].itertuples()]


# ----------------------------------------------------------------------------- the embeddings comparison

_PAIRS = (
    ("attention~loo", "τ(attention, LOO)"),
    ("attention~gradient", "τ(attention, |gradient|)"),
    ("gradient~loo", "τ(|gradient|, LOO)"),
)
_MEAN_TAU = REPO / "references" / "jain_wallace_mean_tau.csv"


def _trained_runs(root: Path) -> dict[tuple[str, str, int], dict]:
    """(dataset, model, seed) -> metrics.json, for every J&W model with a correlation table in the run."""
    runs = {}
    for path in sorted((root / "results" / "jain_wallace").glob("*/*/seed*/correlations.csv")):
        dataset, model, seed = path.parts[-4], path.parts[-3], int(path.parts[-2][len("seed") :])
        metrics = root / "results" / "models" / dataset / model / f"seed{seed}" / "metrics.json"
        if metrics.is_file():
            runs[(dataset, model, seed)] = io.read_json(metrics) | {"_correlations": path}
    return runs


def _comparison_row(key, trained: dict) -> dict:
    from attnexp.papers.jain_wallace.tables import overall_means

    means = overall_means(pd.read_csv(trained["_correlations"]))
    test = trained.get("test", {})
    row = {
        "dataset": key[0],
        "model": key[1],
        "seed": key[2],
        "embeddings": trained["provenance"].get("embeddings", "random"),
        "test accuracy": test.get("accuracy"),
    }
    return row | {label: means.get(pair) for pair, label in _PAIRS}


def embeddings_comparison(main: Path, other: Path) -> tuple[list[str], pd.DataFrame]:
    """The J&W models run in both folders with different vectors, side by side: test accuracy and the
    mean τ of each pair over all test instances, with J&W's committed means (BiLSTM, dev-selected) and,
    per model, which vectors come closer to them. Returns the Markdown lines and the rows."""
    ours, theirs = _trained_runs(main), _trained_runs(other)
    keys = [
        k
        for k in ours
        if k in theirs and ours[k]["provenance"].get("embeddings") != theirs[k]["provenance"].get("embeddings")
    ]
    if not keys:
        raise PublishError(
            f"{other}: no J&W model of {main} was run there with other vectors (results/jain_wallace/*/*/seed*/correlations.csv)"
        )
    published = pd.read_csv(_MEAN_TAU)
    rows, verdicts = [], []
    for key in sorted(keys):
        pair_rows = [_comparison_row(key, ours[key]), _comparison_row(key, theirs[key])]
        rows += pair_rows
        jw = published[(published.dataset == key[0]) & (published.model == key[1])].set_index("pair")["mean"]
        if len(jw):
            rows.append(
                {
                    "dataset": key[0],
                    "model": key[1],
                    "seed": None,
                    "embeddings": "J&W's committed means (dev-selected)",
                    "test accuracy": None,
                }
                | {label: float(jw[pair]) for pair, label in _PAIRS if pair in jw}
            )
            gaps = {
                r["embeddings"]: sum(
                    abs(r[label] - jw[pair]) for pair, label in _PAIRS if pair in jw and r[label] is not None
                )
                / len(jw)
                for r in pair_rows
            }
            (a, ga), (b, gb) = gaps.items()
            closer = a if ga < gb else b
            verdicts.append(
                f"- {key[1]} on {key[0]}: mean |ours − J&W| over the three pairs {ga:.3f} with {a}, {gb:.3f} with {b}: "
                f"{closer} comes closer to J&W's means."
            )
    table = pd.DataFrame(rows)
    shown = table.copy()
    for column in ["test accuracy"] + [label for _, label in _PAIRS]:
        shown[column] = shown[column].map(_number)
    shown["seed"] = shown["seed"].map(lambda v: "" if v is None or pd.isna(v) else str(int(v)))
    lines = [
        "## Embeddings: the GloVe stand-in against word2vec",
        "",
        "The same models trained with each kind of vectors (this run's, and the companion run's), test-selected; mean Kendall τ "
        "over all test instances. J&W's committed means are of their dev-selected BiLSTM retrain with 300-d pretrained vectors.",
        "",
        to_markdown(shown),
        *verdicts,
        "",
    ]
    return lines, table


def _with_comparison(card: pd.DataFrame, other: pd.DataFrame, other_name: str) -> pd.DataFrame:
    """Each missed J&W row blamed (in part) on embeddings gets the other run's number for the same
    claim and its verdict there: whether other vectors would have matched."""
    key = ["paper", "table", "dataset", "model", "seed", "quantity"]
    theirs = other.set_index(key)
    causes, statuses = [], []
    for row in card.to_dict("records"):
        text = row["cause"] if isinstance(row["cause"], str) else ""
        status = row["cause_status"] if isinstance(row["cause_status"], str) else ""
        index = tuple(row[k] for k in key)
        if outcome(row["verdict"]) == MISSED and "embeddings (" in text and index in theirs.index:
            other_row = theirs.loc[index]
            other_row = other_row.iloc[0] if isinstance(other_row, pd.DataFrame) else other_row
            vectors = other_row["embeddings"] or "other"
            # the other vectors remove the cause: a match there establishes it, where it is the only one
            if text.count("; ") == 0 and outcome(other_row["verdict"]) == MATCHED:
                status = "established"
            text += f"; with {vectors} vectors ({other_name}): {_number(other_row['ours'])}, {other_row['verdict']}"
        causes.append(text)
        statuses.append(status)
    return card.assign(cause=causes, cause_status=statuses)


_COMPARED = re.compile(r"; with (\S+) vectors \(([^)]*)\): \S+, (.+)$")


def _grouped_comparisons(card: pd.DataFrame) -> pd.DataFrame:
    """The card with each cause's other-vectors number dropped and only its verdict kept, so that the
    README's count of misses by cause groups them (\"...; with word2vec_local vectors (...): match\")."""
    causes = [
        _COMPARED.sub(lambda m: f"; with {m[1]} vectors ({m[2]}): {m[3]}", c) if isinstance(c, str) else c
        for c in card["cause"]
    ]
    return card.assign(cause=causes)


# ----------------------------------------------------------------------------- building the pages


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
        lines += [f"> Not in this run's config: {', '.join(f'`{u}`' for u in unconfigured)}.", ""]
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
def _checkout_digest(*overlays: str) -> str | None:
    """The digest of the config this checkout's config.yaml with `overlays` (paths in it) gives; None when it cannot be read."""
    from attnexp.config import load_config

    try:
        return config_digest(load_config(*[REPO / o for o in overlays]))
    except Exception:  # noqa: BLE001 - any failure means: no comparison
        return None


def _config_notes(record: dict, words: str) -> list[str]:
    """Notes where the run's config is not the project's default, or not this checkout's."""
    notes = []
    digest = record.get("config_digest", "")
    default = _checkout_digest()
    if default is not None and default != digest:
        notes.append(f"Made with another config than the project's default: {words} (config digest `{digest[:16]}`).")
    in_checkout = [f for f in record.get("configfiles", [])]
    if default is not None and in_checkout and all(f.get("in_checkout") for f in in_checkout):
        changed = [f["path"] for f in in_checkout if f.get("sha256") != _sha256(REPO / f["path"])]
        now = _checkout_digest(*[f["path"] for f in in_checkout[1:]])
        if changed and now != digest:  # edits that change no setting (comments) are not worth a note
            notes.append(
                f"The config files changed since the run: this checkout's {', '.join(f'`{c}`' for c in changed)} "
                f"{'is' if len(changed) == 1 else 'are'} not the run's."
            )
        elif not record.get("config_overrides") and now is not None and now != digest:
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
    notes = _config_notes(record, words)
    commit, dirty = record.get("commit"), record.get("uncommitted_changes")
    here, _ = checkout_commit(REPO)
    shown = f"`{commit}`" + (" with uncommitted changes" if dirty else "") if commit else "unknown (not a git checkout)"
    rows.append(("commit", shown))
    if commit and here and commit != here:
        notes.append(
            f"Made by another commit: `{commit[:12]}`{' with uncommitted changes' if dirty else ''}; this checkout is at `{here[:12]}`."
        )
    elif commit and dirty:
        notes.append(f"Made by commit `{commit[:12]}` with uncommitted changes.")
    rows.append(("Snakemake", str(record.get("snakemake", "unknown"))))
    targets = record.get("targets", [])
    present = sum((run.root / t).exists() for t in targets)
    rows.append(("outputs", f"{present} of the {len(targets)} outputs of the run's `all` exist"))
    return rows, notes


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
    """ "sst lstm-tanh (0.654 ± 0.012)" for each row (at most `FOUND_SHOWN`, then how many more)."""
    named = [
        f"{r.dataset} {r.model} ({_number(r.ours)}" + (f" ± {_number(r.sd)})" if not pd.isna(r.sd) else ")")
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
    for table, prefix, words in paper.findings:
        part = found[(found["table"] == table) & found["quantity"].str.startswith(prefix)]
        if not len(part):
            continue
        held, missed = part[part["verdict"] == "holds"], part[part["verdict"] == "does not hold"]
        rest = part[~part.index.isin(held.index.union(missed.index))]
        said = []
        if len(held):
            said.append(f"holds on {_finding_models(held)}")
        if len(missed):
            said.append(f"does not hold on {_finding_models(missed)}")
        if len(rest):
            reasons = sorted({v.split(":", 1)[-1].strip() for v in rest["verdict"]})
            said.append(f"not compared on {_count(len(rest), 'model')} ({'; '.join(reasons)})")
        sentences.append(f"- {words} — {table}: {'; '.join(said)}.")
    return sentences


FINDINGS_INTRO = (
    "Each finding is tested on every seed of the models it concerns: it holds on a model only if it holds on each seed, "
    "and is not compared on fewer than three. The number after a model is its measure of the finding, the mean over the "
    "seeds ± their standard deviation; the claims below say what is measured and against which threshold."
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
        files["claims.csv"] = run.card[list(CLAIM_COLUMNS)].to_csv(index=False, lineterminator="\n").encode("utf-8")
    return Built(files, counts, run.card, top)


# ----------------------------------------------------------------------------- writing


def _existing_counts(path: Path) -> tuple[int, int, int] | None:
    match = COUNTS.search(path.read_text(encoding="utf-8", errors="replace"))
    return tuple(int(g) for g in match.groups()) if match else None


def _readme_claims(text: str) -> int | None:
    """The claims counted in a README's status block (the `claims` column of its table), if any."""
    if START not in text or END not in text:
        return None
    block = text.split(START, 1)[1].split(END, 1)[0]
    rows = [line.strip().strip("|").split("|") for line in block.splitlines() if line.strip().startswith("|")]
    if not rows:
        return None
    header = [c.strip() for c in rows[0]]
    if "claims" not in header:
        return None
    i = header.index("claims")
    return sum(int(r[i]) for r in rows[2:] if len(r) > i and r[i].strip().isdigit())


def _refusals(out: Path, built: Built, readme: Path | None) -> list[str]:
    refusals = []
    for page, new in built.counts.items():
        path = out / page
        if not path.is_file():
            continue
        old = _existing_counts(path)
        if old is None:
            refusals.append(f"{path} was not written by attnexp.publish")
            continue
        fewer = [f"{kind} {o} -> {n}" for kind, o, n in zip(("tables", "figures", "claims"), old, new) if n < o]
        if fewer:
            refusals.append(f"{path} would get fewer {', '.join(fewer)}")
    if readme is not None and readme.is_file() and built.card is not None:
        old = _readme_claims(readme.read_text(encoding="utf-8"))
        if old is not None and len(built.card) < old:
            refusals.append(f"{readme}'s status block would get fewer claims {old} -> {len(built.card)}")
    return refusals


def _relative(path: str | Path) -> str:
    """A path as the user gave it; an absolute one relative to the working folder when that is short."""
    text = str(path)
    if not os.path.isabs(text):
        return Path(text).as_posix()
    relative = os.path.relpath(text)
    return Path(relative).as_posix() if relative.count("..") <= 2 else Path(text).as_posix()


def publish(
    run_dir: str | Path,
    out: str | Path,
    readme: str | Path | None = None,
    force: bool = False,
    name: str | None = None,
    embeddings_comparison: str | Path | None = None,
    comparison_name: str | None = None,
    note: str | Path | None = None,
    allow_mixed_commits: bool = False,
) -> Built:
    """Read the run, refuse one whose jobs ran under several commits (unless `allow_mixed_commits`),
    build every page in memory, refuse an emptier page (unless `force`), write. `note`: a Markdown
    file on how the run was made, shown at the top of the index."""
    out = Path(out)
    name = name or _relative(run_dir)
    command = f"python -m attnexp.publish {name} --out {_relative(out)}"
    comparison = None
    if embeddings_comparison is not None:
        comparison_name = comparison_name or _relative(embeddings_comparison)
        command += f" --embeddings-comparison {comparison_name}"
        comparison = read_run(embeddings_comparison)
    note_text = ""
    if note is not None:
        command += f" --note {_relative(note)}"
        try:
            note_text = Path(note).read_text(encoding="utf-8")
        except OSError as err:
            raise PublishError(f"{note}: cannot read the note ({err.strerror})") from err
    run = read_run(run_dir)
    if len(run.job_commits) > 1:
        if not allow_mixed_commits:
            counts = ", ".join(f"{commit} ({len(logs)})" for commit, logs in sorted(run.job_commits.items()))
            raise PublishError(
                f"{run_dir}: its jobs ran under {len(run.job_commits)} commits (jobs: {counts}); a published run is made by one "
                "commit: rerun it from one commit in a fresh folder, or pass --allow-mixed-commits to publish it with a table "
                "of which jobs ran under which",
                code=1,
            )
        command += " --allow-mixed-commits"
    built = build(run, name, command, comparison, comparison_name or "", note_text)
    readme = Path(readme) if readme else None
    if not force:
        refusals = _refusals(out, built, readme)
        if refusals:
            more = f" (and {len(refusals) - 1} more)" if len(refusals) > 1 else ""
            raise PublishError(f"refusing to overwrite: {refusals[0]}{more}; rerun with --force to replace", code=1)
    for relative, data in sorted(built.files.items()):
        path = out / relative
        if path.is_file() and path.read_bytes() == data:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        with io.atomic_path(path) as tmp:
            tmp.write_bytes(data)
            tmp.chmod(0o644)
    figures = out / "figures"
    if figures.is_dir():
        for stale in sorted(figures.glob("*.png")):
            if f"figures/{stale.name}" not in built.files:
                stale.unlink()
    if readme is not None:
        if built.card is None:
            raise PublishError(f"{readme}: no claims in the run to write its status block from")
        link = Path(os.path.relpath(out / INDEX, readme.parent)).as_posix()
        update_readme(
            readme,
            _grouped_comparisons(built.card),
            f"the run in `{name}`",
            command="python -m attnexp.publish --readme",
            link=link,
        )
    return built


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m attnexp.publish",
        description="Turn a run folder into the published results section: an index page with the scorecard and the "
        "provenance, one page per paper with its tables and figures.",
    )
    parser.add_argument("run", help="the run folder (the --directory of the Snakemake run)")
    parser.add_argument("--out", required=True, help="the folder of the pages, e.g. docs/replication")
    parser.add_argument(
        "--readme",
        help="also regenerate the status block of this README (between the scorecard markers), linking the pages",
    )
    parser.add_argument("--name", help="how the pages name the run (default: the run folder as given)")
    parser.add_argument(
        "--force", action="store_true", help="replace pages even with ones that have fewer tables, figures or claims"
    )
    parser.add_argument(
        "--embeddings-comparison",
        metavar="RUN2",
        help="a companion run of the same J&W models with other vectors "
        "(presets/replication_word2vec.yaml): both side by side on the J&W page, and its numbers in the causes of embedding misses",
    )
    parser.add_argument("--comparison-name", help="how the pages name the companion run (default: its folder as given)")
    parser.add_argument(
        "--allow-mixed-commits",
        action="store_true",
        help="publish a run whose jobs ran under several commits "
        "(their first log lines differ), with a table of which jobs ran under which",
    )
    parser.add_argument(
        "--note",
        metavar="FILE",
        help="a Markdown file on how the run was made (e.g. what was rerun with which commit), shown at the top of the index",
    )
    args = parser.parse_args(argv)
    try:
        built = publish(
            args.run,
            args.out,
            readme=args.readme,
            force=args.force,
            name=args.name,
            embeddings_comparison=args.embeddings_comparison,
            comparison_name=args.comparison_name,
            note=args.note,
            allow_mixed_commits=args.allow_mixed_commits,
        )
    except PublishError as err:
        print(f"error: {err}", file=sys.stderr)
        return err.code
    except (OSError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    t, f, c = built.counts[INDEX]
    print(
        f"{args.out}: {len(PAGES) + 1} pages, {_count(t, 'table')}, {_count(f, 'figure')}, {_count(c, 'claim')}"
        + (
            f"; read the note{'s' if len(built.notes) > 1 else ''} at the top of {Path(args.out) / INDEX}"
            if built.notes
            else ""
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
