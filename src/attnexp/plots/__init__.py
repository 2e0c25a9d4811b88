"""Figures from the per-instance tables: one house style, and saving that reruns byte for byte. Each
paper's figures are in its package (`attnexp.papers.<paper>.plots`).

A figure is saved as PDF (for the paper) and PNG (for the HTML report). Both are deterministic on
one machine: no creation date in the PDF, no software tag in the PNG, fonts embedded the same way.
"""

from __future__ import annotations

import os
import textwrap

import matplotlib

# Figures are made inside Snakemake jobs without a display; pick the backend before pyplot loads.
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402

from attnexp import io  # noqa: E402

__all__ = ["HOUSE_RC", "use_house_style", "fitted_title", "save_figure"]

# Settings that change the bytes written, fixed whatever the caller's matplotlibrc says.
HOUSE_RC = {
    # Type 3, matplotlib's default: text stays text in the PDF (searchable, copyable); Type 42 (TrueType) would
    # keep it editable in a drawing program but subsets the font with fontTools at 0.3 s a PDF, a fifth of a
    # figure job
    "pdf.fonttype": 3,
    "svg.hashsalt": "attnexp",  # SVG ids are random otherwise
    "svg.fonttype": "path",
    "savefig.bbox": None,  # the figures size themselves (constrained layout); "tight" would vary with labels
    "savefig.transparent": False,
    "savefig.facecolor": "white",
    "savefig.edgecolor": "white",
}


def use_house_style() -> None:
    """Reset matplotlib to its defaults, then the seaborn theme, so no caller's style leaks in."""
    matplotlib.rcdefaults()
    sns.set_theme(style="whitegrid", context="paper", rc=HOUSE_RC)


def fitted_title(fig: plt.Figure, title: str) -> None:
    """`title` as the figure's suptitle, wrapped to the figure's width: a long title on a narrow
    figure (a short sentence's heat map) was cut at both edges."""
    size = plt.rcParams["figure.titlesize"]
    points = matplotlib.font_manager.FontProperties(size=size).get_size_in_points()
    per_line = max(20, int(fig.get_figwidth() * 72 / (0.55 * points)))  # about 0.55 em per character
    fig.suptitle(textwrap.fill(title, per_line))


def save_figure(fig: plt.Figure, pdf_path: str | os.PathLike, png_path: str | os.PathLike) -> None:
    """Write `fig` as PDF and PNG (150 dpi), each atomically, then close it. The layout is computed once,
    for the PDF, and the PNG draws the same one."""
    try:
        with matplotlib.rc_context(HOUSE_RC):
            with io.atomic_path(pdf_path) as tmp:
                fig.savefig(tmp, format="pdf", metadata={"CreationDate": None})
            fig.set_layout_engine("none")  # positions stay where the PDF's layout put them
            with io.atomic_path(png_path) as tmp:
                fig.savefig(tmp, format="png", dpi=150, metadata={"Software": None})
    finally:
        plt.close(fig)
