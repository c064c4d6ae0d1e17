"""Shared memory and temp folders left by processes that are gone: recorded by the process that makes them, removed
by a later pool.

Pools of envs written in Python make POSIX shared memory (`multiprocessing.shared_memory`: /dev/shm/pp_<pid>_<random>,
or multiprocessing's default psm_<random>) and multiprocessing makes temp folders (<tmp>/pymp-<random>). A process
killed with SIGKILL together with its process group (multiprocessing's resource tracker too) never removes them, and
a name's pid alone proves nothing once pids are reused. So a
process records each one it makes (`claim`) in a folder of its own, named with its host and pid, under this user's
0700 folder; `clean_orphans`, run when a pool starts, removes what the records of dead processes name, then those
records: the DMC model cache's rule for the folders of dead writers (parallel_pool.dmc_models), applied to
segments. Only this user's files of those two kinds are ever removed, whatever a record says.

ViZDoom's engines' segments (/dev/shm/ViZDoom*) are recorded and removed the same way by the C++ env
(core/envs/vizdoom/vizdoom_env.cc), in its per-process folders.
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
import tempfile

_SHM = "/dev/shm"


def _root() -> str | None:
    """This user's folder of records (made 0700), or None where it cannot be trusted (not ours, not a folder)."""
    base = os.path.join(tempfile.gettempdir(), f"parallel_pool-{os.getuid()}")
    root = os.path.join(base, "claims")
    for folder in (base, root):
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            pass
        except OSError:
            return None
        st = os.lstat(folder)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            return None
        if stat.S_IMODE(st.st_mode) & 0o077:
            os.chmod(folder, 0o700)
    return root


def _removable(path: str) -> bool:
    """Whether `path` is of a kind this module removes: a pool's shared memory segment or a multiprocessing temp
    folder."""
    folder, name = os.path.split(path)
    if not name or name != os.path.basename(os.path.normpath(path)):
        return False
    return (folder == _SHM and name.startswith(("pp_", "psm_"))) or (
        folder == tempfile.gettempdir() and name.startswith("pymp-")
    )


def claim(path: str) -> None:
    """Record that this process made `path` (`"/dev/shm/" + SharedMemory(create=True).name`, or
    `multiprocessing.util.get_temp_dir()`), so that a later pool removes it should this process die without
    removing it. Paths of other kinds are refused (ValueError)."""
    if not _removable(path):
        raise ValueError(f"claim: {path!r} is neither /dev/shm/pp_* or psm_* nor {tempfile.gettempdir()}/pymp-*")
    root = _root()
    if root is None:
        return
    mine = os.path.join(root, f"{socket.gethostname()}-{os.getpid()}")
    os.makedirs(mine, mode=0o700, exist_ok=True)
    with open(os.path.join(mine, os.path.basename(path)), "w") as f:
        f.write(path)


def release(path: str) -> None:
    """Forget a claim (the path was removed the ordinary way)."""
    root = _root()
    if root is not None:
        try:
            os.unlink(os.path.join(root, f"{socket.gethostname()}-{os.getpid()}", os.path.basename(path)))
        except OSError:
            pass


def pid_alive(pid: int) -> bool:
    """Whether process `pid` exists (on this host): another user's live process counts."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove(path: str) -> bool:
    """Remove a claimed path if it is still this user's file (segment) or folder (temp folder), never following a
    link; whether it was removed."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if st.st_uid != os.getuid():
        return False
    if stat.S_ISREG(st.st_mode) and os.path.dirname(path) == _SHM:
        os.unlink(path)
        return True
    if stat.S_ISDIR(st.st_mode) and os.path.dirname(path) != _SHM:
        shutil.rmtree(path, ignore_errors=True)
        return not os.path.lexists(path)
    return False


def clean_orphans() -> list[str]:
    """Remove what dead processes of this user on this host claimed, and their records. Returns the paths removed.
    Never raises for a file it cannot read or remove (another process may be cleaning at the same time)."""
    root = _root()
    if root is None:
        return []
    prefix = socket.gethostname() + "-"
    removed = []
    for name in os.listdir(root):
        pid = name[len(prefix) :]
        if not name.startswith(prefix) or not pid.isdigit() or pid_alive(int(pid)):
            continue
        records = os.path.join(root, name)
        try:
            entries = os.listdir(records)
        except OSError:
            continue
        for entry in entries:
            try:
                with open(os.path.join(records, entry)) as f:
                    path = f.read()
            except OSError:
                continue
            if _removable(path) and os.path.basename(path) == entry:
                try:
                    if _remove(path):
                        removed.append(path)
                except OSError:
                    pass
        shutil.rmtree(records, ignore_errors=True)
    return removed
