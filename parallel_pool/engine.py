"""The Engine contract: the calls every front-end makes on the object that steps the envs.

Three engines implement it: `_core.Engine` (C++ envs on C++ worker threads), `process_engine.ProcessEngine` (Python
envs in worker processes) and `distributed.RayEngine` (local pools on Ray actors). `BasePool` holds one of them and
turns its batches into each front-end's result with `Schema`, so the front-ends and adapters never learn which
engine runs the envs. This module sits at the bottom of the package, next to schema.py: it imports only the engine
module for `EnvError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from parallel_pool import _core

__all__ = [
    "Engine",
    "FastCalls",
    "FfiEngine",
    "SendRecvEngine",
    "env_error",
    "fast_calls",
    "ffi_handle",
    "usable_cores",
]


def usable_cores() -> int:
    """The CPUs this process may run on (affinity mask, capped by the cgroup's CPU quota), counted as the C++
    engine counts them for num_threads=0, so that both engines size their workers alike."""
    return _core.num_cores()


class Engine(Protocol):
    """What `BasePool`, `parallel_pool.render` and `parallel_pool.xla` call on an engine: the contract every engine
    keeps (`_core.Engine` is the reference implementation; _core.pyi types it).

    A batch is a tuple of numpy arrays laid out as `output_specs` says (`parallel_pool.schema.Schema` reads it).
    Env ids are ints in 0..num_envs-1, given as an int or a 1-d sequence without repeats. Bad input raises
    ValueError / TypeError / IndexError and changes nothing; a call on a closed engine raises RuntimeError; an
    exception inside an env raises `_core.EnvError` naming the env ids (`env_error` builds one). What an engine can
    do beyond this contract it offers as an optional capability (`FastCalls`, `FfiEngine`), asked for in one place
    (`fast_calls`, `ffi_handle`), never by the engine's type."""

    def send(self, actions: Any, env_id: Any, reset: bool = False, seeds: Any = None) -> None:
        """Queue one step of `actions` (one array, or one per action key, with a row per env or player) for the envs
        `env_id` (None: all), or with reset=True a reset of them (`seeds`: one per env, None: unseeded); returns at
        once. An env with a result pending (sent, not yet received) is refused."""
        ...

    def recv(self) -> tuple[np.ndarray, ...]:
        """Wait for a batch: a sync engine (batch_size == num_envs) returns the envs of the oldest send in their
        order; an async one the first batch_size envs to finish, in completion order."""
        ...

    def step(self, actions: Any, env_id: Any = None) -> tuple[np.ndarray, ...]:
        """send(actions, env_id) then recv()."""
        ...

    def reset(self, env_id: Any = None, seeds: Any = None) -> tuple[np.ndarray, ...]:
        """send(None, env_id, reset=True, seeds) then recv()."""
        ...

    def close(self) -> None:
        """Stop the envs and free what they hold; idempotent. Every later call but close raises RuntimeError."""
        ...

    def num_players(self, env_id: int) -> int:
        """How many player rows env `env_id` has in a batch (1 for single-player envs)."""
        ...

    def get_state(self, env_id: int) -> list[float]:
        """The simulator state of C++ env `env_id` as floats (what parallel_pool.render draws; alignment tests).
        Engines of envs written in Python raise NotImplementedError: their envs draw themselves."""
        ...

    def set_state(self, env_id: int, state: Sequence[float]) -> None:
        """Put `state` (from get_state) into env `env_id` (alignment tests)."""
        ...

    def render(self, env_ids: Any) -> np.ndarray:
        """uint8 frames (len(env_ids), H, W, 3) of envs that draw themselves (see parallel_pool.render)."""
        ...

    def get_config(self, env_id: int) -> dict[str, Any]:
        """The config env `env_id` runs with, or what set_config gave it for its next reset."""
        ...

    def set_config(self, env_ids: Any, values: dict[str, Any]) -> None:
        """New values (key -> a tuple of one value per env id), checked now, taken by each env at its next reset."""
        ...

    def snapshot(self, env_ids: Any) -> tuple[list[np.ndarray], np.ndarray, np.ndarray, np.ndarray]:
        """The envs' states: (one array per env, generator words, elapsed steps, done flags), what restore takes."""
        ...

    def restore(self, env_ids: Any, env: list[np.ndarray], generator: Any, elapsed: Any, done: Any) -> None:
        """The inverse of snapshot, all or nothing: a refused row changes no env."""
        ...

    @property
    def closed(self) -> bool:
        """Whether close() ran."""
        ...

    @property
    def num_envs(self) -> int:
        """How many envs the engine steps."""
        ...

    @property
    def batch_size(self) -> int:
        """How many envs a recv() returns (num_envs: a sync engine)."""
        ...

    @property
    def output_specs(self) -> list[tuple[str, str, tuple[int, ...], bool]]:
        """(name, dtype, row shape, per_player) of each array of a batch, in batch order: "obs" | "obs:<k>" |
        "info:<k>" | "reward" | "terminated" | "truncated" | "env_id" | "elapsed_step" | "players.env_id" |
        "final:<name>"."""
        ...


@runtime_checkable
class FastCalls(Protocol):
    """An optional capability: per-call fast paths of the gym-style front-ends (the C++ engine has them). The engine
    keeps a front-end's result with the batch it is made of and hands it back when that batch comes again, and
    keeps every env's latest observation rows for reset_mask, so a step makes no Python call per env."""

    def _step_kept(self, actions: Any) -> tuple[tuple[np.ndarray, ...], Any]:
        """step(actions) of every env of a sync engine: (the batch; the result _keep_result kept with it, or None)."""
        ...

    def _recv_kept(self) -> tuple[tuple[np.ndarray, ...], Any]:
        """recv(): (the batch; the result _keep_result kept with it, or None)."""
        ...

    def _keep_result(self, arrays: tuple[np.ndarray, ...], result: Any) -> None:
        """Keep `result` with the batch `arrays` while the engine reuses that batch."""
        ...

    def _keep_obs(self) -> None:
        """Keep the observation rows of each step of every env from now on."""
        ...

    def _last_obs(self) -> bytes:
        """The observation rows of the last such step."""
        ...

    @property
    def _obs_seq(self) -> int:
        """How many such steps the engine kept rows of."""
        ...


@runtime_checkable
class FfiEngine(Protocol):
    """An optional capability: an engine whose send / recv / step XLA can call as FFI custom calls
    (parallel_pool.xla), by the handle it registered (the C++ engine). Others are called back on the host."""

    @property
    def _handle_id(self) -> int: ...


def fast_calls(engine: Any) -> FastCalls | None:
    """`engine` if it offers the fast paths (FastCalls), else None."""
    return engine if isinstance(engine, FastCalls) else None


def ffi_handle(engine: Any) -> int | None:
    """The handle XLA's FFI calls reach `engine` by (FfiEngine), or None: XLA calls it back on the host."""
    return engine._handle_id if isinstance(engine, FfiEngine) else None


class SendRecvEngine:
    """step() and reset() as a send() then a recv(), for the engines written in Python (the C++ engine does both in
    one call under one lock)."""

    def send(self, actions: Any, env_id: Any, reset: bool = False, seeds: Any = None) -> None:
        raise NotImplementedError

    def recv(self) -> tuple[np.ndarray, ...]:
        raise NotImplementedError

    def step(self, actions: Any, env_id: Any = None) -> tuple[np.ndarray, ...]:
        self.send(actions, env_id)
        return self.recv()

    def reset(self, env_id: Any = None, seeds: Any = None) -> tuple[np.ndarray, ...]:
        self.send(None, env_id, True, seeds)
        return self.recv()


def env_error(message: str, env_ids: Sequence[int], messages: Sequence[str], batch_kept: bool) -> Exception:
    """An `EnvError` carrying the same attributes as the C++ engine's (for the engines written in Python)."""
    err = _core.EnvError(message)
    err.env_ids = list(env_ids)
    err.messages = list(messages)
    err.batch_kept = batch_kept
    return err
