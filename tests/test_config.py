"""Config validation (attnexp.config) against schemas/config.schema.yaml, on the real config.yaml and on
copies of it with one thing broken."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from tiny_tasks import full_grid_raw

from attnexp.config import (
    SCHEMA_PATH,
    ConfigError,
    config_origins,
    load_config,
    read_overlay,
    training_selection,
    training_settings,
    validate_config,
)
from attnexp.plan import RunKey, model_spec, wiegreffe_pinter_companions
from attnexp.workflow import refuse_unreadable_overlays

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def raw_config():
    return full_grid_raw()


@pytest.fixture
def config(raw_config):
    return copy.deepcopy(raw_config)


def _error(config) -> str:
    with pytest.raises(ConfigError) as err:
        validate_config(config)
    return str(err.value)


def test_schema_path_is_the_repository_schema():
    assert SCHEMA_PATH == ROOT / "schemas" / "config.schema.yaml"
    assert SCHEMA_PATH.is_file()


def test_real_config_validates_and_defaults_are_filled(config):
    assert "count_by" not in config["datasets"]["sst"]
    result = validate_config(config)
    assert result is config  # validated in place
    assert config["datasets"]["sst"]["count_by"] == "document"
    assert config["datasets"]["yelp"]["count_by"] == "token"  # given values are kept
    assert config["download"]["timeout"] == 60
    assert config["datasets"]["sst"]["local_files"] == []
    assert config["datasets"]["synthetic"]["sources"] == []
    assert config["datasets"]["synthetic"]["expected"] == {}
    assert config["datasets"]["agnews"]["sources"][1]["extract"] is False
    assert config["datasets"]["sst"]["sources"][0]["substitute"] is None
    assert config["datasets"]["imdb"]["sources"][0]["substitute"]["files"][0]["extract"] is True
    assert config["datasets"]["babi1"]["size_tolerance"] == 0.0
    assert config["embeddings"]["source"] == "glove6b50"  # the replication's stand-in vectors (D-EMB)


def test_missing_optional_blocks_get_nested_defaults(config):
    for key in ("download", "mirror", "substitutes", "length_filter_missing_bound"):
        config.pop(key)
    validate_config(config)
    assert config["download"] == {"timeout": 60, "retries": 4, "backoff": 2.0}
    assert config["mirror"] is None
    assert config["substitutes"] == "allow"
    assert config["length_filter_missing_bound"] == "split_extreme"


def test_defaults_are_copies(config):
    other = copy.deepcopy(config)
    validate_config(config)
    validate_config(other)
    config["datasets"]["sst"]["local_files"].append("x")
    assert other["datasets"]["sst"]["local_files"] == []
    assert config["datasets"]["agnews"]["local_files"] == []


def test_device_is_one_top_level_key_and_the_old_train_device_is_refused(config):
    """Training, explanations and the J&W experiments share `device`; an overlay still naming
    `train.device` fails by name instead of being ignored."""
    config.pop("device")
    assert validate_config(config)["device"] == "auto"
    config["device"] = "gpu"
    assert "'device'" in _error(config)
    config["device"] = "cuda"
    config["train"]["device"] = "cuda"
    message = _error(config)
    assert "config key 'train'" in message and "device" in message


def test_unknown_top_level_key(config):
    config["mirrror"] = "/data"
    message = _error(config)
    assert "config key" in message and "mirrror" in message


def test_unknown_key_inside_a_dataset(config):
    config["datasets"]["sst"]["min_cuont"] = 3
    message = _error(config)
    assert "'datasets.sst'" in message and "min_cuont" in message


def test_wrong_type(config):
    config["datasets"]["sst"]["min_count"] = "five"
    message = _error(config)
    assert "'datasets.sst.min_count'" in message and "integer" in message


def test_wrong_enum(config):
    config["length_filter_missing_bound"] = "drop"
    assert "'length_filter_missing_bound'" in _error(config)


def test_unknown_dataset_name(config):
    config["datasets"]["sstt"] = copy.deepcopy(config["datasets"]["sst"])
    message = _error(config)
    assert "'datasets.sstt': no built-in dataset has this name; did you mean 'sst'?" in message
    assert "a dataset of your own needs a 'files' block" in message


def test_datasets_enabled_turns_on_exactly_the_listed_datasets(config):
    config["datasets_enabled"] = ["synthetic", "sst"]
    config["datasets"]["agnews"]["enabled"] = True  # the list wins over a dataset's own flag
    enabled = [name for name, ds in validate_config(config)["datasets"].items() if ds["enabled"]]
    assert sorted(enabled) == ["sst", "synthetic"]


def test_datasets_enabled_with_an_unknown_dataset_names_its_entry(config):
    config["datasets_enabled"] = ["sst", "sstt"]
    assert "config key 'datasets_enabled.1': no dataset 'sstt' under `datasets`" in _error(config)


def test_serrano_smith_left_out_takes_models_off_the_dataset(config):
    config["serrano_smith"]["left_out"] = {"imdb_ratings": ["han-conv", "han-none"]}
    once = validate_config(config)["datasets"]["imdb_ratings"]["models"]
    assert once == ["han-rnn", "flan-rnn", "flan-conv", "flan-none"]
    assert validate_config(config)["datasets"]["imdb_ratings"]["models"] == once  # validating again changes nothing


def test_serrano_smith_left_out_names_an_unknown_dataset_or_model(config):
    config["serrano_smith"]["left_out"] = {"imdb_ratingz": ["han-conv"]}
    assert "config key 'serrano_smith.left_out.imdb_ratingz': no dataset 'imdb_ratingz'" in _error(config)
    config["serrano_smith"]["left_out"] = {"imdb_ratings": ["han-foo"]}
    assert "config key 'serrano_smith.left_out.imdb_ratings': unknown model 'han-foo'" in _error(config)


def test_two_checksums_on_one_source(config):
    config["datasets"]["sst"]["sources"][0]["md5"] = "0" * 32
    message = _error(config)
    assert "'datasets.sst.sources.0'" in message and "one checksum" in message


def test_source_without_checksum(config):
    del config["datasets"]["sst"]["sources"][0]["sha256"]
    message = _error(config)
    assert "'datasets.sst.sources.0'" in message and "checksum" in message and "required" in message


def test_babi_trained_on_its_dev_questions_must_select_on_test(config):
    config["datasets"]["babi2"]["train_includes_dev"] = True
    config["datasets"]["babi2"]["select_on"] = "dev"
    assert (
        "'datasets.babi2.train_includes_dev': true trains on the dev questions, so the dataset must select on test"
        in _error(config)
    )
    config["datasets"]["babi2"]["select_on"] = "test"
    validate_config(config)
    config["datasets"]["sst"]["train_includes_dev"] = True
    assert "'datasets.sst.train_includes_dev': only the bAbI readers" in _error(config)


def test_substitute_file_without_checksum(config):
    del config["datasets"]["imdb"]["sources"][0]["substitute"]["files"][0]["sha256"]
    message = _error(config)
    assert "'datasets.imdb.sources.0.substitute.files.0'" in message and "required" in message


def test_canonical_source_may_say_sha256_null(config):
    assert config["datasets"]["cnn"]["sources"][0]["sha256"] is None
    validate_config(config)


def test_enabled_dataset_needs_sources_or_local_files(config):
    config["datasets"]["sst"]["sources"] = []
    message = _error(config)
    assert "'datasets.sst.enabled'" in message and "neither sources, local_files nor files" in message


def test_disabled_or_generated_dataset_needs_no_sources(config):
    config["datasets"]["sst"]["sources"] = []
    config["datasets"]["sst"]["enabled"] = False
    assert config["datasets"]["synthetic"]["enabled"] is True and "sources" not in config["datasets"]["synthetic"]
    validate_config(config)


def test_transformers_is_needed_only_by_a_pretrained_encoder(monkeypatch):
    """transformers is optional (requirements-pretrained.txt): the default config validates without it, and a
    pretrained encoder on an enabled dataset is one line naming its key and the install command."""
    import importlib.util

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "transformers" else find_spec(name, *a)
    )
    default = yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))
    validate_config(copy.deepcopy(default))
    default["datasets"]["sst"]["models"] = ["lstm-tanh", "minilm-cls"]
    message = _error(default)
    assert message.splitlines() == [
        "invalid configuration: config key 'datasets.sst.models.1': 'minilm-cls' is a pretrained encoder, which needs "
        "the transformers package: pip install -r requirements-pretrained.txt",
    ]


def test_an_overlay_that_is_missing_not_yaml_or_not_a_mapping_is_one_line_naming_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as err:
        read_overlay("mine.yaml")
    assert str(err.value) == (
        f"mine.yaml: no such file; expected the path of a YAML config file, relative to the folder the command runs in ({tmp_path})"
    )
    (tmp_path / "mine.yaml").write_text("train:\n\tseeds: [1]\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        read_overlay("mine.yaml")
    assert str(err.value) == (
        "mine.yaml, line 2, column 1: not valid YAML (found character '\\t' that cannot start any token; indent with "
        "spaces, not tabs)"
    )
    (tmp_path / "mine.yaml").write_text("12\n", encoding="utf-8")
    with pytest.raises(
        ConfigError, match=r"^mine\.yaml: expected a mapping of config keys \(key: value lines\), got a YAML int$"
    ):
        read_overlay("mine.yaml")
    (tmp_path / "mine.yaml").write_text("", encoding="utf-8")
    assert read_overlay("mine.yaml") == {}
    # what the default workflow profile runs on Snakemake's command line: the same line, and exit status 1
    with pytest.raises(SystemExit) as stop:
        refuse_unreadable_overlays(["--cores", "1", "--configfile", "mine.yaml", "other.yaml", "--", "all"])
    assert str(stop.value).startswith("error: --configfile other.yaml: no such file; ")
    refuse_unreadable_overlays(["--cores", "1", "--configfile", "mine.yaml"])  # an empty overlay is no keys


def test_a_refused_key_is_named_with_the_file_and_line_that_set_it_last(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "base.yaml").write_text("a:\n  b: 1\n  c: [1, 2, 3]\nd: 4\n", encoding="utf-8")
    (tmp_path / "mine.yaml").write_text("# changes\na:\n  c:\n    - 9\n", encoding="utf-8")
    origins = config_origins([tmp_path / "base.yaml", "mine.yaml"], {"d": "5"})
    assert origins == {
        ("a",): "mine.yaml:2",
        ("a", "b"): "base.yaml:2",
        ("a", "c"): "mine.yaml:3",  # a list replaces the one before, items and all
        ("a", "c", "0"): "mine.yaml:4",
        ("d",): "--config",
    }
    config = load_config()
    config["datasets"]["sst"]["min_count"] = "five"
    with pytest.raises(ConfigError) as err:
        validate_config(config, origins={("datasets", "sst"): "mine.yaml:7"})
    assert str(err.value) == (
        "invalid configuration: mine.yaml:7: config key 'datasets.sst.min_count': 'five' is not of type 'integer' "
        "(vocabulary threshold on the training split)"
    )


def test_error_lists_every_schema_problem(config):
    config["datasets"]["sst"]["min_count"] = "five"
    config["datasets"]["imdb"]["split_seed"] = 1.5
    message = _error(config)
    assert "'datasets.sst.min_count'" in message and "'datasets.imdb.split_seed'" in message


# --------------------------------------------------------------------------------------------------
# project rule: every schema property is documented


def _properties(node, path=()):
    """(dotted path, subschema) of every entry of every `properties:` mapping in the schema."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                for name, sub in value.items():
                    yield ".".join(map(str, path + (key, name))), sub
            yield from _properties(value, path + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _properties(value, path + (i,))


# A `$ref` with no description of its own (its target, $defs.length_filter, has one).
KNOWN_UNDOCUMENTED = {"$defs.dataset.properties.length_filter"}


def _undocumented():
    schema = yaml.safe_load(SCHEMA_PATH.read_text(encoding="utf-8"))
    entries = list(_properties(schema))
    assert len(entries) > 60  # the walk does reach the nested properties
    return {
        path
        for path, sub in entries
        if not (isinstance(sub, dict) and isinstance(sub.get("description"), str) and sub["description"].strip())
    }


def test_every_schema_property_has_a_description_apart_from_the_known_gap():
    assert _undocumented() - KNOWN_UNDOCUMENTED == set()


def test_every_schema_property_has_a_description():
    assert _undocumented() == set()


# --------------------------------------------------------------------------------------------------
# training settings: protocol -> dataset override -> model-dependent values


@pytest.fixture
def valid(config):
    return validate_config(config)


def test_training_settings_merge_the_dataset_override(valid):
    settings = training_settings(valid, "synthetic", "lstm-tanh")
    protocol = valid["train"]["protocols"]["jain_wallace"]
    assert settings["protocol"] == "jain_wallace"
    assert protocol["epochs"] == 8 and settings["epochs"] == 4  # synthetic overrides the protocol's 8
    assert (settings["hidden_size"], settings["embedding_dim"]) == (32, 32)
    assert settings["batch_size"] == protocol["batch_size"] == 32  # not overridden: the protocol's
    assert settings["select_metric"] == "roc_auc" and settings["skip_first_epoch"] is True
    assert settings["max_tokens"] is None and "none_encoder" not in settings
    assert set(settings) == (set(protocol) | {"protocol"}) - {"none_encoder"}
    plain = training_settings(valid, "sst", "lstm-tanh")  # no override: the protocol as written
    assert plain == {"protocol": "jain_wallace", **{k: v for k, v in protocol.items() if k != "none_encoder"}}


def test_training_settings_by_family(valid):
    assert training_settings(valid, "babi1", "lstm-tanh")["protocol"] == "jain_wallace_qa"
    snli = training_settings(valid, "snli", "cnn-dot")
    assert snli["protocol"] == "jain_wallace_qa" and (snli["batch_size"], snli["epochs"], snli["hidden_size"]) == (
        128,
        25,
        128,
    )
    guided = training_settings(valid, "synthetic", "average-guided-lstm-tanh")
    assert guided["protocol"] == "jain_wallace" and guided["epochs"] == 4
    han = training_settings(valid, "synthetic", "han-rnn")
    assert han["protocol"] == "serrano_smith"
    assert (han["epochs"], han["hidden_size"], han["lr"], han["patience"]) == (4, 16, 2.0e-3, None)
    assert han["grad_clip"] == 10.0 and han["dropout"]["han"]["output"] == 0.375


def test_training_settings_pick_max_tokens_by_architecture(valid):
    assert training_settings(valid, "synthetic", "han-rnn")["max_tokens"] == 1000
    assert training_settings(valid, "synthetic", "flan-conv")["max_tokens"] == 15000
    assert training_settings(valid, "imdb_ratings", "han-conv")["max_tokens"] == 2000  # dataset override
    assert training_settings(valid, "imdb_ratings", "flan-rnn")["max_tokens"] == 20000
    assert training_settings(valid, "yelp", "flan-none")["max_tokens"] == 90000


def test_training_settings_train_none_encoders_longer(valid):
    rnn = training_settings(valid, "yahoo", "han-rnn")
    none = training_settings(valid, "yahoo", "han-none")
    assert (rnn["epochs"], rnn["patience"]) == (15, 5)
    assert (none["epochs"], none["patience"]) == (60, 10)
    flan_none = training_settings(valid, "yahoo", "flan-none")
    assert (flan_none["epochs"], flan_none["patience"], flan_none["max_tokens"]) == (60, 10, 15000)
    valid["train"]["protocols"]["serrano_smith"]["none_encoder"] = None
    assert training_settings(valid, "yahoo", "han-none")["epochs"] == 15


def test_training_settings_select_on_accuracy_where_roc_auc_is_undefined(valid):
    assert training_settings(valid, "sst", "lstm-tanh")["select_metric"] == "roc_auc"
    assert training_settings(valid, "yelp", "lstm-tanh")["select_metric"] == "accuracy"  # multiclass
    assert training_settings(valid, "babi1", "lstm-dot")["select_metric"] == "accuracy"
    valid["train"]["protocols"]["jain_wallace_qa"]["select_metric"] = "roc_auc"
    assert training_settings(valid, "snli", "lstm-tanh")["select_metric"] == "accuracy"  # nli: 3 classes
    valid["train"]["protocols"]["serrano_smith"]["select_metric"] = "roc_auc"
    assert training_settings(valid, "synthetic", "han-rnn")["select_metric"] == "roc_auc"  # binary keeps it


def test_training_settings_are_copies(valid):
    settings = training_settings(valid, "synthetic", "han-rnn")
    settings["dropout"]["han"]["output"] = 0.0
    settings["epochs"] = 99
    assert valid["train"]["protocols"]["serrano_smith"]["dropout"]["han"]["output"] == 0.375
    assert valid["datasets"]["synthetic"]["train"]["serrano_smith"]["epochs"] == 4
    assert training_settings(valid, "synthetic", "han-rnn")["dropout"]["han"]["output"] == 0.375


def test_training_settings_refuse_a_model_the_task_does_not_have(valid):
    with pytest.raises(ValueError, match="tanh or dot"):
        training_settings(valid, "babi1", "lstm-uniform")


@pytest.mark.parametrize(
    "dataset, model, reason",
    [
        ("synthetic", "average-guided-han-rnn", "flat or Transformer model"),
        ("babi1", "lstm-uniform", "tanh or dot"),
        ("sst", "lstm-softmax", "unknown model"),
        ("snli", "average-guided-lstm-tanh", "classification"),
    ],
)
def test_invalid_model_name_names_its_config_key(config, dataset, model, reason):
    models = config["datasets"][dataset]["models"]
    config["datasets"][dataset]["models"] = [*models, model]  # a new list: config.yaml shares lists by anchor
    index = len(models)
    message = _error(config)
    assert f"config key 'datasets.{dataset}.models.{index}'" in message and reason in message and model in message
    assert message.count("config key") == 1  # only the bad entry


def test_model_name_pattern_is_checked_by_the_schema(config):
    config["datasets"]["sst"]["models"] = ["lstm-tanh", "LSTM tanh"]
    message = _error(config)
    assert "'datasets.sst.models.1'" in message and "does not match" in message


# ----------------------------------------------------------------------------- experiment selections
# (which runs a selection gives: tests/test_plan.py)


def test_jain_wallace_unknown_dataset_is_named(config):
    config["jain_wallace"]["datasets"] = ["sst", "nope"]
    assert "config key 'jain_wallace.datasets.1': unknown dataset 'nope'" in _error(config)


def test_explain_settings_are_checked_by_the_schema(config):
    config["explain"]["loo_op"] = "mask"
    assert "config key 'explain.loo_op'" in _error(config)


def test_claims_tolerance_is_checked_by_the_schema(config):
    config["claims"]["performance_tolerance"] = -0.1
    assert "config key 'claims.performance_tolerance'" in _error(config)
    del config["claims"]
    assert "'claims' is a required property" in _error(config)


def test_jain_wallace_selection_that_names_nothing_runnable_fails(config):
    config["jain_wallace"] |= {"models": ["lstm-tanhh", "lstm-tanh"]}
    message = _error(copy.deepcopy(config))
    assert (
        "config key 'jain_wallace.models.0': 'lstm-tanhh' is not listed under `models` of a selected, enabled dataset"
        in message
    )
    assert "models.1" not in message
    config["jain_wallace"] |= {"models": None, "datasets": ["diabetes"]}
    assert "config key 'jain_wallace.datasets.0': dataset 'diabetes' is not enabled" in _error(config)


def test_jain_wallace_selection_of_a_model_without_its_own_attention_fails(config):
    config["jain_wallace"] |= {"models": ["lstm-uniform", "lstm-tanh"]}
    message = _error(config)
    assert message.count("config key") == 1
    assert (
        "config key 'jain_wallace.models.0': model 'lstm-uniform': the Jain & Wallace experiments need its own trained attention, which it lacks"
        in message
    )


# ----------------------------------------------------------------------------- Wiegreffe & Pinter


def test_wiegreffe_pinter_table_lambda_must_be_one_of_the_lambdas(config):
    config["wiegreffe_pinter"]["adversary"]["table_lambda"] = 0.5
    message = _error(config)
    assert message.count("config key") == 1
    assert (
        "config key 'wiegreffe_pinter.adversary.table_lambda': 0.5 is not one of wiegreffe_pinter.adversary.lambdas"
        in message
    )
    config["wiegreffe_pinter"]["adversary"] |= {"lambdas": [0.5, 2.0]}
    validate_config(config)  # listed now: valid


@pytest.mark.parametrize(
    "key, value, named, expected",
    [
        ("adversary.lambdas", ["a"], "wiegreffe_pinter.adversary.lambdas.0", "is not of type 'number'"),
        ("adversary.lambdas", [1e-3, 0], "wiegreffe_pinter.adversary.lambdas.1", "less than or equal to the minimum"),
        ("adversary.lambdas", 0.1, "wiegreffe_pinter.adversary.lambdas", "is not of type 'array'"),
        ("adversary.lambdas", [], "wiegreffe_pinter.adversary.lambdas", "should be non-empty"),
        ("adversary.kl", "forward", "wiegreffe_pinter.adversary.kl", "is not one of"),
        ("adversary.epochs", 0, "wiegreffe_pinter.adversary.epochs", "minimum"),
        ("seeds", [1.5], "wiegreffe_pinter.seeds.0", "is not of type 'integer'"),
        ("seeds", [1, 1], "wiegreffe_pinter.seeds", "non-unique"),
        ("seeds", "50", "wiegreffe_pinter.seeds", "is not of type 'array'"),
        ("dataset_seeds", {"sst": [1.5]}, "wiegreffe_pinter.dataset_seeds.sst.0", "is not of type 'integer'"),
        (
            "max_attention_bins",
            [0.25, 1.0],
            "wiegreffe_pinter.max_attention_bins.1",
            "greater than or equal to the maximum",
        ),
        ("diagnostic_encoder", "mlp", "wiegreffe_pinter.diagnostic_encoder", "is not one of"),
    ],
)
def test_wiegreffe_pinter_values_of_the_wrong_type_fail_the_schema_naming_the_key(config, key, value, named, expected):
    section = config["wiegreffe_pinter"]
    *parents, last = key.split(".")
    for parent in parents:
        section = section[parent]
    section[last] = value
    message = _error(config)
    assert f"config key '{named}':" in message and expected in message, message


def test_wiegreffe_pinter_unknown_key_fails_the_schema(config):
    config["wiegreffe_pinter"]["adversary"]["lamdbas"] = [1e-3]
    message = _error(config)
    assert "config key 'wiegreffe_pinter.adversary'" in message and "lamdbas" in message


@pytest.mark.parametrize("edges", [[0.5, 0.25, 0.75], [0.25, 0.25, 0.75]])
def test_wiegreffe_pinter_max_attention_bins_must_increase_strictly(config, edges):
    config["wiegreffe_pinter"]["max_attention_bins"] = edges
    assert (
        f"config key 'wiegreffe_pinter.max_attention_bins': expected strictly increasing edges, got {edges}"
        in _error(config)
    )


def test_wiegreffe_pinter_table2_only_names_known_datasets(config):
    config["wiegreffe_pinter"]["table2_only"] = ["imdb", "imbd"]
    message = _error(config)
    assert (
        message.count("config key") == 1
        and "config key 'wiegreffe_pinter.table2_only.1': unknown dataset 'imbd'" in message
    )


def test_wiegreffe_pinter_dataset_seeds_names_known_datasets(config):
    config["wiegreffe_pinter"]["dataset_seeds"] = {"imbd": [1, 2]}
    assert "wiegreffe_pinter.dataset_seeds" in _error(config)


def test_wiegreffe_pinter_lambdas_that_differ_get_different_models(config):
    """The λ tag is the shortest exact decimal: close values never share a model name."""
    config["wiegreffe_pinter"]["adversary"]["lambdas"] = [1e-3, 1.0000001e-3]
    validate_config(config)
    base = RunKey("sst", "lstm-tanh", 10)
    adversaries = wiegreffe_pinter_companions(config, base).adversaries
    assert len({run.model for run in adversaries.values()}) == 2
    for lam, run in adversaries.items():
        assert model_spec(config, "sst", run.model).adversary_lambda == lam


def test_training_settings_of_an_adversary(valid):
    base = training_settings(valid, "sst", "lstm-tanh")
    settings = training_settings(valid, "sst", "lstm-tanh-adversary-1e-2")
    adversary = valid["wiegreffe_pinter"]["adversary"]
    overrides = {
        "epochs": adversary["epochs"],
        "patience": adversary["patience"],
        "select_metric": "loss",
        "skip_first_epoch": False,
        "loss_reduction": "mean",
        "lr_plateau": None,
        "adversary": {"lambda": 0.01, "kl": "adv_base", "tvd_scale": 1.0, "loss_scale": "mean"},
    }
    assert (adversary["epochs"], adversary["patience"]) == (80, 10)
    assert settings == {**base, **overrides}  # the base's protocol, then the adversary's own terms
    assert base["select_metric"] == "roc_auc" and base["loss_reduction"] == "sum" and base["skip_first_epoch"] is True
    assert "adversary" not in base
    assert settings["protocol"] == "jain_wallace" and settings["adversary"]["lambda"] == 0.01


def test_training_settings_of_an_adversary_follow_the_config(valid):
    valid["wiegreffe_pinter"]["adversary"] |= {
        "epochs": 5,
        "patience": 2,
        "kl": "base_adv",
        "tvd_scale": 0.5,
        "loss_scale": "classweight_sum",
    }
    settings = training_settings(valid, "synthetic", "cnn-dot-adversary-2p5e-2")
    assert (settings["epochs"], settings["patience"]) == (5, 2)  # not synthetic's own `epochs: 4`
    assert (
        settings["hidden_size"] == training_settings(valid, "synthetic", "cnn-dot")["hidden_size"] == 32
    )  # the dataset override stays
    assert settings["adversary"] == {
        "lambda": 0.025,
        "kl": "base_adv",
        "tvd_scale": 0.5,
        "loss_scale": "classweight_sum",
    }
    settings["adversary"]["kl"] = "changed"
    assert valid["wiegreffe_pinter"]["adversary"]["kl"] == "base_adv"


def test_training_settings_of_a_guided_model_of_an_adversary_are_ordinary(valid):
    guided = training_settings(valid, "sst", "average-guided-lstm-tanh-adversary-1e-3")
    assert guided == training_settings(valid, "sst", "average-guided-lstm-tanh")
    assert "adversary" not in guided and guided["select_metric"] == "roc_auc"


def test_training_settings_refuse_an_adversary_on_a_non_binary_dataset(valid):
    with pytest.raises(ValueError, match="an adversary imitates a flat or Transformer binary classifier"):
        training_settings(valid, "20news20", "lstm-tanh-adversary-1e-3")
    with pytest.raises(ValueError, match="an adversary imitates a flat or Transformer binary classifier"):
        training_settings(valid, "babi1", "lstm-tanh-adversary-1e-3")


def test_training_selection(valid):
    assert valid["train"]["select_on"] == "dev"
    assert training_selection(valid, "sst", "lstm-tanh") == "dev"
    assert training_selection(valid, "sst", "lstm-tanh-adversary-1e-2") == "train"
    assert (
        training_selection(valid, "sst", "average-guided-lstm-tanh-adversary-1e-3") == "dev"
    )  # a guided model, not an adversary
    valid["train"]["select_on"] = "test"
    assert (
        training_selection(valid, "sst", "lstm-tanh") == "test"
        and training_selection(valid, "synthetic", "han-rnn") == "test"
    )
    assert (
        training_selection(valid, "synthetic", "lstm-tanh-adversary-1e-3") == "train"
    )  # whatever train.select_on says
    valid["datasets"]["synthetic"]["select_on"] = "dev"  # a dataset's own selection wins
    assert (
        training_selection(valid, "synthetic", "han-rnn") == "dev"
        and training_selection(valid, "sst", "lstm-tanh") == "test"
    )
    assert training_selection(valid, "synthetic", "lstm-tanh-adversary-1e-3") == "train"
    validate_config(valid)
    valid["datasets"]["synthetic"]["select_on"] = "best"
    with pytest.raises(ConfigError, match="select_on"):
        validate_config(valid)


def test_the_methods_explained_together_are_named_in_method_order_and_a_self_attention_one_is_refused(config):
    from attnexp.plan import explained_together

    assert explained_together(validate_config(config)) == ("attention", "gradient", "loo")
    config["explain"]["together"] = ["ig", "attention", "loo", "gradient"]
    assert explained_together(validate_config(config)) == ("attention", "gradient", "loo", "ig")
    config["explain"]["together"] = ["attention", "rollout"]  # self-attention models only: a job of its own
    with pytest.raises(ConfigError, match="explain.together"):
        validate_config(config)


# --- load_config: the workflow's config outside the workflow ---


def test_load_config_merges_overlays_like_snakemake(tmp_path):
    first = tmp_path / "a.yaml"
    first.write_text("train: {threads: 1}\nwiegreffe_pinter: {adversary: {epochs: 3}}\n")
    second = tmp_path / "b.yaml"
    second.write_text("wiegreffe_pinter: {seeds: [7, 8]}\n")
    config = load_config(first, second)
    assert config["train"]["threads"] == 1
    assert config["wiegreffe_pinter"]["adversary"]["epochs"] == 3
    assert config["wiegreffe_pinter"]["adversary"]["table_lambda"] == 1e-3  # untouched sibling survives
    assert config["wiegreffe_pinter"]["seeds"] == [7, 8]  # a list replaces, it does not extend


def test_an_overlay_of_one_dataset_leaves_the_datasets_that_share_its_yaml_merge_key_alone(tmp_path):
    # config.yaml gives babi1-3 one `train` mapping through `<<: *babi`; Snakemake copies mappings as it
    # loads them, so an overlay of babi2 changes babi2 only, and load_config must say the same
    import yaml
    from snakemake.utils import update_config

    overlay = tmp_path / "babi2.yaml"
    overlay.write_text("datasets: {babi2: {train: {jain_wallace_qa: {hidden_size: 32}}}}\n")
    config = load_config(overlay)
    hidden = {
        name: config["datasets"][name]["train"]["jain_wallace_qa"]["hidden_size"]
        for name in ("babi1", "babi2", "babi3")
    }
    assert hidden == {"babi1": 128, "babi2": 32, "babi3": 128}

    as_snakemake = {}
    for path in (ROOT / "config.yaml", overlay):
        update_config(as_snakemake, yaml.safe_load(path.read_text(encoding="utf-8")))
    assert config == validate_config(as_snakemake)


def test_load_config_validates_the_merged_result(tmp_path):
    overlay = tmp_path / "bad.yaml"
    overlay.write_text("wiegreffe_pinter: {seeds: [seven]}\n")
    with pytest.raises(ConfigError, match="wiegreffe_pinter.seeds"):
        load_config(overlay)


def test_load_config_refuses_an_overlay_that_is_not_a_mapping(tmp_path):
    overlay = tmp_path / "list.yaml"
    overlay.write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="list.yaml: expected a mapping"):
        load_config(overlay)


# ----------------------------------------------------------------------------- the command line


def test_command_line_strings_become_the_numbers_booleans_and_nulls_the_schema_wants(config):
    # Snakemake reads `--config 'jain_wallace={permutations: 10}'` and `train='{seeds: [10, 11]}'` as strings
    config["jain_wallace"]["permutations"] = "10"
    config["jain_wallace"]["table2_tolerance"]["lstm"]["mean"] = "0.05"
    config["train"]["seeds"] = ["10", "11"]
    config["explain"]["ig_tolerance"] = "1e-3"
    config["serrano_smith"]["models"] = "null"
    config["serrano_smith"]["attention_ascending"] = "false"
    validate_config(config)
    assert (
        config["jain_wallace"]["permutations"] == 10
        and config["jain_wallace"]["table2_tolerance"]["lstm"]["mean"] == 0.05
    )
    assert config["train"]["seeds"] == [10, 11] and config["explain"]["ig_tolerance"] == 1e-3
    assert config["serrano_smith"]["models"] is None and config["serrano_smith"]["attention_ascending"] is False


def test_a_string_that_spells_no_number_stays_an_error(config):
    config["jain_wallace"]["permutations"] = "ten"
    assert "config key 'jain_wallace.permutations': 'ten' is not of type 'integer'" in _error(config)


def test_an_unknown_key_gets_the_close_match_and_the_valid_keys(config):
    config["jain_wallace"]["permutatons"] = 10
    message = _error(config)
    assert "config key 'jain_wallace': unknown key 'permutatons'; did you mean 'permutations'?" in message
    assert "(valid keys here: adv_eps_bc, adv_eps_qa, adversary, " in message
    config = {k: v for k, v in config.items() if k != "jain_wallace"} | {"jain_walace": {}}
    assert "unknown key 'jain_walace'; did you mean 'jain_wallace'?" in _error(config)


def test_an_unknown_dataset_gets_the_close_match(config):
    config["jain_wallace"]["datasets"] = ["sts"]
    assert (
        "config key 'jain_wallace.datasets.0': unknown dataset 'sts'; did you mean 'sst'? (datasets: 20news, "
        in _error(config)
    )


def test_a_mirror_that_is_not_a_folder_is_refused_naming_the_key(config, tmp_path):
    config["mirror"] = str(tmp_path / "missing")
    with pytest.raises(ConfigError, match=r"config key 'mirror': .*missing is not a folder"):
        validate_config(config)
    config["mirror"] = str(tmp_path)
    validate_config(config)


# the worked own-data example reads tables its run folder generates first (docs/own-data.md)
NEEDS_ITS_OWN_FILES = {"own_data_example.yaml"}


@pytest.mark.parametrize("preset", sorted(p.name for p in (ROOT / "presets").glob("*.yaml")))
def test_every_preset_validates_and_is_listed_in_the_configuration_docs(preset):
    assert f"`presets/{preset}`" in (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    if preset in NEEDS_ITS_OWN_FILES:
        with pytest.raises(ConfigError, match="is not a file"):
            load_config(ROOT / "presets" / preset)
        return
    load_config(ROOT / "presets" / preset)  # raises ConfigError naming every bad key
