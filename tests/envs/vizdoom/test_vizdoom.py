"""ViZDoom family: layout against EnvPool, step-by-step alignment against vizdoom's own DoomGame, determinism,
config validation, and the engine processes' lifecycle (close, a killed engine, a killed parent)."""

from __future__ import annotations

import glob
import os
import signal
import stat
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

import parallel_pool as pp

if "Basic-v1" not in pp.list_all_envs():
    pytest.skip("the vizdoom family is not built", allow_module_level=True)
pytest.importorskip("vizdoom")
pytest.importorskip("cv2")

import pyproc  # noqa: E402
from pyproc import IMPORT_ROOT, run_python  # noqa: E402
from vizdoom_reference import INFO_VARIABLES, LockstepReference, ReferenceDoom  # noqa: E402

# what a child interpreter puts on sys.path to import this module: its folder and the tests' support modules
TEST_PATHS = [os.path.dirname(os.path.abspath(__file__)), os.path.dirname(os.path.abspath(pyproc.__file__))]


def engine_pids(parent: int | None = None) -> set[int]:
    """pids of the ViZDoom engine processes whose parent is `parent` (default: this process)."""
    parent = os.getpid() if parent is None else parent
    pids = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        if comm == "vizdoom" and ppid == parent:
            pids.add(int(entry))
    return pids


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


def wait_until(cond, limit: float = 20.0) -> bool:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def random_buttons(rng: np.random.Generator, n: int, steps: int) -> np.ndarray:
    return rng.integers(0, 2, size=(steps, n)).astype(np.float64)


# ---------------------------------------------------------------------------------------------------------------
# layout


@pytest.mark.parametrize("task_id", ["Basic-v1", "D1Basic-v1"])
def test_layout_matches_envpool(task_id):
    envpool = pytest.importorskip("envpool")
    ours = pp.make_spec(task_id)
    theirs = envpool.make_spec(task_id)
    assert ours.observation_space.shape == theirs.observation_space.shape
    assert ours.observation_space.dtype == theirs.observation_space.dtype
    their_info = {k.split(":", 1)[1] for k in theirs.state_array_spec if k.startswith("info:")}
    assert set(INFO_VARIABLES) <= their_info
    assert ours.config.max_episode_steps == theirs.config.max_episode_steps == 525
    assert ours.action_space.shape == theirs.action_space.shape


def test_combined_action_set_matches_envpool():
    envpool = pytest.importorskip("envpool")
    deltas = {"TURN_LEFT_RIGHT_DELTA": (5, -10.0, 10.0), "LOOK_UP_DOWN_DELTA": (3, -5.0, 5.0)}
    for task_id, kwargs in [
        ("D3Battle-v1", {}),
        ("DeadlyCorridor-v1", {"force_speed": True}),
        ("Cig-v1", {"delta_button_config": deltas}),
    ]:
        ours = pp.make_spec(task_id, use_combined_action=True, **kwargs).action_space
        theirs = envpool.make_spec(task_id, use_combined_action=True, **kwargs).action_space
        assert ours.n == theirs.n, task_id


def test_all_ids_registered():
    expected = {
        "D1Basic-v1", "D2Navigation-v1", "D3Battle-v1", "D4Battle2-v1", "Basic-v1", "BasicAudio-v1",
        "BasicNotifications-v1", "Cig-v1", "DeadlyCorridor-v1", "Deathmatch-v1", "DefendTheCenter-v1",
        "DefendTheLine-v1", "HealthGathering-v1", "HealthGatheringSupreme-v1", "MultiDuel-v1", "MyWayHome-v1",
        "PredictPosition-v1", "RocketBasic-v1", "SimplerBasic-v1", "TakeCover-v1", "VizdoomCustom-v1",
    }  # fmt: skip
    assert expected <= set(pp.list_all_envs())
    for task_id in sorted(expected - {"VizdoomCustom-v1"}):
        spec = pp.make_spec(task_id)  # reads the scenario .cfg: every file is where the id says
        assert spec.observation_space.shape[-2:] == (84, 84), task_id


def test_every_front_end():
    """gymnasium, gym and dm_env front-ends give the same first steps (same seed and actions)."""
    acts = random_buttons(np.random.default_rng(1), 3, 5)
    obs = {}
    for env_type in ("gymnasium", "gym", "dm"):
        env = pp.make("Basic-v1", env_type=env_type, num_envs=1, seed=5)
        try:
            env.reset()
            out = [env.step(a[None]) for a in acts]
            obs[env_type] = [o.observation.obs if env_type == "dm" else o[0] for o in out]
        finally:
            env.close()
    for env_type in ("gym", "dm"):
        for a, b in zip(obs["gymnasium"], obs[env_type]):
            np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------------------------------------------------------
# alignment against vizdoom's DoomGame


def run_aligned(task_id: str, steps: int, seed: int = 7, **kwargs) -> None:
    env = pp.make(task_id, env_type="gymnasium", num_envs=1, seed=seed, **kwargs)
    ref = ReferenceDoom(env.spec.config._asdict(), seed)
    try:
        n = env.single_action_space.shape[0]
        max_steps = env.spec.config.max_episode_steps
        actions = random_buttons(np.random.default_rng(seed), n, steps)
        obs, info = env.reset()
        r_obs, r_info, _ = ref.reset()
        np.testing.assert_array_equal(obs[0], r_obs)
        for key in INFO_VARIABLES:
            assert info[key][0] == r_info[key], key
        episode_steps = 0
        for t in range(steps):
            obs, rew, term, trunc, info = env.step(actions[t][None])
            r_obs, r_info, r_rew, r_done = ref.step(list(actions[t]))
            np.testing.assert_array_equal(obs[0], r_obs, err_msg=f"{task_id} step {t}")
            assert rew[0] == np.float32(r_rew), (task_id, t)
            assert bool(term[0]) == r_done, (task_id, t)
            for key in INFO_VARIABLES:
                assert info[key][0] == r_info[key], (task_id, t, key)
            episode_steps += 1
            assert bool(trunc[0]) == (not r_done and episode_steps == max_steps), (task_id, t)
            if r_done or trunc[0]:
                episode_steps = 0
                obs = env.step(actions[t][None])[0]  # next-step reset
                r_obs, r_info, _ = ref.new_episode()
                np.testing.assert_array_equal(obs[0], r_obs)
    finally:
        ref.close()
        env.close()


def test_alignment_basic():
    # Basic ends when the monster dies: shooting a lot ends episodes, so this covers the reset path too
    run_aligned("Basic-v1", 60, max_episode_steps=40)


@pytest.mark.parametrize("task_id", ["DefendTheCenter-v1", "HealthGathering-v1", "D3Battle-v1"])
def test_alignment(task_id):
    run_aligned(task_id, 40)


def test_alignment_native_size_and_one_frame():
    """Observations at the screen's own size (no resize: cv2.resize to the same size copies) and no stacking."""
    run_aligned("Basic-v1", 20, img_height=240, img_width=320, stack_num=1)


# ---------------------------------------------------------------------------------------------------------------
# determinism


def trajectory(num_threads: int, seed: int) -> list[np.ndarray]:
    env = pp.make("DefendTheCenter-v1", env_type="gymnasium", num_envs=2, num_threads=num_threads, seed=seed)
    try:
        rng = np.random.default_rng(0)
        frames = [env.reset()[0]]
        for _ in range(15):
            obs, rew, *_ = env.step(rng.integers(0, 2, size=(2, 3)).astype(np.float64))
            frames += [obs, rew]
        return frames
    finally:
        env.close()


def test_determinism_independent_of_threads():
    a, b = trajectory(1, 3), trajectory(2, 3)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    # env 0 and env 1 have different seeds: their monsters differ at some point
    assert any(not np.array_equal(x[0], x[1]) for x in a[1::2])


def episode(env, reset_seed: int | None, steps: int = 8) -> list[np.ndarray]:
    """Frames and rewards of one Basic-v1 episode start (fixed buttons) after reset(seed=reset_seed)."""
    rng = np.random.default_rng(0)
    frames = [env.reset(seed=reset_seed)[0]]
    for _ in range(steps):
        obs, rew, *_ = env.step(rng.integers(0, 2, size=(1, 3)).astype(np.float64))
        frames += [obs, rew]
    return frames


def test_reset_seed_reseeds_the_engine():
    """reset(seed=s) replays the first episode of an env made with seed s, whatever the env did before."""
    fresh = pp.make("Basic-v1", num_envs=1, seed=5)
    used = pp.make("Basic-v1", num_envs=1, seed=100)
    try:
        want = episode(fresh, None)
        other = episode(used, None)  # seed 100: the monster stands elsewhere
        assert any(not np.array_equal(x, y) for x, y in zip(want, other))
        for _ in range(2):  # later, and again: the same episode each time
            got = episode(used, 5)
            for x, y in zip(want, got):
                np.testing.assert_array_equal(x, y)
        # plain resets go on with the engine's stream: the next episode is not the seeded one again
        assert any(not np.array_equal(x, y) for x, y in zip(want, episode(used, None)))
    finally:
        fresh.close()
        used.close()


# ---------------------------------------------------------------------------------------------------------------
# config


def test_reward_config_dict_and_errors():
    env = pp.make("Basic-v1", num_envs=1, reward_config={"AMMO2": (0.0, 1.0)}, selected_weapon_reward_config={}, seed=1)
    try:
        _, info = env.reset()
        # only AMMO2 is rewarded: a decrease by d gives -(-d) * 1 = d; ATTACK fires bullets
        total = 0.0
        for _ in range(6):
            _, rew, _, _, last = env.step(np.array([[0.0, 0.0, 1.0]]))
            total += float(rew[0])
        assert total == info["AMMO2"][0] - last["AMMO2"][0] > 0
    finally:
        env.close()
    with pytest.raises(ValueError, match="reward_config.*NOPE"):
        pp.make_spec("Basic-v1", reward_config={"NOPE": (1, 2)})
    with pytest.raises(ValueError, match="reward_config.*has 1 values"):
        pp.make_spec("Basic-v1", reward_config="KILLCOUNT=1")
    with pytest.raises(ValueError, match="delta_button_config.*ATTACK.*not a delta button"):
        pp.make_spec("Basic-v1", use_combined_action=True, delta_button_config={"ATTACK": (3, 0, 1)})
    with pytest.raises(ValueError, match="cfg_path"):
        pp.make("VizdoomCustom-v1")  # its spec exists (EnvPool's), but it has no scenario
    with pytest.raises(ValueError, match="cfg_path.*does not exist"):
        pp.make_spec("Basic-v1", cfg_path="/nonexistent.cfg")


# ---------------------------------------------------------------------------------------------------------------
# multi-player


def bot_game_frames(num_bots: int) -> list[bytes]:
    env = pp.make("Cig-v1", num_envs=1, num_bots=num_bots, game_args="-deathmatch +sv_forcerespawn 1", seed=1)
    try:
        turn_left = np.zeros((1, 10))
        turn_left[0, 2] = 1.0  # Cig's buttons: ATTACK, USE, TURN_LEFT, ...
        frames = [env.reset()[0][0, -3:].tobytes()]  # the newest frame
        for _ in range(40):
            frames.append(env.step(turn_left)[0][0, -3:].tobytes())
        return frames
    finally:
        env.close()


def test_bots_join_the_game():
    # turning on the spot scans Cig's arena: the same seed and actions give the same frames (determinism), unless
    # bots walk through the view
    alone, with_bots = bot_game_frames(0), bot_game_frames(3)
    assert alone == bot_game_frames(0)
    assert sum(a != b for a, b in zip(alone, with_bots)) >= 5


def test_several_agents_match_vizdoom_lockstep():
    """max_num_players=2: two engines of one network game, one row per player. Every row equals vizdoom's own
    DoomGame players set up as its multiplayer examples do (host + join) and stepped the same way (each tic
    together), with each player's own random buttons."""
    env = pp.make("MultiDuel-v1", env_type="gymnasium", num_envs=1, max_num_players=2, seed=5)
    ref = LockstepReference(env.spec.config._asdict(), 5, players=2)
    try:
        obs, info = env.reset()
        assert obs.shape == (2, 12, 84, 84)
        assert not np.array_equal(obs[0], obs[1])  # each player sees its own view
        for p, (r_obs, r_info, _) in enumerate(ref.reset()):
            np.testing.assert_array_equal(obs[p], r_obs)
            assert all(info[key][p] == r_info[key] for key in INFO_VARIABLES)
        rng = np.random.default_rng(5)
        rewarded = 0
        for t in range(40):
            buttons = rng.integers(0, 2, size=(2, env.single_action_space.shape[0])).astype(np.float64)
            obs, rew, term, trunc, info = env.step(buttons)
            assert rew.shape == (2,) and term.shape == (1,)
            for p, (r_obs, r_info, r_rew, r_done) in enumerate(ref.step(buttons)):
                np.testing.assert_array_equal(obs[p], r_obs, err_msg=f"player {p} step {t}")
                assert rew[p] == np.float32(r_rew), (p, t)
                assert all(info[key][p] == r_info[key] for key in INFO_VARIABLES), (p, t)
                assert not r_done and not term[0]
            rewarded += int(np.count_nonzero(rew))
        assert rewarded > 0  # the players' own game variables moved (ammo, health, ...)
    finally:
        ref.close()
        env.close()


def test_several_agents_rows_episodes_and_front_ends():
    """Player rows of two envs of two players, through episode ends (both players start the next episode
    together), in sync, async and dm."""
    env = pp.make("MultiDuel-v1", env_type="gymnasium", num_envs=2, max_num_players=2, max_episode_steps=6, seed=1)
    try:
        obs, info = env.reset()
        assert obs.shape == (4, 12, 84, 84) and info["HEALTH"].shape == (4,) and info["env_id"].shape == (2,)
        assert list(info["players"]["env_id"]) == [0, 0, 1, 1]
        actions = np.zeros((4, env.single_action_space.shape[0]))
        actions[:, 2] = 1.0  # MultiDuel's buttons: ATTACK, SPEED, TURN_LEFT, ...: everyone turns
        truncations = 0
        for _ in range(15):
            obs, rew, term, trunc, info = env.step(actions)
            assert obs.shape == (4, 12, 84, 84) and rew.shape == (4,) and trunc.shape == (2,)
            truncations += int(trunc.sum())
        assert truncations == 4  # steps 6 and 13 of each env (step 7 is the reset)
    finally:
        env.close()
    # async: one env per batch, each with its two player rows
    env = pp.make("MultiDuel-v1", num_envs=2, batch_size=1, max_num_players=2, seed=1)
    try:
        env.async_reset()
        seen = set()
        for _ in range(8):
            obs, rew, term, trunc, info = env.recv()
            assert obs.shape == (2, 12, 84, 84) and list(info["players"]["env_id"]) == [info["env_id"][0]] * 2
            seen.add(int(info["env_id"][0]))
            env.send(actions[:2], info["env_id"])
        assert seen == {0, 1}
    finally:
        env.close()
    dm = pp.make("MultiDuel-v1", env_type="dm", num_envs=1, max_num_players=2, seed=1)
    try:
        ts = dm.reset()
        assert ts.observation.obs.shape == (2, 12, 84, 84) and ts.reward.shape == (2,)
        ts = dm.step(np.zeros((2, dm.action_spec().shape[-1])))
        assert ts.observation.obs.shape == (2, 12, 84, 84)
    finally:
        dm.close()


def test_several_agents_config_errors():
    for kwargs, match in [
        ({"max_num_players": 9}, "max_num_players"),
        ({"max_num_players": 2, "episodic_life": True}, "episodic_life"),
        ({"max_num_players": 2, "lmp_save_dir": "/tmp"}, "lmp_save_dir"),
    ]:
        with pytest.raises(ValueError, match=match):
            pp.make_spec("MultiDuel-v1", **kwargs)


def test_several_agents_killed_engine_is_env_error():
    """A killed engine of a several-player env: the peer engine (blocked in the network game) is stopped too, the
    step raises EnvError for that env instead of hanging, and the next reset starts both engines again."""
    before = engine_pids()
    env = pp.make("MultiDuel-v1", env_type="gymnasium", num_envs=1, max_num_players=2, seed=2)
    try:
        env.reset()
        pids = engine_pids() - before
        assert len(pids) == 2
        joiner = next(p for p in pids if b"-join" in open(f"/proc/{p}/cmdline", "rb").read())
        os.kill(joiner, signal.SIGKILL)
        actions = np.zeros((2, env.single_action_space.shape[0]))
        with pytest.raises(pp.EnvError) as err:
            for _ in range(5):
                env.step(actions)
        assert err.value.env_ids == [0]
        assert wait_until(lambda: not any(alive(p) for p in pids))  # the host was stopped as well
        obs, _ = env.reset()
        assert obs.shape == (2, 12, 84, 84) and len(engine_pids() - before) == 2
        env.step(actions)
    finally:
        env.close()
    assert wait_until(lambda: not (engine_pids() - before))


# A process that maps an engine's message queue, takes the queue's lock and dies holding it: what an engine killed
# inside a send or receive leaves behind (the lock is a process-shared pthread mutex, not robust). glibc's
# pthread_mutex_t: lock word, recursion count, owner tid, user count, kind; a process-shared normal mutex has kind
# 128 (the PSHARED bit). The user count stays 1 while the engine waits on the queue's condition.
DIE_HOLDING_QUEUE_LOCK = """
import ctypes, mmap, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDWR)
buf = mmap.mmap(fd, os.fstat(fd).st_size)
for off in range(0, 512, 8):
    lock, count, owner, _, kind = struct.unpack_from("5i", buf, off)
    if (lock, count, owner, kind) == (0, 0, 0, 128):
        break
else:
    sys.exit("no unlocked process-shared mutex in " + sys.argv[1])
addr = ctypes.addressof(ctypes.c_char.from_buffer(buf)) + off
assert ctypes.CDLL(None).pthread_mutex_lock(ctypes.c_void_p(addr)) == 0
os._exit(0)  # dies holding it
"""


def test_several_agents_call_stuck_after_kill_is_env_error():
    """The CI hang, made certain: the host's message queue is locked by a dead process, so the host's call blocks
    for good and killing its engine does not make it return. The step raises EnvError after the bound instead of
    hanging, the env says it is out of use, and close() returns."""
    before = engine_pids()
    env = pp.make("MultiDuel-v1", env_type="gymnasium", num_envs=1, max_num_players=2, seed=2)
    instance = None
    try:
        env.reset()
        pids = engine_pids() - before
        joiner = next(p for p in pids if "-join" in _cmdline(p))
        host = next(iter(pids - {joiner}))
        args = _cmdline(host)
        instance = args[args.index("+viz_instance_id") + 1]
        # the queue the host's calls send into
        subprocess.run(
            [sys.executable, "-c", DIE_HOLDING_QUEUE_LOCK, f"/dev/shm/ViZDoomMQDoom{instance}"], check=True, timeout=60
        )
        os.kill(joiner, signal.SIGKILL)  # the joiner's call fails: the host's engine is killed too
        actions = np.zeros((2, env.single_action_space.shape[0]))
        start = time.monotonic()
        with pytest.raises(pp.EnvError, match="did not return") as err:
            for _ in range(5):
                env.step(actions)
        assert err.value.env_ids == [0] and time.monotonic() - start < 60
        assert wait_until(lambda: not any(alive(p) for p in pids))
        with pytest.raises(pp.EnvError, match="out of use"):
            env.reset()
    finally:
        start = time.monotonic()
        env.close()
        assert time.monotonic() - start < 30
        # the host's game is leaked with its stuck call: nothing removes its queues and shared memory
        for name in ["ViZDoomMQDoom", "ViZDoomMQCtr", "ViZDoomSM"] if instance else []:
            if os.path.exists(f"/dev/shm/{name}{instance}"):
                os.unlink(f"/dev/shm/{name}{instance}")
    assert wait_until(lambda: not (engine_pids() - before))


# A single-player env whose engine is killed while its message queue is locked (by a dead process, as an engine
# killed inside a send or receive leaves it): the step's call blocks on that lock for good. Run in a child process,
# so that a pool that hangs there fails the test instead of hanging it.
SINGLE_STUCK = """
import os, signal, subprocess, sys, time
import numpy as np
sys.path[:0] = {tests!r}
from test_vizdoom import DIE_HOLDING_QUEUE_LOCK, _cmdline, engine_pids
import parallel_pool as pp

env = pp.make("Basic-v1", num_envs=1, seed=0)
env.reset()
(pid,) = engine_pids()
args = _cmdline(pid)
instance = args[args.index("+viz_instance_id") + 1]
try:
    lock = [sys.executable, "-c", DIE_HOLDING_QUEUE_LOCK, "/dev/shm/ViZDoomMQDoom" + instance]
    subprocess.run(lock, check=True, timeout=60)
    os.kill(pid, signal.SIGKILL)
    start = time.monotonic()
    try:
        for _ in range(5):
            env.step(np.zeros((1, 3)))
        print("no error")
    except pp.EnvError as e:
        print("step raised", e.env_ids, round(time.monotonic() - start), str(e).replace(chr(10), " "))
    try:
        env.reset()
    except pp.EnvError as e:
        print("reset raised", str(e).replace(chr(10), " "))
    start = time.monotonic()
    env.close()
    print("closed", round(time.monotonic() - start))
finally:  # the env's game is leaked with its stuck call: nothing removes its queues and shared memory
    for name in ["ViZDoomMQDoom", "ViZDoomMQCtr", "ViZDoomSM"]:
        if os.path.exists("/dev/shm/" + name + instance):
            os.unlink("/dev/shm/" + name + instance)
"""


def test_single_player_call_stuck_after_kill_is_env_error():
    """A single-player engine killed mid-step, its queue left locked: its call never returns, and it runs on the
    env's own thread (Lockstep of one), so the step raises EnvError after the bound (30 s + 5 s) instead of
    blocking the caller for good; the env then says it is out of use, and close() returns."""
    out = run_python(SINGLE_STUCK.format(tests=TEST_PATHS), timeout=180)
    assert "step raised [0]" in out.stdout and "did not return" in out.stdout, out.stdout + out.stderr[-2000:]
    seconds = int(out.stdout.split("step raised [0] ")[1].split()[0])
    assert seconds < 90
    assert "reset raised" in out.stdout and "out of use" in out.stdout
    assert int(out.stdout.split("closed ")[1].split()[0]) < 30


# ---------------------------------------------------------------------------------------------------------------
# engine processes


def test_close_stops_engines():
    before = engine_pids()
    env = pp.make("Basic-v1", num_envs=2)
    env.reset()
    mine = engine_pids() - before
    assert len(mine) == 2
    env.close()
    assert wait_until(lambda: not any(alive(p) for p in mine))


def test_killed_engine_is_env_error():
    before = engine_pids()
    env = pp.make("Basic-v1", env_type="gymnasium", num_envs=2)
    try:
        env.reset()
        pids = sorted(engine_pids() - before)
        assert len(pids) == 2
        os.kill(pids[1], signal.SIGKILL)
        assert wait_until(lambda: not alive(pids[1]))
        with pytest.raises(pp.EnvError) as err:
            for _ in range(5):  # the dead engine is noticed at its next tic
                env.step(np.zeros((2, 3)))
        # one env lost its engine (which one: the pool may start the engines in either order)
        assert len(err.value.env_ids) == 1 and f"env {err.value.env_ids[0]}" in str(err.value)
        # the env is usable again: its reset starts a new engine
        obs, _ = env.reset()
        assert obs.shape == (2, 12, 84, 84) and len(engine_pids() - before) == 2
        env.step(np.zeros((2, 3)))
    finally:
        env.close()


# A process with a ViZDoom env, SIGKILLed: its engine dies with it (PR_SET_PDEATHSIG), and nothing runs the game's
# close(), which removes the engine's shared memory and message queues.
KILLED_WITH_ENGINE = """
import os, signal, sys
sys.path[:0] = {tests!r}
from test_vizdoom import _cmdline, engine_pids
import parallel_pool as pp
env = pp.make("Basic-v1", num_envs=1)
env.reset()
(pid,) = engine_pids()
args = _cmdline(pid)
print(args[args.index("+viz_instance_id") + 1], os.getpid(), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""

SEGMENTS = ("ViZDoomSM", "ViZDoomMQCtr", "ViZDoomMQDoom")


def test_segments_are_private_and_a_killed_processs_are_removed_by_a_later_env():
    """An engine's shared memory (its screen) and message queues are this user's only (0600); after a SIGKILL of
    the process that made them they stay, with its private folder, and the next ViZDoom env made (by any process)
    removes them: the folder records their instance ids and carries the dead process's pid."""
    before = engine_pids()
    env = pp.make("Basic-v1", num_envs=1)
    env.reset()
    (pid,) = engine_pids() - before
    args = _cmdline(pid)
    instance = args[args.index("+viz_instance_id") + 1]
    for base in SEGMENTS:
        assert stat.S_IMODE(os.stat(f"/dev/shm/{base}{instance}").st_mode) == 0o600, base
    env.close()
    proc = subprocess.run(
        [sys.executable, "-c", KILLED_WITH_ENGINE.format(tests=TEST_PATHS)],
        cwd=IMPORT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    instance, child = proc.stdout.split()
    folders = glob.glob(f"{tempfile.gettempdir()}/parallel_pool-vizdoom-{child}-*")
    assert folders and all(os.path.exists(f"/dev/shm/{base}{instance}") for base in SEGMENTS)
    env = pp.make("Basic-v1", num_envs=1)  # a later env: the dead process's leftovers go
    try:
        assert not any(os.path.exists(f"/dev/shm/{base}{instance}") for base in SEGMENTS)
        assert not any(os.path.exists(f) for f in folders)
    finally:
        env.close()


CHILD = """
import sys
import parallel_pool as pp
env = pp.make("Basic-v1", num_envs=2)
env.reset()
print("ready", flush=True)
sys.stdin.readline()
"""


def test_engines_die_with_killed_parent():
    # run where the imported parallel_pool lives (see tests/support/pyproc.py)
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD], cwd=IMPORT_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout.readline().strip() == "ready"
        engines = engine_pids(child.pid)
        assert len(engines) == 2
        child.kill()
        child.wait()
        assert wait_until(lambda: not any(alive(p) for p in engines))
    finally:
        if child.poll() is None:
            child.kill()


def test_engines_start_together_in_a_fresh_working_directory(tmp_path):
    """Each engine makes ./_vizdoom/ where it runs and exits if its mkdir fails, also when engines started together
    race for it ("File exists": CI saw one in a fresh venv; here, before the fix, about 1 start of 12 of a 4-env pool
    in a new folder). The env makes the folder before it starts its engines, so every start in a new folder works."""
    code = "import parallel_pool as pp; env = pp.make('Basic-v1', num_envs=4); env.reset(); env.close(); print('ready')"
    env = dict(os.environ, PYTHONPATH=IMPORT_ROOT)
    for i in range(4):
        cwd = tmp_path / f"run{i}"
        cwd.mkdir()
        run = subprocess.run(
            [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
        )
        assert run.stdout.strip() == "ready", run.stderr[-2000:]
        assert (cwd / "_vizdoom").is_dir()


@pytest.mark.parametrize("task_id", ["Cig-v1", "MultiDuel-v1"])
def test_deathmatch_maps_start_and_step(task_id):
    """Cig's and MultiDuel's maps have deathmatch starts only: their ids default to deathmatch rules (EnvPool's
    defaults crash the engine at start there), so they start and step."""
    env = pp.make(task_id, num_envs=2, seed=3)
    obs, _ = env.reset()
    assert obs.shape == (2, 12, 84, 84) and obs.any()
    actions = np.zeros((2, *env.single_action_space.shape), env.single_action_space.dtype)
    for _ in range(10):
        obs, reward, terminated, truncated, info = env.step(actions)
    assert np.array_equal(np.sort(info["env_id"]), [0, 1])
    env.close()


def test_engine_that_fails_to_start_raises():
    """An engine that exits while starting (here: a deathmatch-only map without -deathmatch) is a Python error with
    the engine's message, not a crash (ViZDoom's controller read an unmapped game state; family.cmake patches it)."""
    with pytest.raises(RuntimeError, match="No player 1 start"):
        pp.make("Cig-v1", num_envs=1, game_args="")
    assert pp.make("Basic-v1", num_envs=1).reset()[0].shape == (1, 12, 84, 84)  # the process goes on


# ---------------------------------------------------------------------------------------------------------------
# engines of several envs and processes: ports, settings files, which processes an env stops


def _cmdline(pid: int) -> list[str]:
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return [a.decode() for a in f.read().split(b"\0") if a]


def _host_ports(pids) -> list[str]:
    ports = []
    for p in pids:
        args = _cmdline(p)
        ports += [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-port"]
    return ports


SEVERAL_CHILD = """
import sys, threading
import parallel_pool as pp
envs = []
def make():
    envs.append(pp.make("MultiDuel-v1", num_envs=2, max_num_players=2, seed=1))
threads = [threading.Thread(target=make) for _ in range(2)]
for t in threads: t.start()
for t in threads: t.join()
for e in envs: e.reset()
print("ready", flush=True)
sys.stdin.readline()
"""


def test_several_agent_pools_made_at_once_never_share_a_port_or_a_settings_file():
    # two processes, each making two several-agent pools in two threads at once: 8 hosted games
    children = [
        subprocess.Popen(
            [sys.executable, "-c", SEVERAL_CHILD],
            cwd=IMPORT_ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        for c in children:
            assert c.stdout.readline().strip() == "ready"
        # 2 processes x 2 pools x 2 envs x 2 players (an engine's process may still be starting under load)
        assert wait_until(lambda: sum(len(engine_pids(c.pid)) for c in children) == 16)
        engines = [p for c in children for p in engine_pids(c.pid)]
        ports = _host_ports(engines)
        assert len(ports) == 8 and len(set(ports)) == 8
        configs = [a for p in engines for a in _cmdline(p) if a.endswith(".ini")]
        hosts = [c for c in configs if c]
        # each env's engines use a settings file in that env's own private folder (mode 0700)
        folders = {os.path.dirname(c) for c in hosts}
        assert len(folders) == 8
        for f in folders:
            assert os.stat(f).st_mode & 0o777 == 0o700
    finally:
        for c in children:
            c.kill()
            c.wait()


def test_an_env_stops_only_the_engines_it_started():
    # a process of ours whose command line names the env's port (as the old kill-by-port search matched) must
    # survive when the env stops its engines after one of them died
    before = engine_pids()
    env = pp.make("MultiDuel-v1", env_type="gymnasium", num_envs=1, max_num_players=2, seed=2)
    decoy = None
    try:
        env.reset()
        pids = engine_pids() - before
        (port,) = _host_ports(pids)
        decoy = subprocess.Popen(["bash", "-c", "sleep 60", "decoy", "-port", port, "-join", f"127.0.0.1:{port}"])
        joiner = next(p for p in pids if "-join" in _cmdline(p))
        os.kill(joiner, signal.SIGKILL)
        actions = np.zeros((2, env.single_action_space.shape[0]))
        with pytest.raises(pp.EnvError):
            for _ in range(5):
                env.step(actions)
        assert wait_until(lambda: not any(alive(p) for p in pids))  # the env's own engines are stopped
        assert decoy.poll() is None  # the foreign process is not
    finally:
        env.close()
        if decoy is not None:
            decoy.kill()
            decoy.wait()


def test_close_asks_a_stuck_vizdoom_env_to_abort_its_engines():
    # an engine that stops answering (SIGSTOP): a step would wait on it, and its close() forever; close() of the
    # pool (1 s timeout for the step) asks the env to abort, and the env kills an engine that does not quit within
    # 5 s, so close() returns without abandoning anything
    code = """
import os, signal, threading, time, warnings
import numpy as np
import parallel_pool as pp
env = pp.make("Basic-v1", num_envs=1, batch_size=1)
env.reset()
for p in os.listdir("/proc"):
    if p.isdigit() and open(f"/proc/{p}/stat").read().split(") ")[1].split()[1] == str(os.getpid()):
        os.kill(int(p), signal.SIGSTOP)  # the engine: a child of this process
env.send(np.zeros((1, 3)), np.array([0]))
time.sleep(0.5)
t = time.monotonic()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    env.close()
print(round(time.monotonic() - t, 1), len(caught))
"""
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=IMPORT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, PARALLEL_POOL_CLOSE_TIMEOUT="1"),
    )
    assert out.returncode == 0, out.stderr
    seconds, warned = out.stdout.split()[-2:]
    assert float(seconds) < 1 + 2 + 5 + 3 and warned == "0"
