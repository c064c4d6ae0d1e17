"""The EnvPool face's spec: our EnvSpec with EnvPool's conventions on top (config layout, dm spec structure,
insertion-ordered Dict spaces, repr, class names per env family)."""

from __future__ import annotations

import functools
import os
import pprint
from collections import namedtuple
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

import parallel_pool
from parallel_pool.envpool.python import protocol
from parallel_pool.pool import check_seed
from parallel_pool.spec import EnvSpec as _OurSpec
from parallel_pool.spec import array_bounds, array_space

# EnvPool's common config keys, in the order its specs list them (the task's own keys follow)
_COMMON = (
    "num_envs",
    "batch_size",
    "num_threads",
    "max_num_players",
    "thread_affinity_offset",
    "base_path",
    "seed",
    "env_seed",
    "gym_reset_return_info",
    "max_episode_steps",
)
_OURS = "autoreset_mode"
_DISCRETE_LIMIT = 2**20  # EnvPool's: an integer range this wide or wider is a Box, not Discrete


def family_name(env_class: str) -> str:
    """EnvPool's class-name stem of an env type ("CartPole", "Atari", "GymAnt", "DmcCheetah"), as in
    `CartPoleGymnasiumEnvPool`: our MuJoCo gym types carry the version ("Ant-v4"), phys2d ones a folder."""
    if "/" in env_class:
        env_class = env_class.rsplit("/", 1)[1]
    if "-v" in env_class:
        return "Gym" + env_class.split("-v", 1)[0]
    return env_class


@functools.cache
def family_class(base: type, env_class: str, suffix: str) -> type:
    """A subclass of `base` named as EnvPool names its class for this env type (e.g. `AtariGymnasiumEnvPool`), so
    type(env).__name__ and repr() read as EnvPool's. One class per (base, type), made once."""
    return type(family_name(env_class) + suffix, (base,), {"__module__": base.__module__})


def seed_list(seed: Any) -> list[int] | None:
    """EnvPool's `seed` given as one seed per env (a sequence or 1-d array), as a list; None for an int seed."""
    if isinstance(seed, np.ndarray) or (isinstance(seed, Sequence) and not isinstance(seed, (str, bytes))):
        return [int(s) for s in np.asarray(seed).reshape(-1)]
    return None


def _array_bounds(a: dict) -> tuple[Any, Any]:
    """An array's bounds as EnvPool's specs give them: scalars where every element has the same bound, the full
    range of an integer dtype where none is declared. Unbounded floats are -inf/inf: EnvPool writes
    numeric_limits::min() (the smallest positive double, 2.2e-308) there, which excludes every negative value."""
    dtype = np.dtype(a["dtype"])
    if a["low"]:
        low, high = array_bounds(a, "low"), array_bounds(a, "high")
        low = low.flat[0] if low.size and np.all(low == low.flat[0]) else low
        high = high.flat[0] if high.size and np.all(high == high.flat[0]) else high
        return low, high
    if dtype == np.bool_:
        return False, True
    if np.issubdtype(dtype, np.integer):
        return np.iinfo(dtype).min, np.iinfo(dtype).max
    return -np.inf, np.inf


def dm_array_spec(a: dict, name: str, is_action: bool) -> Any:
    """EnvPool's dm spec of one array: DiscreteArray for a one-element integer range starting at 0 (below 2**20
    values), else a BoundedArray (EnvPool gives bounds to every array)."""
    from dm_env import specs

    dtype = np.dtype(a["dtype"])
    low, high = _array_bounds(a)
    one = int(np.prod(a["shape"], dtype=np.int64)) == 1
    if one and np.ndim(low) == 0 and np.isfinite(low) and np.isfinite(high) and float(low) == int(low) == 0:
        if int(high) < _DISCRETE_LIMIT and float(high) == int(high) and (is_action or dtype.kind in "iu"):
            return specs.DiscreteArray(int(high) + 1, dtype=dtype if dtype.kind in "iu" else np.int32, name=name)
    return specs.BoundedArray(tuple(a["shape"]), dtype, low, high, name=name)


class FaceSpec(_OurSpec, protocol.EnvSpec):
    """`parallel_pool.envpool.make_spec(...)`: the task's spec with EnvPool's face.

    `config` is EnvPool's namedtuple (its common keys first, in its order, then the task's keys, then ours such as
    autoreset_mode); `observation_space`/`action_space` are single-env; `observation_spec()` is EnvPool's `State`
    (env_id, players, observation keys, info keys); repr as EnvPool's (`AtariEnvSpec(num_envs=1, ...)`)."""

    def __init__(self, task_id: str, gym_reset_return_info: bool = True, **kwargs: Any):
        env_seed = kwargs.pop("env_seed", None)
        per_env = seed_list(kwargs.get("seed"))
        if per_env is not None:
            if env_seed is not None:
                raise ValueError("give either seed as one seed per env or env_seed, not both")
            env_seed = per_env
            kwargs.pop("seed")
        super().__init__(task_id, **kwargs)
        if env_seed is not None:
            given, env_seed, n = env_seed, seed_list(env_seed), self.config_dict["num_envs"]
            if env_seed is None or len(env_seed) != n:
                raise ValueError(f"env_seed must be one seed per env ({n}), got {given!r}")
            check_seed(env_seed, "env_seed")
        self.env_seed: list[int] = env_seed or []
        ours = self.config_dict
        values: dict[str, Any] = {k: ours[k] for k in _COMMON if k in ours}
        values["base_path"] = ours.get("base_path", os.path.dirname(parallel_pool.__file__))
        values["env_seed"] = list(self.env_seed)
        values["gym_reset_return_info"] = bool(gym_reset_return_info)
        values = {k: values[k] for k in _COMMON}
        if self.reward_threshold is not None:
            values["reward_threshold"] = self.reward_threshold
        values.update((k, v) for k, v in ours.items() if k not in values and k not in ("reward_threshold", _OURS))
        values[_OURS] = ours[_OURS]  # our common key, after EnvPool's keys
        config_type = namedtuple("Config", list(values))  # type: ignore[misc]
        self.config = cast(Any, config_type(**values))

    @property
    def observation_arrays(self) -> list[dict]:
        """The observation arrays with EnvPool's own bounds where an env declares them (Box2D's float32 min/max):
        the engine's spec holds the reference package's bounds, which the main API shows, and EnvPool's beside them,
        so that every space and dm spec of this face is made from these arrays alone."""
        return [
            dict(a, low=a["envpool_low"], high=a["envpool_high"]) if a.get("envpool_low") else a
            for a in super().observation_arrays
        ]

    @property
    def observation_space(self) -> Any:
        return self._space(self.observation_arrays, "obs")

    @property
    def action_space(self) -> Any:
        return self._space(self.action_arrays, "action")

    @staticmethod
    def _space(arrays: list[dict], single: str) -> Any:
        """One space, or a Dict in the engine's key order (EnvPool fills its Dict key by key; gymnasium's Dict
        constructor would sort the keys)."""
        import gymnasium

        if len(arrays) == 1 and arrays[0]["name"] == single:
            return array_space(arrays[0])
        space = gymnasium.spaces.Dict()
        for a in arrays:
            space[a["name"]] = array_space(a)
        return space

    @property
    def gymnasium_observation_space(self) -> Any:
        return self.observation_space

    @property
    def gymnasium_action_space(self) -> Any:
        return self.action_space

    @property
    def state_fields(self) -> list[str]:
        """The fields of EnvPool's dm `State`: env_id, players, the observation keys, the info keys."""
        return ["env_id", "players"] + [a["name"] for a in self.observation_arrays + self.info_arrays]

    def observation_spec(self) -> Any:
        from dm_env import specs

        State = namedtuple("State", self.state_fields)  # type: ignore[misc]
        Players = namedtuple("players", ["env_id"])  # type: ignore[name-match]  # EnvPool's type name
        ids = specs.BoundedArray((), np.int32, np.iinfo(np.int32).min, np.iinfo(np.int32).max, name="env_id")
        values: dict[str, Any] = {"env_id": ids, "players": Players(ids)}
        for a in self.observation_arrays + self.info_arrays:
            values[a["name"]] = dm_array_spec(a, a["name"], is_action=False)
        return State(**values)

    def action_spec(self) -> Any:
        if len(self.action_arrays) == 1:
            return dm_array_spec(self.action_arrays[0], self.action_arrays[0]["name"], is_action=True)
        Action = namedtuple("Action", [a["name"] for a in self.action_arrays])  # type: ignore[misc]
        return Action(*(dm_array_spec(a, a["name"], is_action=True) for a in self.action_arrays))

    def __repr__(self) -> str:
        return type(self).__name__ + pprint.pformat(self.config)[len("Config") :]

    __str__ = __repr__


def make_face_spec(task_id: str, **kwargs: Any) -> FaceSpec:
    """A FaceSpec of the class EnvPool names for this task's env family (e.g. `CartPoleEnvSpec`)."""
    from parallel_pool.registry import env_class_of

    cls = family_class(FaceSpec, env_class_of(task_id), "EnvSpec")
    return cls(task_id, **kwargs)
