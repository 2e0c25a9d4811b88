"""`python -m attnexp.scorecard`: `attnexp.scorecard.cli.main`, whose return value is the exit status."""

import sys

from attnexp.scorecard.cli import main

if __name__ == "__main__":
    sys.exit(main())
