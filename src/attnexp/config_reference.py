"""The configuration reference of docs/configuration.md, generated from the schema's descriptions
and config.yaml's values, so that the keys have one source:

    python -m attnexp.config_reference docs/configuration.md

rewrites the text between the page's `config-keys` markers (one table per section of config.yaml:
key, type or allowed values, the value config.yaml gives it, description); `--check` says whether the
page is up to date (a test runs it).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

from attnexp.config import CONFIG_PATH, SCHEMA_PATH

__all__ = ["rows", "reference_markdown", "update_page", "main"]

START, END = "<!-- config-keys:start -->", "<!-- config-keys:end -->"
# generic names for the keys of mappings whose keys the user chooses
PLACEHOLDERS = {"datasets": "<name>", "vectors": "<vectors>", "protocols": "<protocol>", "dataset_seeds": "<dataset>"}


def _resolve(node: dict, schema: dict) -> dict:
    while isinstance(node, dict) and "$ref" in node:
        ref = node["$ref"].removeprefix("#/").split("/")
        target = schema
        for part in ref:
            target = target[part]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def _kind(node: dict) -> str:
    if "enum" in node:
        return " | ".join(f"`{json.dumps(v)}`" for v in node["enum"])
    kinds = node.get("type")
    if kinds is None and "anyOf" in node:
        kinds = sorted({str(_kind(sub)) for sub in node["anyOf"] if isinstance(sub, dict)})
        return " or ".join(kinds)
    return " or ".join(kinds) if isinstance(kinds, list) else str(kinds or "")


def _value(config, path: list[str]):
    for key in path:
        if not isinstance(config, dict) or key not in config:
            return None, False
        config = config[key]
    return config, True


def _shown(value) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return f"`{text}`" if len(text) <= 40 else f"`{text[:37]}…`"


def rows(schema: dict, config: dict) -> list[dict]:
    """One row per key (depth first, in the schema's order); mappings of user-chosen keys get a
    placeholder (`datasets.<name>.…`) and are listed once."""
    out: list[dict] = []

    def walk(node: dict, path: list[str]) -> None:
        node = _resolve(node, schema)
        properties = node.get("properties") or {}
        extra = node.get("additionalProperties")
        if path:
            leaf = not properties and not isinstance(extra, dict)
            value, present = (
                _value(config, path) if leaf and not any(p.startswith("<") for p in path) else (None, False)
            )
            out.append(
                {
                    "key": ".".join(path),
                    "type": _kind(node),
                    "value": _shown(value) if present else "",
                    "description": " ".join(str(node.get("description", "")).split()),
                }
            )
        if path[:1] == ["datasets"] and path[2:3] == ["train"]:
            return  # a dataset's overrides take the keys of train.protocols.<protocol>, listed there
        for key, sub in properties.items():
            walk(sub, path + [key])
        if isinstance(extra, dict):
            walk(extra, path + [PLACEHOLDERS.get(path[-1] if path else "", "<key>")])

    walk(schema, [])
    seen, unique = set(), []
    for row in out:
        if row["key"] not in seen:
            seen.add(row["key"])
            unique.append(row)
    return unique


def reference_markdown(schema: dict, config: dict) -> str:
    """One table per top-level section of the config."""
    import pandas as pd

    from attnexp.markdown import to_markdown

    table = pd.DataFrame(rows(schema, config))
    scalar = [k for k in schema["properties"] if not (table["key"].str.startswith(k + ".")).any()]
    groups = [("general settings", scalar)] + [(k, [k]) for k in schema["properties"] if k not in scalar]
    parts = []
    for title, sections in groups:
        part = table[
            table["key"].isin(sections) | table["key"].map(lambda key: any(key.startswith(s + ".") for s in sections))
        ]
        described = (
            part[part["key"] == sections[0]]["description"] if len(sections) == 1 else part.iloc[:0]["description"]
        )
        shown = part.assign(key=part["key"].map(lambda k: f"`{k}`"))
        heading = f"### `{title}`" if len(sections) == 1 else f"### {title[0].upper()}{title[1:]}"
        parts.append(
            f"{heading}\n\n"
            + (described.iloc[0] + "\n\n" if len(described) and described.iloc[0] else "")
            + to_markdown(shown.rename(columns={"value": "config.yaml"}))
        )
    return (
        "Generated from `schemas/config.schema.yaml` (types, descriptions) and `config.yaml` (values) by "
        "`python -m attnexp.config_reference docs/configuration.md`; edit those, not this section.\n\n"
        + "\n".join(parts)
    )


def update_page(
    page: Path, schema_path: Path = SCHEMA_PATH, config_path: Path = CONFIG_PATH, check: bool = False
) -> bool:
    """Rewrite the text between the markers; True when the page was (or, with `check`, would be) changed."""
    text = page.read_text(encoding="utf-8")
    if text.count(START) != 1 or text.count(END) != 1:
        raise ValueError(f"{page}: expected one {START} line and one {END} line")
    schema = yaml.safe_load(schema_path.read_text(encoding="utf-8"))
    config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    updated = f"{head}{START}\n{reference_markdown(schema, config)}{END}{tail}"
    if updated != text and not check:
        page.write_text(updated, encoding="utf-8")
    return updated != text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m attnexp.config_reference", description=__doc__.split("\n\n")[0])
    parser.add_argument("page", type=Path, help="the page with the config-keys markers, e.g. docs/configuration.md")
    parser.add_argument("--check", action="store_true", help="only say whether the page is up to date (exit 1 if not)")
    args = parser.parse_args(argv)
    try:
        changed = update_page(args.page, check=args.check)
    except (OSError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.check:
        print(
            f"{args.page}: {'out of date: run python -m attnexp.config_reference ' + str(args.page) if changed else 'up to date'}"
        )
        return 1 if changed else 0
    print(f"{args.page}: {'updated' if changed else 'already up to date'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
