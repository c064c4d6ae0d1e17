"""A griffe extension for the API reference: the framework adapters as ``parallel_pool.integrations.<name>``.

In the source tree the adapters live in the top-level ``integrations/<name>/`` folders, which the wheel maps into
``parallel_pool/integrations/`` and ``parallel_pool.integrations`` adds to its search path at import time. Griffe reads
the source without importing it, so this extension loads each adapter folder as a submodule of
``parallel_pool.integrations`` (an installed wheel, where they are real subfolders, needs nothing).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import griffe


class SourceTreeAdapters(griffe.Extension):
    """Attach ``integrations/<name>/`` to ``parallel_pool.integrations`` once the package is loaded."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        """Load every adapter folder the package itself does not hold."""
        if pkg.name != "parallel_pool" or not isinstance(pkg.filepath, Path):
            return
        integrations = pkg["integrations"]
        for folder in sorted((pkg.filepath.parent.parent / "integrations").glob("*/__init__.py")):
            name = folder.parent.name
            if name not in integrations.members:
                # the loader's own entry point for a module under a parent (relative imports resolve against it)
                module = loader._load_module(name, folder, parent=integrations)
                integrations.set_member(name, module)
