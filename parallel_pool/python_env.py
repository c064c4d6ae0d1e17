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

from parallel_pool.process_protocol import RESERVED_INFO, info_array, leaf_paths, typed_key
from parallel_pool.registry import autoreset_mode_name
from parallel_pool.spec import EnvSpec, autoreset_mode

__all__ = ["PythonEnvSpec", "MakeRegistered", "ParallelFromAEC", "in_gymnasium_registry"]

NO_LIMIT = 2**31 - 1  # max_episode_steps of an env without a time limit (elapsed_step is int32)
_COMMON_KEYS = ("num_envs", "batch_size", "num_threads", "seed", "max_episode_steps", "autoreset_mode", "info_keys")


class MakeRegistered:
    """`gymnasium.make` of a registered id, picklable: it carries gymnasium's EnvSpec (entry point and kwargs), so a
    worker process builds the env without importing the package that registered it (e.g. minigrid)."""

    def __init__(self, env_spec: Any, kwargs: dict[str, Any]):
        self.env_spec = env_spec
        self.kwargs = kwargs

    def __call__(self, **env_kwargs: Any) -> Any:
        """The env, with one env's own kwargs (per-env values, set_config) over the pool's."""
        import gymnasium

        return gymnasium.make(self.env_spec, **{**self.kwargs, **env_kwargs})

    def __repr__(self) -> str:
        return f"gymnasium.make({self.env_spec.id!r}, **{self.kwargs!r})"


class ParallelFromAEC:
    """An env_fn of PettingZoo AEC envs whose agents act once per cycle, converted with PettingZoo's own
    `aec_to_parallel`; picklable, so that a worker process builds the converted env."""

    def __init__(self, env_fn: Callable[..., Any]):
        self.env_fn = env_fn

    def __call__(self, **env_kwargs: Any) -> Any:
        """The AEC env env_fn builds, as a ParallelEnv."""
        from pettingzoo.utils.conversions import aec_to_parallel

        return aec_to_parallel(self.env_fn(**env_kwargs))

    def __repr__(self) -> str:
        fn = self.env_fn
        name = f"{fn.__module__}.{fn.__qualname__}" if hasattr(fn, "__qualname__") else repr(fn)
        return f"aec_to_parallel({name})"


def _is_aec(env: Any) -> bool:
    """A PettingZoo AEC env (agents act in turn: agent_iter() / last()), by its interface as the pool reads any env."""
    return callable(getattr(env, "agent_iter", None)) and callable(getattr(env, "last", None))


def _env_name(env: Any) -> str | None:
    """A PettingZoo env's own name (its metadata's "name", e.g. "rps_v2"), or None."""
    metadata = getattr(env, "metadata", None)
    name = metadata.get("name") if isinstance(metadata, dict) else None
    return name if isinstance(name, str) and name else None


def gymnasium_env_spec(task_id: str) -> Any:
    """gymnasium's EnvSpec of `task_id` ("module:Id" imports module first, as gymnasium.make does), or None."""
    import gymnasium

    if ":" in task_id:
        import importlib

        module, task_id = task_id.split(":", 1)
        importlib.import_module(module)
    return gymnasium.registry.get(task_id)


def unknown_gymnasium_id(task_id: str) -> str:
    """Why `task_id` makes no gymnasium env, with the registered ids it may mean (gymnasium's own version lookup:
    gymnasium 1.x registers Taxi-v4, not Taxi-v3) and the ways to run an env the registry does not have."""
    import difflib

    import gymnasium
    from gymnasium.envs.registration import find_highest_version, get_env_id, parse_env_id

    module, _, gym_id = task_id.rpartition(":")
    prefix = f"{module}:" if module else ""
    # the pool's own ids (registered for gymnasium.make, entry points in this package) run as C++ envs: no
    # suggestion for backend="python"
    ids = [i for i, s in gymnasium.registry.items() if not str(s.entry_point).startswith("parallel_pool.")]
    try:
        ns, name, _ = parse_env_id(gym_id)
    except gymnasium.error.Error:
        ns, name = None, None
    versions = (
        sorted(s.version for s in gymnasium.registry.values() if s.namespace == ns and s.name == name and s.version)
        if name
        else []
    )
    if name and find_highest_version(ns, name) is not None:
        newest = prefix + get_env_id(ns, name, find_highest_version(ns, name))
        hint = f"; gymnasium registers {name} at version {', '.join(f'v{v}' for v in versions)}: use {newest!r}"
    else:
        close = difflib.get_close_matches(gym_id, ids, n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(repr(prefix + c) for c in close)}?" if close else ""
    return (
        f"unknown gymnasium id {task_id!r}{hint} (an id that a package registers when it is imported: "
        "'package:Id', e.g. 'minigrid:MiniGrid-Empty-5x5-v0'; an env that no registry has: "
        "env_fn=<a callable returning the env>)"
    )


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

    if not isinstance(space, (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)):
        # Text, Graph, Sequence, OneOf and spaces of other types (MiniGrid's MissionSpace): one Python object per
        # env (an object array, carried by the worker's pipe), as SyncVectorEnv hands them over
        return dict(name=name, dtype="object", shape=(), low=[], high=[], per_player=True)
    if isinstance(space, spaces.Discrete):
        lo = int(space.start)
        return dict(name=name, dtype=str(space.dtype), shape=(), low=[lo], high=[lo + int(space.n) - 1])
    if isinstance(space, spaces.MultiDiscrete):
        low, high = space.start, space.start + space.nvec - 1
    elif isinstance(space, spaces.MultiBinary):
        low, high = np.zeros(space.shape), np.ones(space.shape)
    else:
        low, high = space.low, space.high
    return dict(
        name=name, dtype=str(space.dtype), shape=tuple(space.shape), low=flat(low), high=flat(high), per_player=True
    )


def space_arrays(space: Any, single_name: str) -> tuple[list[dict[str, Any]], Any]:
    """(the arrays of `space`, one per leaf (process_protocol.leaf_paths), and the gymnasium space the batch
    presents: a Tuple becomes a Dict keyed "0", "1", ..., at any depth)."""
    from gymnasium import spaces

    leaves = leaf_paths(space, single_name)
    names = [name for name, _, _ in leaves]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(
            f"the space's keys give two leaves the name {twice[0]!r} (nested keys are joined by '.'): rename a key"
        )

    def presented(node: Any) -> Any:
        if isinstance(node, spaces.Dict):
            return spaces.Dict({k: presented(s) for k, s in node.spaces.items()})
        if isinstance(node, spaces.Tuple):
            return spaces.Dict({str(i): presented(s) for i, s in enumerate(node.spaces)})
        return node

    arrays = [_leaf_array(name, sub) for name, _, sub in leaves]
    flat = all(len(path) == 1 for _, path, _ in leaves)
    if not isinstance(space, (spaces.Dict, spaces.Tuple)) or (flat and isinstance(space, spaces.Dict)):
        return arrays, space
    return arrays, presented(space)


def obs_paths(space: Any) -> dict[str, tuple[str, ...]] | None:
    """Each observation array's place in the batch's nested dicts (keys as str), where the space nests Dict/Tuple
    spaces; None where the batch's observation is one array or one flat dict."""
    leaves = leaf_paths(space, "obs")
    if all(len(path) <= 1 for _, path, _ in leaves):
        return None
    return {name: tuple(str(k) for k in path) for name, path, _ in leaves}


def probe_info(env: Any, info_keys: Any) -> list[dict[str, Any]]:
    """The env's info arrays: with info_keys=None, every numeric entry of its first reset's and first step's info
    (one step of a sampled action, on the env built here to read the spaces); with a sequence of names, those of
    them (each must be a numeric entry of that reset or step); with a dict name -> (dtype, shape), those arrays as
    declared (entries seen only later in an episode, e.g. "is_success")."""
    if isinstance(info_keys, dict):
        out = []
        for key, decl in info_keys.items():
            try:
                dtype, shape = decl
                dtype, shape = np.dtype(dtype), tuple(int(d) for d in shape)
            except (TypeError, ValueError):
                raise TypeError(
                    f"info_keys[{key!r}] must be (dtype, shape), e.g. ('float64', ()), got {decl!r}"
                ) from None
            out.append(dict(name=str(key), dtype=str(dtype), shape=shape, low=[], high=[], per_player=False))
        return _check_info_names(out)
    if info_keys is not None and (isinstance(info_keys, str) or not hasattr(info_keys, "__iter__")):
        raise TypeError(f"info_keys must be None, a sequence of info key names or a dict, got {info_keys!r}")
    _, info = env.reset(seed=0)
    seen = dict(info)
    env.action_space.seed(0)
    try:
        _, _, _, _, step_info = env.step(env.action_space.sample())
    except Exception as e:  # the env refuses a random action: its reset's info is what there is to read
        import warnings

        warnings.warn(
            f"the env raised {type(e).__name__}: {e} on one step of a sampled action (the probe of its info keys); "
            "the pool carries the numeric info entries of its first reset only; give info_keys= to choose",
            stacklevel=4,
        )
        step_info = {}
    for key, value in step_info.items():
        seen.setdefault(key, value)
    arrays = {str(k): a for k, v in seen.items() if (a := info_array(str(k), v)) is not None}
    if info_keys is None:
        return [a for k, a in arrays.items() if typed_key(k)]
    missing = [k for k in info_keys if k not in arrays]
    if missing:
        raise ValueError(
            f"info_keys {missing} are not numeric entries of the env's info at its first reset or step (numeric: "
            f"{sorted(arrays)}); declare them as a dict name -> (dtype, shape), e.g. {{'is_success': ('bool', ())}}"
        )
    return _check_info_names([arrays[str(k)] for k in info_keys])


def _check_info_names(arrays: list[dict[str, Any]]) -> list[dict[str, Any]]:
    bad = [a["name"] for a in arrays if a["name"] in RESERVED_INFO or a["name"].startswith("_")]
    if bad:
        raise ValueError(f"info_keys {bad} are names the batch's info has of its own ({sorted(RESERVED_INFO)}, _*)")
    return arrays


def is_per_env(value: Any) -> bool:
    """A Python env's kwarg given as one value per env: a list or a 1-d numpy array. A tuple is one value (gymnasium
    envs take ranges as tuples, e.g. Hopper-v5's healthy_z_range=(0.7, 1e9))."""
    return isinstance(value, list) or (isinstance(value, np.ndarray) and value.ndim == 1)


def per_env_kwargs(kwargs: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """One kwargs dict per env from kwargs whose values are one value for all or one per env (is_per_env)."""
    for key, value in kwargs.items():
        if is_per_env(value) and len(value) != n:
            raise ValueError(f"config key {key!r} has {len(value)} per-env values for {n} envs")
    return [
        {k: (v[i].item() if isinstance(v, np.ndarray) else v[i]) if is_per_env(v) else v for k, v in kwargs.items()}
        for i in range(n)
    ]


def _agents(env: Any) -> tuple[Any, ...]:
    """A PettingZoo ParallelEnv's possible_agents (its agents are the pool's player rows); () for a gymnasium.Env."""
    agents = getattr(env, "possible_agents", None)
    if agents is None or not callable(getattr(env, "observation_space", None)):
        return ()
    if not agents:
        raise ValueError(f"{type(env).__name__} has no possible_agents: a PettingZoo ParallelEnv needs at least one")
    return tuple(agents)


def _spaces(env: Any, agents: tuple[Any, ...]) -> tuple[Any, Any]:
    """The env's (observation, action) spaces; a PettingZoo env's agents must share theirs (one array per key)."""
    if not agents:
        return env.observation_space, env.action_space
    obs, act = env.observation_space(agents[0]), env.action_space(agents[0])
    other = [a for a in agents if env.observation_space(a) != obs or env.action_space(a) != act]
    if other:
        raise ValueError(
            f"agents {other} have other spaces than {agents[0]!r}: the pool's player rows share one observation and "
            "action space (pad or wrap the env so that every agent has the same spaces)"
        )
    return obs, act


MAX_ENVS = 1 << 20  # the C++ pools' bounds (core/engine/options.cc): larger values are typos, and exhaust memory
MAX_THREADS = 4096


def close_env(env: Any) -> None:
    """env.close(); an exception there is a RuntimeWarning: a pool is not refused, nor an env's reset failed, because
    an env does not close cleanly."""
    try:
        env.close()
    except Exception as e:
        import warnings

        warnings.warn(f"{type(env).__name__}.close() raised {type(e).__name__}: {e}", RuntimeWarning, stacklevel=2)


def _int_key(key: str, value: Any, low: int, high: int | None = None, note: str = "") -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise TypeError(f"config key {key!r} must be an int, got {value!r}")
    value = int(value)
    if high is not None and not low <= value <= high:
        raise ValueError(f"{key} must be in [{low}, {high}]{note}, got {value}")
    if value < low:
        raise ValueError(f"{key} must be >= {low}, got {value}")
    return value


class PythonEnvSpec(EnvSpec):
    """The spec of a pool of Python envs: what `EnvSpec` says of a C++ task (config, arrays, gymnasium spaces, dm
    specs), read from one env built by `env_fn` in this process; `env_fn` (cloudpickled) builds the envs in the
    workers. `backend` is "python"; `env_class` is "python".

    Config keys: num_envs, batch_size (0: num_envs), num_threads (worker processes; 0: min(num_envs, cores)),
    seed (env i's first reset gets seed + i), max_episode_steps (default: the env's own time limit), autoreset_mode.
    For a registered id, other keys go to gymnasium.make."""

    backend = "python"
    renders_itself = True  # each env's own render(), in its worker

    def __init__(self, task_id: str | None, env_fn: Callable[[], Any] | None, render_mode: str | None, **kwargs: Any):
        from parallel_pool.engine import usable_cores
        from parallel_pool.registry import random_seed

        common = {k: kwargs.pop(k) for k in _COMMON_KEYS if k in kwargs}
        n = _int_key("num_envs", common.get("num_envs", 1), 1, MAX_ENVS)
        threads = _int_key("num_threads", common.get("num_threads", 0) or 0, 0, MAX_THREADS, " (0 = automatic)")
        if env_fn is None:
            assert task_id is not None
            gym_spec = gymnasium_env_spec(task_id)
            if gym_spec is None:
                raise ValueError(unknown_gymnasium_id(task_id))
            fixed: dict[str, Any] = {} if render_mode is None else {"render_mode": render_mode}
            if "max_episode_steps" in common:
                fixed["max_episode_steps"] = _int_key("max_episode_steps", common["max_episode_steps"], 1)
            env_fn = MakeRegistered(gym_spec, fixed)
            task_id = gym_spec.id
        elif not callable(env_fn):
            raise TypeError(f"env_fn must be a callable returning a gymnasium.Env, got {env_fn!r}")
        self.env_fn = env_fn
        # the env's own keys (gymnasium.make's kwargs, or env_fn's keyword arguments): one value for every env, or
        # a list of one per env (each env is built with its own)
        self.env_kwargs = per_env_kwargs(kwargs, n)
        self.per_env_keys = frozenset(k for k, v in kwargs.items() if is_per_env(v))
        env = self.build_with(self.env_kwargs[0])  # the spaces, as AsyncVectorEnv reads them: from one env built here
        if _is_aec(env):
            env = self._parallel_from_aec(env)
        try:
            self.agents = _agents(env)
            obs_space, act_space = _spaces(env, self.agents)
            obs_arrays, self._obs_space = space_arrays(obs_space, "obs")
            act_arrays, self._act_space = space_arrays(act_space, "action")
            text = [a["name"] for a in act_arrays if a["dtype"] == "object"]
            if text:
                raise ValueError(
                    f"action {text} is a {type(act_space).__name__} space of other than Box, Discrete, MultiDiscrete "
                    "and MultiBinary leaves: the pool's actions are arrays of numbers"
                )
            if obs_paths(act_space) is not None:
                raise ValueError(
                    f"the action space {act_space} nests Dict/Tuple spaces: the pool's actions are one array, or one "
                    "Dict/Tuple of arrays"
                )
            self.obs_paths = obs_paths(obs_space)
            self.check_kwargs(self.env_kwargs[1:], obs_arrays, act_arrays)
            if self.agents:  # a PettingZoo env: how each agent's episode ended (its own infos are not carried)
                if common.get("info_keys"):
                    raise ValueError("info_keys: a PettingZoo env's per-agent infos are not carried")
                info_arrays: list[dict[str, Any]] = [
                    dict(name=n, dtype="bool", shape=(), low=[], high=[], per_player=True)
                    for n in ("agent_terminated", "agent_truncated")
                ]
            else:
                info_arrays = probe_info(env, common.get("info_keys"))
            env_gym_spec = getattr(env, "spec", None)
            own_name = _env_name(env) if self.agents else None
            own_limit = getattr(env_gym_spec, "max_episode_steps", None)
            threshold = getattr(env_gym_spec, "reward_threshold", None)
        finally:
            close_env(env)
        if task_id is None:
            # a PettingZoo env's own name: its env_fn is often a closure (parallel_wrapper_fn.<locals>.par_fn)
            task_id = (
                getattr(env_gym_spec, "id", None) or own_name or getattr(env_fn, "__qualname__", type(env).__name__)
            )
        self.task_id = self.id = str(task_id)
        self.env_class = "python"
        batch = _int_key("batch_size", common.get("batch_size", 0) or 0, 0) or n
        if batch > n:
            raise ValueError(f"batch_size ({batch}) must be <= num_envs ({n})")
        seed = common.get("seed", 42)
        seed = random_seed() if seed is None else _int_key("seed", seed, 0)
        limit = _int_key("max_episode_steps", common.get("max_episode_steps", own_limit or NO_LIMIT), 1)
        mode = autoreset_mode_name(common.get("autoreset_mode", "next_step"))
        self.config_dict: dict[str, Any] = {
            "num_envs": n,
            "batch_size": batch,
            "num_threads": min(threads or min(n, usable_cores()), n),
            "seed": seed,
            "max_episode_steps": limit,
            "autoreset_mode": mode,
            "max_num_players": max(1, len(self.agents)),
            "reward_threshold": threshold,
            "info_keys": tuple(a["name"] for a in info_arrays),
            # the env's own keys: per-env values as a tuple (as a C++ pool's config holds them)
            **{k: tuple(kw[k] for kw in self.env_kwargs) if k in self.per_env_keys else v for k, v in kwargs.items()},
        }
        Config = namedtuple("Config", list(self.config_dict))  # type: ignore[misc]
        self.config = Config(**self.config_dict)  # type: ignore[assignment]
        self.engine_spec = {
            "obs": obs_arrays,
            "action": act_arrays,
            "info": info_arrays,
            "max_players": max(1, len(self.agents)),
            "reward_dtype": "float64",
            # every other info entry travels to the batch's object array (a PettingZoo env's infos are not carried)
            "info_extra": not self.agents,
        }
        self.reward_threshold = threshold
        self.max_episode_steps = limit
        self.max_num_players = max(1, len(self.agents))
        self.autoreset_mode = autoreset_mode(mode)
        self.render_mode = render_mode

    def _parallel_from_aec(self, env: Any) -> Any:
        """A PettingZoo AEC env: from now on env_fn's envs converted by PettingZoo's aec_to_parallel, which is valid
        where the env says its agents act once per cycle (metadata "is_parallelizable"); refused otherwise."""
        name = _env_name(env) or type(getattr(env, "unwrapped", env)).__name__
        metadata = getattr(env, "metadata", None)
        parallelizable = isinstance(metadata, dict) and bool(metadata.get("is_parallelizable", False))
        close_env(env)
        if not parallelizable:
            raise ValueError(
                f"env_fn builds {name}, a PettingZoo AEC env whose metadata does not say 'is_parallelizable': True "
                "(its agents act in turn), so PettingZoo's aec_to_parallel does not apply; the pool steps every "
                "agent at once: give env_fn a ParallelEnv (for a turn-based game, PettingZoo's "
                "turn_based_aec_to_parallel makes one)"
            )
        self.env_fn = ParallelFromAEC(self.env_fn)
        return self.build_with(self.env_kwargs[0])

    def build_with(self, kwargs: dict[str, Any]) -> Any:
        """An env as a worker builds it: env_fn with one env's own kwargs."""
        try:
            return self.env_fn(**kwargs)
        except TypeError as e:
            if not kwargs or isinstance(self.env_fn, MakeRegistered):
                raise
            raise ValueError(
                f"unknown config keys {sorted(kwargs)} for env_fn {self.env_fn!r}: they are neither the pool's keys "
                f"{list(_COMMON_KEYS)} nor keyword arguments it takes ({e})"
            ) from e

    def check_kwargs(self, kwargs_list: list[dict[str, Any]], obs: Any = None, act: Any = None) -> None:
        """Each distinct kwargs builds an env (built once here, then closed) with the pool's spaces (the arrays
        `obs` / `act`, by default the spec's): a bad value raises here, naming the kwargs."""
        obs = self.engine_spec["obs"] if obs is None else obs
        act = self.engine_spec["action"] if act is None else act
        done: list[dict[str, Any]] = []
        for kwargs in kwargs_list:
            if kwargs in done:
                continue
            done.append(kwargs)
            try:
                env = self.build_with(kwargs)
            except Exception as e:
                e.add_note(f"(building the env with kwargs {kwargs})")
                raise
            try:
                env_obs, env_act = _spaces(env, _agents(env))
                if space_arrays(env_obs, "obs")[0] != obs or space_arrays(env_act, "action")[0] != act:
                    raise ValueError(
                        f"the kwargs {kwargs} give other spaces ({env_obs}, {env_act}) than "
                        "the pool's: every env of a pool has the same spaces"
                    )
            finally:
                close_env(env)

    def with_config(self, first: int = 0, **changes: Any) -> PythonEnvSpec:
        """This spec with some config keys changed (a Ray actor's share of the envs from env `first`: num_envs,
        batch_size, seed)."""
        import copy

        spec = copy.copy(self)
        spec.config_dict = dict(self.config_dict, **changes)
        n = spec.config_dict["num_envs"]
        spec.env_kwargs = self.env_kwargs[first : first + n]
        for key in self.per_env_keys:  # the per-env values of this share's envs
            spec.config_dict[key] = tuple(kw[key] for kw in spec.env_kwargs)
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
