"""The GPU path against the CPU's. Runs only where CUDA is present (skipped on CPU machines, as CI's):
the same model trained on each device reaches the same metrics within a tolerance, a BiRNN gives
the same states on both (packed cuDNN sequences on the GPU, two fused calls on the CPU), and the
explanations and J&W permutation/adversarial experiments of one model agree across devices, from
the library calls and from the job writers with `device: cuda`.

Tolerances: GPU kernels round differently (cuDNN, TF32 off by default for matmuls in torch, but
cuDNN's LSTM may use it), so a trained model's metrics may move by a few test instances; states of
one forward pass agree to 1e-4, and so do explanation scores (atol 1e-4 + rtol 1e-3; on the CPU a
1e-4 relative change of every weight moves them by < 1e-5). The adversary gets 1e-3: its Adam steps
and output hinge amplify rounding (the same weight change moves the lstm-tanh adversary's ε-max JSD
by 4e-5 over 500 steps on the CPU, a QA model's by 1e-3, so only the lstm-tanh is compared).

S&S erasure, the ERASER battery, attention attribution and the attention export are compared the same
way: discrete outcomes (top items, flips, items removed, k, head orders, tree edges) equal, scores
within atol 1e-4 + rtol 1e-3. The tiny models' decisions are not near ties (a flip or an order that
rounding could change would show up here as a difference, and is what these tests are for)."""

from __future__ import annotations

import copy
import json

import numpy as np
import pandas as pd
import pytest
import torch
from tiny_models import flat, hierarchical, random_documents, random_examples, transformer
from tiny_tasks import load_config, quiet, run_fit, tiny_settings, write_dataset

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


def test_birnn_states_on_the_gpu_equal_the_cpus():
    from attnexp.models.encoders import BiRNN

    torch.manual_seed(0)
    for cell in ("lstm", "gru"):
        encoder = BiRNN(12, 6, cell).eval()
        x, lengths = torch.randn(5, 9, 12), torch.tensor([9, 3, 1, 7, 9])
        cpu_states, cpu_final = encoder.run(x, lengths)
        gpu_states, gpu_final = encoder.cuda().run(x.cuda(), lengths.cuda())
        assert torch.allclose(gpu_states.cpu(), cpu_states, atol=1e-4) and torch.allclose(
            gpu_final.cpu(), cpu_final, atol=1e-4
        )


def test_training_on_the_gpu_gives_the_cpus_metrics(tmp_path):
    from attnexp.spec import parse_model_name
    from attnexp.train import TrainingJob, fit

    config = load_config()
    data = write_dataset(tmp_path / "data")
    metrics = {}
    for device in ("cpu", "cuda"):
        out = tmp_path / device
        job = TrainingJob(
            data=data,
            vectors_path=None,
            guide_path=None,
            settings=tiny_settings(config, "lstm-tanh"),
            select_on="dev",
            seed=10,
            threads=1,
            device_setting=device,
            out_model=out / "model.pt",
            out_metrics=out / "metrics.json",
            out_timing=out / "timing.json",
            provenance={"test": True},
        )
        fit(parse_model_name("lstm-tanh", "binary"), job, log=lambda _: None)
        metrics[device] = json.loads((out / "metrics.json").read_text())
        assert json.loads((out / "timing.json").read_text())["device"] == device
    assert abs(metrics["cuda"]["test"]["accuracy"] - metrics["cpu"]["test"]["accuracy"]) <= 0.05


# token counts (no SOS/EOS): unequal, one single-token instance
LENGTHS = [7, 3, 11, 1, 5, 8, 20, 2]
EXPLAIN_SETTINGS = {
    "batch_size": 4,
    "loo_op": "delete",
    "ig_target": "logit",
    "ig_baseline": "pad",
    "ig_method": "gausslegendre",
    "ig_steps": 20,
    "ig_max_steps": 80,
    "ig_tolerance": 0.01,
}
METHODS = ("attention", "gradient", "loo", "ig")
# ε 0.05 above the hinge's margin 0.01: every candidate is feasible on both devices by a wide margin
JW_SETTINGS = {
    "max_tokens": 20000,
    "permutations": 20,
    "adv_eps_bc": 0.05,
    "adv_eps_qa": 0.05,
    "adversary": {"candidates": 5, "steps": 30, "lr": 0.01, "amsgrad": True, "penalty": 500.0, "margin": 0.01},
}


def assert_same_explanations(cpu: list[dict], gpu: list[dict]) -> None:
    """Records of one model's examples on each device: the same ids, lengths, predictions and IG point
    counts (the probabilities are >= 0.015 from 0.5, IG converges at its first count with |δ| < 1e-7),
    every vector within the module's tolerance."""
    assert len(gpu) == len(cpu)
    for c, g in zip(cpu, gpu):
        same = ("id", "length", "label", "predicted", "ig_steps", "ig_converged")
        assert {k: g[k] for k in same if k in c} == {k: c[k] for k in same if k in c}
        for key in ("probs", *METHODS):
            np.testing.assert_allclose(g[key], c[key], rtol=1e-3, atol=1e-4, err_msg=f"{c['id']}: {key}")
        assert abs(g["ig_delta"] - c["ig_delta"]) <= 1e-4, c["id"]


def assert_same_table(cpu: pd.DataFrame, gpu: pd.DataFrame, exact: list[str], close: dict[str, float]) -> None:
    """J&W per-instance tables: `exact` columns equal, `close` columns within their atol (+ rtol 1e-3)."""
    assert list(gpu.columns) == list(cpu.columns)
    assert gpu[exact].equals(cpu[exact])
    for column, atol in close.items():
        np.testing.assert_allclose(gpu[column], cpu[column], rtol=1e-3, atol=atol, err_msg=column)


def test_explanations_on_the_gpu_equal_the_cpus():
    from attnexp.explain import explain_examples
    from attnexp.runtime import set_determinism

    set_determinism(10, 1)  # as the jobs: an op without a deterministic CUDA kernel fails here too
    model, examples = flat("lstm", "tanh"), random_examples(LENGTHS)
    cpu = explain_examples(model, examples, EXPLAIN_SETTINGS, log=quiet, methods=METHODS)
    gpu = explain_examples(copy.deepcopy(model).cuda(), examples, EXPLAIN_SETTINGS, log=quiet, methods=METHODS)
    assert all(isinstance(r[key], np.ndarray) for r in gpu for key in ("probs", *METHODS))  # CPU arrays back
    assert_same_explanations(cpu, gpu)


def test_permutation_and_adversary_on_the_gpu_equal_the_cpus():
    from attnexp.papers.jain_wallace import experiment as jw
    from attnexp.runtime import set_determinism

    set_determinism(10, 1)
    model, examples = flat("lstm", "tanh"), random_examples(LENGTHS)
    on_gpu = copy.deepcopy(model).cuda()
    assert_same_table(
        jw.permutation_experiment(model, examples, JW_SETTINGS, 10),
        jw.permutation_experiment(on_gpu, examples, JW_SETTINGS, 10),
        exact=["id", "length", "predicted"],
        close={"max_attention": 1e-4, "median_output_difference": 1e-4},
    )
    cpu, cpu_export = jw.adversarial_experiment(model, examples, JW_SETTINGS, 10, log=quiet)
    gpu, gpu_export = jw.adversarial_experiment(on_gpu, examples, JW_SETTINGS, 10, log=quiet)
    assert_same_table(
        cpu,
        gpu,
        exact=["id", "length", "predicted", "feasible_candidates"],
        close={"max_attention": 1e-4, "eps_max_jsd": 1e-3, "output_difference": 1e-3},
    )
    for c, g in zip(cpu_export, gpu_export, strict=True):
        assert (g["id"], g["length"], len(g["attention"])) == (c["id"], c["length"], c["length"])
        np.testing.assert_allclose(g["attention"], c["attention"], atol=1e-3, err_msg=c["id"])


def test_the_jobs_with_device_cuda_write_the_cpus_results(tmp_path):
    """write_explanations and the J&W writers restore the checkpoint onto the GPU (`device: cuda`)."""
    from attnexp.explain import read_explanations, write_explanations
    from attnexp.papers.jain_wallace import experiment as jw

    data = write_dataset(tmp_path / "data")
    _, checkpoint = run_fit(load_config(), data, tmp_path / "model")
    for device in ("cpu", "cuda"):
        out = tmp_path / device
        write_explanations(
            checkpoint,
            data,
            {method: out / f"{method}.jsonl" for method in METHODS},
            EXPLAIN_SETTINGS,
            seed=10,
            threads=1,
            log=quiet,
            device=device,
        )
        jw.write_permutation(
            checkpoint, data, out / "permutation.csv", settings=JW_SETTINGS, seed=10, threads=1, device=device
        )
        jw.write_adversarial(
            checkpoint,
            data,
            out / "adversarial.csv",
            out / "adversarial.jsonl",
            settings=JW_SETTINGS,
            seed=10,
            threads=1,
            log=quiet,
            device=device,
        )
    cpu, gpu = (read_explanations([tmp_path / device / f"{m}.jsonl" for m in METHODS]) for device in ("cpu", "cuda"))
    assert_same_explanations(cpu, gpu)
    cpu, gpu = (pd.read_csv(tmp_path / device / "permutation.csv") for device in ("cpu", "cuda"))
    assert_same_table(
        cpu, gpu, exact=["id", "length", "predicted"], close={"max_attention": 1e-4, "median_output_difference": 1e-4}
    )
    cpu, gpu = (pd.read_csv(tmp_path / device / "adversarial.csv") for device in ("cpu", "cuda"))
    assert_same_table(
        cpu,
        gpu,
        exact=["id", "length", "predicted", "feasible_candidates"],
        close={"max_attention": 1e-4, "eps_max_jsd": 1e-3, "output_difference": 1e-3},
    )


# ---------------------------------------------------------------------------------------------
# Serrano & Smith, faithfulness, attention attribution, the attention export

SS_SETTINGS = {"max_tokens": 60, "permutations": 5, "attention_ascending": True, "random_item": "paper"}
SS_EXACT = {
    "erasure": ["id", "n", "predicted", "top_by", "top", "random", "flip_top", "flip_random"],
    "removal": ["id", "n", "predicted", "ranking", "permutation", "flipped", "removed"],
}
SS_CLOSE = {
    "erasure": [
        "top_attention",
        "random_attention",
        "delta_attention",
        "js_top",
        "js_random",
        "delta_js",
        "kl_top",
        "kl_random",
    ],
    "removal": ["fraction", "removed_mass"],
}


def assert_same_frame(cpu: pd.DataFrame, gpu: pd.DataFrame, exact: list[str], close: list[str]) -> None:
    assert list(gpu.columns) == list(cpu.columns) and len(gpu) == len(cpu)
    pd.testing.assert_frame_equal(gpu[exact], cpu[exact])
    for column in close:
        np.testing.assert_allclose(
            gpu[column].astype(float), cpu[column].astype(float), rtol=1e-3, atol=1e-4, err_msg=column
        )


@pytest.mark.parametrize("name", ["han-rnn", "flan-rnn", "lstm-tanh", "transformer-cls"])
def test_serrano_smith_on_the_gpu_equals_the_cpus(name):
    from attnexp.papers.serrano_smith import experiment as ss
    from attnexp.runtime import set_determinism

    set_determinism(5, 1)
    model = {
        "han-rnn": lambda: hierarchical("han", "rnn", n_classes=3),
        "flan-rnn": lambda: hierarchical("flan", "rnn", n_classes=3),
        "lstm-tanh": lambda: flat("lstm", "tanh"),
        "transformer-cls": lambda: transformer(n_classes=3),
    }[name]()
    examples = random_documents(LENGTHS, seed=3, n_classes=3)
    cpu = ss.run_interventions(model, examples, SS_SETTINGS, 5, log=quiet)
    gpu = ss.run_interventions(copy.deepcopy(model).cuda(), examples, SS_SETTINGS, 5, log=quiet)
    for table, c, g in zip(("erasure", "removal"), cpu, gpu):
        assert_same_frame(c, g, SS_EXACT[table], SS_CLOSE[table])


def test_faithfulness_on_the_gpu_equals_the_cpus():
    from attnexp.papers.faithfulness import experiment as ff
    from attnexp.runtime import set_determinism

    set_determinism(10, 1)
    examples = random_documents(LENGTHS, seed=4)
    han = hierarchical("han", "rnn")
    for unit in ("sentences", "tokens"):  # a HAN over its own units, and over its tokens (token attention)
        units = [ff.attended_units(e, unit) for e in examples]
        scores = {
            device: ff.unit_rankings(m, examples, units, unit=unit)
            for device, m in (("cpu", han), ("cuda", copy.deepcopy(han).cuda()))
        }
        for name in ("attention", "loo"):
            for c, g in zip(scores["cpu"][name], scores["cuda"][name], strict=True):
                np.testing.assert_allclose(g, c, rtol=1e-3, atol=1e-4, err_msg=f"{unit}: {name}")
        draws = ff.random_rankings([len(u) for u in units], 10, 2)
        cpu = ff.eraser(han, examples, scores["cpu"], random=draws, units=units, unit=unit)
        gpu = ff.eraser(copy.deepcopy(han).cuda(), examples, scores["cpu"], random=draws, units=units, unit=unit)
        assert_same_frame(cpu, gpu, ["ranking", "id", "bin", "k", "n", "unit"], ["comprehensiveness", "sufficiency"])


def test_attention_attribution_on_the_gpu_equals_the_cpus():
    from attnexp.papers.attention_attribution import experiment as aa
    from attnexp.runtime import set_determinism

    set_determinism(10, 1)
    model, examples = transformer(layers=2), random_examples(LENGTHS, seed=2)
    on_gpu = copy.deepcopy(model).cuda()
    for fn in (
        lambda m: aa.head_importance(m, examples, 5, "right", 3),
        lambda m: aa.attention_importance(m, examples, 3),
    ):
        np.testing.assert_allclose(fn(on_gpu), fn(model), rtol=1e-3, atol=1e-4)
    orders = {
        "attribution": [aa.pruning_order(aa.head_importance(model, examples, 5, "right", 3))],
        "random": [np.array([3, 0, 2, 1])],
    }
    cpu, gpu = (aa.pruning_curves(m, examples, orders, [0.0, 0.5, 1.0], 3) for m in (model, on_gpu))
    pd.testing.assert_frame_equal(gpu, cpu)  # accuracies of the same decisions
    for example in examples[:3]:
        cpu, gpu = (
            aa.attribution_graph(m, example, 1, steps=10, riemann="right", threshold=0.4) for m in (model, on_gpu)
        )
        assert gpu["root"] == cpu["root"] and [(e["layer"], e["i"], e["j"]) for e in gpu["edges"]] == [
            (e["layer"], e["i"], e["j"]) for e in cpu["edges"]
        ]
        np.testing.assert_allclose(
            [e["score"] for e in gpu["edges"]], [e["score"] for e in cpu["edges"]], rtol=1e-3, atol=1e-4
        )


def test_the_other_model_jobs_with_device_cuda_write_the_cpus_results(tmp_path):
    """S&S interventions, the ERASER battery and the attention export restore the checkpoint onto the
    GPU (`device: cuda`) and write the CPU's results."""
    from attnexp.explain import write_explanations
    from attnexp.papers.faithfulness import experiment as ff
    from attnexp.papers.serrano_smith import experiment as ss
    from attnexp.runs import export_attention

    config = load_config()
    data = write_dataset(tmp_path / "data")
    _, checkpoint = run_fit(config, data, tmp_path / "model")
    settings = config["faithfulness"] | {
        "random_rankings": 2,
        "max_instances": 10,
        "rankings": ["attention", "gradient", "loo"],
    }
    for device in ("cpu", "cuda"):
        out = tmp_path / device
        explanations = [out / f"{method}.jsonl" for method in ("attention", "gradient", "loo")]
        write_explanations(
            checkpoint,
            data,
            {path.stem: path for path in explanations},
            EXPLAIN_SETTINGS,
            seed=10,
            threads=1,
            log=quiet,
            device="cpu",
        )
        ss.write_interventions(
            checkpoint,
            data,
            out / "erasure.csv",
            out / "removal.csv",
            settings=config["serrano_smith"],
            threads=1,
            log=quiet,
            device=device,
        )
        ff.write_faithfulness(
            checkpoint, data, explanations, out / "eraser.csv", settings=settings, seed=10, threads=1, device=device
        )
        export_attention(checkpoint, data, out / "attention.jsonl", batch_size=8, device=device)
    for table in ("erasure", "removal"):
        cpu, gpu = (pd.read_csv(tmp_path / device / f"{table}.csv", dtype={"id": str}) for device in ("cpu", "cuda"))
        assert_same_frame(cpu, gpu, SS_EXACT[table], SS_CLOSE[table])
    cpu, gpu = (pd.read_csv(tmp_path / device / "eraser.csv", dtype={"id": str}) for device in ("cpu", "cuda"))
    assert_same_frame(cpu, gpu, ["ranking", "id", "bin", "k", "n"], ["comprehensiveness", "sufficiency"])
    cpu, gpu = (
        [json.loads(line) for line in (tmp_path / device / "attention.jsonl").read_text().splitlines()]
        for device in ("cpu", "cuda")
    )
    assert [(r["id"], r["split"], r["length"]) for r in gpu] == [(r["id"], r["split"], r["length"]) for r in cpu]
    for c, g in zip(cpu, gpu):
        np.testing.assert_allclose(
            g["attention"] + g["probs"], c["attention"] + c["probs"], rtol=1e-3, atol=1e-4, err_msg=c["id"]
        )
