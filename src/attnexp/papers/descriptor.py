"""What the registry records of a paper or extension study (`Paper`, with the `Protocol` of its
published numbers), what the papers' records share, and the settings one kind of job depends on
(`JobSettings`). Torch-free, like the registry (`attnexp.papers`) that lists them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

__all__ = [
    "PRETRAINED_VECTORS",
    "Protocol",
    "Finding",
    "InReport",
    "Table",
    "Figures",
    "Page",
    "Paper",
    "JobSettings",
    "RUN_HEADING",
    "BEYOND_THE_PAPERS",
]


@dataclass(frozen=True)
class Protocol:
    """What a paper's own numbers were made with, as far as the scorecard's cause rules need it."""

    role: str  # "replicated" (one of the three papers) or "beyond the papers" (a method the extensions test)
    select_on: str | None = None  # the paper's checkpoint selection (D-SEL); None: no rule
    embeddings: tuple[str, ...] = ()  # our `embeddings=` values that are the paper's kind; (): no rule
    embeddings_label: str = ""  # what the paper used, in words
    models: str | None = None  # regular expression (full match) of the models of the paper's claims; None: any
    own_embeddings: dict[str, str] | None = (
        None  # dataset -> the `embeddings=` value that is the paper's own there (J&W's bAbI: random)
    )


@dataclass(frozen=True)
class Finding:
    """One finding of a paper as its claims test it (`attnexp.claims.finding`): the claims' `table`
    value and the start of their quantity (what tells its rows), the finding in our words (as "What we
    found" states it), where the paper says it (section, table or figure), the datasets and models it
    concerns, the exceptions the paper names, and where its threshold comes from."""

    table: str
    prefix: str
    statement: str
    location: str
    concerns: str = ""
    exceptions: str = ""
    threshold: str = "the side of 0 the paper's words give"


@dataclass(frozen=True)
class InReport:
    """Where a table's HTML page (`results/report/<name>.html`, rules/report.smk) goes in the Snakemake
    report: its category, subcategory and label."""

    category: str
    subcategory: str
    label: str


@dataclass(frozen=True)
class Table:
    """`results/tables/<name>.md` in the published results (`attnexp.publish`), with the caption
    `report/<caption>.rst`; `report`: also rendered into the Snakemake report, there."""

    name: str
    caption: str
    fold: bool = True  # a long table is folded away; a headline table never
    report: InReport | None = None


@dataclass(frozen=True)
class Figures:
    """Key figures of one kind in the published results: `files` are paths under results/figures with
    `{dataset}`, `{model}`, `{seed}` wildcards; the files sharing wildcard values make one group.
    Groups go in dataset order, then `models` order (others after, by name); one seed of each model is
    shown (the first); `per_dataset` keeps the first of each dataset; at most `limit` groups are shown."""

    files: tuple[str, ...]
    caption: str
    heading: str
    models: tuple[str, ...] = ()
    per_dataset: bool = False
    limit: int = 4


@dataclass(frozen=True)
class Page:
    """One page of the published results: its file name (`slug`), title, what it shows, the claims'
    `paper` values it holds, its tables and key figures. A paper's descriptor gives the page it
    appears on; studies that share a page give the same slug and only their tables and figures."""

    slug: str
    title: str
    about: str
    papers: tuple[str, ...]
    tables: tuple[Table, ...]
    figures: tuple[Figures, ...] = ()


RUN_HEADING = "{model} on {dataset}, seed {seed}"  # the heading of a per-run group of figures
BEYOND_THE_PAPERS = "beyond-the-papers"  # the page the extension studies share with the debate matrix


@dataclass(frozen=True)
class Paper:
    """A paper or extension study: a package `attnexp.papers.<key>` whose `__init__` holds this record
    (found there, `attnexp.papers`) and one rule file `rules/<key>.smk`. What its rule file makes is
    read by convention: `TARGETS[key]` its targets, and, once it has any, its claims `claims_file`
    and, where it has debate-matrix rows (`measures`), its `debate_cells_file`."""

    key: str  # its package, rule file, config section and experiment name
    title: str  # as messages name it
    requirements: tuple[tuple[str, str], ...]  # (spec capability, what it means) its models need
    tasks: tuple[str, ...] | None = None  # the dataset tasks it is defined for; None: every task
    anchors: dict[str, Protocol] = field(default_factory=dict)  # the claims' `paper` value -> its protocol
    tolerance_bases: tuple[tuple[str, str, str], ...] = ()  # (table, quantity prefix, why the tolerance is what it is)
    # its finding claims (`attnexp.claims.finding`), in the order and words "What we found" states them
    findings: tuple[Finding, ...] = ()
    # the claims' `table` value -> where in the paper (or its repository) the published numbers of those rows are
    locations: dict[str, str] = field(default_factory=dict)
    measures: dict[str, tuple[str, str]] = field(
        default_factory=dict
    )  # debate-matrix row -> (what it is, the reading for attention)
    config_problems: Callable[[dict], list[str]] | None = None  # its section's checks beyond the schema
    page: Page | None = (
        None  # where its tables and figures are published (`attnexp.publish`); `papers` filled from `anchors`
    )
    # where it comes among the papers (ascending): the order of their claims, debate-matrix rows and pages
    order: int = 1000
    # its runs are narrowed by a config section `<key>:` with `datasets` / `models`; False: its rule file
    # derives them (the zoo: every dataset that trains a zoo model)
    selected_in_config: bool = True

    @property
    def citation(self) -> str | None:
        """The `paper` value of its own claims (its first anchor), which its tolerance bases are for."""
        return next(iter(self.anchors), None)

    @property
    def claims_file(self) -> str:
        """Its claims (`attnexp.claims`), which `tabulate_claims` stacks."""
        return f"results/claims/{self.key}.csv"

    @property
    def debate_cells_file(self) -> str | None:
        """Its numbers of the debate matrix (`attnexp.experiments.debate_matrix.write_debate_cells`), None
        where it has no rows there."""
        return f"results/debate_cells/{self.key}.csv" if self.measures else None


@dataclass(frozen=True)
class JobSettings:
    """The config keys one kind of job depends on, declared once beside the code that reads them.
    Its rule passes `of(config)` as the job's `settings` param, so that the job re-runs when one of
    these changes and never for another key; the code reads its settings from that dict alone.
    `keys` are read from the config section `section`, in this order; `borrowed` are keys of other
    sections, (name the code reads, "section.key"), after them."""

    section: str
    keys: tuple[str, ...]
    borrowed: tuple[tuple[str, str], ...] = ()

    def of(self, config: Mapping) -> dict:
        settings = {key: config[self.section][key] for key in self.keys}
        for name, source in self.borrowed:
            section, key = source.split(".")
            settings[name] = config[section][key]
        return settings

    def names(self) -> tuple[str, ...]:
        """The keys of the settings dict (`of`)."""
        return self.keys + tuple(name for name, _ in self.borrowed)


_OWN_ATTENTION = ("has_own_attention", "its own trained attention")
PRETRAINED_VECTORS = ("fasttext_simple", "glove840b")  # our `embeddings=` values of the papers' pretrained kind
