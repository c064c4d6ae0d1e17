"""Engine robustness at the `_core.Engine` level: seeding, input ranges, lifecycle faults (env exceptions, fork,
interpreter exit, Ctrl-C, thread failure, cycles). The front-ends sit on top of this; these tests do not need them."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import time

import numpy as np
import pytest
from pyproc import run_python

from parallel_pool import _core

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def core_pool(task: str = "Dummy-v0", **config) -> _core.Engine:
    env_type, overrides = _core.tasks()[task]
    cfg = dict(overrides)
    cfg.update(config)
    return _core.Engine(env_type, cfg)


def outputs(pool: _core.Engine, arrays) -> dict:
    return {name: arr for (name, *_), arr in zip(pool.output_specs, arrays)}


# ---- 1. seeds ------------------------------------------------------------------------------------------------


def reset_draws(seed: int, num_envs: int = 4, **kw) -> np.ndarray:
    """obs[:, 3] of Dummy-v0 is a draw from the env's generator at reset."""
    pool = core_pool(num_envs=num_envs, seed=seed, **kw)
    out = outputs(pool, pool.reset())
    pool.close()
    return out["obs"][:, 3].copy()


def test_seeds_do_not_alias_mod_2_32():
    assert not np.array_equal(reset_draws(1), reset_draws(1 + 2**32))
    # and a seed's env i is the same generator as seed + i's env 0, in both ranges
    for base in (5, 2**40):
        np.testing.assert_array_equal(reset_draws(base)[2], reset_draws(base + 2, num_envs=1)[0])


def test_small_seeds_keep_envpool_seeding():
    # below 2**32 env i's generator is mt19937(seed + i), like EnvPool: Dummy's draw is uniform_real_distribution
    # <float>(0, 1) of it, which std::generate_canonical computes from one 32-bit output for float
    draws = reset_draws(7, num_envs=3)
    for i, d in enumerate(draws):
        # numpy's legacy RandomState(int) is the same MT19937 seeded by init_genrand, i.e. std::mt19937(seed)
        first = np.random.RandomState(7 + i).randint(0, 2**32, dtype=np.uint32)
        assert d == np.float32(first) / np.float32(2**32)


def test_big_seeds_are_defined():
    top = 2**63 - 1
    draws = reset_draws(top, num_envs=8)
    assert np.all((draws >= 0) & (draws < 1)) and len(set(draws.tolist())) == 8
    np.testing.assert_array_equal(draws, reset_draws(top, num_envs=8))  # deterministic


@pytest.mark.parametrize("seed", [-1, -(2**63), 2**63, 2**64 + 1])
def test_bad_seed_raises_value_error(seed):
    with pytest.raises(ValueError, match=f"seed.*{seed}"):
        core_pool(seed=seed)


def test_reset_seeds_are_64_bit_and_checked():
    pool = core_pool(num_envs=2)
    a = outputs(pool, pool.reset(None, np.array([1, 1 + 2**32], dtype=np.int64)))["obs"][:, 3].copy()
    assert a[0] != a[1]
    b = outputs(pool, pool.reset(None, np.array([1, 1 + 2**32], dtype=np.uint64)))["obs"][:, 3]
    np.testing.assert_array_equal(a, b)  # uint64 seeds are taken exactly
    with pytest.raises(ValueError, match="seed -3 for env 1 is negative"):
        pool.reset(None, np.array([4, -3]))
    with pytest.raises(ValueError, match="seed is 18446744073709551615"):
        pool.reset(None, np.array([4, 2**64 - 1], dtype=np.uint64))
    pool.step(np.zeros(2, np.int32))  # nothing was enqueued by the failed resets


@pytest.mark.parametrize("num_threads,batch_size", [(1, 0), (3, 0), (2, 2), (4, 1)])
def test_trajectory_independent_of_threads_and_batch(num_threads, batch_size):
    """(seed, env_id, actions) fix every row: compare per-env rows against a 1-thread sync pool."""
    n, steps = 4, 12
    kw = dict(num_envs=n, seed=2**33 + 5, episode_len=3)

    def per_env_rows(num_threads, batch_size):
        pool = core_pool(num_threads=num_threads, batch_size=batch_size, **kw)
        rows = {i: [] for i in range(n)}
        if batch_size in (0, n):
            for t in range(steps):
                out = outputs(pool, pool.reset() if t == 0 else pool.step(np.arange(n, dtype=np.int32) % 10))
                for i, e in enumerate(out["env_id"]):
                    rows[e].append(out["obs"][i].copy())
        else:
            pool.send(None, None, True)
            counts = np.zeros(n, int)
            while counts.min() < steps:
                out = outputs(pool, pool.recv())
                ids = out["env_id"].copy()
                for i, e in enumerate(ids):
                    if counts[e] < steps:
                        rows[e].append(out["obs"][i].copy())
                    counts[e] += 1
                pool.send((ids % 10).astype(np.int32), ids)
        pool.close()
        return {e: np.array(r[:steps]) for e, r in rows.items()}

    ref = per_env_rows(1, 0)
    got = per_env_rows(num_threads, batch_size)
    for e in range(n):
        np.testing.assert_array_equal(got[e], ref[e])


# ---- 2. no silent narrowing ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value,dtype",
    [
        (2**32, np.int64),
        (-(2**32) + 1, np.int64),
        (2**31, np.int64),
        (10, np.int32),
        (-1, np.int8),
        (2**64 - 1, np.uint64),
        (300, np.uint16),
    ],
)
def test_integer_action_out_of_range_raises_before_narrowing(value, dtype):
    pool = core_pool(num_envs=3)
    pool.reset()
    act = np.array([1, value, 2], dtype=dtype)
    with pytest.raises(ValueError, match=rf"action 'action' row 1 is {value}, outside the valid range \[0, 9\]"):
        pool.step(act)
    out = outputs(pool, pool.step(np.array([1, 9, 2], dtype=dtype)))  # nothing was enqueued; in range works
    np.testing.assert_array_equal(out["obs"][:, 2], [1, 9, 2])


def test_integer_actions_of_any_width_are_taken_exactly():
    pool = core_pool(num_envs=2)
    pool.reset()
    for dt in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64, np.longlong):
        out = outputs(pool, pool.step(np.array([3, 9], dtype=dt)))
        np.testing.assert_array_equal(out["reward"], [3, 9])


def test_float_action_too_large_for_float32_raises():
    pool = core_pool(num_envs=1, continuous=True)
    pool.reset()
    with pytest.raises(ValueError, match="action 'action' row 0 is .*too large for float32"):
        pool.step(np.array([[1e300, 0.0]]))


@pytest.mark.parametrize(
    "key,value",
    [
        ("num_envs", 2**31),
        ("num_envs", 2**31 - 1),
        ("batch_size", 2**32 + 1),
        ("max_episode_steps", 2**31),
        ("num_threads", 2**32),
        ("episode_len", 2**40),
        ("thread_affinity_offset", -(2**31) - 1),
        ("num_envs", 2**64),
    ],
)
def test_int_config_out_of_range_raises_value_error(key, value):
    with pytest.raises(ValueError, match=rf"{key}.*{value}"):
        core_pool(**{key: value})


def test_int_config_at_int32_max_is_accepted_where_meaningful():
    pool = core_pool(num_envs=1, max_episode_steps=2**31 - 1, episode_len=2**31 - 1)
    pool.reset()
    assert outputs(pool, pool.step(np.array([1], np.int32)))["truncated"][0] == False  # noqa: E712


@pytest.mark.parametrize(
    "key,value",
    [
        ("num_envs", True),
        ("num_envs", 2.0),
        ("continuous", 1),
        ("seed", "1"),
        ("step_cost_us", True),
        ("autoreset_mode", 3),
    ],
)
def test_config_wrong_type_raises_type_error(key, value):
    with pytest.raises(TypeError, match=f"config key '{key}'"):
        core_pool(**{key: value})


def test_xla_int64_actions_are_range_checked_not_wrapped():
    jax = pytest.importorskip("jax")
    if not _core.has_xla:
        pytest.skip("built without XLA support")
    import jax.numpy as jnp

    import parallel_pool

    env = parallel_pool.make("Dummy-v0", num_envs=2)
    handle, _, _, step = env.xla()
    env.reset()
    with jax.enable_x64(True):
        act = jnp.array([1, 2**32 + 3], dtype=jnp.int64)  # wraps to 3 if narrowed to int32 before the check
        assert act.dtype == jnp.int64
        with pytest.raises(Exception, match=r"action 'action' row 1 is 4294967299, outside the valid range \[0, 9\]"):
            jax.block_until_ready(step(handle, act))
        handle, s = step(handle, jnp.array([1, 9], dtype=jnp.int64))  # in-range int64 actions are taken
        assert np.asarray(s[1]).tolist() == [1.0, 9.0]


# ---- 3. same-step final rows ---------------------------------------------------------------------------------


@pytest.mark.parametrize("batch_size", [0, 3])
def test_same_step_final_rows_are_zero_where_no_episode_ended(batch_size):
    pool = core_pool(
        num_envs=6, batch_size=batch_size, num_threads=2, autoreset_mode="same_step", episode_len=3, max_episode_steps=5
    )
    finals = [n for n, *_ in pool.output_specs if n.startswith("final:")]
    assert finals == ["final:obs", "final:info:score", "final:elapsed_step"]
    rng = np.random.default_rng(0)
    ended = 0
    if batch_size:
        pool.send(None, None, True)
    for t in range(60):
        if batch_size:
            out = outputs(pool, pool.recv())
        else:
            out = outputs(pool, pool.reset() if t == 0 else pool.step(rng.integers(1, 10, 6).astype(np.int32)))
        done = out["terminated"] | out["truncated"]
        ended += done.sum()
        for name in finals:
            assert not out[name][~done].any(), (t, name)  # exactly zero, never a recycled block's data
        if done.any():  # where an episode ended, its real final obs / score / length (episode_len 3)
            assert (out["final:obs"][done][:, 1] == 3).all() and (out["final:elapsed_step"][done] == 3).all()
            assert (out["final:info:score"][done] >= 3).all()
        if batch_size:
            ids = out["env_id"].copy()
            pool.send(rng.integers(1, 10, len(ids)).astype(np.int32), ids)
    assert ended > 10


# ---- 4. env exceptions in async batches ----------------------------------------------------------------------


def test_async_env_error_keeps_healthy_rows_and_all_envs():
    n, bs = 4, 2
    pool = core_pool(num_envs=n, batch_size=bs, num_threads=1, error_action=3, episode_len=1000)
    pool.send(None, None, True)
    batches = [outputs(pool, pool.recv())["env_id"].copy() for _ in range(2)]
    first = batches[0]
    # exactly one batch pending: `first`, where env first[0] fails and first[1] is healthy
    pool.send(np.array([3, 5], np.int32), first)
    with pytest.raises(_core.EnvError, match=f"env {first[0]}: Dummy env {first[0]} was told to fail") as raised:
        pool.recv()
    e = raised.value
    assert e.env_ids == [int(first[0])] and e.batch_kept and "was told to fail" in e.messages[0]
    # the failed env's rows cannot be sent to twice while its batch is held back
    with pytest.raises(ValueError, match="already has an action pending"):
        pool.send(np.array([1], np.int32), first[:1])
    out = outputs(pool, pool.recv())  # the same batch, whole
    rows = {int(e): i for i, e in enumerate(out["env_id"])}
    assert set(rows) == set(first.tolist())
    bad, good = rows[int(first[0])], rows[int(first[1])]
    assert out["elapsed_step"][bad] == 0 and out["reward"][bad] == 0 and out["obs"][bad][1] == 0  # a fresh episode
    assert out["elapsed_step"][good] == 1 and out["reward"][good] == 5 and out["obs"][good][2] == 5  # its step
    # the loop goes on with all envs
    pool.send(np.ones(bs, np.int32), batches[1])
    pool.send(np.ones(bs, np.int32), first)
    seen = np.zeros(n, int)
    for _ in range(20):
        ids = outputs(pool, pool.recv())["env_id"].copy()
        seen[ids] += 1
        pool.send(np.ones(len(ids), np.int32), ids)
    assert (seen > 0).all()


def test_sync_env_error_resets_failed_env_on_next_step():
    pool = core_pool(num_envs=3, error_action=7, num_threads=2)
    pool.reset()
    with pytest.raises(_core.EnvError, match="env 1: Dummy env 1 was told to fail") as raised:
        pool.step(np.array([1, 7, 7], np.int32)[[0, 1, 0]])
    assert raised.value.env_ids == [1] and not raised.value.batch_kept
    out = outputs(pool, pool.step(np.array([2, 2, 2], np.int32)))
    assert out["elapsed_step"].tolist() == [2, 0, 2] and out["reward"].tolist() == [2, 0, 2]


# ---- 5. fork ---------------------------------------------------------------------------------------------------

FORK_CHILD = """
import os, sys, threading, time
import numpy as np
from parallel_pool import _core

def make(**kw):
    t, o = _core.tasks()["Dummy-v0"]
    return _core.Engine(t, dict(o, num_envs=4, num_threads=2, **kw))

parent = make(step_cost_us=20000.0 if {busy} else 0.0)
parent.reset()
if {busy}:
    # another thread is inside step() (holding the pool's API mutex) at the moment of fork
    def loop():
        while True:
            parent.step(np.ones(4, np.int32))
    threading.Thread(target=loop, daemon=True).start()
    time.sleep(0.2)
pid = os.fork()
if pid == 0:
    try:
        parent.step(np.ones(4, np.int32))
        print("CHILD-USED-PARENT-POOL")
    except RuntimeError as e:
        assert "parent process" in str(e), e
        print("CHILD-REFUSED")
    child = make()  # its own pool works
    child.reset()
    out = child.step(np.full(4, 3, np.int32))
    print("CHILD-OWN-POOL", out[2].tolist())
    parent.close()  # leaves the parent's pool alone
    child.close()
    sys.stdout.flush()
    {child_exit}
else:
    _, status = os.waitpid(pid, 0)
    print("CHILD-STATUS", os.waitstatus_to_exitcode(status))
    out = parent.step(np.ones(4, np.int32)) if not {busy} else None  # the parent's pool still works
    print("PARENT-OK")
"""


@pytest.mark.parametrize("busy", [False, True])
@pytest.mark.parametrize("child_exit", ["sys.exit(0)", "os._exit(0)", "pass"])
def test_fork_child_refuses_parent_pool_and_exits_cleanly(busy, child_exit):
    r = run_python(FORK_CHILD.format(busy=busy, child_exit=child_exit), timeout=60)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "CHILD-REFUSED" in out and "CHILD-USED-PARENT-POOL" not in out, out
    assert "CHILD-OWN-POOL [3.0, 3.0, 3.0, 3.0]" in out, out
    assert "CHILD-STATUS 0" in out and "PARENT-OK" in out, out
    assert "terminate" not in out and "Traceback" not in out, out


def test_multiprocessing_fork_child_makes_its_own_pool():
    code = """
    import multiprocessing as mp
    import numpy as np
    from parallel_pool import _core

    def make():
        t, o = _core.tasks()["Dummy-v0"]
        return _core.Engine(t, dict(o, num_envs=3, num_threads=2))

    def work(q):
        p = make()
        p.reset()
        q.put(p.step(np.full(3, 2, np.int32))[2].tolist())

    if __name__ == "__main__":
        live = make()
        live.reset()
        ctx = mp.get_context("fork")
        q = ctx.Queue()
        proc = ctx.Process(target=work, args=(q,))
        proc.start()
        print("GOT", q.get(timeout=30))
        proc.join(30)
        print("EXIT", proc.exitcode)
    """
    r = run_python(code, timeout=60)
    assert r.returncode == 0 and "GOT [2.0, 2.0, 2.0]" in r.stdout and "EXIT 0" in r.stdout, r.stdout + r.stderr


# ---- 6. interpreter exit with a thread still stepping ------------------------------------------------------------

EXIT_WHILE_STEPPING = """
import os, signal, sys, threading, time
import numpy as np
from parallel_pool import _core

t, o = _core.tasks()["Dummy-v0"]
pools = []
def loop(mode):
    p = _core.Engine(t, dict(o, num_envs=4, num_threads=2, batch_size=2 if mode == "async" else 0,
                           step_cost_us=2000.0))
    pools.append(p)
    if mode == "async":
        p.send(None, None, True)
        while True:
            out = p.recv()
            p.send(np.ones(2, np.int32), out[5])
    else:
        p.reset()
        while True:
            p.step(np.ones(4, np.int32))

for mode in ("sync", "async", "sync"):
    threading.Thread(target=loop, args=(mode,), daemon=True).start()
time.sleep(0.3)
if {sigint}:
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
    except KeyboardInterrupt:
        print("INTERRUPTED")
print("MAIN-EXITS", flush=True)
"""


@pytest.mark.parametrize("sigint", [False, True])
def test_interpreter_exit_with_threads_inside_step_and_recv(sigint):
    for _ in range(3):  # the race with the exiting main thread differs from run to run
        r = run_python(EXIT_WHILE_STEPPING.format(sigint=sigint), timeout=60)
        out = r.stdout + r.stderr
        assert r.returncode == 0, out
        assert "MAIN-EXITS" in out and "terminate" not in out and "Fatal" not in out, out
        assert ("INTERRUPTED" in out) == sigint, out


# ---- 7. Ctrl-C while the caller would run a slow step itself ---------------------------------------------------

CTRL_C_SLOW_STEP = """
import os, signal, threading, time
import numpy as np
from parallel_pool import _core

t, o = _core.tasks()["Dummy-v0"]
p = _core.Engine(t, dict(o, num_envs=1, num_threads=1, step_cost_us={cost_us}))
p.reset()
p.step(np.ones(1, np.int32))  # one step teaches the pool that its steps are slow
threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
t0 = time.monotonic()
try:
    p.step(np.ones(1, np.int32))
    print("NOT-INTERRUPTED")
except KeyboardInterrupt:
    print("LATENCY", time.monotonic() - t0 - 0.5)
"""


def test_ctrl_c_interrupts_step_long_before_a_slow_env_step_ends():
    r = run_python(CTRL_C_SLOW_STEP.format(cost_us=3e6), timeout=60)
    out = r.stdout + r.stderr
    assert "LATENCY" in out, out
    latency = float(out.split("LATENCY")[1].split()[0])
    assert latency < 0.5, out  # the step itself takes 3 s: the interrupt did not wait for it


# ---- 7b. a signal handler that closes the pool while the main thread waits in recv -----------------------------

CLOSE_FROM_HANDLER = """
import os, signal, threading, time
import numpy as np
import parallel_pool

# env 0 takes {cost_s} s per step: a recv waiting for it is a long blocking call
env = parallel_pool.make("Dummy-v0", num_envs=2, batch_size=1, slow_env=0, slow_env_cost_us={cost_s} * 1e6)
env.async_reset()
env.recv(), env.recv()
# one step teaches the pool that env steps are slow: the caller then leaves them to the workers and waits,
# checking for signals (a caller running the step itself could not run a handler until the step ends)
env.send(np.ones(1, np.int64), np.array([0]))
env.recv()
env.send(np.ones(1, np.int64), np.array([0]))
# and the worker has taken the step by now: the estimate is sampled (one cheap-looking item in 16 is timed), so the
# step above may not have taught the pool; a queued step could still be run by the caller itself
time.sleep(0.3)

def handler(signum, frame):
    print("HANDLER-STARTS", time.monotonic() - t0, flush=True)
    env.close()
    print("CLOSED-IN-HANDLER", time.monotonic() - t0, flush=True)

t0 = time.monotonic()
signal.signal(signal.{sig}, handler)
if "{sig}" == "SIGALRM":
    signal.setitimer(signal.ITIMER_REAL, 0.5)
else:
    threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
try:
    env.recv()
    print("RECV-RETURNED")
except RuntimeError as e:
    print("RECV-RAISED", type(e).__name__, e)
print("WAITED", time.monotonic() - t0, flush=True)
print("CLOSED", env.closed)
try:
    env.send(np.ones(1, np.int64), np.array([1]))
except RuntimeError as e:
    print("AFTER", e)
"""


@pytest.mark.parametrize("sig", ["SIGALRM", "SIGINT"])
def test_a_signal_handler_can_close_the_pool_during_a_long_recv(sig):
    """A handler calling env.close() while the main thread is blocked in recv (waiting for a 2 s step): the handler
    runs during the wait, close() finishes (today it waits for the step in flight), recv then returns the finished
    batch or raises the closed-pool error, the pool stays closed, and the process exits cleanly: no deadlock of the
    handler's close() with the recv it interrupted, no crash."""
    r = run_python(CLOSE_FROM_HANDLER.format(sig=sig, cost_s=2), timeout=60)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    started = float(out.split("HANDLER-STARTS")[1].split()[0])
    assert started < 1.5, out  # the handler ran while recv waited for the 2 s step
    assert "CLOSED-IN-HANDLER" in out, out
    assert "RECV-RETURNED" in out or "closed" in out.split("RECV-RAISED")[1], out
    assert float(out.split("WAITED")[1].split()[0]) < 6, out
    assert "CLOSED True" in out and "closed" in out.split("AFTER")[1], out


# ---- 8. thread limits ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("num_threads", [4097, 10**6])
def test_absurd_num_threads_is_a_value_error(num_threads):
    with pytest.raises(ValueError, match=f"num_threads must be in \\[0, 4096\\].*{num_threads}"):
        core_pool(num_envs=2, num_threads=num_threads)


def test_thread_creation_failure_is_a_python_exception():
    code = """
    import resource
    import numpy as np
    from parallel_pool import _core

    t, o = _core.tasks()["Dummy-v0"]
    ok = _core.Engine(t, dict(o, num_envs=2, num_threads=2))  # made before the limit: must keep working
    ok.reset()
    n = len(__import__("os").listdir("/proc/self/task"))
    resource.setrlimit(resource.RLIMIT_NPROC, (0, resource.getrlimit(resource.RLIMIT_NPROC)[1]))
    # RLIMIT_NPROC does not bind root; an address-space limit with no room for a thread stack binds everyone
    vm = int([l.split()[1] for l in open("/proc/self/status") if l.startswith("VmSize")][0]) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (vm + (6 << 20), resource.RLIM_INFINITY))
    for threads in (1, 64):
        try:
            _core.Engine(t, dict(o, num_envs=64, num_threads=threads))
            print("CREATED")
        except RuntimeError as e:
            print("REFUSED", "thread limit" in str(e))
    print("TASKS", len(__import__("os").listdir("/proc/self/task")) == n)
    print("STEP", ok.step(np.ones(2, np.int32))[2].tolist())
    """
    r = run_python(code, timeout=60)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert out.count("REFUSED True") == 2 and "TASKS True" in out and "STEP [1.0, 1.0]" in out, out


# ---- 9. index validation ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("env_id", [-1, 3, 2**31, -(2**40)])
def test_env_index_out_of_range_is_an_index_error(env_id):
    pool = core_pool("CartPole-v1", num_envs=3)
    pool.reset()
    for call in (
        lambda: pool.num_players(env_id),
        lambda: pool.get_state(env_id),
        lambda: pool.set_state(env_id, [0.0] * 4),
    ):
        with pytest.raises(IndexError, match=f"env_id {env_id} is out of range: this pool has env ids 0..2"):
            call()
    assert pool.num_players(2) == 1 and len(pool.get_state(2)) == 4


@pytest.mark.parametrize(
    "task,n", [("CartPole-v1", 0), ("CartPole-v1", 3), ("CartPole-v1", 1000), ("Taxi-v3", 2), ("Blackjack-v1", 1)]
)
def test_set_state_with_wrong_length_is_a_value_error(task, n):
    pool = core_pool(task, num_envs=2)
    pool.reset()
    before = pool.get_state(1)
    with pytest.raises(ValueError, match="state"):
        pool.set_state(1, [1.0] * n)
    assert pool.get_state(1) == before  # untouched
    if task != "CartPole-v1":
        return
    pool.set_state(1, [0.01, 0.0, 0.02, 0.0])
    assert pool.get_state(1) == [0.01, 0.0, 0.02, 0.0]


# ---- 10. GC, cycles, close from anywhere -----------------------------------------------------------------------


def thread_count() -> int:
    return len(os.listdir("/proc/self/task"))


def settled_thread_count(want: int) -> int:
    """The thread count once exited threads have left /proc (the kernel reaps them just after join)."""
    for _ in range(200):
        if thread_count() == want:
            break
        time.sleep(0.01)
    return thread_count()


def test_pool_in_reference_cycle_releases_threads_at_gc():
    gc.collect()
    base = thread_count()

    class Holder:
        pass

    for _ in range(3):
        h = Holder()
        h.pool = core_pool(num_envs=4, num_threads=3)
        h.pool.reset()
        h.self = h  # a cycle: only the cycle collector frees it
        del h
    assert thread_count() >= base + 3
    gc.collect()
    assert settled_thread_count(base) == base


def test_close_from_another_thread_and_twice():
    import threading

    base = thread_count()
    pool = core_pool(num_envs=4, num_threads=3)
    pool.reset()
    t = threading.Thread(target=pool.close)
    t.start()
    t.join()
    pool.close()
    assert pool.closed and settled_thread_count(base) == base
    with pytest.raises(RuntimeError, match="closed"):
        pool.step(np.ones(4, np.int32))


def test_close_waits_for_a_step_in_progress_on_another_thread():
    import threading

    pool = core_pool(num_envs=2, num_threads=1, step_cost_us=200000.0)
    pool.reset()
    pool.step(np.ones(2, np.int32))
    result = {}

    def stepper():
        try:
            result["out"] = pool.step(np.ones(2, np.int32))[2].tolist()
        except Exception as e:  # noqa: BLE001
            result["err"] = e

    t = threading.Thread(target=stepper)
    t.start()
    time.sleep(0.05)
    pool.close()  # takes the API mutex: the step finishes first, then the pool closes
    t.join()
    assert result == {"out": [1.0, 1.0]} and pool.closed


# ---- 12. sanitizers ----------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("which", ["asan", "tsan"])
def test_stress_under_sanitizers(which):
    """Runs .ci/sanitize.sh's stress step against an existing sanitizer build (build it with the script)."""
    build = os.path.join(ROOT, "build", which, "extension")  # the module target's folder in the build tree
    if not any(f.startswith("_core") for f in os.listdir(build)) if os.path.isdir(build) else True:
        pytest.skip(f"no {which} build: run .ci/sanitize.sh {which}")
    r = subprocess.run(
        ["bash", os.path.join(ROOT, ".ci", "sanitize.sh"), which],
        capture_output=True,
        text=True,
        timeout=1800,
        env=dict(os.environ, PYTHON=sys.executable, PP_STRESS_ROUNDS="2"),
    )
    assert r.returncode == 0 and f"{which} stress: clean" in r.stdout, r.stdout[-5000:] + r.stderr[-5000:]


# ---- 15. the typed stub ------------------------------------------------------------------------------------------


def test_core_stub_lists_everything_the_module_exposes():
    import ast

    tree = ast.parse(open(os.path.join(ROOT, "parallel_pool", "_core.pyi")).read())
    top = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    top |= {n.target.id for n in tree.body if isinstance(n, ast.AnnAssign)}
    assert {n for n in dir(_core) if not n.startswith("__")} <= top
    engine_cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Engine")
    members = {n.name for n in engine_cls.body if isinstance(n, ast.FunctionDef)}
    assert {n for n in dir(_core.Engine) if not n.startswith("__") and "pybind11" not in n} <= members
    err_cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "EnvError")
    assert {n.target.id for n in err_cls.body if isinstance(n, ast.AnnAssign)} == {"env_ids", "messages", "batch_kept"}


def test_config_int_with_a_broken_index_raises_its_error():
    class Broken:
        def __index__(self):
            raise OverflowError("broken __index__")

    with pytest.raises(OverflowError, match="broken __index__"):
        core_pool(num_envs=Broken())
