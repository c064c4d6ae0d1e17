"""`ProcessEngine`: the Engine contract (parallel_pool.engine) served by Python envs in worker processes.

Layout. One shared-memory segment holds, for every output array of the batch ("obs" / "obs:<k>", "reward",
"terminated", "truncated", "env_id", "elapsed_step", "players.env_id", and with same-step autoreset
"final:obs..." and "final:elapsed_step") and every action array, one row per env, indexed by env id. Worker w owns a
contiguous range of env ids; it reads its envs' actions from their rows and writes their results into their rows.
`recv` copies the rows of the envs it hands out (fancy indexing: the batch's own arrays, as `_core.Engine.recv` gives).

Signals. One duplex pipe per worker: the parent sends one small binary command per worker per call (op, its number,
env ids, seeds), the worker answers once per command when all of its envs in it are done (the command's number, then
nothing, or the tracebacks of the envs that raised). The parent waits on the pipes of the workers with work in flight
(`multiprocessing.connection.wait`): a sync recv returns when every env of the send has answered, an async recv when
`batch_size` envs have (whichever workers finish first; extra rows wait for the next recv). Ctrl-C is held back
during a call except while it waits (_SigintHeld): messages are written and read whole; an answer to a call that was
interrupted is dropped by its number.

Semantics are those of the C++ engine and of gymnasium's SyncVectorEnv: env i's first reset is seeded with seed + i
(a reset with seeds gives those), later autoresets are unseeded; truncated = the env's own truncation, or
elapsed_step >= max_episode_steps without termination; next-step autoreset ignores the action of the step after an
episode ends and returns the reset observation with reward 0; same-step autoreset keeps the finished episode's last
observation in the final: rows.

Faults: an exception in an env -> `EnvError` naming the env ids with the worker's traceback (sync: the env restarts
on its next step; async: the env is reset in place and the next recv returns the whole batch); a worker that dies ->
`EnvError` naming its envs, whose next reset starts a new worker. Workers ignore SIGINT (Ctrl-C is the parent's),
die with their parent (PR_SET_PDEATHSIG, and EOF on their pipe) and are started by the forkserver, so they share
no file descriptors with one another. A forked child leaves the parent's workers alone (_after_fork_in_child).
An observation or info value that does not fit its array (_misfit) is an env's exception.
"""

from __future__ import annotations

import _signal
import _thread
import atexit
import functools
import numbers
import os
import pickle
import secrets
import select
import signal
import struct
import sys
import threading
import time
import traceback
import weakref
from collections import deque
from collections.abc import Sequence
from multiprocessing import connection
from typing import Any

import numpy as np

from parallel_pool.engine import SendRecvEngine, env_error, usable_cores

__all__ = ["ProcessEngine"]

_STEP, _RESET, _RENDER, _CONFIG, _GET_STATE, _SET_STATE = 1, 2, 3, 4, 5, 6
_SNAPSHOT = "parallel_pool.python-env/1"  # the layout of a Python env's snapshot (ProcessEngine.get_state)
_COMMIT, _ABORT = "commit", "abort"  # set_state's second phase (_SET_STATE's payload; see _Worker.set_states)
_REPLIES = (_RENDER, _GET_STATE, _SET_STATE)  # commands whose answer is a value the caller waits for
_INTERRUPTIBLE = (_RENDER, _GET_STATE)  # _REPLIES whose wait Ctrl-C may cut short: they change no env
_HEADER = struct.Struct("<BQI")  # op, the command's number, number of envs
_NUMBER = struct.Struct("<Q")  # an answer starts with the number of the command it answers
_OK, _ERR, _VALUE, _READY = b"", b"E", b"V", b"R"
_ALIGN = 64
_CLOSED = "this pool has been closed; create a new one with parallel_pool.make(...)"
_FRAME = struct.Struct("!i")  # multiprocessing.Connection's framing: a message's length (-1: an 8-byte one follows)
_FRAME_LONG = struct.Struct("!Q")
_CHUNK = 1 << 16
_CLOSE_WAIT_S = 1.0  # close(): how long workers get to exit on their own before SIGKILL
# After answering, a worker polls its pipe this long before it sleeps in a blocking read: the parent's next command
# usually comes within ~100-150 us (the front-end's work between calls), and catching it awake saves the wake-up
# latency and the cold caches after a sleep (MiniGrid at 8 envs on 2 cores: +12%, LunarLander at 64: +10%). It
# yields the core on every poll, and is off when there are more workers than cores, where spinning cost 8%.
# PARALLEL_POOL_WORKER_SPIN_US overrides it (0: off).
_SPIN_S = 200e-6


def _output_arrays(raw: dict[str, Any], same_step: bool) -> list[tuple[str, str, tuple[int, ...], bool]]:
    """The batch's output specs (names, dtypes, row shapes, per_player), as `_core.Engine.output_specs` gives them."""
    single = len(raw["obs"]) == 1 and raw["obs"][0]["name"] == "obs"
    obs = [("obs" if single else "obs:" + a["name"], a["dtype"], tuple(a["shape"]), True) for a in raw["obs"]]
    info = [("info:" + a["name"], a["dtype"], tuple(a["shape"]), bool(a["per_player"])) for a in raw["info"]]
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
    return out


class _Layout:
    """Where each array's rows sit in the shared segment (picklable: the workers build the same views)."""

    def __init__(self, arrays: Sequence[tuple[str, str, tuple[int, ...], int]]):
        self.arrays: list[tuple[str, str, tuple[int, ...], int, int]] = []  # name, dtype, row shape, rows, offset
        offset = 0
        for name, dtype, shape, rows in arrays:
            self.arrays.append((name, dtype, tuple(shape), rows, offset))
            nbytes = rows * int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
            offset += -(-max(nbytes, 1) // _ALIGN) * _ALIGN
        self.size = offset

    def views(self, buf: Any) -> dict[str, np.ndarray]:
        return {
            name: np.ndarray((rows, *shape), dtype=np.dtype(dtype), buffer=buf, offset=offset)
            for name, dtype, shape, rows, offset in self.arrays
        }


# ---- the worker process ----------------------------------------------------------------------------------------


def _die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent dies (the parent's SIGKILL included)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: EOF on the command pipe still ends the worker


class _Worker:
    """The envs first .. first + count - 1, stepped on the commands of the parent's pipe."""

    def __init__(self, env_fn: Any, first: int, count: int, views: dict[str, np.ndarray], config: dict[str, Any]):
        from gymnasium import spaces

        self.env_fn, self.first = env_fn, first
        self.kwargs: list[dict[str, Any]] = config["env_kwargs"]  # each env's own kwargs
        self.next_kwargs: list[dict[str, Any] | None] = [None] * count  # set_config's, taken at the env's next reset
        self.envs: list[Any] = [env_fn(**kw) for kw in self.kwargs]  # None: broken by an exception, rebuilt at reset
        self.v = views
        self.seed = int(config["seed"])
        self.limit = int(config["max_episode_steps"])
        self.mode = config["autoreset_mode"]
        self.is_async = config["batch_size"] < config["num_envs"]
        self.spin_s = float(config["spin_s"])
        self.elapsed = [0] * count
        self.needs_reset = [True] * count  # fresh, after an episode ended (next_step) or after an env error
        self.seeded = [False] * count
        obs_space, act_space = self._spaces(self.envs[0])
        self.made = (_layers(self.envs[0]), obs_space, act_space)  # what env_fn makes: a restored env must match
        self.held: tuple[list[int], list[tuple[Any, tuple]]] | None = None  # set_state's checked envs, until commit
        self._bind_obs(obs_space)
        self.act_tuple = isinstance(act_space, spaces.Tuple)
        if isinstance(act_space, (spaces.Dict, spaces.Tuple)):
            items = act_space.spaces.items() if isinstance(act_space, spaces.Dict) else enumerate(act_space.spaces)
            self.act_keys: list[tuple[Any, np.ndarray]] | None = [(k, views["act:" + str(k)]) for k, _ in items]
        else:
            self.act_keys = None
            self.act = views["act:action"]

    def _spaces(self, env: Any) -> tuple[Any, Any]:
        return env.observation_space, env.action_space

    def extra(self, k: int) -> Any:
        """What a snapshot keeps of env k besides the env and the step count (the multi-agent worker's flags)."""
        return None

    def set_extra(self, k: int, value: Any) -> None:
        pass

    def _bind_obs(self, space: Any) -> None:
        """The rows of each observation array: (key or None, rows), the key indexing a Dict/Tuple observation."""
        from gymnasium import spaces

        def fields(prefix: str) -> list[tuple[Any, np.ndarray, int, tuple[int, ...]]]:
            # (key, rows, width, row shape): width > 0 for strings (fixed-width rows)
            return [
                (k, rows, rows.dtype.itemsize // 4 if rows.dtype.kind == "U" else 0, rows.shape[1:])
                for k, rows in arrays(prefix)
            ]

        def arrays(prefix: str) -> list[tuple[Any, np.ndarray]]:
            if isinstance(space, spaces.Dict):  # the keys the batch holds (Text keys are left out)
                return [(k, self.v[prefix + "obs:" + k]) for k in space.spaces if prefix + "obs:" + k in self.v]
            if isinstance(space, spaces.Tuple):
                return [(i, self.v[prefix + "obs:" + str(i)]) for i in range(len(space.spaces))]
            return [(None, self.v[prefix + "obs"])]

        self.obs_fields = fields("")
        self.final_fields = fields("final:") if self.mode == "same_step" else []
        names = [n[len("info:") :] for n in self.v if n.startswith("info:")]
        self.info_fields = [(k, self.v["info:" + k]) for k in names]
        self.final_info_fields = [(k, self.v["final:info:" + k]) for k in names] if self.final_fields else []

    def _write_obs(
        self, fields: list[tuple[Any, np.ndarray, int, tuple[int, ...]]], e: int, obs: Any, who: str = ""
    ) -> None:
        """obs into row e of each field, each value checked (_misfit) unless it is an array of the row's dtype and
        shape; `who` names the env in an error (default: env e)."""
        for key, rows, width, shape in fields:
            value = obs if key is None else obs[key]
            # the common case first: an array of the space's own dtype and shape
            if type(value) is not np.ndarray or value.dtype != rows.dtype or value.shape != shape:
                why = _string_misfit(value, width) if width else _misfit(value, rows.dtype, shape)
                if why:
                    raise _BadValue(f"{who or f'env {e}'}: observation {'obs' if key is None else key!r} {why}")
            rows[e] = value

    def _write_info(self, fields: list[tuple[str, np.ndarray]], e: int, info: dict[str, Any]) -> None:
        """The carried info entries; one the env left out of this info reads 0 (False)."""
        for key, rows in fields:
            if key not in info:
                rows[e] = 0
                continue
            why = _misfit(info[key], rows.dtype, rows.shape[1:])
            if why:
                raise _BadValue(f"env {e}: info[{key!r}] {why} (the info array the pool carries; see info_keys=)")
            rows[e] = info[key]

    def _write(self, e: int, obs: Any, reward: float, term: bool, trunc: bool, info: dict[str, Any]) -> None:
        v = self.v
        self._write_obs(self.obs_fields, e, obs)
        self._write_info(self.info_fields, e, info)
        v["reward"][e] = reward
        v["terminated"][e] = term
        v["truncated"][e] = trunc
        v["env_id"][e] = e
        v["elapsed_step"][e] = self.elapsed[e - self.first]
        v["players.env_id"][e] = e

    def _action(self, e: int) -> Any:
        if self.act_keys is None:
            a = self.act[e]
            return a.copy() if a.ndim else a[()]
        values = [(k, rows[e].copy() if rows.ndim > 1 else rows[e][()]) for k, rows in self.act_keys]
        return tuple(v for _, v in values) if self.act_tuple else dict(values)

    def reset(self, e: int, seed: int | None) -> None:
        k = e - self.first
        if self.next_kwargs[k] is not None:  # set_config's values: a new build takes over at this reset
            self.kwargs[k], self.next_kwargs[k] = self.next_kwargs[k], None  # type: ignore[assignment]
            old, self.envs[k] = self.envs[k], self.env_fn(**self.kwargs[k])
            if old is not None:
                rng = getattr(old.unwrapped, "np_random", None)
                if self.seeded[k] and rng is not None:  # the env's random stream goes on, as if nothing had changed
                    self.envs[k].unwrapped.np_random = rng
                old.close()
        if self.envs[k] is None:  # broken by an exception in its reset: build it again
            self.envs[k] = self.env_fn(**self.kwargs[k])
        if seed is None and not self.seeded[k]:
            seed = self.seed + e
        self.seeded[k] = True
        obs, info = self.envs[k].reset(seed=seed)
        self.elapsed[k] = 0
        self.needs_reset[k] = False
        self._write(e, obs, 0.0, False, False, info)

    def step(self, e: int) -> None:
        k = e - self.first
        if self.needs_reset[k]:
            self.reset(e, None)
            return
        obs, reward, term, trunc, info = self.envs[k].step(self._action(e))
        self.elapsed[k] += 1
        term = bool(term)
        trunc = bool(trunc) or (self.elapsed[k] >= self.limit and not term)
        if (term or trunc) and self.mode == "same_step":
            self._write_obs(self.final_fields, e, obs)
            self._write_info(self.final_info_fields, e, info)
            self.v["final:elapsed_step"][e] = self.elapsed[k]
            self.reset(e, None)  # writes the reset observation; the step's own values follow
            v = self.v
            v["reward"][e], v["terminated"][e], v["truncated"][e] = reward, term, trunc
            return
        if (term or trunc) and self.mode == "next_step":
            self.needs_reset[k] = True
        self._write(e, obs, float(reward), term, trunc, info)

    def get_state(self, e: int) -> bytes:
        """Env e's snapshot: a pickle of (format, elapsed, needs_reset, seeded, kwargs, the env cloudpickled). The
        env is pickled on its own, so the parent reads the rest without building the env."""
        import cloudpickle

        k = e - self.first
        if self.envs[k] is None:
            raise RuntimeError(f"env {e} is broken by an exception; reset it first")
        rebuilt = _ez_pickled(self.envs[k])
        if rebuilt:
            raise _Refusal(
                f"env {e} has no snapshot: {rebuilt} pickles its constructor's arguments (gymnasium's EzPickle), not "
                "its state, so a restore would give a new env"
            )
        try:
            env = cloudpickle.dumps(self.envs[k])
        except Exception as err:
            raise _Refusal(
                f"env {e} ({type(self.envs[k].unwrapped).__name__}) cannot be pickled, so it has no snapshot: "
                f"{type(err).__name__}: {err}"
            ) from None
        state = (_SNAPSHOT, self.elapsed[k], self.needs_reset[k], self.seeded[k], self.kwargs[k], env, self.extra(k))
        return pickle.dumps(state)

    def set_states(self, ids: list[int], items: list[Any]) -> str | None:
        """set_state in two phases, so that it changes all the envs of every worker or none. Prepare (items: one
        (key, trusted, signed row) per env): each row verified, unpickled (one env object per env: branching gives
        several envs the same row) and checked, and held; returns why one is refused (holding nothing) or None.
        Then _COMMIT puts the held envs in place (it cannot fail), or _ABORT drops them."""
        if items[0] == _ABORT:
            self.held = None
            return None
        if items[0] == _COMMIT:
            held, self.held = self.held, None
            if held is None or held[0] != ids:
                raise RuntimeError(f"set_state: no snapshot of envs {ids} is held to commit")
            for e, (env, (_, elapsed, needs_reset, seeded, kwargs, _, extra)) in zip(ids, held[1]):
                k = e - self.first
                if self.envs[k] is not None:
                    try:
                        self.envs[k].close()
                    except Exception:
                        pass  # the env is replaced either way
                self.envs[k] = env
                self.elapsed[k], self.needs_reset[k], self.seeded[k] = int(elapsed), bool(needs_reset), bool(seeded)
                self.kwargs[k], self.next_kwargs[k] = kwargs, None
                self.set_extra(k, extra)
            return None
        self.held = None
        envs = []
        for e, (key, trusted, row) in zip(ids, items):
            what = f"the snapshot for env {e}"
            try:
                state = _read_snapshot(row, key, trusted, self.limit, len(getattr(self, "agents", ())), what)
            except ValueError as err:
                return str(err)
            try:
                env = pickle.loads(state[5])
            except Exception as err:
                return f"set_state: {what} holds an env that does not unpickle here ({type(err).__name__}: {err})"
            if _layers(env) != self.made[0]:
                return (
                    f"set_state: {what} holds a {' > '.join(_layers(env))}, where this pool's env_fn makes a "
                    f"{' > '.join(self.made[0])}"
                )
            try:
                same = self._spaces(env) == self.made[1:]
            except Exception:
                same = False
            if not same:
                return f"set_state: {what} holds an env with other spaces than this pool's ({self.made[1:]})"
            envs.append((env, state))
        self.held = (ids, envs)
        return None

    def failed(self, e: int) -> None:
        """After an exception in env e: sync pools restart it on its next step; async pools reset it in place (its
        row is the reset observation) so the batch it belongs to stays whole."""
        k = e - self.first
        self.needs_reset[k] = True
        if self.is_async:
            try:
                self.reset(e, None)
            except Exception:
                self.envs[k] = None  # the next reset builds it again

    def reply(self, op: int, ids: list[int], payload: bytes) -> bytes:
        """The answer to a command other than step / reset (render, set_config, snapshots), pickled."""
        if op == _RENDER:
            frames = [self.envs[e - self.first].render() for e in ids]
            return pickle.dumps(np.stack(frames).astype(np.uint8, copy=False))
        if op == _CONFIG:  # each env's kwargs for its next reset
            for e, kwargs in zip(ids, pickle.loads(payload)):
                self.next_kwargs[e - self.first] = kwargs
            return pickle.dumps(None)
        if op == _GET_STATE:
            return pickle.dumps([self.get_state(e) for e in ids])
        return pickle.dumps(self.set_states(ids, pickle.loads(payload)))

    def _await_command(self, conn: Any) -> None:
        """Poll the pipe for up to spin_s, yielding the core between polls (see _SPIN_S)."""
        end = time.perf_counter() + self.spin_s
        while not conn.poll() and time.perf_counter() < end:
            os.sched_yield()

    def serve(self, conn: Any) -> None:
        while True:
            if self.spin_s:
                self._await_command(conn)
            try:
                msg = conn.recv_bytes()
            except (EOFError, OSError):  # the parent closed the pool or died
                return
            op, number, n = _HEADER.unpack_from(msg)
            answer = _NUMBER.pack(number)
            ids = np.frombuffer(msg, dtype=np.int32, count=n, offset=_HEADER.size).tolist()
            if op in _REPLIES or op == _CONFIG:
                payload = msg[_HEADER.size + 4 * n :]
                try:
                    reply = answer + _VALUE + self.reply(op, ids, payload)
                except _Refusal as err:  # a refusal that says why: no traceback
                    reply = answer + _ERR + pickle.dumps([(ids[0], str(err))])
                except Exception:
                    reply = answer + _ERR + pickle.dumps([(e, traceback.format_exc()) for e in ids])
                try:
                    conn.send_bytes(reply)
                except OSError:
                    return
                continue
            seeds = None
            if op == _RESET:
                seeds = np.frombuffer(msg, dtype=np.int64, count=n, offset=_HEADER.size + 4 * n).tolist()
            errors = []
            for j, e in enumerate(ids):
                try:
                    if seeds is None:
                        self.step(e)
                    else:
                        self.reset(e, None if seeds[j] < 0 else seeds[j])
                except _BadValue as err:
                    errors.append((e, str(err)))
                    self.failed(e)
                except Exception:
                    errors.append((e, traceback.format_exc()))
                    self.failed(e)
            try:
                conn.send_bytes(answer + (_ERR + pickle.dumps(errors) if errors else _OK))
            except OSError:  # the parent closed the pool while this command ran
                return


class _AgentsWorker(_Worker):
    """The envs of a PettingZoo ParallelEnv: agent j (possible_agents order) of env e is player row e * P + j. An agent
    not in the env's observations (done, or not yet in) has a zero row and reward 0. The episode ends when no agent
    is left (env.agents empty) or at the pool's time limit: terminated where every agent terminated, else truncated;
    per agent, info:agent_terminated / info:agent_truncated say how it ended (they stay set until the reset)."""

    def __init__(self, env_fn: Any, first: int, count: int, views: dict[str, np.ndarray], config: dict[str, Any]):
        self.agents: list[Any] = list(config["agents"])
        self.players = len(self.agents)
        self.flags = [np.zeros((2, self.players), dtype=bool) for _ in range(count)]  # terminated, truncated
        super().__init__(env_fn, first, count, views, config)
        self.agent_flags = (views["info:agent_terminated"], views["info:agent_truncated"])

    def _spaces(self, env: Any) -> tuple[Any, Any]:
        return env.observation_space(self.agents[0]), env.action_space(self.agents[0])

    def extra(self, k: int) -> Any:
        return self.flags[k].copy()

    def set_extra(self, k: int, value: Any) -> None:
        self.flags[k][:] = value

    def _write_agents(
        self, fields: list[tuple[Any, np.ndarray, int, tuple[int, ...]]], e: int, obs: dict[Any, Any]
    ) -> None:
        for j, agent in enumerate(self.agents):
            r = e * self.players + j
            if agent in obs:
                self._write_obs(fields, r, obs[agent], f"env {e} agent {agent!r}")
            else:
                for _, rows, _, _ in fields:
                    rows[r] = rows.dtype.type()

    def _write(self, e: int, obs: Any, reward: Any, term: bool, trunc: bool, info: dict[str, Any]) -> None:
        """A reset's rows (obs: the agents' observations); step() writes its own."""
        self.flags[e - self.first][:] = False
        self._write_rows(e, obs, {}, term, trunc)

    def _write_rows(self, e: int, obs: dict[Any, Any], rewards: dict[Any, Any], term: bool, trunc: bool) -> None:
        v, k, first_row = self.v, e - self.first, e * self.players
        self._write_agents(self.obs_fields, e, obs)
        for j, agent in enumerate(self.agents):
            v["reward"][first_row + j] = rewards.get(agent, 0.0)
        v["players.env_id"][first_row : first_row + self.players] = e
        self.agent_flags[0][first_row : first_row + self.players] = self.flags[k][0]
        self.agent_flags[1][first_row : first_row + self.players] = self.flags[k][1]
        v["terminated"][e], v["truncated"][e] = term, trunc
        v["env_id"][e] = e
        v["elapsed_step"][e] = self.elapsed[k]

    def step(self, e: int) -> None:
        k = e - self.first
        if self.needs_reset[k]:
            self.reset(e, None)
            return
        env = self.envs[k]
        live = set(env.agents)
        actions = {a: self._action(e * self.players + j) for j, a in enumerate(self.agents) if a in live}
        obs, rewards, terms, truncs, _ = env.step(actions)
        self.elapsed[k] += 1
        flags = self.flags[k]
        for j, agent in enumerate(self.agents):
            flags[0, j] |= bool(terms.get(agent, False))
            flags[1, j] |= bool(truncs.get(agent, False))
        over = not env.agents or self.elapsed[k] >= self.limit
        term = over and bool(flags[0].all())
        trunc = over and not term
        if over and self.mode == "same_step":
            self._write_agents(self.final_fields, e, obs)
            self.v["final:elapsed_step"][e] = self.elapsed[k]
            ended = flags.copy()
            self.reset(e, None)  # writes the reset rows; the step's rewards and flags follow
            rows = slice(e * self.players, (e + 1) * self.players)
            for j, agent in enumerate(self.agents):
                self.v["reward"][rows.start + j] = rewards.get(agent, 0.0)
            self.v["final:info:agent_terminated"][rows] = ended[0]  # the info of the reset is the current one
            self.v["final:info:agent_truncated"][rows] = ended[1]
            self.v["terminated"][e], self.v["truncated"][e] = term, trunc
            return
        if over and self.mode == "next_step":
            self.needs_reset[k] = True
        self._write_rows(e, obs, rewards, term, trunc)


class _Refusal(RuntimeError):
    """A call the env cannot serve, with a message that says why (sent without the worker's traceback)."""


class _BadValue(ValueError):
    """An observation or info value of an env that does not fit its array (sent without the worker's traceback,
    which would show only the pool's frames)."""


def _misfit(value: Any, dtype: np.dtype, shape: tuple[int, ...]) -> str | None:
    """Why `value` cannot be written as a row of dtype `dtype` and shape `shape` (None: it can). Refused where
    gymnasium's SyncVectorEnv refuses it (numpy's same_kind casting into the batch: no float into int, no number into
    bool, no None or str into numbers) and where numpy would change it silently: another shape (a scalar is
    broadcast to every element), an integer outside the row dtype's range (300 into uint8 wraps to 44). An integer
    of another signedness is taken when it fits."""
    try:
        a = np.asarray(value)
    except Exception:  # a ragged sequence
        return f"is {value!r}, not an array; expected {dtype} of shape {shape}"
    if a.shape != shape:
        return f"has shape {a.shape} ({_shown(value)}); expected {dtype} of shape {shape}"
    if a.dtype == dtype:
        return None
    integers = a.dtype.kind in "iu" and dtype.kind in "iu"
    if not (integers or np.can_cast(a.dtype, dtype, "same_kind")):
        return f"is {a.dtype} ({_shown(value)}); expected {dtype} of shape {shape}"
    if dtype.kind in "iu" and a.size and not np.can_cast(a.dtype, dtype):
        lo, hi = np.iinfo(dtype).min, np.iinfo(dtype).max
        if a.min() < lo or a.max() > hi:
            return f"has {a.min() if a.min() < lo else a.max()}, outside {dtype}'s range [{lo}, {hi}]"
    return None


def _string_misfit(value: Any, width: int) -> str | None:
    if not isinstance(value, str):
        return f"is {_shown(value)}, not a str"
    if len(value) > width:  # numpy would cut it short
        return (
            f"is a string of {len(value)} characters; the pool's rows hold {width} (a Text space's max_length, "
            "else parallel_pool.python_env.STRING_WIDTH)"
        )
    return None


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _ez_pickled(env: Any) -> str | None:
    """The class name of a layer of `env` (its wrappers, the env itself) that gymnasium's EzPickle pickles, if any."""
    from gymnasium.utils import EzPickle

    seen = 0
    while env is not None and seen < 100:
        if isinstance(env, EzPickle):
            return type(env).__name__
        env, seen = getattr(env, "env", None), seen + 1
    return None


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # values without a truth value of ==, e.g. arrays
        return False


def _layers(env: Any) -> list[str]:
    """The classes an env is made of, its gymnasium wrappers first (what a restored env must share with env_fn's)."""
    from gymnasium import Wrapper

    out: list[str] = []
    while isinstance(env, Wrapper) and len(out) < 100:
        out.append(f"{type(env).__module__}.{type(env).__qualname__}")
        env = env.env
    return [*out, f"{type(env).__module__}.{type(env).__qualname__}"]


def _read_snapshot(row: bytes, key: bytes | None, trusted: bool, limit: int, agents: int, what: str) -> tuple:
    """The tuple _Worker.get_state pickled for one env: its signature verified before anything is unpickled
    (parallel_pool.signing), then each field checked (a wrong one would fail later steps, resets or get_config).
    The env itself stays a pickle (its class is checked where it is unpickled, in the worker). ValueError."""
    import reprlib

    from parallel_pool.signing import verified

    payload = verified(row, key, trusted, what)
    try:
        state = pickle.loads(payload)
    except Exception as err:
        raise ValueError(f"set_state: {what} does not unpickle ({type(err).__name__}: {err})") from None
    if not (isinstance(state, tuple) and len(state) == 7 and type(state[0]) is str and state[0] == _SNAPSHOT):
        raise ValueError(f"set_state: {what} is not a snapshot of a Python env ({_SNAPSHOT})")
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


def _worker_main(conn: Any, shm_name: str, layout: _Layout, env_fn_bytes: bytes, first: int, count: int, config: dict):
    """A worker process's life: build its envs, say ready (or why not), serve commands until its pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the parent, which then closes the pool
    _die_with_parent()
    try:
        import mmap

        import cloudpickle

        env_fn = cloudpickle.loads(env_fn_bytes)
        # attach by path, not multiprocessing.shared_memory: that would register the segment with the resource
        # tracker a second time, and the parent's is the one that removes it (also after the parent's SIGKILL)
        fd = os.open("/dev/shm/" + shm_name.lstrip("/"), os.O_RDWR)
        try:
            buf = mmap.mmap(fd, layout.size)
        finally:
            os.close(fd)
        views = layout.views(buf)
        worker = (_AgentsWorker if config["agents"] else _Worker)(env_fn, first, count, views, config)
    except BaseException:
        try:
            conn.send_bytes(_ERR + traceback.format_exc().encode())
        except OSError:
            pass  # the parent gave up already (another worker failed first)
        return
    try:
        conn.send_bytes(_READY)
    except OSError:
        return
    worker.serve(conn)
    for env in worker.envs:
        try:
            if env is not None:
                env.close()
        except Exception:
            pass


# ---- the parent side -----------------------------------------------------------------------------------------


class _Proc:
    """One worker process as the parent sees it."""

    def __init__(self, ids: np.ndarray):
        self.ids = ids  # the env ids it owns
        self.process: Any = None
        self.conn: Any = None
        self.poller: Any = None  # select.poll of conn: is an answer there to read
        self.unread = bytearray()  # bytes read from conn past the last whole answer (_read_answer)
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


def _read_answer(p: _Proc) -> Any:
    """The next whole message from worker p (Connection.send_bytes's framing), as bytes or a bytearray. Read here
    rather than by Connection.recv_bytes, which reads a message's length and its body apart: a short answer takes one
    read. Blocks until the message is whole; raises EOFError / OSError when the worker is gone."""
    fd, buf = p.conn.fileno(), p.unread
    while True:
        n = len(buf)
        if n >= 4:
            (size,) = _FRAME.unpack_from(buf)
            start = 4
            if size == -1 and n >= 12:
                (size,) = _FRAME_LONG.unpack_from(buf, 4)
                start = 12
            if size >= 0:
                end = start + size
                if n >= end:
                    msg = buf[start:end]
                    del buf[:end]
                    return msg
                if size > _CHUNK:  # a large answer: read straight into a buffer of its own
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
        chunk = os.read(fd, _CHUNK)
        if not chunk:
            raise EOFError
        buf += chunk


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
    ctx.set_forkserver_preload(["parallel_pool.process_engine", "gymnasium", "cloudpickle"])
    return ctx


class ProcessEngine(SendRecvEngine):
    """The envs of a `PythonEnvSpec` in `num_threads` worker processes; the calls of `_core.Engine`."""

    def __init__(self, spec: Any):
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
        self.output_specs = _output_arrays(spec._raw, cfg["autoreset_mode"] == "same_step")
        self._action_specs = [
            ("act:" + a["name"], a["dtype"], tuple(a["shape"]), a["low"], a["high"]) for a in spec._raw["action"]
        ]
        # multi-agent envs (PettingZoo): the per-player arrays have max_num_players rows per env (env e's agent j at
        # row e * players + j); every other array one row per env
        self.players: int = spec.max_num_players
        self._per_player = [pp for *_, pp in self.output_specs]
        self._layout = _Layout(
            [(n, dt, s, self.num_envs * (self.players if pp else 1)) for n, dt, s, pp in self.output_specs]
            + [(n, dt, s, self.num_envs * self.players) for n, dt, s, _, _ in self._action_specs]
        )
        # named after this process (pp_<pid>_<random>), so that a segment left by a killed process can be proven
        # orphaned; multiprocessing creates it with mode 0600
        name = f"pp_{os.getpid()}_{secrets.token_hex(8)}"
        self._shm = shared_memory.SharedMemory(name=name, create=True, size=self._layout.size)
        views = self._layout.views(self._shm.buf)
        self._out = [views[name] for name, *_ in self.output_specs]
        self._act = [views[name] for name, *_ in self._action_specs]
        self._all = np.arange(self.num_envs, dtype=np.int32)
        self._owner = np.zeros(self.num_envs, dtype=np.int64)
        self._pending = np.zeros(self.num_envs, dtype=bool)
        self._done = np.zeros(self.num_envs, dtype=bool)  # sync: answered, not yet returned
        self._ready: deque[int] = deque()  # async: answered, not yet returned, in completion order
        self._sends: deque[np.ndarray] = deque()  # sync: env ids of each send not yet received
        self._errors: list[tuple[int, str]] = []  # env exceptions not yet raised
        self._lost: list[tuple[np.ndarray, str]] = []  # dead workers not yet raised
        self._number = 0  # of the last command sent: each command is numbered, and its answer carries the number
        self._awaited: set[int] = set()  # numbers of the _REPLIES commands a call waits for
        self._replies: dict[int, Any] = {}  # number -> the answer to an awaited _REPLIES command
        self._ctx = _context()
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
        config = dict(self._config, env_kwargs=self._env_kwargs[first : first + count], agents=self._spec.agents)
        p.process = self._ctx.Process(
            target=_worker_main,
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

    def _wait_ready(self, p: _Proc) -> None:
        try:
            self._held.wait(p.poller.poll)
            msg = _read_answer(p)
        except (EOFError, OSError):
            p.process.join(1.0)
            raise RuntimeError(
                f"the worker process for envs {p.ids[0]}..{p.ids[-1]} of {self._spec.task_id} died while starting "
                f"({_exit_cause(p.process.exitcode)})"
            ) from None
        if msg != _READY:
            raise RuntimeError(
                f"the worker process for envs {p.ids[0]}..{p.ids[-1]} could not build its envs with "
                f"env_fn={self._spec.env_fn!r}; the worker's traceback:\n{msg[1:].decode(errors='replace')}"
            )

    def _restart(self, p: _Proc) -> None:
        """A new worker for the envs of a dead one (their next step or reset starts fresh envs)."""
        p.conn.close()
        if p.process.pid is not None:
            p.process.join(0)
        self._lost = [lost for lost in self._lost if lost[0] is not p.ids]  # the new worker's envs are not lost
        try:
            self._start(p)
            self._wait_ready(p)
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
        p.process.join(1.0)
        p.dead = f"worker process {p.process.pid} " + (why or f"died ({_exit_cause(p.process.exitcode)})")
        for _, _, ids in p.inflight:
            self._pending[ids] = False
            if self._sync:
                self._done[ids] = True  # the send completes; its recv raises
        p.inflight.clear()
        self._lost.append((p.ids, p.dead))

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
        ids = self._ids(env_id)
        every = ids is self._all  # the common call (all envs, in order) skips the index work
        pending = (self._all if every else ids)[self._pending if every else self._pending[ids]]
        if len(pending):
            raise ValueError(
                f"env {int(pending[0])} already has an action pending; recv() its result before sending again"
            )
        owners = self._owner if every else self._owner[ids]
        workers = range(len(self._procs)) if every else np.unique(owners).tolist()
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
        self._dispatch(ids, owners, workers, _RESET if reset else _STEP, seed_arr)
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
            else:
                sel = np.flatnonzero(owners == w)
                sub = ids[sel]
            self._command(p, op, sub, b"" if seeds is None else seeds[sel].tobytes())

    def _command(self, p: _Proc, op: int, ids: np.ndarray, payload: bytes = b"") -> int:
        """Send worker p a command (numbered; recorded in flight first); returns its number."""
        self._number += 1
        p.inflight.append((self._number, op, ids))
        try:
            p.conn.send_bytes(_HEADER.pack(op, self._number, len(ids)) + ids.tobytes() + payload)
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
            if not ready:
                conns = block(connection.wait, [p.conn for p in busy])
                ready = [p for p in busy if p.conn in conns]
        for p in ready:
            try:
                self._answer(p, _read_answer(p))
                while p.inflight and (p.unread or p.poller.poll(0)):
                    self._answer(p, _read_answer(p))
            except (EOFError, OSError):
                if self._closed:  # close() from another thread (or a signal handler) closed the pipes
                    raise RuntimeError(_CLOSED) from None
                self._died(p)

    def _answer(self, p: _Proc, msg: Any) -> None:
        number, op, ids = p.inflight[0]
        if msg[: _NUMBER.size] != _NUMBER.pack(number):  # the pipe lost its framing: never read a wrong answer
            self._died(p, f"answered out of order (expected the answer to command {number}); it was stopped")
            return
        p.inflight.popleft()
        body = memoryview(msg)[_NUMBER.size :]  # a view: a large answer is not copied
        if op == _CONFIG:
            return  # nothing to wait for: the values were stored (the call itself cannot fail)
        if op in _REPLIES:
            if number in self._awaited:  # else the call that sent it was interrupted: its answer is stale
                self._replies[number] = (
                    pickle.loads(body[1:]) if body[:1] == _VALUE else RuntimeError(_tracebacks(body))
                )
            return
        self._pending[ids] = False
        if body:
            self._errors.extend(pickle.loads(body[1:]))
        if self._sync:
            self._done[ids] = True
        else:
            self._ready.extend(ids.tolist())

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
        return self._gather(ids)

    @_holding_sigint
    def _request(self, op: int, ids: np.ndarray, payload: Any = None) -> list[tuple[np.ndarray, Any]]:
        """A _REPLIES command to each worker that owns some of `ids` (with its envs' part of `payload`, a list in
        ids order); returns (env ids, answer) per worker, in ascending worker order. Raises the first error.
        The answers are those of these commands (by number): an answer to an earlier, interrupted call is dropped.
        Ctrl-C interrupts the wait for a command that changes nothing (_INTERRUPTIBLE); for the others it is raised
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
                self._wait(interruptible=op in _INTERRUPTIBLE)
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
        parts = self._request(_RENDER, ids)
        out = np.concatenate([frames for _, frames in parts])
        order = np.concatenate([sub for sub, _ in parts])  # row k of the concatenation is env order[k]
        rank = {int(e): k for k, e in enumerate(order)}
        return out[[rank[int(e)] for e in ids]]

    def num_players(self, env_id: int) -> int:
        self._ids(env_id)
        return self.players

    def _get_state(self, env_id: int) -> list[float]:
        raise NotImplementedError(
            "get_state(env_id) of one int is a C++ env's simulator state (alignment tests); for a Python env take a "
            "snapshot: get_state([env_id])"
        )

    def _set_state(self, env_id: int, state: Sequence[float]) -> None:
        self._get_state(env_id)

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
            self._command(p, _CONFIG, ids[sel], pickle.dumps([new[i] for i in sel]))

    # ---- snapshots: each env pickled in its worker, signed here -------------------------------------------------
    _prepared: tuple[np.ndarray, list[dict[str, Any]]] | None = (
        None  # prepare_restore's env ids and kwargs, until commit
    )

    @_holding_sigint
    def snapshot(
        self, env_ids: Any, key: bytes | None = None
    ) -> tuple[list[np.ndarray], np.ndarray, np.ndarray, np.ndarray]:
        """Each env pickled (cloudpickle) with the pool's bookkeeping of it (steps in the episode, whether it ended,
        its kwargs), signed with `key` (default: the user's key file; parallel_pool.signing), as a uint8 array; the
        generator lives in the pickled env (an empty array per env)."""
        from parallel_pool.signing import sign, snapshot_key

        self._check_open()
        ids = self._ids(env_ids)
        key = snapshot_key(key)
        blobs: dict[int, bytes] = {}
        for sub, answer in self._request(_GET_STATE, ids):
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
            state = _read_snapshot(row, key, trusted, limit, agents, what)
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
            self._restore_request(ids, [_COMMIT] * len(ids), "the other envs were restored")
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
                self._request(_SET_STATE, np.asarray(live, dtype=np.int32), [_ABORT] * len(live))
            except Exception:
                pass  # a worker that cannot answer holds nothing that matters: its next prepare replaces it

    def _restore_request(self, ids: np.ndarray, items: list[Any], outcome: str) -> list[Any]:
        """_request(_SET_STATE, ...); a worker found dead (before, or on the way) is an EnvError naming its envs,
        and no answer of this request is left behind for a later one."""
        mine = [p for p in self._procs if np.isin(p.ids, ids).any()]
        try:
            for p in mine:  # found before anything is sent: no worker gets this phase
                if p.dead is None and not p.process.is_alive():
                    self._died(p)
            if not any(p.dead for p in mine):
                return [answer for _, answer in self._request(_SET_STATE, ids, items)]
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
        return self._spec._raw

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
        if self._shm is not None and os.getpid() == self._pid:
            try:
                self._shm.close()
            except BufferError:  # a view is still referenced somewhere: the mapping goes with the process
                pass
            self._shm.unlink()
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
