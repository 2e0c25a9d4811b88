"""The GPU path against the CPU's. Runs only where CUDA is present (skipped on CPU machines, as CI's):
the same model trained on each device reaches the same metrics within a tolerance, and a BiRNN gives
the same states on both (packed cuDNN sequences on the GPU, two fused calls on the CPU).

Tolerances: GPU kernels round differently (cuDNN, TF32 off by default for matmuls in torch), so a
trained model's metrics may move by a few test instances; states of one forward pass agree to 1e-4."""

from __future__ import annotations

import json

import pytest
import torch

from tiny_tasks import load_config, tiny_settings, write_dataset

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


def test_birnn_states_on_the_gpu_equal_the_cpus():
    from attnexp.models.encoders import BiRNN

    torch.manual_seed(0)
    for cell in ("lstm", "gru"):
        encoder = BiRNN(12, 6, cell).eval()
        x, lengths = torch.randn(5, 9, 12), torch.tensor([9, 3, 1, 7, 9])
        cpu_states, cpu_final = encoder.run(x, lengths)
        gpu_states, gpu_final = encoder.cuda().run(x.cuda(), lengths.cuda())
        assert torch.allclose(gpu_states.cpu(), cpu_states, atol=1e-4) and torch.allclose(gpu_final.cpu(), cpu_final, atol=1e-4)


def test_training_on_the_gpu_gives_the_cpus_metrics(tmp_path):
    from attnexp.spec import parse_model_name
    from attnexp.train import fit

    config = load_config()
    data_dir = write_dataset(tmp_path / "data")
    metrics = {}
    for device in ("cpu", "cuda"):
        out = tmp_path / device
        fit(parse_model_name("lstm-tanh", "binary"), data_dir, None, None, tiny_settings(config, "lstm-tanh"), "dev",
            10, 1, device, out / "model.pt", out / "metrics.json", out / "timing.json", {"test": True}, log=lambda _: None)
        metrics[device] = json.loads((out / "metrics.json").read_text())
        assert json.loads((out / "timing.json").read_text())["device"] == device
    assert abs(metrics["cuda"]["test"]["accuracy"] - metrics["cpu"]["test"]["accuracy"]) <= 0.05
