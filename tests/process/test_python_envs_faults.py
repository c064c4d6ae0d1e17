"""Python-env pools (parallel_pool.process_engine) under fork, Ctrl-C and worker loss, and the values their envs
return: each fork / Ctrl-C case runs in a fresh interpreter with a timeout, so that a hang fails instead of hanging."""

from __future__ import annotations

import os
import threading
import time
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from pyproc import run_python  # noqa: E402

import parallel_pool as pp

# The child interpreter's envs and helpers. Ticker counts its steps (obs = [steps]); `delay` s per step and reset,
# `pickle_delay` s per pickling and unpickling (a slow get_state / set_state), `ballast` bytes carried in its
# snapshot (a large answer), `build_delay` s to build.
PRELUDE = """
import os, random, signal, sys, threading, time
import numpy as np
import gymnasium as gym
from gymnasium import spaces
import parallel_pool as pp

class Ticker(gym.Env):
    def __init__(self, delay=0.0, pickle_delay=0.0, ballast=0, build_delay=0.0):
        time.sleep(build_delay)
        self.observation_space = spaces.Box(0, 1e9, (1,), np.float64)
        self.action_space = spaces.Discrete(2)
        self.delay, self.pickle_delay = delay, pickle_delay
        self.ballast = np.ones(ballast, np.uint8)
        self.t = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        time.sleep(self.delay)
        self.t = 0
        return np.array([self.t], np.float64), {}

    def step(self, action):
        time.sleep(self.delay)
        self.t += 1
        return np.array([self.t], np.float64), 0.0, False, False, {}

    def __getstate__(self):
        time.sleep(self.pickle_delay)
        return self.__dict__

    def __setstate__(self, state):
        time.sleep(state["pickle_delay"])
        self.__dict__.update(state)

# One SIGINT per interrupted() call, at `after` s, only while the call runs: the handler raises once per signal
# sent, and only while armed, so a KeyboardInterrupt can only come out of the call.
lock = threading.Lock()
armed = inside = False

def handler(signum, frame):
    global armed
    if armed:
        armed = False
        raise KeyboardInterrupt

signal.signal(signal.SIGINT, handler)

def fire():
    global armed
    with lock:
        if inside:
            armed = True
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

def interrupted(call, after=None, trigger=None):
    '''call() with a SIGINT `after` s in (or sent by `trigger`, run in a thread): (True, None) if it raised
    KeyboardInterrupt, else (False, its result).'''
    global inside
    inside = True
    timer = threading.Timer(after, fire) if trigger is None else threading.Thread(target=trigger)
    timer.start()
    try:
        try:
            result = call()
        finally:
            with lock:
                inside = False
        hit = False
    except KeyboardInterrupt:
        hit, result = True, None
    timer.join()
    return hit, result

def elapsed(env, ids):
    return env.get_state(ids)["elapsed"].tolist()
"""


def _run(body: str, timeout: float = 60) -> str:
    r = run_python(PRELUDE + body, timeout=timeout)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "Traceback" not in out, out
    return out


# ---- fork ------------------------------------------------------------------------------------------------------

FORK = """
env = pp.make(env_fn=Ticker, num_envs=2, num_threads=2)
env.reset(seed=0)
env.step(np.ones(2, np.int64))
pid = os.fork()
if pid == 0:
    try:
        env.step(np.ones(2, np.int64))
        print("CHILD-USED-PARENT-POOL")
    except RuntimeError as e:
        assert "parent process" in str(e), e
        print("CHILD-REFUSED")
    own = pp.make(env_fn=Ticker, num_envs=2, num_threads=2)
    own.reset(seed=0)
    print("CHILD-OWN-POOL", own.step(np.ones(2, np.int64))[0][:, 0].tolist())
    env.close()  # leaves the parent's pool alone
    own.close()
    sys.stdout.flush()
    {child_exit}
else:
    _, status = os.waitpid(pid, 0)
    print("CHILD-STATUS", os.waitstatus_to_exitcode(status))
    print("PARENT", env.step(np.ones(2, np.int64))[0][:, 0].tolist())
    env.close()
"""


@pytest.mark.parametrize("child_exit", ["sys.exit(0)", "os._exit(0)", "pass"])
def test_fork_child_leaves_the_parents_python_pool_alone(child_exit):
    """The child's exit used to SIGTERM the parent's workers (multiprocessing's exit hook), and the child could not
    make a pool (the parent's forkserver is not its child)."""
    out = _run(FORK.format(child_exit=child_exit))
    assert "CHILD-REFUSED" in out and "CHILD-USED-PARENT-POOL" not in out, out
    assert "CHILD-OWN-POOL [1.0, 1.0]" in out and "CHILD-STATUS 0" in out, out
    assert "PARENT [2.0, 2.0]" in out, out


# ---- Ctrl-C ------------------------------------------------------------------------------------------------------

CTRL_C = {
    # the step in flight finishes; recv() returns it, and the pool steps on
    "step": """
env = pp.make(env_fn=lambda: Ticker(delay=0.3), num_envs=2, num_threads=2)
env.reset(seed=0)
t = 0
for after in (0.01, 0.1, 0.25, 0.29, 0.31):
    hit, out = interrupted(lambda: env.step(np.ones(2, np.int64)), after)
    out = env.recv() if hit else out
    t += 1
    assert out[0][:, 0].tolist() == [t, t], (after, out[0])
print("DONE")
""",
    "reset": """
env = pp.make(env_fn=lambda: Ticker(delay=0.3), num_envs=2, num_threads=2)
env.reset(seed=0)
env.step(np.ones(2, np.int64))
hit, out = interrupted(lambda: env.reset(seed=0), 0.1)
assert hit
obs, _, _, _, info = env.recv()  # the reset in flight
assert obs[:, 0].tolist() == [0, 0] and info["elapsed_step"].tolist() == [0, 0], (obs, info)
assert env.step(np.ones(2, np.int64))[0][:, 0].tolist() == [1, 1]
print("DONE")
""",
    # an async pool's recv waiting on a slow env: the next recv returns the batch
    "recv": """
env = pp.make(env_fn=lambda: Ticker(delay=0.3), num_envs=4, batch_size=2, num_threads=2)
env.async_reset()
seen = []
for _ in range(2):
    seen += env.recv()[4]["env_id"].tolist()
assert sorted(seen) == [0, 1, 2, 3], seen
env.send(np.ones(4, np.int64), np.arange(4))
got = []
while len(got) < 4:
    hit, out = interrupted(env.recv, 0.1)
    if not hit:
        assert out[0][:, 0].tolist() == [1, 1], out
        got += out[4]["env_id"].tolist()
assert sorted(got) == [0, 1, 2, 3], got
print("DONE")
""",
    # a slow get_state: its late answer used to be taken as the next get_state's (an older snapshot)
    "get_state": """
env = pp.make(env_fn=lambda: Ticker(pickle_delay=0.5), num_envs=2, num_threads=2)
env.reset(seed=0)
hit, _ = interrupted(lambda: env.get_state([0, 1]), 0.1)
assert hit
env.step(np.ones(2, np.int64))
assert elapsed(env, [0, 1]) == [1, 1], elapsed(env, [0, 1])
print("DONE")
""",
    # set_state is never cut short (no env half-restored): it finishes, then the KeyboardInterrupt comes
    "set_state": """
env = pp.make(env_fn=lambda: Ticker(pickle_delay=0.3), num_envs=2, num_threads=2)
env.reset(seed=0)
snap = env.get_state([0, 1])
for _ in range(3):
    env.step(np.ones(2, np.int64))
hit, _ = interrupted(lambda: env.set_state([0, 1], snap), 0.1)
assert hit
assert env.step(np.ones(2, np.int64))[0][:, 0].tolist() == [1, 1]
assert elapsed(env, [0, 1]) == [1, 1], elapsed(env, [0, 1])
print("DONE")
""",
    # a reset that starts a new worker for a dead one's envs, interrupted while the worker builds them: the next
    # reset starts another (the first one's "ready" used to be read as the reset's answer)
    "restart": """
parent = os.getpid()
env = pp.make(env_fn=lambda: Ticker(build_delay=0.0 if os.getpid() == parent else 0.6), num_envs=2, num_threads=2)
env.reset(seed=0)
os.kill(env.engine.pids[1], signal.SIGKILL)
try:
    env.step(np.ones(2, np.int64))
    raise AssertionError("a step with a killed worker returned")
except pp.EnvError as e:
    assert e.env_ids == [1], e
hit, _ = interrupted(lambda: env.reset(seed=0), 0.2)
assert hit
obs, _ = env.reset(seed=0)
assert obs[:, 0].tolist() == [0, 0]
assert env.step(np.ones(2, np.int64))[0][:, 0].tolist() == [1, 1]
print("DONE")
""",
    # Ctrl-C while a large answer (48 MB a worker) is half read: the pipe used to lose its framing ("recv() would
    # wait forever", then "worker died (still running)"). Once the main thread has read 4 MB of the answers, both
    # workers are stopped: the parent is left blocked in the middle of reading an answer, where the SIGINT comes; the
    # answer is read whole once the workers go on. (Stopping is timed by the main thread's own read count, which a
    # busy machine cannot blur; a round where the call finished before the stop is not counted.)
    "large_reply": """
env = pp.make(env_fn=lambda: Ticker(ballast=48 << 20), num_envs=2, num_threads=2)
env.reset(seed=0)
workers = env.engine.pids
main_io = f"/proc/self/task/{threading.main_thread().native_id}/io"

def read_by_main():
    with open(main_io) as f:
        return int(f.readline().split()[1])  # rchar

mid_read = []

def half_read(base):
    while read_by_main() - base < 4 << 20:
        time.sleep(0.0002)
    for w in workers:
        os.kill(w, signal.SIGSTOP)
    time.sleep(0.2)  # the parent drains the pipes, then blocks
    if read_by_main() - base < 92 << 20:
        mid_read.append(True)
        fire()
        time.sleep(0.3)
    for w in workers:
        os.kill(w, signal.SIGCONT)

t = 0
for _ in range(10):
    base = read_by_main()
    rounds = len(mid_read)
    hit, _ = interrupted(lambda: env.get_state([0, 1]), trigger=lambda: half_read(base))
    assert hit == (len(mid_read) > rounds), (hit, mid_read)
    t += 1
    assert env.step(np.ones(2, np.int64))[0][:, 0].tolist() == [t, t]
    assert elapsed(env, [0, 1]) == [t, t]
    if len(mid_read) == 3:
        break
assert len(mid_read) == 3, f"the answer was read whole before the stop in {t - len(mid_read)} of {t} calls"
print("DONE")
""",
}


@pytest.mark.parametrize("call", list(CTRL_C))
def test_ctrl_c_in_a_python_pool_call_leaves_the_pool_whole(call):
    """Ctrl-C in any call of a Python-env pool: the next calls work and return current results."""
    out = _run(CTRL_C[call], timeout=90)
    assert "DONE" in out, out


# ---- worker loss and close() during a call ------------------------------------------------------------------------


class Steps(gym.Env):
    """obs = [steps since reset]; `delay` s per step."""

    def __init__(self, delay: float = 0.0):
        self.observation_space = spaces.Box(0, 1e9, (1,), np.float64)
        self.action_space = spaces.Discrete(2)
        self.delay, self.t = delay, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.array([self.t], np.float64), {}

    def step(self, action):
        time.sleep(self.delay)
        self.t += 1
        return np.array([self.t], np.float64), 0.0, False, False, {}


def test_get_state_after_a_worker_died_mid_request_is_current():
    """A worker found dead during get_state: the other worker's answer to that call used to be taken as the next
    get_state's (a snapshot from before the steps in between, which set_state would silently rewind to)."""
    env = pp.make(env_fn=Steps, num_envs=4, num_threads=2)
    try:
        env.reset(seed=0)
        os.kill(env.engine.pids[1], 9)
        time.sleep(0.2)
        with pytest.raises(RuntimeError, match="died"):
            env.get_state([0, 2])
        env.reset(seed=0)  # a new worker for envs 2, 3
        env.step(np.ones(4, np.int64))
        assert env.get_state([0])["elapsed"].tolist() == [1]
        assert env.get_state([0, 2])["elapsed"].tolist() == [1, 1]
    finally:
        env.close()


@pytest.mark.parametrize("batch_size", [0, 1])
def test_close_from_another_thread_makes_a_waiting_recv_raise_closed(batch_size):
    """As the C++ pools: the closed-pool RuntimeError, not an EnvError saying the envs were lost."""
    env = pp.make(env_fn=lambda: Steps(delay=3.0), num_envs=2, num_threads=2, batch_size=batch_size)
    if batch_size:
        env.async_reset()
        env.recv(), env.recv()
        env.send(np.ones(1, np.int64), np.array([0]))
    else:
        env.reset(seed=0)
        env.send(np.ones(2, np.int64))
    closer = threading.Timer(0.3, env.close)
    closer.start()
    with pytest.raises(RuntimeError, match="closed") as raised:
        env.recv()
    closer.join()
    assert not isinstance(raised.value, pp.EnvError), raised.value


def test_python_pools_made_from_threads_at_once_leave___main___as_it_was():
    """A worker start hides __main__'s __file__ and __spec__ from multiprocessing; starts from several threads at
    once used to put back what another start had hidden (__spec__ left None)."""
    out = run_python(
        """
        import importlib.machinery, sys, threading
        import __main__
        import gymnasium as gym
        import parallel_pool as pp

        spec = importlib.machinery.ModuleSpec("my_script", None)
        __main__.__spec__, __main__.__file__ = spec, "/somewhere/my_script.py"
        for _ in range(3):
            pools = []
            threads = [
                threading.Thread(target=lambda: pools.append(pp.make("CartPole-v1", backend="python", num_envs=2)))
                for _ in range(4)
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert len(pools) == 4
            for p in pools:
                p.close()
            print("MAIN", __main__.__spec__ is spec, __main__.__file__, flush=True)
        """,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.split("\n")[:3] == ["MAIN True /somewhere/my_script.py"] * 3, out.stdout + out.stderr


# ---- bounds, an env's close(), shared memory ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("num_envs", 2**31, r"num_envs must be in \[1, 1048576\], got 2147483648"),
        ("num_envs", 2**20 + 1, r"num_envs must be in \[1, 1048576\]"),
        ("num_threads", 4097, r"num_threads must be in \[0, 4096\] \(0 = automatic\), got 4097"),
    ],
)
def test_python_pool_bounds_are_the_cpp_pools(key, value, message):
    with pytest.raises(ValueError, match=message):
        pp.make("CartPole-v1", backend="python", **{"num_envs": 2, key: value})
    if value < 2**31:  # (the C++ pools' message for a value beyond int32 names int32's range)
        with pytest.raises(ValueError, match=message):
            pp.make("CartPole-v1", **{"num_envs": 2, key: value})


class BadClose(Steps):
    def close(self):
        raise OSError("the display went away")


def test_an_env_whose_close_raises_does_not_fail_make():
    with pytest.warns(RuntimeWarning, match="BadClose.close.. raised OSError: the display went away"):
        env = pp.make(env_fn=BadClose, num_envs=2, num_threads=1)
    try:
        env.reset(seed=0)
        assert env.step(np.ones(2, np.int64))[0][:, 0].tolist() == [1, 1]
    finally:
        env.close()


def test_shared_memory_is_named_after_its_process_and_private():
    env = pp.make(env_fn=Steps, num_envs=2, num_threads=1)
    name = env.engine._shm.name
    path = "/dev/shm/" + name
    try:
        assert name.startswith(f"pp_{os.getpid()}_"), name
        assert os.stat(path).st_mode & 0o777 == 0o600
    finally:
        env.close()
    assert not os.path.exists(path)


# ---- observation and info values ---------------------------------------------------------------------------------


class Emits(gym.Env):
    """Returns `obs` (and `info`) from step(); its reset returns a valid observation."""

    def __init__(self, space: str = "box", obs=None, info=None):
        self.observation_space = {
            "box": spaces.Box(0, 10, (3,), np.float32),
            "discrete": spaces.Discrete(5),
            "uint8": spaces.Box(0, 255, (2,), np.uint8),
            "dict": spaces.Dict({"pos": spaces.Box(-1, 1, (2,), np.float64), "n": spaces.Discrete(4)}),
        }[space]
        self.action_space = spaces.Discrete(2)
        self.obs, self.info = obs, info

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.observation_space.seed(0)
        return self.observation_space.sample(), {"score": 1.5, "count": 3}

    def step(self, action):
        info = {"score": 1.5, "count": 3} if self.info is None else self.info
        return self.obs, 0.0, False, False, info


@pytest.mark.parametrize(
    ("info", "key", "want"),
    [({"score": 1.5, "count": 2.5}, "count", [2.5, 2.5]), ({"score": None, "count": 2}, "score", [None, None])],
)
def test_an_info_value_that_does_not_fit_its_column_is_carried_as_it_is(info, key, want):
    """An info value of another dtype than its typed column's (found at make) is not an error nor cut (2.5 as 2):
    the batch's array is widened, or an object array."""
    env = pp.make(env_fn=lambda: Emits("box", np.ones(3, np.float32), info), num_envs=2, num_threads=1)
    try:
        env.reset(seed=0)
        *_, got = env.step(np.ones(2, np.int64))
        assert got[key].tolist() == want and got[f"_{key}"].all()
    finally:
        env.close()


@pytest.mark.parametrize(
    ("space", "obs", "info", "message"),
    [
        ("box", 5.0, None, r"env 0: observation 'obs' has shape \(\) \(5.0\); expected float32 of shape \(3,\)"),
        ("box", None, None, r"env 0: observation 'obs' has shape \(\) \(None\)"),
        ("box", [1, 2], None, r"has shape \(2,\) \(\[1, 2\]\); expected float32 of shape \(3,\)"),
        ("box", np.array(["a", "b", "c"]), None, r"observation 'obs' is <U1"),
        ("discrete", 1.7, None, r"observation 'obs' is float64 \(1.7\); expected int64 of shape \(\)"),
        ("discrete", None, None, r"observation 'obs' is object \(None\)"),
        ("uint8", np.array([300, 1]), None, r"observation 'obs' has 300, outside uint8's range \[0, 255\]"),
        ("uint8", np.array([-1, 1], np.int8), None, r"has -1, outside uint8's range"),
        ("dict", {"pos": np.zeros(2), "n": 2.5}, None, r"observation 'n' is float64 \(2.5\); expected int64"),
    ],
)
def test_a_value_that_does_not_fit_its_array_is_an_env_error(space, obs, info, message):
    """Written silently before (a scalar broadcast to [5, 5, 5], None as nan, 1.7 as 1, 300 as 44): refused where
    gymnasium's SyncVectorEnv refuses, and where numpy would wrap an integer around."""
    env = pp.make(env_fn=lambda: Emits(space, obs, info), num_envs=2, num_threads=1)
    try:
        env.reset(seed=0)
        with pytest.raises(pp.EnvError, match=message) as raised:
            env.step(np.ones(2, np.int64))
        assert raised.value.env_ids == [0, 1]
        assert "Traceback" not in str(raised.value)  # the message says it all
        env.reset(seed=0)  # the pool goes on
    finally:
        env.close()


@pytest.mark.parametrize(
    ("space", "obs"),
    [
        ("box", [1, 2, 3]),  # a list of ints: numbers of the right shape
        ("box", np.ones(3, np.float64)),  # float64 into float32, as SyncVectorEnv casts it
        ("box", np.ones(3, np.int64)),
        ("discrete", 3),
        ("discrete", np.int32(3)),
        ("uint8", np.array([255, 0], np.int64)),  # another integer dtype whose values fit
        ("uint8", [True, False]),
        ("dict", {"pos": [0.5, -0.5], "n": 3}),
    ],
)
def test_values_that_fit_their_array_are_written(space, obs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = pp.make(env_fn=lambda: Emits(space, obs), num_envs=2, num_threads=1)
    try:
        env.reset(seed=0)
        got = env.step(np.ones(2, np.int64))[0]
        expected = {k: np.asarray(v) for k, v in obs.items()} if isinstance(obs, dict) else np.asarray(obs)
        for row in range(2):
            if isinstance(obs, dict):
                for k, v in expected.items():
                    np.testing.assert_array_equal(got[k][row], v)
            else:
                np.testing.assert_array_equal(got[row], expected)
    finally:
        env.close()
