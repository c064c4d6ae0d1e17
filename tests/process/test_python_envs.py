"""Envs written in Python in the pool (parallel_pool.process_engine): trajectories equal gymnasium's SyncVectorEnv
step for step (same seeds, every autoreset mode), async batches, Dict/Tuple spaces, faults and lifecycle."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import cloudpickle
import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.vector import SyncVectorEnv
from pyproc import IMPORT_ROOT, run_python  # noqa: E402

import parallel_pool as pp
from parallel_pool.spec import autoreset_mode

# the envs below are defined in this module: pickle them by value, as cloudpickle does for a user's script
cloudpickle.register_pickle_by_value(sys.modules[__name__])

MODES = ["next_step", "same_step", "disabled"]


class Counter(gym.Env):
    """A small unregistered env: obs (position, step count), reward = action - 1, ends after `length` steps or when
    the position leaves [-3, 3]. `delay` seconds per step; `boom` = an action that raises; `slow_ids` slows a
    few envs down by `slow` seconds (by the env's first reset seed) to test completion order."""

    def __init__(self, length: int = 7, delay: float = 0.0, boom: int | None = None):
        self.observation_space = spaces.Box(-10.0, 10.0, (2,), np.float32)
        self.action_space = spaces.Discrete(3 if boom is None else 4)
        self.length, self.delay, self.boom = length, delay, boom
        self.pos = 0.0
        self.t = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos, self.t = float(self.np_random.uniform(-1, 1)), 0
        return np.array([self.pos, self.t], np.float32), {}

    def step(self, action):
        if self.boom is not None and int(action) == self.boom:
            raise RuntimeError(f"boom at t={self.t}")
        if self.delay:
            time.sleep(self.delay)
        self.pos += int(action) - 1 + float(self.np_random.normal(0, 0.1))
        self.t += 1
        term = abs(self.pos) > 3
        trunc = self.t >= self.length
        return np.array([self.pos, self.t], np.float32), float(int(action) - 1), term, trunc, {}


class Structured(gym.Env):
    """Dict observation (Box, Discrete, MultiBinary, MultiDiscrete) and Tuple action (Discrete, Box)."""

    def __init__(self):
        self.observation_space = spaces.Dict(
            {
                "pos": spaces.Box(-5, 5, (2,), np.float64),
                "count": spaces.Discrete(20, start=1),
                "bits": spaces.MultiBinary(3),
                "grid": spaces.MultiDiscrete([3, 4]),
            }
        )
        self.action_space = spaces.Tuple((spaces.Discrete(2), spaces.Box(-1, 1, (2,), np.float32)))

    def _obs(self):
        return {
            "pos": self.pos.copy(),
            "count": self.t + 1,
            "bits": self.np_random.integers(0, 2, 3, dtype=np.int8),
            "grid": np.array([self.t % 3, self.t % 4], np.int64),
        }

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos, self.t = self.np_random.uniform(-1, 1, 2), 0
        return self._obs(), {}

    def step(self, action):
        flip, push = action
        self.pos = np.clip(self.pos + push * (1 if flip else -1), -5, 5)
        self.t += 1
        return self._obs(), float(self.pos.sum()), bool(abs(self.pos).max() >= 5), self.t >= 9, {}


class TupleObs(gym.Env):
    """Tuple observation; MultiDiscrete action."""

    observation_space = spaces.Tuple((spaces.Box(0, 1, (3,), np.float32), spaces.Discrete(5)))
    action_space = spaces.MultiDiscrete([2, 3])

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return (self.np_random.random(3).astype(np.float32), 0), {}

    def step(self, action):
        self.t += 1
        return (
            (self.np_random.random(3).astype(np.float32), int(action.sum())),
            float(action[0]),
            False,
            self.t >= 4,
            {},
        )


def _as_tree(x):
    if isinstance(x, tuple):
        return {str(i): v for i, v in enumerate(x)}
    return x


def _assert_tree(a, b, what):
    a, b = _as_tree(a), _as_tree(b)
    if isinstance(b, dict):
        assert set(a) == set(b), what
        for k in b:
            np.testing.assert_array_equal(a[k], b[k], err_msg=f"{what}[{k}]")
    else:
        np.testing.assert_array_equal(a, b, err_msg=what)


def compare_with_sync(ours, env_fns, mode: str, steps: int, seed: int = 7):
    """Step our pool and SyncVectorEnv with the same seeds and actions; every output equal at every step."""
    ref = SyncVectorEnv(env_fns, autoreset_mode=autoreset_mode(mode))
    try:
        obs, _ = ours.reset(seed=seed)
        robs, _ = ref.reset(seed=seed)
        _assert_tree(obs, robs, "reset obs")
        ref.action_space.seed(seed)
        ended = 0
        for t in range(steps):
            action = ref.action_space.sample()
            obs, rew, term, trunc, info = ours.step(action)
            robs, rrew, rterm, rtrunc, rinfo = ref.step(action)
            _assert_tree(obs, robs, f"obs at step {t}")
            np.testing.assert_array_equal(rew, rrew, err_msg=f"reward at step {t}")
            np.testing.assert_array_equal(term, rterm, err_msg=f"terminated at step {t}")
            np.testing.assert_array_equal(trunc, rtrunc, err_msg=f"truncated at step {t}")
            done = term | trunc
            ended += int(done.sum())
            if mode == "same_step" and done.any():
                np.testing.assert_array_equal(info["_final_obs"], rinfo["_final_obs"])
                for i in np.flatnonzero(done):
                    _assert_tree(info["final_obs"][i], rinfo["final_obs"][i], f"final_obs[{i}] at step {t}")
            if mode == "disabled" and done.any():
                obs, _ = ours.reset(options={"reset_mask": done})
                robs, _ = ref.reset(options={"reset_mask": done})
                _assert_tree(obs, robs, f"reset_mask obs at step {t}")
        assert ended > 0, "no episode ended: the autoreset path was not compared"
    finally:
        ours.close()
        ref.close()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "task_id, steps",
    [("CartPole-v1", 120), ("Pendulum-v1", 230), ("LunarLander-v3", 150), ("MiniGrid-Empty-5x5-v0", 120)],
)
def test_registered_ids_equal_sync_vector_env(task_id, steps, mode):
    if task_id.startswith("MiniGrid"):
        pytest.importorskip("minigrid")
        from minigrid.wrappers import ImgObsWrapper

        def fn():
            return ImgObsWrapper(gym.make(task_id, max_episode_steps=30))

        ours = pp.make(env_fn=fn, num_envs=3, autoreset_mode=mode, num_threads=2)
        env_fns = [fn] * 3
    else:
        if task_id == "LunarLander-v3":
            pytest.importorskip("Box2D")
        kwargs = {"max_episode_steps": 50} if task_id != "CartPole-v1" else {}
        ours = pp.make(task_id, backend="python", num_envs=3, autoreset_mode=mode, num_threads=2, **kwargs)
        env_fns = [lambda: gym.make(task_id, **kwargs)] * 3
    assert ours.spec.backend == "python" and "backend='python'" in repr(ours)
    compare_with_sync(ours, env_fns, mode, steps)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("cls", [Counter, Structured, TupleObs])
def test_unregistered_env_classes_equal_sync_vector_env(cls, mode):
    ours = pp.make(env_fn=cls, num_envs=4, num_threads=3, autoreset_mode=mode)
    assert ours.spec.task_id == cls.__qualname__
    compare_with_sync(ours, [cls] * 4, mode, 40)


def test_make_chooses_and_shows_the_backend():
    cpp = pp.make("CartPole-v1", num_envs=2)
    py = pp.make("CartPole-v1", num_envs=2, backend="python")
    assert cpp.spec.backend == "cpp" and "backend" not in repr(cpp)
    assert py.spec.backend == "python" and "backend='python'" in repr(py)
    assert py.single_observation_space == gym.make("CartPole-v1").observation_space
    # an id without a C++ port goes to Python; list_all_envs() lists the C++ ids only, as before
    auto = pp.make("Taxi-v4", num_envs=1)  # gymnasium's Taxi v4; the C++ port is EnvPool's Taxi-v3
    assert auto.spec.backend == "python" and "Taxi-v4" not in pp.list_all_envs()
    for env in (cpp, py, auto):
        env.close()
    with pytest.raises(ValueError, match="backend must be one of"):
        pp.make("CartPole-v1", backend="rust")
    with pytest.raises(ValueError, match="unknown task id"):
        pp.make("Taxi-v4", backend="cpp")
    with pytest.raises(ValueError, match="either a task_id or env_fn"):
        pp.make("CartPole-v1", env_fn=Counter)
    with pytest.raises(ValueError, match="unknown config keys"):
        pp.make(env_fn=Counter, num_env=2)


@pytest.mark.parametrize("env_type", ["gym", "dm"])
def test_gym_and_dm_front_ends_on_python_envs(env_type):
    env = pp.make("CartPole-v1", env_type=env_type, backend="python", num_envs=3, seed=5)
    ref = pp.make("CartPole-v1", backend="python", num_envs=3, seed=5)
    try:
        first = env.reset()
        robs, _ = ref.reset()
        obs = first.observation.obs if env_type == "dm" else first[0]
        np.testing.assert_array_equal(obs, robs)
        for _ in range(30):
            a = np.array([0, 1, 1])
            out = env.step(a)
            robs, rrew, rterm, rtrunc, _ = ref.step(a)
            if env_type == "dm":
                np.testing.assert_array_equal(out.observation.obs, robs)
                np.testing.assert_array_equal(out.reward, rrew)
                np.testing.assert_array_equal(out.discount, (~rterm).astype(np.float32))
            else:
                np.testing.assert_array_equal(out[0], robs)
    finally:
        env.close()
        ref.close()


def assert_rows_are_sync_trajectories(rows: dict[int, list], sync) -> None:
    """`rows[e]`: env e's observations in the order an async pool returned them, from its reset on, every action 2.
    They equal what the sync pool `sync` (same envs, same seed) gives for the same actions, one env at a time."""
    robs, _ = sync.reset()
    for e, seen in rows.items():
        np.testing.assert_array_equal(seen[0], robs[e])
        for k in range(1, len(seen)):
            o, *_ = sync.step(np.array([2]), env_id=np.array([e]))
            np.testing.assert_array_equal(seen[k], o[0])


def test_async_rows_belong_to_their_envs():
    """batch_size 2 of 4 envs: every env's rows, in the order the async pool returned them, are the trajectory it
    has in a sync pool (no env's result is mixed up with another's)."""

    env = pp.make(env_fn=lambda: Counter(length=1000), num_envs=4, batch_size=2, num_threads=4, seed=3)
    slow = pp.make(env_fn=lambda: Counter(length=1000), num_envs=4, num_threads=4, seed=3)
    try:
        env.async_reset()
        seen: dict[int, list[np.ndarray]] = {i: [] for i in range(4)}
        for _ in range(20):
            obs, rew, term, trunc, info = env.recv()
            assert len(info["env_id"]) == 2
            for row, e in enumerate(info["env_id"]):
                seen[int(e)].append(obs[row].copy())
            env.send(np.full(2, 2), info["env_id"])
        assert_rows_are_sync_trajectories(seen, slow)
    finally:
        env.close()
        slow.close()


def test_async_order_follows_worker_speed():
    env = pp.make(env_fn=SlowForFirstTwo, num_envs=4, batch_size=2, num_threads=4, seed=0)
    try:
        env.async_reset()
        env.recv()
        env.recv()  # both reset batches
        env.send(np.ones(4, np.int64), np.arange(4))
        _, _, _, _, info = env.recv()
        assert sorted(info["env_id"].tolist()) == [2, 3]
        _, _, _, _, info = env.recv()
        assert sorted(info["env_id"].tolist()) == [0, 1]
    finally:
        env.close()


class SlowForFirstTwo(Counter):
    """Counter whose envs 0 and 1 (first reset seeds 0 and 1 with seed=0) take 1 s a step."""

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self.delay = 1.0 if seed < 2 else 0.0
        return super().reset(seed=seed)


def test_env_exception_is_env_error_and_others_keep_running():
    env = pp.make(env_fn=lambda: Counter(length=100, boom=3), num_envs=4, num_threads=2)
    try:
        env.reset(seed=0)
        with pytest.raises(pp.EnvError) as exc:
            env.step(np.array([1, 3, 1, 1]))
        assert exc.value.env_ids == [1]
        assert "RuntimeError: boom" in exc.value.messages[0] and "Traceback" in exc.value.messages[0]
        assert exc.value.batch_kept is False
        obs, rew, term, trunc, info = env.step(np.array([2, 2, 2, 2]))
        # env 1 restarts (its reset observation, reward 0); the others stepped on
        assert info["elapsed_step"].tolist() == [2, 0, 2, 2]
        assert rew.tolist() == [1.0, 0.0, 1.0, 1.0]
    finally:
        env.close()


def test_env_exception_in_async_batch_keeps_the_batch():
    """An env that raises in an async pool: EnvError(batch_kept=True) at the recv that meets it; the failed env's
    row (its reset observation) and every other env still come back, whichever worker answers first."""
    env = pp.make(env_fn=lambda: Counter(length=100, boom=3), num_envs=4, batch_size=2, num_threads=2)
    try:
        env.async_reset()
        ids = np.concatenate([env.recv()[4]["env_id"], env.recv()[4]["env_id"]])
        env.send(np.array([3, 1, 1, 1]), ids)
        elapsed: dict[int, int] = {}

        def take():
            _, _, _, _, info = env.recv()
            elapsed.update(zip(info["env_id"].tolist(), info["elapsed_step"].tolist()))

        with pytest.raises(pp.EnvError) as exc:
            take()
            take()
        assert exc.value.env_ids == [int(ids[0])] and exc.value.batch_kept
        while len(elapsed) < 4:
            take()
        # the failed env was reset in place (elapsed 0), the others stepped once
        assert elapsed == {int(e): (0 if e == ids[0] else 1) for e in ids}
    finally:
        env.close()


def _worker_pids(env) -> list[int]:
    return env.engine.pids


def test_sigkilled_worker_is_env_error_and_reset_restarts_it():
    env = pp.make(env_fn=Counter, num_envs=4, num_threads=2)
    try:
        env.reset(seed=1)
        pids = _worker_pids(env)
        os.kill(pids[1], signal.SIGKILL)
        with pytest.raises(pp.EnvError) as exc:
            env.step(np.ones(4, np.int64))
        assert exc.value.env_ids == [2, 3] and "SIGKILL" in str(exc.value)
        with pytest.raises(pp.EnvError, match="reset them"):
            env.step(np.ones(4, np.int64))
        obs, _ = env.reset(seed=1)  # a new worker for envs 2, 3
        assert _worker_pids(env)[1] != pids[1] and _worker_pids(env)[0] == pids[0]
        ref = pp.make(env_fn=Counter, num_envs=4, num_threads=2)
        robs, _ = ref.reset(seed=1)
        np.testing.assert_array_equal(obs, robs)
        env.step(np.ones(4, np.int64))
        ref.close()
    finally:
        env.close()


def test_parent_sigkill_leaves_no_worker():
    r = run_python(
        """
        import os, sys, time
        sys.path.insert(0, os.getcwd())
        import parallel_pool as pp
        import gymnasium as gym
        env = pp.make("CartPole-v1", backend="python", num_envs=4, num_threads=3)
        env.reset()
        print(" ".join(map(str, env.engine.pids)), flush=True)
        os.kill(os.getpid(), 9)
        """,
        timeout=120,
    )
    pids = [int(p) for p in r.stdout.split()]
    assert len(pids) == 3, r.stderr
    deadline = time.monotonic() + 10
    alive = pids
    while alive and time.monotonic() < deadline:
        alive = [p for p in pids if _alive(p)]
        time.sleep(0.1)
    assert not alive, f"workers {alive} outlived their parent"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_close_with_work_in_flight_is_prompt_and_kills_workers():
    env = pp.make(env_fn=lambda: Counter(length=100, delay=5.0), num_envs=2, num_threads=2)
    env.reset()
    pids = _worker_pids(env)
    env.send(np.ones(2, np.int64), np.arange(2))
    t = time.monotonic()
    env.close()
    assert time.monotonic() - t < 3.0
    assert not any(_alive(p) for p in pids)
    with pytest.raises(RuntimeError, match="closed"):
        env.recv()
    env.close()  # idempotent


def test_ctrl_c_interrupts_a_slow_step_and_the_pool_stays_usable():
    env = pp.make(env_fn=lambda: Counter(length=100, delay=1.0), num_envs=2, num_threads=2)
    try:
        env.reset()
        timer = threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT))
        timer.start()
        t = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            env.step(np.ones(2, np.int64))
        assert time.monotonic() - t < 0.8
        # workers ignore SIGINT: the step in flight finishes and recv() returns it
        _, _, _, _, info = env.recv()
        assert info["elapsed_step"].tolist() == [1, 1]
    finally:
        env.close()


def test_startup_errors_are_one_clear_exception():
    lock = threading.Lock()
    with pytest.raises(TypeError, match="cannot be pickled"):
        pp.make(env_fn=lambda: (lock, Counter())[1], num_envs=2)
    parent = os.getpid()

    def only_here():
        if os.getpid() != parent:
            raise ImportError("no module named 'my_private_env'")
        return Counter()

    with pytest.raises(RuntimeError, match="could not build its envs") as exc:
        pp.make(env_fn=only_here, num_envs=2, num_threads=2)
    assert "my_private_env" in str(exc.value)


def test_async_send_to_the_last_batchs_env_ids_is_still_checked():
    """An async send to info["env_id"] of the last batch takes a path without the id checks (they hold by
    construction); sent twice, or changed in place, the same array is checked as any other."""
    env = pp.make(env_fn=lambda: Counter(length=1000), num_envs=4, batch_size=2, num_threads=2, seed=3)
    try:
        env.async_reset()
        *_, info = env.recv()
        ids = info["env_id"]
        env.send(np.ones(2, np.int64), ids)
        with pytest.raises(ValueError, match="already has an action pending"):
            env.send(np.ones(2, np.int64), ids)
        *_, info = env.recv()
        ids = info["env_id"]
        kept = ids.copy()
        ids[0] = 9
        with pytest.raises(IndexError, match="out of range"):
            env.send(np.ones(2, np.int64), ids)
        ids[:] = kept[0]
        with pytest.raises(ValueError, match="more than once"):
            env.send(np.ones(2, np.int64), ids)
        env.send(np.ones(2, np.int64), kept)  # nothing was sent by the refused calls
        seen = set()
        for _ in range(2):
            *_, info = env.recv()
            seen.update(info["env_id"].tolist())
        assert seen == {0, 1, 2, 3}
    finally:
        env.close()


def test_bad_input_raises_and_changes_nothing():
    env = pp.make(env_fn=Structured, num_envs=2)
    try:
        obs, _ = env.reset(seed=0)
        good = (np.array([1, 0]), np.zeros((2, 2), np.float32))
        with pytest.raises(ValueError, match="outside the valid range"):
            env.step((np.array([1, 2]), np.zeros((2, 2), np.float32)))
        with pytest.raises(ValueError, match="NaN"):
            env.step((np.array([1, 0]), np.full((2, 2), np.nan, np.float32)))
        with pytest.raises(ValueError, match="shape"):
            env.step((np.array([1, 0, 1]), np.zeros((2, 2), np.float32)))
        with pytest.raises(IndexError, match="out of range"):
            env.step(good, env_id=np.array([0, 5]))
        _, _, _, _, info = env.step(good)
        assert info["elapsed_step"].tolist() == [1, 1]
    finally:
        env.close()


def test_render_returns_each_envs_frame():
    pytest.importorskip("pygame")
    env = pp.make("CartPole-v1", backend="python", num_envs=3, render_mode="rgb_array", num_threads=2)
    ref = gym.make("CartPole-v1", render_mode="rgb_array")
    try:
        env.reset(seed=4)
        frames = env.render()
        assert frames.shape == (3, 400, 600, 3) and frames.dtype == np.uint8
        ref.reset(seed=6)
        np.testing.assert_array_equal(frames[2], ref.render())
        np.testing.assert_array_equal(env.render(env_ids=[2, 0])[0], frames[2])
    finally:
        env.close()
        ref.close()


@pytest.mark.filterwarnings("ignore:parallel_pool xla")  # float64 rewards pass through jax as float32
def test_xla_in_jit_equals_recv():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    a = pp.make("CartPole-v1", backend="python", num_envs=3, seed=2)
    b = pp.make("CartPole-v1", backend="python", num_envs=3, seed=2)
    try:
        handle, recv, send, step = a.xla()
        a.reset()
        b.reset()

        @jax.jit
        def rollout(handle):
            def body(h, _):
                h, (obs, rew, term, trunc, info) = step(h, jnp.ones(3, jnp.int32))
                return h, (obs, rew, term | trunc)

            return jax.lax.scan(body, handle, length=30)

        _, (obs, rew, done) = rollout(handle)
        for t in range(30):
            o, r, te, tr, _ = b.step(np.ones(3, np.int64))
            np.testing.assert_allclose(np.asarray(obs[t]), o)
            np.testing.assert_allclose(np.asarray(rew[t]), r)
            np.testing.assert_array_equal(np.asarray(done[t]), te | tr)
    finally:
        a.close()
        b.close()


@pytest.mark.filterwarnings("ignore:parallel_pool xla")
def test_xla_async_recv_send_in_scan():
    jax = pytest.importorskip("jax")
    env = pp.make(env_fn=Counter, num_envs=4, batch_size=2, num_threads=2, seed=1)
    ref = pp.make(env_fn=Counter, num_envs=4, num_threads=2, seed=1)
    try:
        handle, recv, send, _ = env.xla()
        env.async_reset()

        @jax.jit
        def rollout(handle):
            def body(h, _):
                h, (obs, rew, term, trunc, info) = recv(h)
                h = send(h, jax.numpy.full(2, 2, jax.numpy.int32), info["env_id"])
                return h, (obs, info["env_id"])

            return jax.lax.scan(body, handle, length=12)

        _, (obs, ids) = rollout(handle)
        rows: dict[int, list] = {i: [] for i in range(4)}
        for t in range(12):
            for o, e in zip(np.asarray(obs[t]), np.asarray(ids[t])):
                rows[int(e)].append(o)
        assert all(rows[e] for e in range(4)), "an env never came back"
        assert_rows_are_sync_trajectories(rows, ref)
    finally:
        env.close()
        ref.close()


class WithInfo(gym.Env):
    """Info entries of every kind: a float in reset and step infos, an int array and a bool only in step infos (a
    step-only key reads 0 in the reset rows, as SyncVectorEnv's zero-filled arrays), a string."""

    observation_space = spaces.Box(-10.0, 10.0, (1,), np.float32)
    action_space = spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t, self.x = 0, float(self.np_random.uniform(-1, 1))
        return np.array([self.x], np.float32), {"score": self.x, "label": "start"}

    def step(self, action):
        self.t += 1
        self.x += float(self.np_random.normal())
        info = {"score": self.x * 2, "hits": np.array([self.t, int(action)], np.int16), "won": self.x > 1}
        return np.array([self.x], np.float32), 1.0, abs(self.x) > 2.5, self.t >= 5, {**info, "label": "step"}


@pytest.mark.parametrize("mode", MODES)
def test_env_info_entries_are_carried_as_sync_vector_env_has_them(mode):
    env = pp.make(env_fn=WithInfo, num_envs=3, num_threads=2, autoreset_mode=mode)
    ref = SyncVectorEnv([WithInfo] * 3, autoreset_mode=autoreset_mode(mode))
    assert env.spec.config.info_keys == ("score", "hits", "won")
    assert [(a["name"], a["dtype"], a["shape"]) for a in env.spec.info_arrays] == [
        ("score", "float64", ()),
        ("hits", "int16", (2,)),
        ("won", "bool", ()),
    ]
    assert env.spec.observation_spec().hits.shape == (2,)
    try:
        _, info = env.reset(seed=2)
        _, rinfo = ref.reset(seed=2)
        np.testing.assert_array_equal(info["score"], rinfo["score"])
        assert info["label"].tolist() == ["start"] * 3 and "hits" in info  # a string: carried as an object array
        ref.action_space.seed(2)
        finals = 0
        for t in range(30):
            a = ref.action_space.sample()
            *_, term, trunc, info = env.step(a)
            *_, rinfo = ref.step(a)
            for key in ("score", "hits", "won"):
                want = rinfo.get(key, np.zeros_like(info[key]))  # a reset-only batch has no step keys
                np.testing.assert_array_equal(info[key], want, err_msg=f"{key} at step {t}")
            if mode == "same_step" and (term | trunc).any():
                for key in ("score", "hits", "won"):
                    np.testing.assert_array_equal(info["final_info"][key], rinfo["final_info"][key])
                finals += 1
            if mode == "disabled" and (term | trunc).any():
                env.reset(options={"reset_mask": term | trunc})
                ref.reset(options={"reset_mask": term | trunc})
        assert mode != "same_step" or finals > 0
    finally:
        env.close()
        ref.close()


def test_info_keys_can_be_chosen_or_declared():
    env = pp.make(env_fn=WithInfo, num_envs=2, num_threads=1, info_keys=["won"])
    _, info = env.reset()
    assert env.spec.config.info_keys == ("won",) and info["score"].dtype == np.float64  # no column, still carried
    env.close()
    env = pp.make(env_fn=WithInfo, num_envs=2, num_threads=1, info_keys={"late": ("float32", ()), "won": ("bool", ())})
    _, info = env.reset()
    assert info["late"].dtype == np.float32 and not info["late"].any()  # declared, absent so far: 0
    assert not info["_late"].any()  # and no row has it
    env.close()
    with pytest.raises(ValueError, match="label"):
        pp.make(env_fn=WithInfo, num_envs=2, info_keys=["label"])  # a string: not an array of numbers
    with pytest.raises(ValueError, match="own"):
        pp.make(env_fn=WithInfo, num_envs=2, info_keys={"env_id": ("int32", ())})
    with pytest.raises(TypeError, match="dtype, shape"):
        pp.make(env_fn=WithInfo, num_envs=2, info_keys={"x": "float32"})


def test_minigrid_id_carries_the_mission_string():
    """A Dict observation's string entry (MiniGrid's "mission") is carried as SyncVectorEnv hands it over: a tuple of
    one str per env."""
    pytest.importorskip("minigrid")
    env = pp.make("minigrid:MiniGrid-Empty-5x5-v0", num_envs=2, num_threads=1)
    ref = SyncVectorEnv([lambda: gym.make("MiniGrid-Empty-5x5-v0")] * 2)
    try:
        assert list(env.single_observation_space.spaces) == ["direction", "image", "mission"]
        obs, _ = env.reset(seed=3)
        robs, _ = ref.reset(seed=3)
        for t in range(20):
            for k in ("direction", "image"):
                np.testing.assert_array_equal(obs[k], robs[k], err_msg=f"{k} at step {t}")
            assert obs["mission"] == robs["mission"] == ("get to the green goal square",) * 2
            a = np.array([t % 3, 2])
            obs, *_ = env.step(a)
            robs, *_ = ref.step(a)
        with pytest.raises(ValueError, match="mission"):
            env.xla()
    finally:
        env.close()
        ref.close()


def test_adapters_run_unchanged_on_python_envs():
    """The SB3, Tianshou, ACME, rl_games and CleanRL adapters on Python envs (task id with backend="python", or a
    pool made with env_fn): terminal observations and truncation come through as they do from C++ envs."""
    pytest.importorskip("stable_baselines3")
    from parallel_pool.integrations.cleanrl import EpisodeStatistics
    from parallel_pool.integrations.sb3 import ParallelPoolVecEnv

    venv = ParallelPoolVecEnv(pp.make(env_fn=lambda: Counter(length=3), num_envs=2, autoreset_mode="same_step"))
    obs = venv.reset()
    assert obs.shape == (2, 2)
    for _ in range(3):
        venv.step_async(np.array([1, 1]))
        obs, rew, done, infos = venv.step_wait()
    assert done.all() and all(i["TimeLimit.truncated"] for i in infos)
    assert [i["terminal_observation"][1] for i in infos] == [3.0, 3.0] and obs[:, 1].tolist() == [0.0, 0.0]
    venv.close()

    tianshou = pytest.importorskip("parallel_pool.integrations.tianshou")
    tv = tianshou.ParallelPoolVectorEnv("CartPole-v1", num_envs=2, seed=0, backend="python")
    obs, _ = tv.reset()
    obs, rew, term, trunc, info = tv.step(np.array([0, 1]))
    assert obs.shape == (2, 4) and tv._tr.env.spec.backend == "python"
    tv.close()

    acme = pytest.importorskip("parallel_pool.integrations.acme")
    be = acme.BatchedEnvironment("CartPole-v1", num_envs=2, backend="python")
    ts = be.reset()
    ts = be.step(np.array([0, 1]))
    assert ts.observation.shape == (2, 4)
    be.close()

    rl_games = pytest.importorskip("parallel_pool.integrations.rl_games")
    rg = rl_games.ParallelPoolRLGamesEnv("parallel_pool", 2, env_name="CartPole-v1", backend="python", seed=0)
    obs = rg.reset()
    obs, rew, dones, infos = rg.step(np.array([0, 1]))
    assert np.asarray(obs).shape == (2, 4) and rg.pool.spec.backend == "python"
    rg.pool.close()

    stats = EpisodeStatistics(pp.make(env_fn=lambda: Counter(length=4), num_envs=2))
    stats.reset(seed=0)
    for _ in range(4):  # action 1: reward 0 and the position stays near its start, so step 4 truncates
        *_, info = stats.step(np.array([1, 1]))
    assert info["_episode"].all() and info["episode"]["l"].tolist() == [4, 4]
    assert stats.episode_count == 2
    stats.close()


def test_script_without_main_guard_and_env_class_in_main(tmp_path):
    """A user's script: its env class lives in __main__ and there is no `if __name__ == "__main__":` guard; the
    workers must neither run the script again nor fail to find the class."""
    import subprocess

    script = tmp_path / "train.py"
    script.write_text(
        "import numpy as np, gymnasium as gym, parallel_pool as pp\n"
        "print('script body ran', flush=True)\n"
        "class Mine(gym.Env):\n"
        "    observation_space = gym.spaces.Box(0, 9, (1,), np.float32)\n"
        "    action_space = gym.spaces.Discrete(2)\n"
        "    def reset(self, *, seed=None, options=None):\n"
        "        return np.zeros(1, np.float32), {}\n"
        "    def step(self, a):\n"
        "        return np.full(1, 7, np.float32), 1.0, False, False, {}\n"
        "env = pp.make(env_fn=Mine, num_envs=3, num_threads=2)\n"
        "env.reset()\n"
        "print(env.step(np.ones(3, np.int64))[0].ravel().tolist(), flush=True)\n"
        "env.close()\n"
    )
    r = subprocess.run(
        [sys.executable, str(script)],
        cwd=IMPORT_ROOT,
        env=dict(os.environ, PYTHONPATH=IMPORT_ROOT),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["script body ran", "[7.0, 7.0, 7.0]"], r.stdout


# ---- PettingZoo ParallelEnv: agents as player rows ----------------------------------------------------------------


def _tag_env_class():
    from pettingzoo import ParallelEnv

    class Tag(ParallelEnv):
        """Three agents on a line; an agent terminates past +3 and is truncated after `cycles` steps; each leaves
        env.agents when done, so rows of done agents are zero until the episode ends (no agent left)."""

        metadata = {"name": "tag_v0"}

        def __init__(self, cycles: int = 6):
            self.possible_agents = ["a", "b", "c"]
            self.cycles = cycles
            self._obs = spaces.Box(-100.0, 100.0, (2,), np.float32)
            self._act = spaces.Discrete(3)

        def observation_space(self, agent):
            return self._obs

        def action_space(self, agent):
            return self._act

        def reset(self, seed=None, options=None):
            if seed is not None or not hasattr(self, "rng"):
                self.rng = np.random.default_rng(seed)
            self.agents = list(self.possible_agents)
            self.pos = {a: float(self.rng.uniform(-1, 1)) for a in self.agents}
            self.t = 0
            return {a: self._o(a) for a in self.agents}, {a: {} for a in self.agents}

        def _o(self, a):
            return np.array([self.pos[a], self.t], np.float32)

        def step(self, actions):
            self.t += 1
            for a, act in actions.items():
                self.pos[a] += int(act) - 0.5 + float(self.rng.normal(0, 0.3))
            obs = {a: self._o(a) for a in actions}
            rewards = {a: self.pos[a] for a in actions}
            terms = {a: self.pos[a] > 3 for a in actions}
            truncs = {a: self.t >= self.cycles and not terms[a] for a in actions}
            self.agents = [a for a in self.agents if not (terms[a] or truncs[a])]
            return obs, rewards, terms, truncs, {a: {} for a in actions}

    return Tag


def test_pettingzoo_parallel_env_agents_are_player_rows():
    """Each env's agents are its player rows (players.env_id), stepped exactly as the ParallelEnv itself with the
    same seed and actions: observations (zero once an agent is done), rewards, per-agent end flags, and the env's
    terminated (every agent terminated) / truncated (the episode ended otherwise)."""
    pytest.importorskip("pettingzoo")
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    Tag = _tag_env_class()
    env = pp.make(env_fn=Tag, num_envs=2, num_threads=2, seed=4)
    refs = [Tag() for _ in range(2)]
    P = 3
    assert env.spec.max_num_players == P and env.spec.config.max_num_players == P
    assert env.single_observation_space == spaces.Box(-100.0, 100.0, (2,), np.float32)
    try:
        obs, info = env.reset()
        ref_obs = [r.reset(seed=4 + i)[0] for i, r in enumerate(refs)]
        assert obs.shape == (2 * P, 2) and info["players"]["env_id"].tolist() == [0, 0, 0, 1, 1, 1]
        flags = np.zeros((2, 2, P), dtype=bool)
        rng = np.random.default_rng(0)
        ends = {"terminated": 0, "truncated": 0}
        need_reset = [False, False]
        for t in range(40):
            for i, ro in enumerate(ref_obs):
                want = np.stack([ro.get(a, np.zeros(2, np.float32)) for a in refs[i].possible_agents])
                np.testing.assert_array_equal(obs[i * P : (i + 1) * P], want, err_msg=f"env {i} obs at step {t}")
            actions = rng.integers(0, 3, 2 * P)
            obs, reward, term, trunc, info = env.step(actions)
            for i, r in enumerate(refs):
                if need_reset[i]:  # next_step: this step reset the env
                    ref_obs[i], _ = r.reset()
                    flags[i] = False
                    need_reset[i] = False
                    assert not term[i] and not trunc[i] and not reward[i * P : (i + 1) * P].any()
                    continue
                live = list(r.agents)
                acts = {a: actions[i * P + j] for j, a in enumerate(r.possible_agents) if a in live}
                ro, rr, rt, rtr, _ = r.step(acts)
                for j, a in enumerate(r.possible_agents):
                    flags[i, 0, j] |= bool(rt.get(a, False))
                    flags[i, 1, j] |= bool(rtr.get(a, False))
                    assert reward[i * P + j] == rr.get(a, 0.0), f"env {i} agent {a} reward at step {t}"
                over = not r.agents
                want_term = over and bool(flags[i, 0].all())
                assert (bool(term[i]), bool(trunc[i])) == (want_term, over and not want_term), f"env {i} step {t}"
                np.testing.assert_array_equal(info["agent_terminated"][i * P : (i + 1) * P], flags[i, 0])
                np.testing.assert_array_equal(info["agent_truncated"][i * P : (i + 1) * P], flags[i, 1])
                ref_obs[i] = ro
                if over:
                    ends["terminated" if want_term else "truncated"] += 1
                    need_reset[i] = True
        assert ends["terminated"] and ends["truncated"], ends  # both kinds of episode end were compared
    finally:
        env.close()


def test_pettingzoo_agents_with_other_spaces_are_refused():
    pytest.importorskip("pettingzoo")
    Tag = _tag_env_class()

    class Mixed(Tag):
        def observation_space(self, agent):
            return spaces.Box(-1.0, 1.0, (3 if agent == "c" else 2,), np.float32)

    with pytest.raises(ValueError, match="agents \\['c'\\] have other spaces"):
        pp.make(env_fn=Mixed, num_envs=1)
    with pytest.raises(ValueError, match="same_step"):
        pp.make(env_fn=Tag, num_envs=1, autoreset_mode="same_step")


def test_docs_examples_run():
    """docs/python-envs.md's examples (registered ids, strings, a user's env class with per-env kwargs and info,
    set_config, snapshots) run as written, as a user's script: classes defined there travel to the workers."""
    import re
    from pathlib import Path

    pytest.importorskip("Box2D")
    pytest.importorskip("minigrid")
    pytest.importorskip("mujoco")
    doc = Path(__file__).resolve().parents[2] / "docs" / "python-envs.md"
    snippets = re.findall(r"<!-- run -->\n```python\n(.*?)```", doc.read_text(), flags=re.S)
    assert len(snippets) == 2
    for code in snippets:
        exec(compile(code, str(doc), "exec"), {"__name__": "__main__"})


def test_pettingzoo_env_reset_mask_and_dm_front_end():
    """disabled autoreset: reset_mask resets the masked envs' player rows only (per-player info too); the dm
    front-end gives a reward per player row and a step type per env."""
    pytest.importorskip("pettingzoo")
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    Tag = _tag_env_class()
    env = pp.make(env_fn=Tag, num_envs=2, num_threads=1, autoreset_mode="disabled", seed=0)
    try:
        env.reset()
        for _ in range(10):
            obs, _, term, trunc, info = env.step(np.array([2, 2, 2, 0, 0, 0]))  # env 0's agents run off: terminated
            if (term | trunc).any():
                break
        assert term[0] and info["agent_terminated"][:3].all()
        kept = obs[3:].copy()
        obs, info = env.reset(options={"reset_mask": term | trunc})
        assert info["_agent_terminated"].tolist() == np.repeat(term | trunc, 3).tolist()
        assert not info["agent_terminated"][:3].any() and (obs[:3, 1] == 0).all()  # env 0 at its first step again
        if not (term | trunc)[1]:
            np.testing.assert_array_equal(obs[3:], kept)  # env 1's rows unchanged
    finally:
        env.close()
    dm = pp.make(env_fn=Tag, num_envs=2, num_threads=1, env_type="dm")
    try:
        ts = dm.reset()
        assert ts.observation.obs.shape == (6, 2) and ts.observation.players.env_id.tolist() == [0, 0, 0, 1, 1, 1]
        ts = dm.step(np.zeros(6, dtype=np.int64))
        assert ts.reward.shape == (6,) and ts.step_type.shape == (2,)
    finally:
        dm.close()
