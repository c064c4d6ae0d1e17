"""parallel_pool.orphans: shared memory and temp folders of a process killed with its process group (its resource
tracker too) are removed by a later pool's clean_orphans(); those of live processes, and anything not of the two
kinds it makes, never are."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap

import pytest
from pyproc import IMPORT_ROOT

from parallel_pool import orphans

# Makes a shared memory segment and multiprocessing's temp folder, claims both, prints their paths, then SIGKILLs its
# whole process group (itself and the resource tracker that would otherwise remove the segment).
KILLED = """
import multiprocessing.util, os, signal
from multiprocessing import shared_memory
from parallel_pool import orphans
shm = shared_memory.SharedMemory(create=True, size=4096)
segment = "/dev/shm/" + shm.name
folder = multiprocessing.util.get_temp_dir()
orphans.claim(segment)
orphans.claim(folder)
print(segment, folder, flush=True)
os.killpg(0, signal.SIGKILL)
"""


def _run_killed(script: str = KILLED) -> tuple[str, str]:
    """Runs `script` in its own process group, which it SIGKILLs; returns the two paths it printed."""
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        cwd=IMPORT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        start_new_session=True,  # its own process group: the kill spares this one
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    segment, folder = proc.stdout.split()
    return segment, folder


def test_a_killed_pools_segments_and_temp_folders_are_removed_by_a_later_one():
    segment, folder = _run_killed()
    assert os.path.exists(segment) and os.path.isdir(folder)  # what a process-group SIGKILL leaves
    removed = orphans.clean_orphans()
    assert segment in removed and folder in removed
    assert not os.path.exists(segment) and not os.path.exists(folder)
    assert orphans.clean_orphans() == []  # the records went with them


def test_live_claims_and_foreign_paths_stay():
    from multiprocessing import shared_memory

    shm = shared_memory.SharedMemory(create=True, size=4096)
    try:
        orphans.claim("/dev/shm/" + shm.name)  # this process is alive: never removed
        orphans.clean_orphans()
        assert os.path.exists("/dev/shm/" + shm.name)
        orphans.release("/dev/shm/" + shm.name)
    finally:
        shm.close()
        shm.unlink()
    for path in ("/dev/shm/ViZDoomSM0123", os.path.join(tempfile.gettempdir(), "mine"), "/dev/shm/psm_x/../y"):
        with pytest.raises(ValueError, match="claim"):
            orphans.claim(path)


def test_a_tampered_record_removes_nothing_else(tmp_path):
    """A record of a dead process naming a path of another kind (or another name than its own) is dropped
    unfollowed."""
    victim = tmp_path / "keep"
    victim.write_text("x")
    segment, folder = _run_killed()
    root = os.path.join(tempfile.gettempdir(), f"parallel_pool-{os.getuid()}", "claims")
    dead = next(d for d in os.listdir(root) if os.path.exists(os.path.join(root, d, os.path.basename(segment))))
    with open(os.path.join(root, dead, os.path.basename(segment)), "w") as f:
        f.write(str(victim))
    with open(os.path.join(root, dead, "psm_other"), "w") as f:
        f.write(segment)  # a name that is not its own
    removed = orphans.clean_orphans()
    assert victim.exists() and segment not in removed and folder in removed
    os.unlink(segment)


# A Python pool's process, killed with its whole process group (its workers and resource tracker too) while the pool
# is open: prints the pool's segment and multiprocessing's temp folder first.
KILLED_POOL = """
import multiprocessing.util, os, signal
import gymnasium as gym
import parallel_pool as pp
env = pp.make(env_fn=lambda: gym.make("CartPole-v1"), num_envs=2)
env.reset(seed=0)
segment = "/dev/shm/" + env.engine._shm.name
print(segment, multiprocessing.util.get_temp_dir(), flush=True)
os.killpg(0, signal.SIGKILL)
"""


def test_a_python_pool_removes_what_a_killed_pools_process_left():
    segment, folder = _run_killed(KILLED_POOL)
    assert os.path.basename(segment).startswith("pp_") and os.path.exists(segment) and os.path.isdir(folder)
    import gymnasium as gym

    import parallel_pool as pp

    env = pp.make(env_fn=lambda: gym.make("CartPole-v1"), num_envs=1)  # a pool's start cleans what the dead left
    try:
        assert not os.path.exists(segment) and not os.path.exists(folder)
    finally:
        env.close()
