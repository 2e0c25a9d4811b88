"""Config validation: the schema fills defaults and rejects unknown keys; errors name the key.

Called by the Snakefile before any job is planned, so a typo fails in a second, not after an hour.
"""

from __future__ import annotations

import difflib
import importlib.util
import re
from pathlib import Path

import jsonschema
import yaml

from attnexp.messages import close_match
from attnexp.papers import PAPERS
from attnexp.plan import model_spec, selection_problems

__all__ = [
    "ConfigError",
    "validate_config",
    "config_origins",
    "read_overlay",
    "load_config",
    "merge_overlay",
    "training_settings",
    "SCHEMA_PATH",
]

# Config sections with a `datasets` / `models` selection of runs (attnexp.plan)

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "schemas" / "config.schema.yaml"
CONFIG_PATH = SCHEMA_PATH.parents[1] / "config.yaml"


class ConfigError(ValueError):
    """The config does not match the schema or is inconsistent; the message names the key."""


def _with_defaults(validator_class):
    """A validator that also writes each property's `default` into the instance (like Snakemake's
    `validate(..., set_default=True)`), so code never carries its own fallback values."""
    validate_properties = validator_class.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, subschema in properties.items():
                if isinstance(subschema, dict) and "default" in subschema and name not in instance:
                    instance[name] = _copy(subschema["default"])
        yield from validate_properties(validator, properties, instance, schema)

    return jsonschema.validators.extend(validator_class, {"properties": set_defaults})


def _copy(value):
    return yaml.safe_load(yaml.safe_dump(value))


def _key(path) -> str:
    return ".".join(str(p) for p in path) or "<top level>"


_NOT_A_SCALAR = object()
_UNEXPECTED = re.compile(r"'([^']+)' (?:was|were) unexpected")


def _scalar(text: str, types) -> object:
    """`text` as the first of the schema's `types` it spells (integer, number, boolean, null)."""
    for kind in [types] if isinstance(types, str) else types:
        if kind == "integer" and re.fullmatch(r"[+-]?\d+", text.strip()):
            return int(text)
        if kind == "number" and re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", text.strip()):
            return float(text)
        if kind == "boolean" and text.strip().lower() in ("true", "false"):
            return text.strip().lower() == "true"
        if kind == "null" and text.strip() in ("null", "None", "~"):
            return None
    return _NOT_A_SCALAR


def _coerce_command_line_strings(config: dict, validator) -> None:
    """Snakemake reads `--config key=value` values, and every scalar inside a YAML value
    (`--config 'jain_wallace={permutations: 10}'`), as strings: where the schema wants a number, a
    boolean or null at that place and the string spells one, it becomes one (in place)."""
    for _ in range(10_000):  # one value per pass: a change can reveal errors below it
        for error in validator.iter_errors(config):
            found = next(
                (
                    e
                    for e in (error, *error.context)
                    if e.validator == "type"
                    and isinstance(e.instance, str)
                    and _scalar(e.instance, e.validator_value) is not _NOT_A_SCALAR
                ),
                None,
            )
            if found is not None:
                *parents, last = found.absolute_path
                holder = config
                for key in parents:
                    holder = holder[key]
                holder[last] = _scalar(found.instance, found.validator_value)
                break
        else:
            return


def _allowed_keys(error) -> list[str]:
    properties = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
    return sorted(properties)


def _message(error) -> str:
    """The schema's message, and for an unknown key the close matches and the valid keys."""
    if error.validator == "additionalProperties" and error.validator_value is False:
        allowed = _allowed_keys(error)
        lines = []
        for key in _UNEXPECTED.findall(error.message)[0].split("', '") if _UNEXPECTED.search(error.message) else []:
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            lines.append(f"unknown key {key!r}{hint} (valid keys here: {', '.join(allowed)})")
        if lines:
            return "; ".join(lines)
    described = error.schema.get("description") if isinstance(error.schema, dict) else None
    if error.validator == "type" and described:  # what the key holds, besides the types it allows
        return f"{error.message} ({described})"
    return error.message


def validate_config(
    config: dict, schema_path: str | Path = SCHEMA_PATH, origins: dict[tuple[str, ...], str] | None = None
) -> dict:
    """Validate `config` in place (defaults filled, command-line strings read as the numbers,
    booleans or nulls the schema wants) and return it; raise ConfigError listing every problem as
    `config key 'a.b.c': message`, after where that key (or the nearest key above it) was set where
    `origins` (`config_origins`) says: `overlay.yaml:12: config key ...`. One problem is one line."""
    schema = yaml.safe_load(Path(schema_path).read_text())
    validator = _with_defaults(jsonschema.Draft202012Validator)(schema)
    _coerce_command_line_strings(config, validator)
    errors = sorted(validator.iter_errors(config), key=lambda e: [str(p) for p in e.absolute_path])
    problems = [f"config key '{_key(e.absolute_path)}': {_message(e)}" for e in errors]
    problems += _enable_listed_datasets(config) if not problems else []
    problems += _leave_out_models(config) if not problems else []
    problems += _consistency_problems(config) if not problems else []
    problems = [_set_where(problem, origins or {}) for problem in problems]
    if len(problems) == 1:
        raise ConfigError(f"invalid configuration: {problems[0]}")
    if problems:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems))
    return config


_PROBLEM_KEY = re.compile(r"^config key '([^']*)'")


def _set_where(problem: str, origins: dict[tuple[str, ...], str]) -> str:
    """`problem` after the place that set its key, or the nearest key above it (a default the schema
    filled in is set by the block that holds it); unchanged where no origin is known."""
    found = _PROBLEM_KEY.match(problem)
    path = tuple(found.group(1).split(".")) if found and found.group(1) != "<top level>" else ()
    for end in range(len(path), 0, -1):
        if path[:end] in origins:
            return f"{origins[path[:end]]}: {problem}"
    return problem


def _enable_listed_datasets(config: dict) -> list[str]:
    """`datasets_enabled: [a, b]` turns on exactly those datasets (each one's `enabled` follows the
    list), so that a preset names what it runs instead of switching off everything else."""
    listed = config.get("datasets_enabled")
    if listed is None:
        return []
    unknown = [
        f"config key 'datasets_enabled.{i}': no dataset {name!r} under `datasets` (expected one of {sorted(config['datasets'])})"
        for i, name in enumerate(listed)
        if name not in config["datasets"]
    ]
    if not unknown:
        for name, ds in config["datasets"].items():
            ds["enabled"] = name in listed
    return unknown


def _leave_out_models(config: dict) -> list[str]:
    """`serrano_smith.left_out: {dataset: [models]}` (D-SS-BUDGET) takes those models off the
    dataset's `models`, so that nothing trains them; the S&S claims list them as not compared."""
    problems = []
    for dataset, models in (config.get("serrano_smith") or {}).get("left_out", {}).items():
        if dataset not in config["datasets"]:
            problems.append(
                f"config key 'serrano_smith.left_out.{dataset}': no dataset {dataset!r} under `datasets` (expected one of {sorted(config['datasets'])})"
            )
            continue
        for model in models:
            try:
                model_spec(config, dataset, model)
            except ValueError as err:
                problems.append(f"config key 'serrano_smith.left_out.{dataset}': {err}")
        listed = config["datasets"][dataset].get("models", [])
        config["datasets"][dataset]["models"] = [m for m in listed if m not in models]
    return problems


def merge_overlay(base: dict, overlay: dict) -> None:
    """Nested update, as Snakemake merges `--configfile` overlays (`snakemake.utils.update_config`):
    mappings merge, anything else replaces. A mapping is copied in, never shared: YAML merge keys
    (`<<: *babi`) give several datasets the same `train` mapping, which an overlay of one of them must not
    change for the others."""
    for key, value in overlay.items():
        if isinstance(value, dict):
            if not isinstance(base.get(key), dict):
                base[key] = {}
            merge_overlay(base[key], value)
        else:
            base[key] = value


def read_config_file(path: str | Path):
    """A config file's YAML; a missing or unreadable file, or a syntax error, is one ConfigError naming
    the file (and the line and column of the mistake, with what YAML expected there)."""
    try:
        return yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}{_yaml_where(err)}: not valid YAML ({_yaml_problem(err)})") from None
    except FileNotFoundError:
        relative = "" if Path(path).is_absolute() else f", relative to the folder the command runs in ({Path.cwd()})"
        raise ConfigError(f"{path}: no such file; expected the path of a YAML config file{relative}") from None
    except (OSError, UnicodeDecodeError) as err:
        what = err.strerror if isinstance(err, OSError) else f"not UTF-8 text ({err.reason})"
        raise ConfigError(f"{path}: {what}; expected a readable YAML config file") from None


def _yaml_where(err: yaml.YAMLError) -> str:
    mark = getattr(err, "problem_mark", None)
    return f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""


def _yaml_problem(err: yaml.YAMLError) -> str:
    """What YAML found wrong, with the construct it was reading and the line that construct opened on
    (`expected ',' or ']', but got ':' while parsing a flow sequence opened on line 2`)."""
    problem = getattr(err, "problem", None) or " ".join(str(err).split())
    context, opened = getattr(err, "context", None), getattr(err, "context_mark", None)
    if context and opened is not None:
        problem += f" {context} opened on line {opened.line + 1}"
    if "'\\t'" in problem:
        problem += "; indent with spaces, not tabs"
    return problem


def read_overlay(path: str | Path) -> dict:
    """The mapping of config keys in an overlay file (`--configfile`); an empty file is no keys. Any
    other content is one ConfigError naming the file (`read_config_file`)."""
    layer = read_config_file(path)
    if layer is not None and not isinstance(layer, dict):
        raise ConfigError(
            f"{path}: expected a mapping of config keys (key: value lines), got a YAML {type(layer).__name__}"
        )
    return layer or {}


def config_origins(files: list[str | Path], command_line: dict | None = None) -> dict[tuple[str, ...], str]:
    """Where each key of the config merged from `files` (config.yaml first, then the overlays) and the
    `--config` settings was set last: {key path (list items by index): "file:line" or "--config"}, for
    `validate_config` to name. A value that is not a mapping replaces everything below it, as
    `merge_overlay` merges."""
    origins: dict[tuple[str, ...], str] = {}

    def replace(path: tuple[str, ...]) -> None:
        for key in [k for k in origins if k[: len(path)] == path and len(k) > len(path)]:
            del origins[key]

    def from_yaml(node, path: tuple[str, ...], shown: str) -> None:
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.value != "<<":
                    key = (*path, key_node.value)
                    origins[key] = f"{shown}:{key_node.start_mark.line + 1}"
                    if not isinstance(value_node, yaml.MappingNode):
                        replace(key)
                    from_yaml(value_node, key, shown)
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                origins[(*path, str(index))] = f"{shown}:{item.start_mark.line + 1}"
                from_yaml(item, (*path, str(index)), shown)

    def from_settings(value, path: tuple[str, ...]) -> None:
        for key, item in value.items():
            origins[(*path, str(key))] = "--config"
            if isinstance(item, dict):
                from_settings(item, (*path, str(key)))
            else:
                replace((*path, str(key)))

    for file in files:
        try:
            node = yaml.compose(Path(file).read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            continue  # read_overlay refuses it; the other files' keys are still placed
        from_yaml(node, (), _shown_path(file))
    from_settings(command_line or {}, ())
    return origins


def _shown_path(file: str | Path) -> str:
    """A file as an error names it: relative to the current folder when inside it."""
    path = Path(file).absolute()
    return str(path.relative_to(Path.cwd())) if path.is_relative_to(Path.cwd()) else str(path)


def load_config(*overlays: str | Path, base: str | Path = CONFIG_PATH) -> dict:
    """The validated config a workflow run with `--configfile <overlays>` sees, for scripts outside
    the workflow (benchmarks, cost reports)."""
    config = {}
    merge_overlay(config, read_config_file(base) or {})  # copied as Snakemake loads it: no shared mappings
    for overlay in overlays:
        merge_overlay(config, read_overlay(overlay))
    return validate_config(config, origins=config_origins([base, *overlays]))


# The datasets with a reader of their own (`attnexp.data.readers.reader_for`, which a test keeps in step),
# besides `planted_<name>` and datasets from files
BUILT_IN_DATASETS = (
    "sst",
    "imdb",
    "imdb_ratings",
    "20news",
    "20news20",
    "agnews",
    "babi1",
    "babi2",
    "babi3",
    "snli",
    "cnn",
    "yelp",
    "amazon",
    "yahoo",
    "diabetes",
    "anemia",
    "synthetic",
    "synthetic_qa",
)


def _files_problems(name: str, ds: dict) -> list[str]:
    """A dataset read from the user's own files: its tables exist, its protocol, task and columns fit
    together, and a split it lacks can be split off (checked before any job runs)."""
    key, files = f"datasets.{name}", ds["files"]
    problems = []
    if ds.get("sources") or ds.get("local_files"):
        problems.append(
            f"config key '{key}.files': a dataset reads either its own files or sources/local_files, not both"
        )
    if ds["protocol"] not in ("jain_wallace", "serrano_smith"):
        problems.append(
            f"config key '{key}.protocol': a dataset from files follows jain_wallace or serrano_smith preprocessing, got {ds['protocol']!r}"
        )
    if ds["task"] == "qa":
        problems.append(
            f"config key '{key}.task': a dataset from files is binary, multiclass or nli (classes, not answer words), got 'qa'"
        )
    if (ds["task"] == "nli") != bool(files["second_text"]):
        problems.append(
            f"config key '{key}.files.second_text': task nli reads a second text column and only it does (task {ds['task']!r}, second_text {files['second_text']!r})"
        )
    for split in ("train", "dev", "test"):
        path = files.get(split)
        if path and not Path(path).is_file():
            problems.append(
                f"config key '{key}.files.{split}': {path} is not a file (paths are relative to the run's working directory)"
            )
        elif path and not files["format"] and Path(path).suffix.lower() not in (".csv", ".tsv", ".jsonl", ".parquet"):
            problems.append(
                f"config key '{key}.files.{split}': cannot tell the format of {path} from its suffix; name it with 'format' (csv, tsv, jsonl, parquet)"
            )
    for split, fraction in (("dev", "dev_fraction"), ("test", "test_fraction")):
        if not files[split] and fraction not in ds:
            problems.append(
                f"config key '{key}.{fraction}': required when files.{split} is absent (the share of the training table split off as {split})"
            )
    return problems


def _consistency_problems(config: dict) -> list[str]:
    """Rules JSON Schema says clumsily: the mirror is a folder; one checksum per file; enabled
    datasets have inputs; bAbI trained on its dev questions selects on test."""
    problems = []
    mirror = config.get("mirror")
    if mirror and not Path(mirror).expanduser().is_dir():
        problems.append(
            f"config key 'mirror': {mirror} is not a folder (the offline mirror of the source files: give the folder that holds them)"
        )
    for name, ds in config["datasets"].items():
        if not ds.get("files") and name not in BUILT_IN_DATASETS and not name.startswith("planted_"):
            hint = close_match(name, BUILT_IN_DATASETS, "built-in datasets")
            problems.append(
                f"config key 'datasets.{name}': no built-in dataset has this name{hint}; a dataset of your own needs a 'files' block (docs/own-data.md)"
            )
        for i, source in enumerate(ds.get("sources", [])):
            files = [(f"datasets.{name}.sources.{i}", source)]
            if source.get("substitute"):
                files += [
                    (f"datasets.{name}.sources.{i}.substitute.files.{j}", f)
                    for j, f in enumerate(source["substitute"]["files"])
                ]
            for key, entry in files:
                digests = [a for a in ("sha256", "md5", "sha1") if entry.get(a)]
                if len(digests) > 1:
                    problems.append(f"config key '{key}': give one checksum, got {digests}")
                if not digests and not (key.endswith(f"sources.{i}") and "sha256" in entry):
                    problems.append(f"config key '{key}': a checksum (sha256, md5 or sha1) is required")
        for i, model in enumerate(ds.get("models", [])):
            try:
                spec = model_spec(config, name, model)
            except ValueError as err:
                problems.append(f"config key 'datasets.{name}.models.{i}': {err}")
                continue
            if spec.family == "pretrained" and spec.encoder not in config["pretrained"]:
                problems.append(
                    f"config key 'datasets.{name}.models.{i}': {model!r} reads the pretrained encoder {spec.encoder!r}, which 'pretrained' does not name{close_match(spec.encoder, config['pretrained'], 'encoders')}"
                )
            elif spec.family == "pretrained" and ds["enabled"] and importlib.util.find_spec("transformers") is None:
                problems.append(
                    f"config key 'datasets.{name}.models.{i}': {model!r} is a pretrained encoder, which needs the transformers package: pip install -r requirements-pretrained.txt"
                )
        if ds["protocol"] == "planted":
            base = (ds.get("planted") or {}).get("base")
            if (
                not name.startswith("planted_")
                or base not in config["datasets"]
                or config["datasets"][base]["task"] != "binary"
            ):
                problems.append(
                    f"config key 'datasets.{name}.planted.base': a planted dataset is named planted_<name> and plants into a configured binary dataset, got {base!r}"
                )
        elif ds.get("files"):
            problems += _files_problems(name, ds)
        elif ds["enabled"] and not ds.get("sources") and not ds.get("local_files") and ds["protocol"] != "generated":
            problems.append(
                f"config key 'datasets.{name}.enabled': true, but the dataset has neither sources, local_files nor files"
            )
        if ds.get("train_includes_dev") and name not in ("babi1", "babi2", "babi3"):
            problems.append(f"config key 'datasets.{name}.train_includes_dev': only the bAbI readers (babi1-3) read it")
        elif ds.get("train_includes_dev") and ds.get("select_on", config["train"]["select_on"]) != "test":
            problems.append(
                f"config key 'datasets.{name}.train_includes_dev': true trains on the dev questions, so the dataset must select on test (select_on: test), not dev"
            )
    for paper in PAPERS.values():  # each paper's own checks of its section
        problems += paper.config_problems(config) if paper.config_problems else []
    # each paper's selection (`<experiment>.datasets` / `.models`) must name something runnable
    return problems + [
        p
        for experiment, paper in PAPERS.items()
        if paper.selected_in_config
        for p in selection_problems(config, experiment)
    ]


def training_settings(config: dict, dataset: str, model: str) -> dict:
    """The flat settings one training job uses: its family's protocol (`train.protocols`), the
    dataset's overrides, then what depends on the model (S&S batch cap and `none` epochs; accuracy
    selection where ROC-AUC is undefined). Recorded in metrics.json."""
    ds = config["datasets"][dataset]
    spec = model_spec(config, dataset, model)
    protocol = spec.traits.protocol
    base, overrides = config["train"]["protocols"][protocol], ds["train"].get(protocol, {})
    settings = {"protocol": protocol, **_copy(base)}
    # S&S's `none` models train longer than the protocol's epochs, but a dataset's own values win
    for layer in (settings, _copy(overrides)):
        settings.update({k: v for k, v in layer.items() if k != "none_encoder"})
        longer = layer.get("none_encoder")
        if spec.encoder == "none" and longer:
            settings.update(longer)
    settings.pop("none_encoder")
    caps = settings.pop("max_tokens")
    settings["max_tokens"] = caps[spec.architecture] if caps and spec.architecture else None
    if protocol == "pretrained":  # which encoder, and how the dataset's tokens become its word pieces
        settings["pretrained"] = _copy(config["pretrained"][spec.encoder])
    if settings["select_metric"] == "roc_auc" and ds["task"] != "binary":
        settings["select_metric"] = "accuracy"
    if spec.is_adversary:  # W&P §4 (D-ADVSEL): the base's protocol, then the adversary's own terms
        adversary = config["wiegreffe_pinter"]["adversary"]
        settings.update(
            epochs=adversary["epochs"],
            patience=adversary["patience"],
            select_metric="loss",  # the lowest training loss: no test or dev data involved
            skip_first_epoch=False,
            loss_reduction="mean",  # D-ADVW; `loss_scale: classweight_sum` scales it inside the objective
            lr_plateau=None,
            adversary={"lambda": spec.adversary_lambda, **{k: adversary[k] for k in ("kl", "tvd_scale", "loss_scale")}},
        )
    return settings


def training_selection(config: dict, dataset: str, model: str) -> str:
    """The split whose metric picks the kept epoch: the dataset's `select_on`, else `train.select_on`
    (D-SEL), except for W&P's adversaries, which keep the epoch of the lowest training loss (D-ADVSEL)."""
    if model_spec(config, dataset, model).is_adversary:
        return "train"
    return config["datasets"][dataset].get("select_on", config["train"]["select_on"])
