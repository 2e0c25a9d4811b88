"""Serrano & Smith (§1) classifiers: hierarchical (HAN) and flat (FLAN) attention networks with a
BiGRU (`rnn`), convolutional (`conv`) or no (`none`) encoder.

HAN: words of each sentence -> encoder -> word attention -> sentence vectors -> encoder -> sentence
attention -> document vector -> Linear. FLAN: all tokens -> encoder -> word attention -> Linear.
`encode`/`decode` split at the attention layer closest to the output (S&S §4): the sentence level
for HANs (the word level is never manipulated), the single word level for FLANs.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from attnexp.models.attention import AdditiveAttention, masked_softmax, present_mask
from attnexp.models.encoders import Dropout, build_encoder
from attnexp.models.inputs import Batch, Encoded

__all__ = ["HierarchicalConfig", "HierarchicalClassifier"]


@dataclass
class HierarchicalConfig:
    vocab_size: int
    n_classes: int
    architecture: str = "han"  # han | flan
    encoder: str = "rnn"  # rnn (BiGRU) | conv | none
    embedding_dim: int = 200
    hidden_size: int = 50  # GRU units per direction; conv filters per kernel size
    conv_input_dropout: float = 0.3
    dropout_sentence: float = 0.0  # HAN p_s: on word embeddings
    dropout_document: float = 0.0  # HAN p_d: on sentence vectors; FLAN p_d: on word embeddings
    dropout_output: float = 0.0  # p_o: on the logits, training only


class HierarchicalClassifier(nn.Module):
    guided = False
    sentence_chunk = 256  # at most this many sentences encoded together at the word level
    # what one more position of a chunk's recurrent loop costs, in padded words encoded (`_chunks`)
    step_cost_words = 8
    lay_out_sentences = True  # conv/none word encoders: sentences end to end (False: in chunks, as the BiGRU)

    def __init__(self, cfg: HierarchicalConfig):
        super().__init__()
        if cfg.architecture not in {"han", "flan"}:
            raise ValueError(f"architecture must be han or flan, got {cfg.architecture!r}")
        self.cfg = cfg
        self.layout = "sentences" if cfg.architecture == "han" else "tokens"
        self.embedding = nn.Embedding(cfg.vocab_size, cfg.embedding_dim, padding_idx=0)
        self.word_encoder = build_encoder(cfg.encoder, cfg.embedding_dim, cfg.hidden_size, cfg.conv_input_dropout)
        dim = self.word_encoder.out_dim
        if cfg.architecture == "han":
            self.word_attention = AdditiveAttention(dim, dim)  # d_c = 100 (200 for `none`)
            self.sentence_encoder = build_encoder(cfg.encoder, dim, cfg.hidden_size, cfg.conv_input_dropout)
            dim = self.sentence_encoder.out_dim
        self.attention = AdditiveAttention(dim, dim)  # the layer closest to the output
        self.decoder = nn.Linear(dim, cfg.n_classes)
        # On the word embeddings: HAN p_s, FLAN p_d (S&S §1)
        self.embedding_dropout = Dropout(cfg.dropout_sentence if cfg.architecture == "han" else cfg.dropout_document)
        self.sentence_dropout = Dropout(cfg.dropout_document)
        self.output_dropout = Dropout(cfg.dropout_output)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """AllenNLP-era initialisation of the original (S&S §1)."""
        for name, param in self.named_parameters():
            if name.startswith("embedding"):
                continue
            if "weight_hh" in name:
                nn.init.orthogonal_(param)
            elif "bias_hh" in name:  # AllenNLP's lstm_hidden_bias: zeros, then ones in the 2nd gate block
                nn.init.zeros_(param)
                param.data[param.shape[0] // 3 : 2 * param.shape[0] // 3] = 1.0
            elif "weight" in name and param.dim() >= 2:
                nn.init.xavier_uniform_(param)
            elif "bias" in name:
                nn.init.zeros_(param)

    def _words_to_sentences(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(B, S, W) words -> sentence vectors (B, S, D), the sentence mask (B, S) and the word
        attention within each sentence (B, S, W). Only real sentences are encoded, each on its own:
        laid end to end (`_encode_laid_out`) where the word encoder sees a bounded neighbourhood
        (conv, none), else in chunks of similar length (`_encode_in_chunks`, the BiGRU)."""
        B, S, W = batch.tokens.shape
        present = batch.sentence_lengths > 0  # (B, S)
        words = batch.tokens[present]  # (N, W)
        lengths = batch.sentence_lengths[present]  # (N,)
        if self.word_encoder.reach is not None and self.lay_out_sentences:
            vectors, word_attention = self._encode_laid_out(words, lengths)
        else:
            vectors, word_attention = self._encode_in_chunks(words, lengths)
        sentences = vectors.new_zeros(B, S, vectors.shape[-1])
        sentences[present] = vectors
        words_in_sentences = word_attention.new_zeros(B, S, W)
        words_in_sentences[present] = word_attention
        return sentences, present, words_in_sentences

    def _encode_laid_out(self, words: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Sentences (N, W) laid end to end in one row, `reach` padding positions before and after
        each, so that a state sees what it would see alone: a "same" convolution's zeros at either end
        of its sentence. Every position of the row is a real word or needed padding, where padding
        each sentence to the longest would encode twice the words of a typical review's batch (and
        chunks of similar length make many small calls). -> sentence vectors (N, D), word attention
        (N, W)."""
        N, W = words.shape
        gap = self.word_encoder.reach
        present = present_mask(lengths, W)  # (N, W)
        starts = gap + torch.cumsum(lengths + gap, 0) - (lengths + gap)  # (N,) each sentence's first position
        width = int(starts[-1] + lengths[-1]) + gap if N else 0
        positions = (starts[:, None] + torch.arange(W, device=words.device))[present]  # (R,) the real words' places
        row = words.new_zeros(width)
        row[positions] = words[present]
        real = torch.zeros(width, dtype=torch.bool, device=words.device)
        real[positions] = True
        # padding's embedding zeroed here, not left to the PAD row's values
        x = self.embedding_dropout(self.embedding(row[None])) * real[None, :, None]  # (1, T, E)
        states = self.word_encoder(x, lengths.new_tensor([width]))[0]  # (T, D)
        scores = words.new_zeros(N, W, dtype=states.dtype)
        scores[present] = self.word_attention.scores(states[None])[0, positions]
        word_attention = masked_softmax(scores, present)  # (N, W)
        # each sentence's attention-weighted sum of its states: a (N, T) matrix of its weights times the states
        sentence = torch.arange(N, device=words.device)[:, None].expand(N, W)[present]  # (R,)
        weights = states.new_zeros(N, width)
        weights[sentence, positions] = word_attention[present]
        return weights @ states, word_attention

    def _encode_in_chunks(self, words: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Sentences (N, W) sorted by length and encoded in chunks, each padded to its own longest
        sentence (`_chunks`): documents mix 5- and 500-word sentences, and padding every sentence of
        the batch to the longest one would multiply the recurrent work. -> sentence vectors (N, D),
        word attention (N, W)."""
        vectors, word_attention = [], words.new_zeros(words.shape, dtype=self.embedding.weight.dtype)  # (N, W)
        order = torch.argsort(lengths, stable=True)
        for chunk in self._chunks(order, lengths[order]):
            width = int(lengths[chunk].max())
            x = self.embedding_dropout(self.embedding(words[chunk, :width]))  # (n, w, E)
            states = self.word_encoder(x, lengths[chunk])  # (n, w, D)
            alpha = self.word_attention(states, present_mask(lengths[chunk], width))  # (n, w)
            vectors.append((alpha.unsqueeze(-1) * states).sum(dim=1))  # (n, D)
            word_attention[chunk, :width] = alpha
        return torch.cat(vectors)[torch.argsort(order)], word_attention  # back to batch order

    def _chunks(self, order: torch.Tensor, sorted_lengths: torch.Tensor) -> list[torch.Tensor]:
        """Cut the sentences, sorted by length, into chunks that are encoded together, each padded to
        its longest sentence. A chunk of c sentences at width w grows to a longer sentence of l words
        unless the padding that adds, c (l - w) words, costs more than running a separate loop of w
        positions (`step_cost_words` words each): 20News sentences run from 1 to 1,000+ words, and
        one chunk of 256 padded to its longest held three times as many padded words as real ones."""
        chunks, start, width = [], 0, 0
        for i, length in enumerate(sorted_lengths.tolist()):
            count = i - start
            if count and (count == self.sentence_chunk or count * (length - width) > self.step_cost_words * width):
                chunks.append(order[start:i])
                start = i
            width = length
        chunks.append(order[start:])
        return chunks

    def _encode_han(self, batch: Batch) -> tuple[Encoded, torch.Tensor]:
        """HAN: -> Encoded(sentence states (B, S, H), sentence mask (B, S)), word attention (B, S, W)."""
        sentences, _, words = self._words_to_sentences(batch)
        hidden = self.sentence_encoder(self.sentence_dropout(sentences), batch.lengths)
        return Encoded(hidden, present_mask(batch.lengths, batch.tokens.shape[1])), words

    def encode(self, batch: Batch) -> Encoded:
        """HAN: -> sentence states (B, S, H), sentence mask (B, S). FLAN: -> token states (B, L, H)."""
        if self.cfg.architecture == "han":
            return self._encode_han(batch)[0]
        x = self.embedding_dropout(self.embedding(batch.tokens))  # (B, L, E)
        hidden = self.word_encoder(x, batch.lengths)
        return Encoded(hidden, present_mask(batch.lengths, batch.tokens.shape[1]))

    def decode(self, encoded: Encoded, attention: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """-> logits (..., B, C), attention (..., B, L); leading axes of `attention` broadcast."""
        if attention is None:
            attention = self.attention(encoded.hidden, encoded.mask)
        context = torch.einsum("...bl,blh->...bh", attention, encoded.hidden)  # (..., B, H), a batched matmul
        return self.output_dropout(self.decoder(context)), attention

    def forward(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        return self.decode(self.encode(batch))

    def token_attention(self, batch: Batch) -> torch.Tensor:
        """A HAN's weight on each word, (B, S, W): its sentence's attention times its attention within
        the sentence (the two levels of Yang et al. 2016's visualisation; zero at padding). The
        sentence encoder mixes sentences before sentence attention, so this is the attention path's
        weight, not a decomposition of the output."""
        if self.cfg.architecture != "han":
            raise ValueError("token_attention is the two-level weight of a HAN; a FLAN attends to its tokens directly")
        encoded, words = self._encode_han(batch)
        _, attention = self.decode(encoded)  # (B, S)
        return attention[..., None] * words
