"""The pool in gymnasium's registry: every id of `list_all_envs()` as `ParallelPool/<id>`.

Registered when parallel_pool is imported, so that gymnasium's own ways of making envs reach the pool:

    import gymnasium as gym
    import parallel_pool  # registers the ParallelPool namespace

    envs = gym.make_vec("ParallelPool/Pong-v5", num_envs=64, batch_size=16)  # a parallel_pool pool
    env = gym.make("ParallelPool/CartPole-v1")  # one env, a gymnasium.Env

Ids with a namespace of their own keep it under ours (`ParallelPool-phys2d/CartPole-v1`: `gymnasium_id`).
`make_vec` goes to the id's `vector_entry_point`, `parallel_pool.make`, with its keyword arguments passed through (any
config key of the task). `make` gives one env (`SingleEnv`: a pool of one env behind gymnasium.Env's API), which
`make_vec(..., vectorization_mode="sync" | "async")` also uses. Without importing parallel_pool first, name the module
in the id: `"parallel_pool:ParallelPool/Pong-v5"`. The namespace is needed: `"parallel_pool:CartPole-v1"` imports the
package and then looks up `CartPole-v1`, which is gymnasium's own CartPole, not the pool's.
"""

from __future__ import annotations

import typing as _typing
from copy import deepcopy

import gymnasium
import numpy as np

from parallel_pool.schema import tree_map

if _typing.TYPE_CHECKING:  # the annotations' names only (strings at run time): dir() lists the API
    from typing import Any

NAMESPACE = "ParallelPool"

__all__ = ["NAMESPACE", "SingleEnv", "gymnasium_id", "register_envs"]


class SingleEnv(gymnasium.Env):
    """One env of a task as a `gymnasium.Env`: what `gymnasium.make("ParallelPool/<id>")` returns.

    A pool of one env (`autoreset_mode="disabled"`: an ended episode waits for `reset()`, as a gymnasium.Env's does)
    with the batch dimension taken off: single-env spaces, a float reward, bool terminated / truncated, and the
    info of that env (gymnasium's `_key` masks dropped). It passes `gymnasium.utils.env_checker.check_env`.

    Args:
        task_id: an id of `parallel_pool.list_all_envs()`.
        render_mode: None or "rgb_array".
        **kwargs: the task's config keys (`parallel_pool.make_spec(task_id).config`); `num_envs` is 1.
    """

    def __init__(self, task_id: str, render_mode: str | None = None, **kwargs: Any):
        # the pool parallel_pool.make would build, from the layers below the package (which imports this module)
        from parallel_pool.frontends import GymnasiumPool
        from parallel_pool.spec import EnvSpec

        if kwargs.get("num_envs", 1) != 1:
            raise ValueError(f"a single env has num_envs=1, got num_envs={kwargs['num_envs']!r} (use make_vec)")
        kwargs.pop("num_envs", None)
        kwargs.setdefault("autoreset_mode", "disabled")
        self.pool = GymnasiumPool(EnvSpec(task_id, num_envs=1, **kwargs), render_mode=render_mode)
        self.observation_space = self.pool.single_observation_space
        self.action_space = self.pool.single_action_space
        self.render_mode = render_mode
        self.metadata = {"render_modes": ["rgb_array"], "render_fps": 30}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Start an episode; `seed` reseeds the env (the same seed gives the same episode)."""
        super().reset(seed=seed)  # gymnasium's np_random (unused by the env, which draws in C++), as check_env expects
        obs, info = self.pool.reset(seed=seed)
        return self._obs(obs), _info_row(info)

    def _obs(self, obs: Any) -> Any:
        """Env 0's observation as new arrays; a Discrete observation as np.int64, as gymnasium's envs give it."""
        if isinstance(self.observation_space, gymnasium.spaces.Discrete):
            return np.int64(np.asarray(obs)[0])
        return _row(obs)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """One step of the env with `action` (an element of `action_space`)."""
        obs, reward, terminated, truncated, info = self.pool.step(tree_map(lambda a: np.asarray(a)[None], action))
        return self._obs(obs), float(reward[0]), bool(terminated[0]), bool(truncated[0]), _info_row(info)

    def render(self) -> np.ndarray | None:
        """The env's frame (render_mode="rgb_array"), else None."""
        if self.render_mode is None:
            return None
        return self.pool.render()[0]

    def close(self) -> None:
        """Stop the env; idempotent."""
        self.pool.close()


def _row(tree: Any) -> Any:
    """Row 0 of an array or a dict of arrays, as new arrays (a caller may keep them)."""
    if isinstance(tree, dict):
        return {k: _row(v) for k, v in tree.items()}
    return np.array(tree[0])


def _info_row(info: dict[str, Any]) -> dict[str, Any]:
    """The info of env 0, without gymnasium's `_key` masks."""
    out: dict[str, Any] = {}
    for key, value in info.items():
        if key.startswith("_"):
            continue
        out[key] = _info_row(value) if isinstance(value, dict) else deepcopy(value[0])
    return out


def gymnasium_id(task_id: str) -> str:
    """The id of a task in gymnasium's registry: `ParallelPool/<id>`.

    An id with a namespace of its own (gymnasium's functional envs: `phys2d/CartPole-v1`, `tabular/Blackjack-v0`)
    keeps it after ours, `ParallelPool-phys2d/CartPole-v1`: gymnasium's ids have one namespace.
    """
    namespace, _, name = task_id.rpartition("/")
    return f"{NAMESPACE}-{namespace}/{name}" if namespace else f"{NAMESPACE}/{task_id}"


def register_envs() -> None:
    """Register every id of `list_all_envs()` as `ParallelPool/<id>` (ids already registered are left alone)."""
    from gymnasium.envs.registration import register, registry

    from parallel_pool.registry import list_all_envs

    for task_id in list_all_envs():
        gym_id = gymnasium_id(task_id)
        if gym_id in registry:
            continue
        register(
            id=gym_id,
            entry_point="parallel_pool.gymnasium_registry:SingleEnv",
            vector_entry_point="parallel_pool:make",
            kwargs={"task_id": task_id},
        )


# `annotations` is the __future__ import's flag, not part of the API (the compiler read it already): out of dir()
del annotations
