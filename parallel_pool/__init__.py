"""ParallelPool: a C++ engine that steps RL environments in parallel and hands them to Python in batches.

import parallel_pool
env = parallel_pool.make("CartPole-v1", env_type="gymnasium", num_envs=8)
obs, info = env.reset()
obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
"""

from __future__ import annotations

# typing's names stay out of the namespace (dir(parallel_pool) lists the API): the annotations are strings under
# `from __future__ import annotations`, so the names they use are imported for the type checker only
import typing as _typing

from parallel_pool._version import __version__

if _typing.TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Literal, TypeAlias

    from parallel_pool.frontends import DmPool, GymnasiumPool, GymPool
    from parallel_pool.multi_agent import AgentRowsEnv, ParallelEnvView, PettingZooPool


def _import_core():
    """Import the compiled engine; from a source checkout without it, say so instead of ModuleNotFoundError."""
    import importlib

    try:
        _core = importlib.import_module("parallel_pool._core")
    except ModuleNotFoundError as e:
        if e.name != "parallel_pool._core":
            raise
        from parallel_pool._source_tree import missing_core_error

        raise missing_core_error(__file__) from None
    return _core


EnvError = _import_core().EnvError
# Worker threads that several pools share: make(..., thread_pool=ThreadPool(n)) (docs/decisions.md, "Engine").
ThreadPool = _import_core().ThreadPool

from parallel_pool.registry import list_all_envs  # noqa: E402  (after the engine import check above)
from parallel_pool.spec import AutoresetMode, EnvSpec  # noqa: E402

Pool: TypeAlias = "GymnasiumPool | GymPool | DmPool | PettingZooPool"
"""What `make` returns: the pool of the front-end that `env_type` names."""

__all__ = [
    "__version__",
    "make",
    "make_gymnasium",
    "make_gym",
    "make_dm",
    "make_pettingzoo",
    "make_spec",
    "list_all_envs",
    "EnvSpec",
    "EnvError",
    "AutoresetMode",
    "ThreadPool",
    "Pool",
]

_ENV_TYPES = ("gymnasium", "gym", "dm", "pettingzoo")


_BACKENDS = ("cpp", "python")


def make_spec(
    task_id: str | None = None,
    *,
    env_fn: Callable[[], Any] | None = None,
    backend: str | None = None,
    render_mode: str | None = None,
    **kwargs: Any,
) -> EnvSpec:
    """The task's resolved config and its single-env spaces, without making a pool.

    A C++ task creates no env; a Python env (`backend="python"`, or `env_fn`) is built once here to read its spaces.

    Args:
        task_id: an id of `list_all_envs()`, or of gymnasium's registry (a Python env); None with `env_fn`.
        env_fn: a callable returning a `gymnasium.Env`, run in worker processes (instead of `task_id`).
        backend: None (C++ where the id has a port, else Python), "cpp" or "python".
        render_mode: None, or "rgb_array".
        **kwargs: config keys, as `make` takes them (num_envs, batch_size, seed, the task's own keys).

    Returns:
        The spec: `spec.config` holds every config key with its value, `spec.observation_space` and
        `spec.action_space` one env's spaces.

    Raises:
        ValueError: an unknown `backend` or task id, both `task_id` and `env_fn`, a config key the task does not
            have or a value out of range (the message names the key and what it allows).
        TypeError: neither `task_id` nor `env_fn`.

    Example:
        ```python
        spec = parallel_pool.make_spec("Pong-v5")
        spec.config.frame_skip  # 4
        ```
    """
    if backend not in (None, *_BACKENDS):
        raise ValueError(
            f"backend must be one of {list(_BACKENDS)} (or None: C++ where the id has a port), got {backend!r}"
        )
    if env_fn is not None:
        if task_id is not None:
            raise ValueError("give either a task_id or env_fn, not both")
        if backend == "cpp":
            raise ValueError("env_fn runs a Python env: backend must be 'python' (or left out)")
        backend = "python"
    elif task_id is None:
        raise TypeError("make() needs a task_id (see list_all_envs()) or env_fn=<callable returning a gymnasium.Env>")
    if backend is None:
        from parallel_pool.python_env import in_gymnasium_registry
        from parallel_pool.registry import has_task

        cpp = not isinstance(task_id, str) or has_task(task_id) or not in_gymnasium_registry(task_id)
        backend = "cpp" if cpp else "python"
    if backend == "python":
        from parallel_pool.python_env import PythonEnvSpec

        return PythonEnvSpec(task_id, env_fn, render_mode, **kwargs)
    assert task_id is not None
    return EnvSpec(task_id, **kwargs)


@_typing.overload
def make(
    task_id: str | None = None,
    env_type: Literal["gymnasium"] = "gymnasium",
    render_mode: str | None = None,
    **kwargs: Any,
) -> GymnasiumPool: ...
@_typing.overload
def make(task_id: str | None, env_type: Literal["gym"], render_mode: str | None = None, **kwargs: Any) -> GymPool: ...
@_typing.overload
def make(task_id: str | None, env_type: Literal["dm"], render_mode: str | None = None, **kwargs: Any) -> DmPool: ...
@_typing.overload
def make(
    task_id: str | None, env_type: Literal["pettingzoo"], render_mode: str | None = None, **kwargs: Any
) -> PettingZooPool: ...
@_typing.overload
def make(task_id: str | None, env_type: str, render_mode: str | None = None, **kwargs: Any) -> Pool: ...


def make(
    task_id: str | None = None,
    env_type: str = "gymnasium",
    render_mode: str | None = None,
    *,
    env_fn: Callable[[], Any] | None = None,
    backend: str | None = None,
    thread_pool: Any = None,
    **kwargs: Any,
) -> Pool:
    """Create a pool of `num_envs` envs of `task_id`, stepped in parallel.

    A task with a C++ port steps in C++ on the pool's worker threads; a gymnasium env written in Python (an id of
    gymnasium's registry without a C++ port, e.g. "Taxi-v4", or `env_fn`) steps in worker processes
    (docs/python-envs.md).

    Common config keys (EnvPool's names and defaults), passed as keyword arguments:

    - `num_envs=1`: how many envs the pool holds.
    - `batch_size=0`: how many envs each `recv()`/`step()` returns; 0 means num_envs (sync). Less than num_envs
      makes an async pool: `recv()` returns whichever batch_size envs finish first, `info["env_id"]` says which.
    - `num_threads=0`: worker threads; 0 means min(batch_size, cores - 1), as the caller steps envs while it waits
      (ViZDoom, whose step waits on its engine process: min(batch_size, cores)).
    - `seed=42`: env i is seeded with seed + i (64-bit, >= 0); None draws a random seed.
    - `max_episode_steps`: time limit; truncated = elapsed_step >= max_episode_steps (and not terminated).
    - `thread_affinity_offset=-1`: pin worker i to core offset + i; -1 does not pin.
    - `max_num_players=1`: players per env (multi-player envs: one row per player, `info["players"]["env_id"]`).
    - `autoreset_mode="next_step"`: how a finished env restarts, as a string or gymnasium's `AutoresetMode`
      (`env.autoreset_mode` is gymnasium's enum member): "next_step" (EnvPool's and
      gymnasium's default: the next step returns the reset observation), "same_step" (reset inside the step;
      `info["final_obs"]` / `info["final_info"]` hold the last ones) or "disabled" (`reset(options={"reset_mask":
      mask})` yourself).
    - `reward_threshold`: the task's solved score (None where gymnasium has none).
    - `gym_reset_return_info=True` (EnvPool's): accepted; reset always returns (obs, info).

    Plus the task's own keys: `make_spec(task_id).config` lists them all with their defaults.

    Args:
        task_id: an id of `list_all_envs()`, or of gymnasium's registry (a Python env); None with `env_fn`.
        env_type: the front-end. "gymnasium": a `gymnasium.vector.VectorEnv` (batched spaces, `_key` info masks);
            "gym": EnvPool's gym API (a `gymnasium.Env` with `is_vector_env=True`, single-env spaces); "dm": a
            batched `dm_env.Environment` (a TimeStep whose observation is EnvPool's State namedtuple); "pettingzoo":
            a batched PettingZoo ParallelEnv (dicts agent -> one row per env; `make_pettingzoo` has its other views).
        render_mode: None, or "rgb_array" to enable `env.render(env_ids=None)` -> uint8 (n, H, W, 3).
        env_fn: a callable returning a `gymnasium.Env`, run in worker processes (instead of `task_id`).
        backend: None (C++ where the id has a port, else Python), "cpp" or "python" (e.g. CartPole-v1 both ways);
            `env.spec.backend` and `repr(env)` say which ran.
        thread_pool: a `ThreadPool` whose threads this pool shares with the other pools made with it (a training
            and an evaluation pool, several tasks) instead of starting its own; num_threads is then the
            ThreadPool's. `ThreadPool.close()` refuses while pools use it.
        **kwargs: config keys (above, and the task's own).

    Returns:
        The pool of the front-end `env_type` names: a `GymnasiumPool`, `GymPool`, `DmPool` or `PettingZooPool`.

    Raises:
        ValueError: an unknown `env_type`, `backend` or task id, a config key the task does not have or a value out
            of range (the message names the key and what it allows).
        TypeError: neither `task_id` nor `env_fn`.

    Example:
        ```python
        env = parallel_pool.make("CartPole-v1", num_envs=8, batch_size=4)
        obs, info = env.reset()
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        ```
    """
    from parallel_pool.frontends import DmPool, GymnasiumPool, GymPool

    if env_type not in _ENV_TYPES:
        raise ValueError(f"env_type must be one of {list(_ENV_TYPES)}, got {env_type!r}")
    spec = make_spec(task_id, env_fn=env_fn, backend=backend, render_mode=render_mode, **kwargs)
    if env_type == "gym":
        return GymPool(spec, render_mode=render_mode, thread_pool=thread_pool)
    if env_type == "dm":
        return DmPool(spec, render_mode=render_mode, thread_pool=thread_pool)
    if env_type == "pettingzoo":
        from parallel_pool.multi_agent import PettingZooPool

        return PettingZooPool(spec, render_mode=render_mode, thread_pool=thread_pool)
    return GymnasiumPool(spec, render_mode=render_mode, thread_pool=thread_pool)


def make_gymnasium(task_id: str | None = None, **kwargs: Any) -> GymnasiumPool:
    """`make(task_id, env_type="gymnasium", **kwargs)`: a `GymnasiumPool`.

    Args:
        task_id: as `make`'s.
        **kwargs: `make`'s other arguments and config keys.

    Returns:
        The pool.
    """
    return make(task_id, env_type="gymnasium", **kwargs)


def make_gym(task_id: str | None = None, **kwargs: Any) -> GymPool:
    """`make(task_id, env_type="gym", **kwargs)`: a `GymPool`.

    Args:
        task_id: as `make`'s.
        **kwargs: `make`'s other arguments and config keys.

    Returns:
        The pool.
    """
    return make(task_id, env_type="gym", **kwargs)


def make_dm(task_id: str | None = None, **kwargs: Any) -> DmPool:
    """`make(task_id, env_type="dm", **kwargs)`: a `DmPool`.

    Args:
        task_id: as `make`'s.
        **kwargs: `make`'s other arguments and config keys.

    Returns:
        The pool.
    """
    return make(task_id, env_type="dm", **kwargs)


@_typing.overload
def make_pettingzoo(
    task_id: str | None = None, *, view: Literal["batched"] = "batched", **kwargs: Any
) -> PettingZooPool: ...
@_typing.overload
def make_pettingzoo(task_id: str | None = None, *, view: Literal["single"], **kwargs: Any) -> ParallelEnvView: ...
@_typing.overload
def make_pettingzoo(task_id: str | None = None, *, view: Literal["agent_rows"], **kwargs: Any) -> AgentRowsEnv: ...


def make_pettingzoo(
    task_id: str | None = None, *, view: str = "batched", **kwargs: Any
) -> PettingZooPool | ParallelEnvView | AgentRowsEnv:
    """A multi-player pool with PettingZoo's API (docs/multi-agent.md).

    Agents: a PettingZoo env's `possible_agents` (`env_fn=` a ParallelEnv, or an AEC env PettingZoo can convert), or a
    C++ multi-player env's players "player_0", ... (e.g. "MultiDuel-v1" with `max_num_players=2`), or the agents its
    spec names, each with its own spaces (the MPE family: mpe2's agents, e.g. "adversary_0", "agent_0").

    Args:
        task_id: as `make`'s (None with `env_fn`).
        view: "batched": a `PettingZooPool` (`make(..., env_type="pettingzoo")`), dicts agent -> one row per env;
            "single": one env as a plain `pettingzoo.ParallelEnv` (`ParallelEnvView`; num_envs must be 1), for
            PettingZoo's own tests and single-env code; "agent_rows": a gymnasium VectorEnv with a row per agent of
            every env (`AgentRowsEnv`), for a policy shared by all agents; the one view that takes
            `autoreset_mode="same_step"` (its rows have gymnasium's `final_obs` / `final_info`).
        **kwargs: `make`'s other arguments and config keys.

    Returns:
        The view.

    Raises:
        ValueError: an unknown `view`; "single" with num_envs other than 1; "agent_rows" with an async pool; what
            `make` raises.

    Example:
        ```python
        env = parallel_pool.make_pettingzoo("MultiDuel-v1", num_envs=4, max_num_players=2)
        obs, infos = env.reset()  # obs["player_0"].shape == (4, 12, 84, 84)
        ```
    """
    from parallel_pool.multi_agent import VIEWS, AgentRowsEnv, ParallelEnvView, PettingZooPool

    if view not in VIEWS:
        raise ValueError(f"view must be one of {list(VIEWS)}, got {view!r}")
    if view == "single" and kwargs.get("num_envs", 1) != 1:
        raise ValueError(
            f"view='single' is one env (a plain pettingzoo.ParallelEnv): num_envs must be 1, got {kwargs['num_envs']!r}"
        )
    if view == "agent_rows":  # its pool may autoreset in the same step (its rows have final observations)
        render_mode, thread_pool = kwargs.pop("render_mode", None), kwargs.pop("thread_pool", None)
        spec = make_spec(task_id, render_mode=render_mode, **kwargs)
        pool = PettingZooPool(spec, render_mode, thread_pool, agent_rows=True)
    else:
        pool = make(task_id, env_type="pettingzoo", **kwargs)
    try:
        if view == "single":
            return ParallelEnvView(pool)
        if view == "agent_rows":
            return AgentRowsEnv(pool)
    except Exception:
        pool.close()
        raise
    return pool


# gymnasium's registry gets every id as ParallelPool/<id> (gymnasium.make_vec / gymnasium.make reach the pool)
def _register_in_gymnasium() -> None:
    from parallel_pool.gymnasium_registry import register_envs

    register_envs()


_register_in_gymnasium()

# `annotations` is the __future__ import's flag, not part of the API (the compiler read it already): out of dir()
del annotations
