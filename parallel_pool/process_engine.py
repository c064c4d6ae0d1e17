"""`ProcessEngine`: the Engine contract (parallel_pool.engine) served by Python envs in worker processes.

Over 600 lines for one reason: ProcessEngine's calls share one state (commands in flight, rows pending, the Ctrl-C
holding, the restore's two phases), read best in one place. The workers are parallel_pool.process_worker; what
both sides share (commands, answers, framing, the segment's layout) is parallel_pool.process_protocol.

Layout. One shared-memory segment holds, for every output array of the batch ("obs" / "obs:<k>", "reward",
"terminated", "truncated", "env_id", "elapsed_step", "players.env_id", and with same-step autoreset
"final:obs..." and "final:elapsed_step") and every action array, one row per env, indexed by env id. Worker w owns a
contiguous range of env ids; it reads its envs' actions from their rows and writes their results into their rows.
`recv` copies the rows of the envs it hands out (fancy indexing: the batch's own arrays, as `_core.Engine.recv` gives).

Signals. One duplex pipe per worker: the parent sends one small binary command per worker per call (op, its number,
env ids, seeds), the worker answers once per command when all of its envs in it are done (the command's number, then
nothing, or the tracebacks of the envs that raised). The parent waits on the pipes of the workers with work in flight
(`select.poll`): a sync recv returns when every env of the send has answered, an async recv when
`batch_size` envs have (whichever workers finish first; extra rows wait for the next recv). Ctrl-C is held back
during a call except while it waits (_SigintHeld): messages are written and read whole; an answer to a call that was
interrupted is dropped by its number.

Faults: an exception in an env -> `EnvError` naming the env ids with the worker's traceback (sync: the env restarts
on its next step; async: the env is reset in place and the next recv returns the whole batch); a worker that dies ->
`EnvError` naming its envs, whose next reset starts a new worker. Workers ignore SIGINT (Ctrl-C is the parent's),
die with their parent (PR_SET_PDEATHSIG, and EOF on their pipe) and are started by the forkserver, so they share
no file descriptors with one another. A forked child leaves the parent's workers alone (_after_fork_in_child).
"""

from __future__ import annotations

import _signal
import _thread
import atexit
import functools
import multiprocessing.util
import os
import pickle
import secrets
import select
import signal
import sys
import threading
import weakref
from collections import deque
from collections.abc import Sequence
from typing import Any

import numpy as np

from parallel_pool import orphans
from parallel_pool.engine import SendRecvEngine, env_error, usable_cores
from parallel_pool.process_protocol import (
    ABORT,
    COLUMNS,
    COMMIT,
    CONFIG,
    EXTRA,
    FRAME,
    GET_STATE,
    HEADER,
    INFO,
    INTERRUPTIBLE,
    NUMBER,
    READY,
    RENDER,
    REPLIES,
    RESET,
    SET_STATE,
    STEP,
    VALUE,
    Layout,
    info_array,
    output_arrays,
    read_answer,
    read_snapshot,
    typed_key,
)
from parallel_pool.process_worker import worker_main

__all__ = ["ProcessEngine"]

_CLOSED = "this pool has been closed; create a new one with parallel_pool.make(...)"
_SHM_DIR = "/dev/shm/"  # where POSIX shared memory segments live (Linux), as orphans records them
_CLOSE_WAIT_S = 1.0  # close(): how long workers get to exit on their own before SIGKILL
# After answering, a worker polls its pipe this long before it sleeps in a blocking read: the parent's next command
# usually comes within ~100-150 us (the front-end's work between calls), and catching it awake saves the wake-up
# latency and the cold caches after a sleep (MiniGrid at 8 envs on 2 cores: +12%, LunarLander at 64: +10%). It
# yields the core on every poll, and is off when there are more workers than cores, where spinning cost 8%.
# PARALLEL_POOL_WORKER_SPIN_US overrides it (0: off).
_SPIN_S = 200e-6
# info keys seen after the start that get a typed array: an env whose keys change every step (a step number in the
# key) would otherwise grow the layout without end; the others travel in the object array
_MAX_GROWN = 64
_PIPE_BUF = select.PIPE_BUF - FRAME.size  # a command this short goes by one os.write (Connection's checks: ~4 us)


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # values without a truth value of ==, e.g. arrays
        return False


# ---- the parent side -----------------------------------------------------------------------------------------


class _Proc:
    """One worker process as the parent sees it."""

    def __init__(self, ids: np.ndarray):
        self.ids = ids  # the env ids it owns
        self.process: Any = None
        self.conn: Any = None
        self.poller: Any = None  # select.poll of conn: is an answer there to read
        self.unread = bytearray()  # bytes read from conn past the last whole answer (read_answer)
        # (number, op, env ids) of the commands not yet answered, in the order sent (the worker answers in order)
        self.inflight: deque[tuple[int, int, np.ndarray]] = deque()
        self.dead: str | None = None  # why it died


class _SigintHeld:
    """Ctrl-C (a Python SIGINT handler, KeyboardInterrupt by default) held back during an engine call, except where
    the call waits for a worker (`wait`). A KeyboardInterrupt raised inside a pipe read or write would leave part of
    a message in the pipe (and every later message misread), or a command sent but not recorded as in flight; held
    back, it is raised where the call waits (nothing half-read then) or when the call ends (its state whole).
    Python runs signal handlers in the main thread only: other threads need no holding."""

    def __init__(self) -> None:
        self.old: Any = None  # the handler held back
        self.pending: tuple[int, Any] | None = None
        self.waiting = False
        self.handler = self._handler  # (one bound method: made once)

    def hold(self) -> bool:
        """Hold SIGINT back if a Python handler would run for it (False: nothing to hold)."""
        # _signal: signal.signal/getsignal wrap each handler in an enum (~5 us a call), this is once per call
        old = _signal.getsignal(signal.SIGINT)
        if not callable(old):
            return False
        self.old = old
        _signal.signal(signal.SIGINT, self.handler)
        return True

    def _handler(self, signum: int, frame: Any) -> None:
        if self.waiting:
            self.old(signum, frame)
        else:
            self.pending = (signum, frame)

    def wait(self, block: Any, *args: Any) -> Any:
        """block(*args), a wait that reads nothing, interruptible by Ctrl-C."""
        if self.pending is not None:
            pending, self.pending = self.pending, None
            self.old(*pending)
        self.waiting = True
        try:
            return block(*args)
        finally:
            self.waiting = False

    def release(self) -> None:
        """Put the handler back, and run it for a SIGINT that came meanwhile (KeyboardInterrupt here)."""
        _signal.signal(signal.SIGINT, self.old)
        if self.pending is not None:
            pending, self.pending = self.pending, None
            self.old(*pending)


def _holding_sigint(call: Any) -> Any:
    """An engine call with Ctrl-C held back (_SigintHeld) in the main thread; a call made inside another one shares
    its holding."""

    @functools.wraps(call)
    def held(self: ProcessEngine, *args: Any, **kwargs: Any) -> Any:
        if self._held is not _NOT_HELD or _thread.get_ident() != _MAIN_THREAD[0] or not self._guard.hold():
            return call(self, *args, **kwargs)
        self._held = self._guard
        try:
            return call(self, *args, **kwargs)
        finally:
            self._held = _NOT_HELD
            self._guard.release()

    return held


_NOT_HELD = _SigintHeld()  # outside a call: waits are plain waits
_MAIN_THREAD = [threading.main_thread().ident]  # where Python runs signal handlers (after a fork: the forking thread)


_START_LOCK = threading.Lock()  # one worker start at a time: _main_hidden changes the process-wide __main__


class _main_hidden:
    """While a worker starts: hide the user's __main__ from multiprocessing, so the forkserver's child does not run
    the user's script again (spawn's rule, which needs an `if __name__ == "__main__":` guard that scripts written for
    gymnasium's fork-based vector envs do not have). The worker needs nothing from __main__: cloudpickle carries
    what env_fn uses from there by value. Starts from several threads take turns (_START_LOCK): one that saved what
    another had hidden would put back the hidden values."""

    def __enter__(self) -> None:
        _START_LOCK.acquire()
        self.main = sys.modules.get("__main__")
        self.saved: dict[str, Any] = {}
        try:
            for k in ("__file__", "__spec__"):
                if k in vars(self.main):
                    self.saved[k] = vars(self.main)[k]
                    setattr(self.main, k, None) if k == "__spec__" else delattr(self.main, k)
        except BaseException:
            self.__exit__()
            raise

    def __exit__(self, *exc: Any) -> None:
        try:
            for k, v in self.saved.items():
                setattr(self.main, k, v)
        finally:
            _START_LOCK.release()


def _context() -> Any:
    import multiprocessing

    ctx = multiprocessing.get_context("forkserver")
    # workers fork from a server that has these imported already (its first start pays for them once)
    ctx.set_forkserver_preload(["parallel_pool.process_worker", "gymnasium", "cloudpickle"])
    return ctx


class ProcessEngine(SendRecvEngine):
    """The envs of a `PythonEnvSpec` in `num_threads` worker processes; the calls of `_core.Engine`."""

    def __init__(self, spec: Any, grow: bool = True):
        """`grow`: give a numeric info key seen after the start a typed array (off for a Ray actor's engine, whose
        batches are joined with the other actors' of one fixed layout)."""
        from multiprocessing import shared_memory

        import cloudpickle

        self._closed = True  # until started (close() works on a half-made engine)
        self._pid = os.getpid()
        self._held = _NOT_HELD  # the Ctrl-C holding of the call in progress (_holding_sigint)
        self._guard = _SigintHeld()
        self._procs: list[_Proc] = []
        self._shm: Any = None
        cfg = spec.config_dict
        self._spec = spec
        self._env_kwargs: list[dict[str, Any]] = [dict(kw) for kw in spec.env_kwargs]  # each env's, for next reset
        self._config = {k: cfg[k] for k in ("num_envs", "batch_size", "seed", "max_episode_steps", "autoreset_mode")}
        spin_us = os.environ.get("PARALLEL_POOL_WORKER_SPIN_US")
        spin_s = _SPIN_S if spin_us is None else float(spin_us) * 1e-6
        self._config["spin_s"] = spin_s if cfg["num_threads"] <= usable_cores() else 0.0
        self.num_envs: int = cfg["num_envs"]
        self.batch_size: int = cfg["batch_size"]
        self.num_threads: int = cfg["num_threads"]
        self._sync = self.batch_size == self.num_envs
        try:
            self._env_fn_bytes = cloudpickle.dumps(spec.env_fn)
        except Exception as e:
            raise TypeError(
                f"env_fn {spec.env_fn!r} cannot be pickled for the worker processes ({type(e).__name__}: {e}); "
                "give a function or class that cloudpickle can serialize (no open files, locks or sockets)"
            ) from e
        self.output_specs = output_arrays(spec.engine_spec, cfg["autoreset_mode"] == "same_step")
        self._action_specs = [
            ("act:" + a["name"], a["dtype"], tuple(a["shape"]), a["low"], a["high"]) for a in spec.engine_spec["action"]
        ]
        # multi-agent envs (PettingZoo): the per-player arrays have max_num_players rows per env (env e's agent j at
        # row e * players + j); every other array one row per env
        self.players: int = spec.max_num_players
        self._per_player = [pp for *_, pp in self.output_specs]
        # the object arrays (each env's info entries without a typed column) live in this process, filled from the
        # workers' answers; every other array in the shared segment
        shared = [spec for spec in self.output_specs if spec[1] != "object"]
        self._layout = Layout(
            [(n, dt, s, self.num_envs * (self.players if pp else 1)) for n, dt, s, pp in shared]
            + [(n, dt, s, self.num_envs * self.players) for n, dt, s, _, _ in self._action_specs]
        )
        # named after this process (pp_<pid>_<random>), so that a segment left by a killed process can be proven
        # orphaned; multiprocessing creates it with mode 0600
        name = f"pp_{os.getpid()}_{secrets.token_hex(8)}"
        # what killed processes left (a SIGKILL of the process group skips every cleanup) goes first; this pool's
        # segment and multiprocessing's temp folder are recorded so that a later pool removes them should this
        # process be killed the same way (parallel_pool.orphans)
        orphans.clean_orphans()
        self._shm = shared_memory.SharedMemory(name=name, create=True, size=self._layout.size)
        orphans.claim(_SHM_DIR + self._shm.name)
        orphans.claim(multiprocessing.util.get_temp_dir())
        views = self._layout.views(self._shm.buf)
        # the object arrays (observation leaves of Python objects, info entries without a typed column), filled
        # from the workers' INFO answers
        self._objects = {
            name: np.full(self.num_envs * (self.players if pp else 1), None, dtype=object)
            for name, dtype, _, pp in self.output_specs
            if dtype == "object"
        }
        views.update(self._objects)
        self._out = [views[name] for name, *_ in self.output_specs]
        # numeric info keys seen after the start get typed arrays (_grow_columns) while `_grow`; keys seen so far
        self._grow = grow and EXTRA in self._objects
        self._seen: set[Any] = {a["name"] for a in spec.engine_spec["info"]}
        self._grown: list[tuple[Any, Layout]] = []  # (segment, its layout) of each growth
        self._grown_keys = 0
        self._act = [views[name] for name, *_ in self._action_specs]
        self._all = np.arange(self.num_envs, dtype=np.int32)
        self._owner = np.zeros(self.num_envs, dtype=np.int64)
        self._pending = np.zeros(self.num_envs, dtype=bool)
        self._done = np.zeros(self.num_envs, dtype=bool)  # sync: answered, not yet returned
        self._ready: deque[int] = deque()  # async: answered, not yet returned, in completion order
        # async: the env_id array of the last batch recv returned and its bytes, until the next send. An async
        # loop sends to exactly those envs (send(actions, info["env_id"])): they are known valid, distinct and
        # not pending, so that send skips the id checks (the bytes tell that the array was not changed since)
        self._batch_ids: np.ndarray | None = None
        self._batch_key = b""
        self._env_id_out = next(i for i, (name, *_) in enumerate(self.output_specs) if name == "env_id")
        self._sends: deque[np.ndarray] = deque()  # sync: env ids of each send not yet received
        self._errors: list[tuple[int, str]] = []  # env exceptions not yet raised
        self._lost: list[tuple[np.ndarray, str]] = []  # dead workers not yet raised
        self._number = 0  # of the last command sent: each command is numbered, and its answer carries the number
        self._awaited: set[int] = set()  # numbers of the REPLIES commands a call waits for
        self._replies: dict[int, Any] = {}  # number -> the answer to an awaited REPLIES command
        self._ctx = _context()
        # every worker's pipe, for an async recv's wait on whichever answers first (one poll object, kept: the
        # selector multiprocessing.connection.wait builds on each call cost more than the rest of the call)
        self._poller = select.poll()
        self._by_fd: dict[int, _Proc] = {}
        for w, ids in enumerate(np.array_split(self._all, self.num_threads)):
            self._owner[ids] = w
            self._procs.append(_Proc(ids))
        self._closed = False
        _LIVE.add(self)
        try:
            for p in self._procs:
                self._start(p)
            for p in self._procs:
                self._wait_ready(p)
        except BaseException:
            self.close()
            raise

    # ---- workers --------------------------------------------------------------------------------------------
    def _start(self, p: _Proc) -> None:
        parent_end, child_end = self._ctx.Pipe(duplex=True)
        first, count = int(p.ids[0]), len(p.ids)
        config = dict(
            self._config,
            env_kwargs=self._env_kwargs[first : first + count],
            agents=self._spec.agents,
            info_extra=bool(self._spec.engine_spec.get("info_extra")),
        )
        p.process = self._ctx.Process(
            target=worker_main,
            args=(child_end, self._shm.name, self._layout, self._env_fn_bytes, first, count, config),
            name=f"parallel_pool-{self._spec.task_id}-envs{first}-{first + count - 1}",
            daemon=True,
        )
        with _main_hidden():
            p.process.start()
        child_end.close()
        p.conn, p.dead, p.inflight = parent_end, None, deque()
        p.poller = select.poll()
        p.poller.register(parent_end.fileno(), select.POLLIN)
        p.unread = bytearray()
        self._poller.register(parent_end.fileno(), select.POLLIN)
        self._by_fd[parent_end.fileno()] = p

    def _wait_ready(self, p: _Proc) -> None:
        try:
            self._held.wait(p.poller.poll)
            msg = read_answer(p.conn.fileno(), p.unread)
        except (EOFError, OSError):
            p.process.join(1.0)
            raise RuntimeError(
                f"the worker process for envs {p.ids[0]}..{p.ids[-1]} of {self._spec.task_id} died while starting "
                f"({_exit_cause(p.process.exitcode)})"
            ) from None
        if msg != READY:
            raise RuntimeError(
                f"the worker process for envs {p.ids[0]}..{p.ids[-1]} could not build its envs with "
                f"env_fn={self._spec.env_fn!r}; the worker's traceback:\n{msg[1:].decode(errors='replace')}"
            )

    def _restart(self, p: _Proc) -> None:
        """A new worker for the envs of a dead one (their next step or reset starts fresh envs)."""
        self._unwatch(p)
        p.conn.close()
        if p.process.pid is not None:
            p.process.join(0)
        self._lost = [lost for lost in self._lost if lost[0] is not p.ids]  # the new worker's envs are not lost
        for shm, layout in self._grown:  # its envs' rows of the arrays added since the start: none until written
            for rows in layout.views(shm.buf).values():
                rows[p.ids] = 0
        for name in (EXTRA, "final:" + EXTRA):  # the new worker knows nothing of the old one's info entries
            if name in self._objects:
                self._objects[name][p.ids] = None
        try:
            self._start(p)
            self._wait_ready(p)
            for shm, layout in self._grown:
                self._command(p, COLUMNS, p.ids[:0], pickle.dumps((shm.name, layout)))
        except BaseException:  # a failed or interrupted start: the envs' next reset starts another worker
            if p.process.pid is not None:
                p.process.kill()
                p.process.join(1.0)
            p.dead = p.dead or "a new worker process did not start"
            raise

    def _died(self, p: _Proc, why: str | None = None) -> None:
        """Worker p is lost: it died, or (why) it is alive but unusable and is killed."""
        if p.dead is not None:
            return
        if why is not None:
            p.process.kill()
        self._unwatch(p)  # (a dead worker's pipe reads as ready for good)
        p.process.join(1.0)
        p.dead = f"worker process {p.process.pid} " + (why or f"died ({_exit_cause(p.process.exitcode)})")
        for _, _, ids in p.inflight:
            self._pending[ids] = False
            if self._sync:
                self._done[ids] = True  # the send completes; its recv raises
        p.inflight.clear()
        self._lost.append((p.ids, p.dead))

    def _unwatch(self, p: _Proc) -> None:
        fd = p.conn.fileno() if p.conn is not None and not p.conn.closed else -1
        if self._by_fd.pop(fd, None) is not None:
            self._poller.unregister(fd)

    # ---- calls ----------------------------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(_CLOSED)
        if os.getpid() != self._pid:
            raise RuntimeError("this pool belongs to the parent process (fork); make a new pool in this process")

    def _ids(self, env_id: Any) -> np.ndarray:
        if env_id is None:
            return self._all
        ids = np.atleast_1d(np.asarray(env_id))
        if ids.ndim != 1 or not (np.issubdtype(ids.dtype, np.integer) or ids.size == 0):
            raise TypeError(f"env_id must be an int or a 1-D sequence of ints, got {env_id!r}")
        if ids.size == 0:
            raise ValueError("env_id is empty: give at least one env id")
        bad = ids[(ids < 0) | (ids >= self.num_envs)]
        if len(bad):
            raise IndexError(f"env_id {int(bad[0])} is out of range: this pool has env ids 0..{self.num_envs - 1}")
        if len(ids) > 1:
            uniq, counts = np.unique(ids, return_counts=True)
            if (counts > 1).any():
                raise ValueError(f"env_id {int(uniq[counts > 1][0])} appears more than once")
        return ids.astype(np.int32)

    def _actions(self, actions: Any, n: int) -> list[np.ndarray]:
        """One array per action key, each with a row per env, checked against the action space (gymnasium's
        checks: shape, integer dtype and range of discrete actions, no NaN); nothing is written before all pass."""
        given = list(actions) if len(self._action_specs) > 1 and isinstance(actions, (list, tuple)) else [actions]
        if len(given) != len(self._action_specs):
            raise ValueError(f"expected {len(self._action_specs)} action arrays, got {len(given)}")
        out = []
        for a, (name, dtype, shape, low, high) in zip(given, self._action_specs):
            name = name[len("act:") :]
            a = np.asarray(a)
            if a.shape != (n, *shape):
                raise ValueError(
                    f"action {name!r} has shape {a.shape}, expected {(n, *shape)} ({n} "
                    f"{'envs' if self.players == 1 else 'player rows: max_num_players per env'} in this call)"
                )
            if np.dtype(dtype).kind in "biu":
                if a.dtype.kind not in "biu":
                    raise TypeError(f"action {name!r} must be integers (dtype {dtype}), got dtype {a.dtype}")
                lo, hi = np.asarray(low).reshape(-1), np.asarray(high).reshape(-1)
                if lo.size == 1 and hi.size == 1 and a.size and lo[0] <= a.min() and a.max() <= hi[0]:
                    out.append(a)
                    continue
                flat = a.reshape(n, -1)
                outside = (flat < (lo if lo.size > 1 else lo[0])) | (flat > (hi if hi.size > 1 else hi[0]))
                if outside.any():
                    r, c = np.argwhere(outside)[0]
                    raise ValueError(
                        f"action {name!r} row {r} is {flat[r, c]}, outside the valid range "
                        f"[{lo[c % lo.size]:g}, {hi[c % hi.size]:g}]"
                    )
            elif a.dtype.kind not in "biuf":
                raise TypeError(f"action {name!r} must be numeric (dtype {dtype}), got dtype {a.dtype}")
            elif a.dtype.kind == "f" and np.isnan(a).any():
                raise ValueError(f"action {name!r} has NaN in row {int(np.argwhere(np.isnan(a))[0][0])}")
            out.append(a)
        return out

    @_holding_sigint
    def step(self, actions: Any, env_id: Any = None) -> tuple[np.ndarray, ...]:
        return super().step(actions, env_id)

    @_holding_sigint
    def reset(self, env_id: Any = None, seeds: Any = None) -> tuple[np.ndarray, ...]:
        return super().reset(env_id, seeds)

    @_holding_sigint
    def send(self, actions: Any, env_id: Any, reset: bool = False, seeds: Any = None) -> None:
        self._check_open()
        batch, self._batch_ids = self._batch_ids, None
        if env_id is batch and batch is not None and batch.tobytes() == self._batch_key:
            ids = batch  # the last batch's envs (see _batch_ids)
        else:
            ids = self._ids(env_id)
            pending = ids[self._pending[ids]] if ids is not self._all else self._all[self._pending]
            if len(pending):
                raise ValueError(
                    f"env {int(pending[0])} already has an action pending; recv() its result before sending again"
                )
        every = ids is self._all  # the common call (all envs, in order) skips the index work
        owners = self._owner if every else self._owner[ids]
        workers = range(len(self._procs)) if every else np.flatnonzero(np.bincount(owners)).tolist()
        dead = [w for w in workers if self._procs[w].dead]
        if dead and not reset:
            lost = np.concatenate([self._procs[w].ids for w in dead])
            lost = lost[np.isin(lost, ids)].tolist()
            raise env_error(
                f"env_ids {lost} were lost with their worker ({self._procs[dead[0]].dead}); reset them to start a "
                "new worker",
                lost,
                [self._procs[w].dead or "" for w in dead],
                batch_kept=False,
            )
        seed_arr = None
        if reset:
            seed_arr = np.full(len(ids), -1, np.int64) if seeds is None else np.asarray(seeds, dtype=np.int64)
            if seed_arr.shape != (len(ids),):
                raise ValueError(f"seeds must have one value per env ({len(ids)}), got shape {seed_arr.shape}")
            if seeds is not None and (seed_arr < 0).any():
                raise ValueError(f"seeds must be >= 0, got {seed_arr.tolist()}")
            for w in dead:
                self._restart(self._procs[w])
        else:
            for rows, a in zip(self._act, self._actions(actions, len(ids) * self.players)):
                if every:
                    rows[:] = a
                else:
                    rows[ids if self.players == 1 else self._player_rows(ids)] = a
        self._dispatch(ids, owners, workers, RESET if reset else STEP, seed_arr)
        if self._sync:
            self._sends.append(ids)

    def _dispatch(self, ids: np.ndarray, owners: np.ndarray, workers: Any, op: int, seeds: np.ndarray | None) -> None:
        """One command per worker that owns some of `ids`."""
        every = ids is self._all
        if every:
            self._pending[:] = True
        else:
            self._pending[ids] = True
        sel: Any
        for w in workers:
            p = self._procs[w]
            if every:
                sub, sel = p.ids, slice(int(p.ids[0]), int(p.ids[-1]) + 1)
            elif len(workers) == 1:
                sub, sel = ids, slice(None)
            else:
                sel = np.flatnonzero(owners == w)
                sub = ids[sel]
            self._command(p, op, sub, b"" if seeds is None else seeds[sel].tobytes())

    def _command(self, p: _Proc, op: int, ids: np.ndarray, payload: bytes = b"") -> int:
        """Send worker p a command (numbered; recorded in flight first); returns its number."""
        self._number += 1
        p.inflight.append((self._number, op, ids))
        msg = HEADER.pack(op, self._number, len(ids)) + ids.tobytes() + payload
        try:
            if len(msg) < _PIPE_BUF:  # written whole by one write (POSIX), framed as Connection.recv_bytes reads it
                os.write(p.conn.fileno(), FRAME.pack(len(msg)) + msg)
            else:
                p.conn.send_bytes(msg)
        except OSError:
            self._died(p)
        return self._number

    def _wait(self, interruptible: bool = True) -> None:
        """Block until some worker with work in flight answers (or dies); take its answers. Only the wait itself is
        interruptible by Ctrl-C (_SigintHeld; not at all with interruptible=False): an answer is read whole."""
        if self._closed:  # by another thread, or a signal handler
            raise RuntimeError(_CLOSED)
        busy = [p for p in self._procs if p.inflight]
        if not busy:
            raise RuntimeError("recv() would wait forever: no env has an action in flight; send() first")
        block = self._held.wait if interruptible else _call
        if self._sync or len(busy) == 1:  # a sync recv needs every busy worker's answer: wait for them in turn
            ready = [busy[0]]
            if not busy[0].unread:
                block(busy[0].poller.poll)
        else:
            ready = [p for p in busy if p.unread]  # read already (with an earlier answer)
            while not ready:  # (only busy workers write; one that died idle reads as ready, and is found dead)
                if self._closed:
                    raise RuntimeError(_CLOSED)
                found = [self._by_fd.get(fd) for fd, _ in block(self._poller.poll)]
                ready = [p for p in found if p is not None and p.inflight]
                for p in found:
                    if p is not None and not p.inflight:
                        self._died(p)
        for p in ready:
            try:
                self._answer(p, read_answer(p.conn.fileno(), p.unread))
                while p.inflight and (p.unread or p.poller.poll(0)):
                    self._answer(p, read_answer(p.conn.fileno(), p.unread))
            except (EOFError, OSError):
                if self._closed:  # close() from another thread (or a signal handler) closed the pipes
                    raise RuntimeError(_CLOSED) from None
                self._died(p)

    def _answer(self, p: _Proc, msg: Any) -> None:
        number, op, ids = p.inflight[0]
        if msg[: NUMBER.size] != NUMBER.pack(number):  # the pipe lost its framing: never read a wrong answer
            self._died(p, f"answered out of order (expected the answer to command {number}); it was stopped")
            return
        p.inflight.popleft()
        body = memoryview(msg)[NUMBER.size :]  # a view: a large answer is not copied
        if op in (CONFIG, COLUMNS):
            return  # nothing to wait for: the values were stored (a worker that fails to add columns sends by pipe)
        if op in REPLIES:
            if number in self._awaited:  # else the call that sent it was interrupted: its answer is stale
                self._replies[number] = pickle.loads(body[1:]) if body[:1] == VALUE else RuntimeError(_tracebacks(body))
            return
        self._pending[ids] = False
        if not body:  # OK: the common answer
            pass
        elif body[:1] == INFO:
            errors, objects = pickle.loads(body[1:])
            self._errors.extend(errors)
            for row, values in objects.items():
                for name, value in values.items():
                    self._objects[name][row] = value
            if self._grow:
                self._grow_columns(objects)
        else:
            self._errors.extend(pickle.loads(body[1:]))
        if self._sync:
            self._done[ids] = True
        else:
            self._ready.extend(ids.tolist())

    def _grow_columns(self, objects: dict[int, dict[str, Any]]) -> None:
        """Typed arrays for the numeric info keys in `objects` (a worker's answer) seen for the first time, as the
        start's probe gives them (python_env.info_array; up to _MAX_GROWN keys). The arrays go into a segment of
        their own, before the object arrays of the batch layout (output_specs grows in place: Schema.refresh), and
        every worker writes them from its next step on (COLUMNS). This answer's values of them stay in the object
        array, which the front-end adds to the same arrays."""
        from multiprocessing import shared_memory

        new = []
        for values in objects.values():
            for name in (EXTRA, "final:" + EXTRA):
                for key, value in (values.get(name) or {}).items():
                    if key in self._seen:
                        continue
                    self._seen.add(key)
                    spec = info_array(key, value) if typed_key(key) and self._grown_keys < _MAX_GROWN else None
                    if spec is not None:
                        self._grown_keys += 1
                        new += [
                            ("info:" + key, spec["dtype"], tuple(spec["shape"]), False),
                            ("info_mask:" + key, "bool", (), False),
                        ]
        if not new:
            return
        if self._config["autoreset_mode"] == "same_step":
            new += [("final:" + name, dtype, shape, pp) for name, dtype, shape, pp in new]
        layout = Layout([(name, dtype, shape, self.num_envs) for name, dtype, shape, _ in new])
        shm = shared_memory.SharedMemory(name=f"pp_{os.getpid()}_{secrets.token_hex(8)}", create=True, size=layout.size)
        orphans.claim(_SHM_DIR + shm.name)
        self._grown.append((shm, layout))
        views = layout.views(shm.buf)
        at = next(i for i, (name, *_) in enumerate(self.output_specs) if name == EXTRA)
        self.output_specs[at:at] = new
        self._out[at:at] = [views[name] for name, *_ in new]
        self._per_player[at:at] = [False] * len(new)
        for p in self._procs:
            if not p.dead:
                self._command(p, COLUMNS, p.ids[:0], pickle.dumps((shm.name, layout)))

    def fix_layout(self) -> None:
        """Keep the batch layout as it is from now on (env.xla() traces its arrays once): info keys seen later travel
        in the object array."""
        self._grow = False

    def _raise_faults(self, batch_kept: bool) -> None:
        if self._lost:
            lost, self._lost = self._lost, []
            ids = np.concatenate([ids for ids, _ in lost]).tolist()
            causes = [cause for _, cause in lost]
            raise env_error(
                f"env_ids {ids} were lost: {'; '.join(causes)}; reset them to start a new worker",
                ids,
                causes,
                batch_kept=False,
            )
        if self._errors:
            errors, self._errors = self._errors, []
            ids = [e for e, _ in errors]
            what = "were reset; the next recv() returns the whole batch" if batch_kept else "restart on their next step"
            raise env_error(
                f"env_ids {ids} raised in their worker process ({what}):\n" + "\n".join(tb for _, tb in errors),
                ids,
                [tb for _, tb in errors],
                batch_kept=batch_kept,
            )

    def _player_rows(self, ids: np.ndarray) -> np.ndarray:
        return (ids[:, None] * self.players + np.arange(self.players)).ravel()

    def _gather(self, ids: np.ndarray) -> tuple[np.ndarray, ...]:
        if ids is self._all:
            return tuple(a.copy() for a in self._out)
        if self.players == 1:
            return tuple(a[ids] for a in self._out)
        rows = self._player_rows(ids)
        return tuple(a[rows] if pp else a[ids] for a, pp in zip(self._out, self._per_player))

    @_holding_sigint
    def recv(self) -> tuple[np.ndarray, ...]:
        self._check_open()
        if self._sync:
            if not self._sends:
                raise RuntimeError("recv() called but no actions were sent: call send() first")
            ids = self._sends[0]
            every = ids is self._all
            while not (self._done.all() if every else self._done[ids].all()):
                self._wait()
            self._sends.popleft()
            if every:
                self._done[:] = False
            else:
                self._done[ids] = False
            self._raise_faults(batch_kept=False)
            self._check_open()  # close() from another thread while this call waited: the rows are gone
            return self._gather(ids)
        while len(self._ready) < self.batch_size and not self._lost and not self._errors:
            self._wait()
        self._raise_faults(batch_kept=True)
        self._check_open()
        ids = np.array([self._ready.popleft() for _ in range(self.batch_size)], dtype=np.int32)
        out = self._gather(ids)
        self._batch_ids, self._batch_key = out[self._env_id_out], ids.tobytes()
        return out

    @_holding_sigint
    def _request(self, op: int, ids: np.ndarray, payload: Any = None) -> list[tuple[np.ndarray, Any]]:
        """A REPLIES command to each worker that owns some of `ids` (with its envs' part of `payload`, a list in
        ids order); returns (env ids, answer) per worker, in ascending worker order. Raises the first error.
        The answers are those of these commands (by number): an answer to an earlier, interrupted call is dropped.
        Ctrl-C interrupts the wait for a command that changes nothing (INTERRUPTIBLE); for the others it is raised
        once every worker has answered, so that no env is left half-changed."""
        waiting = self._pending[ids] | np.isin(ids, np.fromiter(self._ready, dtype=np.int32, count=len(self._ready)))
        if waiting.any():  # in flight, or done and not yet returned by recv()
            raise ValueError(f"env {int(ids[waiting][0])} has a result pending: recv() it first")
        owners = self._owner[ids]
        workers = [self._procs[int(w)] for w in np.unique(owners)]
        dead = [p.dead for p in workers if p.dead]
        if dead:
            raise RuntimeError(f"{dead[0]}; reset its envs to start a new worker")
        subs, numbers = [], []
        for p in workers:
            sel = np.flatnonzero(owners == self._procs.index(p))
            sub = ids[sel]
            extra = b"" if payload is None else pickle.dumps([payload[i] for i in sel])
            numbers.append(self._command(p, op, sub, extra))
            subs.append(sub)
        self._awaited.update(numbers)
        try:
            while not all(n in self._replies for n in numbers):
                dead = [p.dead for p in workers if p.dead]
                if dead:  # its answer will never come
                    raise RuntimeError(f"{dead[0]}; reset its envs to start a new worker")
                self._wait(interruptible=op in INTERRUPTIBLE)
            answers = [self._replies[n] for n in numbers]
        finally:
            self._awaited.difference_update(numbers)
            for n in numbers:
                self._replies.pop(n, None)
        failed = [a for a in answers if isinstance(a, Exception)]
        if failed:
            raise failed[0]
        return list(zip(subs, answers))

    @_holding_sigint
    def render(self, env_ids: Any) -> np.ndarray:
        """uint8 (n, H, W, 3) frames, drawn by each env's own render() in its worker."""
        self._check_open()
        ids = self._ids(env_ids)
        parts = self._request(RENDER, ids)
        out = np.concatenate([frames for _, frames in parts])
        order = np.concatenate([sub for sub, _ in parts])  # row k of the concatenation is env order[k]
        rank = {int(e): k for k, e in enumerate(order)}
        return out[[rank[int(e)] for e in ids]]

    def num_players(self, env_id: int) -> int:
        self._ids(env_id)
        return self.players

    def get_state(self, env_id: int) -> list[float]:
        raise NotImplementedError(
            "get_state(env_id) of one int is a C++ env's simulator state (alignment tests); for a Python env take a "
            "snapshot: get_state([env_id])"
        )

    def set_state(self, env_id: int, state: Sequence[float]) -> None:
        self.get_state(env_id)

    # ---- per-env kwargs: the env's own keys (gymnasium.make's kwargs, or env_fn's keyword arguments) --------------
    def get_config(self, env_id: int) -> dict[str, Any]:
        """The pool's keys and env `env_id`'s own kwargs (those set_config gave it for its next reset, if any)."""
        self._check_open()
        e = int(self._ids(env_id)[0])
        return {**self._spec.config_dict, **self._env_kwargs[e]}

    def check_config(self, env_ids: Any, values: dict[str, Any]) -> tuple[np.ndarray, list[dict[str, Any]]]:
        """(env ids, each env's kwargs with `values`) after checking them: keys that are the env's own, one value
        per env id, and each distinct kwargs built here once with the pool's spaces. Changes nothing."""
        self._check_open()
        ids = self._ids(env_ids)
        own = [k for k in values if k in self._spec.config_dict and k not in self._env_kwargs[0]]
        if own:
            raise ValueError(
                f"config keys {own} are the pool's own: they cannot differ per env or change after make() (set_config "
                "takes the env's own keyword arguments)"
            )
        for key, v in values.items():
            if not isinstance(v, tuple) or len(v) != len(ids):
                raise ValueError(f"set_config: {key!r} needs one value per env id ({len(ids)}), got {v!r}")
        new = [{**self._env_kwargs[e], **{k: v[j] for k, v in values.items()}} for j, e in enumerate(ids.tolist())]
        self._spec.check_kwargs(new)
        return ids, new

    @_holding_sigint
    def set_config(self, env_ids: Any, values: dict[str, Any]) -> None:
        """Envs `env_ids` get new kwargs (`values`: key -> a tuple of one value per env id), applied at each env's
        next reset: the worker builds the env anew there, and the new env takes over the old one's random
        generator. Each distinct kwargs is built here first (a bad value raises here and changes nothing)."""
        ids, new = self.check_config(env_ids, values)
        for j, e in enumerate(ids.tolist()):
            self._env_kwargs[e] = new[j]  # a dead worker's envs get them when it restarts
        owners = self._owner[ids]
        for w in np.unique(owners).tolist():
            p = self._procs[w]
            if p.dead:
                continue
            sel = np.flatnonzero(owners == w)
            self._command(p, CONFIG, ids[sel], pickle.dumps([new[i] for i in sel]))

    # ---- snapshots: each env pickled in its worker, signed here -------------------------------------------------
    _prepared: tuple[np.ndarray, list[dict[str, Any]]] | None = (
        None  # prepare_restore's env ids and kwargs, until commit
    )

    @_holding_sigint
    def snapshot(
        self, env_ids: Any, key: bytes | None = None
    ) -> tuple[list[np.ndarray], np.ndarray, np.ndarray, np.ndarray]:
        """Each env captured in its worker (parallel_pool.env_state: its own protocol, MuJoCo's data, or the env
        pickled) and pickled with the pool's bookkeeping of it (steps in the episode, whether it ended, its kwargs),
        signed with `key` (default: the user's key file; parallel_pool.signing), as a uint8 array; the generator
        lives in the captured env (an empty array per env)."""
        from parallel_pool.signing import sign, snapshot_key

        self._check_open()
        ids = self._ids(env_ids)
        key = snapshot_key(key)
        blobs: dict[int, bytes] = {}
        for sub, answer in self._request(GET_STATE, ids):
            blobs.update(zip(sub.tolist(), answer))
        elapsed = np.zeros(len(ids), dtype=np.int32)
        done = np.zeros(len(ids), dtype=bool)
        for j, e in enumerate(ids.tolist()):
            _, elapsed[j], done[j], *_ = pickle.loads(blobs[e])  # our worker's answer; the env itself stays a pickle
        env = [np.frombuffer(sign(key, blobs[e]), dtype=np.uint8) for e in ids.tolist()]
        return env, np.zeros((len(ids), 0), dtype=np.uint32), elapsed, done

    @_holding_sigint  # (a Ctrl-C comes once the restore and its bookkeeping are done)
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
        """Envs `env_ids` from snapshot()'s rows, all or nothing: prepare_restore, then commit_restore."""
        self.prepare_restore(env_ids, env, elapsed, done, key, trusted)
        self.commit_restore()

    def prepare_restore(
        self, env_ids: Any, env: list[np.ndarray], elapsed: Any, done: Any, key: bytes | None, trusted: bool
    ) -> None:
        """The first phase of a restore: every row's signature verified (with `key`, default the user's key file;
        trusted=True: none) and its fields checked here, then each worker verifies, unpickles and checks its envs
        and holds them. No env changes until commit_restore(); a refusal anywhere is a ValueError and leaves
        nothing held."""
        from parallel_pool.signing import snapshot_key

        self._check_open()
        ids = self._ids(env_ids)
        self.abort_restore()
        key = None if trusted else snapshot_key(key)
        rows = [np.asarray(b, dtype=np.uint8).tobytes() for b in env]
        limit, agents = self._config["max_episode_steps"], len(self._spec.agents)
        kwargs = []
        for j, (e, row) in enumerate(zip(ids.tolist(), rows)):
            what = f"the snapshot for env {e}"
            state = read_snapshot(row, key, trusted, limit, agents, what)
            if int(elapsed[j]) != state[1] or bool(done[j]) != bool(state[2]):
                raise ValueError(
                    f"set_state: {what} has elapsed {elapsed[j]}, done {done[j]} beside its pickle, which holds "
                    f"elapsed {state[1]}, done {state[2]}: the pickle is what a restore takes; edit neither"
                )
            kwargs.append(state[4])
            if not _same(state[4], self._env_kwargs[e]):  # the kwargs the env is rebuilt with: built once here
                try:
                    self._spec.check_kwargs([state[4]])
                except Exception as err:
                    raise ValueError(
                        f"set_state: {what} has kwargs {state[4]} that do not build this pool's env "
                        f"({type(err).__name__}: {err})"
                    ) from None
        self._prepared = (ids, kwargs)
        try:
            problems = self._restore_request(ids, [(key, trusted, row) for row in rows], "no env was restored")
        except BaseException:
            self.abort_restore()
            raise
        if any(problems):
            self.abort_restore()
            raise ValueError(next(p for p in problems if p))

    def commit_restore(self) -> None:
        """The second phase: every worker puts its held envs in place (cannot fail but for a worker's death: then
        an EnvError names its envs, lost; the other workers' envs are restored)."""
        held, self._prepared = self._prepared, None
        if held is None:
            raise RuntimeError("set_state: no restore was prepared (prepare_restore) or it was dropped")
        ids, kwargs = held
        try:
            self._restore_request(ids, [COMMIT] * len(ids), "the other envs were restored")
        finally:
            for e, kw in zip(ids.tolist(), kwargs):
                if not self._procs[self._owner[e]].dead:
                    self._env_kwargs[e] = kw  # a dead worker's envs restart with the kwargs they had

    def abort_restore(self) -> None:
        """Drop what prepare_restore left held in the workers (those alive; a dead one holds nothing)."""
        held, self._prepared = self._prepared, None
        if held is None:
            return
        live = [e for e in held[0].tolist() if not self._procs[self._owner[e]].dead]
        if live:
            try:
                self._request(SET_STATE, np.asarray(live, dtype=np.int32), [ABORT] * len(live))
            except Exception:
                pass  # a worker that cannot answer holds nothing that matters: its next prepare replaces it

    def _restore_request(self, ids: np.ndarray, items: list[Any], outcome: str) -> list[Any]:
        """_request(SET_STATE, ...); a worker found dead (before, or on the way) is an EnvError naming its envs,
        and no answer of this request is left behind for a later one."""
        mine = [p for p in self._procs if np.isin(p.ids, ids).any()]
        try:
            for p in mine:  # found before anything is sent: no worker gets this phase
                if p.dead is None and not p.process.is_alive():
                    self._died(p)
            if not any(p.dead for p in mine):
                return [answer for _, answer in self._request(SET_STATE, ids, items)]
        except Exception as err:
            for p in mine if isinstance(err, (OSError, EOFError)) else []:  # a broken pipe: its worker died or dies
                if p.dead is None:
                    p.process.join(0.5)
                    if not p.process.is_alive():
                        self._died(p)
            if not any(p.dead for p in mine):
                raise
            # the live workers' answers to this request come later and are dropped (no call awaits their numbers)
        lost = [p for p in mine if p.dead is not None]
        self._lost = [(i, c) for i, c in self._lost if not any(i is p.ids for p in lost)]  # reported here
        lost_ids = np.concatenate([p.ids for p in lost]).tolist()
        raise env_error(
            f"set_state: env_ids {lost_ids} were lost with their worker ({'; '.join(p.dead or '' for p in lost)}); "
            f"{outcome}; reset the lost envs to start a new worker",
            lost_ids,
            [p.dead or "" for p in lost],
            batch_kept=False,
        )

    @property
    def spec(self) -> dict[str, Any]:
        return self._spec.engine_spec

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def pids(self) -> list[int]:
        """The process ids of the workers (tests, monitoring)."""
        return [p.process.pid for p in self._procs if p.process is not None]

    def close(self) -> None:
        """Stop the workers (bounded: SIGKILL after a second, even with work in flight) and free the memory."""
        if self._closed and not self._procs:
            return
        self._closed = True
        if os.getpid() == getattr(self, "_pid", os.getpid()):
            for p in self._procs:
                if p.conn is not None:
                    p.conn.close()  # EOF: the worker ends after the command it is running
            import time

            deadline = time.monotonic() + _CLOSE_WAIT_S
            for p in self._procs:
                if p.process is not None and p.process.pid is not None:
                    p.process.join(max(0.0, deadline - time.monotonic()))
                    if p.process.is_alive():
                        p.process.kill()
                        p.process.join(1.0)
        self._out = self._act = []  # the views into the segment go first, or it cannot be unmapped
        for shm, _ in getattr(self, "_grown", []) if os.getpid() == self._pid else []:
            try:
                shm.close()
            except BufferError:
                pass
            shm.unlink()
            orphans.release(_SHM_DIR + shm.name)
        self._grown = []
        if self._shm is not None and os.getpid() == self._pid:
            try:
                self._shm.close()
            except BufferError:  # a view is still referenced somewhere: the mapping goes with the process
                pass
            self._shm.unlink()
            orphans.release(_SHM_DIR + self._shm.name)
        self._procs = []
        self._shm = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


_LIVE: weakref.WeakSet[ProcessEngine] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    """In a process forked from one with pools: those pools stay the parent's. Their workers are the parent's
    multiprocessing children, which multiprocessing's exit hook would SIGTERM at the child's exit: the child forgets
    them (its use of such a pool raises, _check_open; its close() leaves them alone). The child gets a forkserver of
    its own (the parent's is not its child) and a start lock another thread may have held at the fork."""
    global _START_LOCK
    _START_LOCK = threading.Lock()
    _MAIN_THREAD[0] = threading.get_ident()
    from multiprocessing import process

    for engine in list(_LIVE):
        for p in engine._procs:
            process._children.discard(p.process)  # type: ignore[attr-defined]
            if p.conn is not None:
                p.conn.close()  # the child's copy: the worker still sees EOF when the parent closes the pool
    _LIVE.clear()
    forkserver = sys.modules.get("multiprocessing.forkserver")
    server = getattr(forkserver, "_forkserver", None)
    if server is not None and server._forkserver_pid is not None:
        try:
            os.close(server._forkserver_alive_fd)
        except OSError:
            pass
        server._forkserver_alive_fd = server._forkserver_address = server._forkserver_pid = None
        server._lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)


@atexit.register
def _close_live_engines() -> None:
    """At interpreter exit, pools still referenced (by a traceback, a global) stop their workers and unlink their
    shared memory now, while the modules they use are still there."""
    for engine in list(_LIVE):
        try:
            engine.close()
        except Exception:
            pass


def _exit_cause(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _tracebacks(msg: Any) -> str:
    return "\n".join(tb for _, tb in pickle.loads(msg[1:]))


def _call(block: Any, *args: Any) -> Any:
    return block(*args)


if sys.platform != "linux":  # /dev/shm, PR_SET_PDEATHSIG
    raise ImportError("parallel_pool's Python-env engine runs on Linux")
