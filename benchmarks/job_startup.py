"""Fixed start-up cost of the Jain & Wallace model jobs, as whole processes, against `import torch`.

Each job runs as Snakemake runs a `script:` rule: a fresh interpreter executing the rule's script
behind the preamble Snakemake writes (`snakemake.script.PythonScript.generate_preamble`: the pickled
`snakemake` object with the job's input, output, params, wildcards, threads, log and the config),
with PYTHONPATH at the checkout's src/ as rules/common.smk sets it. The jobs of one J&W model:
explain_together (attention, gradient and leave-one-out in one job), explain for IG (the costliest
explanation, a job of its own), jw_correlations (of the config's `jain_wallace.measures`),
jw_permutation, jw_adversarial, with the config's settings (500 adversary steps, 100 permutations, ...).

"Start-up" = the whole job on a test split of ONE instance (the first of the dataset's test split,
written with the dataset's stats.json and digests as the preprocessing stage writes them):
Python, the preamble, every import, restoring the run (checkpoint, vocabulary, classes from the
training split, test examples), what a job loads on first use (captum, an optimizer), the outputs
and logs written; the one instance's own work is a few tens of ms and is left in (IG at its
`ig_steps` points only: `ig_max_steps` is set to `ig_steps`, so that the random weights' completeness
gap does not double the points up to 400, work rather than start-up). One torch thread per job by
default (`--threads`, as the quick preset): on a loaded 2-core machine a 2-thread OpenMP team waits
on its descheduled thread in every parallel region (one BiLSTM pass over one sentence: 0.5 s instead
of 1 ms), which is contention, not start-up. The model is a
`--model` of the dataset's shape with seeded random weights (`attnexp.train.build_and_initialise`,
as training initialises it; loading costs the same as trained weights). Overhead = median job
wall time − median `python -c 'import torch'` wall time, both measured in the same rounds.

`--baseline DIR` runs every job a second time from another checkout (its scripts/ and src/, e.g.
`git worktree add <baseline checkout> HEAD`), interleaved with this one (the order alternates per
round), and checks that both checkouts wrote byte-identical outputs. The stand-in `snakemake` object
gives a rule's script the params and wildcards the current rules give; a checkout whose scripts read
others (one from before the explain_together job, say) stops the benchmark with one error line naming
them.

    python benchmarks/job_startup.py --data <run>/results/data/sst --baseline <baseline checkout> --rounds 7
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

SEED = 10
# explain_together: attention, gradient and leave-one-out in one job (config.yaml's explain.together);
# explain/ig: integrated gradients, the one explanation a J&W model has a job of its own for
JOBS = ("explain_together", "explain/ig", "jw_correlations", "jw_permutation", "jw_adversarial")


def cut_dataset(data: Path, out: Path, instances: int) -> None:
    """The preprocessed dataset `data` with its test split cut to its first `instances`, written as the
    preprocessing stage writes a dataset (`attnexp.data.preprocess.write_dataset`), so that its
    stats.json describes the cut split and records the digests every reader checks."""
    from attnexp import io
    from attnexp.data.documents import SPLITS, Document, read_records
    from attnexp.data.preprocess import dataset_stats, write_dataset
    from attnexp.data.splits import read_vocab

    splits = {split: [Document.from_record(r) for r in read_records(data / f"{split}.jsonl")] for split in SPLITS}
    splits["test"] = splits["test"][:instances]
    vocab = read_vocab(data / "vocab.txt")
    stats = io.read_json(data / "stats.json")  # its other entries (the planted task's matrices) stay
    write_dataset(out, splits, vocab, stats | dataset_stats(data.name, splits, vocab, stats["sources"]))


def build_fixture(data: Path, model_name: str, config: dict, out: Path, instances: int) -> tuple[Path, Path]:
    """The dataset with its test split cut to `instances`, and a seeded random-weight checkpoint."""
    import torch
    from dataset_files import dataset_files

    from attnexp import io
    from attnexp.checkpoints import checkpoint_metadata, save_checkpoint
    from attnexp.config import training_settings
    from attnexp.data.splits import read_classes, read_vocab
    from attnexp.plan import model_spec
    from attnexp.train import build_and_initialise

    dataset = data.name
    data_out = out / "data" / dataset
    data_out.mkdir(parents=True, exist_ok=True)
    cut_dataset(data, data_out, instances)
    model_out = out / "models" / dataset / model_name / f"seed{SEED}"
    model_out.mkdir(parents=True, exist_ok=True)
    spec = model_spec(config, dataset, model_name)
    vocab, classes = read_vocab(data_out / "vocab.txt"), read_classes(dataset_files(data_out))
    torch.manual_seed(SEED)
    model, model_config = build_and_initialise(
        spec, vocab, len(classes), None, training_settings(config, dataset, model_name)
    )
    save_checkpoint(model_out / "model.pt", model.state_dict(), checkpoint_metadata(spec, model_config, vocab, classes))
    io.write_json(
        model_out / "metrics.json", {"model": model_name, "note": "random weights (benchmarks/job_startup.py)"}
    )
    return data_out, model_out


def job_script(
    checkout: Path, workdir: Path, job: str, dataset: str, model_name: str, config: dict, threads: int
) -> Path:
    """The job's script as Snakemake writes it into .snakemake/scripts/: preamble + the rule's script."""
    from snakemake.iocontainers import InputFiles, Log, OutputFiles, Params, ResourceList, Wildcards
    from snakemake.script import PythonScript
    from snakemake.sourcecache import LocalSourceFile

    from attnexp.papers.jain_wallace import ADVERSARY_SETTINGS, PERMUTATION_SETTINGS
    from attnexp.plan import RunKey, explain_settings, explained_together, explanation_files  # what the rules pass

    run = f"{dataset}/{model_name}/seed{SEED}"
    folder = f"results/data/{dataset}"
    data_files = {split: f"{folder}/{split}.jsonl" for split in ("train", "dev", "test")} | {
        "vocab": f"{folder}/vocab.txt",
        "stats": f"{folder}/stats.json",
    }
    model_files = data_files | {
        "model": f"results/models/{run}/model.pt",
        "metrics": f"results/models/{run}/metrics.json",
    }
    wildcards = {"dataset": dataset, "model": model_name, "seed": str(SEED)}
    model_params = {
        "torch_threads": threads,
        "device": config["device"],
    }  # what the rules of a model job declare besides settings
    rule, _, method = job.partition("/")
    if rule == "explain_together":
        together = explained_together(config)
        inputs, outputs = model_files, [f"results/explain/{run}/{m}.jsonl" for m in together]
        log = f"results/logs/explain/{run}/together.log"
        params = {
            "methods": together,
            "settings": explain_settings(config, together),
            **model_params,
        }
    elif rule == "explain":
        inputs, outputs = model_files, [f"results/explain/{run}/{method}.jsonl"]
        log = f"results/logs/explain/{run}/{method}.log"
        settings = explain_settings(config, (method,))
        if method == "ig":
            settings["ig_max_steps"] = settings["ig_steps"]  # no doubling: see the module's docstring
        params = {"methods": (method,), "settings": settings, **model_params}
        wildcards["method"] = method
    elif rule == "jw_correlations":
        inputs = explanation_files(
            RunKey(dataset, model_name, SEED), config["jain_wallace"]["measures"]
        )  # the rule's input: a plain list
        outputs, log, params, threads = (
            [f"results/jain_wallace/{run}/correlations.csv"],
            f"results/logs/jain_wallace/correlations/{run}.log",
            {},
            1,
        )
    elif rule == "jw_permutation":
        inputs, outputs = model_files, [f"results/jain_wallace/{run}/permutation.csv"]
        log = f"results/logs/jain_wallace/permutation/{run}.log"
        params = {"settings": PERMUTATION_SETTINGS.of(config), **model_params}
    else:
        inputs = model_files
        outputs = {
            "table": f"results/jain_wallace/{run}/adversarial.csv",
            "attention": f"results/jain_wallace/{run}/adversarial_attention.jsonl",
        }
        log = f"results/logs/jain_wallace/adversarial/{run}.log"
        params = {"settings": ADVERSARY_SETTINGS.of(config), **model_params}
    script = checkout / "scripts" / f"{'explain' if rule == 'explain_together' else rule}.py"
    code = script.read_text(encoding="utf-8")
    for kind, given in (("params", params), ("wildcards", wildcards)):
        missing = sorted(set(re.findall(rf"snakemake\.{kind}\.(\w+)", code)) - set(given))
        if missing:  # the checkout's rules differ from the current ones: its job, not its start-up, would fail
            raise SystemExit(
                f"error: {script} reads snakemake.{kind}.{f', snakemake.{kind}.'.join(missing)}, which this benchmark's stand-in for "
                f"rule {rule} does not give (it gives {', '.join(sorted(given)) or 'none'}): that checkout's rules differ from the current ones"
            )
    (workdir / log).parent.mkdir(parents=True, exist_ok=True)
    inputs_list = InputFiles(toclone=inputs) if isinstance(inputs, list) else InputFiles(fromdict=inputs)
    outputs_list = OutputFiles(toclone=outputs) if isinstance(outputs, list) else OutputFiles(fromdict=outputs)
    preamble = PythonScript.generate_preamble(
        path=LocalSourceFile(str(script)),
        cache_path=None,
        source=None,
        basedir=None,
        input_=inputs_list,
        output=outputs_list,
        params=Params(fromdict=params),
        wildcards=Wildcards(fromdict=wildcards),
        threads=threads,
        resources=ResourceList(fromdict={"_cores": threads, "_nodes": 1, "tmpdir": "/tmp", "gpu": 0}),
        log=Log(toclone=[log]),
        config=config,
        rulename=rule,
        conda_env=None,
        container_img=None,
        singularity_args=None,
        env_modules=None,
        bench_record=None,
        jobid=0,
        bench_iteration=0,
        cleanup_scripts=False,
        shadow_dir=None,
        is_local=True,
        preamble_addendum=f"__real_file__ = __file__; __file__ = {str(script)!r};",
    )
    path = workdir / ".snakemake" / "scripts" / f"{job.replace('/', '_')}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(preamble + code, encoding="utf-8")
    return path


def timed(command: list[str], cwd: Path, env: dict) -> float:
    start = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode:
        raise SystemExit(f"{' '.join(command)} in {cwd} failed ({result.returncode}):\n{result.stderr[-2000:]}")
    return elapsed


def outputs_digest(workdir: Path) -> dict[str, str]:
    """sha256 of every output the jobs wrote, but their logs and seals (a seal, `io.write_seal`, is its
    output's own sha256: comparing the outputs compares it; older checkouts wrote none)."""
    from attnexp.io import SEAL_SUFFIX

    return {
        str(p.relative_to(workdir)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((workdir / "results").rglob("*"))
        if p.is_file()
        and "logs" not in p.parts
        and not p.name.endswith(SEAL_SUFFIX)
        and not str(p.relative_to(workdir)).startswith(("results/data", "results/models"))
    }


def spread(values: list[float]) -> str:
    return f"{min(values):.2f}–{max(values):.2f}"


def shown_arguments(args) -> str:
    """The command line with the reader's own folders as placeholders: `<run>` for the run folder whose
    results/data/<dataset> was measured, `<baseline checkout>` for the baseline."""
    text = " ".join(sys.argv[1:])
    data = Path(args.data)
    if data.resolve().parent.name == "data" and data.resolve().parent.parent.name == "results":
        text = text.replace(str(args.data), f"<run>/results/data/{data.resolve().name}")
    if args.baseline:
        text = text.replace(str(args.baseline), "<baseline checkout>")
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data", type=Path, required=True, help="a preprocessed dataset folder, results/data/{dataset}"
    )
    parser.add_argument("--model", default="lstm-tanh")
    parser.add_argument("--baseline", type=Path, help="another checkout to compare against (its scripts/ and src/)")
    parser.add_argument("--rounds", type=int, default=7, help="timed rounds (after one untimed warm-up round)")
    parser.add_argument("--instances", type=int, default=1, help="test instances each job works on")
    parser.add_argument(
        "--threads", type=int, default=1, help="the jobs' torch threads (the rules' `threads`, config train.threads)"
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/job_startup"))
    parser.add_argument("--out", type=Path, default=Path(__file__).with_suffix(".md"))
    args = parser.parse_args()

    from attnexp.config import load_config

    config = load_config()
    shutil.rmtree(args.work, ignore_errors=True)
    data_out, model_dir = build_fixture(args.data.resolve(), args.model, config, args.work / "fixture", args.instances)
    dataset = args.data.resolve().name
    checkouts = {"current": REPO} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    scripts, envs = {}, {}
    for label, checkout in checkouts.items():
        workdir = args.work / label
        for link, target in (
            (f"results/data/{dataset}", data_out),
            (f"results/models/{dataset}/{args.model}/seed{SEED}", model_dir),
        ):
            (workdir / link).parent.mkdir(parents=True, exist_ok=True)
            (workdir / link).symlink_to(target)
        scripts[label] = {
            job: job_script(checkout, workdir, job, dataset, args.model, config, args.threads) for job in JOBS
        }
        envs[label] = os.environ | {
            "PYTHONPATH": os.pathsep.join(filter(None, [str(checkout / "src"), os.environ.get("PYTHONPATH")]))
        }
    torch_only = [sys.executable, "-c", "import torch"]

    load_before = os.getloadavg()
    times: dict[tuple[str, str], list[float]] = {}
    torch_times: list[float] = []
    for round_ in range(args.rounds + 1):  # round 0 warms the page cache and writes the explanations
        order = list(checkouts) if round_ % 2 else list(reversed(checkouts))
        for i, job in enumerate(JOBS):
            if i % 3 == 0:
                t = timed(torch_only, args.work, envs["current"])
                if round_:
                    torch_times.append(t)
            for label in order:
                t = timed([sys.executable, str(scripts[label][job])], args.work / label, envs[label])
                if round_:
                    times.setdefault((label, job), []).append(t)
        print(f"round {round_}/{args.rounds} done", file=sys.stderr, flush=True)

    identical = None
    if "baseline" in checkouts:
        current, baseline = outputs_digest(args.work / "current"), outputs_digest(args.work / "baseline")
        identical = current == baseline
        if not identical:
            print(
                f"outputs differ: {sorted(k for k in current.keys() | baseline.keys() if current.get(k) != baseline.get(k))}",
                file=sys.stderr,
            )

    load_after = os.getloadavg()
    torch_median = statistics.median(torch_times)
    lines = [
        f"Measured {datetime.date.today().isoformat()} on a {os.cpu_count()}-core {platform.machine().replace('_', '-')} CPU machine (medians of {args.rounds} interleaved rounds, "
        f"spread = min–max), Python {platform.python_version()}, torch {__import__('torch').__version__}, snakemake {__import__('snakemake').__version__}; "
        f"dataset `{dataset}` ({args.instances} test instance), `{args.model}` with random weights, {args.threads} torch thread(s) per job, device `{config['device']}`; "
        f"1-minute load average {load_before[0]:.1f} before, {load_after[0]:.1f} after.",
        "",
        "    python benchmarks/job_startup.py " + shown_arguments(args),
        "",
        f"`python -c 'import torch'`: median {torch_median:.2f} s (spread {spread(torch_times)}, {len(torch_times)} runs).",
        "",
    ]
    header = (
        "| job | "
        + " | ".join(
            f"{label} median s | {label} spread s | {label} beyond `import torch` s" for label in reversed(checkouts)
        )
        + (" | saved s |" if "baseline" in checkouts else " |")
    )
    lines += [header, "|" + "---|" * (header.count("|") - 1)]
    for job in JOBS:
        cells = []
        medians = {}
        for label in reversed(checkouts):
            medians[label] = statistics.median(times[(label, job)])
            cells += [f"{medians[label]:.2f}", spread(times[(label, job)]), f"{medians[label] - torch_median:+.2f}"]
        if "baseline" in checkouts:
            cells.append(f"{medians['baseline'] - medians['current']:.2f}")
        lines.append(f"| {job} | " + " | ".join(cells) + " |")
    if identical is not None:
        lines += [
            "",
            f"Outputs of the two checkouts (sha256 of every file but the logs and seals): {'identical' if identical else 'DIFFERENT'}.",
        ]
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
