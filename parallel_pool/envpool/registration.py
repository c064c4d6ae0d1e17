"""EnvPool's `make*` functions over ParallelPool's engine (EnvPool's module path: `envpool.registration`)."""

from __future__ import annotations

import importlib.metadata
from typing import Any, Literal, overload

from parallel_pool.envpool._pools import FaceDmPool, FaceGymnasiumPool, LegacyGymPool
from parallel_pool.envpool._spec import FaceSpec, family_class, make_face_spec
from parallel_pool.envpool.python.protocol import DMEnvPool, EnvPool, EnvSpec, GymnasiumEnvPool
from parallel_pool.registry import env_class_of
from parallel_pool.registry import list_all_envs as _list_all_envs

__all__ = ["EnvSpec", "list_all_envs", "make", "make_dm", "make_gym", "make_gymnasium", "make_spec"]

_ENV_TYPES = ("gym", "gymnasium", "dm")


def old_gym_installed() -> bool:
    """Whether gym < 0.26 is installed (read from its metadata, without importing it).

    EnvPool <= 0.8 then gave make_gym()'s pools gym's 4-tuple API, and so does `make_gym` here.
    """
    try:
        version = importlib.metadata.version("gym")
    except importlib.metadata.PackageNotFoundError:
        return False
    major, minor = (int("".join(c for c in part if c.isdigit()) or 0) for part in version.split(".")[:2])
    return (major, minor) < (0, 26)


def make_spec(task_id: str, **kwargs: Any) -> FaceSpec:
    """The task's spec, as EnvPool's make_spec: config namedtuple, single-env spaces, dm specs.

    Args:
        task_id: an id of `list_all_envs()`.
        **kwargs: config keys, as `make` takes them (render_mode and render_env_id are accepted and ignored).

    Returns:
        The spec: `spec.config.<key>`, `spec.observation_space`, `spec.action_space`, `spec.observation_spec()`.

    Raises:
        ValueError: an unknown task id, a config key the task does not have, or a value out of range.
    """
    kwargs.pop("render_mode", None)  # EnvPool's make_spec takes make()'s kwargs
    kwargs.pop("render_env_id", None)
    return make_face_spec(task_id, **kwargs)


@overload
def make(task_id: str, env_type: Literal["dm"], **kwargs: Any) -> DMEnvPool: ...
@overload
def make(task_id: str, env_type: Literal["gym", "gymnasium"], **kwargs: Any) -> GymnasiumEnvPool: ...
@overload
def make(task_id: str, env_type: str, **kwargs: Any) -> EnvPool: ...


def make(task_id: str, env_type: str, **kwargs: Any) -> EnvPool:
    """EnvPool's make: a pool with EnvPool 1.2's API.

    Keyword arguments beyond the task's config keys (`make_spec(task_id).config`, plus ours, e.g. autoreset_mode):

    - `legacy_gym` (env_type="gym" only): True gives EnvPool 0.6-0.8's gym API (step -> (obs, reward, done, info),
      reset -> obs); None (default) gives it when gym < 0.26 is installed, as those EnvPool versions did.
    - `gym_reset_return_info`: True (EnvPool 1.2's only value); False only with the legacy gym API (reset -> obs).
    - `render_mode="rgb_array"`, `render_env_id` (the env render() shows by default).

    Args:
        task_id: an id of `list_all_envs()`.
        env_type: "gymnasium" or "gym" (the same gymnasium pool, as EnvPool 1.2), or "dm".
        **kwargs: config keys and the arguments above.

    Returns:
        The pool, of EnvPool's class for the task's family (e.g. `AtariGymnasiumEnvPool`).

    Raises:
        ValueError: an unknown `env_type` or task id, `legacy_gym=True` without env_type="gym", a config key the
            task does not have, or a value out of range.

    Example:
        ```python
        import parallel_pool.envpool as envpool

        env = envpool.make("Pong-v5", env_type="gymnasium", num_envs=8)
        obs, info = env.reset()
        ```
    """
    if env_type not in _ENV_TYPES:
        raise ValueError(f"env_type must be one of {list(_ENV_TYPES)}, got {env_type!r}")
    render_mode = kwargs.pop("render_mode", None)
    render_env_id = kwargs.pop("render_env_id", 0)
    legacy = kwargs.pop("legacy_gym", None)
    if legacy and env_type != "gym":
        raise ValueError(f"legacy_gym=True is the gym API (env_type='gym'), not env_type={env_type!r}")
    legacy = env_type == "gym" and (old_gym_installed() if legacy is None else bool(legacy))
    return_info = kwargs.pop("gym_reset_return_info", not legacy)
    if not return_info and not legacy:
        raise ValueError(
            "gym_reset_return_info=False is EnvPool 0.8's gym API: reset() returns (obs, info) here; "
            "for obs-only resets use make(..., env_type='gym', legacy_gym=True)"
        )
    spec = make_spec(task_id, gym_reset_return_info=return_info, **kwargs)
    base: type = {"dm": FaceDmPool, "gymnasium": FaceGymnasiumPool, "gym": FaceGymnasiumPool}[env_type]
    suffix = {"dm": "DMEnvPool", "gymnasium": "GymnasiumEnvPool", "gym": "GymnasiumEnvPool"}[env_type]
    if legacy:
        base, suffix = LegacyGymPool, "GymEnvPool"
    cls = family_class(base, env_class_of(task_id), suffix)
    pool: EnvPool = cls(spec, render_mode=render_mode, render_env_id=render_env_id)
    return pool


def make_gym(task_id: str, **kwargs: Any) -> EnvPool:
    """`make(task_id, "gym", **kwargs)`: EnvPool 1.2's gymnasium pool, or the 4-tuple API with old gym.

    Args:
        task_id: as `make`'s.
        **kwargs: as `make`'s.

    Returns:
        The pool.
    """
    return make(task_id, "gym", **kwargs)


def make_gymnasium(task_id: str, **kwargs: Any) -> GymnasiumEnvPool:
    """`make(task_id, "gymnasium", **kwargs)`.

    Args:
        task_id: as `make`'s.
        **kwargs: as `make`'s.

    Returns:
        The pool.
    """
    return make(task_id, "gymnasium", **kwargs)


def make_dm(task_id: str, **kwargs: Any) -> DMEnvPool:
    """`make(task_id, "dm", **kwargs)`: a batched `dm_env.Environment`.

    Args:
        task_id: as `make`'s.
        **kwargs: as `make`'s.

    Returns:
        The pool.
    """
    return make(task_id, "dm", **kwargs)


def list_all_envs() -> list[str]:
    """All task ids ParallelPool registers (EnvPool's ids of the families it has).

    Returns:
        The ids, e.g. "Pong-v5", "CartPole-v1", "HalfCheetah-v5".
    """
    return _list_all_envs()
