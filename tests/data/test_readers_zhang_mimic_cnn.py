"""Readers for the Zhang et al. CSVs (Yelp, Amazon, Yahoo), MIMIC-III (Diabetes, Anemia) and CNN, on tiny
fixtures written in the real file formats."""

from __future__ import annotations

import csv
import gzip

import numpy as np
import pytest

from attnexp.data.readers import SourceFiles, cnn, mimic, zhang

# --------------------------------------------------------------------------------------------------
# Zhang et al. CSVs


def _write_csv(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as f:
        csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)


def _zhang_cfg(name, **overrides):
    cfg = {
        "name": name,
        "subsample": {"train": None, "test": None},
        "dev_fraction": 0.5,
        "split_seed": 5,
        "max_sentences": 2,
        "max_sentence_tokens": 6,
    }
    return {**cfg, **overrides}


YELP_TRAIN = [
    ["1", "Bad food."],
    ["5", r"Great place!\n\nWe loved it."],  # escaped blank line -> two sentences
    ["2", 'He said "meh".'],  # on disk: "He said ""meh""." (CSV quote doubling)
    ["5", "One. Two. Three."],  # 3 sentences > max_sentences = 2: dropped from train
    ["1", "This sentence has far too many tokens."],  # 8 tokens > 6: dropped from train
    ["2", "  "],  # empty: dropped
    ["1", "Awful."],
    ["2", "So so."],
]


def test_yelp_labels_ids_text_and_train_only_filter(tmp_path):
    _write_csv(tmp_path / "yelp_review_full_csv/train.csv", YELP_TRAIN)
    _write_csv(tmp_path / "yelp_review_full_csv/test.csv", [["3", "One. Two. Three."], ["4", r"Fine\nhere."]])
    on_disk = (tmp_path / "yelp_review_full_csv/train.csv").read_text().splitlines()
    assert on_disk[1:3] == [r'"5","Great place!\n\nWe loved it."', '"2","He said ""meh""."']
    out = zhang.read(SourceFiles([tmp_path]), _zhang_cfg("yelp"))

    assert set(out) == {"train", "dev", "test"}
    kept = sorted(out["train"] + out["dev"], key=lambda d: d.id)
    assert [d.id for d in kept] == ["train-000000", "train-000001", "train-000002", "train-000006", "train-000007"]
    assert [d.label for d in kept] == [0, 4, 1, 0, 1]  # 1-based -> 0-based
    assert not {d.id for d in out["train"]} & {d.id for d in out["dev"]}
    assert len(out["dev"]) == 2  # round(0.5 * n) per label: label 0 -> 1, label 1 -> 1, label 4 -> 0

    by_id = {d.id: d for d in kept}
    great = by_id["train-000001"]
    assert great.tokens == ["Great", "place", "!", "We", "loved", "it", "."]
    assert great.sentences == [(0, 3), (3, 7)]
    assert by_id["train-000002"].tokens == ["He", "said", '"', "meh", '"', "."]

    # The outlier filter never touches test; "\n" became a real (single) newline: one sentence.
    assert [d.id for d in out["test"]] == ["test-000000", "test-000001"]
    assert [d.label for d in out["test"]] == [2, 3]
    assert out["test"][0].sentences == [(0, 2), (2, 4), (4, 6)]
    assert out["test"][1].tokens == ["Fine", "here", "."]


def test_zhang_filter_bounds_can_be_off(tmp_path):
    _write_csv(tmp_path / "yelp_review_full_csv/train.csv", YELP_TRAIN)
    _write_csv(tmp_path / "yelp_review_full_csv/test.csv", [["3", "Ok."]])
    cfg = _zhang_cfg("yelp", max_sentences=None, max_sentence_tokens=None)
    out = zhang.read(SourceFiles([tmp_path]), cfg)
    assert len(out["train"]) + len(out["dev"]) == 7  # only the empty document is dropped


def test_amazon_ignores_title_and_yahoo_joins_fields(tmp_path):
    _write_csv(tmp_path / "amazon_review_full_csv/train.csv", [["4", "Title words", "Nice."], ["4", "T", "Good."]])
    _write_csv(tmp_path / "amazon_review_full_csv/test.csv", [["1", "Terrible title", "Broke."]])
    out = zhang.read(SourceFiles([tmp_path]), _zhang_cfg("amazon"))
    assert out["test"][0].tokens == ["Broke", "."] and out["test"][0].label == 0
    assert sorted(d.tokens[0] for d in out["train"] + out["dev"]) == ["Good", "Nice"]

    _write_csv(tmp_path / "yahoo_answers_csv/train.csv", [["1", "q", "", "a"], ["1", "q", "c", "a"]])
    _write_csv(
        tmp_path / "yahoo_answers_csv/test.csv",
        [["10", "why is the sky blue", r"I\nwonder", "light scatters"], ["3", "title only", "", ""]],
    )
    cfg = _zhang_cfg("yahoo", max_sentences=None, max_sentence_tokens=None)
    out = zhang.read(SourceFiles([tmp_path]), cfg)
    sky, title_only = out["test"]
    assert sky.label == 9 and title_only.label == 2
    assert sky.tokens == ["why", "is", "the", "sky", "blue", "I", "wonder", "light", "scatters"]
    assert sky.sentences == [(0, 5), (5, 7), (7, 9)]  # title, content, answer
    assert title_only.sentences == [(0, 2)]


def _subsample_ids(tmp_path, seed):
    cfg = _zhang_cfg("yelp", subsample={"train": 5, "test": None}, split_seed=seed, dev_fraction=0.2)
    out = zhang.read(SourceFiles([tmp_path]), cfg)
    return sorted(d.id for d in out["train"] + out["dev"])


def test_zhang_subsample_is_seeded_and_keeps_file_order(tmp_path):
    _write_csv(tmp_path / "yelp_review_full_csv/train.csv", [["1", f"Row {i}."] for i in range(30)])
    _write_csv(tmp_path / "yelp_review_full_csv/test.csv", [["1", "Ok."]])
    expected = sorted(np.random.RandomState(5).permutation(30)[:5])
    assert _subsample_ids(tmp_path, 5) == [f"train-{i:06d}" for i in expected]
    assert _subsample_ids(tmp_path, 5) == _subsample_ids(tmp_path, 5)
    assert _subsample_ids(tmp_path, 6) != _subsample_ids(tmp_path, 5)
    out = zhang.read(
        SourceFiles([tmp_path]), _zhang_cfg("yelp", subsample={"train": 5, "test": None}, dev_fraction=0.2)
    )
    assert [d.id for d in out["train"]] == sorted(d.id for d in out["train"])  # file order kept


def test_zhang_errors_name_file_row_and_key(tmp_path):
    _write_csv(tmp_path / "yelp_review_full_csv/train.csv", [["1", "Fine."], ["2", "extra", "column"]])
    _write_csv(tmp_path / "yelp_review_full_csv/test.csv", [["6", "Label out of range."]])
    files = SourceFiles([tmp_path])
    with pytest.raises(ValueError, match=r"train\.csv:2: expected 2 columns \(label, text\), got 3"):
        zhang.read(files, _zhang_cfg("yelp"))

    _write_csv(tmp_path / "yelp_review_full_csv/train.csv", [["1", "Fine."]])
    with pytest.raises(ValueError, match=r"test\.csv:1: expected a label in 1\.\.5, got '6'"):
        zhang.read(SourceFiles([tmp_path]), _zhang_cfg("yelp"))

    cfg = _zhang_cfg("yelp")
    del cfg["max_sentences"]
    with pytest.raises(KeyError, match="max_sentences"):
        zhang.read(files, cfg)
    with pytest.raises(ValueError, match="subsample"):
        zhang.read(files, _zhang_cfg("yelp", subsample={"train": 5}))
    with pytest.raises(ValueError, match="unknown dataset 'imdb'"):
        zhang.read(files, _zhang_cfg("imdb"))


# --------------------------------------------------------------------------------------------------
# MIMIC-III

NOTE_HEADER = [
    "ROW_ID",
    "SUBJECT_ID",
    "HADM_ID",
    "CHARTDATE",
    "CHARTTIME",
    "STORETIME",
    "CATEGORY",
    "DESCRIPTION",
    "CGID",
    "ISERROR",
    "TEXT",
]


def _note(
    row_id, subject, hadm, text, category="Discharge summary", description="Report", iserror="", date="2150-01-02"
):
    return [row_id, subject, hadm, date, "", "", category, description, "", iserror, text]


NOTES = [
    # Admission 101: the addendum has the lower ROW_ID but comes after the report.
    _note(1, 1, 101, "Addendum: pt stable.", description="Addendum"),
    _note(
        2, 1, 101, "Admission Date:  [**2150-1-1**]\nSeen by Dr. [**Name (NI) 123**]...\n----\nDiabetic, on insulin."
    ),
    _note(3, 1, 101, "NURSING NOTE", category="Nursing"),
    _note(4, 2, 102, "Hypertension, stable."),
    _note(5, 2, 102, "WRONG NOTE", iserror="1"),
    _note(6, 3, 103, "Bleeding after surgery."),
    _note(7, 4, 104, "Kidney disease; diabetes."),
    _note(8, 5, 105, "Both anemias."),
    _note(9, 6, 106, "Acute blood loss."),
    _note(10, 7, 107, "Unspecified anemia, fall."),
    _note(11, 8, 108, "Chronic disease anemia."),
    _note(12, 10, 110, "Hemorrhage."),
    _note(13, 11, 111, "Neoplastic anemia."),
    # 109 has codes but no discharge summary (only a radiology report).
    _note(14, 9, 109, "CXR clear.", category="Radiology"),
]

DIAGNOSES = {  # (SUBJECT_ID, HADM_ID) -> ICD-9 codes without dots
    (1, 101): ["25000", "4019"],
    (2, 102): ["4019"],
    (3, 103): ["25001", "2851"],  # 250.01 is not 250.00
    (4, 104): ["28521", "25000"],
    (5, 105): ["2851", "28529"],  # both anemia kinds: not in Anemia
    (6, 106): ["2851"],
    (7, 107): ["2859", "E8790"],
    (8, 108): ["2852"],
    (9, 109): ["2851"],
    (10, 110): ["2851"],
    (11, 111): ["28522"],
}

CAML_LISTS = {"train": [106, 101, 102, 104], "dev": [105, 103], "test": [108, 107]}


def _write_mimic(root, diagnoses_gz=False, notes=NOTES):
    with open(root / "NOTEEVENTS.csv", "w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows([NOTE_HEADER] + notes)
    rows = [["ROW_ID", "SUBJECT_ID", "HADM_ID", "SEQ_NUM", "ICD9_CODE"]]
    for (subject, hadm), codes in DIAGNOSES.items():
        rows += [[len(rows), subject, hadm, seq, code] for seq, code in enumerate(codes, 1)]
    rows.append([len(rows), 2, 102, "", ""])  # a missing code is skipped
    if diagnoses_gz:
        with gzip.open(root / "DIAGNOSES_ICD.csv.gz", "wt", encoding="utf-8", newline="") as f:
            csv.writer(f).writerows(rows)
    else:
        with open(root / "DIAGNOSES_ICD.csv", "w", encoding="utf-8", newline="") as f:
            csv.writer(f).writerows(rows)
    for split, ids in CAML_LISTS.items():
        (root / f"{split}_50_hadm_ids.csv").write_text("".join(f"{i}\n" for i in ids))
    return SourceFiles([root])


def test_diabetes_labels_splits_and_cleaning(tmp_path):
    out = mimic.read_diabetes(_write_mimic(tmp_path, diagnoses_gz=True), {})
    assert {s: [d.id for d in docs] for s, docs in out.items()} == {
        "train": ["101", "102", "104", "106"],  # (SUBJECT_ID, HADM_ID) order, not list order
        "dev": ["103", "105"],
        "test": ["107", "108"],
    }
    labels = {d.id: d.label for docs in out.values() for d in docs}
    assert labels == {"101": 1, "102": 0, "103": 0, "104": 1, "105": 0, "106": 0, "107": 0, "108": 0}

    first = out["train"][0]
    assert first.tokens == [
        "Admission",
        "Date",
        ":",
        "<DE>",
        "Seen",
        "by",
        "Dr.",
        "<DE>",
        ".",
        "-",
        "Diabetic",
        ",",
        "on",
        "insulin",
        ".",
        "Addendum",
        ":",
        "pt",
        "stable",
        ".",
    ]  # report before addendum; "..." and "----" collapsed; no nursing note
    assert out["train"][1].tokens == ["Hypertension", ",", "stable", "."]  # the ISERROR note is left out


def test_icd9_codes_are_dotted_as_caml_does():
    assert [mimic._dotted(c) for c in ["25000", "2851", "28521", "E8790", "V4501", "250"]] == [
        "250.00",
        "285.1",
        "285.21",
        "E879.0",
        "V45.01",
        "250",
    ]


def test_anemia_labels_and_stratified_splits(tmp_path):
    cfg = {"test_fraction": 1 / 3, "test_seed": 12939, "dev_fraction": 0.5, "split_seed": 13448}
    files = _write_mimic(tmp_path)
    out = mimic.read_anemia(files, cfg)
    labels = {d.id: d.label for docs in out.values() for d in docs}
    # 285.1 -> 1, 285.2x -> 0; 105 (both), 107 (285.9) and 109 (no discharge summary) are out.
    assert labels == {"103": 1, "106": 1, "110": 1, "104": 0, "108": 0, "111": 0}
    for split in ("train", "dev", "test"):
        assert sorted(d.label for d in out[split]) == [0, 1]  # one per class in each split
    assert out == mimic.read_anemia(files, cfg)  # deterministic

    del cfg["test_seed"]
    with pytest.raises(KeyError, match="test_seed"):
        mimic.read_anemia(files, cfg)


def test_mimic_errors(tmp_path):
    files = _write_mimic(tmp_path)
    (tmp_path / "test_50_hadm_ids.csv").write_text("108\n107\n999\n")
    with pytest.raises(ValueError, match=r"1 CAML-listed admissions lack a discharge summary or ICD-9 codes: \[999\]"):
        mimic.read_diabetes(files, {})

    (tmp_path / "test_50_hadm_ids.csv").write_text("108\nabc\n")
    with pytest.raises(ValueError, match=r"test_50_hadm_ids\.csv:2: expected one HADM_ID"):
        mimic.read_diabetes(files, {})

    files = _write_mimic(tmp_path, notes=NOTES + [[15, 1, 101, "2150-01-02", "", "", "Discharge summary", "Report"]])
    with pytest.raises(ValueError, match=r"NOTEEVENTS\.csv:\d+: expected 11 columns \(ROW_ID, .*TEXT\), got 8"):
        mimic.read_diabetes(files, {})


# --------------------------------------------------------------------------------------------------
# CNN (Chen et al. 2016)


def _cnn_example(i):
    question = f"@entity{i} met @placeholder in @entity9 ."
    passage = f"( @entity{i} ) -- @entity{i} met @entity{i + 1} in @entity9 on monday ."
    return f"{question}\n@entity{i + 1}\n{passage}\n\n"


def test_cnn_reads_pretokenised_examples(tmp_path):
    for split in ("train", "dev", "test"):
        text = "".join(_cnn_example(i) for i in range(3))
        if split == "test":
            text = text.rstrip("\n") + "\n"  # no blank line after the last example
        (tmp_path / "cnn").mkdir(exist_ok=True)
        (tmp_path / "cnn" / f"{split}.txt").write_text(text)
    out = cnn.read(SourceFiles([tmp_path]), {})
    for split in ("train", "dev", "test"):
        assert [d.id for d in out[split]] == [f"{split}-000000", f"{split}-000001", f"{split}-000002"]
        assert [d.label for d in out[split]] == ["@entity1", "@entity2", "@entity3"]
    doc = out["dev"][0]
    assert doc.tokens == [
        "(",
        "@entity0",
        ")",
        "--",
        "@entity0",
        "met",
        "@entity1",
        "in",
        "@entity9",
        "on",
        "monday",
        ".",
    ]
    assert doc.sentences == [(0, 12)]
    assert doc.question == ["@entity0", "met", "@placeholder", "in", "@entity9", "."]


def test_cnn_malformed_example(tmp_path):
    (tmp_path / "cnn").mkdir()
    for split in ("train", "dev"):
        (tmp_path / "cnn" / f"{split}.txt").write_text(_cnn_example(0))
    (tmp_path / "cnn" / "test.txt").write_text(_cnn_example(0) + "a question\n\npassage without answer\n\n")
    with pytest.raises(ValueError, match=r"test\.txt:5: expected an example as 4 lines"):
        cnn.read(SourceFiles([tmp_path]), {})

    (tmp_path / "cnn" / "test.txt").write_text("q @placeholder .\n@entity7\n@entity1 said .\n\n")
    with pytest.raises(ValueError, match=r"test\.txt:1: the answer '@entity7' does not occur in the passage"):
        cnn.read(SourceFiles([tmp_path]), {})
