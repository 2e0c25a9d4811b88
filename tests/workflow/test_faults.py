"""Fault injection: a training, an explanation and an experiment job of a small run killed (SIGKILL,
SIGTERM) at several points, a write that fails with "No space left on device", and every kind of
damaged input a job reads. Each case asserts that nothing damaged or partial is trusted (no output of
the broken job exists, no temp file outlives the recovery), that a fault a job can report is one
`error:` line naming the file, and that the next run (after removing a damaged input, as the error
says) finishes with outputs byte-identical to an unbroken run. The faults are injected from outside
the code (`fault_hook/sitecustomize.py`), never by filling a disk. The module's last test reports the
counts: faults injected, survived, outputs lost."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
HOOK = Path(__file__).resolve().parent / "fault_hook"
DEFAULT_PROFILE = REPO / "profiles" / "default"
RUN = "synthetic/lstm-tanh/seed10"
MODEL = f"results/models/{RUN}/model.pt"
GRADIENT = f"results/explain/{RUN}/gradient.jsonl"
METRICS = f"results/models/{RUN}/metrics.json"
PERMUTATION = f"results/jain_wallace/{RUN}/permutation.csv"
CORRELATIONS = f"results/jain_wallace/{RUN}/correlations.csv"  # reads the explanation files
TABLE2 = "results/tables/jain_wallace_table2.csv"  # reads the correlation tables and metrics.json
TARGETS = (MODEL, GRADIENT, PERMUTATION, CORRELATIONS, TABLE2)
# what a target's job writes besides it (removed with it so that the job runs again)
OUTPUTS = {
    MODEL: (MODEL, METRICS, f"results/models/{RUN}/timing.json"),
    GRADIENT: (GRADIENT,),
    PERMUTATION: (PERMUTATION,),
    CORRELATIONS: (CORRELATIONS,),
    TABLE2: (TABLE2,),
}
DOWNSTREAM = {
    MODEL: TARGETS,
    GRADIENT: (GRADIENT, CORRELATIONS, TABLE2),
    PERMUTATION: (PERMUTATION,),
    CORRELATIONS: (CORRELATIONS, TABLE2),
    TABLE2: (TABLE2,),
}
# The quick preset cut to one small model and the jobs this module breaks
OVERLAY = {
    "datasets_enabled": ["synthetic"],
    "train": {"seeds": [10], "select_on": "dev"},
    "datasets": {
        "synthetic": {"generator": {"sizes": {"train": 600, "dev": 100, "test": 60}}, "models": ["lstm-tanh"]},
    },
    "jain_wallace": {"datasets": ["synthetic"], "models": ["lstm-tanh"]},
    "serrano_smith": {"datasets": [], "models": []},
    "wiegreffe_pinter": {"datasets": [], "models": [], "table2_only": []},
    "faithfulness": {"datasets": [], "models": []},
    "attention_attribution": {"datasets": []},
}
SCRIPT = {
    MODEL: r"\.train_model\.py$",
    GRADIENT: r"\.explain\.py$",
    PERMUTATION: r"\.jw_permutation\.py$",
    CORRELATIONS: r"\.jw_correlations\.py$",
    TABLE2: r"\.jw_tables\.py$",
}
TEMP = {
    MODEL: r"write:^\.model\.tmp\..*\.pt$",
    GRADIENT: r"write:^\.gradient\.tmp\..*\.jsonl$",
    PERMUTATION: r"write:^\.permutation\.tmp\..*\.csv$",
    CORRELATIONS: r"write:^\.correlations\.tmp\..*\.csv$",
    TABLE2: r"write:^\.jain_wallace_table2\.tmp\..*\.csv$",
}

COUNTS = {"injected": 0, "survived": 0, "outputs lost": 0}


def snakemake(
    workdir: Path,
    *targets: str,
    fault: dict | None = None,
    threads: int | None = None,
    dry: bool = False,
    profile: str = "none",
    unlock: bool = False,
) -> subprocess.CompletedProcess:
    """A Snakemake run of the small config in `workdir`; `profile`: its workflow profile (`none`, or
    the path of one; the damaged-input cases use the default profile, as a user's run does);
    `unlock`: Snakemake's `--unlock` of the folder instead."""
    env = dict(os.environ)
    env.pop("ATTNEXP_FAULT_SCRIPT", None)
    if fault:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HOOK), env.get("PYTHONPATH")]))
        env.update({f"ATTNEXP_FAULT_{key.upper()}": value for key, value in fault.items()})
    overlay = workdir.parent / f"{workdir.name}.overlay.json"
    overlay.write_text(json.dumps(OVERLAY | ({"train": OVERLAY["train"] | {"threads": threads}} if threads else {})))
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(REPO / "Snakefile"),
        "--workflow-profile",
        profile,
        "--cores",
        "1",
        "--directory",
        str(workdir),
        "--configfile",
        str(REPO / "presets" / "quick.yaml"),
        str(overlay),
        *(["-n"] if dry else []),
        *(["--unlock"] if unlock else []),
        "--",
        *(targets or TARGETS),
    ]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)


def digests(root: Path) -> dict[str, str]:
    return {t: hashlib.sha256((root / t).read_bytes()).hexdigest() for t in TARGETS if (root / t).exists()}


def temp_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in (root / "results").rglob(".*tmp*"))


def error_lines(result: subprocess.CompletedProcess) -> list[str]:
    """The console's `error:` lines, each without the ` [log: <the job's log>]` a job's line ends with."""
    return sorted(
        {
            re.sub(r" \[log: [^]]+\]$", "", line)
            for line in (result.stdout + result.stderr).splitlines()
            if line.startswith("error: ")
        }
    )


def fault_lines(result: subprocess.CompletedProcess) -> list[str]:
    """What the console shows after the job table, less the progress of the jobs that ran."""
    lines = (result.stdout + result.stderr).splitlines()
    after = lines[next(i for i, line in enumerate(lines) if line.startswith("total ")) + 1 :]
    return [line for line in after if line.strip() and not re.match(r"^(\d+ of \d+ steps|\[)", line)]


def logs_named(result: subprocess.CompletedProcess) -> list[str]:
    """The logs the console's `error:` lines name."""
    return sorted(set(re.findall(r"^error: .* \[log: ([^]]+)\]$", result.stdout + result.stderr, re.M)))


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """An unbroken run: the outputs every recovery must reproduce byte for byte."""
    root = tmp_path_factory.mktemp("faults") / "reference"
    result = snakemake(root)
    assert result.returncode == 0, result.stderr[-3000:]
    return root


def broken_copy(reference: Path, tmp_path: Path, target: str) -> Path:
    """The reference run with `target`'s job (and what depends on it) to be run again."""
    root = tmp_path / "run"
    shutil.copytree(reference, root, symlinks=True)
    for output in DOWNSTREAM[target]:
        for path in OUTPUTS[output]:
            (root / path).unlink()
    return root


def recovered(reference: Path, root: Path) -> None:
    """The next run finishes, with the reference's bytes and no temp file left; counted."""
    result = snakemake(root)
    assert result.returncode == 0, result.stderr[-3000:]
    lost = [t for t in TARGETS if digests(root).get(t) != digests(reference)[t]]
    COUNTS["outputs lost"] += len(lost)
    assert not lost, f"outputs differ from the unbroken run: {lost}"
    assert temp_files(root) == []
    COUNTS["survived"] += 1


SIGNALS = [
    (MODEL, "log:^epoch 1/", "kill"),  # SIGKILL during training
    (MODEL, "log:^epoch 2/", "term"),  # SIGTERM during training, after epoch 1's snapshot: the rerun resumes
    (MODEL, r"write:^\.\.model\.tmp\..*\.resume$", "kill"),  # SIGKILL inside the first snapshot's write
    (MODEL, TEMP[MODEL], "kill"),  # SIGKILL inside torch.save, the checkpoint half written
    (MODEL, TEMP[MODEL], "term"),
    (MODEL, "log:^selected epoch", "kill"),  # after every output is written, before the job ends
    (GRADIENT, TEMP[GRADIENT], "kill"),
    (GRADIENT, TEMP[GRADIENT], "term"),
    (PERMUTATION, TEMP[PERMUTATION], "kill"),
    (PERMUTATION, TEMP[PERMUTATION], "term"),
]


@pytest.mark.parametrize(
    ("target", "trigger", "action"),
    SIGNALS,
    ids=[f"{Path(t).stem}-{a}-{g.split(':')[0]}{i}" for i, (t, g, a) in enumerate(SIGNALS)],
)
def test_a_killed_job_leaves_nothing_trusted_and_the_rerun_recovers(reference, tmp_path, target, trigger, action):
    root = broken_copy(reference, tmp_path, target)
    COUNTS["injected"] += 1
    result = snakemake(root, fault={"script": SCRIPT[target], "trigger": trigger, "action": action})
    assert result.returncode != 0, "the fault did not fire"
    assert not (root / target).exists()  # the killed job's output is not there to be trusted
    if action == "term":  # a job told to stop says so (SIGKILL leaves it no time to)
        assert error_lines(result) == ["error: stopped by SIGTERM; the output being written was not kept"]
        assert len(logs_named(result)) == 1 and logs_named(result)[0].endswith(
            ".log"
        )  # the console names the job's log
    recovered(reference, root)
    if trigger == "log:^epoch 2/":  # stopped after epoch 1's snapshot: the rerun went on from there
        assert "resumed after epoch 1 " in (root / f"results/models/{RUN}/train.log").read_text()


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: Path(t).stem)
def test_a_full_disk_is_one_line_naming_the_output_and_the_rerun_recovers(reference, tmp_path, target):
    root = broken_copy(reference, tmp_path, target)
    COUNTS["injected"] += 1
    result = snakemake(root, fault={"script": SCRIPT[target], "trigger": TEMP[target], "action": "enospc"})
    assert result.returncode != 0
    assert error_lines(result) == [f"error: {target}: no space left on the device: free some and rerun"]
    assert not (root / target).exists()
    recovered(reference, root)


def _flip_weights(path: Path) -> None:
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 64] = bytes(b ^ 0xFF for b in data[middle : middle + 64])
    path.write_bytes(bytes(data))


def _nan_weights(path: Path) -> None:
    """NaN written over the bytes of the first weights tensor, as a disk or another program could."""
    state = torch.load(path, weights_only=True)["state_dict"]
    name = next(n for n, t in state.items() if t.is_floating_point() and t.numel() >= 16)
    raw = state[name].contiguous().numpy().tobytes()
    data = bytearray(path.read_bytes())
    at = data.find(raw)
    data[at : at + 16] = torch.full((4,), float("nan")).numpy().tobytes()
    path.write_bytes(bytes(data))


class _Malicious:
    def __reduce__(self):
        return (os.system, ("touch pwned",))


def _malicious_pickle(path: Path) -> None:
    path.write_bytes(pickle.dumps({"metadata": {}, "state_dict": _Malicious()}))


def _replace_record(path: Path, change, digest_too: bool = True) -> None:
    """Line 5 of a split changed; with `digest_too`, its digest in stats.json as well, as a faulty
    preprocessing step would have written it (the record checks catch it), else as damage after the
    fact (the digest catches it)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[4])
    lines[4] = json.dumps(change(record))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    if digest_too:
        stats = json.loads((path.parent / "stats.json").read_text())
        stats["files"][path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
        (path.parent / "stats.json").write_text(json.dumps(stats))


def _edit_line(path: Path, line: int, old: str, new: str) -> None:
    """One value of a job's output changed after it was written (its seal left as it was)."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    assert old in lines[line], (path, lines[line])
    lines[line] = lines[line].replace(old, new, 1)
    path.write_text("".join(lines), encoding="utf-8")


def _sealed(path: str) -> str:
    """The one line a job gives for a sealed input changed after it was written."""
    return f"error: {path}: damaged, it does not match the digest {Path(path).name}.sha256 recorded when it was written; delete it and rerun"


TEST_SPLIT = "results/data/synthetic/test.jsonl"
STATS = "results/data/synthetic/stats.json"
FOREIGN = "not a checkpoint this pipeline wrote"  # and never torch's advice to load it with weights_only=False
# case -> (the input damaged, how, the job's one line, the job that reads it: GRADIENT's unless named)
DAMAGE = {
    "weights-flipped": (
        MODEL,
        _flip_weights,
        f"error: {MODEL}: damaged, its weights do not match the digest recorded when it was written; delete it and rerun to retrain",
    ),
    "weights-nan": (
        MODEL,
        _nan_weights,
        f"error: {MODEL}: damaged, its weights do not match the digest recorded when it was written; delete it and rerun to retrain",
    ),
    "checkpoint-truncated": (
        MODEL,
        lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]),
        f"error: {MODEL}: {FOREIGN} (PytorchStreamReader failed reading zip archive",
    ),
    "checkpoint-empty": (
        MODEL,
        lambda p: p.write_bytes(b""),
        f"error: {MODEL}: {FOREIGN} (empty file); retrain it (delete the file and rerun)",
    ),
    "checkpoint-header-flipped": (
        MODEL,
        lambda p: p.write_bytes(bytes(b ^ 0xFF for b in p.read_bytes()[:8]) + p.read_bytes()[8:]),
        f"error: {MODEL}: {FOREIGN} (",
    ),
    "checkpoint-malicious-pickle": (MODEL, _malicious_pickle, f"error: {MODEL}: {FOREIGN} ("),
    "stats-truncated": (
        STATS,
        lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]),
        f"error: {STATS}: not valid JSON (",
        MODEL,
    ),
    "record-without-label": (
        TEST_SPLIT,
        lambda p: _replace_record(p, lambda r: {k: v for k, v in r.items() if k != "label"}),
        f"error: {TEST_SPLIT}:5: no 'label' (expected id, tokens, label, sentences)",
    ),
    "record-with-empty-tokens": (
        TEST_SPLIT,
        lambda p: _replace_record(p, lambda r: r | {"tokens": [], "sentences": []}),
        f"error: {TEST_SPLIT}:5: 'tokens' is empty (every instance has at least one token)",
    ),
    "record-of-the-wrong-shape": (
        TEST_SPLIT,
        lambda p: _replace_record(p, lambda r: r | {"tokens": "one string"}),
        f"error: {TEST_SPLIT}:5: 'tokens' is not a list of strings",
    ),
    "explanation-edited-after-it-was-written": (
        GRADIENT,
        lambda p: _edit_line(p, 3, '"gradient":[', '"gradient":[1.5,'),
        _sealed(GRADIENT),
        CORRELATIONS,
    ),
    "explanation-without-its-seal": (
        GRADIENT,
        lambda p: (p.parent / f"{p.name}.sha256").unlink(),
        f"error: {GRADIENT}: no gradient.jsonl.sha256 beside it",
        CORRELATIONS,
    ),
    "experiment-table-edited-after-it-was-written": (
        CORRELATIONS,
        lambda p: _edit_line(p, 1, ",", ",9"),
        _sealed(CORRELATIONS),
        TABLE2,
    ),
    "metrics-edited-after-they-were-written": (
        METRICS,
        lambda p: _edit_line(p, 0, "{", '{"note": "edited", '),
        _sealed(METRICS),
        TABLE2,
    ),
}


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_a_damaged_input_is_one_line_naming_it_and_the_run_recovers_once_it_is_removed(reference, tmp_path, case):
    damaged, damage, expected, reader = (*DAMAGE[case], GRADIENT)[:4]
    root = broken_copy(reference, tmp_path, reader)
    COUNTS["injected"] += 1
    damage(root / damaged)
    result = snakemake(root, reader, profile=str(DEFAULT_PROFILE))
    assert result.returncode != 0
    lines = error_lines(result)
    assert len(lines) == 1 and lines[0].startswith(expected), lines
    shown = fault_lines(result)  # the error line, Snakemake's log file, the elapsed time
    assert len(shown) <= 3 and shown[0] == next(line for line in shown if line.startswith("error: ")), shown
    assert "Traceback" not in result.stdout + result.stderr
    assert not any(word in lines[0] for word in ("weights_only", "file an issue", "()")), lines
    assert not (root / reader).exists() and not (root / "pwned").exists()
    # what the error says to do: delete the file, or for a split, its folder (preprocessing runs again)
    if damaged == TEST_SPLIT:
        shutil.rmtree((root / damaged).parent)
    else:
        (root / damaged).unlink()
    recovered(reference, root)


def test_a_stopped_run_says_so_and_keeps_the_job_that_finished(reference, tmp_path):
    """SIGTERM to Snakemake during training (the default profile): the training job finishes and is
    kept, Snakemake starts nothing more, and the console says what happened in words."""
    from attnexp.workflow import STOPPED

    root = broken_copy(reference, tmp_path, MODEL)
    COUNTS["injected"] += 1
    fault = {"script": SCRIPT[MODEL], "trigger": "log:^epoch 1/", "action": "term-snakemake"}
    result = snakemake(root, fault=fault, profile=str(DEFAULT_PROFILE))
    assert result.returncode != 0
    assert (root / MODEL).exists() and not (root / GRADIENT).exists()
    assert fault_lines(result)[-1] == STOPPED and "did not complete successfully" not in result.stdout + result.stderr
    assert error_lines(result) == []
    recovered(reference, root)


def test_a_run_lost_mid_training_resumes_from_the_last_epoch_with_the_same_command(reference, tmp_path):
    """SIGKILL to Snakemake and the training job after epoch 2 (nothing cleans up: the outputs stay
    marked incomplete, the folder locked): Snakemake's `--unlock` as the docs say, then the same
    command under the default profile runs the job again, which resumes after epoch 1 from its
    snapshot, and the outputs are the unbroken run's."""
    root = broken_copy(reference, tmp_path, MODEL)
    COUNTS["injected"] += 1
    result = snakemake(
        root,
        fault={"script": SCRIPT[MODEL], "trigger": "log:^epoch 2/", "action": "kill-all"},
        profile=str(DEFAULT_PROFILE),
    )
    assert result.returncode != 0 and not (root / MODEL).exists()
    assert (root / f"results/models/{RUN}/.model.resume").exists()
    locked = snakemake(root, profile=str(DEFAULT_PROFILE))
    assert locked.returncode != 0 and "--unlock" in locked.stdout + locked.stderr
    assert snakemake(root, profile=str(DEFAULT_PROFILE), unlock=True).returncode == 0
    again = snakemake(root, profile=str(DEFAULT_PROFILE))
    assert again.returncode == 0, (again.stdout + again.stderr)[-3000:]
    assert "resumed after epoch 1 " in (root / f"results/models/{RUN}/train.log").read_text()
    lost = [t for t in TARGETS if digests(root).get(t) != digests(reference)[t]]
    COUNTS["outputs lost"] += len(lost)
    assert not lost and temp_files(root) == [] and not (root / f"results/models/{RUN}/.model.resume").exists()
    COUNTS["survived"] += 1


def test_a_split_changed_after_it_was_written_is_refused_before_any_job_deletes_a_model(reference, tmp_path):
    """A split edited in place has a fresh timestamp, so Snakemake would plan training again and
    delete the good model.pt first: the Snakefile refuses the split before any job, naming it."""
    root = tmp_path / "run"
    shutil.copytree(reference, root, symlinks=True)
    COUNTS["injected"] += 1
    _replace_record(root / TEST_SPLIT, lambda r: r | {"label": 1 - r["label"]}, digest_too=False)
    result = snakemake(root, profile=str(DEFAULT_PROFILE))
    assert result.returncode != 0
    expected = f"{TEST_SPLIT}: damaged, it does not match the digest stats.json recorded when it was written; delete the folder and rerun"
    assert expected in result.stdout + result.stderr
    assert digests(root) == digests(reference)  # the model and every output kept
    shutil.rmtree((root / TEST_SPLIT).parent)  # what the line says to do
    recovered(reference, root)


def test_the_thread_count_identifies_a_result_and_a_lowered_one_is_stated(reference, tmp_path):
    """train.threads changes the last bits of a result, so changing it reruns every model job; with
    fewer cores than it (here --cores 1 against 2) a job still runs the configured count, and says so."""
    root = tmp_path / "run"
    shutil.copytree(reference, root, symlinks=True)
    planned = snakemake(root, threads=2, dry=True)
    assert planned.returncode == 0
    for rule in ("train_model", "explain_together", "jw_permutation"):
        assert f"rule {rule}:" in planned.stdout or f"localrule {rule}:" in planned.stdout, rule
    ran = snakemake(root, MODEL, threads=2)
    assert ran.returncode == 0, ran.stderr[-3000:]
    log = (root / f"results/models/{RUN}/train.log").read_text()
    assert (
        "threads: Snakemake scheduled this job on 1 core(s) (--cores); it runs train.threads = 2 torch threads" in log
    )
    assert json.loads((root / f"results/models/{RUN}/metrics.json").read_text())["provenance"]["torch_threads"] == 2
    assert "rule train_model:" in snakemake(root, MODEL, dry=True).stdout  # back to 1 thread: trained again


def test_zz_fault_counts(capsys):
    """The summary: run last in this module (its name sorts last)."""
    if COUNTS["injected"] == 0:
        pytest.skip("no fault ran (the other tests were deselected)")
    with capsys.disabled():
        print(
            f"\nfault injection: {COUNTS['injected']} faults injected, {COUNTS['survived']} survived, {COUNTS['outputs lost']} outputs lost"
        )
    assert COUNTS["survived"] == COUNTS["injected"] and COUNTS["outputs lost"] == 0
