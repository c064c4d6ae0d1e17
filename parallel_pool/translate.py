"""One translator from the pool's batched results to the per-env conventions RL frameworks consume.

Frameworks (SB3, Tianshou, CleanRL-style loops, ...) differ in how they want an episode end delivered, but all need
the same four things, and getting any of them wrong silently corrupts training:

1. **same-step reset**: the observation returned for an env that just finished is already its next episode's first
   observation, so the agent can act on every env every step;
2. **the final observation kept**: the true last observation of the finished episode, for value bootstrapping;
3. **truncation distinct from termination**: a time limit is not a terminal state (bootstrap with V(final obs));
4. **per-env info records**: one dict per env (the final step's info for an env that finished), plus its reset info.

The engine implements gymnasium's SAME_STEP autoreset natively (``make(..., autoreset_mode="same_step")``): a finished
env is reset inside the same call on the worker thread and the final observation/info come back as ``final_obs`` /
``final_info``. `Translator` builds on that, so no extra engine call is ever made for a reset. The SB3 and Tianshou
adapters only wire a `Translator` to their framework's base class; rl_games takes batched arrays and uses this
module's batched helpers (`successor_obs`, `final_value`) instead (docs/architecture.md lists all five).

For frameworks that reset finished envs themselves (Tianshou, dm_env-style loops), `Translator.step` also keeps each
finished env's reset observation/info, and `Translator.reset(env_id)` hands them out without touching the engine
(`explicit_reset=True`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from parallel_pool.schema import row_info, tree_map

__all__ = ["Translator", "Transition", "final_value", "successor_obs"]


def _stack(trees: Any) -> Any:
    """Rows (each an array or a dict of arrays) stacked into one batch of the same form."""
    return tree_map(lambda *rows: np.stack(rows), *trees)


def successor_obs(obs: Any, final_obs: np.ndarray, done: np.ndarray) -> Any:
    """The true successor observation of each row of a same-step batch: `obs` (a copy), with the episode's final
    observation (`info["final_obs"]`) in the rows whose episode ended."""
    out = tree_map(np.array, obs)  # a copy
    idx = np.flatnonzero(done)

    def put(array: np.ndarray, rows: np.ndarray) -> None:
        array[idx] = rows

    if len(idx):
        tree_map(put, out, _stack([final_obs[i] for i in idx]))  # in place, key by key
    return out


def final_value(info: dict, key: str, done: np.ndarray) -> np.ndarray | None:
    """info[key] as of the step that ended each row's episode (None when the pool has no such key): same-step
    autoreset puts the reset step's value in info and the final step's in info["final_info"]. The batched form of
    what `Translator` puts into each finished row's record (rl_games takes batched infos)."""
    if key not in info:
        return None
    value = info[key]
    final = info.get("final_info", {})
    if done.any() and key in final:
        value = np.where(done.reshape((-1,) + (1,) * (np.ndim(value) - 1)), final[key], value)  # rows, any row shape
    return value


@dataclass
class Transition:
    """One batch of results, translated. Row i belongs to env ``env_id[i]``.

    obs:        what to act on next: for an env whose episode ended this step, its reset observation.
    next_obs:   the true successor observation: for an env whose episode ended, its final observation
                (what bootstrapping needs); elsewhere the same as ``obs``.
    reward, terminated, truncated: as the env returned them (truncated is never set together with terminated).
    infos:      one dict per row: the step's info; for an env whose episode ended, the final step's info,
                plus the translator's ``final_obs_key`` / ``truncated_key`` entries when those are configured.
    reset_infos: row index -> reset info, for the rows whose episode ended.
    """

    obs: Any
    next_obs: Any
    reward: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    env_id: np.ndarray
    infos: list[dict]
    reset_infos: dict[int, dict] = field(default_factory=dict)

    @property
    def done(self) -> np.ndarray:
        return self.terminated | self.truncated


class Translator:
    """Wraps a pool made with ``autoreset_mode="same_step"`` (gymnasium front-end) and returns `Transition`s.

    Args:
        env: a pool from ``parallel_pool.make(task_id, env_type="gymnasium", autoreset_mode="same_step", ...)``
            (use `Translator.make` to create one), or the agents-as-rows view of a multi-player pool,
            ``parallel_pool.make_pettingzoo(..., view="agent_rows", autoreset_mode="same_step")`` (a row per agent).
        final_obs_key: info key that receives the final observation of a finished episode (SB3:
            ``"terminal_observation"``); None adds none.
        truncated_key: info key set on every row to ``truncated and not terminated`` (SB3: ``"TimeLimit.truncated"``);
            None adds none.
        explicit_reset: keep finished envs' reset observations for `reset(env_id)` (frameworks that reset
            finished envs themselves).
    """

    def __init__(
        self, env: Any, final_obs_key: str | None = None, truncated_key: str | None = None, explicit_reset: bool = False
    ):
        if getattr(env, "autoreset_mode", None) != AutoresetMode.SAME_STEP:
            got = getattr(env, "config", {}).get("autoreset_mode")  # a pool's config is a dict
            raise ValueError(
                f"the framework adapters need a pool made with autoreset_mode='same_step' (this one has {got!r}): "
                "give the adapter the task id and it makes one, or make it with parallel_pool.make(task_id, "
                "autoreset_mode='same_step', ...)"
            )
        # rows that are players of several envs have no per-row final observation (the agents-as-rows view of a
        # multi-player pool, `make_pettingzoo(view="agent_rows")`, has: one player per row)
        if getattr(env, "max_num_players", 1) != 1:
            raise ValueError(
                f"{env.spec.task_id} is a multi-player env ({env.max_num_players} players); "
                "framework adapters support single-player envs only, or a multi-player env's agents as rows "
                "(make_pettingzoo(..., view='agent_rows', autoreset_mode='same_step'))"
            )
        self.env = env
        self.spec = env.spec  # the pool's EnvSpec; None for the agents-as-rows view (its pool has it)
        self.num_envs: int = env.num_envs
        self.batch_size: int = env.batch_size
        self.is_async: bool = env.is_async
        self.single_observation_space = env.single_observation_space
        self.single_action_space = env.single_action_space
        self.final_obs_key = final_obs_key
        self.truncated_key = truncated_key
        self.explicit_reset = explicit_reset
        self._pending: dict[int, tuple[Any, dict]] = {}  # env_id -> (reset obs row, reset info) (explicit_reset)
        self._skip = ("players", "final_obs", "final_info")
        self._action_dtype = self._find_action_dtype()

    @classmethod
    def make(
        cls,
        task_id: str | None,
        final_obs_key: str | None = None,
        truncated_key: str | None = None,
        explicit_reset: bool = False,
        **kwargs: Any,
    ) -> Translator:
        """Make a same-step pool of ``task_id`` (or of ``env_fn=`` in ``kwargs``: parallel_pool.make's arguments)
        and wrap it."""
        import parallel_pool
        from parallel_pool.registry import autoreset_mode_name

        mode = kwargs.pop("autoreset_mode", "same_step")
        if autoreset_mode_name(mode) != "same_step":
            raise ValueError(f"framework adapters run the pool with autoreset_mode='same_step', got {mode!r}")
        env = parallel_pool.make(task_id, env_type="gymnasium", autoreset_mode="same_step", **kwargs)
        return cls(env, final_obs_key, truncated_key, explicit_reset)

    # ---- actions ----------------------------------------------------------------------------------------
    def _find_action_dtype(self):
        import gymnasium as gym

        space = self.single_action_space
        if isinstance(space, gym.spaces.Box):
            return space.dtype
        return None

    def action(self, actions: Any) -> Any:
        """Frameworks hand actions over as torch tensors, lists or float32 arrays; give the engine its dtype."""
        if hasattr(actions, "detach"):  # a torch tensor
            actions = actions.detach().cpu().numpy()
        if isinstance(actions, dict):
            return actions
        actions = np.asarray(actions)
        if self._action_dtype is not None and actions.dtype != self._action_dtype:
            actions = actions.astype(self._action_dtype)
        elif self._action_dtype is None and actions.ndim == 2 and actions.shape[1] == 1:
            actions = actions[:, 0]  # Discrete actions given as a column (n, 1)
        return actions

    # ---- per-env records --------------------------------------------------------------------------------
    def _flat_info(self, info: dict) -> list[tuple[Any, Any, Any, bool]]:
        """(key, batched value, its `_key` mask or None where every row has it, nested) of each key, once a batch."""
        flat = []
        for k, v in info.items():
            if k in self._skip or (type(k) is str and k[:1] == "_" and k[1:] in info):
                continue
            mask = info.get(f"_{k}")
            nested = isinstance(v, dict)
            flat.append((k, v, None if mask is None or (not nested and mask.all()) else mask, nested))
        return flat

    def records(self, info: dict, n: int, rows: Any = None) -> list[dict]:
        """The batched info dict as one dict per row (of `rows`, default all n): the keys the row's env returned
        (those whose `_key` mask is True in that row), scalars as numpy scalars, arrays as row views, nested dicts
        alike."""
        flat = self._flat_info(info)
        return [
            {k: (row_info(v, i) if nested else v[i]) for k, v, mask, nested in flat if mask is None or mask[i]}
            for i in (range(n) if rows is None else rows)
        ]

    # ---- calls ------------------------------------------------------------------------------------------
    def reset(self, env_id: Any = None, seed: Any = None) -> tuple[Any, list[dict]]:
        """Reset env_id (default: all). Returns (obs, one info dict per row).

        With ``explicit_reset``, envs whose episode ended since their last step return the reset observation the
        engine already produced (no engine call), unless a seed is given."""
        if env_id is None:
            self._pending.clear()
            if self.is_async:
                return self._reset_all_async(seed)
            obs, info = self.env.reset(seed=seed)
            return obs, self.records(info, self.num_envs)
        ids = np.atleast_1d(np.asarray(env_id))  # not cast: a cast would wrap or truncate an id the engine rejects
        if ids.ndim != 1 or len(ids) == 0:
            raise ValueError(f"env_id must be an int or a non-empty 1-D sequence of ints, got {env_id!r}")
        if not np.issubdtype(ids.dtype, np.integer):
            raise TypeError(f"env_id must be integers, got dtype {ids.dtype}")
        if seed is None and self._pending and all(int(i) in self._pending for i in ids):
            rows = [self._pending.pop(int(i)) for i in ids]
            return _stack([r[0] for r in rows]), [r[1] for r in rows]
        for i in ids:
            self._pending.pop(int(i), None)
        if self.is_async:
            raise ValueError(
                "resetting a subset of envs of an async pool (batch_size < num_envs) is not "
                "supported; reset all envs or use a sync pool"
            )
        obs, info = self.env.reset(seed=seed, env_id=ids)  # not narrowed: the engine checks the range
        return obs, self.records(info, len(ids))

    def _reset_all_async(self, seed: Any) -> tuple[Any, list[dict]]:
        """An async pool's reset returns batch_size envs; frameworks want all of them, in env_id order."""
        if self.num_envs % self.batch_size:
            raise ValueError(
                f"resetting every env of an async pool needs num_envs ({self.num_envs}) to be a "
                f"multiple of batch_size ({self.batch_size})"
            )
        self.env.async_reset(seed=seed)
        parts, records, ids = [], [], []
        for _ in range(self.num_envs // self.batch_size):
            obs, _, _, _, info = self.env.recv()
            parts.append(obs)
            records += self.records(info, self.batch_size)
            ids.append(info["env_id"])
        order = np.argsort(np.concatenate(ids), kind="stable")
        obs = tree_map(lambda *ps: np.concatenate(ps)[order], *parts)
        return obs, [records[i] for i in order]

    def step(self, actions: Any, env_id: Any = None) -> Transition:
        """Step env_id (default: all; sync pools) and translate the result."""
        actions = self.action(actions)
        # (the agents-as-rows view steps every row: its step takes no env_id)
        return self._translate(self.env.step(actions) if env_id is None else self.env.step(actions, env_id))

    def send(self, actions: Any, env_id: Any = None) -> None:
        self.env.send(self.action(actions), env_id)

    def recv(self) -> Transition:
        return self._translate(self.env.recv())

    def async_reset(self) -> None:
        self._pending.clear()
        self.env.async_reset()

    def close(self) -> None:
        self.env.close()

    # ---- the translation --------------------------------------------------------------------------------
    def _translate(self, out) -> Transition:
        obs, reward, terminated, truncated, info = out
        env_id = info["env_id"]
        n = len(reward)
        done = terminated | truncated
        if not done.any():
            infos = self.records(info, n)
            if self.truncated_key is not None:
                for rec in infos:
                    rec[self.truncated_key] = False
            if self._pending:
                for e in env_id:
                    self._pending.pop(int(e), None)
            return Transition(obs, obs, reward, terminated, truncated, env_id, infos)

        final_obs = info["final_obs"]
        infos = self.records(info, n)
        reset_infos: dict[int, dict] = {}
        ended = np.flatnonzero(done).tolist()
        for i, rec in zip(ended, self.records(info["final_info"], n, ended)):
            reset_infos[i], infos[i] = infos[i], rec  # the finished episode's last info; its reset info beside it
            if self.final_obs_key is not None:
                rec[self.final_obs_key] = final_obs[i]
        if self.truncated_key is not None:
            for i, rec in enumerate(infos):
                rec[self.truncated_key] = bool(truncated[i] and not terminated[i])
        next_obs = successor_obs(obs, final_obs, done)
        if self.explicit_reset:
            for i in range(n):
                e = int(env_id[i])
                if done[i]:
                    self._pending[e] = (tree_map(np.array, tree_map(itemgetter(i), obs)), reset_infos[i])
                else:
                    self._pending.pop(e, None)
        return Transition(obs, next_obs, reward, terminated, truncated, env_id, infos, reset_infos)
