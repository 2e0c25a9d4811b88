"""A pretrained Transformer encoder (BERT or DistilBERT, through Hugging Face `transformers`), fine-tuned
on a dataset's tokens and read out at `[CLS]`, under the same contract as every model of the project.

    tokens (B, T) `<SOS> w_1 .. w_n <EOS> <PAD>..` (the dataset's own tokens and vocabulary)
      -> word pieces: `<SOS>` -> [CLS], each w_t -> its pieces (the encoder's tokenizer, at most
         `word_pieces` per token), `<EOS>` -> [SEP], `<UNK>` -> [UNK]; at most `max_pieces` per instance
      -> the pretrained encoder's layers 1..L-1 as published (eager attention)
      -> layer L: the `[CLS]` query only, attending over the pieces of w_1..w_n (not [CLS], [SEP])
      -> Linear(d -> C) on its `[CLS]` output (dropout before it)

Tokens, not pieces, are the unit of every explanation, so per-token outputs have the dataset's length:

- **Input embeddings.** `embedding(tokens)` gives each token's piece embeddings side by side,
  (B, T, word_pieces · E), zero in unused slots; `encode(batch, embedded)` takes replacements of that
  shape. Gradient × input and integrated gradients, summed over a token's coordinates, are therefore
  the sums of its pieces' attributions.
- **Attention.** A token's weight in a head is the sum of its pieces' weights. Imposed token weights
  keep each token's split among its pieces as the model's own (per head): `encode` stores each token's
  value as its pieces' values averaged by the head's own weights, so imposing a head's own token
  weights returns the model's own output exactly.
- **Why the top layer is computed here.** Only the `[CLS]` row of the top layer reaches the classifier;
  computing that row from the layer's own weights (BERT's post-LN block) lets the experiments impose
  attention on it, as for the project's own Transformer. It attends over the real tokens' pieces only
  (the same rule as every other model, J&W §1): the one change to the pretrained architecture,
  learnt in fine-tuning.
- **Truncation.** Pieces beyond `max_pieces` are dropped (their tokens get no attention and no
  attribution); the instance keeps its full token length (D-ALIGN).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import torch
from torch import nn

from attnexp.models.attention import real_token_mask, square_maps
from attnexp.models.inputs import EOS, PAD, SOS, UNK, Batch, Encoded

__all__ = ["PretrainedConfig", "PretrainedClassifier", "PieceEmbedding", "load_encoder"]


@dataclass
class PretrainedConfig:
    vocab_size: int
    n_classes: int
    source: str  # where the encoder's folder is: a path, or `package:<module>` (`attnexp.models.sources`)
    sha256: str | None = None  # of its model.safetensors, checked before loading (None: not checked)
    encoder: str = "minilm"
    attention: str = "cls"
    max_pieces: int = 128  # word pieces per instance, [CLS] and [SEP] included
    word_pieces: int = 8  # pieces kept per dataset token
    dropout: float = 0.1  # before the output layer
    layers: int | None = None  # the encoder's, filled in when it is loaded
    heads: int | None = None


class _Probe:
    """What one `run` asks of the encoder's self-attention: every layer's own probabilities are kept
    (`maps`), a layer's may be replaced (`imposed`) and each head's scaled (`head_mask`, (L, H))."""

    def __init__(self, imposed: dict | None, head_mask: torch.Tensor | None):
        self.imposed, self.head_mask, self.maps = imposed or {}, head_mask, {}


def _probed_attention(module, query, key, value, attention_mask, *, scaling=None, dropout=0.0, **kwargs):
    """Eager attention (as `transformers`' own) whose probabilities a `_Probe` reads and replaces."""
    scores = torch.matmul(query, key.transpose(2, 3)) * (query.size(-1) ** -0.5 if scaling is None else scaling)
    if attention_mask is not None:
        scores = (
            scores.masked_fill(~attention_mask, float("-inf"))
            if attention_mask.dtype == torch.bool
            else scores + attention_mask
        )
    probabilities = torch.softmax(scores, dim=-1)
    probe = getattr(module, "attnexp_probe", None)
    if probe is not None:
        layer = module.attnexp_layer
        probe.maps[layer] = probabilities
        probabilities = probe.imposed.get(layer, probabilities)
        if probe.head_mask is not None:
            probabilities = probabilities * probe.head_mask[layer][None, :, None, None]
    output = torch.matmul(nn.functional.dropout(probabilities, p=dropout, training=module.training), value)
    return output.transpose(1, 2).contiguous(), probabilities


ATTENTION = "attnexp_probed"


def load_encoder(folder: str):
    """The pretrained encoder and its tokenizer from a local folder, attention computed eagerly (the
    fused kernels return no weights) by `_probed_attention`."""
    try:
        from transformers import AutoConfig, AutoModel, AutoTokenizer
        from transformers.utils import logging
    except ImportError:
        from attnexp.models.sources import PretrainedSourceError

        raise PretrainedSourceError(
            "a pretrained encoder needs the transformers package: pip install -r requirements-pretrained.txt"
        ) from None

    from transformers import AttentionInterface, AttentionMaskInterface
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS

    logging.set_verbosity_error()  # its load report lists the unused pooler: expected, not news to a job log
    logging.disable_progress_bar()
    AttentionInterface.register(ATTENTION, _probed_attention)
    AttentionMaskInterface.register(ATTENTION, ALL_MASK_ATTENTION_FUNCTIONS["eager"])  # padding masked as for eager
    extra = (
        {"add_pooling_layer": False} if AutoConfig.from_pretrained(folder).model_type == "bert" else {}
    )  # `[CLS]` is read directly
    return AutoModel.from_pretrained(folder, attn_implementation=ATTENTION, **extra), AutoTokenizer.from_pretrained(
        folder
    )


class _TopLayer:
    """The parts of the encoder's last layer that the `[CLS]` row needs, named alike for BERT and
    DistilBERT (both post-LN: x + attention -> LayerNorm -> + FFN -> LayerNorm)."""

    def __init__(self, layer: nn.Module):
        if hasattr(layer, "intermediate"):  # BERT
            attention = layer.attention.self
            self.attention = attention
            self.query, self.key, self.value = attention.query, attention.key, attention.value
            self.out, self.ln_attention = layer.attention.output.dense, layer.attention.output.LayerNorm
            self.dropout = layer.attention.output.dropout
            self.ffn = lambda h: layer.output(layer.intermediate(h), h)
        else:  # DistilBERT
            attention = layer.attention
            self.attention = attention
            self.query, self.key, self.value, self.out = (
                attention.q_lin,
                attention.k_lin,
                attention.v_lin,
                attention.out_lin,
            )
            self.ln_attention, self.dropout = layer.sa_layer_norm, nn.Identity()
            self.ffn = lambda h: layer.output_layer_norm(h + layer.ffn(h))
        self.heads = getattr(attention, "num_attention_heads", None) or attention.n_heads
        self.head_dim = self.query.out_features // self.heads


class PieceEmbedding(nn.Module):
    """Dataset token ids (B, T) -> each token's word-piece embeddings side by side (B, T, K·E), zero
    in the slots a token does not use. The encoder's own piece embeddings are the weights."""

    def __init__(self, word_embeddings: nn.Embedding, pieces: torch.Tensor, counts: torch.Tensor):
        super().__init__()
        self.word_embeddings = word_embeddings
        self.pieces, self.counts = pieces, counts  # the classifier's buffers, (V, K) and (V,)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        K = self.pieces.shape[1]
        used = torch.arange(K, device=tokens.device) < self.counts[tokens][..., None]  # (B, T, K)
        return (self.word_embeddings(self.pieces[tokens]) * used[..., None]).flatten(-2)


class PretrainedClassifier(nn.Module):
    layout = "sos_eos"
    guided = False

    def __init__(self, cfg: PretrainedConfig, folder: str | None = None):
        super().__init__()
        from attnexp.models.sources import encoder_folder

        self.cfg = cfg
        self.encoder, self.tokenizer = load_encoder(folder or encoder_folder(cfg.source, cfg.sha256))
        self.register_buffer("pieces", torch.zeros(cfg.vocab_size, cfg.word_pieces, dtype=torch.long))
        self.register_buffer("piece_counts", torch.zeros(cfg.vocab_size, dtype=torch.long))
        self.embedding = PieceEmbedding(self.encoder.get_input_embeddings(), self.pieces, self.piece_counts)
        self.top = _TopLayer(self._layers()[-1])
        self.attentions = [_TopLayer(layer).attention for layer in self._layers()]
        for index, attention in enumerate(self.attentions):
            attention.attnexp_layer = index
        self.cfg = replace(cfg, layers=len(self.attentions), heads=self.top.heads)
        d = self.top.heads * self.top.head_dim
        self.dropout = nn.Dropout(cfg.dropout)
        self.decoder = nn.Linear(d, cfg.n_classes)
        nn.init.normal_(self.decoder.weight, std=0.02)
        nn.init.zeros_(self.decoder.bias)

    def _layers(self) -> nn.ModuleList:
        return self.encoder.encoder.layer if hasattr(self.encoder, "encoder") else self.encoder.transformer.layer

    def bind_vocabulary(self, vocab: list[str]) -> None:
        """Each dataset word's word pieces (the encoder's tokenizer), into the piece table."""
        if len(vocab) != self.cfg.vocab_size:
            raise ValueError(f"a vocabulary of {len(vocab)} words for a model built for {self.cfg.vocab_size}")
        t = self.tokenizer
        special = {PAD: [], UNK: [t.unk_token_id], SOS: [t.cls_token_id], EOS: [t.sep_token_id]}
        K = self.cfg.word_pieces
        with torch.no_grad():
            for index, word in enumerate(vocab):
                ids = (
                    special.get(index)
                    if index in special
                    else (t(word, add_special_tokens=False)["input_ids"] or [t.unk_token_id])[:K]
                )
                self.pieces[index].zero_()
                self.pieces[index, : len(ids)] = torch.tensor(ids, dtype=torch.long)
                self.piece_counts[index] = len(ids)

    # ------------------------------------------------------------------ word pieces

    def _piece_layout(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Where each instance's word pieces come from, from the token ids alone: -> the slot of
        `embedding(tokens)` (flattened (T·K)) each piece is taken from (B, P), whether it is present
        (B, P), the token it belongs to (B, P; -1 for none), and whether that is a real token (B, P);
        P <= max_pieces."""
        B, T = batch.tokens.shape
        K = self.cfg.word_pieces
        counts = self.piece_counts[batch.tokens]  # (B, T), 0 at PAD
        used = (torch.arange(K, device=counts.device) < counts[..., None]).reshape(B, T * K)  # (B, T*K)
        position = used.cumsum(dim=1) - 1  # where each used slot lands in its row's piece sequence
        keep = used & (position < self.cfg.max_pieces)
        P = int(keep.sum(dim=1).max())
        rows, source = keep.nonzero(as_tuple=True)
        slot = torch.zeros(B, P, dtype=torch.long, device=counts.device)
        slot[rows, position[rows, source]] = source
        present = torch.zeros(B, P, dtype=torch.bool, device=counts.device)
        present[rows, position[rows, source]] = True
        owner = torch.where(present, slot // K, torch.full_like(slot, -1))
        real = present & (owner >= 1) & (owner < (batch.lengths[:, None] - 1))
        return slot, present, owner, real

    @staticmethod
    def _to_tokens(per_piece: torch.Tensor, owner: torch.Tensor, T: int) -> torch.Tensor:
        """Sum (..., P) over each token's pieces -> (..., T); `owner` (broadcastable to per_piece)
        names each piece's token, -1 for none (those are dropped)."""
        index = torch.where(owner >= 0, owner, T).expand_as(per_piece)
        return per_piece.new_zeros(*per_piece.shape[:-1], T + 1).scatter_add(-1, index, per_piece)[..., :T]

    # ------------------------------------------------------------------ the shared contract

    def _top(self, batch: Batch, embedded: torch.Tensor | None, probe: _Probe | None = None):
        """Word pieces through layers 1..L-1, and the top layer's `[CLS]` query: -> its residual
        (B, d), its own weights over the real tokens' pieces (B, H, P), the values (B, P, H, dh), and
        each piece's token (B, P)."""
        if embedded is None:
            embedded = self.embedding(batch.tokens)
        slot, present, owner, real = self._piece_layout(batch)
        B, P = slot.shape
        E = embedded.shape[-1] // self.cfg.word_pieces
        pieces = embedded.reshape(B, -1, E).gather(1, slot[..., None].expand(B, P, E)) * present[..., None]
        for attention in self.attentions:
            attention.attnexp_probe = probe
        try:
            x = self.encoder(
                inputs_embeds=pieces, attention_mask=present.long(), output_hidden_states=True
            ).hidden_states[-2]
        finally:
            for attention in self.attentions:
                attention.attnexp_probe = None
        top = self.top
        H, dh = top.heads, top.head_dim
        B, P, _ = x.shape
        q = top.query(x[:, 0]).view(B, H, 1, dh)
        k = top.key(x).view(B, P, H, dh).transpose(1, 2)  # (B, H, P, dh)
        scores = (q @ k.transpose(-2, -1))[:, :, 0] / math.sqrt(dh)  # (B, H, P)
        weights = torch.softmax(scores.masked_fill(~real[:, None], float("-inf")), dim=-1).masked_fill(
            ~real[:, None], 0.0
        )
        return x[:, 0], weights, top.value(x).view(B, P, H, dh), owner

    def encode(self, batch: Batch, embedded: torch.Tensor | None = None) -> Encoded:
        """-> Encoded(per-head token values (B, T, d), real-token mask (B, T), the `[CLS]` query's own
        per-head token weights (B, H, T), its residual (B, d))."""
        T = batch.tokens.shape[1]
        residual, weights, v, owner = self._top(batch, embedded)
        B, P, H, dh = v.shape
        heads = self._to_tokens(weights, owner[:, None], T)  # (B, H, T)
        # each token's value per head: its pieces' values averaged by the head's own weights on them
        weighted = (weights.permute(0, 2, 1)[..., None] * v).reshape(B, P, H * dh).transpose(1, 2)  # (B, d, P)
        values = self._to_tokens(weighted, owner[:, None], T).view(B, H, dh, T) / heads[:, :, None].clamp(
            min=torch.finfo(heads.dtype).tiny
        )
        return Encoded(
            values.permute(0, 3, 1, 2).reshape(B, T, H * dh),
            real_token_mask(batch.lengths, T),
            heads=heads,
            residual=residual,
        )

    def decode(self, encoded: Encoded, attention: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """-> logits (..., B, C), attention (..., B, T). Without `attention`, each head uses its
        weights in `encoded.heads` (its own, or per-head weights (..., B, H, T) put there) and their
        head mean is reported; an imposed `attention` (..., B, T) is used by every head."""
        top = self.top
        B, T, d = encoded.hidden.shape
        values = encoded.hidden.view(B, T, top.heads, top.head_dim)  # (B, T, H, dh)
        heads = (
            encoded.heads if attention is None else attention[..., None, :].expand(*attention.shape[:-1], top.heads, T)
        )
        context = torch.einsum("...bht,bthd->...bhd", heads, values).reshape(*heads.shape[:-2], d)
        return self._output(encoded.residual, context), (encoded.heads.mean(dim=-2) if attention is None else attention)

    def _output(self, residual: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        """The `[CLS]` residual (B, d) and its attention mixture (..., B, d) -> logits (..., B, C)."""
        top = self.top
        h = top.ln_attention(residual + top.dropout(top.out(context)))
        return self.decoder(self.dropout(top.ffn(h)))  # position-wise: any leading dimensions

    def forward(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        return self.decode(self.encode(batch))

    # ------------------------------------------------------------------ self-attention methods, over word pieces

    def run(self, batch: Batch, embedded=None, imposed: dict | None = None, head_mask: torch.Tensor | None = None):
        """The full pass -> logits (B, C) and every layer's own attention over the word pieces:
        [(B, H, P, P)] * (L-1) + the top layer's `[CLS]` row (B, H, 1, P). `imposed` {layer:
        probabilities of those shapes} replaces a layer's attention; `head_mask` (L, H) scales each
        head's (0 = pruned). Per-token scores come from `token_scores`."""
        imposed = imposed or {}
        top = self.cfg.layers - 1
        # the encoder's own pass also runs the top layer, whose output nothing reads: the top row is computed below
        probe = _Probe({layer: maps for layer, maps in imposed.items() if layer < top}, head_mask)
        residual, weights, v, _ = self._top(batch, embedded, probe)
        used = imposed[top][:, :, 0] if top in imposed else weights
        if head_mask is not None:
            used = used * head_mask[top][None, :, None]
        B, P, H, dh = v.shape
        context = torch.einsum("bhp,bphd->bhd", used, v).reshape(B, H * dh)
        return self._output(residual, context), [*(probe.maps[layer] for layer in range(top)), weights[:, :, None, :]]

    def attention_maps(self, batch: Batch) -> torch.Tensor:
        """Every layer's attention as square maps over the word pieces (B, L, H, P, P) for rollout
        (`square_maps`)."""
        return square_maps(self.run(batch)[1])

    def position_mask(self, batch: Batch) -> torch.Tensor:
        """(B, P) the word pieces present: the positions `attention_maps` and `run` are over."""
        return self._piece_layout(batch)[1]

    def token_scores(self, batch: Batch, per_piece: torch.Tensor) -> torch.Tensor:
        """Scores over the word pieces (B, P) -> over the dataset's tokens (B, T), summed per token."""
        return self._to_tokens(per_piece, self._piece_layout(batch)[2], batch.tokens.shape[1])

    def position_labels(self, batch: Batch, vocab: list[str]) -> list[list[str]]:
        """Each instance's word pieces as text, in the order `run` and `attention_maps` use."""
        slot, present, _, _ = self._piece_layout(batch)
        ids = self.pieces[batch.tokens].flatten(1).gather(1, slot)  # (B, P) piece ids
        return [self.tokenizer.convert_ids_to_tokens(row[keep].tolist()) for row, keep in zip(ids, present)]
