"""Stable-Baselines3 VecEnv over a ParallelPool pool.

Wiring only: `parallel_pool.translate.Translator` does the work.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvObs, VecEnvStepReturn

import parallel_pool
from parallel_pool.multi_agent import AgentRowsEnv
from parallel_pool.pool import BasePool
from parallel_pool.schema import tree_map
from parallel_pool.translate import Translator

_ENV_METHODS = ("get_state", "set_state", "reset", "get_config", "set_config")


def _checked_pool(pool: BasePool, kwargs: dict[str, Any]) -> BasePool:
    """A pool given to ParallelPoolVecEnv: one that SB3 can step, else an error that says what to pass instead."""
    task = pool.spec.task_id
    if kwargs:
        raise ValueError(
            f"config keys {sorted(kwargs)} configure a pool the VecEnv makes, but a made pool ({task}) was given: "
            f"pass the task id instead (ParallelPoolVecEnv({task!r}, {', '.join(f'{k}=...' for k in sorted(kwargs))}))"
        )
    if pool.spec.config.autoreset_mode != "same_step" or getattr(pool, "single_observation_space", None) is None:
        raise ValueError(
            f"SB3 needs a pool of the gymnasium front-end with same-step resets; this {type(pool).__name__} of "
            f"{task} has autoreset_mode={pool.spec.config.autoreset_mode!r}. Pass the task id and the VecEnv makes "
            f"its own pool (ParallelPoolVecEnv({task!r}, num_envs={pool.num_envs})), or make the pool with "
            "parallel_pool.make(..., autoreset_mode='same_step')"
        )
    return pool


class ParallelPoolVecEnv(VecEnv):
    """An SB3 ``VecEnv`` stepping ``num_envs`` envs in parallel.

    Same-step reset as SB3 expects: when an episode ends, the returned observation is the next episode's first one,
    ``infos[i]["terminal_observation"]`` holds the final observation and ``infos[i]["TimeLimit.truncated"]`` is
    True only for a time-limit truncation, so SB3 bootstraps truncated episodes with V(terminal observation).

        venv = ParallelPoolVecEnv("CartPole-v1", num_envs=8, seed=0)
        venv = ParallelPoolVecEnv(env_fn=MyEnv, num_envs=8)  # any gymnasium.Env, in worker processes
        model = stable_baselines3.PPO("MlpPolicy", venv).learn(100_000)

    Args:
        task_id: a task id (``parallel_pool.list_all_envs()``, or an id of gymnasium's registry: a Python env); a
            callable returning a ``gymnasium.Env`` (as ``env_fn``); or a pool of the gymnasium front-end made with
            ``autoreset_mode="same_step"`` and ``batch_size == num_envs``.
        env_fn: a callable returning a ``gymnasium.Env``, run in worker processes (instead of ``task_id``).
        **kwargs: ``parallel_pool.make``'s arguments (``num_envs``, ``seed``, ``num_threads``, ``max_episode_steps``,
            the task's own keys; for ``env_fn``, its keyword arguments), when the VecEnv makes the pool.

    Raises:
        ValueError: a pool that was not made for SB3 (another autoreset mode, an async pool), or config keys given
            with a pool; the message says what to pass instead.
        TypeError: something that is neither a task id, a callable nor a pool.
    """

    _rows_per_env = 1  # the VecEnv's rows of one env of the pool

    def __init__(self, task_id: Any = None, *, env_fn: Any = None, **kwargs: Any):
        keys = dict(final_obs_key="terminal_observation", truncated_key="TimeLimit.truncated")
        if isinstance(task_id, BasePool):
            self._tr = Translator(_checked_pool(task_id, kwargs), **keys)
        elif isinstance(task_id, str) or env_fn is not None:
            self._tr = Translator.make(task_id, **keys, env_fn=env_fn, **kwargs)
        elif callable(task_id):
            self._tr = Translator.make(None, **keys, env_fn=task_id, **kwargs)
        else:
            raise TypeError(
                "ParallelPoolVecEnv takes a task id (ParallelPoolVecEnv('CartPole-v1', num_envs=8)), env_fn=<callable "
                f"returning a gymnasium.Env>, or a pool made by parallel_pool.make; got {task_id!r}"
            )
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
            seed = np.asarray(seeds[:: self._rows_per_env], dtype=np.int64)  # one per env of the pool
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


class AgentRowsVecEnv(ParallelPoolVecEnv):
    """An SB3 ``VecEnv`` with a row per agent of every env of a multi-agent pool: one policy shared by the agents.

    SB3 trains it unchanged: what SuperSuit's ``pettingzoo_env_to_vec_env_v1`` + ``concat_vec_envs_v1`` give SB3.

    ``num_envs`` is the pool's envs x agents; row ``e * num_agents + j`` is agent ``possible_agents[j]`` of env
    ``e``; the spaces are one agent's (every agent must have the same ones). When an env's episode ends, all its rows
    are done and return the next episode's first observations, ``infos[r]["terminal_observation"]`` holding each
    row's last one (``"TimeLimit.truncated"`` as in ``ParallelPoolVecEnv``). ``infos[r]`` also holds ``env_id``,
    ``agent`` (the index j), ``active`` and ``elapsed_step``. An agent that leaves before its env ends (PettingZoo
    envs) is done at that step; its row then reads zeros with reward 0 and ``active`` False, and is done again
    (terminated) when the env ends, so that no return runs on into the env's next episode.

        venv = AgentRowsVecEnv("MPE/simple_spread-v3", num_envs=8)  # 24 rows
        venv = AgentRowsVecEnv(env_fn=pettingzoo_parallel_env_fn, num_envs=8)  # in worker processes
        model = stable_baselines3.PPO("MlpPolicy", venv).learn(100_000)

    Args:
        task_id: a multi-agent task id (``MPE/simple_spread-v3``, a C++ multi-player env), a callable returning a
            PettingZoo env (as ``env_fn``), or a view made by ``parallel_pool.make_pettingzoo(..., view="agent_rows",
            autoreset_mode="same_step")``.
        env_fn: a callable returning a PettingZoo ``ParallelEnv`` (or an AEC env PettingZoo can convert).
        **kwargs: ``parallel_pool.make_pettingzoo``'s arguments (``num_envs`` counts envs, not rows; ``seed``, the
            task's own keys), when the VecEnv makes the pool.

    Raises:
        ValueError: agents with other spaces, an async pool, another autoreset mode, config keys given with a view.
        TypeError: something that is neither a task id, a callable nor an agents-as-rows view.
    """

    def __init__(self, task_id: Any = None, *, env_fn: Any = None, **kwargs: Any):
        keys = dict(final_obs_key="terminal_observation", truncated_key="TimeLimit.truncated")
        if isinstance(task_id, AgentRowsEnv):
            if kwargs or env_fn is not None:
                raise ValueError(
                    f"config keys {sorted(kwargs)} (or env_fn) configure a pool the VecEnv makes, but a made view was "
                    "given: pass the task id (or env_fn) and the keys instead"
                )
            rows = task_id
        elif isinstance(task_id, str) or env_fn is not None or callable(task_id):
            if not isinstance(task_id, str) and env_fn is None:
                task_id, env_fn = None, task_id
            kwargs.setdefault("autoreset_mode", "same_step")  # another mode: the translator says what to pass
            rows = parallel_pool.make_pettingzoo(task_id, view="agent_rows", env_fn=env_fn, **kwargs)
        else:
            raise TypeError(
                "AgentRowsVecEnv takes a multi-agent task id (AgentRowsVecEnv('MPE/simple_spread-v3', num_envs=8)), "
                "env_fn=<callable returning a PettingZoo env>, or a view made by parallel_pool.make_pettingzoo(..., "
                f"view='agent_rows', autoreset_mode='same_step'); got {task_id!r}"
            )
        try:
            self._tr = Translator(rows, **keys)
        except Exception:
            if rows is not task_id:  # the view made here (a view given stays the caller's)
                rows.close()
            raise
        self.rows = rows
        self.pool = rows.pool
        self.num_agents: int = rows.num_agents
        self._rows_per_env = rows.num_agents
        self.task_id = self.pool.spec.task_id
        self._config = dict(self.pool.config)
        self._actions: Any = None
        VecEnv.__init__(self, rows.num_envs, rows.single_observation_space, rows.single_action_space)

    def step_async(self, actions: np.ndarray) -> None:
        """Keep one action per row for ``step_wait`` (every row of every env steps together)."""
        self._actions = actions

    def step_wait(self) -> VecEnvStepReturn:
        """The step's ``(obs, rewards, dones, infos)``, rows of ended envs already reset (SB3's convention)."""
        actions, self._actions = self._actions, None
        t = self._tr.step(actions)
        for i, info in t.reset_infos.items():
            self.reset_infos[i] = info
        return t.obs, t.reward.astype(np.float32), t.done, t.infos

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """A row's attribute: its spaces, ``render_mode``, ``spec``, ``metadata`` or a config key of its env."""
        if attr_name in self._config:  # config keys may differ per env: each row reads its env's
            envs = [i // self.num_agents for i in self._get_indices(indices)]
            return [self.pool.get_config(e)[attr_name] for e in envs]
        return ParallelPoolVecEnv.get_attr(self, attr_name, indices)

    def env_method(self, method_name: str, *method_args, indices: VecEnvIndices = None, **method_kwargs) -> list[Any]:
        """``get_config()`` of each row's env; the other per-env methods act on a whole env, not on one agent.

        Raises:
            AttributeError: another method name (the message says why).
        """
        if method_name != "get_config":
            raise AttributeError(
                f"{self.task_id}: a row is one agent of an env; the env's agents reset together when its episode ends, "
                f"and there is no per-row method {method_name!r} (available: ['get_config']; per-env methods: "
                "parallel_pool.make_pettingzoo's pool)"
            )
        return [self.pool.get_config(i // self.num_agents) for i in self._get_indices(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        """Each env's RGB frame, one per env (not per row); needs render_mode="rgb_array"."""
        return ParallelPoolVecEnv.get_images(self)

    def __repr__(self) -> str:
        return f"AgentRowsVecEnv({self.task_id!r}, num_envs={self.num_envs}, num_agents={self.num_agents})"


def make_vec_env(
    env_id: str | Callable[..., Any],
    n_envs: int = 1,
    seed: int | None = None,
    start_index: int = 0,
    monitor_dir: str | None = None,
    wrapper_class: Callable[..., Any] | None = None,
    env_kwargs: dict[str, Any] | None = None,
    vec_env_cls: type | None = None,
    vec_env_kwargs: dict[str, Any] | None = None,
    monitor_kwargs: dict[str, Any] | None = None,
    wrapper_kwargs: dict[str, Any] | None = None,
) -> VecEnv:
    """SB3's ``make_vec_env`` over one pool: ``n_envs`` envs of ``env_id``, in a ``VecMonitor``.

    Takes ``stable_baselines3.common.env_util.make_vec_env``'s arguments. The pool replaces SB3's per-env
    ``Monitor`` + ``DummyVecEnv``: a ``VecMonitor`` records each episode's return and length in
    ``info["episode"]`` (what SB3 logs as ``rollout/ep_rew_mean``), to ``monitor_dir/monitor.csv`` when given.

        venv = make_vec_env("CartPole-v1", n_envs=8, seed=0)
        model = stable_baselines3.PPO("MlpPolicy", venv).learn(100_000)

    Args:
        env_id: a task id (C++, or an id of gymnasium's registry), or a callable returning a ``gymnasium.Env``.
        n_envs: how many envs.
        seed: env i is seeded with ``seed + start_index + i`` (None: the task's default seed).
        start_index: added to the seed, as SB3 does.
        monitor_dir: where ``VecMonitor`` writes ``monitor.csv`` (None: no file).
        wrapper_class: a gymnasium wrapper applied to each env in its worker process (Python envs: a callable
            ``env_id`` or an id of gymnasium's registry, which then runs gymnasium's env, not the C++ port).
        env_kwargs: the task's config keys (C++ ids), or the keyword arguments of ``env_id``'s callable or of
            ``gymnasium.make``.
        vec_env_cls: None or ``ParallelPoolVecEnv`` (the pool is the VecEnv).
        vec_env_kwargs: more ``parallel_pool.make`` arguments (``num_threads``, ``max_episode_steps``, ...).
        monitor_kwargs: ``VecMonitor``'s other arguments (``info_keywords``).
        wrapper_kwargs: ``wrapper_class``'s keyword arguments.

    Returns:
        The VecEnv (a ``VecMonitor`` around a ``ParallelPoolVecEnv``).

    Raises:
        ValueError: a ``vec_env_cls`` other than ParallelPoolVecEnv, or a ``wrapper_class`` for an id that runs in
            C++ and is not in gymnasium's registry.
    """
    from stable_baselines3.common.vec_env import VecMonitor

    if vec_env_cls not in (None, ParallelPoolVecEnv):
        raise ValueError(
            f"vec_env_cls={getattr(vec_env_cls, '__name__', vec_env_cls)}: the pool is the VecEnv here (it replaces "
            "DummyVecEnv and SubprocVecEnv); leave vec_env_cls out, or use SB3's own make_vec_env for that class"
        )
    kwargs = {**(vec_env_kwargs or {}), "num_envs": n_envs}
    if seed is not None:
        kwargs["seed"] = seed + start_index
    env_kwargs = dict(env_kwargs or {})
    if wrapper_class is not None:
        env_fn = _wrapped_env_fn(env_id, env_kwargs, wrapper_class, dict(wrapper_kwargs or {}))
        venv = ParallelPoolVecEnv(env_fn=env_fn, **kwargs)
    elif callable(env_id):
        venv = ParallelPoolVecEnv(env_fn=env_id, **env_kwargs, **kwargs)
    else:
        venv = ParallelPoolVecEnv(env_id, **env_kwargs, **kwargs)
    filename = None if monitor_dir is None else os.path.join(monitor_dir, "monitor.csv")
    if monitor_dir is not None:
        os.makedirs(monitor_dir, exist_ok=True)
    return VecMonitor(venv, filename=filename, **(monitor_kwargs or {}))


def _wrapped_env_fn(env_id: Any, env_kwargs: dict, wrapper_class: Callable, wrapper_kwargs: dict) -> Callable[[], Any]:
    """An env_fn building ``wrapper_class(env)`` in the worker: env from ``env_id``'s callable or gymnasium.make."""
    if isinstance(env_id, str):
        import gymnasium

        if env_id not in gymnasium.registry:
            raise ValueError(
                f"wrapper_class: {env_id!r} runs in C++, where there is no Python env to wrap, and is not in "
                "gymnasium's registry; pass a callable returning the gymnasium.Env instead"
            )

        def base() -> Any:
            return gymnasium.make(env_id, **env_kwargs)
    else:

        def base() -> Any:
            return env_id(**env_kwargs)

    def env_fn() -> Any:
        return wrapper_class(base(), **wrapper_kwargs)

    return env_fn
