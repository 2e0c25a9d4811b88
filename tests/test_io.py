"""attnexp.io: `write_records_csv` writes the bytes `write_csv` writes for the same records as a
pandas table, without pandas (the model jobs' start-up); outputs get the umask's mode; a killed
job's temp files go when the output is written again."""

from __future__ import annotations

import os
import stat

import numpy as np
import pandas as pd
import pytest

from attnexp import io

CASES = {
    "every kind": [
        {"id": "a,b", "length": 3, "predicted": np.int64(1), "score": 0.123456789, "nan": float("nan"), "flag": True, "text": 'say "hi"'},
        {"id": "c\nd", "length": 12, "predicted": np.int64(0), "score": 1e-7, "nan": float("inf"), "flag": False, "text": ""},
        {"id": "e", "length": 0, "predicted": np.int64(-3), "score": -0.0, "nan": -float("inf"), "flag": True, "text": "ü"},
        {"id": "f", "length": 2**40, "predicted": np.int64(2), "score": 123456789.0, "nan": np.float64(2.5), "flag": True, "text": " x"},
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
