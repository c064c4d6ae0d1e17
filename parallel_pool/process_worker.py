"""The worker side of `process_engine.ProcessEngine`: what runs in a worker process (started by the forkserver,
which preloads this module). A worker builds its envs, then serves the parent's commands on its pipe
(parallel_pool.process_protocol) until the pipe closes, reading actions from and writing results into the envs' rows
of the shared segment.

Semantics are those of the C++ engine and of gymnasium's SyncVectorEnv: env i's first reset is seeded with seed + i
(a reset with seeds gives those), later autoresets are unseeded; truncated = the env's own truncation, or
elapsed_step >= max_episode_steps without termination; next-step autoreset ignores the action of the step after an
episode ends and returns the reset observation with reward 0; same-step autoreset keeps the finished episode's last
observation in the final: rows. An observation value that does not fit its array (_misfit) is an env's exception.
An info entry goes into its typed column where it has one and fits it; every other entry (strings, nested dicts, a
key without a column, a value of another dtype or shape than its column's) goes to the parent in the answer, as
gymnasium's vector envs carry it (parallel_pool.process_protocol).
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import time
import traceback
from typing import Any

import numpy as np

from parallel_pool import env_state
from parallel_pool.process_protocol import (
    ABORT,
    COLUMNS,
    COMMIT,
    CONFIG,
    ERR,
    EXTRA,
    GET_STATE,
    HEADER,
    INFO,
    NUMBER,
    OK,
    OWN_INFO,
    READY,
    RENDER,
    REPLIES,
    RESET,
    SNAPSHOT,
    VALUE,
    Layout,
    leaf_paths,
    read_snapshot,
)

__all__ = ["worker_main"]

# an observation leaf's field: (keys from the observation to the leaf, the batch's array name, its rows in the shared
# segment or None for a leaf of Python objects, row shape, leaf space)
ObsField = tuple[tuple[Any, ...], str, "np.ndarray | None", tuple[int, ...], Any]


def worker_main(conn: Any, shm_name: str, layout: Layout, env_fn_bytes: bytes, first: int, count: int, config: dict):
    """A worker process's life: build its envs, say ready (or why not), serve commands until its pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the parent, which then closes the pool
    _die_with_parent()
    try:
        import cloudpickle

        env_fn = cloudpickle.loads(env_fn_bytes)
        views = _attach(shm_name, layout)
        worker = (_AgentsWorker if config["agents"] else _Worker)(env_fn, first, count, views, config)
    except BaseException:
        try:
            conn.send_bytes(ERR + traceback.format_exc().encode())
        except OSError:
            pass  # the parent gave up already (another worker failed first)
        return
    try:
        conn.send_bytes(READY)
    except OSError:
        return
    worker.serve(conn)
    for env in worker.envs:
        try:
            if env is not None:
                env.close()
        except Exception:
            pass


def _attach(shm_name: str, layout: Layout) -> dict[str, np.ndarray]:
    """The arrays of a shared-memory segment the parent made, attached by path: multiprocessing.shared_memory would
    register the segment with the resource tracker a second time, and the parent's is the one that removes it (also
    after the parent's SIGKILL). The views keep the mapping alive."""
    import mmap

    fd = os.open("/dev/shm/" + shm_name.lstrip("/"), os.O_RDWR)
    try:
        buf = mmap.mmap(fd, layout.size)
    finally:
        os.close(fd)
    return layout.views(buf)


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
        self.players: int = len(config["agents"]) or 1  # rows per env of the per-player arrays
        self.extra_info = bool(config.get("info_extra"))  # carry the entries without a column (not PettingZoo's)
        # this command's entries without a column, by env id (the step's info; a finished episode's final info), and
        # the envs whose last answer had some (their parent rows are cleared when they have none)
        self.rest: dict[int, dict[Any, Any]] = {}
        self.final_rest: dict[int, dict[Any, Any]] = {}
        self.had_rest: set[int] = set()
        self.objects: dict[int, dict[str, Any]] = {}  # this command's rows of object arrays: row -> {array name: value}
        # the str each (row, object array) holds in the parent, as this worker last sent it: a str observation leaf
        # (MiniGrid's mission, the same all episode) goes with the answer only when it changes
        self.sent_str: dict[tuple[int, str], str] = {}
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
        """Each observation leaf's field: (keys from the observation to the leaf, the batch's array name, its rows in
        the shared segment or None for a leaf of Python objects, row shape, leaf space)."""

        def fields(prefix: str) -> list[ObsField]:
            out = []
            for name, path, leaf in leaf_paths(space, "obs"):
                full = prefix + (name if name == "obs" and not path else "obs:" + name)
                rows = self.v.get(full)
                out.append((path, full, rows, () if rows is None else rows.shape[1:], leaf))
            return out

        self.obs_fields = fields("")
        self.final_fields = fields("final:") if self.mode == "same_step" else []
        from gymnasium import spaces

        self.obs_space = space
        # a Dict space's key count (a dict observation with as many keys need no key check); -1: not a Dict
        self.obs_keys = len(space.spaces) if isinstance(space, spaces.Dict) else -1
        names = [n[len("info:") :] for n in self.v if n.startswith("info:")]
        self.info_fields = [(k, self.v["info:" + k], self.v.get("info_mask:" + k)) for k in names]
        self.final_info_fields = (
            [(k, self.v["final:info:" + k], self.v.get("final:info_mask:" + k)) for k in names]
            if self.final_fields
            else []
        )

    def _write_obs(
        self,
        fields: list[ObsField],
        e: int,
        obs: Any,
        who: str = "",
    ) -> None:
        """obs into row e of each field, each value checked (_misfit; a leaf of Python objects: its space's
        contains(), as gymnasium's check_env does) unless it is an array of the row's dtype and shape; `who` names
        the env in an error (default: env e)."""
        if self.obs_keys >= 0 and (type(obs) is not dict or len(obs) != self.obs_keys):
            self._check_keys(obs, e, who)
        for path, name, rows, shape, leaf in fields:
            value = obs
            try:
                for key in path:
                    value = value[key]
            except (KeyError, IndexError, TypeError):
                where = ".".join(str(k) for k in path)
                raise _BadValue(
                    f"{who or f'env {e}'}: observation has no {where!r} ({_shown(obs)}); the space is {self.obs_space}"
                ) from None
            if rows is None:  # a Python object: carried by the pipe
                if type(value) is str and self.sent_str.get((e, name)) == value:
                    continue  # checked, and in the parent's row already
                if not _contains(leaf, value):
                    raise _BadValue(
                        f"{who or f'env {e}'}: observation {_leaf_name(path)} is {_shown(value)}, not in {leaf}"
                    )
                self._object(e, name, value)
                continue
            # the common case first: an array of the space's own dtype and shape
            if type(value) is not np.ndarray or value.dtype != rows.dtype or value.shape != shape:
                why = _misfit(value, rows.dtype, shape)
                if why:
                    raise _BadValue(f"{who or f'env {e}'}: observation {_leaf_name(path)} {why}")
            rows[e] = value

    def _object(self, row: int, name: str, value: Any) -> None:
        """Row `row` of the parent's object array `name` becomes `value` (sent with this command's answer)."""
        self.objects.setdefault(row, {})[name] = value
        if type(value) is str:
            self.sent_str[row, name] = value
        else:
            self.sent_str.pop((row, name), None)

    def _check_keys(self, obs: Any, e: int, who: str) -> None:
        """A Dict space's observation is a dict with the space's keys (gymnasium's check_env; Dict.contains)."""
        want = list(self.obs_space.spaces)
        if not isinstance(obs, dict):
            raise _BadValue(f"{who or f'env {e}'}: observation is {_shown(obs)}, not a dict with the keys {want}")
        if set(obs) != set(want):
            raise _BadValue(
                f"{who or f'env {e}'}: observation has the keys {sorted(map(str, obs))}; its Dict space has {want}"
            )

    def _write_info(
        self, fields: list[tuple[str, np.ndarray, np.ndarray | None]], e: int, info: dict[str, Any]
    ) -> dict[Any, Any] | None:
        """The entries with a column into row e (a column whose key the info lacks reads 0, its mask False); returns
        the other entries (None: none), which the answer carries."""
        if type(info) is not dict and not isinstance(info, dict):  # gymnasium's check_env asserts it
            raise _BadValue(f"env {e}: info is {_shown(info)}, not a dict")
        written = 0
        misfits: list[str] = []
        for key, rows, mask in fields:
            if key not in info:
                rows[e] = 0
                if mask is not None:
                    mask[e] = False
                continue
            value = info[key]
            if (type(value) is np.ndarray and value.dtype == rows.dtype and value.shape == rows.shape[1:]) or (
                _misfit(value, rows.dtype, rows.shape[1:]) is None
            ):
                rows[e] = value
                if mask is not None:
                    mask[e] = True
                written += 1
                continue
            if mask is None:  # no other way to carry it
                why = _misfit(value, rows.dtype, rows.shape[1:])
                raise _BadValue(f"env {e}: info[{key!r}] {why} (the info array the pool carries; see info_keys=)")
            rows[e], mask[e] = 0, False  # another dtype or shape than its column's: carried as the other entries
            misfits.append(key)
        if not self.extra_info or len(info) == written:
            return None
        taken = {key for key, _, _ in fields}.difference(misfits)
        rest = {k: v for k, v in info.items() if k not in taken and k not in OWN_INFO}
        return rest or None

    def _write(self, e: int, obs: Any, reward: float, term: bool, trunc: bool, info: dict[str, Any]) -> None:
        v = self.v
        self._write_obs(self.obs_fields, e, obs)
        rest = self._write_info(self.info_fields, e, info)
        if rest is not None:
            self.rest[e] = rest
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
            rest = self._write_info(self.final_info_fields, e, info)
            if rest is not None:
                self.final_rest[e] = rest
            self.v["final:elapsed_step"][e] = self.elapsed[k]
            self.reset(e, None)  # writes the reset observation; the step's own values follow
            v = self.v
            v["reward"][e], v["terminated"][e], v["truncated"][e] = reward, term, trunc
            return
        if (term or trunc) and self.mode == "next_step":
            self.needs_reset[k] = True
        self._write(e, obs, float(reward), term, trunc, info)

    def get_state(self, e: int) -> bytes:
        """Env e's snapshot: a pickle of (format, elapsed, needs_reset, seeded, kwargs, the env, extra), the env as
        parallel_pool.env_state captures it (its protocol, MuJoCo's data, or the env pickled) and pickled on its
        own, so the parent reads the rest without building the env."""
        k = e - self.first
        if self.envs[k] is None:
            raise RuntimeError(f"env {e} is broken by an exception; reset it first")
        try:
            env = env_state.capture(self.envs[k])
        except env_state.NoSnapshot as err:
            raise _Refusal(f"env {e} has no snapshot: {err}") from None
        state = (SNAPSHOT, self.elapsed[k], self.needs_reset[k], self.seeded[k], self.kwargs[k], env, self.extra(k))
        return pickle.dumps(state)

    def set_states(self, ids: list[int], items: list[Any]) -> str | None:
        """set_state in two phases, so that it changes all the envs of every worker or none. Prepare (items: one
        (key, trusted, signed row) per env): each row verified, unpickled (one env object per env: branching gives
        several envs the same row) and checked, and held; returns why one is refused (holding nothing) or None.
        Then COMMIT puts the held envs in place (it cannot fail), or ABORT drops them."""
        if items[0] == ABORT:
            self._drop_held()
            return None
        if items[0] == COMMIT:
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
        self._drop_held()
        envs: list[tuple[Any, tuple]] = []
        for e, (key, trusted, row) in zip(ids, items):
            try:
                envs.append(self._prepared(f"the snapshot for env {e}", key, trusted, row))
            except _Refusal as err:
                self.held = ([], envs)
                self._drop_held()  # the envs built for the rows before
                return str(err)
        self.held = (ids, envs)
        return None

    def _prepared(self, what: str, key: bytes | None, trusted: bool, row: bytes) -> tuple[Any, tuple]:
        """One row's env, checked, and its fields; _Refusal says why not."""
        try:
            state = read_snapshot(row, key, trusted, self.limit, len(getattr(self, "agents", ())), what)
        except ValueError as err:
            raise _Refusal(str(err)) from None
        try:
            env = pickle.loads(state[5])
        except Exception as err:
            raise _Refusal(
                f"set_state: {what} holds an env that does not unpickle here ({type(err).__name__}: {err})"
            ) from None
        if env_state.is_captured(env):  # a state to put into a fresh env (built here, swapped in at commit)
            try:
                env = env_state.restore(env, lambda: self.env_fn(**state[4]))
            except env_state.NoSnapshot as err:
                raise _Refusal(f"set_state: {what} cannot be restored: {err}") from None
            except Exception as err:
                raise _Refusal(f"set_state: {what} does not restore here ({type(err).__name__}: {err})") from None
        why = None
        if _layers(env) != self.made[0]:
            why = f"holds a {' > '.join(_layers(env))}, where this pool's env_fn makes a {' > '.join(self.made[0])}"
        else:
            try:
                same = self._spaces(env) == self.made[1:]
            except Exception:
                same = False
            if not same:
                why = f"holds an env with other spaces than this pool's ({self.made[1:]})"
        if why:
            _close(env)
            raise _Refusal(f"set_state: {what} {why}")
        return env, state

    def _drop_held(self) -> None:
        """Forget a prepared restore, closing its envs (those built here hold a renderer, a simulator)."""
        held, self.held = self.held, None
        for env, _ in held[1] if held else []:
            _close(env)

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
        if op == RENDER:
            frames = [self.envs[e - self.first].render() for e in ids]
            return pickle.dumps(np.stack(frames).astype(np.uint8, copy=False))
        if op == COLUMNS:  # typed arrays of info keys the parent saw late: written from the next step on
            views = _attach(*pickle.loads(payload))
            self.v.update(views)
            for name in views:
                if name.startswith("info:"):
                    key = name[len("info:") :]
                    self.info_fields.append((key, views[name], views["info_mask:" + key]))
                    if self.final_fields:
                        self.final_info_fields.append((key, views["final:" + name], views["final:info_mask:" + key]))
            return pickle.dumps(None)
        if op == CONFIG:  # each env's kwargs for its next reset
            for e, kwargs in zip(ids, pickle.loads(payload)):
                self.next_kwargs[e - self.first] = kwargs
            return pickle.dumps(None)
        if op == GET_STATE:
            return pickle.dumps([self.get_state(e) for e in ids])
        return pickle.dumps(self.set_states(ids, pickle.loads(payload)))

    def _await_command(self, poll: Any) -> None:
        """Poll the pipe for up to spin_s, yielding the core between polls (see _SPIN_S). (`poll`: a select.poll's,
        made once: Connection.poll builds a selector on every call, ~10 us, which delayed seeing the command.)"""
        end = time.perf_counter() + self.spin_s
        while not poll(0) and time.perf_counter() < end:
            os.sched_yield()

    def serve(self, conn: Any) -> None:
        poller = select.poll()
        poller.register(conn.fileno(), select.POLLIN)
        while True:
            if self.spin_s:
                self._await_command(poller.poll)
            try:
                msg = conn.recv_bytes()
            except (EOFError, OSError):  # the parent closed the pool or died
                return
            op, number, n = HEADER.unpack_from(msg)
            answer = NUMBER.pack(number)
            ids = np.frombuffer(msg, dtype=np.int32, count=n, offset=HEADER.size).tolist()
            if op in REPLIES or op in (CONFIG, COLUMNS):
                payload = msg[HEADER.size + 4 * n :]
                try:
                    reply = answer + VALUE + self.reply(op, ids, payload)
                except _Refusal as err:  # a refusal that says why: no traceback
                    reply = answer + ERR + pickle.dumps([(ids[0], str(err))])
                except Exception:
                    reply = answer + ERR + pickle.dumps([(e, traceback.format_exc()) for e in ids])
                try:
                    conn.send_bytes(reply)
                except OSError:
                    return
                continue
            seeds = None
            if op == RESET:
                seeds = np.frombuffer(msg, dtype=np.int64, count=n, offset=HEADER.size + 4 * n).tolist()
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
            if self.rest or self.final_rest or self.had_rest or self.objects:
                reply = answer + INFO + self._rest_answer(ids, errors)
            else:
                reply = answer + (ERR + pickle.dumps(errors) if errors else OK)
            try:
                conn.send_bytes(reply)
            except OSError:  # the parent closed the pool while this command ran
                return

    def _rest_answer(self, ids: list[int], errors: list[tuple[int, str]]) -> bytes:
        """INFO's payload: (errors, {row: {object array name: value}}): the observation leaves of Python objects
        this command wrote, and the info entries without a typed column (process_protocol.EXTRA) of the envs of
        `ids` that have some or had some in their last answer (None then). An env whose values do not pickle is
        an env error."""
        objects, self.objects = self.objects, {}
        for e in ids:
            now, final = self.rest.pop(e, None), self.final_rest.pop(e, None)
            if now is not None or final is not None:
                self.had_rest.add(e)
            elif e in self.had_rest:
                self.had_rest.discard(e)
            else:
                continue
            row = objects.setdefault(e, {})
            row[EXTRA] = now
            if self.final_fields:
                row["final:" + EXTRA] = final
        self.rest.clear()
        self.final_rest.clear()
        try:
            return pickle.dumps((errors, objects))
        except Exception:  # some env's values do not pickle: that env's error, the others' values still go
            for r, values in list(objects.items()):
                try:
                    pickle.dumps(values)
                except Exception as err:
                    e = r // self.players
                    errors.append((e, f"env {e}: a value cannot be sent to the pool ({type(err).__name__}: {err})"))
                    del objects[r]
                    self.had_rest.discard(e)
        return pickle.dumps((errors, objects))


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

    def _write_agents(self, fields: list[ObsField], e: int, obs: dict[Any, Any]) -> None:
        for j, agent in enumerate(self.agents):
            r = e * self.players + j
            if agent in obs:
                self._write_obs(fields, r, obs[agent], f"env {e} agent {agent!r}")
            else:
                for _, name, rows, _, _ in fields:
                    if rows is None:
                        self._object(r, name, None)
                    else:
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


def _contains(space: Any, value: Any) -> bool:
    try:
        return bool(space.contains(value))
    except Exception:  # a space's contains() that raises on a value of another type
        return False


def _leaf_name(path: tuple[Any, ...]) -> str:
    return repr(".".join(str(k) for k in path)) if path else "'obs'"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _close(env: Any) -> None:
    try:
        env.close()
    except Exception:
        pass  # an env being dropped: nothing to report


def _layers(env: Any) -> list[str]:
    """The classes an env is made of, its gymnasium wrappers first (what a restored env must share with env_fn's)."""
    return [f"{type(layer).__module__}.{type(layer).__qualname__}" for layer in env_state.layers(env)]
