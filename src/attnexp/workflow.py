"""What every rule script shares: its stderr goes to the rule's log, and expected failures end the
job with one readable line instead of a traceback."""

from __future__ import annotations

import contextlib
import sys
from typing import Callable


def log_to(path: str) -> Callable[[str], None]:
    """Send stderr to the rule's log file (first thing a script does) and return a line logger."""
    sys.stderr = open(path, "w", buffering=1, encoding="utf-8")

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    return log


@contextlib.contextmanager
def fail_cleanly(*errors: type[BaseException]):
    """Turn the listed, expected errors into `error: <message>` in the log and exit status 1."""
    try:
        yield
    except errors as err:
        print(f"error: {err}", file=sys.stderr, flush=True)
        print(f"error: {err}", file=sys.__stderr__, flush=True)
        sys.exit(1)


def logged_device(setting: str, log: Callable[[str], None]) -> str:
    """The config's `device` setting (auto | cpu | cuda), passed through after writing the device it
    resolves to into the job's log (what `auto` chose); a device the machine lacks raises
    `runtime.DeviceError` here, before any work."""
    from attnexp.runtime import resolve_device  # torch: only the scripts that run a model need it

    log(f"device: {resolve_device(setting)} (setting {setting!r})")
    return setting
