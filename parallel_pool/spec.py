"""EnvSpec: a task's resolved config and its arrays, as gymnasium spaces and dm_env specs."""

from __future__ import annotations

from collections import namedtuple
from typing import Any, NamedTuple

import numpy as np
from gymnasium.vector import AutoresetMode

from parallel_pool import _core
from parallel_pool.registry import AUTORESET_MODES, autoreset_mode_name, env_config, resolve_config


def array_bounds(a: dict, which: str) -> np.ndarray:
    """An array dict's "low" or "high" bounds as an array of its shape and dtype (float64 for floats).

    Clipped to an integer dtype's range; none given: the dtype's range, or -inf / inf for floats.
    """
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


def _low_high(a: dict) -> tuple[Any, Any]:
    """An array's bounds as scalars or arrays (None, None when it declares none)."""
    if not a["low"]:
        return None, None
    return array_bounds(a, "low"), array_bounds(a, "high")


def is_discrete(a: dict) -> bool:
    """Whether the engine's array description `a` is a scalar integer range (a gymnasium Discrete)."""
    return np.issubdtype(np.dtype(a["dtype"]), np.integer) and a["shape"] == () and len(a["low"]) == 1


def array_space(a: dict):
    """The gymnasium space of the engine's array description `a`: Discrete or Box."""
    import gymnasium as gym

    dtype = np.dtype(a["dtype"])
    if is_discrete(a):
        lo, hi = int(a["low"][0]), int(a["high"][0])
        return gym.spaces.Discrete(hi - lo + 1, start=lo)
    low, high = array_bounds(a, "low"), array_bounds(a, "high")
    if np.issubdtype(dtype, np.floating):
        low, high = low.astype(dtype), high.astype(dtype)
    return gym.spaces.Box(low=low, high=high, shape=a["shape"], dtype=dtype)


def _group_space(arrays: list[dict], single_name: str):
    import gymnasium as gym

    if len(arrays) == 1 and arrays[0]["name"] == single_name:
        return array_space(arrays[0])
    return gym.spaces.Dict({a["name"]: array_space(a) for a in arrays})


def array_dm_spec(a: dict, name: str | None = None):
    """The dm_env spec of the engine's array description `a` (named `name`, default the array's name)."""
    from dm_env import specs

    dtype = np.dtype(a["dtype"])
    name = name or a["name"]
    if is_discrete(a) and int(a["low"][0]) == 0:
        return specs.DiscreteArray(int(a["high"][0]) + 1, dtype=dtype, name=name)
    if a["low"]:
        low, high = array_bounds(a, "low"), array_bounds(a, "high")
        # a bound that is the same for every element is given as a scalar, as EnvPool's specs (and dm_env's own
        # examples) have it: `spec.maximum == 255`, not an array of 255s
        low = low.flat[0] if low.size and np.all(low == low.flat[0]) else low
        high = high.flat[0] if high.size and np.all(high == high.flat[0]) else high
        return specs.BoundedArray(a["shape"], dtype, low, high, name=name)
    return specs.Array(a["shape"], dtype, name=name)


def autoreset_mode(name: str) -> AutoresetMode:
    """Gymnasium's `AutoresetMode` member for an autoreset_mode config value ("next_step", "same_step", "disabled").

    `env.autoreset_mode` and `env.metadata["autoreset_mode"]` are gymnasium's own enum, so code that compares with
    it (gymnasium's wrappers, TorchRL) accepts a pool; `parallel_pool.AutoresetMode` is the same class.
    """
    return AutoresetMode(AUTORESET_MODES[autoreset_mode_name(name)])


class ArraySpec(NamedTuple):
    """One array of EnvPool's `action_array_spec` / `state_array_spec`.

    Its dtype, the shape of one row as a list, as EnvPool's (-1: the batch dimension of per-player arrays, as EnvPool
    writes it) and its bounds.
    """

    dtype: np.dtype
    shape: list[int]
    minimum: Any
    maximum: Any


def _array_spec(
    dtype: Any, shape: tuple[int, ...], per_player: bool = False, low: Any = None, high: Any = None
) -> ArraySpec:
    dtype = np.dtype(dtype)
    if low is None:
        if dtype == np.bool_:
            low, high = False, True
        elif np.issubdtype(dtype, np.integer):
            low, high = np.iinfo(dtype).min, np.iinfo(dtype).max
        else:
            low, high = -np.inf, np.inf
    return ArraySpec(dtype, ([-1] if per_player else []) + [int(d) for d in shape], low, high)


class EnvSpec:
    """What `make_spec(task_id, **kwargs)` returns: the task's config and its spaces.

    `observation_space` / `action_space` are single-env gymnasium spaces (as EnvPool's spec has them); the
    gymnasium front-end's own `observation_space` is batched, as gymnasium's vector convention says.

    Args:
        task_id: an id of `list_all_envs()`.
        **kwargs: config keys (`make`'s).

    Raises:
        ValueError: an unknown task id, a config key the task does not have, or a value out of range.

    Attributes:
        task_id: the task id (`id` too, gymnasium's name for it).
        env_class: the C++ env class that runs it (not to be confused with make()'s `env_type`, the front-end
            kind).
        config: every config key, resolved (a namedtuple); `config_dict` the same as a dict.
        backend: "cpp" here; `parallel_pool.python_env.PythonEnvSpec` (envs written in Python) says "python".
        reward_threshold: the task's solved score (None where gymnasium has none).
        max_episode_steps: the time limit.
        max_num_players: players per env (1 but for multi-player envs).
        autoreset_mode: how a finished env restarts (`AutoresetMode`).
        engine_spec: the engine's description of the env's arrays, as `_core.spec` gives it ({"obs" | "info" |
            "action": [array dicts], "reward_dtype", "max_players", "players"}; each array dict has name, dtype,
            shape, low, high, per_player; "players" names each player and its own sizes where they differ); the
            typed views above are read from it.
    """

    backend = "cpp"

    @property
    def renders_itself(self) -> bool:
        """Whether the envs draw their own frames (the engine's render()).

        Else parallel_pool.render draws each env from its simulator state.
        """
        return bool(self.engine_spec.get("render_shape"))

    @property
    def runs_where(self) -> str:
        """Where the envs run, for messages: "in C++" or "in worker processes"."""
        return "in worker processes" if self.backend == "python" else "in C++"

    def __init__(self, task_id: str, **kwargs: Any):
        self.task_id = task_id
        self.id = task_id  # gymnasium's name for it
        self.env_class, config = resolve_config(task_id, kwargs)
        # the keys as given, before the defaults and paths of this process were filled in: a pool made elsewhere
        # (a Ray actor on another node) resolves them itself (its package folders, its DMC model cache)
        self.kwargs: dict[str, Any] = dict(kwargs, seed=config["seed"])
        self.config_dict: dict[str, Any] = config
        Config = namedtuple("Config", list(config))  # type: ignore[misc]
        self.config = Config(**config)
        self.engine_spec = _core.spec(self.env_class, env_config(config, 0))  # per-env values never change the spec
        threshold = config.get("reward_threshold")
        # gymnasium's convention: None where a task has no threshold (the engine stores +inf)
        self.reward_threshold = None if threshold is None or np.isinf(threshold) else threshold
        self.max_episode_steps: int = config["max_episode_steps"]
        self.max_num_players: int = self.engine_spec["max_players"]
        self.autoreset_mode = autoreset_mode(config["autoreset_mode"])

    @property
    def observation_arrays(self) -> list[dict]:
        """The engine's description of each observation array (name, dtype, shape, bounds)."""
        return self.engine_spec["obs"]

    @property
    def action_arrays(self) -> list[dict]:
        """The engine's description of each action array (name, dtype, shape, bounds)."""
        return self.engine_spec["action"]

    @property
    def info_arrays(self) -> list[dict]:
        """The engine's description of each info array (name, dtype, shape, bounds)."""
        return self.engine_spec["info"]

    @property
    def observation_space(self):
        """One env's observation space (a `gymnasium.spaces.Dict` for several observation keys)."""
        return _group_space(self.engine_spec["obs"], "obs")

    @property
    def action_space(self):
        """One env's action space (a `gymnasium.spaces.Dict` for several action keys)."""
        return _group_space(self.engine_spec["action"], "action")

    @property
    def dm_state_fields(self) -> list[str]:
        """The fields of the dm front-end's observation (EnvPool's `State`).

        The observation keys, env_id, elapsed_step, players, then the env's info keys; for an env written in Python,
        last, "info": the `_key` masks and the entries without a typed array (gymnasium's vector convention).
        """
        return (
            [a["name"] for a in self.engine_spec["obs"]]
            + ["env_id", "elapsed_step", "players"]
            + [a["name"] for a in self.engine_spec["info"]]
            + (["info"] if self.engine_spec.get("info_extra") else [])
        )

    def observation_spec(self) -> Any:
        """dm_env specs with the structure of the dm front-end's observation: a `State` namedtuple (EnvPool's)."""
        from dm_env import specs

        State = namedtuple("State", self.dm_state_fields)  # type: ignore[misc]
        Players = namedtuple("players", ["env_id"])  # type: ignore[name-match]  # EnvPool's type name
        values: dict[str, Any] = {
            a["name"]: array_dm_spec(a) for a in self.engine_spec["obs"] + self.engine_spec["info"]
        }
        values["env_id"] = specs.Array((), np.int32, name="env_id")
        values["elapsed_step"] = specs.Array((), np.int32, name="elapsed_step")
        values["players"] = Players(specs.Array((), np.int32, name="env_id"))
        if "info" in State._fields:  # entries of any type and number: no spec
            values["info"] = {}
        return State(**values)

    def action_spec(self) -> Any:
        """dm_env spec of one env's action (a dict of specs for multi-key actions)."""
        if len(self.engine_spec["action"]) == 1:
            return array_dm_spec(self.engine_spec["action"][0])
        return {a["name"]: array_dm_spec(a) for a in self.engine_spec["action"]}

    @property
    def action_array_spec(self) -> dict[str, ArraySpec]:
        """EnvPool's flat description of what send() takes: "env_id", "players.env_id" and each action key."""
        out = {"env_id": _array_spec(np.int32, ()), "players.env_id": _array_spec(np.int32, (), per_player=True)}
        for a in self.engine_spec["action"]:
            out[a["name"]] = _array_spec(a["dtype"], a["shape"], a["per_player"], *_low_high(a))
        return out

    @property
    def state_array_spec(self) -> dict[str, ArraySpec]:
        """EnvPool's flat description of one result.

        The ids, elapsed_step, done/trunc, reward, discount, step_type, observation keys ("obs" or "obs:<key>")
        and info keys ("info:<key>").
        """
        reward_dtype = self.engine_spec["reward_dtype"]
        out = {
            "info:env_id": _array_spec(np.int32, ()),
            "info:players.env_id": _array_spec(np.int32, (), per_player=True),
            "elapsed_step": _array_spec(np.int32, ()),
            "done": _array_spec(np.bool_, ()),
            "reward": _array_spec(reward_dtype, (), per_player=True),
            "discount": _array_spec(np.float32, (), True, 0.0, 1.0),
            "step_type": _array_spec(np.int32, ()),
            "trunc": _array_spec(np.bool_, ()),
        }
        obs = self.observation_arrays  # (the EnvPool face's spec gives EnvPool's own bounds there)
        single = len(obs) == 1 and obs[0]["name"] == "obs"
        for a in obs:
            out["obs" if single else "obs:" + a["name"]] = _array_spec(
                a["dtype"], a["shape"], a["per_player"], *_low_high(a)
            )
        for a in self.engine_spec["info"]:
            out["info:" + a["name"]] = _array_spec(a["dtype"], a["shape"], a.get("per_player", False), *_low_high(a))
        return out

    def __repr__(self) -> str:
        return f"EnvSpec({self.task_id!r}, {self.config})"
