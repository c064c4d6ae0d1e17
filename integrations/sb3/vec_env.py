"""Stable-Baselines3 VecEnv over a ParallelPool pool.

Wiring only: `parallel_pool.translate.Translator` does the work.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvObs, VecEnvStepReturn

from parallel_pool.schema import tree_map
from parallel_pool.translate import Translator

_ENV_METHODS = ("get_state", "set_state", "reset", "get_config", "set_config")


class ParallelPoolVecEnv(VecEnv):
    """An SB3 ``VecEnv`` stepping ``num_envs`` C++ envs in parallel.

    Same-step reset as SB3 expects: when an episode ends, the returned observation is the next episode's first one,
    ``infos[i]["terminal_observation"]`` holds the final observation and ``infos[i]["TimeLimit.truncated"]`` is
    True only for a time-limit truncation, so SB3 bootstraps truncated episodes with V(terminal observation).

        venv = ParallelPoolVecEnv("CartPole-v1", num_envs=8, seed=0)
        model = stable_baselines3.PPO("MlpPolicy", venv).learn(100_000)

    Args:
        task_id: a task id from ``parallel_pool.list_all_envs()``, or an existing gymnasium-front-end pool made with
            ``autoreset_mode="same_step"`` and ``batch_size == num_envs``.
        **kwargs: ``parallel_pool.make`` config keys (``num_envs``, ``seed``, ``num_threads``, ``max_episode_steps``,
            the task's own keys).
    """

    def __init__(self, task_id: Any, **kwargs: Any):
        keys = dict(final_obs_key="terminal_observation", truncated_key="TimeLimit.truncated")
        if isinstance(task_id, str):
            self._tr = Translator.make(task_id, **keys, **kwargs)
        else:
            if kwargs:
                raise ValueError(f"config keys {sorted(kwargs)} can only be given with a task id, not with a pool")
            self._tr = Translator(task_id, **keys)
        if self._tr.is_async:
            self._tr.close()
            raise ValueError(
                "SB3 steps every env on every step: make the pool with batch_size == num_envs "
                f"(got batch_size={self._tr.batch_size}, num_envs={self._tr.num_envs})"
            )
        self.pool = self._tr.env
        self.task_id: str = self.pool.spec.task_id
        self._config = dict(self.pool.config)
        super().__init__(self._tr.num_envs, self._tr.single_observation_space, self._tr.single_action_space)

    # ---- VecEnv API ------------------------------------------------------------------------------------------
    def reset(self) -> VecEnvObs:
        """Reset every env, with the seeds given to ``seed()`` (all or none); the observations.

        Raises:
            ValueError: reset options were set, or seeds for only some of the envs.
        """
        if any(self._options):
            raise ValueError(
                f"{self.task_id} envs take no reset options (got {self._options}); set config keys "
                "when making the env instead"
            )
        seeds = self._seeds
        if all(s is None for s in seeds):
            seed = None
        elif all(s is not None for s in seeds):
            seed = np.asarray(seeds, dtype=np.int64)
        else:
            raise ValueError(f"give a seed for every env or for none, got {seeds}")
        obs, self.reset_infos = self._tr.reset(seed=seed)
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        """Send one action per env."""
        self._tr.send(actions)

    def step_wait(self) -> VecEnvStepReturn:
        """The step's ``(obs, rewards, dones, infos)``, finished envs already reset (SB3's convention)."""
        t = self._tr.recv()
        for i, info in t.reset_infos.items():
            self.reset_infos[i] = info
        return t.obs, t.reward.astype(np.float32), t.done, t.infos

    def close(self) -> None:
        """Close the pool."""
        self._tr.close()

    # ---- per-env attributes and methods ----------------------------------------------------------------------
    def _attrs(self) -> dict[str, Any]:
        attrs = {
            "render_mode": self.pool.render_mode,
            "observation_space": self._tr.single_observation_space,
            "action_space": self._tr.single_action_space,
            "metadata": {"render_modes": [] if self.pool.render_mode is None else [self.pool.render_mode]},
            "spec": self.pool.spec,
        }
        attrs.update(self._config)
        return attrs

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """An env's attribute: its spaces, ``render_mode``, ``spec``, ``metadata`` or one of its config keys."""
        attrs = self._attrs()
        if attr_name not in attrs:
            raise AttributeError(
                f"{self.task_id} envs run {self.pool.spec.runs_where} and have no Python attribute {attr_name!r}; "
                f"available: {sorted(attrs)}"
            )
        if attr_name in self._config:  # config keys may differ per env
            return [self.pool.get_config(i)[attr_name] for i in self._get_indices(indices)]
        return [attrs[attr_name] for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Refused: the envs have no Python attributes; config keys are given when making the VecEnv.

        Raises:
            AttributeError: always.
        """
        raise AttributeError(
            f"cannot set {attr_name!r} on {self.task_id} envs: they run {self.pool.spec.runs_where} and have no Python "
            f"attributes; pass config keys when making the env, e.g. "
            f"ParallelPoolVecEnv({self.task_id!r}, {attr_name}=...)"
        )

    def env_method(self, method_name: str, *method_args, indices: VecEnvIndices = None, **method_kwargs) -> list[Any]:
        """Call a per-env method on the envs ``indices``.

        The methods: ``get_state()``, ``set_state(state)``, ``reset()``, ``get_config()`` and
        ``set_config(**values)`` (applied at each env's next reset; see docs/per-env.md).

        Raises:
            AttributeError: another method name (the message lists the available ones).
        """
        if method_name not in _ENV_METHODS:
            raise AttributeError(
                f"{self.task_id} envs run {self.pool.spec.runs_where} and have no method {method_name!r}; "
                f"available: {list(_ENV_METHODS)}"
            )
        ids = list(self._get_indices(indices))
        if method_name == "get_state":
            return [self.pool.get_state(i, *method_args, **method_kwargs) for i in ids]
        if method_name == "set_state":
            return [self.pool.set_state(i, *method_args, **method_kwargs) for i in ids]
        if method_name == "get_config":
            return [self.pool.get_config(i) for i in ids]
        if method_name == "set_config":
            self.pool.set_config(ids, *method_args, **method_kwargs)
            return [None for _ in ids]
        obs, infos = self._tr.reset(env_id=ids, **method_kwargs)
        for row, i in enumerate(ids):
            self.reset_infos[i] = infos[row]
        return [(tree_map(itemgetter(row), obs), infos[row]) for row in range(len(ids))]

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        """False for every env: C++ envs carry no gymnasium wrappers."""
        return [False for _ in self._get_indices(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        """Each env's RGB frame (SB3's render() tiles them); needs the VecEnv made with render_mode="rgb_array"."""
        if self.pool.render_mode is None:
            raise ValueError(f"{self.task_id}: make the VecEnv with render_mode='rgb_array' to get images")
        return list(self.pool.render())

    def __repr__(self) -> str:
        return f"ParallelPoolVecEnv({self.task_id!r}, num_envs={self.num_envs})"


def make_vec_env(task_id: str, n_envs: int = 1, seed: int | None = None, **kwargs: Any) -> ParallelPoolVecEnv:
    """``n_envs`` envs of ``task_id`` as one VecEnv, like ``stable_baselines3.common.env_util.make_vec_env``.

    Args:
        task_id: a task id from ``parallel_pool.list_all_envs()``.
        n_envs: how many envs.
        seed: env i is seeded with ``seed + i`` (None: the task's default seed).
        **kwargs: ``parallel_pool.make`` config keys.

    Returns:
        The VecEnv.
    """
    if seed is not None:
        kwargs["seed"] = seed
    return ParallelPoolVecEnv(task_id, num_envs=n_envs, **kwargs)
