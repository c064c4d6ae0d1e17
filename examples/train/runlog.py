"""The run log every training example writes and examples/train/report.py reads: JSONL, one object per line, flushed
per line, so a run cut off keeps every update it finished. A "start" line says when, where, what command, at which
commit, plus what the script adds (task, backend, arguments, the learner library's version); then the script's own
lines ("update", "end"). Free of any learner library, so the JAX and torch scripts alike import it.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def git_commit(path: str | Path) -> str | None:
    """The commit of the checkout that holds `path` ("+dirty" when `path` differs from it), None outside one."""
    path = Path(path).resolve()
    where = path if path.is_dir() else path.parent
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(
            ["git", "status", "--porcelain", str(path)], cwd=where, capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode != 0:
        return None
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


class RunLog:
    """A JSONL run log at `path` (None: nothing is written). `append`: a resumed run adds to the same file. The
    start line is written at once, with `start`'s fields after the common ones; `source` is the file or folder
    whose commit the log names."""

    def __init__(self, path: str | None, source: str | Path, append: bool = False, **start: Any):
        self.file = None
        if path:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self.file = open(path, "a" if append else "w")  # noqa: SIM115  (open for the whole run)
        self.write(
            kind="start",
            time=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            host=platform.node(),
            cpus=os.cpu_count(),
            loadavg=os.getloadavg(),
            command=" ".join([Path(sys.executable).name, *sys.argv]),
            commit=git_commit(source),
            **start,
        )

    def write(self, **record: Any) -> None:
        if self.file is not None:
            self.file.write(json.dumps(record) + "\n")
            self.file.flush()

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
