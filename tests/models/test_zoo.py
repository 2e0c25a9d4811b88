"""The zoo: the models built to make attention faithful. Mohankumar et al. (2020)'s orthogonal LSTM
(`lstm-ortho-*`) and diversity LSTM (`lstm-diversity-*`, a conicity penalty), and sparse attention
(`{encoder}-sparsemax`, `{encoder}-entmax15`): their names, states, weights and training penalty."""

import numpy as np
import pytest
import torch
from torch import nn

from attnexp.models import build_model, model_config
from attnexp.models.encoders import BiRNN, OrthogonalBiLSTM, conicity
from attnexp.models.inputs import Batch
from attnexp.spec import parse_model_name

SETTINGS = {"hidden_size": 6, "diversity_weight": 0.5}


def _batch(lengths: list[int], vocab: int = 20, seed: int = 0) -> Batch:
    rng = np.random.default_rng(seed)
    L = max(lengths)
    tokens = torch.zeros(len(lengths), L, dtype=torch.long)
    for row, n in enumerate(lengths):
        tokens[row, :n] = torch.from_numpy(rng.integers(3, vocab, n))
    return Batch(
        tokens=tokens,
        lengths=torch.tensor(lengths),
        labels=torch.zeros(len(lengths), dtype=torch.long),
        ids=list(range(len(lengths))),
    )


def _model(name: str, seed: int = 0):
    spec = parse_model_name(name, "binary")
    torch.manual_seed(seed)
    return build_model(spec, model_config(spec, 20, 1, 8, SETTINGS))


@pytest.mark.parametrize(
    "name, encoder, attention",
    [
        ("lstm-ortho-tanh", "lstm-ortho", "tanh"),
        ("lstm-diversity-tanh", "lstm-diversity", "tanh"),
        ("lstm-sparsemax", "lstm", "sparsemax"),
        ("lstm-entmax15", "lstm", "entmax15"),
        ("lstm-ortho-uniform", "lstm-ortho", "uniform"),
    ],
)
def test_zoo_names_are_flat_classifiers_with_their_companions(name, encoder, attention):
    spec = parse_model_name(name, "binary")
    assert (spec.family, spec.encoder, spec.attention) == ("flat", encoder, attention)
    assert spec.has_own_attention == (attention != "uniform")
    assert spec.uniform_twin == f"{encoder}-uniform"
    assert spec.diagnostic_trained("average") == f"average-{attention}"  # W&P's trained MLP attends as its base
    guided = parse_model_name(f"average-guided-{name}", "binary")
    assert guided.guide == name
    if spec.has_own_attention:
        assert parse_model_name(f"{name}-adversary-1e-3", "binary").imitates == name


def test_zoo_names_are_refused_for_qa_and_unknown_parts():
    with pytest.raises(ValueError, match="classification tasks"):
        parse_model_name("lstm-ortho-tanh", "qa")
    with pytest.raises(ValueError, match="unknown model 'lstm-wide-tanh'.*lstm-ortho"):
        parse_model_name("lstm-wide-tanh", "binary")


def test_orthogonal_lstm_is_the_bilstm_when_nothing_is_projected_out(monkeypatch):
    """With the projection switched off (an infinite epsilon), the step is nn.LSTM's: same parameters,
    same states, each direction within each row's length."""
    torch.manual_seed(0)
    ortho = OrthogonalBiLSTM(5, 4).double()
    plain = BiRNN(5, 4, "lstm").double()
    plain.rnn.load_state_dict(ortho.rnn.state_dict())
    x, lengths = torch.randn(3, 7, 5, dtype=torch.float64), torch.tensor([7, 2, 5])
    monkeypatch.setattr(OrthogonalBiLSTM, "EPS", float("inf"))
    torch.testing.assert_close(ortho(x, lengths), plain(x, lengths), rtol=0, atol=1e-12)


def test_orthogonal_lstm_states_are_orthogonal_to_the_sum_of_the_previous_ones(monkeypatch):
    monkeypatch.setattr(OrthogonalBiLSTM, "EPS", 1e-30)  # exact orthogonality (1e-6 leaves a small residual)
    torch.manual_seed(1)
    encoder = OrthogonalBiLSTM(5, 4).double()
    x, lengths = torch.randn(3, 8, 5, dtype=torch.float64), torch.tensor([8, 3, 6])
    states = encoder(x, lengths)
    for row, n in enumerate(lengths.tolist()):
        forwards = states[row, :n, :4]
        backwards = states[row, :n, 4:].flip(0)  # in the order the backward direction read them
        for direction in (forwards, backwards):
            for t in range(1, n):
                previous = direction[:t].sum(0)
                cos = torch.dot(direction[t], previous) / (direction[t].norm() * previous.norm())
                assert abs(cos.item()) < 1e-10
        # an instance alone gives the states it has inside the padded batch
        alone = encoder(x[row : row + 1, :n], lengths[row : row + 1])
        torch.testing.assert_close(alone[0], states[row, :n], rtol=0, atol=1e-12)
    assert (states[1, 3:] == 0).all()


def test_conicity_is_the_mean_absolute_cosine_with_the_mean_state():
    hidden = torch.tensor([[[1.0, 0.0], [0.0, 1.0], [5.0, 5.0]], [[1.0, 1.0], [2.0, 2.0], [0.0, 0.0]]])
    mask = torch.tensor([[True, True, False], [True, True, False]])
    # row 0: the mean (0.5, 0.5) is at 45 degrees to both states; row 1: both states lie along the mean
    torch.testing.assert_close(conicity(hidden, mask), torch.tensor([2**-0.5, 1.0]))
    assert conicity(hidden, torch.zeros_like(mask)).tolist() == [0.0, 0.0]


def test_diversity_lstm_adds_its_conicity_penalty_while_training_only():
    model = _model("lstm-diversity-tanh")
    assert model.cfg.diversity_weight == 0.5 and _model("lstm-tanh").cfg.diversity_weight == 0.0
    batch = _batch([6, 4, 3])
    model.train()
    encoded = model.encode(batch)
    penalty = model.training_penalty()
    torch.testing.assert_close(penalty, 0.5 * conicity(encoded.hidden, encoded.mask).sum())
    assert penalty.requires_grad and model.training_penalty() == 0.0  # taken once
    model.eval()
    model.encode(batch)
    assert model.training_penalty() == 0.0
    vanilla = _model("lstm-tanh").train()
    vanilla.encode(batch)
    assert vanilla.training_penalty() == 0.0


@pytest.mark.parametrize("name", ["lstm-sparsemax", "lstm-entmax15"])
def test_sparse_attention_is_a_distribution_over_real_tokens_with_exact_zeros(name):
    model = _model(name).eval()
    with torch.no_grad():
        model.attention.proj.weight.mul_(40)  # sharp scores: a small support
        _, attention = model(_batch([9, 5, 3]))
    torch.testing.assert_close(attention.sum(-1), torch.ones(3))
    assert (attention[:, 0] == 0).all() and (attention[1, 4:] == 0).all()  # <SOS>, <EOS> and padding
    assert (attention == 0).sum() > 3 + 4 + 7  # tokens outside the support get exactly zero
    # gradients reach the inputs through the sparse mapping (gradient and IG explanations)
    model.zero_grad()
    logits, _ = model(_batch([9, 5, 3]))
    logits.sum().backward()
    assert model.embedding.weight.grad.abs().sum() > 0


def test_an_empty_row_gets_no_attention():
    layer = _model("lstm-sparsemax").attention
    mask = torch.tensor([[False, False], [True, False]])
    weights = layer(torch.randn(2, 2, 12), mask)
    assert weights.tolist()[0] == [0.0, 0.0] and weights[1, 0] == 1.0


def test_zoo_models_train_a_step(tmp_path):
    for name in ("lstm-ortho-tanh", "lstm-diversity-tanh", "lstm-entmax15"):
        model = _model(name).train()
        optimiser = torch.optim.Adam(model.parameters(), lr=1e-2)
        batch = _batch([6, 4, 3])
        logits, _ = model(batch)
        loss = nn.functional.binary_cross_entropy_with_logits(logits.squeeze(-1), batch.labels.float())
        (loss + model.training_penalty()).backward()
        optimiser.step()
        assert all(p.grad is not None for n, p in model.named_parameters() if not n.startswith("embedding")), name
