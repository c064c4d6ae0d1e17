"""The error for `import parallel_pool` from a source checkout that has no compiled `_core` next to it.

Python puts the current directory first on sys.path, so running Python in the clone root imports the source folder
parallel_pool/ even when the package is installed. That folder has no extension unless a development build copied
one there. Like numpy, we name the situation and the ways out rather than fall back to the installed copy: mixing
this tree's Python files with another build's binary would fail later and less clearly.
"""

from __future__ import annotations

import os


def is_source_checkout(package_file: str) -> bool:
    root = os.path.dirname(os.path.dirname(os.path.abspath(package_file)))
    return all(os.path.exists(os.path.join(root, p)) for p in ("pyproject.toml", "CMakeLists.txt", "core"))


def missing_core_error(package_file: str) -> ImportError:
    package_dir = os.path.dirname(os.path.abspath(package_file))
    if not is_source_checkout(package_file):
        return ImportError(
            f"parallel_pool's compiled extension (_core) is missing from {package_dir}: "
            "the installation is broken; reinstall parallel-pool"
        )
    root = os.path.dirname(package_dir)
    return ImportError(
        f"you are importing parallel_pool from its source tree ({package_dir}), which has no compiled extension "
        "(_core). Python finds the source folder first because it is in the current directory (or on PYTHONPATH). "
        f"Either run from another directory (e.g. `cd ~`) or use the console script (`parallel-pool demo`) to use "
        f"the installed package, or build the extension into the tree for development: `{root}/dev_build.sh`.",
        name="parallel_pool._core",
    )
