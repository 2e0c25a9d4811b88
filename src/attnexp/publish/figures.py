"""Figures: which of a run's PNGs a page shows (`figure_groups`: the first seed of each model, in the order
of the datasets and models, at most `Figures.limit`), each re-encoded small and without metadata
(`small_png`) under a flat name (`figure_name`)."""

from __future__ import annotations

import re
from io import BytesIO

from attnexp.papers.descriptor import Figures

MAX_PNG_BYTES = 200_000
MAX_PNG_WIDTH = 1600


def figure_pattern(template: str) -> re.Pattern:
    regex = re.escape(template)
    for key in ("dataset", "model"):
        regex = regex.replace(re.escape("{" + key + "}"), f"(?P<{key}>[^/]+)")
    return re.compile(regex.replace(re.escape("{seed}"), r"(?P<seed>\d+)") + "$")


def figure_groups(figures: Figures, pngs: list[str], datasets: list[str]) -> tuple[list[tuple[dict, list[str]]], int]:
    """The groups shown (wildcards, files in `figures.files` order: one seed per model, the first) and
    how many more there are."""
    patterns = [figure_pattern(f) for f in figures.files]
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


def figure_name(png: str) -> str:
    return "figures/" + png[: -len(".png")].replace("/", "-") + ".png"
