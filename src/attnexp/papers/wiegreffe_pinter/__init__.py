"""Wiegreffe & Pinter (2019), "Attention is not not Explanation": the paper's record and the checks of
its config section (torch-free). Its code: `experiment` (exports, run comparisons, the
model-consistent adversary, seed variance, the frontier), `tables` and `plots`.
"""

from __future__ import annotations

from attnexp.messages import close_match
from attnexp.papers.descriptor import (
    _OWN_ATTENTION,
    PRETRAINED_VECTORS,
    RUN_HEADING,
    Figures,
    Finding,
    InReport,
    Page,
    Paper,
    Protocol,
    Table,
)

__all__ = ["WIEGREFFE_PINTER"]


def _wiegreffe_pinter_problems(config: dict) -> list[str]:
    section, problems = config["wiegreffe_pinter"], []
    adversary = section["adversary"]
    if adversary["table_lambda"] not in adversary["lambdas"]:
        problems.append(
            f"config key 'wiegreffe_pinter.adversary.table_lambda': {adversary['table_lambda']} is not one of wiegreffe_pinter.adversary.lambdas {adversary['lambdas']}"
        )
    for i, name in enumerate(section["table2_only"]):
        if name not in config["datasets"]:
            problems.append(
                f"config key 'wiegreffe_pinter.table2_only.{i}': unknown dataset {name!r}{close_match(name, config['datasets'])}"
            )
    for name in section["dataset_seeds"]:
        if name not in config["datasets"]:
            problems.append(
                f"config key 'wiegreffe_pinter.dataset_seeds.{name}': unknown dataset {name!r}{close_match(name, config['datasets'])}"
            )
    edges = section["max_attention_bins"]
    if sorted(set(edges)) != edges:
        problems.append(
            f"config key 'wiegreffe_pinter.max_attention_bins': expected strictly increasing edges, got {edges}"
        )
    return problems


WIEGREFFE_PINTER = Paper(
    "wiegreffe_pinter",
    "Wiegreffe & Pinter",
    requirements=(
        _OWN_ATTENTION,
        (
            "imitable",
            "a flat or Transformer classifier of its own (uniform, guided and adversarial counterparts exist for it)",
        ),
    ),
    tasks=("binary",),
    anchors={
        "Wiegreffe & Pinter 2019": Protocol(
            "replicated", "test", PRETRAINED_VECTORS, "pretrained", r"lstm-(tanh|uniform)"
        )
    },
    tolerance_bases=(
        (
            "Table 2",
            "",
            "claims.performance_tolerance on the F1 gap base - uniform: the spread of one test F1 (J&W's repository, commits 675b0dc and 425a89a)",
        ),
    ),
    findings=(
        Finding(
            "Figure 2",
            "share of instances whose seed-model JSD",
            "J&W's adversarial attentions lie further from the base model's attention than attention from other "
            "random seeds does (the seed spread is the null distribution)",
            "§3.3 and Figure 2",
            "the BiLSTM base model on each dataset, against 8 seed models and J&W's per-instance adversary",
            threshold="ours: a majority of instances (0.5)",
        ),
        Finding(
            "Table 3",
            "F1(Base model guide) - F1(Trained MLP guide)",
            "The base model's attention guides a diagnostic MLP at least as well as the MLP's own trained attention",
            "§3.4 and Table 3",
            "the diagnostic MLP on each dataset",
        ),
        Finding(
            "Table 3",
            "F1(Base model guide) - F1(Uniform guide)",
            "... and better than uniform weights",
            "§3.4 and Table 3",
            "the diagnostic MLP on each dataset",
        ),
        Finding(
            "Table 3",
            "F1(Adversary guide) - F1(Base model guide)",
            "... while an adversary's attention guides it worse",
            "§3.4 and Table 3 (the adversary row)",
            "the diagnostic MLP on each dataset",
        ),
        Finding(
            "Table 4",
            "F1(adversary) - F1(base)",
            "A model-consistent adversary's distant attention costs performance",
            "§4 and Table 4",
            "the model-consistent adversary at the table's λ, each dataset",
        ),
        Finding(
            "Figure 4",
            "Spearman ρ(λ, mean test JSD)",
            "The adversary's attention moves further as its weight λ grows",
            "§4 and Figure 4",
            "the adversary's λ grid, each dataset (at least 3 λ values: with two, ρ is ±1 by construction)",
        ),
    ),
    locations={
        "Table 2": "Table 2 (test F1 of the base and uniform-attention models)",
        "test performance": "Table 2, first column (J&W's reported performance)",
    },
    measures={
        "wp_f1": ("test F1 of the model", "context"),
        "wp_uniform_f1": ("test F1 of its uniform-attention twin", "lower than the model's: its attention is needed"),
        "wp_mlp_guided_f1": (
            "diagnostic MLP test F1, guided by the model's attention",
            "higher than with uniform attention",
        ),
        "wp_mlp_uniform_f1": ("diagnostic MLP test F1, uniform attention", "the baseline"),
        "wp_mlp_trained_f1": ("diagnostic MLP test F1, its own trained attention", "the comparison"),
        "wp_adversary_jsd": (
            "model-consistent adversary: JSD from the model's attention",
            "lower: a consistent model cannot attend very differently",
        ),
    },
    config_problems=_wiegreffe_pinter_problems,
    page=Page(
        "wiegreffe-pinter-2019",
        "Wiegreffe & Pinter 2019: Attention is not not Explanation",
        "The uniform-attention baseline (Table 2), the diagnostic MLP guided by imposed attention (Table 3), the "
        "model-consistent adversary (Table 4, Figure 4) and the attention of models trained on other seeds (Figure 2).",
        (),
        (
            Table(
                "wiegreffe_pinter_uniform",
                "wiegreffe_pinter_uniform",
                report=InReport("Wiegreffe & Pinter 2019", "tables", "uniform"),
            ),
            Table(
                "wiegreffe_pinter_diagnostic",
                "wiegreffe_pinter_diagnostic",
                report=InReport("Wiegreffe & Pinter 2019", "tables", "diagnostic"),
            ),
            Table(
                "wiegreffe_pinter_adversary",
                "wiegreffe_pinter_adversary",
                report=InReport("Wiegreffe & Pinter 2019", "tables", "adversary"),
            ),
            Table(
                "wiegreffe_pinter_seeds",
                "wiegreffe_pinter_seeds",
                report=InReport("Wiegreffe & Pinter 2019", "tables", "seeds"),
            ),
        ),
        (
            Figures(
                tuple(
                    f"wiegreffe_pinter/{{dataset}}/{{model}}/seed{{seed}}/{n}.png"
                    for n in ("seeds_violin", "frontier", "example")
                ),
                "wiegreffe_pinter_figures",
                RUN_HEADING,
                ("lstm-tanh",),
                per_dataset=True,
            ),
        ),
    ),
    order=30,
)
