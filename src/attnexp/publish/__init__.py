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
- `results/logs/**/*.log` and `results/models/**/train.log` (`record.JOB_LOGS`): the commit each job ran
  under (each log's first line); a run whose jobs ran under several commits is refused unless
  `--allow-mixed-commits`, and then the provenance says which jobs ran under which;
- `results/benchmarks/**/*.tsv` (compute time) and `.snakemake/log/*.snakemake.log` (wall time).

With `--embeddings-comparison RUN2` (a run of `presets/replication_word2vec.yaml`), the J&W page also
puts the models both runs trained, with different vectors, side by side (test accuracy, mean τ of
each pair, J&W's committed means), and each miss blamed on embeddings names RUN2's number for it.

The output depends only on RUN, the checkout (captions, commit, config files) and the arguments:
the same command on the same run folder writes the same bytes. An existing page is replaced by one
with fewer tables, figures or claims only with `--force` (each page ends with its counts).

The package, lowest first (a module imports only those before it): `contents` (what is published: `PAGES`,
the index and the page of each paper), `record` (the run's record, written by rule `record_run`, and
reading a run folder), `figures`, `text` and `comparison` (the embeddings comparison), the parts of a
page; `findings` (one sentence per finding), `page` (one page in Markdown) and `provenance` (how the
run was made, and its compute and wall time); `pages` (every page and the index built in memory);
`cli` (writing them: `publish`, `main`).
"""

from __future__ import annotations

from attnexp.papers.descriptor import Figures, Page, Table
from attnexp.publish.cli import main, publish
from attnexp.publish.comparison import embeddings_comparison
from attnexp.publish.contents import PAGES
from attnexp.publish.figures import MAX_PNG_BYTES, small_png
from attnexp.publish.pages import build
from attnexp.publish.record import (
    PublishError,
    compute_by_stage,
    config_digest,
    invocations,
    read_run,
    workflow_source,
    write_run_record,
)

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
