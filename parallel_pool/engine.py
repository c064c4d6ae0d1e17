"""The Engine contract: the calls every front-end makes on the object that steps the envs.

Three engines implement it: `_core.Engine` (C++ envs on C++ worker threads), `process_engine.ProcessEngine` (Python
envs in worker processes) and `distributed.RayEngine` (local pools on Ray actors). `BasePool` holds one of them and
turns its batches into each front-end's result with `Schema`, so the front-ends and adapters never learn which
engine runs the envs. This module sits at the bottom of the package, next to schema.py: it imports only the engine
module for `EnvError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from parallel_pool import _core

__all__ = ["Engine", "SendRecvEngine", "env_error", "usable_cores"]


def usable_cores() -> int:
    """The CPUs this process may run on (affinity mask, capped by the cgroup's CPU quota), counted as the C++
    engine counts them for num_threads=0, so that both engines size their workers alike."""
    return _core.num_cores()


class Engine(Protocol):
    """What `BasePool`, `parallel_pool.render` and `parallel_pool.xla` call on an engine (see _core.pyi for the
    meaning of each call: `_core.Engine` is the reference implementation)."""

    def send(self, actions: Any, env_id: Any, reset: bool = False, seeds: Any = None) -> None: ...
    def recv(self) -> tuple[np.ndarray, ...]: ...
    def step(self, actions: Any, env_id: Any = None) -> tuple[np.ndarray, ...]: ...
    def reset(self, env_id: Any = None, seeds: Any = None) -> tuple[np.ndarray, ...]: ...
    def close(self) -> None: ...
    def num_players(self, env_id: int) -> int: ...
    def _get_state(self, env_id: int) -> list[float]: ...
    def _set_state(self, env_id: int, state: Sequence[float]) -> None: ...
    def render(self, env_ids: Any) -> np.ndarray: ...
    def get_config(self, env_id: int) -> dict[str, Any]: ...
    def set_config(self, env_ids: Any, values: dict[str, Any]) -> None: ...
    def snapshot(self, env_ids: Any) -> tuple[list[np.ndarray], np.ndarray, np.ndarray, np.ndarray]: ...
    def restore(self, env_ids: Any, env: list[np.ndarray], generator: Any, elapsed: Any, done: Any) -> None: ...
    @property
    def closed(self) -> bool: ...
    @property
    def num_envs(self) -> int: ...
    @property
    def batch_size(self) -> int: ...
    @property
    def output_specs(self) -> list[tuple[str, str, tuple[int, ...], bool]]: ...


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
