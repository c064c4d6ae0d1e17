"""ParallelPool: a C++ engine that steps RL environments in parallel and hands them to Python in batches.

    import parallel_pool
    env = parallel_pool.make("CartPole-v1", env_type="gymnasium", num_envs=8)
    obs, info = env.reset()
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
"""

from __future__ import annotations

from typing import Any

from parallel_pool._version import __version__


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

from parallel_pool.registry import list_all_envs
from parallel_pool.spec import EnvSpec

__all__ = ["__version__", "make", "make_gymnasium", "make_gym", "make_dm", "make_spec", "list_all_envs", "EnvSpec", "EnvError"]

_ENV_TYPES = ("gymnasium", "gym", "dm")


def make_spec(task_id: str, **kwargs: Any) -> EnvSpec:
    """The task's resolved config and its single-env spaces, without creating any env."""
    return EnvSpec(task_id, **kwargs)


def make(task_id: str, env_type: str = "gymnasium", **kwargs: Any):
    """Create a pool of `num_envs` envs of `task_id`.

    env_type: "gymnasium" (a gymnasium.vector.VectorEnv), "gym" (EnvPool 1.x's gym API) or "dm" (dm_env).
    Common kwargs (EnvPool's names): num_envs=1, batch_size=0 (= num_envs: sync), num_threads=0,
    seed=42, max_episode_steps, thread_affinity_offset=-1, max_num_players=1,
    autoreset_mode="next_step" | "same_step" | "disabled"; plus the task's own keys.
    """
    from parallel_pool.frontends import DmPool, GymnasiumPool, GymPool

    if env_type not in _ENV_TYPES:
        raise ValueError(f"env_type must be one of {list(_ENV_TYPES)}, got {env_type!r}")
    spec = EnvSpec(task_id, **kwargs)
    cls = {"gymnasium": GymnasiumPool, "gym": GymPool, "dm": DmPool}[env_type]
    return cls(spec)


def make_gymnasium(task_id: str, **kwargs: Any):
    return make(task_id, env_type="gymnasium", **kwargs)


def make_gym(task_id: str, **kwargs: Any):
    return make(task_id, env_type="gym", **kwargs)


def make_dm(task_id: str, **kwargs: Any):
    return make(task_id, env_type="dm", **kwargs)
