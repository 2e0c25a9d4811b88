"""A small encoder-only Transformer trained from scratch (Hao et al. 2021's setting), in
the nanoGPT manner: one readable module, attention computed explicitly in fp32.

    tokens (B, T) `<SOS> w_1 .. w_n <EOS> <PAD>..`, `<SOS>` acting as `[CLS]`
      -> token + learned position embeddings (B, T, d)
      -> layers 1..L-1: pre-LN blocks, multi-head self-attention over the present positions + GELU FFN
      -> layer L: the `[CLS]` query only, attending over the real tokens w_1..w_n
      -> final LayerNorm of the `[CLS]` state -> Linear(d -> C)

Why the last layer is special. Only the `[CLS]` row of the top layer reaches the classifier, so the
other rows are never computed on the prediction path (their attribution would be exactly zero). That
row attends over the real tokens only, as every recurrent model of the project does (J&W §1: never
SOS, EOS or padding), so "the model's attention" is one distribution per head over w_1..w_n, which
the experiments can read and impose through the shared contract:

    encode(batch) -> Encoded(hidden = the top layer's values (B, T, d), mask = real tokens (B, T),
                             heads = its own per-head attention (B, H, T),
                             residual = the `[CLS]` residual stream (B, d))
    decode(encoded, attention=None) -> (logits (..., B, C), attention (..., B, T))

`decode` without `attention` uses each head's own weights and reports their mean; an imposed
`attention` (..., B, T) is given to every head. The experiments impose weights head by head by
replacing `encoded.heads` with (..., B, H, T) (`attnexp.experiments.cached.decode_heads`). `run` is
the full pass for the Transformer-only methods: every layer's attention maps, attention imposed per
layer (attention attribution scales them), and a head mask (head pruning).

`transformer-uniform` (W&P §3.2's twin) is the same network whose `[CLS]` readout attends 1/n over
the real tokens in every head, trained end to end.

Positions beyond `max_length` are masked as keys in every layer, so they never reach `[CLS]`: the
same output as truncating the input there (max length 256, truncated), while every
per-token vector keeps the instance's full length (D-ALIGN).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from attnexp.models.attention import present_mask, real_token_mask, square_maps
from attnexp.models.inputs import Batch, Encoded

__all__ = ["TransformerConfig", "TransformerClassifier"]


@dataclass
class TransformerConfig:
    vocab_size: int
    n_classes: int
    encoder: str = "transformer"
    attention: str = "cls"  # cls: the `[CLS]` query's own attention | uniform: 1/n in every head (W&P §3.2's twin)
    layers: int = 4
    heads: int = 4
    d_model: int = 128
    ffn: int = 512
    dropout: float = 0.1
    max_length: int = 256  # positions with a learned embedding; keys beyond are masked


class SelfAttention(nn.Module):
    """Multi-head scaled dot-product attention with the probabilities exposed (no fused kernel)."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        if cfg.d_model % cfg.heads:
            raise ValueError(f"d_model {cfg.d_model} is not divisible by {cfg.heads} heads")
        self.heads, self.head_dim = cfg.heads, cfg.d_model // cfg.heads
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.out = nn.Linear(cfg.d_model, cfg.d_model)
        self.dropout = nn.Dropout(cfg.dropout)

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, d) -> (B, H, T, d/H)."""
        B, T, _ = x.shape
        return x.view(B, T, self.heads, self.head_dim).transpose(1, 2)

    def probabilities(self, q: torch.Tensor, k: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        """q (B, H, Tq, dh), k (B, H, T, dh), keys (B, Tq | 1, T) bool -> (B, H, Tq, T), in fp32
        at least (fp64 for a model in fp64)."""
        dtype = torch.promote_types(q.dtype, torch.float32)
        scores = (q.to(dtype) @ k.to(dtype).transpose(-2, -1)) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(~keys[:, None], float("-inf"))
        return torch.softmax(scores, dim=-1).masked_fill(~keys[:, None], 0.0)

    def mix(self, probs: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """probs (B, H, Tq, T), v (B, H, T, dh) -> the projected mixture (B, Tq, d)."""
        B, _, Tq, _ = probs.shape
        mixed = (self.dropout(probs).to(v.dtype) @ v).transpose(1, 2).reshape(B, Tq, -1)
        return self.out(mixed)


class Block(nn.Module):
    """Pre-LN Transformer block: x + attention(LN(x)), then x + FFN(LN(x))."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.ln_attention = nn.LayerNorm(cfg.d_model)
        self.attention = SelfAttention(cfg)
        self.ln_ffn = nn.LayerNorm(cfg.d_model)
        self.ffn = nn.Sequential(
            nn.Linear(cfg.d_model, cfg.ffn), nn.GELU(), nn.Linear(cfg.ffn, cfg.d_model), nn.Dropout(cfg.dropout)
        )
        self.dropout = nn.Dropout(cfg.dropout)

    def forward(self, x, keys, imposed=None, head_mask=None):
        """x (B, T, d), keys (B, 1 | T, T) -> x (B, T, d), own attention (B, H, T, T). `imposed`
        replaces the attention probabilities (B, H, T, T); `head_mask` (H,) scales each head's."""
        q, k, v = (self.attention.split_heads(t) for t in self.attention.qkv(self.ln_attention(x)).chunk(3, dim=-1))
        own = self.attention.probabilities(q, k, keys)
        used = own if imposed is None else imposed
        if head_mask is not None:
            used = used * head_mask[None, :, None, None]
        x = x + self.dropout(self.attention.mix(used, v))
        return x + self.ffn(self.ln_ffn(x)), own

    def cls_inputs(self, x, keys):
        """The top layer's inputs for the `[CLS]` query alone: its own per-head attention over `keys`
        (B, T) -> (B, H, T), and the values (B, T, d)."""
        q, k, v = self.attention.qkv(self.ln_attention(x)).chunk(3, dim=-1)
        q_cls = self.attention.split_heads(q[:, :1])  # (B, H, 1, dh)
        own = self.attention.probabilities(q_cls, self.attention.split_heads(k), keys[:, None, :])[:, :, 0]  # (B, H, T)
        return own, v

    def cls_output(self, x_cls, context):
        """The `[CLS]` residual (B, d) and its attention mixture before projection (..., B, d) ->
        the block's `[CLS]` output (..., B, d)."""
        x = x_cls + self.dropout(self.attention.out(context))
        return x + self.ffn(self.ln_ffn(x))


class TransformerClassifier(nn.Module):
    layout = "sos_eos"
    guided = False

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        if cfg.layers < 1:
            raise ValueError(f"a Transformer needs at least one layer, got {cfg.layers}")
        if cfg.attention not in ("cls", "uniform"):
            raise ValueError(f"a Transformer's `[CLS]` readout attends with 'cls' or 'uniform', got {cfg.attention!r}")
        self.cfg = cfg
        self.embedding = nn.Embedding(cfg.vocab_size, cfg.d_model, padding_idx=0)
        self.positions = nn.Embedding(cfg.max_length, cfg.d_model)
        self.dropout = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        self.ln_final = nn.LayerNorm(cfg.d_model)
        self.decoder = nn.Linear(cfg.d_model, cfg.n_classes)
        self.apply(self._init)

    @staticmethod
    def _init(module):
        """GPT-2's initialisation (nanoGPT): N(0, 0.02) weights, zero biases, PAD row zero."""
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)
            if isinstance(module, nn.Embedding) and module.padding_idx is not None:
                with torch.no_grad():
                    module.weight[module.padding_idx].zero_()

    # ------------------------------------------------------------------ the shared contract

    def _lower(self, batch: Batch, embedded=None, imposed=None, head_mask=None):
        """Embeddings and layers 1..L-1 -> x (B, T, d), their own attention maps [(B, H, T, T)],
        and the keys the top layer's `[CLS]` may attend to (B, T)."""
        T = batch.tokens.shape[1]
        if embedded is None:
            embedded = self.embedding(batch.tokens)
        positions = torch.arange(T, device=batch.tokens.device)
        visible = positions < self.cfg.max_length  # (T,) keys beyond the learned positions are masked
        x = self.dropout(embedded + self.positions(positions.clamp(max=self.cfg.max_length - 1)))
        keys = (present_mask(batch.lengths, T) & visible)[:, None, :]  # (B, 1, T)
        maps = []
        for layer, block in enumerate(self.blocks[:-1]):
            x, own = block(x, keys, (imposed or {}).get(layer), None if head_mask is None else head_mask[layer])
            maps.append(own)
        return x, maps, real_token_mask(batch.lengths, T) & visible

    def _encoded(self, x, cls_keys, mask) -> Encoded:
        own, values = self.blocks[-1].cls_inputs(x, cls_keys)
        if self.cfg.attention == "uniform":  # frozen 1/n over the keys `[CLS]` reads, in every head
            own = (cls_keys / cls_keys.sum(-1, keepdim=True).clamp(min=1))[:, None].expand_as(own).to(own.dtype)
        return Encoded(values, mask, heads=own, residual=x[:, 0])

    def encode(self, batch: Batch, embedded: torch.Tensor | None = None) -> Encoded:
        """tokens (B, T) -> Encoded(values (B, T, d), real-token mask (B, T), [CLS] residual (B, d),
        own per-head attention (B, H, T)). `embedded` (B, T, d) replaces the token embeddings
        (input attributions); positions are added either way."""
        x, _, cls_keys = self._lower(batch, embedded)
        return self._encoded(x, cls_keys, real_token_mask(batch.lengths, batch.tokens.shape[1]))

    def decode(self, encoded: Encoded, attention: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """-> logits (..., B, C), attention (..., B, T). Without `attention`, each head uses its weights
        in `encoded.heads` — its own, or per-head weights (..., B, H, T) the caller put there — and
        their head mean is reported; an imposed `attention` (..., B, T) is used by every head."""
        block = self.blocks[-1]
        if attention is None:
            B, T, d = encoded.hidden.shape
            values = encoded.hidden.view(B, T, block.attention.heads, block.attention.head_dim)  # (B, T, H, dh)
            context = torch.einsum("...bht,bthd->...bhd", block.attention.dropout(encoded.heads), values)
            context = context.reshape(*context.shape[:-2], d)  # (..., B, d)
            attention = encoded.heads.mean(dim=-2)
        else:
            context = torch.einsum("...bt,btd->...bd", attention, encoded.hidden)  # every head, the same weights
        return self.decoder(self.ln_final(block.cls_output(encoded.residual, context))), attention

    def forward(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        return self.decode(self.encode(batch))

    # ------------------------------------------------------------------ Transformer-only methods

    def run(self, batch: Batch, embedded=None, imposed: dict | None = None, head_mask: torch.Tensor | None = None):
        """The full pass -> logits (B, C) and every layer's own attention [(B, H, T, T)] * (L-1) +
        the top layer's `[CLS]` row (B, H, 1, T). `imposed` {layer: probabilities of those shapes}
        replaces a layer's attention (the layers above see the consequences); `head_mask` (L, H)
        multiplies each head's attention (0 = pruned)."""
        imposed = imposed or {}
        x, maps, cls_keys = self._lower(batch, embedded, imposed, head_mask)
        encoded = self._encoded(x, cls_keys, real_token_mask(batch.lengths, batch.tokens.shape[1]))
        maps.append(encoded.heads[:, :, None, :])
        top = self.cfg.layers - 1
        heads = imposed[top][:, :, 0] if top in imposed else encoded.heads
        if head_mask is not None:
            heads = heads * head_mask[top][None, :, None]
        logits, _ = self.decode(encoded._replace(heads=heads))
        return logits, maps

    def attention_maps(self, batch: Batch) -> torch.Tensor:
        """Every layer's attention as square maps (B, L, H, T, T) for rollout (`square_maps`)."""
        return square_maps(self.run(batch)[1])

    def position_mask(self, batch: Batch) -> torch.Tensor:
        """(B, T) the positions `attention_maps` and `run` are over: `[CLS]`, the tokens, `<EOS>`."""
        return present_mask(batch.lengths, batch.tokens.shape[1])

    def token_scores(self, batch: Batch, per_position: torch.Tensor) -> torch.Tensor:
        """Scores over the positions -> over the tokens: the same axis here."""
        return per_position

    def position_labels(self, batch: Batch, vocab: list[str]) -> list[list[str]]:
        """Each instance's positions as text: `[CLS]`, its words, `<EOS>`."""
        return [
            ["[CLS]", *(vocab[t] for t in row[1 : n - 1].tolist()), "<EOS>"]
            for row, n in zip(batch.tokens, batch.lengths.tolist())
        ]
