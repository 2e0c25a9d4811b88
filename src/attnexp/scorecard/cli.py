"""`python -m attnexp.scorecard`: make the scorecard from a claims table (`--csv`, `--md`), or rewrite a
README's status block from a scorecard (`--readme`); an error is one line on stderr."""

from __future__ import annotations

import argparse
import sys

from attnexp.scorecard.card import read_scorecard, write_scorecard
from attnexp.scorecard.status import update_readme


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m attnexp.scorecard",
        description="Make the scorecard from a claims table (--csv/--md), or rewrite a README's status block from a scorecard (--readme).",
    )
    parser.add_argument(
        "table", help="results/tables/claims.csv (with --csv/--md) or results/tables/scorecard.csv (with --readme)"
    )
    parser.add_argument("--csv", help="write the scorecard CSV here")
    parser.add_argument("--md", help="write the scorecard Markdown here")
    parser.add_argument("--readme", help="rewrite the text between the scorecard markers of this file")
    parser.add_argument(
        "--source", help="how the README names the run the scorecard comes from (Markdown; default: the table's path)"
    )
    args = parser.parse_args(argv)
    try:
        if args.readme:
            changed = update_readme(args.readme, read_scorecard(args.table), args.source or f"`{args.table}`")
            print(f"{args.readme}: {'updated' if changed else 'already up to date'}")
        elif args.csv and args.md:
            card = write_scorecard(args.table, args.csv, args.md)
            print(f"{len(card)} claims -> {args.csv}, {args.md}")
        else:
            parser.error("give --readme README.md, or both --csv and --md")
    except (OSError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0
