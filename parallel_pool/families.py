"""Env families in this build of the extension: which were compiled in, which were left out and why.

CMake writes parallel_pool/_build_info.py next to `_core` (see CMakeLists.txt): for each family under core/envs/,
None or the reason it was left out (a missing build prerequisite, or -DPP_SKIP_FAMILIES), and the task ids it
registers. A build without that file (an extension built before it existed) knows no families.
"""

from __future__ import annotations


def families() -> dict[str, tuple[str | None, list[str]]]:
    """family -> (None if built, else why it was left out; its task ids). Empty if the build does not say."""
    try:
        from parallel_pool import _build_info
    except ImportError:
        return {}
    return dict(_build_info.FAMILIES)


def family_of(task_id: str) -> str | None:
    for name, (_, ids) in families().items():
        if task_id in ids:
            return name
    return None


def unavailable_message(task_id: str) -> str | None:
    """Why `task_id` is not in this build, if it belongs to a family that was left out; else None."""
    name = family_of(task_id)
    if name is None:
        return None
    reason = families()[name][0]
    if reason is None:
        return None
    return f"{task_id!r} belongs to the {name} env family, which this build of parallel_pool left out: {reason}"
