"""The three front-ends: gymnasium (a real gymnasium.vector.VectorEnv), gym-style (EnvPool 1.x), dm_env.

Each front-end has ONE function from a raw engine batch to its result (`gym_result`, `dm_result`); the Python API
calls it on numpy arrays and parallel_pool.xla calls the same function on jax arrays (`xp` is the array module), so
`recv()` and `env.xla()` cannot disagree. The only difference `xp` makes: on numpy, same-step autoreset's
`final_obs` is gymnasium's object array (None where no episode ended) and the final keys are left out when no
episode ended, as gymnasium's SyncVectorEnv does; under jax (fixed shapes) they are always present and dense, with
zeros where no episode ended.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence
from operator import itemgetter
from typing import Any

import dm_env
import gymnasium
import numpy as np
from gymnasium.vector import VectorEnv
from gymnasium.vector.utils import batch_space
from numpy import ndarray  # a module global: `np.ndarray` is a slow attribute load per call (numpy's module)

from parallel_pool.pool import BasePool, KeptRows
from parallel_pool.schema import Schema, row_info, tree_map
from parallel_pool.spec import AutoresetMode, EnvSpec


def _info_masks(schema: Schema, n: int, player_rows: int, xp: Any) -> tuple[dict[str, Any], Any]:
    """Gymnasium's `_key` masks for an info dict whose every row has every key (all True).

    Also the mask of the player rows.
    """

    def true(rows: int) -> Any:
        if xp is np:
            # shared by every step's info (see _info_template), so read-only for good: a view of immutable bytes,
            # whose WRITEABLE flag cannot be set back (an owned array's can), so that writing into one step's
            # mask can never change another step's info, held or not
            return np.frombuffer(b"\x01" * rows, dtype=bool)
        return xp.ones(rows, dtype=bool)

    env_mask, player_mask = true(n), true(player_rows)
    masks = {"_env_id": env_mask, "_elapsed_step": env_mask, "_players": env_mask}
    for k in schema.info_keys:
        masks["_" + k] = player_mask if schema.field("info:" + k).per_player else env_mask
    return masks, player_mask


def _info_template(schema: Schema, n: int, player_rows: int) -> tuple[dict[str, Any], np.ndarray]:
    """The numpy info dict of an (n envs, player_rows) batch with its per-step values left as None.

    The keys in their order and gymnasium's `_key` masks, which are the same on every step. Built once per batch
    shape and copied per step (a dict copy and a few item stores cost less than building the dict, which is most
    of a 1-env step's Python).
    """
    cached = schema.mask_cache.get((n, player_rows))
    if cached is None:
        masks, player_mask = _info_masks(schema, n, player_rows, np)
        template: dict[str, Any] = {"env_id": None, "elapsed_step": None, "players": None}
        template.update((key, None) for key in schema.info_keys)
        template.update(masks)
        cached = schema.mask_cache[(n, player_rows)] = (template, player_mask)
    return cached


# ---- info entries without a typed column (envs written in Python): gymnasium's vector convention ---------------


def _new_array(value: Any, n: int) -> np.ndarray:
    """The batch array gymnasium's VectorEnv._add_info starts for a key's first value.

    Zeros of a number's type or an array's dtype and shape, else an object array of None.
    """
    if type(value) in (int, float, bool) or isinstance(value, (np.number, np.bool_)):
        return np.zeros(n, dtype=np.asarray(value).dtype)
    if isinstance(value, np.ndarray):
        return np.zeros((n, *value.shape), dtype=value.dtype)
    return np.full(n, None, dtype=object)


def _fits(array: np.ndarray, value: Any) -> bool:
    """Whether `value` goes into a row of `array` unchanged (no cut digits, no other shape)."""
    if isinstance(value, dict):
        return False
    try:
        a = np.asarray(value)
    except Exception:  # a ragged sequence
        return False
    if a.shape != array.shape[1:] or a.dtype == object:
        return False
    if type(value) is int and array.dtype.kind in "iu":  # a Python int: by its value, not int64
        info = np.iinfo(array.dtype)
        return bool(info.min <= value <= info.max)
    return bool(np.can_cast(a.dtype, array.dtype, "safe"))


def _widened(array: np.ndarray, value: Any, mask: Any) -> np.ndarray:
    """`array` made able to hold `value`.

    Numbers of the same shape widen it (int then float: float64); anything else makes it an object array of the rows
    (None where `mask` says a row has no value).
    """
    if not isinstance(value, dict):
        try:
            a = np.asarray(value)
        except Exception:
            a = np.asarray(None)
        if a.dtype.kind in "biuf" and array.dtype.kind in "biuf" and a.shape == array.shape[1:]:
            return array.astype(np.result_type(array.dtype, a.dtype))
    out = np.full(len(array), None, dtype=object)
    for j in range(len(array)) if mask is None else np.flatnonzero(mask):
        out[j] = array[j]
    return out


def _add_entry(info: dict[str, Any], key: Any, value: Any, i: int, n: int, masks: bool) -> None:
    old = info.get(key)
    mask = info.get(f"_{key}")
    if isinstance(value, dict) and (old is None or isinstance(old, dict)):
        sub = {} if old is None else old
        for k, v in value.items():
            _add_entry(sub, k, v, i, n, masks)
        info[key] = sub
    else:
        if old is None:
            array = _new_array(value, n)
        elif isinstance(old, dict):  # a dict in other rows, another value here: one object per row
            array = np.full(n, None, dtype=object)
            for j in range(n) if mask is None else np.flatnonzero(mask).tolist():
                array[j] = row_info(old, j)
        elif old.dtype != object and not _fits(old, value):
            array = _widened(old, value, mask)
        else:
            array = old if old.flags.writeable else old.copy()
        array[i] = value
        info[key] = array
    if masks:
        if mask is None:
            mask = np.zeros(n, dtype=bool)
        elif not mask.flags.writeable:
            mask = mask.copy()
        mask[i] = True
        info[f"_{key}"] = mask


def add_entries(info: dict[str, Any], rows: Any, masks: bool = True) -> None:
    """Each row's info entries without a typed column into the batch's info dict.

    `rows`: an object array of dicts or None. As gymnasium's vector envs add an env's info (VectorEnv._add_info): a
    number or an array in an array of the batch (zeros in the other rows), anything else in an object array (None),
    nested dicts alike, with each key's `_key` mask (masks=False: none). A value that its key's array cannot hold as
    it is widens the array (an int array takes a float: float64) or makes it an object array (another shape, a str
    after numbers).
    """
    n = len(rows)
    for i, row in enumerate(rows.tolist()):
        if row:
            for key, value in row.items():
                _add_entry(info, key, value, i, n, masks)


def _zero_where_not(xp: Any, done: Any, value: Any) -> Any:
    """`value` with the rows where `done` is False zeroed (gymnasium's final_info for envs that did not finish)."""
    cond = done.reshape(done.shape + (1,) * (value.ndim - 1))
    return xp.where(cond, value, xp.zeros((), dtype=value.dtype))


def gym_info(schema: Schema, arrays: Sequence[Any], xp: Any = np, masks: bool = True) -> dict[str, Any]:
    """The info dict (EnvPool's keys) of a raw batch.

    With gymnasium's `_key` masks (every row has every key) unless masks=False (EnvPool's gym API has none).
    """
    if schema.extra is not None:  # a Python env's layout grows as info keys are seen (process_engine)
        schema.refresh(arrays)
    penv, env_id = arrays[schema.players_env_id], arrays[schema.env_id]
    if masks and xp is np:  # the per-step path: a copy of the shape's template, its None values filled in
        template, player_mask = _info_template(schema, env_id.shape[0], penv.shape[0])
        info = template.copy()
        info["env_id"], info["elapsed_step"] = env_id, arrays[schema.elapsed_step]
        info["players"] = {"env_id": penv, "_env_id": player_mask}
        for key, i in schema.info_at:
            info[key] = arrays[i]
        if schema.extra is not None:  # a Python env's: which rows had each key, and the entries without a column
            for key, i in schema.mask_at:
                info["_" + key] = arrays[i]
            add_entries(info, arrays[schema.extra])
        return info
    players = {"env_id": penv}
    info = {"env_id": env_id, "elapsed_step": arrays[schema.elapsed_step], "players": players}
    for key, i in schema.info_at:
        info[key] = arrays[i]
    if masks:
        key_masks, players["_env_id"] = _info_masks(schema, env_id.shape[0], penv.shape[0], xp)
        info.update(key_masks)
        info.update(schema.masks(arrays))
    if schema.extra is not None and xp is np:  # (inside jax: the typed arrays only)
        add_entries(info, arrays[schema.extra], masks)
    return info


def _any_true(flags: np.ndarray) -> bool:
    """flags.any() for the engine's bool arrays (one byte, 0 or 1, per row).

    Without numpy's reduction machinery, which costs more than the rest of a 1-env step's Python.
    """
    return b"\x01" in flags.tobytes()


def _add_final(schema: Schema, arrays: Sequence[Any], info: dict[str, Any], done: Any, xp: Any) -> None:
    """Same-step autoreset: the finished episodes' last observation and info, in gymnasium 1.4's structure."""
    dense = xp is not np
    final = schema.obs(arrays, "final:")
    if dense:
        final_obs = tree_map(lambda v: _zero_where_not(xp, done, v), final)
    else:
        final_obs = np.full(len(done), None, dtype=object)
        env_id, penv = arrays[schema.env_id], arrays[schema.players_env_id]
        multi = len(penv) != len(env_id)  # several players per env: an env's final obs is its players' rows
        for i in np.flatnonzero(done):
            final_obs[i] = tree_map(itemgetter(penv == env_id[i] if multi else i), final)
    final_info: dict[str, Any] = {
        "env_id": _zero_where_not(xp, done, arrays[schema.env_id]),
        "_env_id": done,
        "elapsed_step": _zero_where_not(xp, done, arrays[schema.index["final:elapsed_step"]]),
        "_elapsed_step": done,
    }
    had = schema.masks(arrays, "final:")
    for key, value in schema.info(arrays, "final:").items():
        final_info[key] = _zero_where_not(xp, done, value)
        final_info["_" + key] = done & had["_" + key] if had else done
    if not dense and schema.extra is not None:
        add_entries(final_info, np.where(done, schema.extra_rows(arrays, "final:"), None))
    info["final_obs"], info["_final_obs"] = final_obs, done
    info["final_info"], info["_final_info"] = final_info, done


def gym_result(
    schema: Schema, arrays: Sequence[Any], xp: Any = np, masks: bool = True
) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
    """A raw batch as gymnasium's (obs, reward, terminated, truncated, info); masks: gymnasium's `_key` masks."""
    term, trunc = arrays[schema.terminated], arrays[schema.truncated]
    info = gym_info(schema, arrays, xp, masks)
    # gymnasium adds the final keys only on steps where some episode ended (inside jax.jit: always, masked)
    if schema.has_final and (xp is not np or _any_true(term) or _any_true(trunc)):
        _add_final(schema, arrays, info, term | trunc, xp)
    return schema.obs(arrays), arrays[schema.reward], term, trunc, info


def dm_state_types(spec: EnvSpec) -> tuple[type, type]:
    """The namedtuple types of the dm front-end's observation (EnvPool's `State` and `players`)."""
    return namedtuple("State", spec.dm_state_fields), namedtuple("players", ["env_id"])


def dm_result(schema: Schema, arrays: Sequence[Any], state: Any, players: type, xp: Any = np) -> dm_env.TimeStep:
    """A raw batch as a batched dm_env.TimeStep.

    discount is 0 only where an episode terminated (never on truncation), times the env's own info["discount"]
    where it has one (Atari's zero_discount_on_life_loss).
    """
    if schema.extra is not None:
        schema.refresh(arrays)
    obs = schema.obs(arrays)
    values = dict(obs) if isinstance(obs, dict) else {"obs": obs}
    values["env_id"] = arrays[schema.env_id]
    values["elapsed_step"] = arrays[schema.elapsed_step]
    values["players"] = players(arrays[schema.players_env_id])
    info = schema.info(arrays)
    if schema.extra is not None:  # a Python env's: "info", the masks and the entries without a field of State
        extra = schema.masks(arrays)
        for key in [k for k in info if k not in state._fields]:  # typed arrays of keys seen after make()
            extra[key] = info.pop(key)
        if xp is np:
            add_entries(extra, arrays[schema.extra])
        values["info"] = extra
    values.update(info)
    term, trunc = arrays[schema.terminated], arrays[schema.truncated]
    step_type = xp.where(term | trunc, 2, xp.where(values["elapsed_step"] == 0, 0, 1)).astype(xp.int32)
    discount = (~term).astype(xp.float32)
    if "discount" in values:
        discount = discount * values["discount"]
    return dm_env.TimeStep(step_type, arrays[schema.reward], discount, state(**values))


# ---- rows of a full batch (sync pools) --------------------------------------------------------------------------


def _backend(spec: EnvSpec) -> str:
    """The repr's note of a pool of Python envs (C++ pools keep EnvPool's repr)."""
    return ", backend='python'" if spec.backend == "python" else ""


class _GymStyle(BasePool):
    """What the gymnasium and gym front-ends share.

    The 5-tuple step and (obs, info) reset, with gymnasium's reset(seed=, options={"reset_mask": mask}) returning
    the whole batch.
    """

    _info_masks = True  # gymnasium's `_key` masks in info

    def __init__(self, spec: EnvSpec, render_mode: str | None = None, thread_pool: Any = None):
        if getattr(spec, "agents", ()) and spec.autoreset_mode == AutoresetMode.SAME_STEP:
            raise ValueError(
                "autoreset_mode='same_step' is not available for PettingZoo envs in this front-end: its final_obs and "
                "final_info have a row per env, and a PettingZoo env's agents end one by one; use "
                "make_pettingzoo(..., view='agent_rows', autoreset_mode='same_step') (a row per agent), or 'next_step'"
            )
        BasePool.__init__(self, spec, render_mode, thread_pool)
        if not self.is_async:  # reset_mask's unchanged rows (async pools refuse reset_mask)
            self._kept = KeptRows(self.schema, self.num_envs, self.max_num_players, self._sync_fast)
        # A sync pool's engine with the fast paths (engine.FastCalls) keeps step()'s result with the batch it is made
        # of and returns it again when it refills that batch and nothing else holds any part of it
        # (docs/decisions.md, "Per call"). Not with same-step autoreset, whose result has final keys only on the
        # steps where an episode ended.
        self._keeper = None if self.schema.has_final else self._sync_fast
        # and an async pool's recv() result, the same way (the engine keeps its last two batches' arrays)
        self._recv_keeper = None if self.schema.has_final else self._async_fast
        self._env_id_at = self.schema.env_id  # (an attribute of its own: recv() reads it on every call)

    def _result(self, arrays: Sequence[np.ndarray]) -> Any:
        return gym_result(self.schema, arrays, np, self._info_masks)

    def from_arrays(self, arrays: Sequence[Any], xp: Any = np) -> Any:
        """This front-end's step result from a raw engine batch (numpy, or jax arrays inside env.xla())."""
        return gym_result(self.schema, arrays, xp, self._info_masks)

    def step(self, actions: Any, env_id: Any = None) -> Any:
        """Step the envs `env_id` and wait for the next batch.

        Args:
            actions: one action row per env of `env_id`; also EnvPool's dict form
                (`{"action": ..., "env_id": ...}`).
            env_id: the envs to step; None: all (sync pools) or the envs of the last batch received (async).

        Returns:
            `(obs, reward, terminated, truncated, info)`; `info["env_id"]` names the rows (async pools: the
            batch_size envs that finished first).
        """
        keeper = self._keeper
        if keeper is not None and env_id is None and type(actions) is ndarray and actions.ndim:
            # the common call (every env, one action array): a result nobody holds any more comes back refilled
            try:
                arrays, result = keeper._step_kept(actions)  # the engine keeps the rows for reset_mask (KeptRows)
            except Exception:
                self.engine  # noqa: B018 -- a closed pool's own error
                raise
            # the kept result, or a new one (a test here, not a method call per step: a cheap env's step is ~1 µs)
            return result if result is not None else self._made(keeper, arrays)
        return self._result(self.step_arrays(actions, env_id))

    def recv(self) -> Any:
        """Block until batch_size envs have results and return them as (obs, reward, terminated, truncated, info)."""
        keeper = self._recv_keeper
        if keeper is None:
            return BasePool.recv(self)
        try:
            arrays, result = keeper._recv_kept()
        except Exception:
            self.engine  # noqa: B018 -- a closed pool's own error
            raise
        self._last_ids = arrays[self._env_id_at]  # (_received: an async pool keeps no rows for reset_mask)
        return result if result is not None else self._made(keeper, arrays)

    def _made(self, keeper: Any, arrays: Sequence[np.ndarray]) -> Any:
        """A new result for `arrays` (the engine kept none with them), which the engine keeps from now on."""
        result = self._result(arrays)
        keeper._keep_result(arrays, result)
        return result

    def _reset_front(self, seed: Any, options: Any, env_id: Any) -> tuple[Any, dict[str, Any]]:
        mask = None if options is None else options.get("reset_mask")
        unknown = sorted(set(options or {}) - {"reset_mask"})
        if unknown:
            raise ValueError(f"unknown reset options {unknown}; the only option is 'reset_mask'")
        if mask is not None:
            if env_id is not None:
                raise ValueError("give either env_id or options['reset_mask'], not both")
            return self._reset_masked(self._check_mask(mask), seed)
        obs, _, _, _, info = self._result(self._reset_raw(env_id, seed))
        return obs, info

    def _check_mask(self, mask: Any) -> np.ndarray:
        if self.is_async:
            raise ValueError(
                "reset_mask needs a sync pool (batch_size == num_envs): an async pool returns "
                "whichever envs finish first; reset envs there with reset(env_id=...)"
            )
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
            raise TypeError(f"reset_mask must be a bool numpy array, got {getattr(mask, 'dtype', type(mask))}")
        if mask.shape != (self.num_envs,):
            raise ValueError(f"reset_mask must have shape ({self.num_envs},), got {mask.shape}")
        if not mask.any():
            raise ValueError("reset_mask must select at least one env")
        return mask

    def _reset_masked(self, mask: np.ndarray, seed: Any) -> tuple[Any, dict[str, Any]]:
        """Reset the masked envs and return every env's row, as gymnasium's SyncVectorEnv does.

        The others' rows are unchanged; info keys only for the reset envs (zeros elsewhere, `_key` = mask).
        info["players"]["env_id"] names the owner of every observation row (multi-player envs), its mask saying
        which rows were reset.
        """
        ids = np.flatnonzero(mask).astype(np.int32)
        if seed is not None and not isinstance(seed, (int, np.integer)):
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(
                    f"with reset_mask, seed must be an int or one seed per env ({self.num_envs}), got {len(seeds)}"
                )
            chosen = [seeds[i] for i in ids]
            seed = None if all(s is None for s in chosen) else chosen
        assert self._kept is not None  # a sync pool (_check_mask)
        unknown = self._kept.missing(np.flatnonzero(~mask))
        if len(unknown):
            raise ValueError(
                f"reset_mask leaves envs {unknown.tolist()} as they are, but set_state put them in a state whose "
                "observation this pool does not know (a snapshot without observation rows: taken by an async, dm "
                "or multi-player pool, or the one-env set_state(env_id, values)); include them in the mask, or "
                "step them first"
            )
        arrays = self._reset_raw(ids, seed)
        full_obs, owner = self._kept.rows()
        reset = gym_info(self.schema, arrays)  # the reset envs' rows, with their masks
        info: dict[str, Any] = {"players": {"env_id": owner, "_env_id": mask[owner]}, "_players": mask.copy()}
        per_player = {k for k, i in self.schema.info_at if self.schema.fields[i].per_player}
        for key, value in reset.items():
            if key in ("players", "_players") or (type(key) is str and key[:1] == "_" and key[1:] in reset):
                continue
            # per-player info (a PettingZoo env's agent flags) has a row per player, the rest a row per env
            rows = mask[owner] if key in per_player else ids
            size = len(owner) if key in per_player else self.num_envs
            info[key] = _scattered(value, rows, size)
            had = reset.get(f"_{key}")
            full_mask = np.zeros(size, dtype=bool)
            full_mask[rows] = True if had is None else had
            info[f"_{key}"] = full_mask
        return full_obs, info


def _scattered(value: Any, rows: Any, n: int) -> Any:
    """A batched info value of some rows (an array, or a dict of them with masks) as one of n rows.

    `value`'s rows at `rows`, zeros (None; False for masks) elsewhere.
    """
    if isinstance(value, dict):
        return {k: _scattered(v, rows, n) for k, v in value.items()}
    full = np.full(n, None, dtype=object) if value.dtype == object else np.zeros((n, *value.shape[1:]), value.dtype)
    full[rows] = value
    return full


class GymnasiumPool(_GymStyle, VectorEnv):  # type: ignore[misc]
    """A gymnasium.vector.VectorEnv: what `parallel_pool.make(task_id)` returns.

    observation_space/action_space are batched (batch_size rows; multi-player envs: batch_size x max_num_players
    player rows, as their observations and actions have them); single_observation_space/single_action_space are one
    env's (one player's).

    Async pools (batch_size < num_envs) keep gymnasium's loop working: `obs, info = env.reset()` returns the first
    batch_size envs to finish resetting, and `env.step(policy(obs))` without env_id acts on the envs of the last
    batch returned (info["env_id"]) and returns the next batch that finishes. reset_mask needs a sync pool.
    """

    def __init__(self, spec: EnvSpec, render_mode: str | None = None, thread_pool: Any = None):
        _GymStyle.__init__(self, spec, render_mode, thread_pool)
        self.metadata = {
            "autoreset_mode": self.autoreset_mode,
            "render_modes": [] if render_mode is None else [render_mode],
        }
        self.single_observation_space = spec.observation_space
        self.single_action_space = spec.action_space
        # a row per player: a multi-player env's batch has max_num_players rows per env (observations and actions
        # alike; a C++ env with fewer players than max_num_players has fewer)
        rows = self.batch_size * self.max_num_players
        self.observation_space = batch_space(self.single_observation_space, rows)
        self.action_space = batch_space(self.single_action_space, rows)

    def reset(
        self, *, seed: Any = None, options: dict[str, Any] | None = None, env_id: Any = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset every env, the envs `env_id`, or those of `options={"reset_mask": mask}`.

        Args:
            seed: None, an int s (env i gets s + i) or one seed per env.
            options: None, or `{"reset_mask": mask}` (a bool per env; sync pools): every env's row comes back,
                the masked envs reset, as gymnasium's SyncVectorEnv does.
            env_id: the envs to reset; None: all.

        Returns:
            `(obs, info)` (async pools: the first batch_size envs to finish resetting).
        """
        return self._reset_front(seed, options, env_id)

    def close(self, **kwargs: Any) -> None:
        """Stop the worker threads and free the envs. Idempotent."""
        BasePool.close(self)

    def close_extras(self, **kwargs: Any) -> None:
        """Gymnasium's hook for VectorEnv.close(): stop the engine."""
        BasePool.close(self)

    @property
    def closed(self) -> bool:
        """True once close() has run."""
        return BasePool.closed.fget(self)  # type: ignore[attr-defined]

    @closed.setter
    def closed(self, value: bool) -> None:
        pass  # gymnasium's VectorEnv.close() assigns it; the engine's state is the truth

    # ---- gymnasium's VectorEnv attribute API ----------------------------------------------------------------
    def _env_attrs(self) -> dict[str, Any]:
        attrs: dict[str, Any] = dict(self.config)
        attrs.update(
            spec=self.spec,
            render_mode=self.render_mode,
            metadata=self.metadata,
            observation_space=self.single_observation_space,
            action_space=self.single_action_space,
        )
        return attrs

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """One value per env of an env attribute: its spaces, spec, render_mode, metadata or a config key."""
        attrs = self._env_attrs()
        if name not in attrs:
            raise AttributeError(
                f"{self.spec.id} envs run {self.spec.runs_where} and have no attribute {name!r}; "
                f"available: {sorted(attrs)}"
            )
        return tuple(attrs[name] for _ in range(self.num_envs))

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call a per-env method on every env ("get_state", "set_state", "render"), or read an attribute."""
        if name == "get_state":
            return tuple(self.get_state(i) for i in range(self.num_envs))
        if name == "set_state":
            for i in range(self.num_envs):
                self.set_state(i, *args, **kwargs)
            return (None,) * self.num_envs
        if name == "render":
            return tuple(self.render())
        return self.get_attr(name)

    def set_attr(self, name: str, values: Any) -> None:
        """The envs run in C++ with a fixed config: nothing can be set; make a new pool with the key instead."""
        raise AttributeError(
            f"cannot set {name!r} on {self.spec.id} envs: they run {self.spec.runs_where}; pass config keys to "
            f"parallel_pool.make({self.spec.id!r}, {name}=...) instead"
        )

    def __repr__(self) -> str:
        sizes = f"num_envs={self.num_envs}, batch_size={self.batch_size}"
        return f"GymnasiumPool({self.spec.id!r}, {sizes}{_backend(self.spec)})"


class GymPool(_GymStyle, gymnasium.Env):  # type: ignore[misc]
    """EnvPool 1.x's "gym" env_type: `parallel_pool.make(task_id, env_type="gym")`.

    The same 5-tuple step and (obs, info) reset as the gymnasium pool; spaces are single-env. A gymnasium.Env with
    is_vector_env = True, as EnvPool's.
    """

    is_vector_env = True
    _info_masks = False  # EnvPool's gym info has no gymnasium `_key` masks

    def __init__(self, spec: EnvSpec, render_mode: str | None = None, thread_pool: Any = None):
        _GymStyle.__init__(self, spec, render_mode, thread_pool)
        self.observation_space = spec.observation_space
        self.action_space = spec.action_space
        # EnvPool's gym pool names its (single-env) spaces both ways
        self.single_observation_space = self.observation_space
        self.single_action_space = self.action_space
        self.metadata = {
            "autoreset_mode": self.autoreset_mode,
            "render_modes": [] if render_mode is None else [render_mode],
        }

    def reset(
        self, env_id: Any = None, seed: Any = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset every env (or env_id, or options={"reset_mask": mask}). Returns (obs, info)."""
        return self._reset_front(seed, options, env_id)

    def close(self) -> None:
        """Stop the worker threads and free the envs. Idempotent."""
        BasePool.close(self)

    def render(self, env_ids: Any = None) -> np.ndarray:
        """Frames of `env_ids` (default: all) as uint8 (n, H, W, 3); needs render_mode="rgb_array"."""
        return BasePool.render(self, env_ids)

    def __repr__(self) -> str:
        return f"GymPool({self.spec.id!r}, num_envs={self.num_envs}, batch_size={self.batch_size}{_backend(self.spec)})"


class DmPool(BasePool, dm_env.Environment):
    """A batched dm_env.Environment: `parallel_pool.make(task_id, env_type="dm")`.

    reset/step return a dm_env.TimeStep whose fields have a row per env. discount is 0 only where an episode
    terminated (never on truncation), so value bootstrapping at time limits stays right. The observation is
    EnvPool's `State` namedtuple (obs keys, env_id, elapsed_step, players, info).
    """

    def __init__(self, spec: EnvSpec, render_mode: str | None = None, thread_pool: Any = None):
        if spec.autoreset_mode != AutoresetMode.NEXT_STEP:
            raise ValueError(
                "env_type='dm' steps a finished env into a new episode (next_step autoreset); "
                f"autoreset_mode={spec.config_dict['autoreset_mode']!r} is not available with it"
            )
        if getattr(spec, "obs_paths", None) is not None:
            raise ValueError(
                "env_type='dm' presents the observation as one namedtuple of arrays; this env's observation space "
                "nests Dict/Tuple spaces: use env_type='gymnasium' (nested dicts)"
            )
        super().__init__(spec, render_mode, thread_pool)
        self._state_type, self._players_type = dm_state_types(spec)

    def observation_spec(self) -> Any:
        """dm_env specs with the observation's structure (a `State` namedtuple)."""
        return self.spec.observation_spec()

    def action_spec(self) -> Any:
        """dm_env spec of one env's action."""
        return self.spec.action_spec()

    def reward_spec(self) -> Any:
        """dm_env spec of one env's reward, in the dtype the timesteps carry (dm_env's default says float64)."""
        return dm_env.specs.Array((), self.schema.field("reward").dtype, "reward")

    def discount_spec(self) -> Any:
        """dm_env spec of one env's discount: float32 in [0, 1], as the timesteps carry it (and EnvPool's)."""
        return dm_env.specs.BoundedArray((), np.float32, 0.0, 1.0, "discount")

    def _result(self, arrays: Sequence[np.ndarray]) -> dm_env.TimeStep:
        return dm_result(self.schema, arrays, self._state_type, self._players_type)

    def from_arrays(self, arrays: Sequence[Any], xp: Any = np) -> dm_env.TimeStep:
        """This front-end's result from a raw engine batch (numpy, or jax arrays inside env.xla())."""
        return dm_result(self.schema, arrays, self._state_type, self._players_type, xp)

    def reset(self, env_id: Any = None, seed: Any = None) -> dm_env.TimeStep:
        """Reset every env (or env_id); seed: int s (env i gets s + i) or one per env."""
        return self._result(self._reset_raw(env_id, seed))

    def step(self, action: Any, env_id: Any = None) -> dm_env.TimeStep:
        """Step the envs env_id (sync default: all; async default: the envs of the last batch received)."""
        return self._result(self.step_arrays(action, env_id))

    def __repr__(self) -> str:
        return f"DmPool({self.spec.id!r}, num_envs={self.num_envs}, batch_size={self.batch_size}{_backend(self.spec)})"
