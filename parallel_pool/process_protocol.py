"""What the parent (`process_engine.ProcessEngine`) and its workers (`process_worker`) share: the commands and
answers on each worker's pipe, their framing, the shared-memory layout of the batch, and a snapshot's format.

A command: HEADER (op, its number, n), then n int32 env ids, then the op's payload (RESET: n int64 seeds, -1 for
none; CONFIG and SET_STATE: a pickled list, one item per env; COLUMNS: a segment of typed info arrays added since
the start, to write from now on). An answer: NUMBER (the number of the command it answers), then OK, or ERR and a
pickled list of (env id, traceback or message), or (REPLIES, CONFIG and COLUMNS) VALUE and the pickled value, or
(STEP and RESET) INFO and a pickled (errors, {row: {object array name: value}}): the rows of the batch's object
arrays, which live in the parent (observation leaves of Python objects; EXTRA, each env's info entries without a
typed array, None for an env that had some in its last answer and has none now). A starting worker sends READY, or
ERR and its traceback, once."""

from __future__ import annotations

import numbers
import os
import pickle
import struct
from collections.abc import Sequence
from typing import Any

import numpy as np

STEP, RESET, RENDER, CONFIG, GET_STATE, SET_STATE, COLUMNS = 1, 2, 3, 4, 5, 6, 7
# COLUMNS' payload: a pickled (segment name, Layout) of typed info arrays added after the start (info keys seen late)
SNAPSHOT = "parallel_pool.python-env/1"  # the layout of a Python env's snapshot (ProcessEngine.snapshot)
# set_state's second phase: SET_STATE's payload (see process_worker._Worker.set_states)
COMMIT, ABORT = "commit", "abort"
REPLIES = (RENDER, GET_STATE, SET_STATE)  # commands whose answer is a value the caller waits for
INTERRUPTIBLE = (RENDER, GET_STATE)  # REPLIES whose wait Ctrl-C may cut short: they change no env
HEADER = struct.Struct("<BQI")  # op, the command's number, number of envs
NUMBER = struct.Struct("<Q")  # an answer starts with the number of the command it answers
OK, ERR, VALUE, READY, INFO = b"", b"E", b"V", b"R", b"I"
ALIGN = 64
FRAME = struct.Struct("!i")  # multiprocessing.Connection's framing: a message's length (-1: an 8-byte one follows)
FRAME_LONG = struct.Struct("!Q")
CHUNK = 1 << 16


# info keys the batch has of its own (or that gymnasium's vector envs add): an env's entries of these names are not
# carried
OWN_INFO = frozenset({"env_id", "elapsed_step", "players", "final_obs", "final_info"})
# info keys that get no typed column: the batch's own (OWN_INFO, not carried at all), and "episode", "info" (the dm
# front-end's field of the other entries) and `_key` names, which travel as the other entries do
RESERVED_INFO = OWN_INFO | {"episode", "info"}


def typed_key(key: Any) -> bool:
    """Whether an info key may get a typed array (the others travel as the other entries do)."""
    return type(key) is str and key not in RESERVED_INFO and not key.startswith("_")


def info_array(key: str, value: Any) -> dict[str, Any] | None:
    """The array an info entry is carried as (the engine's info spec form), or None where it is not an array of
    numbers: a Python or numpy bool / int / float, or a numeric ndarray, keeps its dtype (Python's int -> int64,
    float -> float64) and shape."""
    if isinstance(value, (bool, np.bool_)):
        dtype, shape = np.dtype(bool), ()
    elif isinstance(value, (numbers.Integral, numbers.Real)) and not isinstance(value, np.ndarray):
        dtype, shape = np.asarray(value).dtype, ()
    elif isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        dtype, shape = value.dtype, value.shape
    else:
        return None
    return dict(name=key, dtype=str(dtype), shape=tuple(shape), low=[], high=[], per_player=False)


EXTRA = "info_extra"  # the batch's object array of each env's info entries without a typed column (a dict or None)


def output_arrays(raw: dict[str, Any], same_step: bool) -> list[tuple[str, str, tuple[int, ...], bool]]:
    """The batch's output specs (names, dtypes, row shapes, per_player), as `_core.Engine.output_specs` gives them,
    and for a gymnasium env (not a PettingZoo one, whose info arrays are the pool's own flags) each info column's
    `info_mask:<key>` (which rows' info had the key) and, last, the object array EXTRA (parallel_pool.schema)."""
    single = len(raw["obs"]) == 1 and raw["obs"][0]["name"] == "obs"
    obs = [("obs" if single else "obs:" + a["name"], a["dtype"], tuple(a["shape"]), True) for a in raw["obs"]]
    info = [("info:" + a["name"], a["dtype"], tuple(a["shape"]), bool(a["per_player"])) for a in raw["info"]]
    if raw.get("info_extra"):
        info += [("info_mask:" + a["name"], "bool", (), False) for a in raw["info"]]
    out = (
        obs
        + info
        + [
            ("reward", raw["reward_dtype"], (), True),
            ("terminated", "bool", (), False),
            ("truncated", "bool", (), False),
            ("env_id", "int32", (), False),
            ("elapsed_step", "int32", (), False),
            ("players.env_id", "int32", (), True),
        ]
    )
    if same_step:
        out += [("final:" + name, dt, shape, pp) for name, dt, shape, pp in obs + info]
        out.append(("final:elapsed_step", "int32", (), False))
    if raw.get("info_extra"):  # last: the arrays before them are those jax can hold (parallel_pool.xla)
        out += [(prefix + EXTRA, "object", (), False) for prefix in ("", "final:")[: 1 + same_step]]
    return out


def leaf_paths(space: Any, single_name: str) -> list[tuple[str, tuple[Any, ...], Any]]:
    """(array name, keys from the value to the leaf, leaf space) of each leaf of a gymnasium space: Dict and Tuple
    nest to any depth, a leaf's name is its keys joined by "." (a Tuple's keys are "0", "1", ...); a space that is
    neither is one leaf named `single_name`. The one place that walks a space, for the spec and the workers."""
    from gymnasium import spaces

    if not isinstance(space, (spaces.Dict, spaces.Tuple)):
        return [(single_name, (), space)]
    out: list[tuple[str, tuple[Any, ...], Any]] = []

    def walk(node: Any, path: tuple[Any, ...]) -> None:
        items = node.spaces.items() if isinstance(node, spaces.Dict) else enumerate(node.spaces)
        for key, sub in items:
            if isinstance(sub, (spaces.Dict, spaces.Tuple)):
                walk(sub, (*path, key))
            else:
                out.append((".".join(str(k) for k in (*path, key)), (*path, key), sub))

    walk(space, ())
    return out


class Layout:
    """Where each array's rows sit in the shared segment (picklable: the workers build the same views)."""

    def __init__(self, arrays: Sequence[tuple[str, str, tuple[int, ...], int]]):
        self.arrays: list[tuple[str, str, tuple[int, ...], int, int]] = []  # name, dtype, row shape, rows, offset
        offset = 0
        for name, dtype, shape, rows in arrays:
            self.arrays.append((name, dtype, tuple(shape), rows, offset))
            nbytes = rows * int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
            offset += -(-max(nbytes, 1) // ALIGN) * ALIGN
        self.size = offset

    def views(self, buf: Any) -> dict[str, np.ndarray]:
        return {
            name: np.ndarray((rows, *shape), dtype=np.dtype(dtype), buffer=buf, offset=offset)
            for name, dtype, shape, rows, offset in self.arrays
        }


def read_answer(fd: int, buf: bytearray) -> Any:
    """The next whole message on pipe `fd` (Connection.send_bytes's framing), as bytes or a bytearray; `buf` holds
    the bytes read past the last whole message, and keeps those past this one. Read here rather than by
    Connection.recv_bytes, which reads a message's length and its body apart: a short answer takes one read. Blocks
    until the message is whole; raises EOFError / OSError when the worker is gone."""
    while True:
        n = len(buf)
        if n >= 4:
            (size,) = FRAME.unpack_from(buf)
            start = 4
            if size == -1 and n >= 12:
                (size,) = FRAME_LONG.unpack_from(buf, 4)
                start = 12
            if size >= 0:
                end = start + size
                if n >= end:
                    msg = buf[start:end]
                    del buf[:end]
                    return msg
                if size > CHUNK:  # a large answer: read straight into a buffer of its own
                    msg = bytearray(size)
                    view = memoryview(msg)
                    have = n - start
                    view[:have] = buf[start:]
                    buf.clear()
                    while have < size:
                        got = os.readv(fd, [view[have:]])
                        if not got:
                            raise EOFError
                        have += got
                    return msg
        chunk = os.read(fd, CHUNK)
        if not chunk:
            raise EOFError
        buf += chunk


def read_snapshot(row: bytes, key: bytes | None, trusted: bool, limit: int, agents: int, what: str) -> tuple:
    """The tuple process_worker._Worker.get_state pickled for one env: its signature verified before anything is
    unpickled (parallel_pool.signing), then each field checked (a wrong one would fail later steps, resets or
    get_config). The env itself stays a pickle (its class is checked where it is unpickled, in the worker).
    ValueError."""
    import reprlib

    from parallel_pool.signing import verified

    payload = verified(row, key, trusted, what)
    try:
        state = pickle.loads(payload)
    except Exception as err:
        raise ValueError(f"set_state: {what} does not unpickle ({type(err).__name__}: {err})") from None
    if not (isinstance(state, tuple) and len(state) == 7 and type(state[0]) is str and state[0] == SNAPSHOT):
        raise ValueError(f"set_state: {what} is not a snapshot of a Python env ({SNAPSHOT})")
    _, elapsed, needs_reset, seeded, kwargs, env, extra = state
    flags = (bool, np.bool_)
    checks = [
        (
            "elapsed",
            elapsed,
            isinstance(elapsed, numbers.Integral) and not isinstance(elapsed, flags) and 0 <= int(elapsed) <= limit,
            f"an int in 0..{limit} (max_episode_steps)",
        ),
        ("needs_reset", needs_reset, isinstance(needs_reset, flags), "a bool"),
        ("seeded", seeded, isinstance(seeded, flags), "a bool"),
        ("kwargs", kwargs, type(kwargs) is dict and all(type(k) is str for k in kwargs), "a dict with str keys"),
        ("env", env, type(env) is bytes, "the env pickled (bytes)"),
        (
            "agent flags",
            extra,
            extra is None
            if not agents
            else isinstance(extra, np.ndarray) and extra.dtype == bool and extra.shape == (2, agents),
            "None" if not agents else f"a bool array of shape (2, {agents})",
        ),
    ]
    for field, value, ok, allowed in checks:
        if not ok:
            raise ValueError(f"set_state: {what} has {field} = {reprlib.repr(value)}; it must be {allowed}")
    return state
