"""Framework adapters: ``parallel_pool.integrations.<name>`` (sb3, tianshou, cleanrl, ...).

The adapters live in the repository's top-level ``integrations/<name>/`` folders. An installed wheel maps each of
them to ``parallel_pool/integrations/<name>`` (see ``[tool.scikit-build.wheel.packages]`` in pyproject.toml); when
running from a source tree, this package also searches the top-level folder, so both layouts import the same way.
Each adapter imports only parallel_pool's public API plus its own framework, and only when it is imported.
"""

from __future__ import annotations

import os

# each adapter is imported by its own name (it needs its framework), so `import *` brings none of them
__all__: list[str] = []

_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_source_tree = os.path.join(_root, "integrations")
# only a ParallelPool source checkout (pyproject.toml beside the package), never some other site-packages folder
if (
    os.path.isfile(os.path.join(_root, "pyproject.toml"))
    and os.path.isdir(_source_tree)
    and _source_tree not in __path__
):
    __path__.append(_source_tree)

# `annotations` is the __future__ import's flag, not part of the API (the compiler read it already): out of dir()
del annotations
