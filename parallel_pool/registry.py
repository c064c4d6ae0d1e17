"""Task ids, config keys and their validation (the C++ registry, seen from Python)."""

from __future__ import annotations

import difflib
import functools
import importlib.util
import numbers
import os
from typing import Any

import numpy as np

from parallel_pool import _core, dmc_models

_TASKS: dict[str, tuple[str, dict[str, Any]]] = _core.tasks()
_CLASSES: dict[str, list[tuple[str, Any, str, list[str]]]] = _core.env_classes()


def list_all_envs(include_unlisted: bool = False) -> list[str]:
    """All registered task ids, sorted.

    Args:
        include_unlisted: also list the ids of env classes named "_..." (the test and example envs, e.g.
            Dummy-v0), which can be made but are left out by default.

    Returns:
        The ids, e.g. "CartPole-v1", "HalfCheetah-v5", "Pong-v5".
    """
    return sorted(task for task, (env_class, _) in _TASKS.items() if include_unlisted or not env_class.startswith("_"))


def has_task(task_id: str) -> bool:
    """Whether a C++ env runs `task_id`."""
    return task_id in _TASKS


def _suggest(word: str, options, what: str) -> str:
    close = difflib.get_close_matches(word, list(options), n=3, cutoff=0.5)
    if not close:
        lowered = {o.lower(): o for o in options}
        close = [lowered[w] for w in difflib.get_close_matches(word.lower(), list(lowered), n=3, cutoff=0.5)]
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return f"unknown {what} {word!r}{hint}"


def env_class_of(task_id: str) -> str:
    if not isinstance(task_id, str):
        raise TypeError(f"task_id must be a str, got {type(task_id).__name__}")
    if task_id not in _TASKS:
        from parallel_pool.families import unavailable_message  # ids of families this build left out

        raise ValueError(
            unavailable_message(task_id)
            or _suggest(task_id, _TASKS, "task id")
            + " (see parallel_pool.list_all_envs(); a gymnasium id runs with backend='python', 'package:Id' for one "
            "that a package registers; an env of your own: env_fn=<a callable returning the env>)"
        )
    return _TASKS[task_id][0]


@functools.cache
def _package_dir(package: str) -> str | None:
    """The folder of an installed Python package, found without importing it (None: not installed)."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def _resolve_pkgdir(value: Any) -> Any:
    """A str config value "{pkgdir:PKG}/rest" (a C++ default, or given by the user) names a data folder shipped in
    an installed Python package (the Atari ROMs in ale-py, gymnasium's MuJoCo models): it becomes an absolute path.
    Left as is when PKG is not installed: the env then raises an error saying which package to install."""
    if isinstance(value, str) and value.startswith("{pkgdir:") and "}" in value:
        end = value.index("}")
        folder = _package_dir(value[len("{pkgdir:") : end])
        if folder is not None:
            rest = value[end + 1 :].lstrip("/")
            return os.path.join(folder, rest) if rest else folder
    return value


def config_keys(task_id: str) -> dict[str, tuple[Any, str, list[str]]]:
    """key -> (default for this task, doc, allowed values)."""
    class_name = env_class_of(task_id)
    overrides = _TASKS[task_id][1]
    return {
        name: (_resolve_pkgdir(overrides.get(name, default)), doc, list(choices))
        for name, default, doc, choices in _CLASSES[class_name]
    }


def _coerce(key: str, value: Any, default: Any, choices: list[str]) -> Any:
    if isinstance(default, bool):
        if isinstance(value, (bool,)) or (hasattr(value, "dtype") and value.dtype == bool):
            return bool(value)
        raise TypeError(f"config key {key!r} must be a bool, got {value!r}")
    if isinstance(default, int):
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            return int(value)
        raise TypeError(f"config key {key!r} must be an int, got {value!r}")
    if isinstance(default, float):
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            return float(value)
        raise TypeError(f"config key {key!r} must be a number, got {value!r}")
    if isinstance(value, dict):
        value = _table_text(key, value)
    if not isinstance(value, str):
        raise TypeError(f"config key {key!r} must be a str, got {value!r}")
    if choices and value not in choices:
        raise ValueError(f"config key {key!r} must be one of {choices}, got {value!r}")
    return value


def _table_text(key: str, table: dict[Any, Any]) -> str:
    """A dict given for a str key (EnvPool's dict-valued keys, e.g. ViZDoom's reward_config) travels to the env as
    text "name=v1,v2;name=v1": each value a number or a sequence of numbers. The env checks names and arity."""
    entries = []
    for name, value in table.items():
        values = list(value) if isinstance(value, (tuple, list)) else [value]
        for v in values:
            if not isinstance(v, numbers.Real) or isinstance(v, bool):
                raise TypeError(f"config key {key!r}: the value of {name!r} must be numbers, got {value!r}")
        entries.append(f"{name}=" + ",".join(repr(float(v)) for v in values))
    return ";".join(entries)


def _envpool_key(key: str, value: Any) -> None:
    """EnvPool's common config keys that ParallelPool has no key for: accept those whose meaning holds, reject the
    others saying what to use instead."""
    if key == "gym_reset_return_info":
        if value is not True:
            raise ValueError(
                "gym_reset_return_info: reset() always returns (obs, info) here (gymnasium's "
                f"convention); drop the key (got {value!r})"
            )
        return
    hints = {
        "base_path": "data files are found in the installed packages (ale-py ROMs, gymnasium MuJoCo XMLs); "
        "the task's own path keys (see make_spec(task_id).config) override them",
        "env_seed": "env i is seeded with seed + i; for other per-env seeds call reset(seed=[s0, ..., sN-1])",
    }
    raise ValueError(f"config key {key!r} (EnvPool's) is not supported: {hints[key]}")


_ENVPOOL_KEYS = ("gym_reset_return_info", "base_path", "env_seed")


# autoreset_mode's config values (the engine's spelling) -> gymnasium.vector.AutoresetMode's values
AUTORESET_MODES = {"next_step": "NextStep", "same_step": "SameStep", "disabled": "Disabled"}


def autoreset_mode_name(value: Any) -> str:
    """The config value ("next_step", "same_step" or "disabled") of an autoreset mode given as that string, as
    gymnasium's `AutoresetMode` member, or as that member's value ("SameStep")."""
    value = getattr(value, "value", value)  # a gymnasium.vector.AutoresetMode member
    if isinstance(value, str):
        for name, gym_value in AUTORESET_MODES.items():
            if value in (name, gym_value):
                return name
    raise ValueError(
        f"config key 'autoreset_mode' must be one of {list(AUTORESET_MODES)} (or gymnasium.vector.AutoresetMode's "
        f"members), got {value!r}"
    )


def random_seed() -> int:
    """make(seed=None): a fresh random seed, as gymnasium draws one; 62 bits leave room for seed + env id."""
    import secrets

    return secrets.randbits(62)


COMMON_KEYS: frozenset[str] = frozenset(_core.common_config_keys())


def _is_per_env(value: Any) -> bool:
    """A list, tuple or 1-d array: one value per env (no config key takes a sequence as its value)."""
    return isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.ndim == 1)


def env_config(config: dict[str, Any], env_id: int) -> dict[str, Any]:
    """Env `env_id`'s own values of a config whose per-env keys hold one value per env (a tuple)."""
    return {k: v[env_id] if isinstance(v, tuple) else v for k, v in config.items()}


def per_env_value(task_id: str, config: dict[str, Any], key: str, value: Any, n: int, spec: dict | None = None) -> Any:
    """The one check of a value given for an env's own key, at make() or set_config(): a scalar, or a sequence of n
    values (one per env; returned as a tuple), each coerced to the key's type. A key that shapes the spec (spaces,
    action set) may not differ between envs of one pool: every value is checked to give `spec` (the pool's; by
    default the spec of `config`). `config`: the values of the other keys (one env's). Raises ValueError or
    TypeError naming the key; checks only, changes nothing."""
    keys = config_keys(task_id)
    if key not in keys:
        raise ValueError(_suggest(key, keys, f"config key for {task_id}") + f"; valid keys: {sorted(keys)}")
    default, _, choices = keys[key]
    if key in COMMON_KEYS:
        raise ValueError(f"config key {key!r} is the pool's own: it cannot differ per env or change after make()")
    values = list(value) if _is_per_env(value) else [value]
    if _is_per_env(value) and len(values) != n:
        raise ValueError(f"config key {key!r} has {len(values)} per-env values for {n} envs")
    values = [dmc_models.resolve(key, _resolve_pkgdir(_coerce(key, v, default, choices))) for v in values]
    class_name = env_class_of(task_id)
    want = spec if spec is not None else _core.spec(class_name, config)
    for v in dict.fromkeys(values):  # each distinct value once
        if _core.spec(class_name, dict(config, **{key: v})) != want:
            raise ValueError(
                f"config key {key!r} changes the observation or action spaces ({v!r}): it must be the same "
                "for every env of a pool, and can only be given at make()"
            )
    return tuple(values) if _is_per_env(value) else values[0]


# Env types whose episode limit follows their size as in the reference package: minigrid's WFCEnv has
# max_steps = size * 20 unless given. The env applies the rule itself (its `max_steps` key, 0 = the rule), so a size
# changed by set_config changes its limit too; this module gives the pool's time limit the same default.
_STEPS_PER_CELL = {"MiniGridWFC": 20}


def _derive_time_limit(class_name: str, config: dict[str, Any], per_env: dict[str, Any], given: set[str]) -> None:
    """max_episode_steps given: it is every env's max_steps too (unless max_steps is given). Not given: the largest
    max_steps of the pool's envs (by the rule where max_steps is 0)."""
    if "max_episode_steps" in given:
        if "max_steps" not in given:
            config["max_steps"] = config["max_episode_steps"]
        return
    n = config["num_envs"]

    def each(key: str) -> list[int]:
        values = per_env.get(key, [config[key]] * n)
        return [_coerce(key, v, 0, []) for v in values]  # (a bad value is refused with its key's name here)

    limits = [m or s * _STEPS_PER_CELL[class_name] for s, m in zip(each("size"), each("max_steps"))]
    config["max_episode_steps"] = max(limits)


def resolve_config(task_id: str, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Validate user kwargs against the task's keys; return (engine type, full config). A key given as a
    sequence of num_envs values (per-env values) holds them as a tuple."""
    class_name = env_class_of(task_id)
    keys = config_keys(task_id)
    config = {k: v[0] for k, v in keys.items()}
    per_env = {k: v for k, v in kwargs.items() if _is_per_env(v) and k in keys}
    kwargs = {k: v for k, v in kwargs.items() if k not in per_env}
    if "autoreset_mode" in kwargs:
        kwargs["autoreset_mode"] = autoreset_mode_name(kwargs["autoreset_mode"])
    for key, value in kwargs.items():
        if key in _ENVPOOL_KEYS and key not in keys:
            _envpool_key(key, value)
            continue
        if key == "seed" and value is None:
            value = random_seed()
        if key not in keys:
            raise ValueError(_suggest(key, keys, f"config key for {task_id}") + f"; valid keys: {sorted(keys)}")
        if value is None and key in ("batch_size", "num_threads"):
            value = 0
        config[key] = _coerce(key, value, keys[key][0], keys[key][2])
    for key, value in config.items():
        config[key] = dmc_models.resolve(key, _resolve_pkgdir(value))
    if config["seed"] < 0:
        raise ValueError(f"seed must be >= 0, got {config['seed']}")
    n = config["num_envs"]
    if n < 1:
        raise ValueError(f"num_envs must be >= 1, got {n}")
    if config["batch_size"] < 0:
        raise ValueError(f"batch_size must be >= 0, got {config['batch_size']}")
    if config["batch_size"] > n:
        raise ValueError(f"batch_size ({config['batch_size']}) must be <= num_envs ({n})")
    if config["batch_size"] == 0:
        config["batch_size"] = n
    if class_name in _STEPS_PER_CELL:
        _derive_time_limit(class_name, config, per_env, given=set(kwargs) | set(per_env))
    scalar = dict(config)  # every env's values of the keys given once, for checking the per-env ones
    for key, values in per_env.items():
        config[key] = per_env_value(task_id, scalar, key, values, n)
    return class_name, config
