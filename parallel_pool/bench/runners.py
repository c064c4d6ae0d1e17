"""The runners: each builds one kind of vectorised env for a case, precomputes random actions, and steps it in a
tight loop that writes one `time.perf_counter()` timestamp after every call.

Every runner's timed loop has the same shape (one call, one timestamp), so the loop's own cost is the same for all.
A *call* is one `step(actions)` in sync mode, or one `recv()` + one `send(actions, env_id)` in async mode; it
advances `steps_per_call` env steps (num_envs in sync mode, batch_size in async mode).
"""

from __future__ import annotations

import functools
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from parallel_pool.bench.cases import TASKS

NUM_ACTION_BATCHES = 64  # distinct random action batches, cycled through


def random_actions(space, rows: int, seed: int = 0, batches: int = NUM_ACTION_BATCHES) -> list[np.ndarray]:
    """`batches` arrays of `rows` random actions from a single-env gymnasium space (Discrete or Box)."""
    import gymnasium as gym

    rng = np.random.default_rng(seed)
    if isinstance(space, gym.spaces.Discrete):
        lo = int(space.start)
        return [rng.integers(lo, lo + int(space.n), size=rows).astype(np.int32) for _ in range(batches)]
    if isinstance(space, gym.spaces.Box):
        low = np.where(np.isfinite(space.low), space.low, -1.0)
        high = np.where(np.isfinite(space.high), space.high, 1.0)
        return [rng.uniform(low, high, size=(rows,) + space.shape).astype(space.dtype) for _ in range(batches)]
    raise TypeError(f"the benchmark has no random actions for {space}")


class Runner:
    steps_per_call: int = 1

    def start(self) -> None:
        """Reset, and for async runners put every env in flight."""

    def loop(self, n: int, ts: list, offset: int = 0) -> None:
        """Make `n` calls; ts[0] = time before the first, ts[i + 1] = time after call i."""
        raise NotImplementedError

    def close(self) -> None:
        pass


class SyncStep(Runner):
    """Any vector env with `step(actions)`: ParallelPool/EnvPool sync, gymnasium vector envs, AtariVectorEnv."""

    def __init__(self, env, actions: list[np.ndarray], steps_per_call: int, reset: Callable[[], Any]):
        self.env, self.actions, self.steps_per_call, self._reset = env, actions, steps_per_call, reset

    def start(self) -> None:
        self._reset()

    def loop(self, n: int, ts: list, offset: int = 0) -> None:
        step, acts, k, pc = self.env.step, self.actions, len(self.actions), time.perf_counter
        ts[0] = pc()
        for i in range(n):
            step(acts[(offset + i) % k])
            ts[i + 1] = pc()

    def close(self) -> None:
        self.env.close()


class AsyncSendRecv(Runner):
    """EnvPool-style async: `recv()` the batch_size envs that finished first, `send` their next actions by env_id."""

    def __init__(self, env, actions: list[np.ndarray], batch_size: int):
        self.env, self.actions, self.steps_per_call = env, actions, batch_size

    def start(self) -> None:
        self.env.async_reset()

    def loop(self, n: int, ts: list, offset: int = 0) -> None:
        recv, send, acts, k, pc = self.env.recv, self.env.send, self.actions, len(self.actions), time.perf_counter
        ts[0] = pc()
        for i in range(n):
            info = recv()[4]
            send(acts[(offset + i) % k], info["env_id"])
            ts[i + 1] = pc()

    def close(self) -> None:
        self.env.close()


class AleAsync(Runner):
    """ale_py's AtariVectorEnv async: `send(actions)` goes to the envs of the last batch, then `recv()`."""

    def __init__(self, env, actions: list[np.ndarray], batch_size: int):
        self.env, self.actions, self.steps_per_call = env, actions, batch_size

    def start(self) -> None:
        self.env.reset(seed=0)  # returns the first batch_size envs

    def loop(self, n: int, ts: list, offset: int = 0) -> None:
        recv, send, acts, k, pc = self.env.recv, self.env.send, self.actions, len(self.actions), time.perf_counter
        ts[0] = pc()
        for i in range(n):
            send(acts[(offset + i) % k])
            recv()
            ts[i + 1] = pc()

    def close(self) -> None:
        self.env.close()


class ForLoop(Runner):
    """The plain baseline: a Python for-loop over single gymnasium envs, resetting an env when it is done."""

    def __init__(self, envs: list, actions: list[np.ndarray]):
        self.envs = envs
        # python scalars / rows, so the loop does no numpy indexing per env
        self.actions = [[a.item() if a.ndim == 0 else a for a in batch] for batch in actions]
        self.steps_per_call = len(envs)

    def start(self) -> None:
        for i, e in enumerate(self.envs):
            e.reset(seed=i)

    def loop(self, n: int, ts: list, offset: int = 0) -> None:
        envs, acts, k, pc = self.envs, self.actions, len(self.actions), time.perf_counter
        ts[0] = pc()
        for i in range(n):
            for env, a in zip(envs, acts[(offset + i) % k]):
                _, _, terminated, truncated, _ = env.step(a)
                if terminated or truncated:
                    env.reset()
            ts[i + 1] = pc()

    def close(self) -> None:
        for e in self.envs:
            e.close()


# ---- gymnasium env factories (module level, so AsyncVectorEnv can pickle them under any start method) ----------
def make_gym_env(task: str):
    warnings.filterwarnings("ignore")
    import gymnasium as gym

    t = TASKS[task]
    if t.gym_id.startswith("ALE/"):
        import ale_py

        gym.register_envs(ale_py)
        from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation

        # EnvPool's Pong-v5 defaults: no sticky actions, 4-frame skip with max-pooling, 30 no-ops, 84x84 gray,
        # 4 stacked frames, 27000 steps (108000 frames) per episode, no reward clipping, no episodic life
        env = gym.make(
            t.gym_id,
            frameskip=1,
            repeat_action_probability=0.0,
            full_action_space=False,
            max_num_frames_per_episode=108000,
        )
        env = AtariPreprocessing(
            env,
            noop_max=30,
            frame_skip=4,
            screen_size=84,
            terminal_on_life_loss=False,
            grayscale_obs=True,
            scale_obs=False,
        )
        return FrameStackObservation(env, 4)
    return gym.make(t.gym_id)


def _import_deps(runner: str, task: str) -> None:
    """Import what a runner needs (before the memory baseline is taken, so imports do not count as env memory)."""
    import gymnasium  # noqa: F401  (spaces for the actions, and every baseline)

    import parallel_pool  # noqa: F401

    if runner == "envpool":
        import envpool  # noqa: F401
    if runner in ("gym_sync", "gym_async", "for_loop", "gym_native", "ale_vector"):
        gym_id = TASKS[task].gym_id or ""
        if gym_id.startswith("ALE/"):
            import ale_py  # noqa: F401
            import ale_py.vector_env  # noqa: F401
        if gym_id.startswith(("Ant", "HalfCheetah")):
            import gymnasium.envs.mujoco  # noqa: F401
            import mujoco  # noqa: F401


def build(case: dict) -> Runner:
    """The runner for a case, created and ready for `start()`."""
    warnings.filterwarnings("ignore")
    task, runner, mode = TASKS[case["task"]], case["runner"], case["mode"]
    n, b, t = case["num_envs"], case["batch_size"], case["num_threads"]
    if runner in ("parallel_pool", "envpool"):
        if runner == "parallel_pool":
            import parallel_pool as lib
        else:
            import envpool as lib
        config = {**task.config, **case.get("config", {})}
        env = lib.make(task.id, env_type="gymnasium", num_envs=n, batch_size=b, num_threads=t, seed=0, **config)
        single = getattr(env, "single_action_space", None)
        single = env.action_space if single is None else single  # EnvPool's action_space is the single-env one
        if mode == "sync":
            return SyncStep(env, random_actions(single, n), n, env.reset)
        return AsyncSendRecv(env, random_actions(single, b), b)
    if runner == "ale_vector":
        from ale_py.vector_env import AtariVectorEnv

        game = task.gym_id.split("/")[1].split("-")[0].lower()
        env = AtariVectorEnv(
            game,
            num_envs=n,
            batch_size=b,
            num_threads=t,
            reward_clipping=False,
            repeat_action_probability=0.0,
            noop_max=30,
            frameskip=4,
            stack_num=4,
            max_num_frames_per_episode=108000,
            episodic_life=False,
            use_fire_reset=True,
        )
        actions = random_actions(env.single_action_space, b)
        if mode == "sync":
            return SyncStep(env, actions, n, functools.partial(env.reset, seed=0))
        return AleAsync(env, actions, b)
    if runner == "gym_native":
        import gymnasium as gym

        env = gym.make_vec(task.gym_id, num_envs=n, vectorization_mode="vector_entry_point")
        return SyncStep(env, random_actions(env.single_action_space, n), n, functools.partial(env.reset, seed=0))
    if runner in ("gym_sync", "gym_async"):
        from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv

        fns = [functools.partial(make_gym_env, case["task"]) for _ in range(n)]
        env = SyncVectorEnv(fns) if runner == "gym_sync" else AsyncVectorEnv(fns)
        return SyncStep(env, random_actions(env.single_action_space, n), n, functools.partial(env.reset, seed=0))
    if runner == "for_loop":
        envs = [make_gym_env(case["task"]) for _ in range(n)]
        return ForLoop(envs, random_actions(envs[0].action_space, n))
    raise ValueError(f"unknown runner {runner!r}")
