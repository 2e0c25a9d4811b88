"""`python -m attnexp.publish`: `attnexp.publish.cli.main`, whose return value is the exit status."""

import sys

from attnexp.publish.cli import main

if __name__ == "__main__":
    sys.exit(main())
