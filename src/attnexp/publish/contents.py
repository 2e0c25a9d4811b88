"""What is published: the pages (`PAGES`, slug -> `Page`, in page order), each with its papers, its
tables and its key figures, from the papers' descriptors; the page the extension studies share and
the data and models page are defined here; the index (`INDEX`) beside them, and the page each
paper's claims go on (`page_of`)."""

from __future__ import annotations

from dataclasses import replace

from attnexp.papers import RegistryView
from attnexp.papers.descriptor import BEYOND_THE_PAPERS, Page, Table

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

INDEX = "README.md"  # the index page, beside the pages of PAGES


def page_of(paper: str) -> str:
    """The slug of the page that holds `paper`'s claims (a paper on no page: the shared one)."""
    for page in PAGES.values():
        if paper in page.papers:
            return page.slug
    return "beyond-the-papers"
