"""Typed stub of the C++ engine module `parallel_pool._core` (core/bindings/module.cc)."""

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

ConfigValue = bool | int | float | str
ArrayLike = npt.ArrayLike

class EnvError(RuntimeError):
    """An env threw on a worker thread; raised from recv()/step()/reset()."""

    env_ids: list[int]
    """The envs that threw, in completion order."""
    messages: list[str]
    """What each of them threw."""
    batch_kept: bool
    """True in async mode: those envs were reset in place and the next recv() returns the whole batch."""

# env class name -> [(key, default, doc, allowed values)]
def env_classes() -> dict[str, list[tuple[str, ConfigValue, str, list[str]]]]: ...

# The CPUs this process may run on (affinity mask, capped by the cgroup's CPU quota): what num_threads=0 counts.
def num_cores() -> int: ...

# The config keys every env class has (num_envs, batch_size, seed, ...): the pool's own, never per env.
def common_config_keys() -> list[str]: ...

# task id -> (env class name, config overrides)
def tasks() -> dict[str, tuple[str, dict[str, ConfigValue]]]: ...

# The spec of an env class under a config: {"obs"|"info"|"action": [array dicts], "reward_dtype", "max_players",
# "render_shape", "players"}; each array dict has name, dtype, shape, low, high, per_player; "players" is empty, or
# one dict per player (name, obs_size, action_size) for envs whose players differ.
def spec(env_class: str, config: dict[str, ConfigValue]) -> dict[str, Any]: ...

# The physical-limit benchmark: one env of `env_class` stepped in a tight C++ loop on this thread for `seconds`
# (at least `min_steps` steps): {"steps": int, "resets": int, "seconds": float, "cpu_seconds": float} (wall and
# this thread's CPU time of the loop). See parallel_pool.bench.limit.
def bare_step_loop(
    env_class: str, config: dict[str, ConfigValue], seconds: float, min_steps: int = 1, num_envs: int = 1
) -> dict[str, Any]: ...

class ThreadPool:
    """Worker threads shared by the engines made with it (Engine(..., thread_pool=tp)); 0 threads = the CPUs this
    process may use. close() raises RuntimeError while engines use it."""

    def __init__(self, num_threads: int = 0) -> None: ...
    def close(self) -> None: ...
    @property
    def num_threads(self) -> int: ...
    @property
    def closed(self) -> bool: ...
    @property
    def num_pools(self) -> int: ...

class Engine:
    """A pool of C++ envs on worker threads. Sync when batch_size == num_envs, async otherwise.

    Outputs are a tuple of numpy arrays in `output_specs` order. Bad input raises ValueError/TypeError/IndexError
    and changes nothing; a closed pool raises RuntimeError; in a forked child the parent's pools raise
    RuntimeError (close() is a no-op there)."""

    # A config value may be a list or tuple of num_envs values: env i is built with the i-th (per-env values).
    def __init__(self, env_class: str, config: dict[str, Any], thread_pool: ThreadPool | None = None) -> None: ...
    def send(
        self,
        actions: ArrayLike | Sequence[ArrayLike] | None,
        env_id: ArrayLike | None,
        reset: bool = False,
        seeds: ArrayLike | None = None,
    ) -> None: ...
    def recv(self) -> tuple[np.ndarray, ...]: ...
    def step(
        self, actions: ArrayLike | Sequence[ArrayLike], env_id: ArrayLike | None = None
    ) -> tuple[np.ndarray, ...]: ...
    def _step_kept(self, actions: ArrayLike | Sequence[ArrayLike]) -> tuple[tuple[np.ndarray, ...], Any]:
        """step(actions) of every env of a sync pool: (the batch; the front-end result that _keep_result kept with it
        when the batch is a refilled cached one and nothing else holds any part of that result, else None)."""
    def _recv_kept(self) -> tuple[tuple[np.ndarray, ...], Any]:
        """recv() for a gym-style front-end: (the batch; the result that _keep_result kept with its arrays when they
        are a refilled cached batch and nothing else holds any part of that result, else None)."""
    def _keep_result(self, arrays: tuple[np.ndarray, ...], result: Any) -> None:
        """Keep `result` (tuples and dicts of the batch's arrays, read-only arrays and scalars) with the batch
        `arrays` while the engine caches it; a no-op for a batch it does not cache or a result it cannot check."""
    def reset(self, env_id: ArrayLike | None = None, seeds: ArrayLike | None = None) -> tuple[np.ndarray, ...]: ...
    def close(self) -> None: ...
    def num_players(self, env_id: int) -> int: ...
    def get_state(self, env_id: int) -> list[float]: ...
    def set_state(self, env_id: int, state: Sequence[float]) -> None: ...
    def render(self, env_ids: ArrayLike) -> np.ndarray: ...
    # One env's config: what it runs with, or what set_config gave it for its next reset.
    def get_config(self, env_id: int) -> dict[str, ConfigValue]: ...
    # New values (one for all, or a list/tuple of one per env id), built now, swapped in at each env's next reset.
    def set_config(self, env_ids: ArrayLike, values: dict[str, Any]) -> None: ...
    # (env states: list of float64 arrays, generator words (k, 625) uint32, elapsed (k,) int32, done (k,) bool)
    def snapshot(self, env_ids: ArrayLike) -> tuple[list[np.ndarray], np.ndarray, np.ndarray, np.ndarray]: ...
    # The inverse of snapshot, all or nothing.
    def restore(
        self, env_ids: ArrayLike, env: list[np.ndarray], generator: ArrayLike, elapsed: ArrayLike, done: ArrayLike
    ) -> None: ...
    @property
    def closed(self) -> bool: ...
    @property
    def output_names(self) -> list[str]: ...
    @property
    def output_per_player(self) -> list[bool]: ...
    @property
    def num_envs(self) -> int: ...
    @property
    def batch_size(self) -> int: ...
    @property
    def num_threads(self) -> int: ...
    @property
    def spec(self) -> dict[str, Any]: ...
    @property
    def output_specs(self) -> list[tuple[str, str, tuple[int, ...], bool]]:
        """(name, dtype, row shape, per_player) of each output array: "obs" | "obs:<k>" | "info:<k>" | "reward" |
        "terminated" | "truncated" | "env_id" | "elapsed_step" | "players.env_id" | "final:<name>"."""
    @property
    def _handle_id(self) -> int: ...
    @property
    def _batched_steps(self) -> int:
        """Env steps taken through the env type's StepBatch so far (tests: the batched path ran)."""
    @property
    def _shared_sends(self) -> int:
        """Sync sends of every env shared among the threads as one item each so far (tests: that path ran)."""
    @property
    def _results_reused(self) -> int:
        """Results kept with a batch (_keep_result) that _step_kept or _recv_kept returned again (tests: reuse
        happens)."""
    @property
    def _obs_seq(self) -> int:
        """Steps of every env (step/_step_kept without env_id, nothing else pending) whose observation rows the
        engine kept (pools with one observation array and one player per env; 0 otherwise)."""
    def _keep_obs(self) -> None:
        """Keep the observation rows of those steps from now on (a front-end that offers reset_mask asks)."""
    def _last_obs(self) -> bytes:
        """The observation rows of the last of those steps (what reset_mask returns for envs it leaves alone)."""

# XLA FFI handlers as PyCapsules, {"cpu": {name: capsule}, "CUDA": {...}} (empty without XLA support).
xla_targets: dict[str, dict[str, Any]]
has_xla: bool
snapshot_generator_words: int  # an env's generator state in a snapshot: std::mt19937's words and its position
