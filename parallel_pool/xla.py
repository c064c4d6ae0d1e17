"""`env.xla()`: step a pool from inside `jax.jit`, `jax.lax.scan` and `jax.lax.fori_loop`.

    handle, recv, send, step = env.xla()
    env.async_reset()                       # or env.reset() for a sync pool, then start with step
    @jax.jit
    def rollout(handle):
        def body(handle, _):
            handle, (obs, reward, terminated, truncated, info) = recv(handle)
            handle = send(handle, policy(obs), info["env_id"])
            return handle, reward
        return jax.lax.scan(body, handle, length=100)

As in EnvPool: `recv(handle) -> (handle, state)`, `send(handle, action, env_id=None) -> handle`,
`step(handle, action, env_id=None) -> (handle, state)`. `state` has the layout of the Python front-end of the
same env_type: gymnasium/gym give (obs, reward, terminated, truncated, info), dm gives a dm_env.TimeStep.
Thread the returned handle into the next call: it orders the calls (each call is also declared side-effecting,
so XLA never drops or reorders one).

The calls are XLA FFI custom calls into the C++ engine (core/xla/): send validates exactly like the Python
API (errors surface as jax runtime errors with the same message), recv copies the finished batch into XLA's
output buffers. 64-bit arrays follow jax's dtype rules: with jax_enable_x64 off, float64/int64 observations
come back as float32/int32 (a warning says so once) and actions given as float32 are widened exactly.
The result is built by the front-end's own function (`env.from_arrays(arrays, jnp)`, parallel_pool.frontends),
so it equals recv()'s value for value. Differences forced by fixed shapes: same-step autoreset's `final_obs` /
`final_info` are always present and dense (zeros where no episode ended; `_final_obs` is the mask), where the
Python API follows gymnasium (an object array, keys only on steps where an episode ended); multi-player envs are
refused. An engine without an FFI handle (engine.FfiEngine; envs written in Python, parallel_pool.process_engine)
has its send/recv/step called from XLA through `jax.experimental.io_callback(..., ordered=True)`, with the same
checks and results. This module imports only the engine and the schema: it sits below the front-ends it serves.
"""

from __future__ import annotations

import warnings
from collections import namedtuple
from typing import Any

import numpy as np

from parallel_pool import _core
from parallel_pool.engine import ffi_handle
from parallel_pool.schema import action_list, split_action_dict

XlaFunctions = namedtuple("XlaFunctions", ["handle", "recv", "send", "step"])


def _fit(jax, jnp, a, dtype: np.dtype, describe) -> Any:
    """Integer array `a` cast to the integer `dtype` without wrapping (an astype would turn 2**32 + 1 into 1).

    Concrete values that do not fit raise ValueError with `describe(row, value)`, the engine's message. Traced
    values (inside jit) cannot be read here: those that do not fit become dtype's minimum, a value the engine
    rejects with its own message, instead of a wrapped value it would accept."""
    info = np.iinfo(dtype)
    if isinstance(a, jax.core.Tracer):
        if np.can_cast(np.dtype(a.dtype), dtype, "safe"):
            return a.astype(dtype)
        fits = a <= jnp.asarray(info.max, a.dtype)  # a is int64 or unsigned: the bound fits its dtype
        if jnp.issubdtype(a.dtype, jnp.signedinteger):
            fits &= a >= jnp.asarray(info.min, a.dtype)
        return jnp.where(fits, a.astype(dtype), jnp.asarray(info.min, dtype))
    values = np.asarray(a)  # read before jnp.asarray, which narrows 64-bit values when jax_enable_x64 is off
    if not np.can_cast(values.dtype, dtype, "safe"):
        rows = values.reshape(values.shape[0] if values.ndim else 1, -1)
        bad = np.argwhere((rows < info.min) | (rows > info.max))
        if len(bad):
            row, col = bad[0]
            raise ValueError(describe(int(row), int(rows[row, col])))
    return jnp.asarray(values.astype(dtype))


_registered: set[str] = set()

_INSTALL_HINT = "install the jax extra and rebuild: pip install 'parallel-pool[jax]'"


def _import_jax():
    try:
        import jax
        import jax.numpy as jnp
    except ImportError as e:
        raise ImportError(f"env.xla() needs jax ({e}); {_INSTALL_HINT}") from None
    return jax, jnp


def _register(jax) -> None:
    """Register the engine's FFI handlers with XLA, once per process and platform."""
    for platform, targets in _core.xla_targets.items():
        if platform in _registered:
            continue
        for name, capsule in targets.items():
            jax.ffi.register_ffi_target(name, capsule, platform=platform, api_version=1)
        _registered.add(platform)


def check_xla_spec(task_id: str, spec: dict) -> None:
    """Raise ValueError unless every array of the spec has a fixed shape and envs have one player each."""
    if spec["max_players"] != 1:
        raise ValueError(
            f"env.xla() needs one player per env (fixed output shapes), but {task_id} has up to "
            f"{spec['max_players']} players per env (max_num_players); use the Python send/recv API instead"
        )
    for group in ("obs", "info", "action"):
        for a in spec[group]:
            if any((not isinstance(d, (int, np.integer))) or d < 0 for d in a["shape"]):
                raise ValueError(
                    f"env.xla() needs fixed shapes, but {task_id}'s {group} array '{a['name']}' has shape "
                    f"{tuple(a['shape'])}; use the Python send/recv API instead"
                )


def _outside(name: str):
    return lambda row, v: f"action '{name}' row {row} is {v}, outside the range of the engine's action dtype"


def _check_usable(env: Any, on_host: bool) -> None:
    """Raise unless `env` (open) can be stepped from XLA: an XLA-enabled build (FFI calls), numeric arrays of fixed
    shapes, one player per env."""
    if not on_host and not _core.has_xla:
        raise RuntimeError(
            "this build of parallel_pool has no XLA support: jaxlib's FFI headers were not found when it was "
            f"compiled; {_INSTALL_HINT} (jaxlib must be importable while building)"
        )
    text = [f.name for f in env.schema.fields if f.dtype.kind not in "biuf" and not f.name.endswith("info_extra")]
    if text:  # a Python env's observation leaves of Python objects (Text, Graph, ...): jax has no such arrays
        raise ValueError(
            f"env.xla(): the arrays {text} hold Python objects (strings, graphs, sequences), which jax arrays "
            "cannot; leave them out of the env's observation"
        )
    check_xla_spec(env.spec.task_id, env.spec.engine_spec)


def make_xla(env: Any) -> XlaFunctions:
    """(handle, recv, send, step) for `env`, a parallel_pool front-end; see the module docstring.

    Uses only the front-end's public interface: `engine` (any engine.Engine), `schema`, `spec`, `num_envs`,
    `batch_size`, `is_async` and `from_arrays(arrays, xp)`, the front-end's own function from a raw batch to its
    result, which is called here on the jax arrays the FFI call returns."""
    jax, jnp = _import_jax()
    if env.closed:
        raise RuntimeError("env.xla() on a closed pool; create a new one with parallel_pool.make(...)")
    handle = ffi_handle(env.engine)  # None: an engine XLA calls back on the host (io_callback), e.g. Python envs'
    _check_usable(env, handle is None)
    if handle is not None:
        _register(jax)
    calls = _XlaCalls(env, jax, jnp, handle)
    handle0 = np.frombuffer(calls.engine_id.tobytes(), dtype=np.uint8).copy()
    return XlaFunctions(handle0, calls.recv, calls.send, calls.step)


class _XlaCalls:
    """The recv / send / step that make_xla returns, for one front-end: each checks its arguments here (as the
    Python API does), then makes one engine call from XLA (an FFI custom call, or an io_callback on the host)."""

    def __init__(self, env: Any, jax: Any, jnp: Any, handle: int | None):
        self.env, self.jax, self.jnp, self.on_host = env, jax, jnp, handle is None
        self.engine = env.engine
        fix_layout = getattr(self.engine, "fix_layout", None)  # an engine whose layout grows: traced once, it stays
        if fix_layout is not None:
            fix_layout()
        self.task_id = env.spec.task_id
        self.engine_id = np.int64(0 if handle is None else handle)
        # the typed arrays: a Python env's object arrays of info entries (last in the batch) stay out of jax
        self.outputs = [(f.name, f.dtype, f.shape) for f in env.schema.fields if f.dtype != object]
        self.actions = [(a["name"], np.dtype(a["dtype"]), tuple(a["shape"])) for a in env.spec.action_arrays]
        self.action_names = [name for name, _, _ in self.actions]
        self.num_envs, self.batch_size, self.is_async = env.num_envs, env.batch_size, env.is_async
        self.all_ids = np.arange(self.num_envs, dtype=np.int32)
        self.warned = False

    def check_x64(self) -> None:
        if self.warned:
            return
        # arrays whose dtype jax narrows under the current x64 setting
        wide = [n for n, dt, _ in self.outputs + self.actions if self.jax.dtypes.canonicalize_dtype(dt) != dt]
        if wide:
            self.warned = True
            warnings.warn(
                f"parallel_pool xla: jax_enable_x64 is off, so {self.task_id}'s 64-bit arrays {wide} pass through "
                "jax as 32-bit (observations rounded to float32, int64 narrowed; float32 actions are widened "
                "exactly). Enable jax.config.update('jax_enable_x64', True) to get the engine's exact float64 values.",
                stacklevel=4,
            )

    def out_types(self, rows: int) -> list[Any]:
        self.check_x64()
        canonical = self.jax.dtypes.canonicalize_dtype
        return [self.jax.ShapeDtypeStruct((rows, *shape), canonical(dt)) for _, dt, shape in self.outputs]

    def on_host_call(self, target: str, *args: Any) -> Any:
        """The engine call an FFI target makes, made from Python (jax.experimental.io_callback)."""
        if target == "parallel_pool_recv":
            return self.engine.recv()
        acts, ids = list(args[:-1]), np.asarray(args[-1])
        given = acts if len(acts) > 1 else acts[0]
        if target == "parallel_pool_send":
            self.engine.send(given, ids)
            return []
        return self.engine.step(given, ids)

    def call(self, target: str, handle: Any, args: list[Any], results: list[Any]) -> Any:
        jax, jnp = self.jax, self.jnp
        handle = jnp.asarray(handle)
        if handle.dtype != jnp.uint8 or handle.shape != (8,):
            raise TypeError(f"handle must be the uint8[8] array from env.xla(), got {handle.dtype}{handle.shape}")
        if self.on_host:
            from jax.experimental import io_callback

            def host(h: Any, *a: Any) -> tuple[Any, ...]:
                outs = self.on_host_call(target, *(np.asarray(x) for x in a))
                return (np.asarray(h), *(np.asarray(o).astype(r.dtype, copy=False) for o, r in zip(outs, results)))

            return io_callback(host, (jax.ShapeDtypeStruct((8,), jnp.uint8), *results), handle, *args, ordered=True)
        f = jax.ffi.ffi_call(
            target,
            (jax.ShapeDtypeStruct(handle.shape, handle.dtype), *results),
            has_side_effect=True,
            input_output_aliases={0: 0},
        )
        return f(handle, *args, engine=self.engine_id)

    def env_ids(self, env_id: Any) -> Any:
        jax, jnp = self.jax, self.jnp
        if env_id is None:
            return jnp.asarray(self.all_ids)
        ids = env_id if isinstance(env_id, jax.core.Tracer) else np.asarray(env_id)
        if not (jnp.issubdtype(ids.dtype, jnp.integer)):
            raise TypeError(f"env_id must be integers, got dtype {ids.dtype}")
        if ids.ndim != 1:
            raise ValueError(f"env_id must be a 1-d array of env ids, got shape {ids.shape}")
        last = self.num_envs - 1
        return _fit(
            jax,
            jnp,
            ids,
            np.dtype(np.int32),
            lambda _, v: f"env_id {v} is out of range: this pool has env ids 0..{last}",
        )

    def action_arrays(self, action: Any, k: int) -> list[Any]:
        """The FFI call's action buffers: one per action key, of static shape (k, ...) and the engine's dtype
        (the engine checks the values; a float given for an integer action is refused here, as the engine would,
        because the cast to the buffer's dtype would otherwise hide it)."""
        actions = self.actions
        action = action_list(self.action_names, action)
        given = list(action) if len(actions) > 1 and isinstance(action, (list, tuple)) else [action]
        if len(given) != len(actions):
            raise ValueError(f"expected {len(actions)} action arrays, got {len(given)}")
        return [self.action_array(name, dt, shape, a, k) for (name, dt, shape), a in zip(actions, given)]

    def action_array(self, name: str, dt: np.dtype, shape: tuple[int, ...], a: Any, k: int) -> Any:
        """One action key's buffer (see action_arrays)."""
        jax, jnp = self.jax, self.jnp
        a = a if isinstance(a, jax.core.Tracer) else np.asarray(a)  # 64-bit values as given (see _fit)
        want_int = dt.kind in "biu"
        if want_int and not (jnp.issubdtype(a.dtype, jnp.integer) or a.dtype == jnp.bool_):
            raise TypeError(f"action '{name}' must be integers (dtype {dt}), got dtype {a.dtype}")
        if not want_int and not (jnp.issubdtype(a.dtype, jnp.floating) or jnp.issubdtype(a.dtype, jnp.integer)):
            raise TypeError(f"action '{name}' must be numeric (dtype {dt}), got dtype {a.dtype}")
        if a.shape != (k, *shape):
            raise ValueError(f"action '{name}' has shape {a.shape}, expected {(k, *shape)} ({k} envs in this call)")
        if not want_int:
            return jnp.asarray(a).astype(jax.dtypes.canonicalize_dtype(dt))
        # int32 and int64 go to the engine as they are (it checks the values); other integer types (bool,
        # small, unsigned) become the engine's dtype; 64-bit ones narrowed by jax without x64 are checked
        keep = a.dtype in (np.int32, np.int64)
        target = np.dtype(jax.dtypes.canonicalize_dtype(a.dtype if keep else dt))
        return _fit(jax, jnp, a, target, _outside(name))

    def ids_and_actions(self, action: Any, env_id: Any) -> tuple[Any, list[Any]]:
        """The env ids and action buffers of a send or step (a dict action may carry its env_id)."""
        if isinstance(action, dict):
            action, env_id = split_action_dict(action, env_id)
        ids = self.env_ids(env_id)
        return ids, self.action_arrays(action, ids.shape[0])

    def recv(self, handle: Any) -> tuple[Any, Any]:
        """Wait for the next batch: (handle, state) with batch_size rows."""
        handle, *outs = self.call("parallel_pool_recv", handle, [], self.out_types(self.batch_size))
        return handle, self.env.from_arrays(outs, self.jnp)

    def send(self, handle: Any, action: Any, env_id: Any = None) -> Any:
        """Queue `action` for `env_id` (default: all envs); returns the new handle."""
        ids, acts = self.ids_and_actions(action, env_id)
        (handle,) = self.call("parallel_pool_send", handle, [*acts, ids], [])
        return handle

    def step(self, handle: Any, action: Any, env_id: Any = None) -> tuple[Any, Any]:
        """send + recv in one engine call: (handle, state). Sync pools return the rows of `env_id` in order."""
        ids, acts = self.ids_and_actions(action, env_id)
        rows = self.batch_size if self.is_async else ids.shape[0]
        handle, *outs = self.call("parallel_pool_step", handle, [*acts, ids], self.out_types(rows))
        return handle, self.env.from_arrays(outs, self.jnp)
