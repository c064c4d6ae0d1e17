"""`BasePool`: the engine calls every front-end shares (send / recv / step / reset, seeds, env ids, lifecycle).

It hands raw engine batches (tuples of arrays laid out as `Schema` says) to the front-end's `_result`, which turns
them into that front-end's result; front-ends live in parallel_pool.frontends. This module imports only the engine,
the schema and the spec.

Over 600 lines for one reason: it is the one place every front-end's calls are defined (stepping, resets, seeds, env
ids, per-env config, snapshots, rendering), each short; splitting it by call would make each front-end inherit from
several halves of one class.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy import ndarray  # a module global: `np.ndarray` is a slow attribute load per call (numpy's module)

from parallel_pool import _core
from parallel_pool._version import __version__
from parallel_pool.engine import Engine, FastCalls, fast_calls
from parallel_pool.registry import env_config, per_env_value
from parallel_pool.schema import Schema, action_list, split_action_dict
from parallel_pool.spec import AutoresetMode, EnvSpec

RENDER_MODES = ("rgb_array",)
# The layout of get_state(env_ids)'s snapshots; a snapshot of another format is refused. Raise it whenever what an
# env saves changes (Env::SaveState of any family) or the dict's layout does.
STATE_FORMAT = 2  # 2: MiniGrid snapshots carry the mission's own state


def check_seed(seed: Any, what: str = "seed") -> None:
    """Seeds are non-negative integers (the engine seeds env i with seed + i on 64 bits)."""
    if np.any(np.asarray(seed) < 0):
        raise ValueError(f"{what} must be >= 0, got {seed!r}")


class SeedDeprecationWarning(DeprecationWarning, UserWarning):
    """seed() is deprecated. Also a UserWarning, the category EnvPool warns with, so filters written for it match."""


class KeptRows:
    """Every env's latest observation rows in a sync pool.

    What reset(options={"reset_mask": mask}) returns for the envs it leaves alone (as gymnasium's SyncVectorEnv
    does).

    Fed every batch the pool returns (step, step_arrays, send/recv, reset). The rows are the pool's own copy, so a
    user who edits in place the observation they were given does not change what the next masked reset returns.

    set_state moves an env to another state, whose observation is the one the env last returned when the snapshot
    was taken: snapshots of a pool that keeps rows carry them (`env_rows`), and set_state puts them here (`put`).
    An env restored without one (a snapshot of an async or dm pool, of a multi-player pool, or the one-env
    `set_state(env_id, values)`) has no known row until it is stepped or reset (`forget`): a masked reset that
    would return it raises instead of returning the row of the state it left.
    """

    def __init__(self, schema: Schema, num_envs: int, max_num_players: int, engine: FastCalls | None = None):
        self._schema = schema
        self._obs_at = [schema.index[schema.obs_name(k)] for k in schema.obs_keys]
        ids = np.arange(num_envs, dtype=np.int32)
        # one player per env: the rows of a batch of every env in env order belong to envs 0..n-1 (nothing to copy)
        self._ids, self._one_player = ids, max_num_players == 1
        # the per-call fast path's case, decided once: one observation array, one player per env
        self._only_at = (
            self._obs_at[0]
            if len(self._obs_at) == 1 and max_num_players == 1 and schema.fields[self._obs_at[0]].dtype != object
            else -1
        )
        # before the first reset: zeros, as SyncVectorEnv holds then
        self._owner = np.repeat(ids, max_num_players)
        fields = [schema.fields[i] for i in self._obs_at]
        self._obs = [np.zeros((len(self._owner), *f.shape), f.dtype) for f in fields]
        self._names = [schema.obs_name(k) for k in schema.obs_keys]
        self._unknown = np.zeros(num_envs, dtype=bool)  # envs restored without their row (see the class doc)
        # the fast path's copy as bytes (tobytes() costs a third of an array copy), not yet in _obs/_owner (_settle)
        self._full: bytes | None = None
        self._full_shape = (num_envs, *fields[0].shape)
        # An engine with the fast paths (engine.FastCalls: the C++ engine) keeps the observation rows of its steps of
        # every env itself (the per-call fast paths pass them by: no Python call per step), counting them in
        # `_obs_seq`; _seq is its count when rows were last given here, so a count above it means the engine's rows
        # are the latest.
        self._engine = fast_calls(engine)
        self._seq = 0
        if self._engine is not None:
            self._engine._keep_obs()

    def _given(self) -> None:
        """Rows were given here: they are newer than any the engine kept so far."""
        if self._engine is not None:
            self._seq = self._engine._obs_seq

    def every_env(self, arrays: Sequence[np.ndarray]) -> None:
        """Keep a batch of every env in env order (a sync step or reset of all envs): copied, nothing merged.

        On the per-call fast path (one observation array, one player per env): one copy, as bytes.
        """
        at = self._only_at
        if at >= 0:
            self._full = arrays[at].tobytes()
        else:
            self._full = None
            self._obs = [arrays[i].copy() for i in self._obs_at]
            self._owner = self._ids if self._one_player else arrays[self._schema.players_env_id].copy()
        self._unknown[:] = False
        self._given()

    def _settle(self) -> None:
        """Bring the latest rows (the engine's, when newer) into the general form.

        One observation array, the rows of envs 0..n-1.
        """
        if self._engine is not None and self._engine._obs_seq != self._seq:
            self._full, self._seq = self._engine._last_obs(), self._engine._obs_seq
            self._unknown[:] = False  # a step of every env
        if self._full is not None:
            obs = np.frombuffer(self._full, self._obs[0].dtype).reshape(self._full_shape)
            self._obs, self._owner, self._full = [obs], self._ids, None

    def add(self, arrays: Sequence[np.ndarray]) -> None:
        """Keep a batch of some envs, in any order: their rows replace those kept for them.

        Multi-player rows move with their env (players.env_id names each row's env). The merge makes new arrays:
        nothing is shared.
        """
        self._settle()
        new_owner = arrays[self._schema.players_env_id]
        keep = ~np.isin(self._owner, new_owner)
        owner = np.concatenate([self._owner[keep], new_owner])
        order = np.argsort(owner, kind="stable")
        self._obs = [np.concatenate([old[keep], arrays[i]])[order] for old, i in zip(self._obs, self._obs_at)]
        self._owner = owner[order]
        self._unknown[arrays[self._schema.env_id]] = False
        self._given()

    def env_rows(self, ids: np.ndarray) -> dict[str, np.ndarray]:
        """The rows of envs `ids` (one per env) as a snapshot carries them.

        Returns {engine field name: (len(ids), ...) array}; empty where some of them are unknown or envs have several
        players (rows per env vary).
        """
        self._settle()
        if not self._one_player or self._unknown[ids].any():
            return {}
        return {name: obs[ids] for name, obs in zip(self._names, self._obs)}

    def put(self, ids: np.ndarray, rows: dict[str, np.ndarray]) -> None:
        """Restored envs' rows (checked by `check_rows`): row i is env ids[i]'s; empty: unknown from now on."""
        if not rows:
            self.forget(ids)
            return
        self._settle()
        self._obs = [obs.copy() for obs in self._obs]  # (the settled rows may be a read-only view of bytes)
        for obs, name in zip(self._obs, self._names):
            obs[ids] = rows[name]
        self._unknown[ids] = False
        self._given()

    def forget(self, ids: Any) -> None:
        """Envs moved to a state whose observation is not known here."""
        self._settle()
        self._unknown[ids] = True
        self._given()

    def check_rows(self, state: Any, n: int) -> dict[str, np.ndarray]:
        """The observation rows a snapshot of `n` envs carries ({} if none), checked against the pool's fields.

        All of them or none, each of the field's dtype and shape (n, *row); ValueError naming the key otherwise.
        """
        given = [name for name in self._names if name in state]
        if not given or not self._one_player:
            return {}
        if len(given) != len(self._names):
            raise ValueError(f"set_state: the snapshot has observation rows {given}, not all of {self._names}")
        rows = {}
        for name in self._names:
            field, value = self._schema.field(name), np.asarray(state[name])
            want = (n, *field.shape)
            if value.dtype != field.dtype or value.shape != want:
                raise ValueError(
                    f"set_state: the snapshot's {name!r} must be {field.dtype} of shape {want} (the observation "
                    f"rows of its envs), got {value.dtype} of shape {value.shape}"
                )
            rows[name] = value
        return rows

    def missing(self, ids: np.ndarray) -> np.ndarray:
        """Which of envs `ids` have no known row."""
        self._settle()
        return ids[self._unknown[ids]]

    def rows(self) -> tuple[Any, np.ndarray]:
        """(the observation of every env, in the front-end's form; the env of each row): copies for the caller."""
        self._settle()
        return self._schema.present([o.copy() for o in self._obs]), self._owner.copy()


class BasePool:
    """A pool of C++ envs stepped on worker threads. Sync when batch_size == num_envs, async otherwise.

    Subclasses (the front-ends) define `_result(arrays)`, the one function from a raw engine batch to their result.
    """

    _engine: Engine | None = None  # class default: an object whose __init__ never ran still reads as closed
    _next_seed: Any = None  # a seed given to the deprecated seed(), used by the next reset
    _kept: KeptRows | None = None  # set by a front-end that offers reset_mask on a sync pool (the gym-style ones)
    registration_spec: Any = None  # gymnasium's EnvSpec when gymnasium.make_vec made the pool (ParallelPool/<id>)

    def __init__(self, spec: EnvSpec, render_mode: str | None = None, thread_pool: _core.ThreadPool | None = None):
        self._engine = None  # set first, so that close() / __del__ work on a half-constructed pool
        if thread_pool is not None and not isinstance(thread_pool, _core.ThreadPool):
            raise TypeError(f"thread_pool must be a parallel_pool.ThreadPool, got {type(thread_pool).__name__}")
        self._thread_pool = thread_pool
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be None or one of {list(RENDER_MODES)}, got {render_mode!r}")
        self.spec = spec
        self.render_mode = render_mode
        self._engine = self._new_engine(spec)
        self.schema = Schema(self._engine.output_specs, getattr(spec, "obs_paths", None))
        self.num_envs: int = self._engine.num_envs
        self.batch_size: int = self._engine.batch_size
        self.is_async: bool = self.batch_size < self.num_envs
        self.config: dict[str, Any] = dict(spec.config_dict)
        self.autoreset_mode: AutoresetMode = spec.autoreset_mode
        self.max_num_players: int = spec.max_num_players
        # an engine with the fast paths (engine.FastCalls): a sync pool's gym-style step() of every env goes through
        # its _step_kept, an async pool's gym-style recv() through its _recv_kept
        fast = fast_calls(self._engine)
        self._sync_fast = None if self.is_async else fast
        self._async_fast = fast if self.is_async else None
        self._action_names = [a["name"] for a in spec.action_arrays]
        self._all_ids = np.arange(self.num_envs, dtype=np.int32)
        # env ids of the last batch received (async pools: step() without env_id acts on them)
        self._last_ids: np.ndarray | None = None

    @property
    def spec(self) -> EnvSpec:
        """The task's resolved spec (`parallel_pool.make_spec`): config, spaces, the engine's arrays."""
        return self._spec

    @spec.setter
    def spec(self, value: Any) -> None:
        # gymnasium.make_vec records how it made an env by assigning `env.unwrapped.spec` its registration's EnvSpec;
        # that one is kept as registration_spec, and spec stays the task's
        if isinstance(value, EnvSpec):
            self._spec = value
        else:
            self.registration_spec = value

    # ---- the engine ---------------------------------------------------------------------------------------
    @property
    def engine(self) -> Engine:
        """The engine behind this front-end (for parallel_pool.xla and parallel_pool.render).

        A `_core.Engine`, or for envs written in Python a `process_engine.ProcessEngine`.
        """
        if self._engine is None or self._engine.closed:
            raise RuntimeError(
                f"this {type(self).__name__} has been closed; create a new one with parallel_pool.make(...)"
            )
        return self._engine

    def _new_engine(self, spec: EnvSpec) -> Engine:
        """The engine: a local `_core.Engine`, or worker processes for envs written in Python.

        parallel_pool.distributed gives one with the same calls on Ray actors.
        """
        if spec.backend == "python":
            from parallel_pool.process_engine import ProcessEngine

            if self._thread_pool is not None:
                raise ValueError("thread_pool= shares C++ worker threads; envs written in Python run in processes")
            return ProcessEngine(spec)
        return _core.Engine(spec.env_class, spec.config_dict, self._thread_pool)

    def _result(self, arrays: Sequence[np.ndarray]) -> Any:
        raise NotImplementedError

    def _received(self, arrays: Sequence[np.ndarray], every_env: bool = False) -> Sequence[np.ndarray]:
        """Book-keeping on every batch the engine returns; every_env: it holds every env in env order."""
        self._last_ids = arrays[self.schema.env_id]
        if self._kept is not None:
            if every_env:
                self._kept.every_env(arrays)
            else:
                self._kept.add(arrays)
        return arrays

    # ---- argument forms (values are the engine's to validate) -------------------------------------------------
    def _action(self, action: Any, env_id: Any) -> tuple[Any, Any]:
        if type(action) is ndarray and action.ndim:  # the common form, checked first (per-step cost)
            return action, env_id
        action, env_id = split_action_dict(action, env_id)
        action = action_list(self._action_names, action)
        if isinstance(action, (int, float, np.number)) or (isinstance(action, np.ndarray) and action.ndim == 0):
            # gymnasium's vector envs take one action per env, never a bare scalar
            raise TypeError(f"a vector env takes a batch of actions (one row per env), got the scalar {action!r}")
        return action, env_id

    def _seeds(self, seed: Any, env_id: Any) -> np.ndarray | None:
        """None; an int s (env i gets s + i, gymnasium's vector convention); or one seed per env being reset."""
        if seed is None:
            return None
        if isinstance(seed, (int, np.integer)):
            check_seed(seed)
            if int(seed) + self.num_envs - 1 >= 2**63:
                raise ValueError(
                    f"reset(seed={seed}) gives env i the seed {seed} + i, which must stay below 2**63 "
                    f"for all {self.num_envs} envs (or give one seed per env)"
                )
            ids = self._all_ids if env_id is None else np.atleast_1d(np.asarray(env_id))
            return int(seed) + ids.astype(np.int64)
        n = self.num_envs if env_id is None else len(np.atleast_1d(env_id))
        seeds = np.asarray(seed)
        if seeds.shape != (n,) or not np.issubdtype(seeds.dtype, np.integer):
            raise ValueError(f"seed must be an int or one int per env being reset ({n}), got {seed!r}")
        check_seed(seed)
        return seeds.astype(np.int64)

    def _default_ids(self, env_id: Any) -> Any:
        """The envs a call without env_id acts on.

        An async pool acts on the envs of the last batch it returned (gymnasium's loop: obs, info = env.reset();
        env.step(policy(obs))).
        """
        if env_id is None and self.is_async and self._last_ids is not None:
            return self._last_ids
        return env_id

    # ---- engine calls -------------------------------------------------------------------------------------
    def send(self, action: Any, env_id: Any = None) -> None:
        """Queue `action` for the envs `env_id` and return at once; `recv()` collects the results.

        Args:
            action: one action row per env of `env_id`; also EnvPool's dict `{"action": ..., "env_id": ...}`.
            env_id: the envs; None: all envs (async pools: the envs of the last batch received).
        """
        if env_id is not None and type(action) is ndarray and action.ndim:  # the async loop's call: no checks here
            try:
                self._engine.send(action, env_id, False, None)  # type: ignore[union-attr]  # None: the except below
            except Exception:
                self.engine  # noqa: B018 -- a closed pool's own error
                raise
            return
        action, env_id = self._action(action, env_id)
        self.engine.send(action, self._default_ids(env_id), False, None)

    def recv(self) -> Any:
        """Block until batch_size envs have results and return them (this front-end's step result)."""
        return self._result(self._received(self.engine.recv()))

    def async_reset(self, seed: Any = None) -> None:
        """Send a reset to every env; collect the results with recv(). seed=s reseeds env i with s + i."""
        self.engine.send(None, None, True, self._seeds(self._take_seed(seed), None))

    def _take_seed(self, seed: Any) -> Any:
        """`seed`, or the one a deprecated seed() call left for the next reset."""
        if seed is None:
            seed, self._next_seed = self._next_seed, None
        return seed

    def _reset_raw(self, env_id: Any = None, seed: Any = None) -> Sequence[np.ndarray]:
        seeds = self._seeds(self._take_seed(seed), env_id)
        if self.is_async:
            self.engine.send(None, env_id, True, seeds)
            return self._received(self.engine.recv())
        return self._received(self.engine.reset(env_id, seeds), env_id is None)

    def _step_raw(self, action: Any, env_id: Any = None) -> Sequence[np.ndarray]:
        """The engine's batch."""
        action, env_id = self._action(action, env_id)
        every_env = env_id is None and not self.is_async
        return self._received(self.engine.step(action, self._default_ids(env_id)), every_env)

    # ---- arrays-only calls -----------------------------------------------------------------------------------
    def step_arrays(self, actions: Any, env_id: Any = None) -> Sequence[np.ndarray]:
        """step() without the front-end's result objects: the engine's batch as a tuple of arrays.

        For a framework's inner loop over a cheap env, where gymnasium's info dict or dm's TimeStep costs as much as
        the env step. The arrays and their values are those the front-end's result is made of.

        Args:
            actions: as in step().
            env_id: as in step().

        Returns:
            The arrays, which `self.schema` names (`schema.index["obs"]`, "reward", "terminated", "truncated",
            "env_id", "elapsed_step", "players.env_id", "info:<key>", and with same-step autoreset "final:<name>").
        """
        if env_id is None and type(actions) is ndarray and actions.ndim and not self.is_async:
            try:  # the common call, kept to the engine's own cost (see the gym front-end's step)
                arrays = self._engine.step(actions, None)  # type: ignore[union-attr]  # None: the except below
            except Exception:
                self.engine  # noqa: B018 -- a closed pool's own error
                raise
            if self._kept is not None and self._sync_fast is None:  # a C++ engine keeps the rows itself
                self._kept.every_env(arrays)
            return arrays
        return self._step_raw(actions, env_id)

    def recv_arrays(self) -> Sequence[np.ndarray]:
        """recv() without the front-end's result objects: the engine's batch as step_arrays() returns it."""
        return self._received(self.engine.recv())

    # ---- rendering --------------------------------------------------------------------------------------------
    def render(self, env_ids: Any = None) -> np.ndarray:
        """Frames of `env_ids` (default: all envs) as a uint8 array (n, H, W, 3).

        Needs the pool made with render_mode="rgb_array".
        """
        engine = self.engine
        if self.render_mode is None:
            raise ValueError("render() needs the pool made with render_mode='rgb_array'")
        from parallel_pool.render import render_frames  # the env families' renderers; loaded on first use

        ids = self._all_ids if env_ids is None else np.atleast_1d(np.asarray(env_ids))
        return render_frames(self.spec, engine, ids)

    # ---- lifecycle ----------------------------------------------------------------------------------------
    def close(self) -> None:
        """Stop the worker threads and free the envs. Idempotent."""
        if self._engine is not None and not self._engine.closed:
            self._engine.close()

    @property
    def closed(self) -> bool:
        """True once close() has run."""
        return self._engine is None or self._engine.closed

    def __len__(self) -> int:
        return self.num_envs

    def __enter__(self) -> BasePool:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        # never raise from a finalizer (half-constructed object, interpreter shutdown)
        try:
            self.close()
        except Exception:
            pass

    def xla(self) -> Any:
        """(handle, recv, send, step) for use inside jax.jit; see parallel_pool.xla."""
        from parallel_pool.xla import make_xla

        self.engine  # noqa: B018 -- raises the closed-pool error before jax is imported
        return make_xla(self)

    # ---- per-env config ---------------------------------------------------------------------------------------
    def set_config(self, env_ids: Any, **values: Any) -> None:
        """Give the envs `env_ids` new values of their own config keys.

        The envs are rebuilt with the new values now, on this thread, and each takes over its new build at its NEXT
        reset (an explicit reset or an autoreset), never mid-episode; the new build continues the env's random
        stream. Safe while steps of these envs are in flight (async pools). See docs/per-env.md.

        Args:
            env_ids: an env id or a sequence of them.
            **values: the env's own config keys (not the pool's common keys, nor keys that shape the spaces), each
                one value for all these envs or a sequence of one value per env id.

        Raises:
            ValueError: an unknown or common key, or a bad value (nothing changes).

        Example:
            ```python
            env = parallel_pool.make("Pendulum-v1", num_envs=2)
            env.set_config([0, 1], g=[9.8, 3.7])  # each env takes its value at its next reset
            ```
        """
        ids = self._state_ids(env_ids)
        engine = self.engine
        if self.spec.backend == "python":  # an env's own kwargs: a list (or 1-d array) per env, anything else one value
            from parallel_pool.python_env import per_env_kwargs

            rows = per_env_kwargs(values, len(ids))
            engine.set_config(ids, {key: tuple(row[key] for row in rows) for key in values})
            return
        base = env_config(self.spec.config_dict, 0)
        checked = {
            key: per_env_value(self.spec.task_id, base, key, value, len(ids), self.spec.engine_spec)
            for key, value in values.items()
        }
        engine.set_config(ids, checked)

    def get_config(self, env_id: int) -> dict[str, Any]:
        """Env `env_id`'s config: the values it runs with, or those set_config gave it for its next reset."""
        return dict(self.engine.get_config(int(env_id)))

    # ---- state: one env's simulator state, and snapshots of several envs ---------------------------------------
    def get_state(self, env_id: Any, key: bytes | None = None) -> Any:
        """The simulator state of one env, or a snapshot of several.

        One env (an int): its simulator state as a float64 array (e.g. CartPole's (x, x_dot, theta, theta_dot),
        MuJoCo's qpos then qvel), as the reference env's state is written.

        Several envs (a sequence of ids): a snapshot of each, as a dict of numpy arrays (picklable, savable with
        np.savez) that set_state() takes back: everything an env needs to continue bit-identically (its state,
        its random generator, its step count in the episode, whether the episode has ended), tagged with the
        task and the snapshot format (a snapshot of another task or format is refused). Every env named must
        have no result pending.

        Python envs: each env is a pickle, signed (HMAC-SHA256) with `key` (bytes), by default the key in the
        user's key file (parallel_pool.signing: $PARALLEL_POOL_SNAPSHOT_KEY_FILE, else
        ~/.config/parallel_pool/snapshot.key, made at first use); set_state verifies it before unpickling. C++
        envs' snapshots hold numbers only: `key` is not used.

        Example:
            ```python
            snap = env.get_state(range(env.num_envs))
            env.set_state(range(env.num_envs), snap)  # every env continues from there, bit-identically
            ```
        """
        if np.ndim(env_id) == 0:
            return np.asarray(self.engine.get_state(int(env_id)))
        ids = self._state_ids(env_id)
        engine: Any = self.engine
        try:
            if self.spec.backend == "python":
                from parallel_pool.signing import snapshot_key

                env, generator, elapsed, done = engine.snapshot(ids, snapshot_key(key))
            else:
                env, generator, elapsed, done = engine.snapshot(ids)
        except RuntimeError as e:
            raise RuntimeError(f"{self.spec.task_id}: no snapshots ({e})") from None
        lengths = np.array([len(v) for v in env], dtype=np.int64)
        # C++ envs: their state values (float64, NaN after the end); Python envs: each env pickled (uint8)
        dtype = np.uint8 if self.spec.backend == "python" else np.float64
        values = np.full((len(ids), int(lengths.max(initial=0))), 0 if dtype == np.uint8 else np.nan, dtype=dtype)
        for i, v in enumerate(env):
            values[i, : len(v)] = v
        snapshot = {
            "format": np.array(STATE_FORMAT),
            "version": np.array(__version__),
            "task": np.array(self.spec.task_id),
            "env_ids": ids.astype(np.int64),
            "values": values,
            "lengths": lengths,
            "generator": generator,
            "elapsed": elapsed,
            "done": done,
        }
        if self._kept is not None:  # the observations the envs last returned, for reset_mask after set_state
            snapshot.update(self._kept.env_rows(ids))
        return snapshot

    def set_state(self, env_id: Any, state: Any, key: bytes | None = None, trusted: bool = False) -> None:
        """One env (an int) and a state as get_state(int) returns it: put the env in that simulator state.

        Several envs and a snapshot from get_state(ids): restore each env named from the snapshot's row in the same
        position (a one-env snapshot restores into every env named: branching from one state). All or nothing:
        a bad snapshot raises and changes no env.

        Python envs: each env's pickle is unpickled only if its signature verifies with `key` (default: the user's
        key file, as get_state), else a ValueError; trusted=True skips the check (unpickling runs code: only for
        snapshots from a source you trust, e.g. unsigned ones of an older version). C++ envs: both are not used.
        """
        if np.ndim(env_id) == 0 and not isinstance(state, dict):
            self.engine.set_state(int(env_id), [float(x) for x in np.ravel(state)])
            if self._kept is not None:
                self._kept.forget(int(env_id))  # a simulator state carries no observation
            return
        ids = self._state_ids(env_id)
        snap = self._check_snapshot(state)
        rows = np.arange(len(ids)) if len(snap["lengths"]) == len(ids) else np.zeros(len(ids), dtype=np.int64)
        if len(snap["lengths"]) not in (1, len(ids)):
            raise ValueError(f"set_state: a snapshot of {len(snap['lengths'])} envs for {len(ids)} env ids")
        obs = {} if self._kept is None else self._kept.check_rows(state, len(snap["lengths"]))
        env = [np.ascontiguousarray(snap["values"][r, : snap["lengths"][r]]) for r in rows]
        parts = (ids, env, snap["generator"][rows], snap["elapsed"][rows], snap["done"][rows])
        if self.spec.backend == "python":
            from parallel_pool.signing import snapshot_key

            if not isinstance(trusted, bool):
                raise TypeError(f"trusted must be True or False, got {trusted!r}")
            engine: Any = self.engine
            engine.restore(*parts, key=None if trusted else snapshot_key(key), trusted=trusted)
        else:
            self.engine.restore(*parts)
        if self._kept is not None:
            self._kept.put(ids, {name: value[rows] for name, value in obs.items()})

    def _state_ids(self, env_id: Any) -> np.ndarray:
        ids = np.atleast_1d(np.asarray(env_id))
        if ids.ndim != 1 or not np.issubdtype(ids.dtype, np.integer):
            raise TypeError(f"env_id must be an int or a 1-d sequence of ints, got {env_id!r}")
        return ids

    def _check_snapshot(self, state: Any) -> dict[str, np.ndarray]:
        """A snapshot from get_state(ids) (or np.load of one saved with np.savez), checked for this pool.

        Every field's type, shape and range, before anything changes (a snapshot may come from a file anyone
        wrote). Returns the fields as arrays of the dtypes the engine takes. What each env's own values mean is the
        env's to check (it refuses a state it cannot be in).
        """
        keys = ("format", "version", "task", "env_ids", "values", "lengths", "generator", "elapsed", "done")
        if not hasattr(state, "keys") or any(k not in state for k in keys):
            raise TypeError(f"set_state(env_ids, ...) takes a snapshot from get_state(env_ids): a dict with {keys}")
        snap = {k: np.asarray(state[k]) for k in keys}

        def field(key: str, kinds: str, ndim: int, what: str) -> np.ndarray:
            a = snap[key]
            if a.dtype.kind not in kinds or a.ndim != ndim:
                raise TypeError(f"set_state: the snapshot's {key!r} must be {what}, got {a.dtype} of shape {a.shape}")
            return a

        fmt = field("format", "iu", 0, "an integer")
        version, task = field("version", "U", 0, "a str"), field("task", "U", 0, "a str")
        if int(fmt) != STATE_FORMAT or str(version) != __version__:
            raise ValueError(
                f"set_state: this snapshot was taken by parallel_pool {version} (format {fmt}); "
                f"this is {__version__} (format {STATE_FORMAT}): env states may differ between versions"
            )
        if str(task) != self.spec.task_id:
            raise ValueError(f"set_state: a snapshot of {task} cannot be restored into {self.spec.task_id}")
        python = self.spec.backend == "python"
        values = snap["values"]
        if values.dtype != (np.uint8 if python else np.float64):
            theirs = "a Python env's (pickled)" if values.dtype == np.uint8 else "a C++ env's"
            raise ValueError(
                f"set_state: {theirs} snapshot of {task} cannot be restored into this pool of "
                f"{self.spec.task_id}, whose envs are {'Python' if python else 'C++'} (backend="
                f"{self.spec.backend!r}); 'values' must be {'uint8' if python else 'float64'}, got {values.dtype}"
            )
        field("values", values.dtype.kind, 2, "a 2-d array (a row per env)")
        lengths = field("lengths", "iu", 1, "a 1-d array of integers")
        n = len(lengths)
        # C++ envs' generators: std::mt19937's 624 words and its position; a Python env's lives in its pickle
        words = 0 if python else _core.snapshot_generator_words
        shapes = {
            "env_ids": (field("env_ids", "iu", 1, "a 1-d array of integers"), (n,)),
            "values": (values, (n, values.shape[1])),
            "generator": (field("generator", "u", 2, "a 2-d array of uint32 words"), (n, words)),
            "elapsed": (field("elapsed", "iu", 1, "a 1-d array of integers"), (n,)),
            "done": (field("done", "b", 1, "a 1-d array of bools"), (n,)),
        }
        for key, (a, shape) in shapes.items():
            if a.shape != shape:
                raise ValueError(
                    f"set_state: the snapshot holds {n} envs ('lengths'), so {key!r} must have shape {shape}, "
                    f"got {a.shape}"
                )
        if snap["generator"].dtype != np.uint32:
            raise TypeError(
                f"set_state: the snapshot's 'generator' must be uint32 words, got {snap['generator'].dtype}"
            )
        bad = np.flatnonzero((lengths < 0) | (lengths > values.shape[1]))
        if len(bad):
            i = bad[0]
            raise ValueError(
                f"set_state: the snapshot's 'lengths' must be in [0, {values.shape[1]}] (the columns of 'values'), "
                f"got {lengths[i]} in row {i}"
            )
        # an episode in progress has stepped fewer than max_episode_steps times (its step that reaches the limit
        # ends it); checked here on the integers given, before the engine narrows them to its int32 counter
        limit, elapsed, done = self.spec.max_episode_steps, snap["elapsed"], snap["done"]
        bad = np.flatnonzero((elapsed < 0) | (elapsed > np.where(done, limit, limit - 1)))
        if len(bad):
            i = bad[0]
            raise ValueError(
                f"set_state: the snapshot's 'elapsed' must be in [0, {limit}] for an episode that has ended and in "
                f"[0, {limit - 1}] for one in progress (max_episode_steps {limit}), got {elapsed[i]} in row {i} "
                f"(done={bool(done[i])})"
            )
        snap["lengths"], snap["elapsed"] = lengths.astype(np.int64), elapsed.astype(np.int64)
        return snap

    def seed(self, seed: Any = None) -> None:
        """Deprecated (EnvPool keeps it, and ignores the value): use reset(seed=...) instead.

        Here the seed is kept for the next reset()/async_reset() that is given no seed of its own; nothing is
        stepped or reset now, so code ported from EnvPool (`env.seed(s); env.reset()`) runs as before.
        """
        import warnings

        warnings.warn("seed() is deprecated; use reset(seed=...)", SeedDeprecationWarning, stacklevel=2)
        if seed is not None:
            self._seeds(seed, None)  # a bad seed fails here, not at the next reset
        self._next_seed = seed
