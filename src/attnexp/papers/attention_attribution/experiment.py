"""Hao et al. (2021) on the small Transformer: which heads matter by attention
attribution, what pruning them does to accuracy, and the per-example attribution graph.

- Head importance: I_{l,h} = mean over N dev examples of max_{i,j} Attr_{l,h}[i, j], the target the
  gold label (as the authors' `prune_head_with_attr.py`). The control ranks heads by their mean
  maximum attention.
- Head pruning: rank the L·H heads globally; for each fraction ρ mask the ⌊ρ·LH + 0.5⌋ least
  important (their attention multiplied by 0, no retraining) and measure test accuracy; ≥ 5 random
  head orders are the baseline.
- Attribution graph: S_l = Σ_h Attr_{l,h} with the predicted class as target, divided by its maximum
  over the query rows i ≥ 1; edges (l, i ← j) above τ are kept; the root is the token the top layer's
  `[CLS]` gains most from, and the graph grows top-down through the kept edges.

Attributions are batched (`attnexp.explain.attention_attribution`); pruning runs one masked forward
pass per batch, order and fraction.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch
from torch import nn

from attnexp import io
from attnexp.data.documents import DataFiles
from attnexp.explain.attention_attribution import attention_attribution
from attnexp.models.inputs import Batch, Example, collate, sorted_batches
from attnexp.plan import require
from attnexp.runs import restore_run
from attnexp.runtime import model_device, set_determinism

__all__ = [
    "ORDERS",
    "head_importance",
    "attention_importance",
    "pruning_order",
    "pruned_heads",
    "pruning_curves",
    "attribution_graph",
    "write_head_pruning",
    "write_attribution_graphs",
]

ORDERS = ("attribution", "attention", "random")


def _present(model: nn.Module, batch: Batch, rows: int) -> torch.Tensor:
    """(B, Tq, T) bool: query rows and keys that exist (the top layer's only row is `[CLS]`)."""
    keys = model.position_mask(batch)  # (B, T)
    queries = keys[:, :rows]
    return queries[:, :, None] & keys[:, None, :]


def _batches(model: nn.Module, examples: list[Example], batch_size: int):
    """(indices, batch on the model's device), sorted by length."""
    device = model_device(model)
    for indices in sorted_batches(np.array([len(e.tokens) + 2 for e in examples]), batch_size):
        yield indices, collate([examples[i] for i in indices], "sos_eos").to(device)


def head_importance(model: nn.Module, examples: list[Example], steps: int, riemann: str, batch_size: int) -> np.ndarray:
    """-> I (L, H): per head the mean over `examples` of its largest attribution (gold targets)."""
    total = np.zeros((model.cfg.layers, model.cfg.heads))
    for _, batch in _batches(model, examples, batch_size):
        for layer in range(model.cfg.layers):
            attribution, _ = attention_attribution(model, batch, batch.labels, layer, steps, riemann)  # (B, H, Tq, T)
            present = _present(model, batch, attribution.shape[2])[:, None]  # (B, 1, Tq, T)
            largest = attribution.masked_fill(~present, float("-inf")).flatten(2).max(dim=-1).values  # (B, H)
            total[layer] += largest.sum(dim=0).double().cpu().numpy()
    return total / len(examples)


@torch.no_grad()
def attention_importance(model: nn.Module, examples: list[Example], batch_size: int) -> np.ndarray:
    """-> (L, H): per head the mean over `examples` of its largest attention weight (the control)."""
    total = np.zeros((model.cfg.layers, model.cfg.heads))
    for _, batch in _batches(model, examples, batch_size):
        _, maps = model.run(batch)
        for layer, probs in enumerate(maps):  # (B, H, Tq, T)
            total[layer] += probs.flatten(2).max(dim=-1).values.sum(dim=0).double().cpu().numpy()
    return total / len(examples)


def pruning_order(importance: np.ndarray) -> np.ndarray:
    """Flat head indices (l·H + h), least important first; ties go to the lower index."""
    flat = np.asarray(importance, dtype=np.float64).ravel()
    return np.lexsort((np.arange(flat.size), flat))


def pruned_heads(fraction: float, n_heads: int) -> int:
    """⌊ρ·LH + 0.5⌋ heads (ρ of the L·H heads, rounded half up)."""
    return int(np.floor(fraction * n_heads + 0.5))


@torch.no_grad()
def _accuracy(model: nn.Module, batches: list[tuple[np.ndarray, Batch]], head_mask: torch.Tensor) -> float:
    correct = total = 0
    for _, batch in batches:
        logits, _ = model.run(batch, head_mask=head_mask)
        correct += int((logits.argmax(dim=-1) == batch.labels).sum())
        total += len(batch)
    return correct / total


def pruning_curves(
    model: nn.Module,
    examples: list[Example],
    orders: dict[str, list[np.ndarray]],
    fractions: list[float],
    batch_size: int,
) -> pd.DataFrame:
    """orders: name -> one or more head orders (least important first) -> tidy accuracies
    (order, draw, fraction, heads_pruned, accuracy)."""
    L, H = model.cfg.layers, model.cfg.heads
    batches = list(_batches(model, examples, batch_size))
    rows = []
    for name, draws in orders.items():
        for draw, order in enumerate(draws):
            for fraction in fractions:
                k = pruned_heads(fraction, L * H)
                mask = torch.ones(L * H)
                mask[torch.from_numpy(np.asarray(order[:k], dtype=np.int64))] = 0.0
                mask = mask.to(model_device(model))
                rows.append(
                    {
                        "order": name,
                        "draw": draw,
                        "fraction": fraction,
                        "heads_pruned": k,
                        "accuracy": _accuracy(model, batches, mask.view(L, H)),
                    }
                )
    return pd.DataFrame(rows)


def attribution_graph(
    model: nn.Module,
    example: Example,
    target: int,
    *,
    steps: int,
    riemann: str,
    threshold: float,
    skip_top: bool = False,
) -> dict:
    """One example's attribution tree -> {root, edges: [{layer, i, j, score}]}, layers 1-based,
    positions in the `<SOS>=[CLS] w_1 .. w_n <EOS>` sequence, scores normalised (step 2)."""
    batch = collate([example], "sos_eos").to(model_device(model))
    target_tensor = torch.tensor([target], device=batch.tokens.device)
    top = model.cfg.layers - (2 if skip_top else 1)
    if top < 0:
        raise ValueError("attattr_tree_skip_top needs a model of at least two layers")
    normalised = []
    for layer in range(top + 1):
        attribution, _ = attention_attribution(model, batch, target_tensor, layer, steps, riemann)
        summed = attribution[0].sum(dim=0).double().cpu()  # S_l (Tq, T), on the CPU for the tree search
        rows = (
            summed[1:] if summed.shape[0] > 1 else summed
        )  # the [CLS] row is left out of the max (but at the top, it is all there is)
        scale = rows.max()
        normalised.append(summed / scale if scale > 0 else torch.zeros_like(summed))
    highest = normalised[top].clone()
    highest[:, 0] = float("-inf")  # the root is a token, not [CLS]
    if highest.shape[0] > 1:
        highest.fill_diagonal_(float("-inf"))
    i_root, root = divmod(int(highest.argmax()), highest.shape[1])
    edges = [{"layer": top + 1, "i": i_root, "j": root, "score": float(normalised[top][i_root, root])}]
    frontier = {root}
    for layer in range(top - 1, -1, -1):  # grow top-down through the kept edges
        reached = set()
        for i in sorted(frontier):
            for j in torch.nonzero(normalised[layer][i] > threshold).flatten().tolist():
                edges.append({"layer": layer + 1, "i": i, "j": j, "score": float(normalised[layer][i, j])})
                reached.add(j)
        frontier |= reached  # the residual stream carries a token's own state up too
    return {"root": root, "edges": edges}


# ---------------------------------------------------------------------------------------------
# From files to files


def write_head_pruning(
    checkpoint,
    data: DataFiles,
    out_heads,
    out_pruning,
    settings: dict,
    *,
    seed: int,
    threads: int,
    log=print,
    device: str = "cpu",
) -> None:
    """Head importance on the first `importance_examples` dev instances and the pruning curves on the
    test split: heads.json (importance, attention control, orders) and pruning.csv. The model runs on
    `device` (the config's setting: auto | cpu | cuda)."""
    set_determinism(seed, threads)
    run = restore_run(checkpoint, data, device=device)
    require(run.spec, "attention_attribution")
    model = run.model
    dev = run.examples(data, "dev")[: settings["importance_examples"]]
    test = run.test_examples(data)
    importance = head_importance(model, dev, settings["steps"], settings["riemann"], settings["batch_size"])
    attention = attention_importance(model, dev, settings["batch_size"])
    n_heads = importance.size
    orders = {"attribution": [pruning_order(importance)], "attention": [pruning_order(attention)]}
    orders["random"] = [
        np.random.default_rng([seed, draw]).permutation(n_heads) for draw in range(settings["random_orders"])
    ]
    log(f"{run.spec.name}: head importance on {len(dev)} dev instances; pruning curves on {len(test)} test instances")
    curves = pruning_curves(model, test, orders, settings["fractions"], settings["batch_size"])
    io.write_json(
        out_heads,
        {
            "model": run.spec.name,
            "layers": model.cfg.layers,
            "heads": model.cfg.heads,
            "importance_examples": len(dev),
            "importance": np.round(importance, 8).tolist(),
            "attention_importance": np.round(attention, 8).tolist(),
            "orders": {name: [o.tolist() for o in draws] for name, draws in orders.items()},
        },
        seal=True,
    )
    io.write_csv(out_pruning, curves, seal=True)


def write_attribution_graphs(
    checkpoint, data: DataFiles, out, settings: dict, *, seed: int, threads: int, device: str = "cpu"
) -> None:
    """graphs.json: the attribution trees of the first `graph_examples` test instances with
    2..`graph_max_tokens` tokens, each with its tokens and predicted class (model on `device`)."""
    set_determinism(seed, threads)
    run = restore_run(checkpoint, data, device=device)
    require(run.spec, "attention_attribution")
    chosen = [e for e in run.test_examples(data) if 2 <= len(e.tokens) <= settings["graph_max_tokens"]][
        : settings["graph_examples"]
    ]
    graphs = []
    for example in chosen:
        with torch.no_grad():
            logits, _ = run.model(collate([example], "sos_eos").to(model_device(run.model)))
        predicted = int(logits.argmax(dim=-1)[0])
        graph = attribution_graph(
            run.model,
            example,
            predicted,
            steps=settings["steps"],
            riemann=settings["riemann"],
            threshold=settings["graph_threshold"],
            skip_top=settings["graph_skip_top"],
        )
        tokens = run.model.position_labels(collate([example], "sos_eos"), run.vocab)[0]
        graphs.append(
            {
                "id": example.id,
                "tokens": tokens,
                "label": run.classes[example.label],
                "predicted": run.classes[predicted],
                **graph,
            }
        )
    io.write_json(
        out,
        {
            "model": run.spec.name,
            "layers": run.model.cfg.layers,
            "threshold": settings["graph_threshold"],
            "graphs": graphs,
        },
        seal=True,
    )
