"""Engine defects found by review: sizes and casts, CPU counts in containers, bounded close().

Each test here failed before its fix (the overflow hung, the casts were undefined behaviour, num_threads counted the
host's cores, close() waited forever for a step that never returns)."""

from __future__ import annotations

import os
import subprocess
import time

import numpy as np
import pytest
from pyproc import run_python

import parallel_pool

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run(code: str, timeout: float = 60, env: dict | None = None) -> subprocess.CompletedProcess:
    """`code` in a fresh interpreter that imports the same parallel_pool as this test session (see pyproc.py)."""
    return run_python(code, timeout=timeout, env=dict(os.environ, **(env or {})))


# ---- sizes and casts ------------------------------------------------------------------------------------------------


def test_player_rows_that_overflow_int_are_a_value_error():
    # 2**20 envs x 2**12 players = 2**32 rows: computed in int it wrapped to 0 (and the pool went on building
    # 2**20 envs of 4096 players); now refused before any env is built
    t = time.monotonic()
    with pytest.raises(ValueError, match="player rows"):
        parallel_pool.make("TwoPlayer-v0", num_envs=2**20, max_num_players=2**12)
    assert time.monotonic() - t < 10


@pytest.mark.parametrize(
    "task, state",
    [
        ("NChain-v0", [np.nan]),
        ("NChain-v0", [1e300]),
        ("NChain-v0", [2.5]),
        ("Catch-v0", [0, 0, 2.0**40]),
        ("Catch-v0", [np.inf, 0, 0]),
        ("Blackjack-v1", [1e30, 1, 1, 5]),
        ("Blackjack-v1", [1, np.nan, 1, 5]),
        ("Taxi-v3", [-np.inf]),
        ("CartPole-v1", [0.0, np.nan, 0.0, 0.0]),
        ("Pendulum-v1", [np.inf, 0.0]),
    ],
)
def test_set_state_refuses_non_integer_or_non_finite_values_and_changes_nothing(task, state):
    env = parallel_pool.make(task, num_envs=1, seed=3)
    env.reset()
    before = env.get_state(0)
    with pytest.raises(ValueError):
        env.set_state(0, state)
    np.testing.assert_array_equal(env.get_state(0), before)
    env.close()


# ---- CPUs: affinity mask and cgroup quota -----------------------------------------------------------------------


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs to restrict the affinity mask to one")
def test_num_threads_0_counts_the_cpus_of_the_affinity_mask():
    # taskset / a container's cpuset: the host's core count is not what this process may use
    out = _run(
        """
        import os, parallel_pool
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[-1]})
        env = parallel_pool.make("CartPole-v1", num_envs=8)
        print(parallel_pool._core.num_cores(), env.engine.num_threads)
        """
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "1"]  # one CPU; the automatic count is at least one worker


def test_num_threads_0_leaves_the_callers_core():
    # the caller steps envs while it waits: a worker per core but one (at least one, at most batch_size)
    cores = parallel_pool._core.num_cores()
    assert parallel_pool.make("CartPole-v1", num_envs=64).engine.num_threads == max(cores - 1, 1)
    assert parallel_pool.make("CartPole-v1", num_envs=64, batch_size=1).engine.num_threads == 1


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs")
def test_thread_affinity_offset_pins_to_the_cpus_this_process_may_use():
    # worker i goes to the (offset + i)-th CPU of the affinity mask: with the mask {last CPU}, offset 0 is that
    # CPU (it used to be CPU 0, outside the mask; a failed pin was ignored)
    out = _run(
        """
        import os, parallel_pool
        cpu = sorted(os.sched_getaffinity(0))[-1]
        os.sched_setaffinity(0, {cpu})
        env = parallel_pool.make("CartPole-v1", num_envs=2, num_threads=1, thread_affinity_offset=0)
        for tid in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{tid}/comm") as f:
                if f.read().strip() == "pp-worker":
                    print(cpu, sorted(os.sched_getaffinity(int(tid))))
        """
    )
    assert out.returncode == 0, out.stderr
    (line,) = out.stdout.strip().splitlines()
    cpu, pinned = line.split(" ", 1)
    assert pinned == f"[{cpu}]"


# ---- close() is bounded --------------------------------------------------------------------------------------------

_HUNG = """
import os, sys, threading, time, warnings
import numpy as np
import parallel_pool
# env 0's steps spin for 1000 s: a step that never returns, on the one worker thread
env = parallel_pool.make("Dummy-v0", num_envs=2, batch_size=1, num_threads=1, slow_env=0, slow_env_cost_us=1e9)
env.async_reset(); env.recv(); env.recv()
env.send(np.zeros(1, dtype=np.int32), np.array([0]))
time.sleep(0.3)  # the worker is inside the step
t = time.monotonic()
"""


@pytest.mark.parametrize("timeout", [1])
def test_close_of_a_pool_with_a_step_that_never_returns_is_bounded_and_warns(timeout):
    out = _run(
        _HUNG
        + """
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    env.close()
print("closed", env.closed, round(time.monotonic() - t, 1), [w.category.__name__ for w in caught])
print("abandoned" in str(caught[0].message))
""",
        env={"PARALLEL_POOL_CLOSE_TIMEOUT": str(timeout)},
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    closed_line, abandoned = out.stdout.strip().splitlines()
    _, closed, seconds, categories = closed_line.split(" ", 3)
    assert closed == "True" and categories == "['RuntimeWarning']" and abandoned == "True"
    assert float(seconds) < timeout + 5  # the timeout, then at most 2 s more after asking the envs to abort


def test_close_from_another_thread_wakes_a_recv_blocked_on_a_hung_env():
    # the recv in progress is waited for (up to the close timeout, 1 s here), then woken: it raises "closed"
    out = _run(
        _HUNG
        + """
threading.Timer(0.5, env.close).start()
try:
    env.recv()
except RuntimeError as e:
    print("raised", round(time.monotonic() - t, 1), "closed" in str(e))
""",
        env={"PARALLEL_POOL_CLOSE_TIMEOUT": "1"},
    )
    assert out.returncode == 0, out.stderr
    _, seconds, says_closed = out.stdout.split()
    assert float(seconds) < 0.5 + 1 + 1.5 and says_closed == "True"  # woken by close(), not after the step


def test_interpreter_exit_with_a_hung_env_is_bounded_and_succeeds():
    t = time.monotonic()
    out = _run(_HUNG + "print('leaving')", env={"PARALLEL_POOL_CLOSE_TIMEOUT": "1"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "leaving"
    assert time.monotonic() - t < 30


# ---- build flags ------------------------------------------------------------------------------------------------


def _ninja_builds() -> list[str]:
    """build.ninja of the extension builds in this checkout (pip's build/<wheel tag>/, dev_build.sh's build/dev)."""
    import glob

    return [
        f
        for f in glob.glob(os.path.join(ROOT, "build", "*", "build.ninja"))
        if not os.path.basename(os.path.dirname(f)).startswith(("cpptest", "asan", "tsan"))
    ]


def test_every_env_source_is_compiled_without_fp_contraction():
    # envs reproduce their references' float arithmetic operation by operation (OpenCV's area resize for Atari and
    # ViZDoom, numpy's for the rest): a fused multiply-add changes the last bits. The flag must reach each env
    # source's own compile command (a per-directory property on a target defined elsewhere would not).
    builds = _ninja_builds()
    if not builds:
        pytest.skip("no ninja build of the extension in this checkout (pip install . or dev_build.sh makes one)")
    compiled = {}
    for path in builds:
        with open(path) as f:
            blocks = f.read().split("\nbuild ")
        compiled[path] = 0
        for block in blocks:
            head, _, rest = block.partition("\n")
            sources = [w for w in head.split() if "/core/envs/" in w and w.endswith(".cc")]
            if not sources or ".o:" not in head:
                continue
            flags = next((line for line in rest.splitlines() if line.strip().startswith("FLAGS =")), "")
            assert "-ffp-contract=off" in flags, f"{sources[0]} in {path} is compiled without -ffp-contract=off"
            compiled[path] += 1
    # the parse found the env sources (a build of a few families, e.g. -DPP_SKIP_FAMILIES, has fewer: not all must)
    assert max(compiled.values()) >= 10, f"too few env sources found: {compiled}"
