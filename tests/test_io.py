"""attnexp.io: `write_records_csv` writes the bytes `write_csv` writes for the same records as a
pandas table, without pandas (the model jobs' start-up); outputs get the umask's mode; a killed
job's temp files go when the output is written again."""

from __future__ import annotations

import os
import re
import stat
import subprocess

import numpy as np
import pandas as pd
import pytest

from attnexp import io

CASES = {
    "every kind": [
        {
            "id": "a,b",
            "length": 3,
            "predicted": np.int64(1),
            "score": 0.123456789,
            "nan": float("nan"),
            "flag": True,
            "text": 'say "hi"',
        },
        {
            "id": "c\nd",
            "length": 12,
            "predicted": np.int64(0),
            "score": 1e-7,
            "nan": float("inf"),
            "flag": False,
            "text": "",
        },
        {
            "id": "e",
            "length": 0,
            "predicted": np.int64(-3),
            "score": -0.0,
            "nan": -float("inf"),
            "flag": True,
            "text": "ü",
        },
        {
            "id": "f",
            "length": 2**40,
            "predicted": np.int64(2),
            "score": 123456789.0,
            "nan": np.float64(2.5),
            "flag": True,
            "text": " x",
        },
    ],
    "only NaN": [{"a": float("nan")}, {"a": float("nan")}],
    "one empty string": [{"a": ""}],
    # through pandas itself:
    "no records": [],
    "mixed int and float": [{"a": 1, "b": 1.5}, {"a": 2.0, "b": None}],
    "float32": [{"a": np.float32(0.1)}],
    "numpy bool": [{"a": np.bool_(True)}],
    "differing keys": [{"a": 1}, {"b": 2}],
    "reordered keys": [{"a": 1, "b": 2}, {"b": 3, "a": 4}],
}


@pytest.mark.parametrize("records", CASES.values(), ids=CASES.keys())
def test_write_records_csv_writes_what_pandas_writes(tmp_path, records):
    io.write_records_csv(tmp_path / "ours.csv", records)
    io.write_csv(tmp_path / "pandas.csv", pd.DataFrame(records))
    assert (tmp_path / "ours.csv").read_bytes() == (tmp_path / "pandas.csv").read_bytes()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_outputs_get_the_umasks_mode_not_the_temp_files_private_one(tmp_path):
    text, table = tmp_path / "a.txt", tmp_path / "t.jsonl"
    io.write_text(text, "x\n")
    io.write_jsonl(table, [{"a": 1}])
    expected = 0o666 & ~_umask()
    assert expected != 0o600  # the test would not tell the two apart otherwise
    assert stat.S_IMODE(text.stat().st_mode) == expected and stat.S_IMODE(table.stat().st_mode) == expected


def test_temp_files_left_by_a_killed_job_are_removed_when_the_output_is_written_again(tmp_path):
    stale = [tmp_path / ".model.tmp.k1ll3d.pt", tmp_path / ".model.tmp.zz.pt"]
    for path in stale:
        path.write_bytes(b"")
    other = tmp_path / ".other.tmp.k1ll3d.pt"  # another output's temp file: not this job's
    other.write_bytes(b"")
    with io.atomic_path(tmp_path / "model.pt") as tmp:
        tmp.write_bytes(b"weights")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.tmp.k1ll3d.pt", "model.pt"]


# --------------------------------------------------------------------------------------------------
# seals: the digest a job's output carries beside it


def test_a_sealed_output_carries_its_digest_as_sha256sum_writes_it(tmp_path):
    path = tmp_path / "gradient.jsonl"
    io.write_jsonl(path, [{"id": "a", "gradient": [0.5, -1.0]}], seal=True)
    assert io.seal_path(path) == tmp_path / "gradient.jsonl.sha256"
    assert io.seal_path(path).read_text() == f"{io.file_digest(path)}  gradient.jsonl\n"
    checked = subprocess.run(["sha256sum", "-c", "gradient.jsonl.sha256"], cwd=tmp_path, capture_output=True, text=True)
    assert checked.returncode == 0 and checked.stdout == "gradient.jsonl: OK\n"
    assert io.read_jsonl(path, sealed=True) == [{"id": "a", "gradient": [0.5, -1.0]}]
    io.write_csv(tmp_path / "plain.csv", pd.DataFrame({"a": [1]}))
    assert not io.seal_path(tmp_path / "plain.csv").exists()  # sealing is asked for, output by output


def test_a_sealed_input_changed_or_without_its_seal_is_refused_naming_it(tmp_path):
    path = tmp_path / "table.csv"
    io.write_csv(path, pd.DataFrame({"tau": [0.25, 0.5]}), seal=True)
    assert list(io.read_table(path)["tau"]) == [0.25, 0.5]
    path.write_text(path.read_text().replace("0.25", "0.26"))
    with pytest.raises(
        ValueError,
        match=rf"^{path}: damaged, it does not match the digest table.csv.sha256 recorded when it was written; delete it and rerun$",
    ):
        io.read_table(path)
    io.write_seal(path)  # sealed again by hand (as `sha256sum table.csv > table.csv.sha256` would)
    assert list(io.read_table(path)["tau"]) == [0.26, 0.5]
    io.seal_path(path).write_text("")
    with pytest.raises(ValueError, match=rf"^{io.seal_path(path)}: not a sha256sum line"):
        io.read_table(path)
    io.seal_path(path).unlink()
    with pytest.raises(ValueError, match=rf"^{path}: no table.csv.sha256 beside it"):
        io.read_json(path, sealed=True)


@pytest.mark.parametrize(
    "damage", [lambda text: text[: len(text) // 2], lambda text: "\udcff" + text[1:]], ids=["truncated", "not-utf8"]
)
def test_a_damaged_json_file_is_one_line_naming_it(tmp_path, damage):
    """A truncated stats.json (or one with bytes that are not UTF-8) is a ValueError naming the
    file, which `fail_cleanly` turns into one line, not a decoder's traceback without the file."""
    path = tmp_path / "stats.json"
    io.write_json(path, {"sources": [{"file": "train.csv"}], "files": {"train.jsonl": "0" * 64}})
    path.write_bytes(damage(path.read_text(encoding="utf-8")).encode("utf-8", "surrogateescape"))
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: not valid JSON \(") as err:
        io.read_json(path)
    assert "\n" not in str(err.value)


def test_a_write_that_fails_leaves_neither_the_output_nor_a_seal(tmp_path):
    path = tmp_path / "metrics.json"

    def records():
        yield {"id": "a"}
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        io.write_jsonl(path, records(), seal=True)
    assert sorted(tmp_path.iterdir()) == []
