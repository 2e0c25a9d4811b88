"""The scorecard's rules for one claim row: its outcome (`outcome`), where the paper says what it
compares (`location`, `statement`), why its tolerance is what it is, the named cause of a miss and
the setting its number was made at.

`tolerance_basis`, why a tolerance is what it is:
- a row with a tolerance: the first entry of `TOLERANCE_BASES` whose paper (None: any), table and
  quantity prefix fit the row; none fits: "unregistered: …", which asks for an entry in the paper's
  descriptor (`Paper.tolerance_bases`).
- a row without one: `none: reference only` (a published value kept as a sanity target),
  `none: no published value` (`not public`), else `qualitative` (a sign or an ordering of ours).

`cause`, for a missed row every rule that applies, in this order, joined by "; ". The rules read the
row's setting (`attnexp.claims.Setting`: the columns `select_on`, `embeddings`, `stand_ins`,
`stands_for`, `deviations`, which each paper's claims write), never the condition's words:
1. `model outside the paper (<model>)`: the paper's claims were made on other models
   (`PAPERS[paper].models`, e.g. a W&P claim on the Transformer).
2. `data stand-in (<what>)`: `stand_ins` names stand-in files that change the data, or `stands_for`
   names the paper's dataset ours stands for. A stand-in that only repackages the same data
   (`same_data`: config `substitute.splits_affected: []`, `same_data_stand_ins`) is no cause.
3. embeddings: `embeddings` is not what the paper used (`PAPERS[paper]`): `embeddings (D-EMB)` for our
   word2vec instead of the paper's pretrained vectors, `embeddings (<what stands in>, D-EMB)` for
   pretrained vectors that stand in for the paper's (`STAND_IN_VECTORS`), else `embeddings (<ours>;
   the paper: <theirs>)`; never where ours are the paper's own for that dataset
   (`Protocol.own_embeddings`: J&W's bAbI models start from random embeddings).
4. `checkpoint selection (D-SEL)`: a qualitative claim (no tolerance) whose `select_on` is not the
   paper's. A numeric comparison never: its verdict is `not comparable` when the selections differ.
5. each id of `deviations`, by its kind (`DEVIATION_KINDS`; any other id: `protocol deviation (D-…)`).
None applies: `unexplained`. A `not comparable` row's cause is its `deviations`, named the same way
(else the reason its verdict gives); the cause of every other row is empty.

`cause_status`: a named cause of a miss is `suspected` (the setting makes it likely); it is
`established` only by a run that removes it and then matches (`attnexp.publish` with the
embeddings comparison's companion run). `setting`: for every row, `paper's` where our number was
made at the paper's own setting, else the same rules' list of how it differs; the summary counts
matches at the paper's setting apart from matches under a stand-in.

The rules read the row alone (paper, dataset, model, tolerance, verdict, setting) and the registries
below. A paper missing from `PAPERS` gets the setting-based rules only (2 and 5) and the role
"unregistered".
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

import pandas as pd

from attnexp.claims import SETTING_COLUMNS
from attnexp.papers import PRETRAINED_VECTORS, Protocol, RegistryView
from attnexp.papers.descriptor import Finding

PAPERS_SETTING = "paper's"  # the `setting` of a row made at the paper's own setting
MATCHED, MISSED, INCONCLUSIVE, NOT_COMPARED = "matched", "missed", "inconclusive", "not compared"


# pretrained vectors that stand in for the papers' files (config `embeddings.source`), in words
STAND_IN_VECTORS = {"glove6b50": "GloVe 6B 50-d for the paper's 300-d pretrained vectors"}
# the claims' `paper` value -> what its numbers were made with (each paper's `anchors`, `attnexp.papers`)
PAPERS: Mapping[str, Protocol] = RegistryView(
    lambda papers: {citation: protocol for paper in papers.values() for citation, protocol in paper.anchors.items()}
)

# (paper or None for any, table, quantity prefix) -> why the tolerance is what it is: each paper's own,
# then those of the tables every paper shares; the first entry that fits a row is its basis
SHARED_TOLERANCE_BASES = {
    (
        None,
        "test performance",
        "",
    ): "claims.performance_tolerance: J&W's own test- and dev-selected BiLSTMs differ by up to 0.026 in a binary-task test metric (their repository, commits 675b0dc and 425a89a)",
}
# (paper, table, quantity prefix) of every registered finding (`Paper.findings`): what tells a finding
# claim from a number pooled over seeds, which has no single seed either
FINDINGS: Mapping[tuple[str, str, str], Finding] = RegistryView(
    lambda papers: {(paper.citation, f.table, f.prefix): f for paper in papers.values() for f in paper.findings}
)
# (paper, claims' table value) -> where in the paper its published numbers are (`Paper.locations`)
LOCATIONS: Mapping[tuple[str, str], str] = RegistryView(
    lambda papers: {
        (paper.citation, table): where for paper in papers.values() for table, where in paper.locations.items()
    }
)
# a model whose test performance is below this share of the paper's does not learn the task: its other
# claims are not comparable (SNLI trained on its dev pairs reaches 0.59 of accuracy where J&W report 0.78)
COMPETENCE_FLOOR = 0.8
PERFORMANCE_TABLE = "test performance"
TOLERANCE_BASES: Mapping[tuple[str | None, str, str], str] = RegistryView(
    lambda papers: (
        {
            (paper.citation, table, prefix): basis
            for paper in papers.values()
            for table, prefix, basis in paper.tolerance_bases
        }
        | SHARED_TOLERANCE_BASES
    )
)

# a D-… id's kind when it names one of the causes above (docs/decisions.md); any other id is a protocol deviation
DEVIATION_KINDS = {
    "D-EMB": "embeddings",
    "D-SEL": "checkpoint selection",
    "D-DATA": "data stand-in",
    "D-IMDB": "data stand-in",
    "D-SS-IMDB": "data stand-in",
    "D-SS-YAHOO": "data stand-in",
    "D-SS-BUDGET": "budget cut",
}


def outcome(verdict: str) -> str:
    if verdict in ("match", "holds"):
        return MATCHED
    if verdict in ("differs", "does not hold"):
        return MISSED
    if verdict == "inconclusive":
        return INCONCLUSIVE
    return NOT_COMPARED


def registered_finding(row) -> Finding | None:
    """The registered finding (`Paper.findings`) a claim row tests, if any."""
    for (paper, table, prefix), found in FINDINGS.items():
        if row["paper"] == paper and row["table"] == table and str(row["quantity"]).startswith(prefix):
            return found
    return None


def location(row) -> str:
    """Where the paper says what the row compares: its finding's location, else its table's
    (`Paper.locations`), else the row's `table` value itself."""
    found = registered_finding(row)
    return found.location if found else LOCATIONS.get((row["paper"], row["table"]), str(row["table"]))


def statement(row) -> str:
    """What the paper says, in our words: the finding's statement, else the published value of the quantity."""
    found = registered_finding(row)
    if found:
        return found.statement + (f" (exceptions the paper names: {found.exceptions})" if found.exceptions else "")
    if _missing(row["published"]):
        return str(row["quantity"])
    return f"{row['quantity']} = {row['published']:g} in the paper"


def incompetent(claims: pd.DataFrame, floor: float = COMPETENCE_FLOOR) -> dict[tuple[str, str], str]:
    """(dataset, model) -> why the model does not learn the task: a test-performance row whose seed
    mean is below `floor` of the paper's value."""
    rows = claims[(claims["table"] == PERFORMANCE_TABLE) & claims["published"].notna() & claims["ours"].notna()]
    failing = {}
    for r in rows.itertuples():
        if float(r.ours) < floor * float(r.published):
            failing.setdefault(
                (r.dataset, r.model),
                f"the model does not learn the task ({r.quantity} {float(r.ours):.3f}, below {floor:g} of the paper's "
                f"{float(r.published):.3f})",
            )
    return failing


def not_learning(row, failing: dict[tuple[str, str], str]) -> str | None:
    """Why a row's model (each model of a "a vs b" row) does not learn the task; None if it does."""
    if row["table"] == PERFORMANCE_TABLE:
        return None
    for model in str(row["model"]).split(" vs "):
        if (row["dataset"], model) in failing:
            return failing[(row["dataset"], model)]
    return None


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value == ""


def tolerance_basis(row) -> str:
    if _missing(row["tolerance"]):
        if row["verdict"] == "reference only":
            return "none: reference only"
        if row["verdict"].startswith("not public"):
            return "none: no published value"
        if row["verdict"].startswith("not in the paper"):
            return "none: not in the paper"
        return "qualitative"
    for (paper, table, prefix), basis in TOLERANCE_BASES.items():
        if paper in (None, row["paper"]) and row["table"] == table and str(row["quantity"]).startswith(prefix):
            return basis
    return f"unregistered: no entry for ({row['paper']!r}, {row['table']!r}) in its paper's tolerance_bases (attnexp.papers)"


def _named(deviations: str) -> list[str]:
    """The `deviations` column's D-… ids, each named by its kind."""
    ids = [d.strip() for d in deviations.split(",") if d.strip()]
    return [f"{DEVIATION_KINDS.get(d, 'protocol deviation')} ({d})" for d in dict.fromkeys(ids)]


def _setting(row) -> dict[str, str]:
    return {column: "" if _missing(row.get(column)) else str(row[column]) for column in SETTING_COLUMNS}


def same_data_stand_ins(config: dict) -> frozenset[str]:
    """The stand-in files of `config` that repackage the canonical data without changing a split
    (`substitute.splits_affected: []`, e.g. a deterministic repack of the same archive)."""
    files = set()
    for dataset in (config.get("datasets") or {}).values():
        for source in dataset.get("sources") or []:
            substitute = source.get("substitute") or {}
            if substitute and not substitute.get("splits_affected"):
                files |= {f["file"] for f in substitute.get("files", [])}
    return frozenset(files)


def cause(row, same_data: frozenset[str] = frozenset()) -> str:
    """The named cause of a missed or not-comparable row (module docstring); empty otherwise."""
    verdict, setting = row["verdict"], _setting(row)
    if verdict.startswith("not comparable"):
        return "; ".join(_named(setting["deviations"])) or verdict.split(":", 1)[-1].strip()
    if outcome(verdict) != MISSED:
        return ""
    return "; ".join(setting_differences(row, same_data)) or "unexplained"


def paper_setting(row, same_data: frozenset[str] = frozenset()) -> str:
    """`paper's` where the row's number was made at the paper's own setting, else how it differs
    (the cause rules, read for any row): what a match under a stand-in is a match under."""
    return "; ".join(setting_differences(row, same_data)) or PAPERS_SETTING


def setting_differences(row, same_data: frozenset[str] = frozenset()) -> list[str]:
    """How the row's setting differs from the paper's: rules 1-5 of the module docstring, in order."""
    setting = _setting(row)
    protocol, causes = PAPERS.get(row["paper"]), []
    if (
        protocol
        and protocol.models
        and not all(re.fullmatch(protocol.models, m) for m in str(row["model"]).split(" vs "))
    ):
        causes.append(f"model outside the paper ({row['model']})")
    changing = [f.strip() for f in setting["stand_ins"].split(",") if f.strip() not in ("none", "", *same_data)]
    if changing:
        causes.append(f"data stand-in ({row['dataset']}: {', '.join(changing)})")
    if setting["stands_for"]:
        causes.append(f"data stand-in (our {row['dataset']} for the paper's {setting['stands_for']})")
    ours = setting["embeddings"]
    own = (protocol.own_embeddings or {}).get(row["dataset"]) if protocol else None
    if protocol and protocol.embeddings and ours and ours not in protocol.embeddings and ours != own:
        word2vec_for_pretrained = ours.startswith("word2vec") and protocol.embeddings == PRETRAINED_VECTORS
        if word2vec_for_pretrained:
            causes.append("embeddings (D-EMB)")
        elif ours in STAND_IN_VECTORS and protocol.embeddings == PRETRAINED_VECTORS:
            causes.append(f"embeddings ({STAND_IN_VECTORS[ours]}, D-EMB)")
        else:
            causes.append(f"embeddings ({ours}; the paper: {protocol.embeddings_label})")
    if (
        protocol
        and protocol.select_on
        and _missing(row["tolerance"])
        and (setting["select_on"] or protocol.select_on) != protocol.select_on
    ):
        causes.append("checkpoint selection (D-SEL)")
    causes += _named(setting["deviations"])
    return list(dict.fromkeys(causes))
