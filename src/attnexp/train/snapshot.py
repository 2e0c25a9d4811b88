"""The snapshot a stopped training resumes from: the whole state of a training after its last
finished epoch, written beside its model after every epoch and read back only by the same training
(`training_identity` in `attnexp.train`).
"""

from __future__ import annotations

import json
import pickle
import random
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

from attnexp import io
from attnexp.train.parts import Best, CheckpointSelection, Timing, TrainingRun

__all__ = ["Snapshot", "snapshot_path"]


class Snapshot:
    """The whole state of a training after its last finished epoch, so that a job stopped mid-training
    (Ctrl-C, a SIGTERM, a scheduler's time limit, a lost node) goes on from there when Snakemake
    runs it again, with the result a run never stopped gives, byte for byte: the weights, the
    optimiser's and the schedules' states, the best epoch so far and the early-stopping count, the
    history and timing, and every random generator (batch order, dropout, Python's and NumPy's).

    Written after every epoch beside the model (`.model.resume`, dot-named: no glob of the pipeline
    sees it), atomically and sealed, and removed once the model is written. `identity`: what the
    training is (settings, seed, threads, device, the digests of the files it reads, the code's
    digest, `training_identity`): the snapshot of any other training, or a damaged one, is not
    resumed from, and the log says why."""

    def __init__(self, path: str | Path | None, identity: str, log: Callable[[str], None]):
        self.path = None if path is None else Path(path)
        self.identity, self.log = identity, log

    def save(
        self,
        run: TrainingRun,
        *,
        epoch: int,
        stop: bool,
        rng: np.random.RandomState,
        checkpoints: CheckpointSelection,
        timing: Timing,
        history: list[dict],
    ) -> None:
        if self.path is None:
            return
        best = checkpoints.best
        batch_order, numpy_random = rng.get_state(), np.random.get_state()  # (name, keys, pos, has_gauss, gauss)
        record = {  # JSON: floats round-trip exactly (repr), NaN and infinities included
            "identity": self.identity,
            "epoch": epoch,
            "stop": stop,
            "history": history,
            "since_best": checkpoints.since_best,
            "best": None
            if best is None
            else {"score": best.score, "epoch": best.epoch, "dev": best.dev, "test": best.test},
            "timing": asdict(timing),
            "batch_order": [batch_order[0], *batch_order[2:]],
            "python_random": random.getstate(),
            "numpy_random": [numpy_random[0], *numpy_random[2:]],
        }
        state = {
            "record": json.dumps(record),
            "model": run.model.state_dict(),
            "best_model": None if best is None else best.state_dict,
            "optimizer": run.optimizer.state_dict(),
            "schedules": run.schedules.state_dict(),
            "batch_order_keys": torch.from_numpy(batch_order[1].astype(np.int64)),
            "numpy_random_keys": torch.from_numpy(numpy_random[1].astype(np.int64)),
            "torch_random": torch.get_rng_state(),
            "cuda_random": torch.cuda.get_rng_state_all() if run.device.type == "cuda" else [],
        }
        with io.atomic_path(self.path, seal=True) as tmp, open(tmp, "wb") as f:
            torch.save(state, f)

    def load(self) -> tuple[dict, dict] | None:
        """-> (the JSON record, the tensors) of this training's snapshot, or None (none, another
        training's, or damaged: said in the log, and the training starts from its first epoch)."""
        if self.path is None or not self.path.exists():
            return None
        try:
            io.verify_seal(self.path)
            state = torch.load(self.path, map_location="cpu", weights_only=True)
            record = json.loads(state.pop("record"))
        except (ValueError, RuntimeError, OSError, EOFError, KeyError, TypeError, pickle.UnpicklingError) as err:
            self.log(f"{self.path}: not resumed from, unreadable ({err}); training from the first epoch")
            return None
        if record.get("identity") != self.identity:
            self.log(
                f"{self.path}: not resumed from, the snapshot of another training (its settings, inputs or code differ); training from the first epoch"
            )
            return None
        return record, state

    def restore(
        self,
        saved: tuple[dict, dict],
        run: TrainingRun,
        rng: np.random.RandomState,
        checkpoints: CheckpointSelection,
        timing: Timing,
    ) -> tuple[int, bool, list[dict]]:
        """Put the snapshot's state into the run, its checkpoint selection, timing and generators;
        -> (the last finished epoch, whether it stopped early, the history)."""
        record, state = saved
        run.model.load_state_dict(state["model"])
        run.optimizer.load_state_dict(state["optimizer"])
        run.schedules.load_state_dict(state["schedules"])
        best = record["best"]
        if best is not None:
            checkpoints.best = Best(best["score"], best["epoch"], state["best_model"], best["dev"], best["test"])
        checkpoints.since_best = record["since_best"]
        for name, value in record["timing"].items():
            setattr(timing, name, value)
        name, *rest = record["batch_order"]
        rng.set_state((name, state["batch_order_keys"].numpy().astype(np.uint32), *rest))
        name, *rest = record["numpy_random"]
        np.random.set_state((name, state["numpy_random_keys"].numpy().astype(np.uint32), *rest))
        version, internal, gauss = record["python_random"]
        random.setstate((version, tuple(internal), gauss))
        torch.set_rng_state(state["torch_random"])
        if state["cuda_random"]:
            torch.cuda.set_rng_state_all(state["cuda_random"])
        self.log(f"resumed after epoch {record['epoch']} from {self.path}, the snapshot a stopped run left")
        return record["epoch"], record["stop"], record["history"]

    def remove(self) -> None:
        if self.path is not None:
            self.path.unlink(missing_ok=True)
            io.seal_path(self.path).unlink(missing_ok=True)


def snapshot_path(model_path: str | Path) -> Path:
    """Where a training keeps the snapshot it resumes from (`Snapshot`): beside its model, dot-named."""
    model_path = Path(model_path)
    return model_path.with_name(f".{model_path.stem}.resume")
