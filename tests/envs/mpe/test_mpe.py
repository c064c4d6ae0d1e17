"""MPE family: step-by-step alignment with Farama's mpe2 1.1.1 (its pettingzoo parallel_env).

The C++ envs draw their resets from a bit-exact copy of numpy's PCG64 Generator in mpe2's order and compute the
physics, rewards and observations operation by operation as numpy does, so env i of a pool seeded s and mpe2's
parallel_env reset with seed s + i play the same episodes under the same actions: every observation (float32),
reward (float64), termination and truncation, and the world state behind them (positions, velocities, utterances),
is compared exactly, through autoresets (which continue the generator as mpe2's reset() without a seed does).
"""

from __future__ import annotations

import importlib
import logging

import numpy as np
import pytest

import parallel_pool as pp

if "MPE/simple-v3" not in pp.list_all_envs():
    pytest.skip("the mpe family is not built", allow_module_level=True)
pytest.importorskip("mpe2")

# our id -> mpe2's module
MODULES = {
    "MPE/simple-v3": "simple_v3",
    "MPE/simple_spread-v3": "simple_spread_v3",
    "MPE/simple_reference-v3": "simple_reference_v3",
}
IDS = list(MODULES)


@pytest.fixture(autouse=True)
def _quiet_clipping():
    # mpe2's ClipOutOfBoundsWrapper logs a warning for every action it clips; the tests clip on purpose
    logger = logging.getLogger("pettingzoo.utils.env_logger")
    level = logger.level
    logger.setLevel(logging.ERROR)
    yield
    logger.setLevel(level)


def _reference(task_id, **kwargs):
    return importlib.import_module(f"mpe2.{MODULES[task_id]}").parallel_env(**kwargs)


def _world_state(ref):
    """mpe2's world as our get_state(i) lays it out (the step count and the scenario's goals first and last)."""
    raw = ref.aec_env.unwrapped
    world = raw.world
    values = [float(raw.steps)]
    for e in world.agents + world.landmarks:
        values += [*e.state.p_pos, *e.state.p_vel]
    for a in world.agents:
        values += [float(x) for x in a.state.c]
    if hasattr(world.agents[0], "goal_b"):  # simple_reference: each agent's goal landmark
        values += [float(world.landmarks.index(a.goal_b)) for a in world.agents]
    return np.array(values)


def _actions(rng, env, rows, continuous):
    """Random actions for `rows` player rows; continuous ones reach past [0, 1] so that clipping is exercised."""
    space = env.single_action_space
    if continuous:
        return rng.uniform(-0.2, 1.2, size=(rows, *space.shape)).astype(np.float32)
    return rng.integers(0, space.n, size=rows).astype(np.int32)


def _align(task_id, seed, steps, continuous, num_envs=2, **kwargs):
    """Our pool against one mpe2 parallel_env per env, step by step; returns (episodes ended, max |reward|)."""
    env = pp.make(task_id, env_type="gymnasium", num_envs=num_envs, seed=seed, continuous_actions=continuous, **kwargs)
    refs = [_reference(task_id, continuous_actions=continuous, **kwargs) for _ in range(num_envs)]
    agents = refs[0].possible_agents
    n = len(agents)
    rng = np.random.default_rng(seed)
    ended = 0
    try:
        obs, _ = env.reset()
        assert obs.shape == (num_envs * n, *env.single_observation_space.shape) and obs.dtype == np.float32
        for i, ref in enumerate(refs):
            robs, _ = ref.reset(seed=seed + i)
            np.testing.assert_array_equal(obs[i * n : (i + 1) * n], np.stack([robs[a] for a in agents]))
            np.testing.assert_array_equal(env.get_state(i), _world_state(ref), err_msg=f"{task_id} reset {i}")
        done = [False] * num_envs
        for t in range(steps):
            actions = _actions(rng, env, num_envs * n, continuous)
            obs, rew, term, trunc, _ = env.step(actions)
            assert rew.dtype == np.float64
            for i, ref in enumerate(refs):
                where = f"{task_id} seed {seed} env {i} step {t}"
                rows = slice(i * n, (i + 1) * n)
                if done[i]:  # next-step autoreset: this step is the reset
                    robs, _ = ref.reset()
                    rrew, rterm, rtrunc = [0.0] * n, False, False
                else:
                    act = {
                        a: actions[i * n + j] if continuous else int(actions[i * n + j]) for j, a in enumerate(agents)
                    }
                    robs, rrews, rterms, rtruncs, _ = ref.step(act)
                    rrew = [rrews[a] for a in agents]
                    rterm, rtrunc = any(rterms.values()), any(rtruncs.values())
                    assert all(rterms[a] == rterm for a in agents) and all(rtruncs[a] == rtrunc for a in agents)
                np.testing.assert_array_equal(obs[rows], np.stack([robs[a] for a in agents]), err_msg=where)
                np.testing.assert_array_equal(rew[rows], np.array(rrew, dtype=np.float64), err_msg=where)
                assert (bool(term[i]), bool(trunc[i])) == (rterm, rtrunc), where
                np.testing.assert_array_equal(env.get_state(i), _world_state(ref), err_msg=where)
                done[i] = rterm or rtrunc
                ended += done[i]
    finally:
        env.close()
        for ref in refs:
            ref.close()
    return ended


@pytest.mark.parametrize("continuous", [False, True], ids=["discrete", "continuous"])
@pytest.mark.parametrize("task_id", IDS)
def test_alignment_with_mpe2(task_id, continuous):
    ended = 0
    for seed in (0, 1, 2024):
        ended += _align(task_id, seed, 120, continuous)
    assert ended >= 3 * 2 * 4  # every env went through several episodes (max_cycles 25)


@pytest.mark.parametrize("continuous", [False, True], ids=["discrete", "continuous"])
def test_alignment_config_keys(continuous):
    """mpe2's other constructor arguments: N, local_ratio, max_cycles, nearest-neighbor observations (fewer slots
    than entities, and more: zero padding), and terminate_on_success."""
    _align("MPE/simple_spread-v3", 3, 60, continuous, N=5, local_ratio=0.25, max_cycles=9)
    _align("MPE/simple_spread-v3", 4, 60, continuous, N=4, num_agent_neighbors=2, num_landmark_neighbors=6)
    _align("MPE/simple_spread-v3", 5, 60, continuous, N=1, terminate_on_success=True, max_cycles=40)
    _align("MPE/simple_reference-v3", 6, 60, continuous, local_ratio=0.9, max_cycles=11)
    _align("MPE/simple-v3", 7, 60, continuous, max_cycles=3)


def test_terminate_on_success_from_a_set_state():
    """An agent within 0.1 of every landmark ends the episode (terminated), as in mpe2, from the same state."""
    from mpe2 import simple_spread_v3

    env = pp.make("MPE/simple_spread-v3", env_type="gymnasium", num_envs=1, N=2, terminate_on_success=True, seed=8)
    ref = simple_spread_v3.parallel_env(N=2, terminate_on_success=True)
    try:
        env.reset()
        ref.reset(seed=8)
        world = ref.aec_env.unwrapped.world
        for agent, landmark in zip(world.agents, world.landmarks):
            agent.state.p_pos = landmark.state.p_pos + np.array([0.05, -0.03])
        env.set_state(0, _world_state(ref))
        obs, rew, term, trunc, _ = env.step(np.zeros(2, dtype=np.int32))
        robs, rrew, rterm, rtrunc, _ = ref.step({a: 0 for a in ref.possible_agents})
        assert bool(term[0]) and all(rterm.values()) and not trunc[0]
        np.testing.assert_array_equal(obs, np.stack([robs[a] for a in ref.possible_agents]))
        np.testing.assert_array_equal(rew, [rrew[a] for a in ref.possible_agents])
    finally:
        env.close()
        ref.close()


def test_reset_with_a_seed_reseeds_as_mpe2():
    """reset(seed=s) mid-run: env i starts mpe2's episode of seed s + i (the numpy generator is reseeded too)."""
    env = pp.make("MPE/simple_reference-v3", env_type="gymnasium", num_envs=2, seed=0)
    try:
        env.reset()
        env.step(np.arange(4, dtype=np.int32))
        obs, _ = env.reset(seed=77)
        for i in range(2):
            ref = _reference("MPE/simple_reference-v3")
            robs, _ = ref.reset(seed=77 + i)
            np.testing.assert_array_equal(obs[2 * i : 2 * i + 2], np.stack([robs[a] for a in ref.possible_agents]))
            np.testing.assert_array_equal(env.get_state(i), _world_state(ref))
            ref.close()
    finally:
        env.close()


@pytest.mark.parametrize("task_id", IDS)
def test_spaces_match_mpe2(task_id):
    for continuous in (False, True):
        env = pp.make(task_id, env_type="gymnasium", num_envs=2, continuous_actions=continuous)
        ref = _reference(task_id, continuous_actions=continuous)
        try:
            for agent in ref.possible_agents:
                assert env.single_observation_space.shape == ref.observation_space(agent).shape
                assert env.single_observation_space.dtype == np.float32
                rspace = ref.action_space(agent)
                if continuous:
                    assert env.single_action_space.shape == rspace.shape and env.single_action_space.dtype == np.float32
                    assert (env.single_action_space.low == 0).all() and (env.single_action_space.high == 1).all()
                else:
                    assert env.single_action_space.n == rspace.n
            assert env.spec.max_num_players == len(ref.possible_agents)
            _, info = env.reset()
            assert list(info["players"]["env_id"]) == [e for e in (0, 1) for _ in ref.possible_agents]
        finally:
            env.close()
            ref.close()


def test_ids_are_listed():
    assert set(IDS) <= set(pp.list_all_envs())


@pytest.mark.parametrize(
    "task_id, kwargs, words",
    [
        ("MPE/simple_spread-v3", {"N": 0}, "'N' must be in [1, 256]"),
        ("MPE/simple_spread-v3", {"N": 2**40}, "'N' must be in [1, 256]"),
        ("MPE/simple_spread-v3", {"local_ratio": 1.5}, "'local_ratio' must be in [0, 1]"),
        ("MPE/simple_reference-v3", {"local_ratio": -0.1}, "'local_ratio' must be in [0, 1]"),
        ("MPE/simple_spread-v3", {"num_agent_neighbors": -1}, "'num_agent_neighbors' must be in [0, 256]"),
        ("MPE/simple_spread-v3", {"num_landmark_neighbors": 300}, "'num_landmark_neighbors' must be in [0, 256]"),
        ("MPE/simple-v3", {"max_cycles": 0}, "'max_cycles' must be in [1,"),
        ("MPE/simple_spread-v3", {"max_num_players": 2}, "'max_num_players' must be 1 (the default) or 3"),
        ("MPE/simple-v3", {"N": 3}, "N"),  # simple has no N
    ],
)
def test_config_errors(task_id, kwargs, words):
    with pytest.raises(ValueError) as e:
        pp.make(task_id, num_envs=1, **kwargs)
    assert words in str(e.value)


def test_max_num_players_may_name_the_agent_count():
    env = pp.make("MPE/simple_spread-v3", num_envs=1, N=4, max_num_players=4)
    try:
        assert env.spec.max_num_players == 4
    finally:
        env.close()


@pytest.mark.parametrize("continuous", [False, True], ids=["discrete", "continuous"])
@pytest.mark.parametrize("task_id", IDS)
def test_snapshot_continues_bit_identically(task_id, continuous):
    """A snapshot taken mid-episode replays the same steps, through episode ends (whose resets draw from the
    numpy generator the snapshot holds)."""
    env = pp.make(task_id, env_type="gymnasium", num_envs=2, seed=11, max_cycles=6, continuous_actions=continuous)
    rng = np.random.default_rng(3)
    rows = 2 * env.spec.max_num_players
    actions = [_actions(rng, env, rows, continuous) for _ in range(24)]
    try:
        env.reset()
        for a in actions[:4]:
            env.step(a)
        snap = env.get_state([0, 1])
        first = [[np.copy(x) for x in env.step(a)[:4]] for a in actions[4:]]
        env.set_state([0, 1], snap)
        again = [[np.copy(x) for x in env.step(a)[:4]] for a in actions[4:]]
        for t, (x, y) in enumerate(zip(first, again)):
            for u, v in zip(x, y):
                np.testing.assert_array_equal(u, v, err_msg=f"step {t}")
        assert sum(int(x[3].sum()) for x in first) >= 4  # episodes ended after the snapshot
    finally:
        env.close()


def test_bad_states_are_refused_and_change_nothing():
    env = pp.make("MPE/simple_reference-v3", num_envs=1, seed=0)
    try:
        env.reset()
        before = env.get_state(0)
        bad = {
            "length": before[:-1],
            "goal": np.concatenate([before[:-1], [3.0]]),
            "fractional goal": np.concatenate([before[:-1], [0.5]]),
            "step count": np.concatenate([[26.0], before[1:]]),  # past max_cycles (25)
            "nan": np.concatenate([[0.0, np.nan], before[2:]]),
            "huge position": np.concatenate([[0.0, 1e300], before[2:]]),
        }
        for what, state in bad.items():
            with pytest.raises(ValueError, match="MPE state|not finite"):  # NaN: the engine refuses it first
                env.set_state(0, state)
            np.testing.assert_array_equal(env.get_state(0), before, err_msg=what)
    finally:
        env.close()


def test_same_trajectories_with_any_thread_count():
    runs = []
    for threads in (1, 2, 3):
        env = pp.make(
            "MPE/simple_spread-v3", env_type="gymnasium", num_envs=4, num_threads=threads, seed=9, max_cycles=10
        )
        rng = np.random.default_rng(0)
        try:
            steps = [np.copy(env.reset()[0])]
            for _ in range(30):  # the results' buffers are reused: copies
                steps.append([np.copy(x) for x in env.step(rng.integers(0, 5, size=12).astype(np.int32))[:4]])
        finally:
            env.close()
        runs.append(steps)
    for run in runs[1:]:
        np.testing.assert_array_equal(run[0], runs[0][0])
        for t, (x, y) in enumerate(zip(run[1:], runs[0][1:])):
            for u, v in zip(x, y):
                np.testing.assert_array_equal(u, v, err_msg=f"step {t}")
