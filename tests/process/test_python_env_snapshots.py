"""Snapshots of Python envs are untrusted input: each env's pickle is signed with the user's key and never unpickled
unverified (in the parent or a worker), its fields are checked, and set_state changes every env or none."""

from __future__ import annotations

import copy
import os
import pickle
import signal
import stat
import sys
import threading
import time

import cloudpickle
import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from pyproc import run_python  # noqa: E402

import parallel_pool as pp
from parallel_pool import EnvError, signing
from parallel_pool.process_protocol import SET_STATE

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the envs below travel by value, as a script's do

KEY = b"0123456789abcdef0123456789abcdef"
LIMIT = 50  # max_episode_steps of the pools below


class Walk(gym.Env):
    """A random walk: reward = action - 1, noise from the env's generator, ends when |pos| > 3 or after `length`."""

    def __init__(self, length: int = 9):
        if length < 1:
            raise ValueError(f"length must be >= 1, got {length}")
        self.observation_space = spaces.Box(-10.0, 10.0, (2,), np.float32)
        self.action_space = spaces.Discrete(3)
        self.length, self.pos, self.t = length, 0.0, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos, self.t = float(self.np_random.uniform(-1, 1)), 0
        return np.array([self.pos, self.t], np.float32), {}

    def step(self, action):
        self.pos += int(action) - 1 + float(self.np_random.normal(0, 0.3))
        self.t += 1
        obs = np.array([self.pos, self.t], np.float32)
        return obs, float(int(action) - 1), abs(self.pos) > 3, self.t >= self.length, {}


class Other(Walk):
    """Another class with the same spaces: not what the pool's env_fn makes."""


class Evil:
    """Unpickling it makes the folder `path`: the proof that a pickle ran."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (os.mkdir, (self.path,))


def make_pair():
    """Two pools stepped alike: the one under test and its untouched twin."""
    kw = dict(num_envs=4, num_threads=2, seed=3, max_episode_steps=LIMIT)
    a, b = pp.make(env_fn=Walk, **kw), pp.make(env_fn=Walk, **kw)
    a.reset()
    b.reset()
    return a, b


def same_course(env, twin, steps=12, env_id=None, seed=0):
    """Both pools step the same actions (envs `env_id`, default all) and give the same results."""
    n = 4 if env_id is None else len(env_id)
    for t, a in enumerate(np.random.default_rng(seed).integers(0, 3, (steps, n))):
        got, want = env.step(a, env_id)[:4], twin.step(a, env_id)[:4]
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w, err_msg=f"step {t}")


def rows(snap) -> list[bytes]:
    return [snap["values"][i, : snap["lengths"][i]].tobytes() for i in range(len(snap["lengths"]))]


def with_rows(snap, new: dict[int, bytes]) -> dict:
    """The snapshot with rows replaced (row index -> bytes)."""
    rs = rows(snap)
    for i, r in new.items():
        rs[i] = r
    values = np.zeros((len(rs), max(map(len, rs))), dtype=np.uint8)
    for i, r in enumerate(rs):
        values[i, : len(r)] = np.frombuffer(r, dtype=np.uint8)
    return {**snap, "values": values, "lengths": np.array([len(r) for r in rs], dtype=np.int64)}


def payload(row: bytes) -> list:
    """A signed row's fields (format, elapsed, needs_reset, seeded, kwargs, env pickle, agent flags)."""
    assert row.startswith(signing._TAG)
    return list(pickle.loads(row[len(signing._TAG) + signing._MAC_BYTES :]))


def resigned(fields, key=KEY) -> bytes:
    return signing.sign(key, pickle.dumps(tuple(fields)))


def test_an_unsigned_or_forged_snapshot_is_refused_before_anything_unpickles_it(tmp_path):
    """A row whose pickle would run code (it makes a folder): unsigned, with a forged MAC, or signed with another
    key, it is a ValueError, the pickle never runs, and no env changes. The same rows sent straight to a worker
    (the parent's checks bypassed) are refused there too. trusted=True is the opt-in that does unpickle."""
    marker = tmp_path / "ran"
    evil = pickle.dumps(Evil(str(marker)))
    env, twin = make_pair()
    try:
        same_course(env, twin, steps=3)
        snap = env.get_state([0, 1, 2, 3], key=KEY)
        same_course(env, twin, steps=4, seed=1)
        bad = {
            "not signed": evil,
            "signature that this key does not verify": signing._TAG + bytes(signing._MAC_BYTES) + evil,
            "signature that this key does not verify ": signing.sign(b"another key, 32 bytes long......", evil),
        }
        for match, row in bad.items():
            with pytest.raises(ValueError, match=match.strip()):
                env.set_state([0, 1, 2, 3], with_rows(snap, {3: row}), key=KEY)
            assert not marker.exists()
            answers = env.engine._request(SET_STATE, np.array([3], dtype=np.int32), [(KEY, False, row)])
            assert match.strip() in answers[0][1]  # the worker's refusal
            assert not marker.exists()
        same_course(env, twin, seed=2)
        with pytest.raises(ValueError, match="not a snapshot of a Python env"):
            env.set_state([0, 1, 2, 3], with_rows(snap, {3: evil}), trusted=True)
        assert marker.exists()  # what trusted=True means: the pickle ran (so the checks above could have failed)
        same_course(env, twin, seed=3)
    finally:
        env.close()
        twin.close()


def test_a_saved_snapshot_restores_in_a_new_process_with_the_same_key_file(tmp_path, monkeypatch):
    """np.savez of a snapshot, np.load(allow_pickle=False) in a new process whose pool was made anew: the same key
    file (made 0600 with 32 random bytes at first use) verifies it and the envs continue bit-identically; another
    key file, or another key given, is refused; an unsigned copy loads only with trusted=True."""
    key_file = tmp_path / "config" / "snapshot.key"
    monkeypatch.setenv(signing.KEY_FILE_ENV, str(key_file))
    env = pp.make("CartPole-v1", backend="python", num_envs=2, num_threads=1, seed=1)
    env.reset()
    for _ in range(3):
        env.step(np.array([1, 0]))
    snap = env.get_state([0, 1])
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600 and len(key_file.read_bytes()) == 32
    actions = np.random.default_rng(0).integers(0, 2, (30, 2))
    want = np.stack([env.step(a)[0] for a in actions])
    with pytest.raises(ValueError, match="signature that this key does not verify"):
        env.set_state([0, 1], snap, key=b"not the key that signed it, 32b")
    unsigned = with_rows(snap, {i: r[len(signing._TAG) + signing._MAC_BYTES :] for i, r in enumerate(rows(snap))})
    with pytest.raises(ValueError, match="not signed"):
        env.set_state([0, 1], unsigned)
    env.set_state([0, 1], unsigned, trusted=True)
    np.testing.assert_array_equal(np.stack([env.step(a)[0] for a in actions]), want)
    env.close()
    np.savez(tmp_path / "snap.npz", **snap)
    np.savez(tmp_path / "run.npz", actions=actions, want=want)
    code = f"""
        import numpy as np
        import parallel_pool as pp

        env = pp.make("CartPole-v1", backend="python", num_envs=2, num_threads=1, seed=99)
        env.reset()
        with np.load({str(tmp_path / "snap.npz")!r}, allow_pickle=False) as f:
            snap = dict(f)
        with np.load({str(tmp_path / "run.npz")!r}) as f:
            actions, want = f["actions"], f["want"]
        try:
            env.set_state([0, 1], snap)
        except ValueError as e:
            print("refused:", e)
        else:
            got = np.stack([env.step(a)[0] for a in actions])
            print("restored", np.array_equal(got, want))
        env.close()
        """
    out = run_python(code, timeout=120)
    assert out.returncode == 0 and "restored True" in out.stdout, out.stdout + out.stderr[-2000:]
    other = {**os.environ, signing.KEY_FILE_ENV: str(tmp_path / "other.key")}
    out = run_python(code, timeout=120, env=other)
    assert out.returncode == 0 and "refused:" in out.stdout and "signature" in out.stdout, out.stderr[-2000:]


def test_the_key_file_location_and_its_checks(tmp_path, monkeypatch):
    monkeypatch.delenv(signing.KEY_FILE_ENV)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert signing.key_file() == str(tmp_path / "xdg" / "parallel_pool" / "snapshot.key")
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert signing.key_file() == str(tmp_path / "home" / ".config" / "parallel_pool" / "snapshot.key")
    key = signing.snapshot_key()
    assert len(key) == 32 and signing.snapshot_key() == key  # made once, then read
    assert stat.S_IMODE((tmp_path / "home" / ".config" / "parallel_pool").stat().st_mode) == 0o700
    path = tmp_path / "home" / ".config" / "parallel_pool" / "snapshot.key"
    path.chmod(0o666)
    with pytest.raises(ValueError, match="chmod 600"):
        signing.snapshot_key()
    with pytest.raises(ValueError, match="at least 16"):
        signing.snapshot_key(b"short")
    with pytest.raises(TypeError, match="key must be bytes"):
        signing.snapshot_key("a str key of more than 16 characters")


def _bad_fields(snap):
    """(what is wrong, a row with it, signed with KEY, the error's words) for env 2's row."""
    fields = payload(rows(snap)[2])

    def field(i, value):
        f = list(fields)
        f[i] = value
        return resigned(f)

    return [
        ("elapsed a str", field(1, "x"), "elapsed = 'x'"),
        ("elapsed 2**80", field(1, 2**80), "elapsed = 1208925819614629174706176; it must be an int in 0..50"),
        ("elapsed negative", field(1, -1), "elapsed = -1"),
        ("elapsed past the limit", field(1, LIMIT + 1), "elapsed = 51"),
        ("needs_reset a str", field(2, "yes"), "needs_reset = 'yes'"),
        ("seeded None", field(3, None), "seeded = None"),
        ("kwargs a list", field(4, [("length", 5)]), "kwargs = .*a dict with str keys"),
        ("kwargs with an int key", field(4, {1: 5}), "kwargs = .*a dict with str keys"),
        ("kwargs the env refuses", field(4, {"length": 0}), "kwargs {'length': 0} that do not build"),
        ("env not bytes", field(5, "env"), "env = 'env'"),
        ("env a pickled str", field(5, pickle.dumps("env")), "holds a builtins.str"),
        ("env of another class", field(5, cloudpickle.dumps(Other())), "holds a .*Other, where .*Walk"),
        ("env that does not unpickle", field(5, b"\x80\x04cno_such_module\nX\n."), "does not unpickle here"),
        ("agent flags on a gymnasium env", field(6, np.zeros((2, 1), bool)), "agent flags"),
        ("another format", field(0, "parallel_pool.python-env/0"), "not a snapshot of a Python env"),
        ("a field missing", resigned(fields[:6]), "not a snapshot of a Python env"),
        ("not a tuple", resigned(["x"]), "not a snapshot of a Python env"),
    ]


def test_bad_snapshot_fields_are_value_errors_and_change_no_env():
    """Each field of a (signed) payload is checked before any env changes: the parent's checks (types, elapsed in
    0..max_episode_steps, kwargs that build the env) and the worker's (the env's class and spaces are env_fn's).
    The bad row is env 2's (the second worker); envs 0, 1 (the first worker) would take valid rows."""
    env, twin = make_pair()
    try:
        same_course(env, twin, steps=3)
        snap = env.get_state([0, 1, 2, 3], key=KEY)
        same_course(env, twin, steps=4, seed=1)
        for what, row, match in _bad_fields(snap):
            with pytest.raises(ValueError, match=match):
                env.set_state([0, 1, 2, 3], with_rows(snap, {2: row}), key=KEY)
            same_course(env, twin, steps=3, seed=len(what))  # every env as its twin: none changed
        beside = dict(snap, elapsed=snap["elapsed"] + 1)  # the dict's elapsed disagrees with the pickle's
        with pytest.raises(ValueError, match="beside its pickle"):
            env.set_state([0, 1, 2, 3], beside, key=KEY)
        same_course(env, twin, steps=3)
        fields = payload(rows(snap)[2])
        same = with_rows(snap, {2: resigned(fields)})  # the helpers' rows are valid when nothing is wrong
        env.set_state([0, 1, 2, 3], same, key=KEY)
        twin.set_state([0, 1, 2, 3], snap, key=KEY)
        same_course(env, twin)
    finally:
        env.close()
        twin.close()


def test_set_state_is_all_or_nothing_across_workers():
    """One env's row that only its worker can refuse (another env class): the other worker's envs, which it had
    checked, are not restored either. A worker found dead: EnvError naming its envs, and the other envs keep their
    state; resetting the lost envs starts a new worker."""
    env, twin = make_pair()
    try:
        same_course(env, twin, steps=3)
        snap = env.get_state([0, 1, 2, 3], key=KEY)
        same_course(env, twin, steps=5, seed=1)
        fields = payload(rows(snap)[3])
        fields[5] = cloudpickle.dumps(Other())
        with pytest.raises(ValueError, match="Other"):
            env.set_state([0, 1, 2, 3], with_rows(snap, {3: resigned(fields)}), key=KEY)
        same_course(env, twin, seed=2)
        worker = env.engine._procs[1]
        os.kill(worker.process.pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while worker.process.is_alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        with pytest.raises(EnvError, match="lost with their worker") as err:
            env.set_state([0, 1, 2, 3], snap, key=KEY)
        assert err.value.env_ids == [2, 3]
        same_course(env, twin, env_id=[0, 1], seed=3)  # unchanged
        env.reset(env_id=[2, 3])
        env.set_state([0, 1, 2, 3], snap, key=KEY)
        twin.set_state([0, 1, 2, 3], snap, key=KEY)
        same_course(env, twin, seed=4)
    finally:
        env.close()
        twin.close()


# ---- envs whose pickle is not their state: the env's protocol, gymnasium's MuJoCo envs, the refusal --------------


def steps(env, actions) -> list:
    """Each step's (obs, reward, terminated, truncated, info), copied out of the pool's buffers."""
    return [copy.deepcopy(env.step(a)) for a in actions]


def assert_same_steps(got, want):
    assert len(got) == len(want)
    for t, (g, w) in enumerate(zip(got, want)):
        for name, a, b in zip(("obs", "reward", "terminated", "truncated"), g[:4], w[:4]):
            np.testing.assert_array_equal(a, b, err_msg=f"step {t}: {name}")
        same_info(g[4], w[4], f"step {t}: info")


def same_info(got, want, where):
    if isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), f"{where}: keys"
        for key in want:
            same_info(got[key], want[key], f"{where}[{key!r}]")
    else:
        np.testing.assert_array_equal(got, want, err_msg=where)


def continues_alike(make, actions, at=4):
    """A pool stepped `at` steps, snapshot, stepped on through `actions`; then restored, in itself and in a new pool
    of another seed (whose envs are built anew), each steps the same actions and gives the same results."""
    env, twin = make(3), make(77)
    try:
        env.reset()
        twin.reset()
        steps(env, actions[:at])
        snap = env.get_state(range(env.num_envs), key=KEY)
        want = steps(env, actions[at:])
        assert any(w[2].any() or w[3].any() for w in want), "the episodes should end (and reset) in the window"
        env.set_state(range(env.num_envs), snap, key=KEY)
        assert_same_steps(steps(env, actions[at:]), want)
        twin.set_state(range(env.num_envs), snap, key=KEY)
        assert_same_steps(steps(twin, actions[at:]), want)
    finally:
        env.close()
        twin.close()


def mujoco_ant(**kwargs):
    return gym.make("Ant-v5", max_episode_steps=9, **kwargs)


@pytest.mark.parametrize("task", ["HalfCheetah-v5", "Ant-v5"])
def test_a_python_mujoco_env_continues_bit_identically_from_its_snapshot(task):
    """gymnasium's MuJoCo envs (EzPickle: their pickle is a new env) are captured by their whole mjData (Ant's
    reward reads xpos from before the last substep), np_random and wrappers (TimeLimit's count, OrderEnforcing):
    observations, rewards, flags and infos after a restore equal the first run's, across a time-limit reset."""
    pytest.importorskip("mujoco")
    kw = dict(num_envs=2, num_threads=2)
    if task == "HalfCheetah-v5":  # a registered id, backend python; gymnasium's TimeLimit of 9 ends the episodes

        def make(seed):
            return pp.make(task, backend="python", max_episode_steps=9, seed=seed, **kw)

    else:  # env_fn, with the pool's limit above the env's own TimeLimit

        def make(seed):
            return pp.make(env_fn=mujoco_ant, max_episode_steps=LIMIT, seed=seed, **kw)

    shape = (20, 2, *pp.make_spec(task, backend="python").action_space.shape)
    continues_alike(make, np.random.default_rng(1).uniform(-1, 1, shape).astype(np.float32))


class Handle:
    """A simulator's handle that does not pickle (its lock stands for a C library's pointer)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.pos = self.vel = 0.0


class Declared(Walk):
    """Walk, its state in a Handle: snapshots by the env's protocol. Its own set_state means something else (as
    MuJoCo's set_state(qpos, qvel)): the pool never calls it."""

    def __init__(self, length: int = 9):
        super().__init__(length)
        self.sim = Handle()

    def reset(self, *, seed=None, options=None):
        obs, info = super().reset(seed=seed)
        self.sim.pos, self.sim.vel = self.pos, 0.0
        return obs, info

    def step(self, action):
        self.sim.vel = 0.5 * self.sim.vel + float(self.np_random.normal(0, 0.3))
        self.pos = self.sim.pos = self.sim.pos + int(action) - 1 + self.sim.vel
        self.t += 1
        obs = np.array([self.pos, self.t], np.float32)
        return obs, float(int(action) - 1), abs(self.pos) > 3, self.t >= self.length, {"vel": self.sim.vel}

    def set_state(self, qpos, qvel):
        raise AssertionError("not the pool's to call")

    def parallel_pool_get_state(self):
        return self.sim.pos, self.sim.vel, self.pos, self.t

    def parallel_pool_set_state(self, state):
        if not np.isfinite(state[0]):
            raise ValueError(f"a position of {state[0]}")
        self.sim.pos, self.sim.vel, self.pos, self.t = state


def declared(length: int = 9):
    return gym.wrappers.OrderEnforcing(gym.wrappers.TimeLimit(Declared(length), 6))


def test_an_env_with_the_snapshot_protocol_continues_bit_identically():
    """An env that does not pickle (a Handle) but declares parallel_pool_get_state / parallel_pool_set_state is
    restored into an env built anew, with its np_random and its wrappers' state (TimeLimit's count)."""
    cloudpickle.dumps(Walk())  # Walk pickles: the Handle is what stops Declared's pickle
    with pytest.raises(TypeError, match="lock"):
        cloudpickle.dumps(Declared())

    def make(seed):
        return pp.make(env_fn=declared, num_envs=4, num_threads=2, seed=seed, max_episode_steps=LIMIT)

    continues_alike(make, np.random.default_rng(2).integers(0, 3, (24, 4)))


def test_a_state_the_env_refuses_restores_no_env_of_any_worker():
    """parallel_pool_set_state raises in env 3's worker (a state it cannot be in): ValueError naming the env's
    words, and no env of either worker changed."""
    from parallel_pool import env_state

    env, twin = (pp.make(env_fn=declared, num_envs=4, num_threads=2, seed=3, max_episode_steps=LIMIT) for _ in "ab")
    try:
        env.reset()
        twin.reset()
        snap = env.get_state([0, 1, 2, 3], key=KEY)
        same_course(env, twin, steps=3)
        bad = declared()
        bad.reset(seed=0)
        bad.unwrapped.sim.pos = float("nan")
        fields = payload(rows(snap)[3])
        fields[5] = env_state.capture(bad)
        with pytest.raises(
            ValueError,
            match=r"env 3 cannot be restored: .*parallel_pool_set_state\(state\) raised ValueError: a position",
        ):
            env.set_state([0, 1, 2, 3], with_rows(snap, {3: resigned(fields)}), key=KEY)
        same_course(env, twin, seed=1)
    finally:
        env.close()
        twin.close()


def test_what_cannot_be_captured_is_named():
    """The refusal names the env class and the attribute inside it: a Box2D world (EzPickle would pickle the
    constructor's arguments), a lock in a plain env, a lock in the protocol's value, half a protocol."""
    from parallel_pool import env_state

    class Locked(Walk):
        def __init__(self):
            super().__init__()
            self.parts = {"io": [1, Handle()]}

    class Leaky(Declared):
        def parallel_pool_get_state(self):
            return {"sim": self.sim}

    class Half(Walk):
        def parallel_pool_get_state(self):
            return 0

    cases = [
        (Locked, r"Locked cannot be pickled: Locked.parts\['io'\]\[1\].lock \(a _thread.lock\)"),
        (Leaky, r"Leaky.parallel_pool_get_state\(\)\['sim'\].lock \(a _thread.lock\) cannot be pickled"),
        (Half, "Half defines parallel_pool_get_state but not parallel_pool_set_state"),
    ]
    for cls, match in cases:
        with pytest.raises(env_state.NoSnapshot, match=match):
            env_state.capture(gym.wrappers.TimeLimit(cls(), 5))
    pytest.importorskip("Box2D")
    env = pp.make("LunarLander-v3", backend="python", num_envs=1)
    env.reset()
    with pytest.raises(RuntimeError, match=r"LunarLander pickles its constructor's .*LunarLander.world \(a Box2D"):
        env.get_state([0])
    env.close()


def test_a_mujoco_snapshot_of_another_model_is_refused():
    """A MuJoCo env whose model differs from the one env_fn builds (an env that changed it as it ran): mj_copyData
    would read past its arrays, so the restore is refused and the env built for it closed."""
    pytest.importorskip("mujoco")
    from parallel_pool import env_state

    env = gym.make("HalfCheetah-v5")
    env.reset(seed=0)
    captured = pickle.loads(env_state.capture(env))
    built = []

    def heavier():
        e = gym.make("HalfCheetah-v5")
        e.unwrapped.model.body_mass[1] += 1.0
        built.append(e)
        return e

    with pytest.raises(env_state.NoSnapshot, match="another MjModel"):
        env_state.restore(captured, heavier)
    restored = env_state.restore(captured, lambda: gym.make("HalfCheetah-v5"))
    np.testing.assert_array_equal(restored.unwrapped.data.qpos, env.unwrapped.data.qpos)
