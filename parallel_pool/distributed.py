"""Pools on Ray actors behind the same front-ends: `parallel_pool.distributed.make(task_id, num_workers=K, ...)`.

K Ray actors each hold a local sync pool of about num_envs/K envs (its own worker threads, on its own cores, on any
node of the Ray cluster). `RayEngine` offers the calls of `_core.Engine` (send / recv / step / reset, output_specs), so
the gymnasium, gym and dm front-ends (and with them every adapter) run on it unchanged: one function still builds
each front-end's result from the raw arrays.

- env ids are global (0..num_envs-1); actor k owns a contiguous range and its local pool is seeded with
  seed + (first id of the range), so env i is seeded with seed + i and a trajectory does not depend on K;
- `send` makes one remote call per actor that owns some of the envs (their actions, as numpy arrays through Ray's
  object store), never one per env;
- `recv` returns batch_size envs from whichever calls finish first (`ray.wait`); a call that returns more rows
  than are needed leaves the rest for the next recv;
- an actor that dies makes recv/step raise `EnvError` naming its env ids (Ray reports the death to `ray.wait`, so
  this never hangs); with restart=True a new actor takes over the range and its envs are reset.

Envs written in Python (`env_fn=...`, `backend="python"`, ids without a C++ port) run the same way: each actor holds
a `ProcessEngine` of its env range instead of a `_core.Engine`.

Ray is an optional dependency: `pip install "parallel-pool[ray]"`.

Over 600 lines for one reason: the actor (PoolActor) and the driver's engine (RayEngine) are the two ends of one
protocol (which actor owns which ids, the calls in flight, held rows after a restart, the two-phase restore), and
each end is read against the other.
"""

from __future__ import annotations

import functools
import typing as _typing
from collections import deque

import numpy as np

from parallel_pool import _core
from parallel_pool.engine import Engine, SendRecvEngine, env_error
from parallel_pool.frontends import DmPool, GymnasiumPool, GymPool
from parallel_pool.spec import EnvSpec

if _typing.TYPE_CHECKING:  # the annotations' names only (strings at run time): dir() lists the API
    from collections.abc import Sequence
    from typing import Any

__all__ = ["make", "RayEngine"]

# the exceptions a local pool raises for bad input, a failing env or a refused call (RuntimeError, EnvError's base):
# sent back as values, re-raised by the driver, the envs left usable
_PASSED_ON = (ValueError, TypeError, IndexError, RuntimeError)
_EXCEPTIONS = {e.__name__: e for e in _PASSED_ON}
# the per-env calls an actor runs for the driver (PoolActor.call): nothing else of the pool is reachable by name
_PER_ENV_CALLS = ("num_players", "get_state", "set_state", "get_config")


class _Failed:
    """What an actor returns instead of a batch when its local pool raised one of `_PASSED_ON`."""

    def __init__(self, exc: Exception, offset: int):
        self.type_name = type(exc).__name__
        self.message = str(exc)
        self.env_ids = [int(i) + offset for i in getattr(exc, "env_ids", [])]
        self.messages = list(getattr(exc, "messages", []))

    def exception(self) -> Exception:
        if self.type_name == "EnvError":
            return env_error(self.message, self.env_ids, self.messages, batch_kept=False)
        return _EXCEPTIONS.get(self.type_name, RuntimeError)(self.message)


class PoolActor:
    """Runs on a Ray worker: a local sync pool of the envs first_id .. first_id + num_envs - 1 (global ids).

    It gets the task id and the config keys as the user gave them and resolves them here, in its own process: the
    package folders (Atari ROMs, MuJoCo XMLs) and the DMC model cache are those of the node it runs on. Python envs
    come as their spec (the env_fn travels pickled) and run in a ProcessEngine on this actor's node.
    """

    def __init__(self, task: str | EnvSpec, kwargs: dict[str, Any], first_id: int):
        if isinstance(task, str):
            spec = EnvSpec(task, **kwargs)
            self.pool: Engine = _core.Engine(spec.env_class, spec.config_dict)
        else:
            from parallel_pool.process_engine import ProcessEngine
            from parallel_pool.python_env import PythonEnvSpec

            assert isinstance(task, PythonEnvSpec)
            # one layout for every actor (the driver joins their batches): keys seen late travel as objects
            self.pool = ProcessEngine(task.with_config(**kwargs), grow=False)
        self.offset = first_id
        names = [name for name, *_ in self.pool.output_specs]
        self._id_fields = [names.index("env_id"), names.index("players.env_id")]

    def ready(self) -> tuple[list, int]:
        """The output layout and this worker's process id (construction finished)."""
        import os

        return self.pool.output_specs, os.getpid()

    def run(self, actions: Any, env_id: np.ndarray, reset: bool, seeds: np.ndarray | None) -> Any:
        """Step (or reset) the given envs; their rows in that order, with global env ids."""
        local = env_id - self.offset
        try:
            out = list(self.pool.reset(local, seeds) if reset else self.pool.step(actions, local))
        except _PASSED_ON as e:
            return _Failed(e, self.offset)
        for i in self._id_fields:
            out[i] = out[i] + self.offset
        return tuple(out)

    def call(self, name: str, env_id: int, *args: Any) -> Any:
        """A per-env engine call (one of _PER_ENV_CALLS) by global env id."""
        if name not in _PER_ENV_CALLS:
            raise ValueError(f"a Ray pool's actor runs only the per-env calls {list(_PER_ENV_CALLS)}, not {name!r}")
        return getattr(self.pool, name)(env_id - self.offset, *args)

    def render(self, env_id: np.ndarray) -> np.ndarray:
        return self.pool.render(env_id - self.offset)

    def set_config(self, env_id: np.ndarray, values: dict[str, Any]) -> None:
        self.pool.set_config(env_id - self.offset, values)

    def check_config(self, env_id: np.ndarray, values: dict[str, Any]) -> None:
        """Raises where set_config would (Python envs; a C++ pool's values were checked by the driver)."""
        if hasattr(self.pool, "check_config"):
            self.pool.check_config(env_id - self.offset, values)

    def configs(self, env_id: np.ndarray) -> list[dict[str, Any]]:
        """The values of these envs (set_config's undo, see RayEngine.set_config)."""
        return [self.pool.get_config(int(e) - self.offset) for e in env_id]

    def snapshot(self, env_id: np.ndarray, key: bytes | None) -> Any:
        """Python envs: signed with the driver's key (the actor's node may have another key file)."""
        if key is None:
            return self.pool.snapshot(env_id - self.offset)
        return self.pool.snapshot(env_id - self.offset, key)  # type: ignore[call-arg]

    # set_state in two phases across the actors (RayEngine.restore): prepare on every actor, then commit on all, or
    # abort on all. Python envs: prepare checks and holds the envs, commit puts them in place. C++ envs (whose
    # restore is all or nothing within the actor): prepare keeps the envs' current snapshot and restores, abort
    # restores what was kept.
    def prepare_restore(self, env_id: np.ndarray, snapshot: tuple, key: bytes | None, trusted: bool) -> None:
        local = env_id - self.offset
        env, generator, elapsed, done = snapshot
        if hasattr(self.pool, "prepare_restore"):
            self.pool.prepare_restore(local, env, elapsed, done, key, trusted)
            return
        self._kept = None
        kept = self.pool.snapshot(local)
        self.pool.restore(local, env, generator, elapsed, done)
        self._kept = (local, kept)

    def commit_restore(self) -> None:
        if hasattr(self.pool, "commit_restore"):
            self.pool.commit_restore()
        self._kept = None

    def abort_restore(self) -> None:
        if hasattr(self.pool, "abort_restore"):
            self.pool.abort_restore()
        kept, self._kept = getattr(self, "_kept", None), None
        if kept is not None:
            self.pool.restore(kept[0], *kept[1])


@functools.cache
def _remote_actor_class() -> Any:
    import ray

    return ray.remote(PoolActor)


def _take(actions: Any, rows: np.ndarray) -> Any:
    """The action rows `rows` (one array, or one array per action key)."""
    if isinstance(actions, list):
        return [a[rows] for a in actions]
    return actions[rows]


class RayEngine(SendRecvEngine):
    """The calls of `_core.Engine` served by `num_workers` Ray actors, each a local pool of a contiguous env range.

    Placement: `actor_options` go to Ray's `.options()` of every actor (num_cpus, resources, scheduling_strategy,
    runtime_env, ...); one_per_node=True puts each actor on its own node (a STRICT_SPREAD placement group).
    """

    def __init__(
        self,
        spec: EnvSpec,
        num_workers: int,
        actor_options: dict[str, Any] | None = None,
        one_per_node: bool = False,
        restart: bool = False,
        start_timeout_s: float = 120.0,
    ):
        """Start the actors and wait until each holds its pool.

        Args:
            spec: the task's resolved spec (`parallel_pool.make_spec`).
            num_workers: how many actors share the envs.
            actor_options: Ray `.options()` of every actor (default `{"num_cpus": 1}`).
            one_per_node: each actor on its own node.
            restart: a new actor replaces one that died (its envs restart from their initial seeds).
            start_timeout_s: how long to wait for the actors to be placed and started.

        Raises:
            RuntimeError: the actors were not placed or started within `start_timeout_s`.
        """
        import ray

        config = spec.config_dict
        self.num_envs: int = config["num_envs"]
        self.batch_size: int = config["batch_size"] or self.num_envs
        self._sync = self.batch_size == self.num_envs
        self._spec = spec
        self._restart = restart
        self._timeout = start_timeout_s
        self._options = {"num_cpus": 1, **(actor_options or {})}
        self._closed = False
        self.actors: list[Any] = []
        self._pg = None
        ranges = np.array_split(np.arange(self.num_envs), num_workers)
        self._first = [int(r[0]) for r in ranges]
        self._owner = np.repeat(np.arange(num_workers), [len(r) for r in ranges])
        self._dead = np.zeros(num_workers, dtype=bool)
        self._action_keys = len(spec.action_arrays)
        self._inflight: dict[Any, tuple[int, np.ndarray]] = {}  # object ref -> (actor, its env ids)
        # sync pools: each send's refs, env ids and the held rows it hands out in place of a step
        self._sends: deque[tuple[list[Any], np.ndarray, list[tuple[np.ndarray, ...]]]] = deque()
        self._held: dict[int, tuple[np.ndarray, ...]] = {}  # sync pools: env id -> its restarted actor's reset row
        self._ready: list[tuple[np.ndarray, ...]] = []  # async pools: received rows not yet returned
        self._busy = np.zeros(self.num_envs, dtype=bool)  # sent, result not yet returned by recv
        try:
            if one_per_node:
                self._pg = self._placement_group(ray, num_workers)
            self.actors = [self._start(k) for k in range(num_workers)]
            self.pids = [self._wait_ready(ray, a, k) for k, a in enumerate(self.actors)]
        except BaseException:
            self.close()
            raise

    # ---- actors -----------------------------------------------------------------------------------------------
    def _placement_group(self, ray: Any, num_workers: int) -> Any:
        from ray.util.placement_group import placement_group, remove_placement_group

        bundle = {"CPU": self._options.get("num_cpus", 1)}
        pg = placement_group([bundle] * num_workers, strategy="STRICT_SPREAD")
        try:
            ray.get(pg.ready(), timeout=self._timeout)
        except ray.exceptions.GetTimeoutError:
            remove_placement_group(pg)
            nodes = len([n for n in ray.nodes() if n["Alive"]])
            raise RuntimeError(
                f"one_per_node=True needs {num_workers} nodes with {bundle} free each; the Ray cluster has {nodes} "
                f"alive node(s) and none could be reserved within start_timeout_s={self._timeout}"
            ) from None
        return pg

    def _start(self, k: int) -> Any:
        options = dict(self._options)
        if self._pg is not None:
            from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

            options["scheduling_strategy"] = PlacementGroupSchedulingStrategy(self._pg, placement_group_bundle_index=k)
        n = int(np.count_nonzero(self._owner == k))
        seed = self._spec.config_dict["seed"] + self._first[k]  # env i keeps seed + i
        if self._spec.backend == "python":  # the actor's share of the workers (num_threads: per actor, as for C++)
            config = {"num_envs": n, "batch_size": n, "seed": seed, "first": self._first[k]}
            return _remote_actor_class().options(**options).remote(self._spec, config, self._first[k])
        kwargs = dict(self._spec.kwargs, num_envs=n, batch_size=n, seed=seed)  # resolved by the actor
        for key, value in self._spec.config_dict.items():  # per-env values: this actor's envs' own
            if isinstance(value, tuple):
                kwargs[key] = value[self._first[k] : self._first[k] + n]
        return _remote_actor_class().options(**options).remote(self._spec.task_id, kwargs, self._first[k])

    def _wait_ready(self, ray: Any, actor: Any, k: int) -> int:
        try:
            specs, pid = ray.get(actor.ready.remote(), timeout=self._timeout)
        except ray.exceptions.GetTimeoutError:
            raise RuntimeError(
                f"Ray actor {k} did not start within start_timeout_s={self._timeout}: the cluster may lack the "
                f"resources asked for ({self._options})"
            ) from None
        self.output_specs = specs
        return int(pid)

    def _envs_of(self, k: int) -> np.ndarray:
        return np.flatnonzero(self._owner == k)

    def _lost(self, k: int, cause: BaseException) -> Exception:
        """Actor k died: forget its calls and rows; restart it (restart=True) or mark its envs lost."""
        import ray

        lost = self._envs_of(k)
        for ref in [r for r, (owner, _) in self._inflight.items() if owner == k]:
            del self._inflight[ref]
        self._ready = [b for b in self._ready if not np.isin(b[self._env_id], lost).any()]
        self._busy[lost] = False
        first, last = int(lost[0]), int(lost[-1])
        what = f"Ray actor {k} (env_ids {first}..{last}) died: {type(cause).__name__}"
        if not self._restart:
            self._dead[k] = True
            return env_error(
                f"{what}; env_ids {lost.tolist()} are lost (make the pool with restart=True to restart them)",
                lost.tolist(),
                [str(cause)] * len(lost),
                batch_kept=False,
            )
        ray.kill(self.actors[k], no_restart=True)
        self.actors[k] = self._start(k)
        self.pids[k] = self._wait_ready(ray, self.actors[k], k)
        if self._sync:  # their reset rows are the next step's result for them (the action is ignored, as in autoreset)
            rows = ray.get(self.actors[k].run.remote(None, lost, True, None))
            if isinstance(rows, _Failed):
                raise rows.exception()
            for i, env in enumerate(lost):
                self._held[int(env)] = tuple(a[i : i + 1] for a in rows)
        else:  # an async pool gets their reset rows from later recv()s, as after async_reset
            self._dispatch(None, lost, True, None)
        return env_error(
            f"{what}; a new actor took over env_ids {lost.tolist()}, which restart from their initial seeds"
            + (
                " (their next step returns their reset rows)"
                if self._sync
                else " (their reset rows come through recv())"
            ),
            lost.tolist(),
            [str(cause)] * len(lost),
            batch_kept=True,
        )

    # ---- the engine calls ---------------------------------------------------------------------------------------
    @property
    def _env_id(self) -> int:
        return [name for name, *_ in self.output_specs].index("env_id")

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("this pool has been closed; create a new one with parallel_pool.distributed.make(...)")

    def _ids(self, env_id: Any) -> np.ndarray:
        if env_id is None:
            return np.arange(self.num_envs)
        ids = np.atleast_1d(np.asarray(env_id))
        if ids.ndim != 1 or not np.issubdtype(ids.dtype, np.integer):
            raise TypeError(f"env_id must be an int or a 1-D sequence of ints, got {env_id!r}")
        bad = ids[(ids < 0) | (ids >= self.num_envs)]
        if len(bad):
            raise ValueError(f"env_id {int(bad[0])} is out of range: this pool has env ids 0..{self.num_envs - 1}")
        uniq, counts = np.unique(ids, return_counts=True)
        if (counts > 1).any():
            raise ValueError(f"env_id {int(uniq[counts > 1][0])} appears more than once")
        return ids.astype(np.int64)

    def _actions(self, actions: Any, n: int) -> Any:
        """One array per action key (a list when there are several), each with a row per env."""
        arrays = [np.asarray(a) for a in actions] if self._action_keys > 1 else [np.asarray(actions)]
        for a, spec in zip(arrays, self._spec.action_arrays):
            if a.ndim == 0 or a.shape[0] != n:
                raise ValueError(
                    f"action {spec['name']!r} has shape {a.shape}, expected {n} rows ({n} envs in this call)"
                )
        return arrays if self._action_keys > 1 else arrays[0]

    def send(self, actions: Any, env_id: Any, reset: bool = False, seeds: Any = None) -> None:
        """Step (or reset) the envs `env_id` (None: all): one remote call per actor that owns some of them."""
        self._check_open()
        ids = self._ids(env_id)
        dead = ids[self._dead[self._owner[ids]]]
        if len(dead):
            raise env_error(
                f"env_ids {dead.tolist()} were lost with their Ray actor", dead.tolist(), [], batch_kept=False
            )
        pending = ids[self._busy[ids]]
        if len(pending):
            raise ValueError(
                f"env {int(pending[0])} already has an action pending; recv() its result before sending again"
            )
        if not reset:
            actions = self._actions(actions, len(ids))
        if seeds is not None:
            seeds = np.asarray(seeds, dtype=np.int64)
        self._dispatch(actions, ids, reset, seeds)

    def _dispatch(self, actions: Any, ids: np.ndarray, reset: bool, seeds: np.ndarray | None) -> None:
        """One remote call per actor owning some of `ids` (sync pools: none for an env with a held reset row)."""
        held = []
        if self._sync and self._held:
            for i in ids:
                row = self._held.pop(int(i), None)
                if row is not None and not reset:  # a reset replaces the held row
                    held.append(row)
        owners = self._owner[ids]
        sent = ~np.isin(ids, [int(b[self._env_id][0]) for b in held])
        refs = []
        for k in np.unique(owners[sent]):
            rows = np.flatnonzero((owners == k) & sent)
            part = None if reset else _take(actions, rows)
            ref = self.actors[k].run.remote(part, ids[rows], reset, None if seeds is None else seeds[rows])
            self._inflight[ref] = (int(k), ids[rows])
            refs.append(ref)
        self._busy[ids] = True
        if self._sync:
            self._sends.append((refs, ids, held))

    def _fetch(self, ref: Any) -> tuple[np.ndarray, ...]:
        """The rows of a finished call; its failure raised (a dead actor as EnvError)."""
        import ray

        k, ids = self._inflight.pop(ref)
        try:
            out = ray.get(ref)
        except ray.exceptions.RayActorError as e:
            raise self._lost(k, e) from None
        except ray.exceptions.RayTaskError as e:  # an exception run() does not pass on: the actor lives on
            self._busy[ids] = False
            raise e.as_instanceof_cause() from None
        if isinstance(out, _Failed):
            self._busy[ids] = False  # the local pool rejected the call or an env threw: nothing is pending
            raise out.exception()
        return out

    def recv(self) -> tuple[np.ndarray, ...]:
        """The next batch_size envs' rows, from whichever calls finish first; an actor that died raises `EnvError`."""
        self._check_open()
        return self._recv_sync() if self._sync else self._recv_async()

    def _recv_sync(self) -> tuple[np.ndarray, ...]:
        """The oldest send's rows, in its env order (as a local sync pool)."""
        import ray

        if not self._sends:
            raise RuntimeError("recv() called but no actions were sent: call send() first")
        refs, ids, held = self._sends[0]
        if refs:
            ray.wait(refs, num_returns=len(refs))
        self._sends.popleft()
        blocks, error = list(held), None
        for ref in refs:  # every call of the send is collected, even after one of them failed
            try:
                blocks.append(self._fetch(ref))
            except Exception as e:
                error = error or e
        if error is not None:
            self._free(blocks)
            for b in held:  # not handed out: still the next step's result for their envs
                self._held[int(b[self._env_id][0])] = b
            raise error
        arrays = self._hand_out(blocks, len(ids))
        where = np.empty(self.num_envs, dtype=np.int64)
        where[arrays[self._env_id]] = np.arange(len(ids))
        return tuple(a[where[ids]] for a in arrays)  # actor order -> the order the envs were sent in

    def _recv_async(self) -> tuple[np.ndarray, ...]:
        """batch_size rows from whichever calls finish first."""
        import ray

        have = sum(len(b[self._env_id]) for b in self._ready)
        in_flight = sum(len(ids) for _, ids in self._inflight.values())
        if have + in_flight < self.batch_size:
            raise RuntimeError(
                f"recv() would wait forever: only {have + in_flight} envs have results pending but batch_size is "
                f"{self.batch_size}; send() more envs first"
            )
        while have < self.batch_size:
            done, _ = ray.wait(list(self._inflight), num_returns=1)
            block = self._fetch(done[0])
            self._ready.append(block)
            have += len(block[self._env_id])
        return self._hand_out(self._ready, self.batch_size)

    def _hand_out(self, blocks: list[tuple[np.ndarray, ...]], n: int) -> tuple[np.ndarray, ...]:
        """The first n rows of `blocks` (copied into fresh, writeable arrays); async pools keep the rest."""
        arrays = tuple(np.concatenate(parts) for parts in zip(*blocks))
        if not self._sync:
            rest = tuple(a[n:] for a in arrays)
            self._ready = [rest] if len(rest[self._env_id]) else []
            arrays = tuple(a[:n] for a in arrays)
        self._busy[arrays[self._env_id]] = False
        return arrays

    def _free(self, blocks: list[tuple[np.ndarray, ...]]) -> None:
        for b in blocks:
            self._busy[b[self._env_id]] = False

    # ---- per-env calls ------------------------------------------------------------------------------------------
    def _actor_of(self, env_id: int) -> Any:
        self._check_open()
        self._ids(env_id)
        return self.actors[self._owner[env_id]]

    def _call(self, name: str, env_id: int, *args: Any) -> Any:
        import ray

        return ray.get(self._actor_of(env_id).call.remote(name, env_id, *args))

    def num_players(self, env_id: int) -> int:
        """The players of env `env_id` (1: multi-player envs do not run on Ray)."""
        return self._call("num_players", env_id)

    def get_state(self, env_id: int) -> list[float]:
        """The simulator state of C++ env `env_id`, from the actor that holds it."""
        return self._call("get_state", env_id)

    def set_state(self, env_id: int, state: Sequence[float]) -> None:
        """Put `state` (from get_state) into env `env_id` on the actor that holds it."""
        self._call("set_state", env_id, state)

    def get_config(self, env_id: int) -> dict[str, Any]:
        """The config values of env `env_id`, from the actor that owns it."""
        return self._call("get_config", env_id)

    def set_config(self, env_ids: Any, values: dict[str, Any]) -> None:
        """Each owning actor sets its envs' values (a tuple value has one entry per env id, in env_ids order)."""
        import ray

        self._check_open()
        ids = self._ids(env_ids)
        owners = self._owner[ids]
        parts = {}
        for k in np.unique(owners).tolist():
            mine = np.flatnonzero(owners == k)
            part = {key: tuple(v[i] for i in mine) if isinstance(v, tuple) else v for key, v in values.items()}
            parts[k] = (ids[mine], part)
        # all or nothing: every actor checks its envs' values first (Python envs: each built once on the actor);
        # where one still refuses while setting, the others get back the values they had, so no env changes
        ray.get([self.actors[k].check_config.remote(mine, part) for k, (mine, part) in parts.items()])
        before = {k: self.actors[k].configs.remote(mine) for k, (mine, _) in parts.items()}
        refs = {k: self.actors[k].set_config.remote(mine, part) for k, (mine, part) in parts.items()}
        failed: BaseException | None = None
        done = []
        for k, ref in refs.items():
            try:
                ray.get(ref)
                done.append(k)
            except Exception as e:
                failed = failed or e
        if failed is None:
            return
        undo = []
        for k in done:
            old = ray.get(before[k])
            mine = parts[k][0]
            had = {key: tuple(c[key] for c in old) for key in values if all(key in c for c in old)}
            undo.append(self.actors[k].set_config.remote(mine, had))
        ray.get(undo)
        cause = getattr(failed, "cause", None)
        raise cause if isinstance(cause, Exception) else failed

    def snapshot(
        self, env_ids: Any, key: bytes | None = None
    ) -> tuple[list[np.ndarray], np.ndarray, np.ndarray, np.ndarray]:
        """Each owning actor's snapshots, put back in env_ids order (Python envs: signed with `key`)."""
        import ray

        self._check_open()
        ids = self._ids(env_ids)
        owners = self._owner[ids]
        parts = {int(k): ray.get(self.actors[k].snapshot.remote(ids[owners == k], key)) for k in np.unique(owners)}
        env: list[np.ndarray] = [np.empty(0)] * len(ids)
        width = next(iter(parts.values()))[1].shape[1]  # C++ envs: the generator's 625 words; Python envs: none
        generator = np.zeros((len(ids), width), dtype=np.uint32)
        elapsed = np.zeros(len(ids), dtype=np.int32)
        done = np.zeros(len(ids), dtype=bool)
        for k, (e, g, el, d) in parts.items():
            rows = np.flatnonzero(owners == k)
            for j, r in enumerate(rows):
                env[r] = e[j]
            generator[rows], elapsed[rows], done[rows] = g, el, d
        return env, generator, elapsed, done

    def restore(
        self,
        env_ids: Any,
        env: list[np.ndarray],
        generator: Any,
        elapsed: Any,
        done: Any,
        key: bytes | None = None,
        trusted: bool = False,
    ) -> None:
        """Restore the snapshots of `env_ids`, all or nothing across the actors.

        Every owning actor prepares its envs (PoolActor.prepare_restore); when all have, each commits; when one
        refuses, the others abort and no env changes. An actor that dies on the way is an EnvError naming its envs
        (as in a step).
        """
        self._check_open()
        ids = self._ids(env_ids)
        owners = self._owner[ids]
        actors = [int(k) for k in np.unique(owners)]
        prepared = {}
        for k in actors:
            rows = np.flatnonzero(owners == k)
            part = (
                [env[r] for r in rows],
                np.asarray(generator)[rows],
                np.asarray(elapsed)[rows],
                np.asarray(done)[rows],
            )
            prepared[k] = self.actors[k].prepare_restore.remote(ids[rows], part, key, trusted)
        failed = self._outcomes(prepared)
        if failed:
            ready = [k for k in actors if k not in failed]
            self._outcomes({k: self.actors[k].abort_restore.remote() for k in ready})
            raise self._first_failure(failed)
        failed = self._outcomes({k: self.actors[k].commit_restore.remote() for k in actors})
        if failed:
            raise self._first_failure(failed)

    def _outcomes(self, refs: dict[int, Any]) -> dict[int, BaseException]:
        """Each call's exception by actor (all of them waited for); an actor that died is an EnvError (_lost)."""
        import ray

        failed: dict[int, BaseException] = {}
        for k, ref in refs.items():
            try:
                ray.get(ref)
            except ray.exceptions.RayActorError as e:
                failed[k] = self._lost(k, e)
            except Exception as e:
                cause = getattr(e, "cause", None)
                failed[k] = cause if isinstance(cause, Exception) else e
        return failed

    @staticmethod
    def _first_failure(failed: dict[int, BaseException]) -> BaseException:
        """The error to raise: an actor's death first (its envs are lost), else the first refusal."""
        lost = [e for e in failed.values() if isinstance(e, _core.EnvError)]
        return lost[0] if lost else next(iter(failed.values()))

    def render(self, env_ids: Any) -> np.ndarray:
        """The frames of `env_ids`, each drawn by the actor that owns the env."""
        import ray

        self._check_open()
        ids = self._ids(env_ids)
        owners = self._owner[ids]
        parts = {int(k): self.actors[k].render.remote(ids[owners == k]) for k in np.unique(owners)}
        frames = {k: list(ray.get(ref)) for k, ref in parts.items()}
        return np.stack([frames[int(k)].pop(0) for k in owners])

    # ---- lifecycle ----------------------------------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        """Whether close() ran."""
        return self._closed

    def close(self) -> None:
        """Stop the actors (and their pools); idempotent."""
        """End every actor (and the placement group). Idempotent."""
        if self._closed:
            return
        self._closed = True
        import ray

        for actor in self.actors:
            ray.kill(actor, no_restart=True)
        if self._pg is not None:
            from ray.util.placement_group import remove_placement_group

            remove_placement_group(self._pg)
        self._inflight.clear()
        self._sends.clear()
        self._held.clear()
        self._ready = []


class _OnRay:
    """Front-end mixin: the engine is a `RayEngine` instead of a local `_core.Engine`."""

    def __init__(self, spec: EnvSpec, render_mode: str | None, ray_options: dict[str, Any]):
        self._ray_options = ray_options
        super().__init__(spec, render_mode)  # type: ignore[call-arg]

    def _new_engine(self, spec: EnvSpec) -> RayEngine:
        return RayEngine(spec, **self._ray_options)

    @property
    def actors(self) -> list[Any]:
        """The Ray actor handles, actor k holding a contiguous range of env ids."""
        return self.engine.actors  # type: ignore[attr-defined]

    def xla(self) -> Any:
        raise NotImplementedError(
            "env.xla() runs the engine inside this process; a distributed pool's envs run on Ray actors"
        )


class RayGymnasiumPool(_OnRay, GymnasiumPool):  # type: ignore[misc]
    """A gymnasium.vector.VectorEnv whose envs run on Ray actors (see parallel_pool.distributed)."""


class RayGymPool(_OnRay, GymPool):  # type: ignore[misc]
    """EnvPool's gym API, envs on Ray actors."""


class RayDmPool(_OnRay, DmPool):
    """A batched dm_env.Environment, envs on Ray actors."""


_FRONT_ENDS = {"gymnasium": RayGymnasiumPool, "gym": RayGymPool, "dm": RayDmPool}


def make(
    task_id: str | None = None,
    env_type: str = "gymnasium",
    num_workers: int = 2,
    actor_options: dict[str, Any] | None = None,
    one_per_node: bool = False,
    restart: bool = False,
    start_timeout_s: float = 120.0,
    render_mode: str | None = None,
    *,
    env_fn: Any = None,
    backend: str | None = None,
    **config: Any,
) -> Any:
    """`parallel_pool.make`'s pool, its envs spread over `num_workers` Ray actors.

    Each actor holds a local pool of about num_envs / num_workers envs, on its own cores, anywhere in the Ray
    cluster. Connects to Ray as `ray.init()` does when it is not initialized yet (RAY_ADDRESS, or a local cluster).
    Python envs run in worker processes on each actor's node. Multi-player envs and `env.xla()` are not available
    on Ray.

    Args:
        task_id: as `parallel_pool.make`'s.
        env_type: "gymnasium", "gym" or "dm", as `parallel_pool.make`'s.
        num_workers: how many Ray actors share the envs (1..num_envs).
        actor_options: Ray `.options()` of every actor (default `{"num_cpus": 1}`): num_cpus, resources,
            scheduling_strategy, runtime_env, ...
        one_per_node: each actor on its own node (a STRICT_SPREAD placement group).
        restart: a new actor replaces one that died (its envs restart from their initial seeds).
        start_timeout_s: how long to wait for the actors to be placed and started before raising.
        render_mode: as `parallel_pool.make`'s.
        env_fn: as `parallel_pool.make`'s.
        backend: as `parallel_pool.make`'s.
        **config: `parallel_pool.make`'s config keys (num_envs, batch_size, seed, num_threads per actor, ...).

    Returns:
        The pool of the front-end `env_type` names; its `actors` are the Ray actor handles.

    Raises:
        ValueError: an unknown `env_type`, `num_workers` out of 1..num_envs, a multi-player env, or what
            `parallel_pool.make_spec` refuses.

    Example:
        ```python
        from parallel_pool import distributed

        env = distributed.make("Pong-v5", num_envs=64, num_workers=4)
        obs, info = env.reset()
        ```
    """
    if env_type not in _FRONT_ENDS:
        raise ValueError(f"env_type must be one of {list(_FRONT_ENDS)}, got {env_type!r}")
    from parallel_pool import make_spec

    spec = make_spec(task_id, env_fn=env_fn, backend=backend, render_mode=render_mode, **config)
    if spec.max_num_players != 1:
        raise ValueError(f"max_num_players={spec.max_num_players}: multi-player envs do not run on Ray actors yet")
    num_envs = spec.config_dict["num_envs"]
    if isinstance(num_workers, bool) or not isinstance(num_workers, int) or not 1 <= num_workers <= num_envs:
        raise ValueError(f"num_workers must be an int in 1..num_envs ({num_envs}), got {num_workers!r}")
    options = dict(
        num_workers=num_workers,
        actor_options=actor_options,
        one_per_node=one_per_node,
        restart=restart,
        start_timeout_s=start_timeout_s,
    )
    return _FRONT_ENDS[env_type](spec, render_mode, options)


# `annotations` is the __future__ import's flag, not part of the API (the compiler read it already): out of dir()
del annotations
