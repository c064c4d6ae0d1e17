"""parallel_pool.ThreadPool: several pools on one set of worker threads (make(..., thread_pool=tp)). Same
trajectories as private pools, each pool's async batches first-finished, round robin between busy pools, a
closing pool leaves the others running, errors reach their own pool only, Ctrl-C and close stay bounded."""

import os
import time

import numpy as np
import pytest
from test_engine import assert_ctrl_c_interrupts_recv

import parallel_pool as pp


def _threads(name: str) -> int:
    """Threads of this process called `name` (the engine names its workers)."""
    n = 0
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/comm") as f:
                n += f.read().strip() == name
        except FileNotFoundError:  # a thread that just ended
            pass
    return n


def _dummy(tp, **kw):
    kw.setdefault("num_envs", 2)
    return pp.make("Dummy-v0", thread_pool=tp, **kw)


def _cartpole_on_one_thread():
    """A ThreadPool of one thread and a reset 2-env CartPole pool on it."""
    tp = pp.ThreadPool(1)
    env = pp.make("CartPole-v1", num_envs=2, thread_pool=tp)
    env.reset()
    return tp, env


def test_pools_share_the_threads_instead_of_starting_their_own():
    before = _threads("pp-worker")
    tp = pp.ThreadPool(2)
    assert tp.num_threads == 2 and not tp.closed
    pools = [pp.make("CartPole-v1", num_envs=8, thread_pool=tp) for _ in range(3)]
    assert tp.num_pools == 3
    assert _threads("pp-shared") == 2
    assert _threads("pp-worker") == before  # none of the three started a worker of its own
    assert all(p.engine.num_threads == 2 for p in pools)
    for p in pools:
        p.close()
    assert tp.num_pools == 0
    tp.close()
    assert tp.closed
    deadline = time.monotonic() + 5
    while _threads("pp-shared") and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _threads("pp-shared") == 0


def test_sync_trajectories_equal_private_pools():
    """Two pools on one ThreadPool, stepped alike, give exactly the arrays of two private pools."""
    tp = pp.ThreadPool(2)
    shared = [pp.make("CartPole-v1", num_envs=24, seed=s, thread_pool=tp) for s in (1, 2)]
    private = [pp.make("CartPole-v1", num_envs=24, seed=s, num_threads=2) for s in (1, 2)]
    rng = np.random.default_rng(0)
    for a, b in zip(shared, private):
        np.testing.assert_array_equal(a.reset()[0], b.reset()[0])
    for _ in range(200):
        for a, b in zip(shared, private):
            act = rng.integers(0, 2, 24).astype(np.int32)
            for x, y in zip(a.step_arrays(act), b.step_arrays(act)):
                np.testing.assert_array_equal(x, y)
    for p in shared + private:
        p.close()
    tp.close()


def _async_episodes(env, steps: int) -> dict[int, list]:
    """Each env's sequence of (obs, reward) in an async pool, actions a function of (env id, its step count)."""
    seen: dict[int, list] = {i: [] for i in range(env.num_envs)}
    env.async_reset()
    for _ in range(steps):
        obs, rew, term, trunc, info = env.recv()
        ids = info["env_id"]
        for row, e in enumerate(ids):
            seen[int(e)].append((obs[row].tobytes(), float(rew[row]), bool(term[row]), bool(trunc[row])))
        env.send(np.array([(int(e) + len(seen[int(e)])) % 2 for e in ids], np.int32), ids)
    return seen


def test_async_trajectories_equal_private_pools_and_batches_come_first_finished():
    """Async pools on one ThreadPool: per env, the same trajectory as a private pool; batches hold whichever
    envs finished (a slow env does not hold up the batches of the others)."""
    tp = pp.ThreadPool(2)
    kw = dict(num_envs=16, batch_size=4, seed=3)
    a = pp.make("CartPole-v1", thread_pool=tp, **kw)
    b = pp.make("CartPole-v1", thread_pool=tp, **kw)
    ref = pp.make("CartPole-v1", num_threads=2, **kw)
    got_a, got_b, want = _async_episodes(a, 300), _async_episodes(b, 300), _async_episodes(ref, 300)
    for e in range(16):
        n = min(len(got_a[e]), len(want[e]))
        assert n > 10
        assert got_a[e][:n] == want[e][:n]
        n = min(len(got_b[e]), len(want[e]))
        assert got_b[e][:n] == want[e][:n]
    for p in (a, b, ref):
        p.close()
    # first finished: env 0 takes 0.5 s a step, the others are cheap; batches of the others come back meanwhile
    slow = _dummy(tp, num_envs=8, batch_size=2, slow_env=0, slow_env_cost_us=500000.0)
    slow.async_reset()
    t0 = time.perf_counter()
    ids = []
    for _ in range(3):
        *_, info = slow.recv()
        ids += info["env_id"].tolist()
    assert 0 not in ids[-4:] and time.perf_counter() - t0 < 0.45 * 3
    slow.close()
    tp.close()


def test_round_robin_between_busy_pools():
    """One shared thread; pool A has 12 costly steps queued; pool B's one step runs after at most the step A is
    in (plus one), not after A's whole queue (12 x 40 ms)."""
    tp = pp.ThreadPool(1)
    a = _dummy(tp, num_envs=12, batch_size=1, step_cost_us=40000.0)
    b = _dummy(tp, num_envs=1, step_cost_us=40000.0)
    b.reset()
    for _ in range(3):  # B learns its step is costly: its caller then leaves the step to the shared thread
        b.step(np.array([1]))
    a.async_reset()
    for _ in range(12):
        a.recv()
    for _ in range(3):
        a.send(np.ones(12, np.int32), np.arange(12))
        time.sleep(0.02)  # A's first step is running on the shared thread, 11 wait in A's queue
        t0 = time.perf_counter()
        b.step(np.array([1]))
        waited = time.perf_counter() - t0
        assert waited < 0.25, f"B waited {waited:.3f} s behind A's queue"
        for _ in range(12):
            a.recv()
    a.close()
    b.close()
    tp.close()


def test_an_env_error_reaches_its_own_pool_only():
    tp = pp.ThreadPool(2)
    bad = _dummy(tp, num_envs=4, error_action=7)
    good = _dummy(tp, num_envs=4)
    ref = pp.make("Dummy-v0", num_envs=4)
    bad.reset()
    good.reset()
    ref.reset()
    for t in range(20):
        act = np.full(4, t % 3, np.int32)
        for x, y in zip(good.step_arrays(act), ref.step_arrays(act)):
            np.testing.assert_array_equal(x, y)
        if t == 10:
            bad.reset()  # a step, not an autoreset, comes next
            with pytest.raises(pp.EnvError, match="told to fail") as e:
                bad.step(np.array([0, 7, 0, 0], np.int32))
            assert e.value.env_ids == [1]
        else:
            bad.step(act)
    for p in (bad, good, ref):
        p.close()
    tp.close()


def test_closing_one_pool_leaves_the_others_and_the_thread_pool_running():
    tp = pp.ThreadPool(2)
    a = pp.make("CartPole-v1", num_envs=8, batch_size=4, thread_pool=tp)
    b = pp.make("CartPole-v1", num_envs=8, thread_pool=tp)
    a.async_reset()
    a.send(np.zeros(4, np.int32), a.recv()[4]["env_id"])  # a closes with work in flight
    a.close()
    with pytest.raises(RuntimeError, match="closed"):
        a.step(np.zeros(4, np.int32))
    b.reset()
    for _ in range(50):
        b.step(np.zeros(8, np.int32))
    c = pp.make("CartPole-v1", num_envs=4, thread_pool=tp)  # a new pool joins
    c.reset()
    c.step(np.zeros(4, np.int32))
    assert tp.num_pools == 2
    b.close()
    c.close()
    tp.close()


def test_thread_pool_close_refuses_while_pools_use_it_and_changes_nothing():
    tp, env = _cartpole_on_one_thread()
    with pytest.raises(RuntimeError, match="still serves 1 pool"):
        tp.close()
    assert not tp.closed
    env.step(np.zeros(2, np.int32))  # still served
    env.close()
    tp.close()
    tp.close()  # idempotent
    with pytest.raises(ValueError, match="ThreadPool has been closed"):
        pp.make("CartPole-v1", thread_pool=tp)


def test_dropping_the_thread_pool_object_keeps_its_pools_running():
    tp = pp.ThreadPool(1)
    env = pp.make("CartPole-v1", num_envs=4, batch_size=2, thread_pool=tp)
    del tp
    env.async_reset()
    for _ in range(20):
        *_, info = env.recv()
        env.send(np.zeros(2, np.int32), info["env_id"])
    env.close()


@pytest.mark.parametrize(
    ("kw", "error", "match"),
    [
        ({"num_threads": 3}, ValueError, "num_threads is the thread_pool's own"),
        ({"thread_affinity_offset": 0}, ValueError, "thread_affinity_offset does not apply"),
        ({"thread_pool": "two"}, TypeError, "thread_pool must be a parallel_pool.ThreadPool"),
    ],
)
def test_bad_arguments_raise(kw, error, match):
    tp = pp.ThreadPool(2)
    kw = {"thread_pool": tp, **kw}
    with pytest.raises(error, match=match):
        pp.make("CartPole-v1", num_envs=2, **kw)
    assert tp.num_pools == 0  # nothing attached
    assert pp.make("CartPole-v1", num_envs=2, num_threads=2, thread_pool=tp).engine.num_threads == 2
    with pytest.raises(ValueError, match=r"ThreadPool num_threads must be in \[0, "):
        pp.ThreadPool(-1)
    with pytest.raises(ValueError, match="envs written in Python run in processes"):
        pp.make("CartPole-v1", backend="python", num_envs=1, thread_pool=tp)


def test_ctrl_c_interrupts_recv_on_a_shared_thread_pool_and_close_is_bounded(monkeypatch):
    tp = pp.ThreadPool(1)
    env = _dummy(tp, num_envs=2, batch_size=1, step_cost_us=1500000.0)
    other = pp.make("CartPole-v1", num_envs=2, thread_pool=tp)
    assert_ctrl_c_interrupts_recv(env)
    env.send(np.array([1]), np.array([1]))
    time.sleep(0.2)  # in its 1.5 s step on the shared thread
    t0 = time.perf_counter()
    env.close()  # waits for the step in progress (bounded by PARALLEL_POOL_CLOSE_TIMEOUT, 10 s by default)
    assert time.perf_counter() - t0 < 3
    other.reset()
    other.step(np.zeros(2, np.int32))  # the thread pool goes on
    other.close()
    tp.close()


def test_a_forked_child_gets_an_error_from_the_parents_thread_pool():
    tp, env = _cartpole_on_one_thread()
    pid = os.fork()
    if pid == 0:  # the child: the parent's ThreadPool has no threads here
        code = 1
        try:
            pp.make("CartPole-v1", num_envs=2, thread_pool=tp)
        except RuntimeError as e:
            code = 0 if "made before fork()" in str(e) else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    env.step(np.zeros(2, np.int32))  # the parent's pool is unaffected
    env.close()
    tp.close()
