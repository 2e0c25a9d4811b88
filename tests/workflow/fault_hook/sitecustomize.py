"""Fault injection for tests/workflow/test_faults.py. Python imports this module at start-up in every
process whose PYTHONPATH holds this folder, which the tests set for the Snakemake run they break.
It acts in one kind of job only, once, and changes nothing else:

- ATTNEXP_FAULT_SCRIPT: a regex on the job script's file name (Snakemake runs a rule's script as
  `.snakemake/scripts/tmp<random>.<script>.py`); other processes are left alone;
- ATTNEXP_FAULT_TRIGGER: `log:<regex>`, a line the job writes to its log matching the regex (e.g.
  its first epoch), or `write:<regex>`, the first write to a file whose name matches (e.g. the
  checkpoint's temp file, so the fault lands inside `torch.save`);
- ATTNEXP_FAULT_ACTION: `kill` (SIGKILL), `term` (SIGTERM) or `enospc` (that write fails with
  "No space left on device", as on a full disk); or `term-snakemake`: SIGTERM to the Snakemake
  process that runs the job (its nearest ancestor running snakemake), as a user or a scheduler
  stopping the run while the job goes on; or `kill-all`: SIGKILL to that Snakemake process and to
  the job, as when the machine is lost (nothing gets to clean up).
"""

import builtins
import errno
import os
import re
import signal
import sys

_script = os.environ.get("ATTNEXP_FAULT_SCRIPT")
if _script and sys.argv and re.search(_script, os.path.basename(sys.argv[0])):
    _kind, _, _pattern = os.environ["ATTNEXP_FAULT_TRIGGER"].partition(":")
    _action = os.environ["ATTNEXP_FAULT_ACTION"]
    _open = builtins.open
    _fired = False

    def _fire() -> None:
        global _fired
        _fired = True
        if _action == "enospc":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        if _action == "term-snakemake":
            os.kill(_snakemake_ancestor(), signal.SIGTERM)
            return
        if _action == "kill-all":
            os.kill(_snakemake_ancestor(), signal.SIGKILL)
        os.kill(os.getpid(), signal.SIGKILL if _action == "kill" else signal.SIGTERM)

    def _snakemake_ancestor() -> int:
        pid = os.getppid()
        while pid > 1:
            with _open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"snakemake" in f.read():
                    return pid
            with _open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        raise RuntimeError("no Snakemake process above this job")

    class _Watched:
        """A file opened for writing, with the trigger checked on every write."""

        def __init__(self, f, name: str) -> None:
            self._f, self._name = f, name

        def write(self, data):
            if not _fired:
                if _kind == "write" and re.search(_pattern, os.path.basename(self._name)):
                    self._f.write(data[: len(data) // 2])  # part of it lands, as when a disk fills
                    self._f.flush()
                    _fire()
                elif _kind == "log" and isinstance(data, str) and re.search(_pattern, data):
                    result = self._f.write(data)
                    self._f.flush()
                    _fire()
                    return result
            return self._f.write(data)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return self._f.__exit__(*exc)

        def __iter__(self):
            return iter(self._f)

        def __getattr__(self, name):
            return getattr(self._f, name)

    def _watched_open(file, mode="r", *args, **kwargs):
        f = _open(file, mode, *args, **kwargs)
        if any(m in mode for m in "wax") and isinstance(file, (str, bytes, os.PathLike)):
            return _Watched(f, os.fsdecode(file))
        return f

    builtins.open = _watched_open
