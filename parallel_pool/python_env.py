"""Envs written in Python: their spec (`PythonEnvSpec`) and the picklable callable that builds them in a worker.

A Python env is a `gymnasium.Env` built by a callable `env_fn` (a class, a closure from the user's script, or
`gymnasium.make` of a registered id). Its spaces become the engine's named arrays, exactly as a C++ env's spec
declares them: Box / Discrete / MultiDiscrete / MultiBinary are one array each ("obs", "action"); a Dict or Tuple of
them is one array per key ("obs:<key>"; a Tuple's keys are "0", "1", ..., and it is presented as a gymnasium Dict
with those keys, the batch's own structure). `process_engine.ProcessEngine` runs the envs.
"""

from __future__ import annotations

import numbers
from collections import namedtuple
from collections.abc import Callable
from typing import Any

import numpy as np

from parallel_pool.spec import AutoresetMode, EnvSpec

__all__ = ["PythonEnvSpec", "MakeRegistered", "in_gymnasium_registry"]

NO_LIMIT = 2**31 - 1  # max_episode_steps of an env without a time limit (elapsed_step is int32)
_COMMON_KEYS = ("num_envs", "batch_size", "num_threads", "seed", "max_episode_steps", "autoreset_mode")


class MakeRegistered:
    """`gymnasium.make` of a registered id, picklable: it carries gymnasium's EnvSpec (entry point and kwargs), so a
    worker process builds the env without importing the package that registered it (e.g. minigrid)."""

    def __init__(self, env_spec: Any, kwargs: dict[str, Any]):
        self.env_spec = env_spec
        self.kwargs = kwargs

    def __call__(self) -> Any:
        import gymnasium

        return gymnasium.make(self.env_spec, **self.kwargs)

    def __repr__(self) -> str:
        return f"gymnasium.make({self.env_spec.id!r}, **{self.kwargs!r})"


def gymnasium_env_spec(task_id: str) -> Any:
    """gymnasium's EnvSpec of `task_id` ("module:Id" imports module first, as gymnasium.make does), or None."""
    import gymnasium

    if ":" in task_id:
        import importlib

        module, task_id = task_id.split(":", 1)
        importlib.import_module(module)
    return gymnasium.registry.get(task_id)


def in_gymnasium_registry(task_id: str) -> bool:
    try:
        return gymnasium_env_spec(task_id) is not None
    except ImportError:
        return False


def _leaf_array(name: str, space: Any) -> dict[str, Any]:
    """One array dict (the C++ spec's form: name, dtype, shape, low, high, per_player) for a leaf space."""
    from gymnasium import spaces

    def flat(x: Any) -> list[float]:
        x = np.asarray(x, dtype=np.float64).ravel()
        return [float(x[0])] if x.size and np.all(x == x[0]) else [float(v) for v in x]

    if isinstance(space, spaces.Discrete):
        lo = int(space.start)
        return dict(name=name, dtype=str(space.dtype), shape=(), low=[lo], high=[lo + int(space.n) - 1])
    if isinstance(space, spaces.MultiDiscrete):
        low, high = space.start, space.start + space.nvec - 1
    elif isinstance(space, spaces.MultiBinary):
        low, high = np.zeros(space.shape), np.ones(space.shape)
    elif isinstance(space, spaces.Box):
        low, high = space.low, space.high
    else:
        raise ValueError(
            f"space {name!r} is a {type(space).__name__}; Python envs in the pool take Box, Discrete, MultiDiscrete "
            "and MultiBinary spaces, or one Dict/Tuple of them"
        )
    return dict(
        name=name, dtype=str(space.dtype), shape=tuple(space.shape), low=flat(low), high=flat(high), per_player=True
    )


def space_arrays(space: Any, single_name: str) -> tuple[list[dict[str, Any]], Any]:
    """(the arrays of `space`, the gymnasium space the batch presents: a Tuple becomes a Dict keyed "0", "1", ...)"""
    from gymnasium import spaces

    if isinstance(space, (spaces.Dict, spaces.Tuple)):
        items: list[tuple[Any, Any]] = (
            list(space.spaces.items()) if isinstance(space, spaces.Dict) else list(enumerate(space.spaces))
        )
        arrays_only = (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary, spaces.Dict, spaces.Tuple)
        text = [k for k, sub in items if not isinstance(sub, arrays_only)]
        if text and isinstance(space, spaces.Dict):
            # a string per env is not an array (MiniGrid's "mission"): the batch leaves such keys out, as its docs say
            import warnings

            warnings.warn(
                f"the {single_name} keys {text} are not arrays (e.g. Text): the pool's batches leave them out",
                stacklevel=4,
            )
            items = [(k, sub) for k, sub in items if k not in text]
        arrays = []
        for key, sub in items:
            if isinstance(sub, (spaces.Dict, spaces.Tuple)):
                raise ValueError(
                    f"nested {type(sub).__name__} space under {key!r}: one level of Dict/Tuple is supported"
                )
            arrays.append(_leaf_array(str(key), sub))
        presented = space if isinstance(space, spaces.Dict) and not text else spaces.Dict({str(k): s for k, s in items})
        return arrays, presented
    leaf = _leaf_array(single_name, space)
    leaf["per_player"] = True
    return [leaf], space


def _int_key(key: str, value: Any, low: int) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise TypeError(f"config key {key!r} must be an int, got {value!r}")
    if value < low:
        raise ValueError(f"{key} must be >= {low}, got {value}")
    return int(value)


class PythonEnvSpec(EnvSpec):
    """The spec of a pool of Python envs: what `EnvSpec` says of a C++ task (config, arrays, gymnasium spaces, dm
    specs), read from one env built by `env_fn` in this process; `env_fn` (cloudpickled) builds the envs in the
    workers. `backend` is "python"; `env_class` is "python".

    Config keys: num_envs, batch_size (0: num_envs), num_threads (worker processes; 0: min(num_envs, cores)),
    seed (env i's first reset gets seed + i), max_episode_steps (default: the env's own time limit), autoreset_mode.
    For a registered id, other keys go to gymnasium.make."""

    backend = "python"

    def __init__(self, task_id: str | None, env_fn: Callable[[], Any] | None, render_mode: str | None, **kwargs: Any):
        import os

        from parallel_pool.registry import _random_seed

        common = {k: kwargs.pop(k) for k in _COMMON_KEYS if k in kwargs}
        if env_fn is None:
            assert task_id is not None
            gym_spec = gymnasium_env_spec(task_id)
            if gym_spec is None:
                raise ValueError(f"unknown gymnasium id {task_id!r}")
            if render_mode is not None:
                kwargs["render_mode"] = render_mode
            if "max_episode_steps" in common:
                kwargs["max_episode_steps"] = _int_key("max_episode_steps", common["max_episode_steps"], 1)
            env_fn = MakeRegistered(gym_spec, kwargs)
            task_id = gym_spec.id
        elif kwargs:
            raise ValueError(f"unknown config keys {sorted(kwargs)} for an env_fn; valid keys: {list(_COMMON_KEYS)}")
        elif not callable(env_fn):
            raise TypeError(f"env_fn must be a callable returning a gymnasium.Env, got {env_fn!r}")
        self.env_fn = env_fn
        env = env_fn()  # the spaces, as gymnasium's AsyncVectorEnv reads them: from one env built here
        try:
            obs_arrays, self._obs_space = space_arrays(env.observation_space, "obs")
            act_arrays, self._act_space = space_arrays(env.action_space, "action")
            env_gym_spec = getattr(env, "spec", None)
            own_limit = getattr(env_gym_spec, "max_episode_steps", None)
            threshold = getattr(env_gym_spec, "reward_threshold", None)
            self.env_metadata = dict(getattr(env, "metadata", {}) or {})
        finally:
            env.close()
        if task_id is None:
            task_id = getattr(env_gym_spec, "id", None) or getattr(env_fn, "__qualname__", type(env).__name__)
        self.task_id = self.id = str(task_id)
        self.env_class = "python"
        n = _int_key("num_envs", common.get("num_envs", 1), 1)
        batch = _int_key("batch_size", common.get("batch_size", 0) or 0, 0) or n
        if batch > n:
            raise ValueError(f"batch_size ({batch}) must be <= num_envs ({n})")
        threads = _int_key("num_threads", common.get("num_threads", 0) or 0, 0)
        seed = common.get("seed", 42)
        seed = _random_seed() if seed is None else _int_key("seed", seed, 0)
        limit = _int_key("max_episode_steps", common.get("max_episode_steps", own_limit or NO_LIMIT), 1)
        mode = common.get("autoreset_mode", "next_step")
        modes = [m.value for m in AutoresetMode]
        if mode not in modes:
            raise ValueError(f"config key 'autoreset_mode' must be one of {modes}, got {mode!r}")
        self.config_dict: dict[str, Any] = {
            "num_envs": n,
            "batch_size": batch,
            "num_threads": min(threads or min(n, os.cpu_count() or 1), n),
            "seed": seed,
            "max_episode_steps": limit,
            "autoreset_mode": AutoresetMode(mode).value,
            "max_num_players": 1,
            "reward_threshold": threshold,
            **kwargs,
        }
        Config = namedtuple("Config", list(self.config_dict))  # type: ignore[misc]
        self.config = Config(**self.config_dict)  # type: ignore[assignment]
        self._raw = {"obs": obs_arrays, "action": act_arrays, "info": [], "max_players": 1, "reward_dtype": "float64"}
        self.reward_threshold = threshold
        self.max_episode_steps = limit
        self.max_num_players = 1
        self.autoreset_mode = AutoresetMode(mode)
        self.render_mode = render_mode

    def with_config(self, **changes: Any) -> PythonEnvSpec:
        """This spec with some config keys changed (a Ray actor's share of the envs: num_envs, batch_size, seed)."""
        import copy

        spec = copy.copy(self)
        spec.config_dict = dict(self.config_dict, **changes)
        if "num_envs" in changes:
            n = spec.config_dict["num_envs"]
            spec.config_dict["num_threads"] = min(spec.config_dict["num_threads"], n)
        Config = namedtuple("Config", list(spec.config_dict))  # type: ignore[misc]
        spec.config = Config(**spec.config_dict)  # type: ignore[assignment]
        return spec

    @property
    def observation_space(self) -> Any:
        return self._obs_space

    @property
    def action_space(self) -> Any:
        return self._act_space

    def __repr__(self) -> str:
        return f"PythonEnvSpec({self.task_id!r}, backend='python', env_fn={self.env_fn!r}, {self.config})"
