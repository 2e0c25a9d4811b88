"""The whole Jain & Wallace run on SST, BiLSTM + tanh attention, as a user starts each side and as
whole processes (what `time` shows): J&W's original code against this project's `jain_wallace`
target, interleaved, from the same preprocessed split, each side with its default vectors.

- original: J&W's repository (github successar/AttentionExplanation, master), run as its README does,
  `train_and_run_experiments_bc.py --dataset sst --encoder lstm --attention tanh`: `Trainer.train`
  (8 epochs, checkpoint on dev ROC AUC from the second epoch on), `Evaluator.evaluate` on test,
  `run_experiments_on_latest_model` (gradient, permutation (100), adversarial (K = 5, 500 Adam steps
  per batch of 32) and remove-and-run (leave-one-out)), then its graph step
  `generate_graphs_on_encoders` (the correlation, permutation and adversarial figures and tables).
  Leave-one-out and the graph step are commented out in master and switched back on by the patches
  below, as the paper reports them. One process, `--threads` torch threads (OMP/MKL); its vectors:
  random N(0, 1) 300-d (seeded), what it trains with when no pretrained file is given.
- ours: `snakemake --cores 2 jain_wallace` with the default config narrowed to SST `lstm-tanh`
  (`jain_wallace: {datasets: [sst], models: [lstm-tanh]}`), in a fresh folder seeded with the
  preprocessed split and the default vectors of a run of the default config (`--vectors`, its
  word2vec), so that only the model, explanation and J&W jobs run: train_model, explain_together
  (attention, gradient, leave-one-out), jw_correlations, jw_permutation, jw_adversarial,
  jw_model_figures and jw_tables; jobs of `train.threads` torch threads as configured.

The original reads a pickled `Vectorizer` (preprocess/preprocess_data_BC.py): this script writes one
from our `{train,dev,test}.jsonl` and `vocab.txt` (same layout: <PAD>, <UNK>, <SOS>, <EOS>, then words),
so both sides train on the same token ids. The checkout is prepared in place (idempotent): the string
patches of `PATCHES` (each says why), stand-in modules for its import-only dependencies (`SHIMS`:
allennlp's registry, spacy, torchtext, IPython, nltk), a `Transparency` package link, and a venv
(`<checkout>/.bench-venv`) that sees this interpreter's packages (the same torch) plus scikit-learn.
Nothing of the original's code enters this repository.

Per phase: the original's from the mtimes of its output files (epoch.txt = end of training; then each
experiment's pickle; then the graph step's last file); ours from Snakemake's
`results/benchmarks/**/*.tsv` (job seconds and peak RSS; jobs overlap). Peak RSS of the original: its
process's, from `wait4`.

    git clone <J&W's repository, successar/AttentionExplanation (425a89a)> <checkout>
    python benchmarks/jain_wallace_whole_run.py --original <checkout> --data <run>/results/data/sst \\
        --vectors <run>/results/embeddings/sst --rounds 3 [--epochs 8] [--out benchmarks/jain_wallace_whole_run.md]
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

MODEL, SEED = "lstm-tanh", 10
RUN = f"sst/{MODEL}/seed{SEED}"
OUR_TARGET = "jain_wallace"
OUR_RULES = [
    "train_model",
    "explain_together",
    "jw_correlations",
    "jw_permutation",
    "jw_adversarial",
    "jw_model_figures",
    "jw_tables",
    "jain_wallace",
]
# The original's outputs in its model folder, in the order it writes them (ExperimentsBC.py), and
# the phase each one ends; then its graph step (PlottingBC.generate_graphs), whose files end it
ORIGINAL_EXPERIMENTS = {
    "gradients": "gradient",
    "permutations": "permutation (100)",
    "multi_adversarial": "adversarial (K = 5, 500 steps)",
    "remove_and_run": "leave-one-out (remove_and_run)",
}
ORIGINAL_GRAPHS = ("GradientXHist_kendalltau.pdf", "CorrGL_kendalltau.pdf", "Permutation_MAvDY.pdf", "eMaxJDS_Hist.pdf")
GRAPH_PHASE = "graph step (generate_graphs)"
# Our jobs (results/benchmarks/<rule>/sst/lstm-tanh/seed10.tsv) and the original's phases that do the
# same work, compared as sums: one row of the per-job table each
COMPARED = (
    (("train_model",), ("training (with start-up, data loading, dev evaluation per epoch)",)),
    (("explain_together",), ("test evaluation, reload, test evaluation", "gradient", "leave-one-out (remove_and_run)")),
    (("jw_permutation",), ("permutation (100)",)),
    (("jw_adversarial",), ("adversarial (K = 5, 500 steps)",)),
    (("jw_correlations", "jw_model_figures", "jw_tables"), (GRAPH_PHASE,)),
)
# What differs between the two sides beyond their speed (written under the table)
NOT_LIKE_FOR_LIKE = [
    "Threads: the original is one process of `--threads` torch threads; ours runs up to `--cores` jobs of `train.threads` "
    "torch threads each (train_model alone first, then the explanation and J&W jobs side by side), plus Snakemake's own process.",
    "Vectors: the original's default and ours as set here. The original's are random N(0, 1) 300-d (no pretrained file given); ours are the "
    "`embeddings.source: auto` (without the paper's file, 300-d word2vec trained on the training split), "
    "built before the timed run as the split is.",
    "Ours does more: checkpoints, logs and JSON/CSV outputs of every job, a start-up per job, the Kendall-τ correlations "
    "(p-values and Sig. Frac.) for both classes, Table 2 with the published values beside ours and the claims file. "
    "The original's graph step draws each figure in PNG (at 1000 dpi), SVG and PDF and computes top-k Kendall too; ours "
    "draws PDF and PNG.",
    "The original does some things ours does not: three gradient variants per instance in one backward pass "
    "(XxE, XxE[X], H), the test set evaluated twice (after training and again after reloading the checkpoint), and "
    "once more in the graph step, autograd graphs built during evaluation and permutation (no `torch.no_grad`, as in 2019).",
    "Batching: both train on batches of 32 (length-sorted with ±10 % noise) and evaluate dev each epoch. The original "
    "runs every experiment in length-sorted batches of 32, re-running the attention layer for each permutation and "
    "the whole batch for every deleted position up to the batch's longest sentence; ours caches the encoder states "
    "and batches permutations / adversary candidates by `jain_wallace.max_tokens` padded tokens, and its "
    "leave-one-out re-runs only the changed BiLSTM states. Same counts: 100 permutations, K = 5 × 500 Adam steps, "
    "every token deleted once.",
    "Same data (the converted split; the original's loader patched not to drop the longest sentences a second time), "
    "same selection (dev ROC AUC, first epoch never kept), same torch. The models differ by their vectors, random "
    "initialisation and batch order, hence different accuracies.",
]

# (file, old, new, why): applied to the checkout once (`old` gone and `new` there = applied before).
PATCHES = [
    (
        "common_code/metrics.py",
        "from pandas.io.json.normalize import nested_to_record",
        "from pandas.io.json._normalize import nested_to_record",
        "pandas >= 1.0 moved the module (pandas 0.24 in its requirements.txt)",
    ),
    (
        "common_code/plotting.py",
        "mpl.style.use('seaborn-poster')",
        "mpl.style.use('seaborn-v0_8-poster')",
        "matplotlib >= 3.6 renamed the seaborn styles (import-time only: no plot is drawn here)",
    ),
    (
        "common_code/plotting.py",
        "from matplotlib import tight_layout",
        "tight_layout = type('tight_layout', (), {'get_renderer': staticmethod(lambda fig: fig.canvas.get_renderer())})",
        "matplotlib >= 3.8 made the module private and dropped its get_renderer (the graph step's only use): the canvas's",
    ),
    (
        "train_and_run_experiments_bc.py",
        "    train_dataset_on_encoders(dataset, encoders)\n#    generate_graphs_on_encoders(dataset, encoders)\nif args.attention in ['dot', 'all']",
        "    train_dataset_on_encoders(dataset, encoders)\n    generate_graphs_on_encoders(dataset, encoders)\nif args.attention in ['dot', 'all']",
        "the graph step (correlation, permutation and adversarial figures and their tables) is commented out in master; "
        "its README runs it to produce the paper's figures",
    ),
    (
        "model/modelUtils.py",
        "self.masks = torch.ByteTensor(np.array(masks)).to(device)",
        "self.masks = torch.tensor(np.array(masks), dtype=torch.bool).to(device)",
        "torch >= 2 (masked_fill_) accepts only boolean masks; torch 1.0 took uint8. Same values",
    ),
    (
        "Trainers/DatasetBC.py",
        "path='preprocess/SST/vec_sst.p', min_length=5, args=args)",
        "path='preprocess/SST/vec_sst.p', min_length=5, max_length=10**6, args=args)",
        "same data on both sides: our split already had J&W's length filter (D-LEN: its missing upper bound drops "
        "each split's longest sentences); the loader's second pass would drop 8 train / 3 dev / 1 test more",
    ),
    (
        "ExperimentsBC.py",
        "#        evaluator.remove_and_run_experiment(test_data, force_run=force_run)",
        "        evaluator.remove_and_run_experiment(test_data, force_run=force_run)",
        "leave-one-out (remove-and-run, J&W §5.2) is commented out in master; the paper reports it",
    ),
    (
        "ExperimentsBC.py",
        "n_iters=8,",
        "n_iters=int(os.environ.get('JW_EPOCHS', 8)),",
        "--epochs for smoke tests; 8 (J&W) unless the benchmark sets JW_EPOCHS",
    ),
]

# Stand-ins for dependencies the BC path imports but does not use (preprocessing, notebooks), and
# for allennlp's registry (Registrable / FromParams / Params), which it does use to build the model.
SHIMS = {
    "allennlp/__init__.py": "",
    "allennlp/common/__init__.py": "from .registrable import Params, Registrable, FromParams\n",
    "allennlp/common/from_params.py": "from .registrable import FromParams\n",
    "allennlp/common/registrable.py": '''
        """allennlp 0.8's from_params, as far as J&W's BC models use it: `type` picks the registered
        subclass, the other keys are constructor arguments; an `Activation` argument given by name is
        built from the registry."""
        import inspect
        from collections import defaultdict


        class Params(dict):
            pass


        class FromParams:
            @classmethod
            def from_params(cls, params):
                params = dict(params)
                if issubclass(cls, Registrable) and cls in Registrable._registry:
                    cls = Registrable._registry[cls][params.pop("type")]
                from allennlp.nn.activations import Activation
                signature = inspect.signature(cls.__init__).parameters
                for name, value in params.items():
                    if name in signature and signature[name].annotation is Activation and isinstance(value, str):
                        params[name] = Activation.by_name(value)()
                return cls(**params)


        class Registrable(FromParams):
            _registry = defaultdict(dict)

            @classmethod
            def register(cls, name):
                def add(subclass):
                    Registrable._registry[cls][name] = subclass
                    return subclass
                return add

            @classmethod
            def by_name(cls, name):
                return Registrable._registry[cls][name]
        ''',
    "allennlp/nn/__init__.py": "",
    "allennlp/nn/activations.py": """
        import torch
        from allennlp.common.registrable import Registrable


        class Activation(Registrable):
            pass


        for _name, _make in {"linear": lambda: (lambda x: x), "relu": torch.nn.ReLU, "tanh": torch.nn.Tanh,
                             "sigmoid": torch.nn.Sigmoid}.items():
            Registrable._registry[Activation][_name] = _make
        """,
    "spacy/__init__.py": """
        def load(name, **kwargs):  # vectorizer.py loads a model at import; only its cleaner() uses it
            def unavailable(text):
                raise RuntimeError("spacy stand-in: preprocessing is done by the benchmark's adapter")
            return unavailable
        """,
    "torchtext/__init__.py": "",
    "torchtext/vocab.py": "pretrained_aliases = {}  # vectorizer.py imports it; the adapter supplies the vectors\n",
    "IPython/__init__.py": """
        version_info = (8, 24)  # matplotlib asks which IPython it runs under: no GUI hooks wanted


        def get_ipython():  # matplotlib's pyplot asks whether it runs in a notebook: no
            return None
        """,
    "IPython/core/__init__.py": "",
    "IPython/core/display.py": "from IPython.display import HTML, display\n",
    "IPython/display.py": """
        def display(obj):
            print(obj)


        def HTML(text):
            return text
        """,
    "nltk/__init__.py": "",
    "nltk/corpus.py": """
        class stopwords:  # BoWder (the LR baseline) only
            @staticmethod
            def words(language):
                return []
        """,
}

# Writes the original's input, as preprocess_data_BC.py does: a pickled Vectorizer with seq_text /
# label per split ([<SOS>] + ids + [<EOS>]), word2idx / idx2word and the embedding matrix.
ADAPTER = """
import json, pickle, sys
import numpy as np
from Transparency.preprocess.vectorizer import Vectorizer

data, vectors, out = sys.argv[1:4]
words = open(f"{data}/vocab.txt", encoding="utf-8").read().split("\\n")
words = [w for w in words if w]
assert words[:4] == ["<PAD>", "<UNK>", "<SOS>", "<EOS>"], words[:4]
vec = Vectorizer()
vec.word2idx = {w: i for i, w in enumerate(["<0>", "<UNK>", "<SOS>", "<EOS>"] + words[4:])}
vec.idx2word = {i: w for w, i in vec.word2idx.items()}
vec.vocab_size = len(vec.word2idx)
vec.embeddings = np.load(vectors).astype(np.float64)
assert vec.embeddings.shape[0] == vec.vocab_size, (vec.embeddings.shape, vec.vocab_size)
vec.word_dim = vec.embeddings.shape[1]
vec.seq_text, vec.label = {}, {}
for split in ("train", "dev", "test"):
    rows = [json.loads(line) for line in open(f"{data}/{split}.jsonl", encoding="utf-8")]
    vec.seq_text[split] = [[2] + [vec.word2idx.get(t, 1) for t in r["tokens"]] + [3] for r in rows]
    vec.label[split] = [int(r["label"]) for r in rows]
pickle.dump(vec, open(out, "wb"))
print(json.dumps({s: len(x) for s, x in vec.seq_text.items()}))
"""


def prepare_original(checkout: Path) -> tuple[Path, dict]:
    """Patch the checkout, write the stand-ins and the package link, make its venv -> (python, env)."""
    for name, old, new, _why in PATCHES:
        path = checkout / name
        text = path.read_text(encoding="utf-8")
        if text.count(old) == 1:
            path.write_text(text.replace(old, new), encoding="utf-8")
        elif old in text or new not in text:  # `new` there and `old` not: applied before
            raise SystemExit(f"patch for {name} does not apply: {old!r} found {text.count(old)} times")
    bench = checkout / ".bench"
    for name, text in SHIMS.items():
        (bench / "shims" / name).parent.mkdir(parents=True, exist_ok=True)
        (bench / "shims" / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    link = bench / "pkg" / "Transparency"
    if not link.exists():
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(checkout.resolve(), target_is_directory=True)
    venv = checkout / ".bench-venv"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        site = subprocess.run(
            [str(python), "-c", "import site; print(site.getsitepackages()[0])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        ours = [p for p in sys.path if p.endswith("site-packages")]
        Path(site, "attnexp_venv.pth").write_text(
            "\n".join(ours) + "\n", encoding="utf-8"
        )  # the same torch, numpy, pandas ...
        subprocess.run([str(python), "-m", "pip", "install", "-q", "scikit-learn"], check=True)
    env = os.environ | {"PYTHONPATH": os.pathsep.join([str(bench / "pkg"), str(bench / "shims")])}
    return python, env


def _timed(command: list[str], log_path: Path, **kwargs) -> tuple[int, float, float]:
    """Run a whole process -> (exit status, wall seconds, its peak RSS in MB, from wait4)."""
    with open(log_path, "w") as log:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, **kwargs)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, wall, usage.ru_maxrss / 1024


def original_round(
    python: Path, env: dict, checkout: Path, data_dir: Path, out: Path, threads: int, epochs: int
) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    env = env | {
        "OMP_NUM_THREADS": str(threads),
        "MKL_NUM_THREADS": str(threads),
        "JW_EPOCHS": str(epochs),
        "MPLBACKEND": "Agg",
    }
    command = [
        str(python),
        str(checkout / "train_and_run_experiments_bc.py"),
        "--dataset",
        "sst",
        "--data_dir",
        str(data_dir),
        "--output_dir",
        str(out / "outputs"),
        "--encoder",
        "lstm",
        "--attention",
        "tanh",
    ]
    start_wall = time.time()
    returncode, wall, peak_mb = _timed(command, out / "log.txt", cwd=out, env=env)
    models = list((out / "outputs" / "sst" / "lstm+tanh").glob("*"))
    if returncode or len(models) != 1:
        raise SystemExit(f"original failed ({returncode}, {len(models)} model folders): see {out / 'log.txt'}")
    model = models[0]
    # Its functions swallow every exception (bare `except`): check that each step wrote its output.
    expected = ("enc.th", "evaluate.json", *(f"{e}_pdump.pkl" for e in ORIGINAL_EXPERIMENTS), *ORIGINAL_GRAPHS)
    missing = [name for name in expected if not (model / name).exists()]
    if missing:
        raise SystemExit(f"original run incomplete, missing {missing} in {model}: see {out / 'log.txt'}")
    marks = [
        ("training (with start-up, data loading, dev evaluation per epoch)", model / "epoch.txt"),
        ("test evaluation, reload, test evaluation", model / "evaluate.json"),
    ]
    marks += [(phase, model / f"{name}_pdump.pkl") for name, phase in ORIGINAL_EXPERIMENTS.items()]
    marks.append((GRAPH_PHASE, max(model.iterdir(), key=lambda p: p.stat().st_mtime)))
    phases, previous = {}, start_wall
    for name, path in marks:  # evaluate.json is rewritten before the experiments: test eval + reload
        phases[name] = path.stat().st_mtime - previous
        previous = path.stat().st_mtime
    phases["exit"] = start_wall + wall - previous
    metrics = json.loads((model / "evaluate.json").read_text())
    return {
        "wall": wall,
        "phases": phases,
        "peak_mb": {"the process": peak_mb},
        "accuracy": metrics["accuracy"],
        "roc_auc": metrics["roc_auc"],
    }


def our_round(data: Path, vectors: Path, overlay: Path, mirror: str, out: Path, cores: int) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    for source, target in ((data, out / "results/data/sst"), (vectors, out / "results/embeddings/sst")):
        shutil.copytree(source, target)
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(out),
        "--cores",
        str(cores),
        "--workflow-profile",
        "none",
        "--configfile",
        str(overlay),
        "--config",
        f"mirror={mirror}",
        "--allowed-rules",
        *OUR_RULES,
        "--",
        OUR_TARGET,
    ]
    returncode, wall, _ = _timed(command, out / "log.txt", cwd=REPO)
    if returncode:
        raise SystemExit(f"pipeline failed ({returncode}): see {out / 'log.txt'}")
    phases, peak_mb = {}, {}
    for tsv in sorted((out / "results" / "benchmarks").rglob("*.tsv")):
        job = (
            str(tsv.relative_to(out / "results" / "benchmarks").with_suffix(""))
            .replace(f"/{RUN}", "")
            .removesuffix("/all")
        )
        with open(tsv) as f:
            row = next(csv.DictReader(f, delimiter="\t"))
        phases[job], peak_mb[job] = float(row["s"]), float(row["max_rss"])
    missing = [job for jobs, _ in COMPARED for job in jobs if job not in phases]
    if missing:
        raise SystemExit(f"pipeline ran without the jobs {missing}: see {out / 'log.txt'}")
    metrics = json.loads((out / "results/models" / RUN / "metrics.json").read_text())
    return {
        "wall": wall,
        "phases": phases,
        "peak_mb": peak_mb,
        "accuracy": metrics["test"]["accuracy"],
        "roc_auc": metrics["test"]["roc_auc"],
    }


def med(rounds: list[dict], key: str, phase: str | None = None) -> float:
    return statistics.median(r["phases"][phase] if phase else r[key] for r in rounds)


def spread(values) -> str:
    values = list(values)
    return f"{min(values):.1f}–{max(values):.1f}"


def random_vectors(data: Path, out: Path, dim: int = 300, seed: int = 0) -> Path:
    """The original's default: N(0, 1) vectors for its whole vocabulary (seeded), <PAD> zero."""
    import numpy as np

    words = [w for w in (data / "vocab.txt").read_text(encoding="utf-8").split("\n") if w]
    vectors = np.random.RandomState(seed).standard_normal((len(words), dim)).astype(np.float32)
    vectors[0] = 0
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "vectors.npy", vectors)
    return out / "vectors.npy"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--original", type=Path, required=True, help="a checkout of successar/AttentionExplanation (patched in place)"
    )
    parser.add_argument("--data", type=Path, required=True, help="<run>/results/data/sst")
    parser.add_argument(
        "--vectors", type=Path, required=True, help="<run>/results/embeddings/sst of a run of the default config (ours)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds: original, ours, original, ours ...")
    parser.add_argument(
        "--epochs",
        type=int,
        default=8,
        help="training epochs on both sides (J&W: 8; at least 2: neither keeps epoch 1)",
    )
    parser.add_argument("--threads", type=int, default=2, help="the original's torch threads (its one process)")
    parser.add_argument("--cores", type=int, default=2, help="our snakemake --cores")
    parser.add_argument(
        "--mirror",
        default=None,
        help="passed as --config mirror= (nothing is read from it; default: an empty folder under --work)",
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/jw_whole_run"))
    parser.add_argument("--out", type=Path, default=Path(__file__).with_suffix(".md"))
    args = parser.parse_args()
    if args.epochs < 2:
        parser.error("--epochs must be >= 2: the original never saves the first epoch's model")

    checkout, data, vectors = args.original.resolve(), args.data.resolve(), args.vectors.resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    if args.mirror is None:  # the config needs an existing folder; the run reads nothing from it
        args.mirror = str(args.work / "empty_mirror")
        Path(args.mirror).mkdir(exist_ok=True)
    python, env = prepare_original(checkout)
    original_data = args.work / "original_data"
    (original_data / "preprocess" / "SST").mkdir(parents=True, exist_ok=True)
    original_vectors = random_vectors(data, args.work / "original_vectors")
    converted = subprocess.run(
        [str(python), "-c", ADAPTER, str(data), str(original_vectors), str(original_data / "preprocess/SST/vec_sst.p")],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    sizes = json.loads(converted.stdout.strip().splitlines()[-1])
    vectors_meta = json.loads((vectors / "vectors.json").read_text())
    overlay = args.work / "overlay.yaml"
    # the setting of the published measurement, pinned so that a later default (the replication's three
    # seeds, one thread per job, test selection, GloVe stand-in vectors) does not change what is compared
    narrowed = {
        "train": {"seeds": [10], "threads": 2, "select_on": "dev"},
        "embeddings": {"source": "auto"},
        "jain_wallace": {"datasets": ["sst"], "models": [MODEL]},
    }
    if args.epochs != 8:
        narrowed["datasets"] = {"sst": {"train": {"jain_wallace": {"epochs": args.epochs}}}}
    overlay.write_text(json.dumps(narrowed, indent=1), encoding="utf-8")

    load_before = os.getloadavg()
    results: dict[str, list[dict]] = {"original": [], "ours": []}
    for round_ in range(args.rounds):
        results["original"].append(
            original_round(
                python, env, checkout, original_data, args.work / f"original{round_}", args.threads, args.epochs
            )
        )
        print(
            f"round {round_ + 1}/{args.rounds} original: {results['original'][-1]['wall']:.1f} s",
            file=sys.stderr,
            flush=True,
        )
        results["ours"].append(our_round(data, vectors, overlay, args.mirror, args.work / f"ours{round_}", args.cores))
        print(
            f"round {round_ + 1}/{args.rounds} ours: {results['ours'][-1]['wall']:.1f} s", file=sys.stderr, flush=True
        )
    load_after = os.getloadavg()
    (args.work / "results.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    text = report(results, args, checkout, sizes, vectors_meta, (load_before[0], load_after[0]), narrowed)
    print(text)
    args.out.write_text(text, encoding="utf-8")


def _shown_arguments(args) -> str:
    """The command line with the reader's own folders as placeholders (the original's checkout, the run,
    an output outside the repository), the scratch folder (`--work`, which changes no number) left out."""
    argv, shown = list(sys.argv[1:]), []
    while argv:
        token = argv.pop(0)
        if token == "--work" and argv:
            argv.pop(0)
            continue
        if token == "--out" and argv:
            out = Path(argv.pop(0)).resolve()
            shown += [token, str(out.relative_to(REPO)) if out.is_relative_to(REPO) else "<file>"]
            continue
        shown.append(token)
    text = " ".join(shown).replace(str(args.original), "<checkout of J&W's code>")
    for path in (args.data, args.vectors):
        run = Path(path).resolve().parents[2]
        text = text.replace(str(path), str(Path(path).resolve())).replace(str(run), "<run>")
    return text


def report(
    results: dict,
    args: argparse.Namespace,
    checkout: Path,
    sizes: dict,
    vectors_meta: dict,
    loads: tuple[float, float],
    narrowed: dict,
) -> str:
    import torch

    commit = (
        subprocess.run(
            ["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        or "an unknown commit (not a git checkout)"
    )
    original, ours = results["original"], results["ours"]
    load_before, load_after = loads
    lines = [
        f"Measured {datetime.date.today().isoformat()} on a {os.cpu_count()}-core {platform.machine().replace('_', '-')} CPU machine ({platform.system()}), Python {platform.python_version()}, "
        f"torch {torch.__version__} on both sides; medians of {args.rounds} interleaved rounds (spread = min–max); "
        f"1-minute load average {load_before:.1f} before, {load_after:.1f} after.",
        "",
        "    python benchmarks/jain_wallace_whole_run.py " + _shown_arguments(args),
        "",
        f"SST (our preprocessed split: train {sizes['train']}, dev {sizes['dev']}, test {sizes['test']}), BiLSTM + tanh, {args.epochs} epochs, "
        f"checkpoint on dev ROC AUC. Original: J&W's code at {commit} (+ the patches in `PATCHES`: leave-one-out and the graph step on), "
        f"one process of {args.threads} torch thread(s), random N(0, 1) 300-d vectors. Ours: `snakemake --cores {args.cores} {OUR_TARGET}` with "
        f"the default config narrowed by `{json.dumps(narrowed)}`, vectors: {vectors_meta.get('stand_in') or vectors_meta.get('source')}.",
        "",
        "| side | wall median s | spread s | peak RSS of its largest process, MB | test accuracy (per round) | test ROC AUC (per round) |",
        "|---|---|---|---|---|---|",
    ]
    for label, rounds in (("original (J&W's code)", original), ("ours (snakemake)", ours)):
        accuracy = ", ".join(f"{r['accuracy']:.3f}" for r in rounds)
        roc_auc = ", ".join(f"{r['roc_auc']:.3f}" for r in rounds)
        peak = max(max(r["peak_mb"].values()) for r in rounds)
        lines.append(
            f"| {label} | {med(rounds, 'wall'):.1f} | {spread(r['wall'] for r in rounds)} | {peak:,.0f} | {accuracy} | {roc_auc} |"
        )
    lines += ["", f"Original / ours (wall medians): **{med(original, 'wall') / med(ours, 'wall'):.2f}×**.", ""]
    lines += [
        "Original, per phase (from the mtimes of its output files, in the order it writes them):",
        "",
        "| phase | median s | spread s |",
        "|---|---|---|",
    ]
    for phase in original[0]["phases"]:
        lines.append(f"| {phase} | {med(original, '', phase):.1f} | {spread(r['phases'][phase] for r in original)} |")
    lines += [
        "",
        "Ours, per job against the original's phases that do the same work (Snakemake benchmark files: whole processes, "
        "start-up included; jobs run side by side, so they add up to more than the wall time):",
        "",
        "| our job(s) | median s | peak RSS MB | the original's phase(s) | median s | speed-up |",
        "|---|---|---|---|---|---|",
    ]
    for jobs, phases in COMPARED:
        ours_s = statistics.median(sum(r["phases"][j] for j in jobs) for r in ours)
        original_s = statistics.median(sum(r["phases"][p] for p in phases) for r in original)
        peak = max(r["peak_mb"][j] for r in ours for j in jobs)
        lines.append(
            f"| {' + '.join(jobs)} | {ours_s:.1f} | {peak:,.0f} | {' + '.join(phases)} | {original_s:.1f} | {original_s / ours_s:.2f}× |"
        )
    others = sorted({job for r in ours for job in r["phases"]} - {j for jobs, _ in COMPARED for j in jobs})
    for job in others:
        lines.append(f"| {job} | {med(ours, '', job):.1f} | {max(r['peak_mb'][job] for r in ours):,.0f} | – | – | – |")
    job_sums = [sum(r["phases"].values()) for r in ours]
    lines.append(f"| sum of the jobs | {statistics.median(job_sums):.1f} | | | | |")
    lines += ["", "Not like-for-like:", ""] + [f"- {note}" for note in NOT_LIKE_FOR_LIKE]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
