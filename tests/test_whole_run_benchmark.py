"""benchmarks/jain_wallace_whole_run.py runs at HEAD: the whole benchmark, as its README command runs
it, against a stand-in for J&W's repository (the tests have no checkout of it). The stand-in holds
every line the benchmark patches, so each patch must still apply, and a driver that writes, in the
original's order, every file whose mtime ends one of its phases; it reads the pickled vectorizer
the benchmark's adapter writes. Our side is the real pipeline (`snakemake jain_wallace`, two epochs)
on the quick preset's generated data in the place of SST's. Nothing here is timed."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
import jain_wallace_whole_run as whole_run  # noqa: E402

# The stand-in's files: every `old` string of the benchmark's PATCHES in its file, and code that does,
# in J&W's order, what the benchmark checks for
STAND_IN = {
    "preprocess/__init__.py": "",
    "preprocess/vectorizer.py": """
        class Vectorizer:  # what preprocess_data_BC.py pickles; the adapter fills it
            pass
        """,
    "common_code/metrics.py": "from pandas.io.json.normalize import nested_to_record\n",
    "common_code/plotting.py": "mpl.style.use('seaborn-poster')\nfrom matplotlib import tight_layout\n",
    "model/modelUtils.py": "self.masks = torch.ByteTensor(np.array(masks)).to(device)\n",
    "Trainers/DatasetBC.py": "vec = dict(path='preprocess/SST/vec_sst.p', min_length=5, args=args)\n",
    "ExperimentsBC.py": """
        import json
        import os
        import pickle
        import time
        from pathlib import Path


        def train_dataset(dataset, n_iters):
            folder = Path(dataset["output_dir"]) / "sst" / "lstm+tanh" / time.strftime("%s")
            folder.mkdir(parents=True)
            vec = pickle.load(open(Path(dataset["data_dir"]) / "preprocess" / "SST" / "vec_sst.p", "rb"))
            assert len(vec.seq_text["train"]) == len(vec.label["train"]) and vec.embeddings.shape[0] == vec.vocab_size
            (folder / "enc.th").write_text("weights")
            (folder / "epoch.txt").write_text(str(n_iters))
            (folder / "evaluate.json").write_text(json.dumps({"accuracy": 0.5, "roc_auc": 0.5}))
            return folder


        def train_dataset_on_encoders(dataset, encoders):
            folder = dataset["model"] = train_dataset(dataset, n_iters=8,)
            for name in ("gradients", "permutations", "multi_adversarial"):
                (folder / f"{name}_pdump.pkl").write_bytes(b"")
            test_data, force_run = dataset, True
            if True:  # J&W's line, commented out in master, at its own indentation
        #        evaluator.remove_and_run_experiment(test_data, force_run=force_run)
                pass


        class evaluator:
            @staticmethod
            def remove_and_run_experiment(test_data, force_run):
                (test_data["model"] / "remove_and_run_pdump.pkl").write_bytes(b"")


        def generate_graphs_on_encoders(dataset, encoders):
            for name in ("GradientXHist_kendalltau", "CorrGL_kendalltau", "Permutation_MAvDY", "eMaxJDS_Hist"):
                (dataset["model"] / f"{name}.pdf").write_bytes(b"%PDF")
        """,
    "train_and_run_experiments_bc.py": """
        import argparse
        import os
        import sys

        from Transparency.ExperimentsBC import *

        parser = argparse.ArgumentParser()
        for name in ("--dataset", "--data_dir", "--output_dir", "--encoder", "--attention"):
            parser.add_argument(name)
        args = parser.parse_args()
        dataset = {"output_dir": args.output_dir, "data_dir": args.data_dir}
        encoders = [args.encoder]

        if args.attention in ['tanh', 'all'] :
            train_dataset_on_encoders(dataset, encoders)
        #    generate_graphs_on_encoders(dataset, encoders)
        if args.attention in ['dot', 'all'] :
            pass
        """,
}


def stand_in_checkout(root: Path) -> Path:
    """The stand-in repository, with a `.bench-venv` that is this interpreter (so that the benchmark
    makes no venv and installs nothing)."""
    for name, text in STAND_IN.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    (root / ".bench-venv" / "bin").mkdir(parents=True)
    (root / ".bench-venv" / "bin" / "python").symlink_to(sys.executable)
    return root


def test_every_patch_has_its_line_in_the_stand_in():
    for name, old, _new, _why in whole_run.PATCHES:
        assert textwrap.dedent(STAND_IN[name]).count(old) == 1, (name, old)


@pytest.mark.slow
def test_the_whole_run_benchmark_runs_and_writes_its_tables(quick_run, tmp_path):
    checkout = stand_in_checkout(tmp_path / "original")
    data = tmp_path / "run" / "results" / "data" / "sst"
    shutil.copytree(quick_run / "results" / "data" / "synthetic", data)
    vectors = tmp_path / "run" / "results" / "embeddings" / "sst"
    vectors.mkdir(parents=True)
    words = [w for w in (data / "vocab.txt").read_text(encoding="utf-8").split("\n") if w]
    np.save(vectors / "vectors.npy", np.random.RandomState(0).standard_normal((len(words), 300)).astype(np.float32))
    meta = {  # what train_model reads of a build_embeddings record: the digest it verifies, what it records
        "vectors_sha256": hashlib.sha256((vectors / "vectors.npy").read_bytes()).hexdigest(),
        "source": "word2vec_local",
        "stand_in": "random vectors, for this test",
        "why": "this test writes them",
    }
    (vectors / "vectors.json").write_text(json.dumps(meta), encoding="utf-8")
    out = tmp_path / "whole_run.md"
    env = os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH")]))}
    command = [
        sys.executable,
        str(REPO / "benchmarks" / "jain_wallace_whole_run.py"),
        "--original",
        str(checkout),
        "--data",
        str(data),
        "--vectors",
        str(vectors),
        "--rounds",
        "1",
        "--epochs",
        "2",
        "--work",
        str(tmp_path / "work"),
        "--out",
        str(out),
    ]
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    text = out.read_text(encoding="utf-8")
    assert "Original / ours (wall medians)" in text
    for jobs, phases in whole_run.COMPARED:  # a row per comparison, every one of our jobs measured
        assert f"| {' + '.join(jobs)} |" in text and " + ".join(phases) in text
    assert "<checkout of J&W's code>" in text and str(tmp_path) not in text  # the reader's own folders as placeholders
