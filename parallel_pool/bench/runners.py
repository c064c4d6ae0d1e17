"""The one factory of contenders: `build(case)` makes whatever a case names (our pool, EnvPool, a gymnasium vector
env over the peer env, ale_py's vector env or bare emulator, dm_control's loop, a framework adapter, a jitted
env.xla() scan), precomputes random actions, and returns a `Runner`.

Every runner's timed loop has the same shape (one call, one `time.perf_counter()` timestamp after it), and
`parallel_pool.bench.measure` is the one place that drives it, so the loop's own cost is the same for all. A *call*
is one `step(actions)` in sync mode, or one `recv()` + one `send(actions, env_id)` in async mode (other runners:
their own unit, e.g. one jitted scan of `scan` batches); it advances `steps_per_call` env steps.

A case is a plain dict (JSON, for the worker process): task, runner, mode, num_envs, batch_size, num_threads, and
optionally `config` (extra make() keys, ParallelPool and EnvPool alike), `call` (how a pool's sync step is made:
"step", "step_arrays", "send_recv", or "xla" for a jitted scan of `scan` batches), `binary_actions` (actions drawn
from {0, 1}: ViZDoom's buttons) and `autoreset_mode` (gymnasium vector envs).
"""

from __future__ import annotations

import functools
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from parallel_pool.bench import peers
from parallel_pool.bench.cases import TASKS

NUM_ACTION_BATCHES = 64  # distinct random action batches, cycled through


def random_actions(
    space: Any, rows: int, seed: int = 0, batches: int = NUM_ACTION_BATCHES, binary: bool = False
) -> list[np.ndarray]:
    """`batches` arrays of `rows` random actions from a single-env gymnasium space (Discrete, MultiDiscrete or Box);
    `binary`: each entry 0 or 1 (a Box of buttons)."""
    import gymnasium as gym

    rng = np.random.default_rng(seed)
    if isinstance(space, gym.spaces.Discrete):
        lo = int(space.start)
        return [rng.integers(lo, lo + int(space.n), size=rows).astype(np.int32) for _ in range(batches)]
    if isinstance(space, gym.spaces.MultiDiscrete):  # mpe2's agents as one gymnasium env: one move per agent
        start = np.asarray(space.start)
        return [
            (start + rng.integers(0, space.nvec, size=(rows,) + space.shape)).astype(space.dtype)
            for _ in range(batches)
        ]
    if isinstance(space, gym.spaces.Box):
        if binary:
            return [rng.integers(0, 2, size=(rows,) + space.shape).astype(space.dtype) for _ in range(batches)]
        low = np.where(np.isfinite(space.low), space.low, -1.0)
        high = np.where(np.isfinite(space.high), space.high, 1.0)
        return [rng.uniform(low, high, size=(rows,) + space.shape).astype(space.dtype) for _ in range(batches)]
    raise TypeError(f"the benchmark has no random actions for {space}")


class Runner:
    """A contender, ready to be timed: `start()`, then `loop()` as often as the measurement wants, then `close()`."""

    steps_per_call: int = 1

    def start(self) -> None:
        """Reset, and for async runners put every env in flight."""

    def loop(self, n: int, ts: Any, offset: int = 0) -> None:
        """Make `n` calls; ts[0] = time before the first, ts[i + 1] = time after call i."""
        raise NotImplementedError

    def close(self) -> None:
        pass


class Calls(Runner):
    """One callable per call, given the next action batch: `step(actions)` of any vector env (ParallelPool and
    EnvPool sync, gymnasium's vector envs, AtariVectorEnv, the adapters) or a runner's own unit of work."""

    def __init__(
        self,
        step: Callable[[Any], Any],
        actions: Sequence[Any],
        steps_per_call: int,
        start: Callable[[], Any],
        close: Callable[[], Any],
    ):
        self._step, self.actions, self.steps_per_call, self._start, self._close = (
            step,
            actions,
            steps_per_call,
            start,
            close,
        )

    def start(self) -> None:
        self._start()

    def loop(self, n: int, ts: Any, offset: int = 0) -> None:
        step, acts, k, pc = self._step, self.actions, len(self.actions), time.perf_counter
        ts[0] = pc()
        for i in range(n):
            step(acts[(offset + i) % k])
            ts[i + 1] = pc()

    def close(self) -> None:
        self._close()


class AsyncSendRecv(Runner):
    """EnvPool-style async: `recv()` the batch_size envs that finished first, `send` their next actions by env_id."""

    def __init__(self, env: Any, actions: list[np.ndarray], batch_size: int):
        self.env, self.actions, self.steps_per_call = env, actions, batch_size

    def start(self) -> None:
        self.env.async_reset()

    def loop(self, n: int, ts: Any, offset: int = 0) -> None:
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

    def __init__(self, env: Any, actions: list[np.ndarray], batch_size: int):
        self.env, self.actions, self.steps_per_call = env, actions, batch_size

    def start(self) -> None:
        self.env.reset(seed=0)  # returns the first batch_size envs

    def loop(self, n: int, ts: Any, offset: int = 0) -> None:
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

    def loop(self, n: int, ts: Any, offset: int = 0) -> None:
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


def _import_deps(case: dict) -> None:
    """Import what a runner needs (before the memory baseline is taken, so imports do not count as env memory)."""
    import gymnasium  # noqa: F401  (spaces for the actions, and every baseline)

    import parallel_pool  # noqa: F401

    if case["runner"] == "envpool":
        import envpool  # noqa: F401
    if case.get("peer") == "mpe2":
        import mpe2  # noqa: F401
    if case["runner"] == "supersuit":
        import supersuit  # noqa: F401
    if case.get("call") == "xla":
        import jax  # noqa: F401
    if case["runner"] == "ale_vector":
        import ale_py.vector_env  # noqa: F401


def _make_pool(case: dict, lib_name: str) -> Any:
    import importlib

    lib = importlib.import_module(lib_name)  # parallel_pool or envpool: the same make() call, EnvPool's API
    n, b, t = case["num_envs"], case["batch_size"], case["num_threads"]
    if "env_fn" in case:  # an env written in Python (peers.PYTHON_ENVS), in our pool's worker processes
        fn = peers.PYTHON_ENVS[case["env_fn"]][0]
        return lib.make(env_fn=fn, num_envs=n, batch_size=b, num_threads=t, seed=0)
    task = TASKS.get(case["task"])  # a throughput task's own config (cases.py), then the case's
    config = {**(task.config if task is not None else {}), **case.get("config", {})}
    return lib.make(case["task"], env_type="gymnasium", num_envs=n, batch_size=b, num_threads=t, seed=0, **config)


class PoolsAsync(Runner):
    """Several async pools driven by one caller, in turn: one call = a recv() and a send() on each pool (a training
    and an evaluation pool, several tasks). Their threads are private or one shared ThreadPool (the `pools` case
    key)."""

    def __init__(self, envs: list, actions: list[np.ndarray], batch_size: int, close: Callable[[], Any]):
        self.envs, self.actions, self.steps_per_call, self._close = envs, actions, batch_size * len(envs), close

    def start(self) -> None:
        for env in self.envs:
            env.async_reset()

    def loop(self, n: int, ts: Any, offset: int = 0) -> None:
        ends = [(env.recv, env.send) for env in self.envs]
        acts, k, pc = self.actions, len(self.actions), time.perf_counter
        ts[0] = pc()
        for i in range(n):
            a = acts[(offset + i) % k]
            for recv, send in ends:
                send(a, recv()[4]["env_id"])
            ts[i + 1] = pc()

    def close(self) -> None:
        for env in self.envs:
            env.close()
        self._close()


def _pools(case: dict) -> Runner:
    """`pools`: {"count": k, "share": "shared" | "private"}: k async ParallelPool pools of the case's size, on one
    ThreadPool(num_threads) or each on num_threads threads of its own."""
    import parallel_pool

    spec = case["pools"]
    shared = spec["share"] == "shared"
    tp = parallel_pool.ThreadPool(case["num_threads"]) if shared else None
    task = TASKS.get(case["task"])
    config = {**(task.config if task is not None else {}), **case.get("config", {})}
    n, b = case["num_envs"], case["batch_size"]
    envs = [
        parallel_pool.make(
            case["task"],
            num_envs=n,
            batch_size=b,
            seed=i * n,
            **({"thread_pool": tp} if shared else {"num_threads": case["num_threads"]}),
            **config,
        )
        for i in range(int(spec["count"]))
    ]
    actions = random_actions(envs[0].single_action_space, b)
    return PoolsAsync(envs, actions, b, (lambda: tp.close()) if tp is not None else (lambda: None))


def _pool(case: dict) -> Runner:
    """ParallelPool or EnvPool (the same make() call, EnvPool's API)."""
    if "pools" in case:
        return _pools(case)
    env = _make_pool(case, case["runner"])
    n, b, call = case["num_envs"], case["batch_size"], case.get("call", "step")
    single = getattr(env, "single_action_space", None)
    single = env.action_space if single is None else single  # EnvPool's action_space is the single-env one
    binary = bool(case.get("binary_actions"))
    p = getattr(env, "max_num_players", 1)  # a multi-player env's actions: one per player row (still env steps)
    if call == "xla":
        return _xla_scan(env, random_actions(single, b * p, binary=binary)[0], case)
    if case["mode"] == "async":
        return AsyncSendRecv(env, random_actions(single, b * p, binary=binary), b)
    actions = random_actions(single, n * p, binary=binary)
    if call == "send_recv":
        send, recv = env.send, env.recv

        def send_recv(a: np.ndarray) -> None:
            send(a)
            recv()

        return Calls(send_recv, actions, n, env.reset, env.close)
    step = {"step": env.step, "step_arrays": getattr(env, "step_arrays", None)}.get(call)
    if step is None:
        raise ValueError(f"a {case['runner']} pool has no call {call!r}")
    return Calls(step, actions, n, env.reset, env.close)


def _scanned(body: Callable[[Any, Any], tuple[Any, None]], handle: Any, length: int, spc: int, reset: Any, close: Any):
    """A runner whose call is one jitted `lax.scan` of `body` over `length` batches, the handle carried over between
    calls; `start()` resets and makes one call, so compilation is never timed."""
    import jax

    run = jax.jit(lambda h: jax.lax.scan(body, h, None, length=length)[0])
    state = {"h": handle}

    def one(_a: Any) -> None:
        state["h"] = jax.block_until_ready(run(state["h"]))

    def start() -> None:
        reset()
        one(None)

    return Calls(one, [None], spc, start, close)


def _xla_scan(env: Any, action: np.ndarray, case: dict) -> Runner:
    """One call = one jitted `lax.scan` of `scan` batches through env.xla(): `step` in sync mode, recv then send to
    the received env ids in async mode (the same action every batch; the handle carries over between calls)."""
    import jax.numpy as jnp

    handle, recv, send, step = env.xla()
    act = jnp.asarray(action)
    length, async_ = int(case["scan"]), case["mode"] == "async"

    def body(h: Any, _: Any) -> tuple[Any, None]:
        if async_:
            h, s = recv(h)
            return send(h, act, s[-1]["env_id"]), None
        h, _s = step(h, act)
        return h, None

    spc = length * (case["batch_size"] if async_ else case["num_envs"])
    return _scanned(body, handle, length, spc, env.async_reset if async_ else env.reset, env.close)


def _ale_xla_scan(env: Any, action: np.ndarray, case: dict) -> Runner:
    """ale_py's AtariVectorEnv.xla(): one call = one jitted `lax.scan` of `scan` xla steps (each sends the actions
    to the envs of the last batch and receives the next batch: batch_size env steps, in sync and async mode alike).
    Needs jax and chex (`pip install "ale-py[xla]"`)."""
    import jax.numpy as jnp

    handle, _reset, step = env.xla()
    act = jnp.asarray(action, dtype=jnp.int32)
    length = int(case["scan"])

    def body(h: Any, _: Any) -> tuple[Any, None]:
        return step(h, act)[0], None

    return _scanned(body, handle, length, length * case["batch_size"], functools.partial(env.reset, seed=0), env.close)


def _ale_raw(case: dict) -> Runner:
    """One ALEInterface, 4 frames per step: the emulator alone (the physical limit of ale_py's own loop)."""
    import ale_py
    from ale_py import roms

    import parallel_pool

    ale = ale_py.ALEInterface()
    ale.setLoggerMode(ale_py.LoggerMode.Error)
    ale.setFloat("repeat_action_probability", 0.0)
    rom = roms.get_rom_path(parallel_pool.make_spec(case["task"]).config_dict["task"])
    if rom is None:
        raise ValueError(f"ale_py has no ROM for {case['task']}")
    ale.loadROM(rom)
    legal = ale.getMinimalActionSet()
    rng = np.random.default_rng(0)
    actions = [legal[i] for i in rng.integers(0, len(legal), size=4096)]
    act, game_over, reset = ale.act, ale.game_over, ale.reset_game

    def step(a: Any) -> None:
        for _ in range(4):
            act(a)
        if game_over():
            reset()

    return Calls(step, actions, 1, reset, lambda: None)


def _dm_control(case: dict) -> Runner:
    """dm_control's own env for the task, stepped one step per call in Python (how dm_control runs)."""
    env = peers.make_dm_control_env(case["task"])
    spec = env.action_spec()
    rng = np.random.default_rng(0)
    actions = list(rng.uniform(spec.minimum, spec.maximum, (NUM_ACTION_BATCHES, *spec.shape)))
    env_step, env_reset = env.step, env.reset

    def step(a: np.ndarray) -> None:
        if env_step(a).last():
            env_reset()

    return Calls(step, actions, 1, env.reset, env.close)


def _adapter(case: dict) -> Runner:
    """The framework adapters (and the frameworks' own in-process vector envs over gymnasium's env), one batched
    step per call; Tianshou's loop also resets the envs that finished, as Tianshou's collector does."""
    import parallel_pool

    runner, task, n = case["runner"], case["task"], case["num_envs"]
    actions = random_actions(parallel_pool.make_spec(task).action_space, n)  # the same for every contender
    if runner == "translator":
        from parallel_pool.translate import Translator

        tr = Translator.make(
            task, num_envs=n, final_obs_key="terminal_observation", truncated_key="TimeLimit.truncated"
        )
        return Calls(tr.step, actions, n, tr.reset, tr.close)
    if runner in ("sb3", "sb3_dummy"):
        if runner == "sb3":
            from parallel_pool.integrations.sb3 import ParallelPoolVecEnv

            venv: Any = ParallelPoolVecEnv(task, num_envs=n)
        else:
            from stable_baselines3.common.vec_env import DummyVecEnv

            venv = DummyVecEnv([functools.partial(peers.make_env, _peer(task))] * n)
        return Calls(venv.step, actions, n, venv.reset, venv.close)
    if runner in ("tianshou", "tianshou_dummy"):
        if runner == "tianshou":
            from parallel_pool.integrations.tianshou import ParallelPoolVectorEnv

            venv = ParallelPoolVectorEnv(task, num_envs=n)
        else:
            from tianshou.env import DummyVectorEnv

            venv = DummyVectorEnv([functools.partial(peers.make_env, _peer(task))] * n)
        ids = np.arange(n)

        def step(a: np.ndarray) -> None:
            out = venv.step(a, ids)
            done = np.flatnonzero(out[2] | out[3])
            if len(done):
                venv.reset(done)

        return Calls(step, actions, n, venv.reset, venv.close)
    raise ValueError(f"unknown runner {runner!r}")


ADAPTER_RUNNERS = ("translator", "sb3", "sb3_dummy", "tianshou", "tianshou_dummy")


def _mpe2(case: dict) -> Runner:
    """mpe2's env of an MPE id, n envs, one call = one step of each (n env steps, every agent acting): "gym_async":
    AsyncVectorEnv over the env as one gymnasium.Env (peers.mpe2_joint_env), a process per env; "supersuit":
    SuperSuit's agents-as-rows vector env (pettingzoo_env_to_vec_env_v1 + concat_vec_envs_v1) on num_threads
    processes (0: the cores)."""
    runner, n = case["runner"], case["num_envs"]
    if runner == "gym_async":
        from gymnasium.vector import AsyncVectorEnv

        env = AsyncVectorEnv([functools.partial(peers.mpe2_joint_env, case["task"])] * n, shared_memory=True)
        actions = random_actions(env.single_action_space, n)
        return Calls(env.step, actions, n, functools.partial(env.reset, seed=0), env.close)
    if runner == "supersuit":
        import os

        import supersuit

        procs = min(n, case["num_threads"] or len(os.sched_getaffinity(0)))
        rows = supersuit.pettingzoo_env_to_vec_env_v1(peers.mpe2_parallel_env(case["task"]))
        env = supersuit.concat_vec_envs_v1(rows, n, num_cpus=procs, base_class="gymnasium")
        actions = random_actions(env.action_space, env.num_envs)  # a row per agent of every env
        return Calls(env.step, actions, n, functools.partial(env.reset, seed=0), env.close)
    raise ValueError(f"runner {runner!r} does not run mpe2's envs")


def _peer(task: str) -> peers.Peer:
    peer, why_not = peers.gymnasium_peer(task)
    if peer is None:
        raise ValueError(f"no gymnasium peer for {task}: {why_not}")
    return peer


def _ale_vector(case: dict) -> Runner:
    """ale_py's AtariVectorEnv with our config for the task (its own and the case's) at the case's sizes: the same
    preprocessing as ours."""
    task, n, b, t = case["task"], case["num_envs"], case["batch_size"], case["num_threads"]
    config = {**TASKS[task].config, **case.get("config", {})} if task in TASKS else dict(case.get("config", {}))
    env = peers.make_atari_vector_env(task, num_envs=n, batch_size=b, num_threads=t, **config)
    if case.get("call") == "xla":
        return _ale_xla_scan(env, random_actions(env.single_action_space, b)[0], case)
    actions = random_actions(env.single_action_space, b)
    if case["mode"] == "sync":
        return Calls(env.step, actions, n, functools.partial(env.reset, seed=0), env.close)
    return AleAsync(env, actions, b)


def _python_env(case: dict) -> Runner:
    """An env written in Python: gymnasium's AsyncVectorEnv (shared memory where its observation allows) or the
    plain loop over its builder."""
    runner, n = case["runner"], case["num_envs"]
    fn = peers.PYTHON_ENVS[case["env_fn"]][0]
    if runner == "gym_async":
        from gymnasium.vector import AsyncVectorEnv

        env = AsyncVectorEnv([fn] * n, shared_memory=case["env_fn"] not in peers.PICKLED_OBS)
        actions = random_actions(env.single_action_space, n)
        return Calls(env.step, actions, n, functools.partial(env.reset, seed=0), env.close)
    if runner == "for_loop":
        envs = [fn() for _ in range(n)]
        return ForLoop(envs, random_actions(envs[0].action_space, n))
    raise ValueError(f"runner {runner!r} does not run Python envs")


def build(case: dict) -> Runner:
    """The runner for a case, created and ready for `start()`."""
    warnings.filterwarnings("ignore")
    runner, task, n = case["runner"], case["task"], case["num_envs"]
    env: Any  # each branch's own vector env
    if runner in ("parallel_pool", "envpool"):
        return _pool(case)
    if runner == "noop":  # the harness alone: what the timed loop itself costs per call
        return Calls(lambda _a: None, [None], 0, lambda: None, lambda: None)
    if runner == "ale_raw":
        return _ale_raw(case)
    if runner == "dm_control":
        return _dm_control(case)
    if runner in ADAPTER_RUNNERS:
        return _adapter(case)
    if runner == "ale_vector":
        return _ale_vector(case)
    if case.get("peer") == "mpe2":  # mpe2's env of an MPE id, in AsyncVectorEnv or SuperSuit's vector env
        return _mpe2(case)
    if "env_fn" in case:
        return _python_env(case)
    peer = _peer(task)
    if runner == "gym_native":
        import gymnasium as gym

        env = gym.make_vec(peer.gym_id, num_envs=n, vectorization_mode="vector_entry_point")
        actions = random_actions(env.single_action_space, n)
        return Calls(env.step, actions, n, functools.partial(env.reset, seed=0), env.close)
    if runner in ("gym_sync", "gym_async"):
        from gymnasium.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv

        fns = [functools.partial(peers.make_env, peer) for _ in range(n)]
        kind = SyncVectorEnv if runner == "gym_sync" else AsyncVectorEnv
        env = kind(fns, autoreset_mode=AutoresetMode(case.get("autoreset_mode", "NextStep")))
        actions = random_actions(env.single_action_space, n)
        return Calls(env.step, actions, n, functools.partial(env.reset, seed=0), env.close)
    if runner == "for_loop":
        envs = [peers.make_env(peer) for _ in range(n)]
        return ForLoop(envs, random_actions(envs[0].action_space, n))
    raise ValueError(f"unknown runner {runner!r}")
