"""A fresh Python for tests that need one (fork, interpreter exit, Ctrl-C, import order).

It must import the same parallel_pool as the test process: the installed package in CI, the source tree in a
development run. `python -c` puts its working directory first on sys.path, so from a clone's root the source folder
(which has no compiled extension after `pip install .`) would shadow the installed package; the child therefore runs
in the folder that holds the imported package (a relative PYTHONPATH=. of a development run resolves there too).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import parallel_pool

IMPORT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(parallel_pool.__file__)))


def run_python(code: str, timeout: float = 60, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    """Run `code` (dedented) in a new interpreter; its output comes back as text."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=kw.pop("cwd", IMPORT_ROOT),
        env=os.environ.copy() if env is None else env,
        capture_output=True,
        text=True,
        timeout=timeout,
        **kw,
    )
