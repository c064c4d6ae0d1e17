"""EnvSpec: a task's resolved config and its arrays, as gymnasium spaces and dm_env specs."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np

from parallel_pool import _core
from parallel_pool.registry import resolve_config


def _bounds(a: dict, which: str) -> np.ndarray:
    vals = a[which]
    dtype = np.dtype(a["dtype"])
    fill = -np.inf if which == "low" else np.inf
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        fill = info.min if which == "low" else info.max
    if not vals:
        arr = np.full(a["shape"], fill, dtype=np.float64)
    elif len(vals) == 1:
        arr = np.full(a["shape"], vals[0], dtype=np.float64)
    else:
        arr = np.asarray(vals, dtype=np.float64).reshape(a["shape"])
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        arr = np.clip(arr, info.min, info.max)
    return arr.astype(dtype) if not np.issubdtype(dtype, np.floating) else arr


def is_discrete(a: dict) -> bool:
    return np.issubdtype(np.dtype(a["dtype"]), np.integer) and a["shape"] == () and len(a["low"]) == 1


def array_space(a: dict):
    import gymnasium as gym

    dtype = np.dtype(a["dtype"])
    if is_discrete(a):
        lo, hi = int(a["low"][0]), int(a["high"][0])
        return gym.spaces.Discrete(hi - lo + 1, start=lo)
    low, high = _bounds(a, "low"), _bounds(a, "high")
    if np.issubdtype(dtype, np.floating):
        low, high = low.astype(dtype), high.astype(dtype)
    return gym.spaces.Box(low=low, high=high, shape=a["shape"], dtype=dtype)


def _group_space(arrays: list[dict], single_name: str):
    import gymnasium as gym

    if len(arrays) == 1 and arrays[0]["name"] == single_name:
        return array_space(arrays[0])
    return gym.spaces.Dict({a["name"]: array_space(a) for a in arrays})


def array_dm_spec(a: dict, name: str | None = None):
    from dm_env import specs

    dtype = np.dtype(a["dtype"])
    name = name or a["name"]
    if is_discrete(a) and int(a["low"][0]) == 0:
        return specs.DiscreteArray(int(a["high"][0]) + 1, dtype=dtype, name=name)
    if a["low"]:
        return specs.BoundedArray(a["shape"], dtype, _bounds(a, "low"), _bounds(a, "high"), name=name)
    return specs.Array(a["shape"], dtype, name=name)


class EnvSpec:
    """What `make_spec(task_id, **kwargs)` returns: the task's config and its spaces.

    `observation_space` / `action_space` are single-env gymnasium spaces (as EnvPool's spec has them);
    the gymnasium front-end's own `observation_space` is batched, as gymnasium's vector convention says.
    """

    def __init__(self, task_id: str, **kwargs: Any):
        self.task_id = task_id
        self.env_type, config = resolve_config(task_id, kwargs)
        self._config_dict = config
        Config = namedtuple("Config", list(config))
        self.config = Config(**config)
        self._raw = _core.spec(self.env_type, config)
        self.reward_threshold = config.get("reward_threshold")
        self.max_episode_steps = config["max_episode_steps"]
        self.max_num_players = self._raw["max_players"]

    @property
    def observation_arrays(self) -> list[dict]:
        return self._raw["obs"]

    @property
    def action_arrays(self) -> list[dict]:
        return self._raw["action"]

    @property
    def info_arrays(self) -> list[dict]:
        return self._raw["info"]

    @property
    def observation_space(self):
        return _group_space(self._raw["obs"], "obs")

    @property
    def action_space(self):
        return _group_space(self._raw["action"], "action")

    def observation_spec(self):
        if len(self._raw["obs"]) == 1 and self._raw["obs"][0]["name"] == "obs":
            return array_dm_spec(self._raw["obs"][0])
        return {a["name"]: array_dm_spec(a) for a in self._raw["obs"]}

    def action_spec(self):
        if len(self._raw["action"]) == 1:
            return array_dm_spec(self._raw["action"][0])
        return {a["name"]: array_dm_spec(a) for a in self._raw["action"]}

    def __repr__(self) -> str:
        return f"EnvSpec({self.task_id!r}, {self.config})"
