"""The unit of work a job's cost grows with, for every job type a plan is priced as: what turns a
dataset's split sizes into the work of one job, on which `attnexp.cost` prices a plan and
`attnexp.cost_rates` measures seconds per unit.

| job type | unit |
|---|---|
| train_model | training tokens x the protocol's epochs (so the rate carries what early stopping saves) |
| explain loo (the explain_together job: attention, gradient and leave-one-out) | test tokens x mean test length (every instance re-run once per token) |
| explain_together with more methods (`explain.together`) | its leave-one-out, plus each added method at its own job's rate |
| faithfulness_eraser | test tokens x (70 + mean test length) (~70 + n forward passes per instance) |
| other per-run jobs (explain by method, J&W, S&S, W&P, attention attribution, export) | test tokens (export: every split's) |
| preprocess_dataset, build_embeddings | training tokens |

A job's model family (`lstm`, `cnn`, `han`, `transformer`, ..., `pretrained-<encoder>`) selects its rate.
"""

from __future__ import annotations

__all__ = [
    "TOGETHER_AS_LOO",
    "PRETRAINED",
    "together_methods",
    "job_types",
    "job_type",
    "family",
    "tokens",
    "units",
    "split_sizes",
]

QUADRATIC = {("explain", "loo")}
TOGETHER_AS_LOO = ("attention", "gradient", "loo")  # explain_together's default methods, priced as its leave-one-out
PRETRAINED = "pretrained-"  # the family of a pretrained encoder, never priced at another family's rate
ERASER_PASSES = 70  # config.yaml faithfulness: the battery costs ~70 + n forward passes per instance
TRAINING_TOKENS = {"preprocess_dataset", "build_embeddings"}
ALL_SPLITS = {"export_attention"}


def together_methods(config: dict) -> tuple[str, ...]:
    """The explain_together job's methods in a run's config (a run from before `explain.together`: the three)."""
    return tuple(config["explain"].get("together", TOGETHER_AS_LOO))


def job_types(rule: str, wildcards: dict, config: dict) -> tuple[tuple[str, str | None], ...]:
    """The job types a planned job is priced as: its own, except an explain_together job computing more
    than the three, priced as its leave-one-out plus each added method's own job (IG, say)."""
    if rule != "explain_together":
        return (job_type(rule, wildcards),)
    together = together_methods(config)
    if "loo" not in together:  # each method at its own job's rate
        return tuple(("explain", method) for method in together)
    return (("explain", "loo"), *(("explain", method) for method in together if method not in TOGETHER_AS_LOO))


def job_type(rule: str, wildcards: dict) -> tuple[str, str | None]:
    if (
        rule == "explain_together"
    ):  # attention, gradient and leave-one-out: leave-one-out's cost, the others add two passes
        return ("explain", "loo")
    return (rule, wildcards.get("method")) if rule == "explain" else (rule, None)


def family(config: dict, dataset: str, model: str | None) -> str:
    from attnexp.plan import model_spec

    if model is None:
        return "-"
    spec = model_spec(config, dataset, model)
    named = {
        "flat": spec.encoder,
        "qa": f"qa-{spec.encoder}",
        "hierarchical": spec.name,  # its encoder sets the cost: han-rnn runs several times slower than han-none
        "transformer": "transformer",
        "pretrained": PRETRAINED + spec.encoder,  # each encoder its own size
    }
    return named.get(spec.family, spec.family)  # a family registered by a plug-in: its name


def tokens(stats: dict, split: str) -> float:
    part = stats["splits"][split]
    return part["n"] * part["mean_length"]


def units(kind: tuple[str, str | None], stats: dict, epochs: float | None) -> float:
    rule, method = kind
    if rule == "train_model":
        return tokens(stats, "train") * epochs
    if rule in TRAINING_TOKENS:
        return tokens(stats, "train")
    if rule in ALL_SPLITS:
        return sum(tokens(stats, s) for s in stats["splits"])
    test = tokens(stats, "test")
    if (rule, method) in QUADRATIC:
        return test * stats["splits"]["test"]["mean_length"]
    if rule == "faithfulness_eraser":
        return test * (ERASER_PASSES + stats["splits"]["test"]["mean_length"])
    return test


def split_sizes(stats: dict) -> dict:
    """What pricing needs of a dataset's `stats.json`: each split's instances and mean length."""
    return {"splits": {s: {"n": p["n"], "mean_length": p["mean_length"]} for s, p in stats["splits"].items()}}
