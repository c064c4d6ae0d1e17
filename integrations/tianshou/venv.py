"""Tianshou vector env over a ParallelPool pool (wiring only: `parallel_pool.translate.Translator` does the work)."""

from __future__ import annotations

from typing import Any

import numpy as np

from parallel_pool.registry import COMMON_KEYS
from parallel_pool.translate import Translator
from tianshou.env import BaseVectorEnv

# attributes Tianshou's BaseVectorEnv routes to the per-env workers (tianshou.env.venvs.GYM_RESERVED_KEYS)
_RESERVED = ("metadata", "reward_range", "spec", "action_space", "observation_space")


def _info_array(records: list[dict]) -> np.ndarray:
    arr = np.empty(len(records), dtype=object)
    arr[:] = records
    return arr


class ParallelPoolVectorEnv(BaseVectorEnv):
    """A Tianshou ``BaseVectorEnv`` stepping ``num_envs`` C++ envs in parallel.

    Tianshou's ``Collector`` and trainers accept it wherever ``DummyVectorEnv``/``SubprocVectorEnv`` are.

    Tianshou's convention is kept: ``step(action, id)`` steps the envs in ``id`` and, for an env whose episode
    ended, returns its final observation and final info (so ``obs_next`` is right for bootstrapping, and
    ``truncated`` stays distinct from ``terminated``); the collector then calls ``reset(env_id)`` for those envs.
    The engine has already reset them inside the same step (same-step autoreset), so that reset costs no engine
    call; a reset with a seed, or of envs that did not just finish, does reset them in the engine.

        train_envs = ParallelPoolVectorEnv("CartPole-v1", num_envs=8, seed=0)
        collector = tianshou.data.Collector(policy, train_envs, VectorReplayBuffer(20000, 8))

    With ``batch_size < num_envs`` the env is asynchronous (``is_async``, like Tianshou's ``wait_num``): ``step``
    sends the actions and returns the first ``batch_size`` envs that finish, ``info["env_id"]`` naming them.

    Args:
        task_id: a task id from ``parallel_pool.list_all_envs()``, or a gymnasium-front-end pool made with
            ``autoreset_mode="same_step"``.
        **kwargs: ``parallel_pool.make`` config keys (``num_envs``, ``batch_size``, ``seed``, ``num_threads``,
            ``max_episode_steps``, the task's own keys).
    """

    def __init__(self, task_id: Any, **kwargs: Any):  # noqa: D107 (BaseVectorEnv.__init__ builds workers: not used)
        if isinstance(task_id, str):
            self._tr = Translator.make(task_id, explicit_reset=True, **kwargs)
        else:
            if kwargs:
                raise ValueError(f"config keys {sorted(kwargs)} can only be given with a task id, not with a pool")
            self._tr = Translator(task_id, explicit_reset=True)
        self.pool = self._tr.env
        self.env_num = self._tr.num_envs
        self.wait_num = self._tr.batch_size
        self.timeout = None
        self.is_async = self._tr.is_async
        self.workers = []
        self.waiting_conn = []
        self.waiting_id: list[int] = []
        self.ready_id = list(range(self.env_num))
        self.is_closed = False
        self._seeds: list[int | None] = [None] * self.env_num
        self._attrs = {
            "metadata": {"render_modes": []},
            "reward_range": (-float("inf"), float("inf")),
            "spec": self.pool.spec,
            "action_space": self._tr.single_action_space,
            "observation_space": self._tr.single_observation_space,
            "render_mode": None,
        }
        self._attrs.update(self.pool.config)

    # ---- attributes ------------------------------------------------------------------------------------------
    def get_env_attr(self, key: str, id: int | list[int] | np.ndarray | None = None) -> list[Any]:
        """An env's attribute (its single-env spaces, ``spec``, ``metadata`` or a config key), one per id."""
        self._assert_is_not_closed()
        if key not in self._attrs:
            raise AttributeError(
                f"{self.pool.spec.task_id} envs run {self.pool.spec.runs_where} and have no Python attribute {key!r}; "
                f"available: {sorted(self._attrs)}"
            )
        if key in self.pool.config:  # config keys may differ per env
            return [self.pool.get_config(int(i))[key] for i in self._wrap_id(id)]
        return [self._attrs[key] for _ in self._wrap_id(id)]

    def set_env_attr(self, key: str, value: Any, id: int | list[int] | np.ndarray | None = None) -> None:
        """A config key's new value for these envs, applied at each env's next reset (docs/per-env.md)."""
        self._assert_is_not_closed()
        if key in self.pool.config and key not in COMMON_KEYS:  # an env's own key (the pool's own are fixed)
            self.pool.set_config(list(self._wrap_id(id)), **{key: value})
            return
        raise AttributeError(
            f"cannot set {key!r} on {self.pool.spec.task_id} envs: they run {self.pool.spec.runs_where} and have no "
            "Python attributes; pass config keys when making the env"
        )

    # ---- stepping --------------------------------------------------------------------------------------------
    def reset(self, env_id: int | list[int] | np.ndarray | None = None, **kwargs: Any) -> tuple[Any, np.ndarray]:
        """Reset the envs ``env_id`` (default: all).

        Args:
            env_id: the envs to reset; None: all.
            **kwargs: ``seed=`` (an int, or one per env) reseeds; C++ envs take no other keyword arguments.

        Returns:
            ``(obs, array of info dicts)``.
        """
        self._assert_is_not_closed()
        seed = kwargs.pop("seed", None)
        options = kwargs.pop("options", None)
        if kwargs or options:
            raise ValueError(
                f"{self.pool.spec.task_id} envs take no reset arguments besides seed; got "
                f"{sorted(kwargs) + (['options'] if options else [])}"
            )
        ids = None if env_id is None else np.atleast_1d(np.asarray(env_id, dtype=np.int64))
        targets = list(range(self.env_num)) if ids is None else [int(i) for i in ids]
        if seed is None:
            pending = [self._seeds[i] for i in targets]
            if any(s is not None for s in pending):
                if any(s is None for s in pending):
                    raise ValueError("seed() gave seeds to some of the envs being reset but not to all")
                seed = np.asarray(pending, dtype=np.int64)
        for i in targets:
            self._seeds[i] = None
        if self.is_async and ids is None and self.waiting_id:
            # a full reset discards the results still in flight (the engine must not have any pending)
            while len(self.waiting_id) >= self.wait_num:
                done_ids = set(int(e) for e in self._tr.recv().env_id)
                self.waiting_id = [x for x in self.waiting_id if x not in done_ids]
            if self.waiting_id:
                raise RuntimeError(
                    f"envs {self.waiting_id} are still stepping and fewer than batch_size "
                    f"({self.wait_num}); send actions for more envs before a reset"
                )
            self.ready_id = list(range(self.env_num))
        obs, infos = self._tr.reset(env_id=ids, seed=seed)
        return obs, _info_array(infos)

    def step(
        self, action: Any, id: int | list[int] | np.ndarray | None = None
    ) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Step the envs ``id`` (default: all) with ``action`` (one row per id).

        Returns:
            ``(obs, rew, terminated, truncated, info)``, rows in ``id`` order (sync) or in completion order
            (async: ``info[i]["env_id"]``).
        """
        self._assert_is_not_closed()
        ids = np.asarray(self._wrap_id(id), dtype=np.int32)
        if not self.is_async:
            if action is None:
                raise ValueError("action must not be None for a synchronous env")
            t = self._tr.step(action, ids)
        else:
            if action is not None:
                self._assert_id(ids)
                self._tr.send(action, ids)
                sent = set(int(i) for i in ids)
                self.waiting_id.extend(int(i) for i in ids)
                self.ready_id = [x for x in self.ready_id if x not in sent]
            if len(self.waiting_id) < self.wait_num:
                raise RuntimeError(
                    f"only {len(self.waiting_id)} envs are stepping but a batch needs "
                    f"{self.wait_num} (batch_size); send actions for more envs"
                )
            t = self._tr.recv()
            done_ids = [int(e) for e in t.env_id]
            done_set = set(done_ids)
            self.waiting_id = [x for x in self.waiting_id if x not in done_set]
            self.ready_id.extend(done_ids)
        return t.next_obs, t.reward, t.terminated, t.truncated, _info_array(t.infos)

    def seed(self, seed: int | list[int] | None = None) -> list[int | None]:
        """Seeds for the next reset of each env (an int s gives env i the seed s + i)."""
        self._assert_is_not_closed()
        if seed is None:
            seeds: list[int | None] = [None] * self.env_num
        elif isinstance(seed, (int, np.integer)):
            seeds = [int(seed) + i for i in range(self.env_num)]
        else:
            seeds = [int(s) for s in seed]
            if len(seeds) != self.env_num:
                raise ValueError(f"need {self.env_num} seeds, got {len(seeds)}")
        self._seeds = list(seeds)
        return list(seeds)

    def render(self, **kwargs: Any) -> list[Any]:
        """Not available through this adapter.

        Raises:
            NotImplementedError: always.
        """
        raise NotImplementedError(f"{self.pool.spec.task_id} envs do not render")

    def close(self) -> None:
        """Close the pool; once only, as Tianshou's vector envs allow."""
        self._assert_is_not_closed()
        self._tr.close()
        self.is_closed = True

    def __repr__(self) -> str:
        return f"ParallelPoolVectorEnv({self.pool.spec.task_id!r}, num_envs={self.env_num}, batch_size={self.wait_num})"
