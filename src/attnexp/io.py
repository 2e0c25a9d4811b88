"""Writing files so that nothing is ever left half-written: temp file in the same folder, then rename."""

from __future__ import annotations

import contextlib
import csv
import glob
import hashlib
import io as _io
import json
import math
import numbers
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# The modes a plain open() or mkdir() gives here; mkstemp's 0600 (mkdtemp's 0700) would otherwise
# survive the rename, and on a shared or cluster filesystem no one else could read the outputs.
_UMASK = _umask()
FILE_MODE = 0o666 & ~_UMASK
DIR_MODE = 0o777 & ~_UMASK


def temp_beside(path: Path, prefix: str, suffix: str) -> Path:
    """A new, empty, dot-named temp file in `path`'s folder (so the final rename is atomic, and globs
    and Snakemake skip it), with the umask's mode. Temp files of the same name pattern, left by a job
    killed before it could remove them, are removed first: one job writes one output."""
    path.parent.mkdir(parents=True, exist_ok=True)
    for stale in path.parent.glob(f"{glob.escape(prefix)}*{glob.escape(suffix)}"):
        stale.unlink(missing_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=path.parent)
    os.fchmod(fd, FILE_MODE)
    os.close(fd)
    return Path(tmp)


# A sealed file's content digest, recorded beside it when it is written, in `sha256sum`'s format (so
# `sha256sum -c gradient.jsonl.sha256` in its folder checks it by hand too); `verify_seal` checks it on read.
SEAL_SUFFIX = ".sha256"


def seal_path(path: str | os.PathLike) -> Path:
    """The seal (digest sidecar) of `path`: `path` with `.sha256` appended."""
    path = Path(path)
    return path.with_name(path.name + SEAL_SUFFIX)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, seal: bool = False) -> Iterator[Path]:
    """Yield a temporary path beside `path`; rename it onto `path` only if the block succeeds.
    The temp name keeps `path`'s suffix, because some writers (np.save, savefig) go by it. With
    `seal`, the content's digest is written to `seal_path(path)` before the rename, so that a file
    in place always has its seal."""
    path = Path(path)
    tmp = temp_beside(path, f".{path.stem}.tmp.", path.suffix)
    try:
        yield tmp
        if seal:
            write_seal(path, content=tmp)
        os.replace(tmp, path)
    except OSError as err:
        if err.errno is not None and err.filename in (None, str(tmp)):  # name the output, not its temp file
            raise OSError(err.errno, err.strerror, str(path)) from err
        raise
    finally:
        tmp.unlink(missing_ok=True)


def file_digests(path: str | os.PathLike, algorithms: Iterable[str]) -> dict[str, str]:
    """Hex digests of `path` for several algorithms (any hashlib knows) in a single read of the file."""
    hashers = {name: hashlib.new(name) for name in algorithms}
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):  # 1 MiB: few syscalls, bounded memory
            for hasher in hashers.values():
                hasher.update(chunk)
    return {name: hasher.hexdigest() for name, hasher in hashers.items()}


def file_digest(path: str | os.PathLike, algorithm: str = "sha256") -> str:
    """Hex digest of the file at `path`."""
    return file_digests(path, [algorithm])[algorithm]


def verify_digest(path: str | os.PathLike, recorded: str | None, record: str) -> None:
    """Refuse a file whose sha256 differs from the one `record` (a file name) holds for it, recorded
    when it was written: one ValueError naming the file and what to do."""
    if recorded is None:
        raise ValueError(
            f"{path}: {record} records no digest for it (written by an older attnexp); delete the folder and rerun"
        )
    if file_digest(path) != recorded:
        raise ValueError(
            f"{path}: damaged, it does not match the digest {record} recorded when it was written; delete the folder and rerun"
        )


def write_seal(path: str | os.PathLike, content: str | os.PathLike | None = None) -> None:
    """Write `path`'s seal: the sha256 of `content` (default: `path` itself) as `sha256sum` writes it,
    so that `sha256sum FILE > FILE.sha256` seals a file by hand just the same."""
    path = Path(path)
    write_text(seal_path(path), f"{file_digest(content or path)}  {path.name}\n")


def verify_seal(path: str | os.PathLike, content: bytes | None = None) -> None:
    """Refuse a sealed file whose content differs from the digest its seal recorded when it was
    written, or that has no seal: one ValueError naming the file and what to do. `content`: the
    file's bytes, where the caller has read them already (then the file is not read again)."""
    path, seal = Path(path), seal_path(path)
    try:
        recorded = seal.read_text(encoding="utf-8").split()[0]
    except FileNotFoundError:
        raise ValueError(
            f"{path}: no {seal.name} beside it, the digest written with it (written by an older attnexp, or copied without it); delete it and rerun"
        ) from None
    except (IndexError, UnicodeDecodeError):
        raise ValueError(f"{seal}: not a sha256sum line; delete {path.name} and its seal, and rerun") from None
    actual = file_digest(path) if content is None else hashlib.sha256(content).hexdigest()
    if actual != recorded:
        raise ValueError(
            f"{path}: damaged, it does not match the digest {seal.name} recorded when it was written; delete it and rerun"
        )


def _read_bytes(path: Path, sealed: bool) -> bytes:
    """A file's bytes, read once; `sealed`: checked against its seal (`verify_seal`) on those bytes."""
    content = path.read_bytes()
    if sealed:
        verify_seal(path, content)
    return content


def write_text(path: str | os.PathLike, text: str, seal: bool = False) -> None:
    with atomic_path(path, seal) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(path: str | os.PathLike, obj, seal: bool = False) -> None:
    """Deterministic JSON: sorted keys are NOT forced, so callers control field order; fixed indent."""
    write_text(path, json.dumps(obj, indent=2, ensure_ascii=False) + "\n", seal)


def write_jsonl(path: str | os.PathLike, records: Iterable[dict], seal: bool = False) -> None:
    with atomic_path(path, seal) as tmp, open(tmp, "w", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")


def read_json(path: str | os.PathLike, sealed: bool = False):
    """A JSON file; `sealed`: verified against its seal first (`verify_seal`)."""
    path = Path(path)
    try:
        return json.loads(_read_bytes(path, sealed).decode("utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not valid JSON ({err.msg}, line {err.lineno})") from None
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not valid JSON (not UTF-8 text: byte {err.start})") from None


def read_jsonl(path: str | os.PathLike, sealed: bool = False) -> list[dict]:
    """A JSON-lines file as a list of records; `sealed`: verified against its seal first."""
    path = Path(path)
    lines = _read_bytes(path, sealed).decode("utf-8").split("\n")  # not splitlines: U+2028 may be in a token
    if lines[-1] == "":
        lines.pop()
    records = []
    for line_no, line in enumerate(lines, 1):
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}:{line_no}: not a JSON object per line ({err.msg})") from None
    return records


def write_csv(path: str | os.PathLike, table, seal: bool = False) -> None:
    """A pandas table as CSV, floats with 6 significant digits (stable across reruns, readable)."""
    with atomic_path(path, seal) as tmp:
        table.to_csv(tmp, index=False, float_format="%.6g")


def read_table(path: str | os.PathLike, sealed: bool = True, **read_csv_options):
    """A CSV table as a pandas frame, read once; `sealed` (a job's output, the default): verified
    against its seal first."""
    import pandas as pd

    return pd.read_csv(_io.BytesIO(_read_bytes(Path(path), sealed)), **read_csv_options)


def write_records_csv(path: str | os.PathLike, records: list[dict], seal: bool = False) -> None:
    """Records of one shape as CSV, byte for byte what `write_csv(path, pandas.DataFrame(records))`
    writes (header from the keys, integers as integers, floats as %.6g with NaN empty, strings and
    booleans through the same csv quoting), without importing pandas, ~0.2-0.3 s of a model job's
    start-up. Records it cannot type column by column as pandas would (none at all, differing keys,
    a column of mixed or other types) go through pandas itself."""
    columns = list(records[0]) if records else []
    kinds = (
        [_column_kind([r[c] for r in records]) for c in columns] if all(list(r) == columns for r in records) else [None]
    )
    if not records or None in kinds:
        import pandas as pd

        write_csv(path, pd.DataFrame(records), seal)
        return
    formats = {bool: str, int: str, str: str, float: lambda x: "" if math.isnan(x) else f"{x:.6g}"}
    with atomic_path(path, seal) as tmp, open(tmp, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")  # pandas' own settings: QUOTE_MINIMAL, '"' doubled
        writer.writerow(columns)
        formatters = [formats[kind] for kind in kinds]
        writer.writerows([fmt(r[c]) for fmt, c in zip(formatters, columns)] for r in records)


def _column_kind(values: list) -> type | None:
    """bool, int, float or str where every value of a column is one (its pandas dtype: bool, int64,
    float64, or strings), else None. numpy integers count as int and numpy float64 (a float) as
    float; numpy booleans and other numpy floats (float32) count as nothing."""
    for kind, test in (
        (bool, lambda v: type(v) is bool),
        (int, lambda v: isinstance(v, numbers.Integral) and not isinstance(v, bool)),
        (float, lambda v: isinstance(v, float)),
        (str, lambda v: isinstance(v, str)),
    ):
        if all(test(v) for v in values):
            return kind
    return None
