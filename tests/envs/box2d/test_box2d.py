"""Box2D envs (LunarLander, BipedalWalker), aligned with gymnasium 1.4 bit for bit, and EnvPool 1.2.5's face.

Alignment from the same state: gymnasium's Box2D envs draw their terrain, initial push, wind offsets and engine
dispersion from `np_random` (numpy's PCG64). A fresh gymnasium env gets a generator in a known state and is reset
from it; ours is put in the same generator state with `set_state(0, words)` (the test hook: it rebuilds the episode
from that generator state as gymnasium's reset does). Then both take the same actions until the episode ends, and
observations, rewards and terminations must be *equal* (the same Box2D 2.3 source, the same operation order and
precision). Truncation is the pool's: at max_episode_steps, and only there.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import parallel_pool as pp

if "LunarLander-v3" not in pp.list_all_envs():
    pytest.skip("this build has no Box2D envs", allow_module_level=True)

LUNAR = ["LunarLander-v2", "LunarLander-v3", "LunarLanderContinuous-v2", "LunarLanderContinuous-v3"]
WALKER = ["BipedalWalker-v3", "BipedalWalkerHardcore-v3"]
CAR = ["CarRacing-v2", "CarRacing-v3"]
TASKS = LUNAR + WALKER + CAR
# CarRacing's frames: gymnasium draws them with pygame (anti-aliased polygon edges, integer vertices, the score as
# text, smoothscale); ours fills the same polygons and averages them down. Per frame, outside the score text's
# corner, the mean absolute difference, its 99th percentile and its maximum (uint8 levels) stay within these.
FRAME_MEAN, FRAME_P99, FRAME_MAX = 2.0, 24, 100
SCORE_TEXT = (slice(84, 96), slice(0, 14))  # rows, columns of the 96x96 frame where gymnasium prints the score


def generator_words(np_random: np.random.Generator) -> list[int]:
    """numpy's PCG64 state as the 10 values our set_state takes (the layout of core/envs/common/numpy_random.h)."""
    st = np_random.bit_generator.state
    words = []
    for v in (st["state"]["state"], st["state"]["inc"]):
        words += [(v >> shift) & 0xFFFFFFFF for shift in (96, 64, 32, 0)]
    return words + [st["has_uint32"], st["uinteger"]]


def gym_env(task: str, **kw):
    if task.startswith("CarRacing"):
        return gym.make("CarRacing-v3", **kw).unwrapped
    if task.startswith("LunarLander"):
        return gym.make("LunarLander-v3", continuous="Continuous" in task, **kw).unwrapped
    return gym.make("BipedalWalker-v3", hardcore="Hardcore" in task, **kw).unwrapped


def start_both(task: str, seed: int, **kw):
    """A gymnasium env and a one-env pool of ours, both at the start of the episode generator state `seed` gives."""
    g = gym_env(task, **kw)
    g._np_random = np.random.Generator(np.random.PCG64(seed))
    words = generator_words(g.np_random)
    g_obs, _ = g.reset()
    env = pp.make(task, num_envs=1, **kw)
    env.reset()
    env.set_state(0, words)
    return g, env, g_obs


def lunar_policy(g, obs, rng, mode):
    if mode == "random":
        return rng.uniform(-1, 1, 2).astype(np.float32) if g.continuous else int(rng.integers(0, 4))
    from gymnasium.envs.box2d.lunar_lander import heuristic

    a = heuristic(g, obs)  # lands (legs on the ground, the lander falls asleep: +100)
    return np.asarray(a, dtype=np.float32) if g.continuous else int(a)


def walker_policy(rng, scale):
    return rng.uniform(-scale, scale, 4).astype(np.float32)


def run_aligned(task: str, seed: int, policy, **kw) -> tuple[int, bool, float]:
    """Steps ours and gymnasium's until the episode ends; every output equal. Returns (steps, terminated, return)."""
    g, env, g_obs = start_both(task, seed, **kw)
    limit = env.spec.config.max_episode_steps
    rng = np.random.default_rng(seed)
    total = 0.0
    for t in range(limit):
        a = policy(g, g_obs, rng)
        batch = np.asarray([a], dtype=np.float32 if isinstance(a, np.ndarray) else np.int32)
        obs, rew, term, trunc, _ = env.step(batch)
        g_obs, g_rew, g_term, _, _ = g.step(a)
        where = f"{task} {kw} seed {seed} step {t}"
        np.testing.assert_array_equal(obs[0], g_obs, err_msg=where)
        assert rew[0] == np.float32(g_rew), (where, rew[0], g_rew)
        assert bool(term[0]) == g_term, where
        assert bool(trunc[0]) == (t + 1 == limit and not g_term), where
        total += float(g_rew)
        if g_term or trunc[0]:
            return t + 1, g_term, total
    raise AssertionError("unreachable")


@pytest.mark.parametrize("task", LUNAR)
@pytest.mark.parametrize(
    "kw",
    [{}, {"enable_wind": True}, {"enable_wind": True, "wind_power": 20.0, "turbulence_power": 2.0, "gravity": -4.0}],
    ids=["default", "wind", "strong-wind-low-gravity"],
)
def test_lunar_lander_equals_gymnasium_over_full_episodes(task, kw):
    outcomes = []
    for seed in range(3):
        for mode in ("random", "heuristic"):
            policy = lambda g, o, rng, mode=mode: lunar_policy(g, o, rng, mode)  # noqa: E731
            steps, terminated, total = run_aligned(task, 100 * seed + 7, policy, **kw)
            outcomes.append((mode, steps, terminated, total))
    assert all(term for _, _, term, _ in outcomes)  # every episode reached its end
    if not kw:  # the heuristic lands (+100 at the end) and random play crashes (-100)
        assert any(m == "heuristic" and total > 100 for m, _, _, total in outcomes), outcomes
        assert any(m == "random" and total < 0 for m, _, _, total in outcomes), outcomes


@pytest.mark.parametrize("task", WALKER)
def test_bipedal_walker_equals_gymnasium_over_full_episodes(task):
    ends = []
    for seed, scale in [(0, 1.0), (1, 1.0), (2, 1.0)]:
        ends.append(run_aligned(task, seed, lambda g, o, rng, s=scale: walker_policy(rng, s)))
    assert any(term for _, term, _ in ends), ends  # falls (terminated, -100)
    assert any(not term for _, term, _ in ends), ends  # and one that lasts to the time limit (truncated)


@pytest.mark.slow
@pytest.mark.parametrize("task", LUNAR + WALKER)
def test_equals_gymnasium_sweep(task):
    for seed in range(20):
        if task.startswith("LunarLander"):
            kw = {"enable_wind": bool(seed % 2), "turbulence_power": 0.5 + seed % 3 * 0.5}
            mode = "heuristic" if seed % 3 else "random"
            run_aligned(task, seed, lambda g, o, rng, mode=mode: lunar_policy(g, o, rng, mode), **kw)
        else:
            scale = 0.2 + seed % 5 * 0.2
            run_aligned(task, seed, lambda g, o, rng, s=scale: walker_policy(rng, s))


def test_hardcore_terrain_differs_and_is_seen_by_the_lidar():
    """The hardcore terrain (stumps, pits, stairs) is generated as gymnasium's: lidar readings equal, and differ
    from the plain terrain's for the same generator state."""
    lidars = {}
    for task in WALKER:
        g, env, _ = start_both(task, 11)
        a = np.zeros(4, np.float32)
        seen = []
        for _ in range(60):
            obs = env.step(a[None])[0][0]
            np.testing.assert_array_equal(obs, g.step(a)[0])
            seen.append(obs[14:])
        lidars[task] = np.array(seen)
    assert not np.array_equal(lidars[WALKER[0]], lidars[WALKER[1]])


def test_spaces_and_keys_equal_envpool():
    """The EnvPool face's spaces and dm specs are EnvPool's own (its observation low is float32's smallest positive
    value); the main API's are gymnasium's (test_main_api_spaces_are_gymnasiums)."""
    envpool = pytest.importorskip("envpool")
    from parallel_pool import envpool as face

    for task in TASKS:
        ours, theirs = face.make_spec(task), envpool.make_spec(task)
        assert ours.observation_space == theirs.observation_space, task
        assert ours.action_space == theirs.action_space, task
        for mine, their in (
            (ours.observation_spec().obs, theirs.observation_spec().obs),
            (ours.state_array_spec["obs"], theirs.state_array_spec["obs"]),
        ):
            np.testing.assert_array_equal(mine.minimum, their.minimum)
            np.testing.assert_array_equal(mine.maximum, their.maximum)
        assert ours.config.max_episode_steps == theirs.config.max_episode_steps, task
        assert ours.config.reward_threshold == theirs.config.reward_threshold, task
    assert pp.make_spec("BipedalWalkerHardcore-v3").config.hardcore is True
    assert pp.make_spec("BipedalWalker-v3").config.hardcore is False


def test_config_keys_change_the_env():
    """gymnasium's LunarLander keys reach the physics: the same generator state and actions, other outcomes."""
    trajectories = {}
    for name, kw in {"default": {}, "wind": {"enable_wind": True}, "gravity": {"gravity": -3.0}}.items():
        _, env, _ = start_both("LunarLander-v3", 5, **kw)
        trajectories[name] = np.array([env.step(np.zeros(1, np.int32))[0][0] for _ in range(30)])
    assert not np.array_equal(trajectories["default"], trajectories["wind"])
    assert not np.array_equal(trajectories["default"], trajectories["gravity"])


@pytest.mark.parametrize("task", ["LunarLanderContinuous-v3", "BipedalWalkerHardcore-v3", "CarRacing-v3"])
def test_snapshot_restores_mid_episode(task):
    env = pp.make(task, num_envs=2, seed=3)
    env.reset()
    rng = np.random.default_rng(0)
    shape = env.action_space.shape
    for _ in range(20):
        env.step(rng.uniform(-0.3, 0.3, shape).astype(np.float32))
    snap = env.get_state([0, 1])
    actions = [rng.uniform(-0.3, 0.3, shape).astype(np.float32) for _ in range(15)]
    first = [env.step(a)[:3] for a in actions]
    env.set_state([0, 1], snap)
    again = [env.step(a)[:3] for a in actions]
    for x, y in zip(first, again):
        for u, v in zip(x, y):
            np.testing.assert_array_equal(u, v)
    # the one-env form: the episode's generator state and its actions
    state = env.get_state(0)
    assert len(state) == 10 + (20 + 15) * shape[1]


@pytest.mark.parametrize("task", TASKS)
def test_main_api_spaces_are_gymnasiums(task):
    """The main API's spaces equal gymnasium's (bounds, dtype, shape), so `single_observation_space.contains(obs)`
    holds from the first reset on (TorchRL's spec check relies on it); the dm front-end's bounds are the same."""
    want = gym_env(task).observation_space
    env = pp.make(task, num_envs=2, seed=5)
    space = env.single_observation_space
    assert (space.shape, space.dtype) == (want.shape, want.dtype)
    np.testing.assert_array_equal(space.low, want.low)
    np.testing.assert_array_equal(space.high, want.high)
    np.testing.assert_array_equal(pp.make_spec(task).observation_spec().obs.minimum, want.low)
    env.action_space.seed(0)
    obs, _ = env.reset()
    for _ in range(100 if task.startswith("CarRacing") else 300):
        assert all(space.contains(row) for row in obs)
        obs = env.step(env.action_space.sample())[0]


def test_seeding_gives_varied_and_reproducible_episodes():
    def first_obs(**kw):
        env = pp.make("BipedalWalkerHardcore-v3", num_envs=4, **kw)
        obs, _ = env.reset()
        return obs

    a = first_obs(seed=1)
    np.testing.assert_array_equal(a, first_obs(seed=1, num_threads=2, batch_size=4))
    assert len({tuple(row) for row in a}) == 4  # each env its own terrain and push
    assert not np.array_equal(a, first_obs(seed=2))
    env = pp.make("LunarLander-v3", num_envs=1, seed=0)
    starts = {tuple(env.reset()[0][0]) for _ in range(3)}
    assert len(starts) == 3  # a new episode each reset


def test_bad_input_raises_and_changes_nothing():
    with pytest.raises(ValueError, match="gravity"):
        pp.make("LunarLander-v3", gravity=-12.0)
    with pytest.raises(ValueError, match="gravity"):
        pp.make("LunarLander-v3", gravity=0.0)
    with pytest.raises(ValueError, match="wind_power"):
        pp.make("LunarLander-v3", wind_power=float("nan"))
    huge = pp.make("BipedalWalker-v3", num_envs=4, max_episode_steps=2**31 - 1)  # allocates no 2**31-step log
    huge.reset()
    env = pp.make("LunarLander-v3", num_envs=1, seed=4)
    env.reset()
    for _ in range(5):
        env.step(np.zeros(1, np.int32))
    before = env.get_state(0)
    bad = [
        [1.0, 2.0],  # too short
        list(before[:10]) + [4.0],  # action out of range
        list(before[:10]) + [1.5],  # not an action
        list(before[:7]) + [2.0] + list(before[8:]),  # inc even
        list(before[:8]) + [2.0] + list(before[9:]),  # has_uint32 not 0/1
        [2.0**33] + list(before[1:]),  # not a 32-bit word
        list(before) + [0.0] * 1000,  # more actions than an episode has (max_episode_steps 1000): a long replay
    ]
    for state in bad:
        with pytest.raises(ValueError):
            env.set_state(0, state)
        np.testing.assert_array_equal(env.get_state(0), before)
    with pytest.raises(ValueError):
        pp.make("BipedalWalker-v3", num_envs=1).set_state(0, [1.0] * 11)
    with pytest.raises(ValueError, match="outside the valid range"):
        env.step(np.array([7], np.int32))
    np.testing.assert_array_equal(env.get_state(0), before)


def test_set_config_continues_the_episodes_generator():
    """An env rebuilt by set_config starts its episodes from the generator states an env never rebuilt starts from:
    each episode's numpy generator is drawn from gen_ (SeedFrom), which the rebuilt env takes over, so Box2D has no
    generator of its own to hand over (unlike MiniGrid, whose numpy generator runs across episodes)."""
    plain = pp.make("LunarLander-v3", num_envs=1, seed=7)
    rebuilt = pp.make("LunarLander-v3", num_envs=1, seed=7)
    plain.reset()
    rebuilt.reset()
    starts = set()
    for episode in range(3):
        rebuilt.set_config([0], gravity=-9.0 - episode)
        plain.reset()
        rebuilt.reset()
        words = plain.get_state(0)  # at an episode's start: the 10 generator values it started from
        assert len(words) == 10
        np.testing.assert_array_equal(rebuilt.get_state(0), words)
        starts.add(tuple(words))
    assert len(starts) == 3 and rebuilt.get_config(0)["gravity"] == -11.0


@pytest.mark.parametrize("task", ["LunarLanderContinuous-v3", "BipedalWalkerHardcore-v3"])
def test_the_pools_own_episodes_are_gymnasiums(task):
    """Episodes the pool starts itself (reset, autoreset) are gymnasium episodes too: from the generator state the
    env reports for its episode (get_state's first 10 values), gymnasium's reset gives the same first observation
    and the same steps follow."""
    env = pp.make(task, num_envs=2, seed=11)
    obs, _ = env.reset()
    rng = np.random.default_rng(1)
    shape = env.action_space.shape
    checked = 0
    for _episode in range(2):
        words = env.get_state(1)[:10]
        assert len(env.get_state(1)) == 10  # at the start of its episode
        g = gym_env(task)
        g._np_random = np.random.Generator(np.random.PCG64())
        st = g.np_random.bit_generator.state
        w = [int(x) for x in words]
        st["state"]["state"] = sum(v << (32 * (3 - i)) for i, v in enumerate(w[:4]))
        st["state"]["inc"] = sum(v << (32 * (3 - i)) for i, v in enumerate(w[4:8]))
        st["has_uint32"], st["uinteger"] = w[8], w[9]
        g.np_random.bit_generator.state = st
        g_obs, _ = g.reset()
        np.testing.assert_array_equal(obs[1], g_obs)
        while True:
            a = rng.uniform(-1, 1, shape).astype(np.float32)
            obs, rew, term, trunc, _ = env.step(a)
            g_obs, g_rew, g_term, _, _ = g.step(a[1])
            np.testing.assert_array_equal(obs[1], g_obs)
            assert rew[1] == np.float32(g_rew) and bool(term[1]) == g_term
            checked += 1
            if term[1] or trunc[1]:
                break
        obs, *_ = env.step(np.zeros(shape, np.float32))  # next-step autoreset: env 1's new episode
    assert checked > 20


def frame_difference(ours: np.ndarray, theirs: np.ndarray) -> tuple[float, float, int]:
    d = np.abs(ours.astype(np.int16) - theirs.astype(np.int16))
    d[SCORE_TEXT] = 0
    return float(d.mean()), float(np.percentile(d, 99)), int(d.max())


def run_car(seed: int, steps: int, **kw) -> tuple[int, bool, float]:
    """CarRacing from the same generator state: rewards and terminations equal, frames within the tolerance."""
    g, env, g_obs = start_both("CarRacing-v3", seed, **kw)
    continuous = env.spec.config.continuous
    rng = np.random.default_rng(seed)
    total = 0.0
    for t in range(steps):
        if continuous:  # mostly gas, some steering and braking: the car drives over tiles and off the road
            a = np.array([rng.uniform(-1, 1), rng.uniform(0.2, 1), rng.uniform(0, 0.2)], np.float32)
            obs, rew, term, _, _ = env.step(a[None])
        else:
            a = int(rng.integers(0, 5))
            obs, rew, term, _, _ = env.step(np.array([a], np.int32))
        g_obs, g_rew, g_term, _, _ = g.step(a)
        where = f"CarRacing {kw} seed {seed} step {t}"
        assert rew[0] == np.float32(g_rew), (where, rew[0], g_rew)
        assert bool(term[0]) == g_term, where
        mean, p99, top = frame_difference(obs[0], g_obs)
        assert mean <= FRAME_MEAN and p99 <= FRAME_P99 and top <= FRAME_MAX, (where, mean, p99, top)
        total += float(g_rew)
        if g_term:
            return t + 1, True, total
    return steps, False, total


@pytest.mark.parametrize(
    "kw", [{}, {"continuous": False}, {"domain_randomize": True, "lap_complete_percent": 0.5}], ids=str
)
def test_car_racing_equals_gymnasium(kw):
    steps, _, total = run_car(3, 120, **kw)
    assert steps == 120
    if kw.get("continuous", True):
        assert total > 0  # the car drove over new tiles (+1000/N each) faster than the -0.1 per step


def test_car_racing_frames_are_not_a_constant():
    """The tolerance means something: our frame is far from gymnasium's frame of another moment of the episode."""
    g, env, _ = start_both("CarRacing-v3", 8)
    a = np.array([0.3, 1.0, 0.0], np.float32)
    frames = []
    for _ in range(40):
        obs = env.step(a[None])[0][0]
        frames.append((obs, g.step(a)[0]))
    assert frame_difference(*frames[-1]) <= (FRAME_MEAN, FRAME_P99, FRAME_MAX)
    mean, p99, _ = frame_difference(frames[-1][0], frames[10][1])
    assert mean > 4 * FRAME_MEAN or p99 > 2 * FRAME_P99


def test_car_racing_frames_exact_off_the_edges():
    """Our shrink is pygame's smoothscale bit for bit (core/envs/box2d/palette_canvas.h): pixels differ from
    gymnasium's only near polygon edges (pygame's integer vertices and anti-aliasing), not across flat areas, where an
    exact area mean would be 1-2 levels brighter (pygame's fixed point truncates: a flat 102 comes out 100)."""
    g, env, _ = start_both("CarRacing-v3", 5)
    rng = np.random.default_rng(5)
    shares = []
    for _ in range(100):
        a = np.array([rng.uniform(-1, 1), rng.uniform(0.2, 1), rng.uniform(0, 0.2)], np.float32)
        obs = env.step(a[None])[0][0]
        equal = (obs == g.step(a)[0]).all(-1)
        equal[SCORE_TEXT] = True
        shares.append(equal.mean())
    # measured over 4 x 150 steps (all variants): every frame >= 0.76 equal, 0.93 on average
    assert min(shares) >= 0.6 and np.mean(shares) >= 0.85, (min(shares), np.mean(shares))


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_car_racing_full_episodes(seed):
    kw = [{}, {"continuous": False}, {"domain_randomize": True}, {"lap_complete_percent": 0.2}][seed]
    run_car(seed, 1000, **kw)
