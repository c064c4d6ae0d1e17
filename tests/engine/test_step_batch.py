"""Batched stepping (an env type's StepBatch, docs/decisions.md "Engine"): a pool that steps runs of envs in one
call gives the same arrays, bit for bit, as a pool of the same envs stepped one at a time
(PARALLEL_POOL_STEP_BATCH=0), over many steps with episode ends, sync and async, in every autoreset mode, with
reset_mask and partial sends."""

import numpy as np
import pytest

import parallel_pool as pp

MODES = ["next_step", "same_step", "disabled"]
# every type that declares StepBatch (MountainCar rarely ends an episode by itself: max_episode_steps does)
TASKS = [
    "CartPole-v1",
    "phys2d/CartPole-v1",
    "MountainCar-v0",
    "MountainCarContinuous-v0",
    "Pendulum-v1",
    "phys2d/Pendulum-v0",
    "NChain-v0",
    "FrozenLake-v1",
    "FrozenLake8x8-v1",
    "Taxi-v3",
    "Catch-v0",
]


def make(monkeypatch, batched, task, **kw):
    # the engine reads the switch when it is built
    monkeypatch.setenv("PARALLEL_POOL_STEP_BATCH", "1" if batched else "0")
    return pp.make(task, max_episode_steps=30, seed=11, **kw)


def actions(env, rng, n):
    """n random actions of the pool's action space (a Discrete index, or a Box row in [-2, 2])."""
    space = env.single_action_space
    if hasattr(space, "n"):
        return rng.integers(0, int(space.n), n).astype(np.int32)
    return rng.uniform(-2.0, 2.0, (n, *space.shape)).astype(np.float32)


def rows_bytes(arrays):
    return [np.ascontiguousarray(a).tobytes() for a in arrays]


def run_sync(monkeypatch, batched, task, mode, steps=250, num_envs=37, num_threads=2, shared_sends=None):
    """shared_sends: a list that gets the engine's count of sends shared among the threads as one item each
    (Engine::ShareAmongThreads: full sends of >= 16 envs per thread; 37 envs with 2 workers are fewer)."""
    env = make(
        monkeypatch, batched, task, num_envs=num_envs, batch_size=num_envs, num_threads=num_threads, autoreset_mode=mode
    )
    rng = np.random.default_rng(5)
    ix = env.schema.index
    record = []
    obs, _ = env.reset()
    record.append(obs.tobytes())
    done = np.zeros(num_envs, bool)
    for t in range(steps):
        if mode == "disabled":
            ids = np.flatnonzero(~done)  # only live envs may step: partial sends
            arrays = env.step_arrays(actions(env, rng, len(ids)), env_id=ids)
            got = arrays[ix["env_id"]]
            done[got] = arrays[ix["terminated"]] | arrays[ix["truncated"]]
        elif t % 7 == 3:  # a subset, in a shuffled order
            ids = rng.permutation(num_envs)[: num_envs // 2]
            arrays = env.step_arrays(actions(env, rng, len(ids)), env_id=ids)
        else:
            arrays = env.step_arrays(actions(env, rng, num_envs))
        record.append(rows_bytes(arrays))
        if (mode == "disabled" and done.sum() >= 4) or (mode != "disabled" and t % 40 == 39):
            mask = done.copy() if mode == "disabled" else rng.random(num_envs) < 0.3
            mask[0] = True
            obs, _ = env.reset(options={"reset_mask": mask})
            done &= ~mask
            record.append(obs.tobytes())
    batched_steps = env.engine._batched_steps
    if shared_sends is not None:
        shared_sends.append(env.engine._shared_sends)
    env.close()
    return record, batched_steps


def run_async(monkeypatch, batched, task, mode, recvs=300, num_envs=32, batch_size=8, shuffle=False):
    """shuffle: each send's env ids in a random order (not recv's), so the engine sorts them by lane first."""
    env = make(
        monkeypatch,
        batched,
        task,
        num_envs=num_envs,
        batch_size=batch_size,
        num_threads=2,
        autoreset_mode=mode,
    )
    engine, ix = env.engine, env.schema.index
    rng = np.random.default_rng(6)
    table = np.stack([actions(env, rng, recvs + 2) for _ in range(num_envs)])  # env e's t-th action: table[e, t]
    count = np.zeros(num_envs, int)
    ends = 0
    per_env: dict[int, list] = {e: [] for e in range(num_envs)}  # completion order differs; each env's rows do not
    engine.send(None, np.arange(num_envs, dtype=np.int32), True, None)
    for _ in range(recvs):
        arrays = engine.recv()
        ids = np.asarray(arrays[ix["env_id"]])
        for r, e in enumerate(ids):
            per_env[int(e)].append([np.asarray(a)[r].tobytes() for a in arrays])
        done = arrays[ix["terminated"]] | arrays[ix["truncated"]]
        ends += int(done.sum())
        if shuffle:
            order = rng.permutation(len(ids))
            ids, done = ids[order], done[order]
        reset_ids = ids[done] if mode == "disabled" else ids[:0]
        step_ids = ids[~done] if mode == "disabled" else ids
        if len(reset_ids):
            engine.send(None, reset_ids.astype(np.int32), True, None)
        if len(step_ids):
            engine.send(table[step_ids, count[step_ids]], step_ids.astype(np.int32), False, None)
            count[step_ids] += 1
    batched_steps = engine._batched_steps
    env.close()
    assert ends > 20  # episodes ended (by termination and by max_episode_steps)
    return per_env, batched_steps


def one_and_batched(run, monkeypatch, task: str, mode: str, min_batched: int):
    """`run`'s records with the batched path switched off, then on; only the second run used it, for more than
    `min_batched` steps."""
    one, none_batched = run(monkeypatch, False, task, mode)
    batched, n_batched = run(monkeypatch, True, task, mode)
    assert none_batched == 0
    assert n_batched > min_batched
    return one, batched


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("mode", MODES)
def test_sync_batched_equals_one_at_a_time(monkeypatch, task, mode):
    # the batched path ran > 1000 steps (runs form once the per-env cost estimate has settled)
    one, batched = one_and_batched(run_sync, monkeypatch, task, mode, min_batched=1000)
    assert len(one) == len(batched)
    for t, (a, b) in enumerate(zip(one, batched)):
        assert a == b, f"record {t} differs"


@pytest.mark.parametrize("task", ["CartPole-v1", "Pendulum-v1", "FrozenLake-v1", "Catch-v0"])
@pytest.mark.parametrize("mode", MODES)
def test_sync_shared_among_threads_equals_one_at_a_time(monkeypatch, task, mode):
    # one worker + the caller, 37 envs: each full send is one item per thread, the caller's share adjusted call by
    # call (Engine::ShareAmongThreads); partial sends and resets keep RunLength's runs
    shared: list[int] = []

    def run(monkeypatch, batched, task, mode):
        return run_sync(monkeypatch, batched, task, mode, num_threads=1, shared_sends=shared)

    one, batched = one_and_batched(run, monkeypatch, task, mode, min_batched=1000)
    # with StepBatch from the first send; one at a time too, once the cost estimate has settled (kShareMaxNs)
    assert shared[0] > (50 if mode == "disabled" else 150)
    assert shared[1] > (50 if mode == "disabled" else 150)
    assert one == batched


@pytest.mark.skipif(
    "MiniGrid-Empty-5x5-v0" not in pp.list_all_envs(include_unlisted=True), reason="this build has no MiniGrid envs"
)
def test_sync_shares_of_a_type_without_step_batch_equal_runs():
    # MiniGrid has no StepBatch; its cheap envs' full sync sends are shared among the threads once the cost estimate
    # has settled. The same steps sent in reverse env order (not consecutive: RunLength's runs) give the same rows.
    def run(reverse):
        env = pp.make("MiniGrid-Empty-5x5-v0", num_envs=64, num_threads=1, seed=3, max_episode_steps=20)
        rng = np.random.default_rng(8)
        ids = np.arange(64)[::-1] if reverse else None
        env.reset(env_id=ids)
        rows = []
        for _ in range(300):
            act = rng.integers(0, 7, 64).astype(np.int32)  # env e's action: act[e]
            obs, rew, term, trunc, info = env.step(act if ids is None else act[ids], env_id=ids)
            order = np.argsort(info["env_id"])
            rows.append(
                (obs["image"][order].tobytes(), rew[order].tobytes(), term[order].tobytes(), trunc[order].tobytes())
            )
        shared = env.engine._shared_sends
        env.close()
        return rows, shared

    shared_rows, shared = run(False)
    runs_rows, not_shared = run(True)
    assert shared > 200 and not_shared == 0
    assert shared_rows == runs_rows


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("mode", MODES)
def test_async_batched_equals_one_at_a_time(monkeypatch, task, mode, shuffle):
    def run(monkeypatch, batched, task, mode):
        return run_async(monkeypatch, batched, task, mode, shuffle=shuffle)

    one, batched = one_and_batched(run, monkeypatch, task, mode, min_batched=100)
    # which envs finish first is the threads' timing, so one env may get few rows in a run (a slow, loaded or
    # sanitized build starves some): each env's common prefix is compared, and most of the 2400 rows are
    compared = 0
    for e in one:
        n = min(len(one[e]), len(batched[e]))
        assert one[e][:n] == batched[e][:n], f"env {e} differs"
        compared += n
    assert compared > 1200, compared
