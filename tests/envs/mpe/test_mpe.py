"""MPE family: step-by-step alignment with Farama's mpe2 1.1.1 (its pettingzoo parallel_env).

The C++ envs draw their resets from a bit-exact copy of numpy's PCG64 Generator in mpe2's order and compute the
physics, rewards and observations operation by operation as numpy does, so env i of a pool seeded s and mpe2's
parallel_env reset with seed s + i play the same episodes under the same actions: every observation (float32),
reward (float64), termination and truncation, and the world state behind them (positions, velocities, utterances),
is compared exactly, through autoresets (which continue the generator as mpe2's reset() without a seed does).
Scenarios whose agents differ pad each agent's observation row with zeros to the largest agent's size: the prefix is
compared with mpe2's observation, the rest with zeros.
"""

from __future__ import annotations

import importlib
import logging
import math

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
    "MPE/simple_adversary-v3": "simple_adversary_v3",
    "MPE/simple_push-v3": "simple_push_v3",
    "MPE/simple_tag-v3": "simple_tag_v3",
    "MPE/simple_speaker_listener-v4": "simple_speaker_listener_v4",
    "MPE/simple_crypto-v3": "simple_crypto_v3",
    "MPE/simple_world_comm-v3": "simple_world_comm_v3",
}
IDS = list(MODULES)

# numpy's float64 exp is Intel's SVML on AVX-512 CPUs, which rounds a few percent of results differently from libm's
# exp (numpy's own on other CPUs); the envs compute libm's. Only simple_tag's and simple_world_comm's penalty for a good
# agent past the screen edge (mpe2's bound(x): min(np.exp(2 * x - 2), 10) for |x| >= 1) calls it.
_PROBE = np.linspace(0.0, 2.4, 2001)
NUMPY_EXP_IS_LIBM = bool(np.all(np.exp(_PROBE) == np.array([math.exp(v) for v in _PROBE])))


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


def _goals(raw):
    """The landmarks mpe2's reset_world chose (goals, keys), as our state's scenario values."""
    world, name = raw.world, raw.metadata["name"]
    landmarks, agents = world.landmarks, world.agents
    if name == "simple_reference_v3":  # each agent's goal landmark
        return [landmarks.index(a.goal_b) for a in agents]
    if name in ("simple_adversary_v3", "simple_push_v3"):
        return [landmarks.index(agents[0].goal_a)]
    if name == "simple_speaker_listener_v4":
        return [landmarks.index(agents[0].goal_b)]
    if name == "simple_crypto_v3":  # the goal, and the landmark whose color is alice's key
        return [
            landmarks.index(agents[0].goal_a),
            next(i for i, lm in enumerate(landmarks) if lm.color is agents[2].key),
        ]
    return []


def _world_state(ref):
    """mpe2's world as our get_state(i) lays it out (the step count and the scenario's goals first and last)."""
    raw = ref.aec_env.unwrapped
    world = raw.world
    values = [float(raw.steps)]
    for e in world.agents + world.landmarks:
        values += [*e.state.p_pos, *e.state.p_vel]
    for a in world.agents:
        values += [float(x) for x in a.state.c]
    return np.array(values + [float(g) for g in _goals(raw)])


def _exp_rewards(raw):
    """The agents whose reward holds numpy's exp this step: good agents of simple_tag / simple_world_comm with a
    coordinate of magnitude 1 or more."""
    if raw.metadata["name"] not in ("simple_tag_v3", "simple_world_comm_v3"):
        return []
    return [j for j, a in enumerate(raw.world.agents) if not a.adversary and np.abs(a.state.p_pos).max() >= 1.0]


def _check_rewards(rew, rrew, loose, where):
    """Rewards equal exactly; where numpy's exp is not libm's, those of `loose` within a few ulps (of 10, exp's cap)."""
    rrew = np.array(rrew, dtype=np.float64)
    exact = [j for j in range(len(rrew)) if NUMPY_EXP_IS_LIBM or j not in loose]
    np.testing.assert_array_equal(rew[exact], rrew[exact], err_msg=where)
    np.testing.assert_allclose(rew, rrew, rtol=0, atol=1e-14, err_msg=where)


def _players(env):
    """The spec's player table: each agent's name, obs_size and action_size (its Discrete n or its Box's dim)."""
    return env.spec.engine_spec["players"]


def _actions(rng, env, num_envs, continuous):
    """Random actions for every agent of num_envs envs, each in its own range; continuous ones reach past [0, 1] so
    that clipping is exercised (and fill the padding past an agent's own values, which it must not read)."""
    space = env.single_action_space
    sizes = np.array([p["action_size"] for p in _players(env)] * num_envs)
    if continuous:
        return rng.uniform(-0.2, 1.2, size=(len(sizes), *space.shape)).astype(np.float32)
    return (rng.random(len(sizes)) * sizes).astype(np.int32)


def _check_obs(obs, robs, players, where):
    """Our padded rows against mpe2's per-agent observations: each agent's prefix equal, zeros after it."""
    for j, p in enumerate(players):
        k = p["obs_size"]
        np.testing.assert_array_equal(obs[j, :k], robs[p["name"]], err_msg=f"{where} {p['name']}")
        assert not obs[j, k:].any(), f"{where} {p['name']}: padding"


def _align(task_id, seed, steps, continuous, num_envs=2, **kwargs):
    """Our pool against one mpe2 parallel_env per env, step by step; returns (episodes ended, max |reward|)."""
    env = pp.make(task_id, env_type="gymnasium", num_envs=num_envs, seed=seed, continuous_actions=continuous, **kwargs)
    refs = [_reference(task_id, continuous_actions=continuous, **kwargs) for _ in range(num_envs)]
    agents = refs[0].possible_agents
    players = _players(env)
    assert [p["name"] for p in players] == agents
    n = len(agents)
    rng = np.random.default_rng(seed)
    ended = 0
    try:
        obs, info = env.reset()
        assert obs.shape == (num_envs * n, *env.single_observation_space.shape) and obs.dtype == np.float32
        np.testing.assert_array_equal(info["obs_size"], [p["obs_size"] for p in players] * num_envs)
        for i, ref in enumerate(refs):
            robs, _ = ref.reset(seed=seed + i)
            _check_obs(obs[i * n : (i + 1) * n], robs, players, f"{task_id} reset {i}")
            np.testing.assert_array_equal(env.get_state(i), _world_state(ref), err_msg=f"{task_id} reset {i}")
        done = [False] * num_envs
        for t in range(steps):
            actions = _actions(rng, env, num_envs, continuous)
            obs, rew, term, trunc, _ = env.step(actions)
            assert rew.dtype == np.float64
            for i, ref in enumerate(refs):
                where = f"{task_id} seed {seed} env {i} step {t}"
                rows = slice(i * n, (i + 1) * n)
                loose = []
                if done[i]:  # next-step autoreset: this step is the reset
                    robs, _ = ref.reset()
                    rrew, rterm, rtrunc = [0.0] * n, False, False
                else:
                    act = {
                        a: actions[i * n + j][: players[j]["action_size"]] if continuous else int(actions[i * n + j])
                        for j, a in enumerate(agents)
                    }
                    robs, rrews, rterms, rtruncs, _ = ref.step(act)
                    rrew = [rrews[a] for a in agents]
                    rterm, rtrunc = any(rterms.values()), any(rtruncs.values())
                    assert all(rterms[a] == rterm for a in agents) and all(rtruncs[a] == rtrunc for a in agents)
                    loose = _exp_rewards(ref.aec_env.unwrapped)
                _check_obs(obs[rows], robs, players, where)
                _check_rewards(rew[rows], rrew, loose, where)
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
    episodes = 4 if task_id in IDS[:3] else 2  # fewer steps for the bigger scenarios: mpe2's steps are slow
    ended = 0
    for seed in (0, 1, 2024):
        ended += _align(task_id, seed, 30 * episodes, continuous)
    assert ended >= 3 * 2 * episodes  # every env went through several episodes (max_cycles 25)


@pytest.mark.parametrize("continuous", [False, True], ids=["discrete", "continuous"])
def test_alignment_config_keys(continuous):
    """mpe2's other constructor arguments: N, local_ratio, max_cycles, nearest-neighbor observations (fewer slots
    than entities, and more: zero padding), and terminate_on_success."""
    _align("MPE/simple_spread-v3", 3, 60, continuous, N=5, local_ratio=0.25, max_cycles=9)
    _align("MPE/simple_spread-v3", 4, 60, continuous, N=4, num_agent_neighbors=2, num_landmark_neighbors=6)
    _align("MPE/simple_spread-v3", 5, 60, continuous, N=1, terminate_on_success=True, max_cycles=40)
    _align("MPE/simple_reference-v3", 6, 60, continuous, local_ratio=0.9, max_cycles=11)
    _align("MPE/simple-v3", 7, 60, continuous, max_cycles=3)


@pytest.mark.parametrize("continuous", [False, True], ids=["discrete", "continuous"])
def test_alignment_config_keys_of_different_agents(continuous):
    """The keys of the scenarios whose agents differ: agent, landmark, food and forest counts, nearest-neighbor
    observations (fewer slots than entities, and more), terminate_on_success."""
    _align("MPE/simple_adversary-v3", 8, 20, continuous, N=4, max_cycles=9)
    _align("MPE/simple_adversary-v3", 9, 20, continuous, N=3, num_agent_neighbors=2, num_landmark_neighbors=5)
    _align("MPE/simple_tag-v3", 10, 20, continuous, num_good=2, num_adversaries=2, num_obstacles=3)
    _align("MPE/simple_tag-v3", 11, 20, continuous, num_adversaries=0, num_obstacles=0, max_cycles=7)
    _align("MPE/simple_tag-v3", 12, 20, continuous, num_agent_neighbors=2, num_landmark_neighbors=4)
    _align("MPE/simple_tag-v3", 13, 20, continuous, num_good=1, num_adversaries=4, terminate_on_success=True)
    _align("MPE/simple_world_comm-v3", 14, 20, continuous, num_good=3, num_adversaries=2, num_food=1, num_forests=3)
    _align("MPE/simple_world_comm-v3", 15, 20, continuous, num_obstacles=0, num_forests=0, max_cycles=12)
    _align("MPE/simple_speaker_listener-v4", 16, 20, continuous, max_cycles=5)
    _align("MPE/simple_crypto-v3", 17, 20, continuous, max_cycles=4)


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
    """Every row has the largest agent's shapes; the player table holds each agent's own sizes, mpe2's."""
    for continuous in (False, True):
        env = pp.make(task_id, env_type="gymnasium", num_envs=2, continuous_actions=continuous)
        ref = _reference(task_id, continuous_actions=continuous)
        try:
            players = _players(env)
            assert [p["name"] for p in players] == ref.possible_agents
            assert env.single_observation_space.dtype == np.float32
            assert env.single_observation_space.shape == (max(p["obs_size"] for p in players),)
            for p in players:
                assert (p["obs_size"],) == ref.observation_space(p["name"]).shape
                rspace = ref.action_space(p["name"])
                assert p["action_size"] == (rspace.shape[0] if continuous else rspace.n)
            sizes = [p["action_size"] for p in players]
            if continuous:
                space = env.single_action_space
                assert space.shape == (max(sizes),) and space.dtype == np.float32
                assert (space.low == 0).all() and (space.high == 1).all()
            else:
                assert env.single_action_space.n == max(sizes)
            assert env.spec.max_num_players == len(ref.possible_agents)
            _, info = env.reset()
            assert list(info["players"]["env_id"]) == [e for e in (0, 1) for _ in ref.possible_agents]
            assert info["obs_size"].dtype == np.int32
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
        ("MPE/simple_adversary-v3", {"N": 0}, "'N' must be in [1, 256]"),
        ("MPE/simple_adversary-v3", {"num_landmark_neighbors": -2}, "'num_landmark_neighbors' must be in [0, 256]"),
        ("MPE/simple_tag-v3", {"num_good": 0}, "'num_good' must be in [1, 256]"),
        ("MPE/simple_tag-v3", {"num_adversaries": -1}, "'num_adversaries' must be in [0, 256]"),
        ("MPE/simple_tag-v3", {"num_obstacles": 257}, "'num_obstacles' must be in [0, 256]"),
        ("MPE/simple_world_comm-v3", {"num_adversaries": 0}, "'num_adversaries' must be in [1, 256]"),
        ("MPE/simple_world_comm-v3", {"num_food": 0}, "'num_food' must be in [1, 256]"),
        ("MPE/simple_world_comm-v3", {"num_forests": 2**40}, "'num_forests' must be in [0, 256]"),
        ("MPE/simple_push-v3", {"max_num_players": 3}, "'max_num_players' must be 1 (the default) or 2"),
        ("MPE/simple_crypto-v3", {"local_ratio": 0.5}, "local_ratio"),  # crypto has no local_ratio
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
    actions = [_actions(rng, env, 2, continuous) for _ in range(24)]
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


@pytest.mark.parametrize(
    "task_id, kwargs, goals",
    [
        ("MPE/simple_adversary-v3", {"N": 3}, {"goal past the landmarks": [3.0], "negative goal": [-1.0]}),
        ("MPE/simple_push-v3", {}, {"goal": [2.0]}),
        ("MPE/simple_speaker_listener-v4", {}, {"goal": [1.5]}),
        ("MPE/simple_crypto-v3", {}, {"goal": [2.0, 0.0], "key": [0.0, 2.0]}),
    ],
)
def test_bad_goals_of_different_agents_are_refused(task_id, kwargs, goals):
    """The goals (and crypto's key) the state ends with are landmark indices; the scenarios without any (simple_tag,
    simple_world_comm) refuse an extra value."""
    env = pp.make(task_id, num_envs=1, seed=0, **kwargs)
    try:
        env.reset()
        before = env.get_state(0)
        for what, values in goals.items():
            with pytest.raises(ValueError, match="MPE state: the (goal|key) landmark must be an integer in"):
                env.set_state(0, np.concatenate([before[: -len(values)], values]))
            np.testing.assert_array_equal(env.get_state(0), before, err_msg=what)
    finally:
        env.close()
    for task_id in ("MPE/simple_tag-v3", "MPE/simple_world_comm-v3"):
        env = pp.make(task_id, num_envs=1, seed=0)
        try:
            env.reset()
            with pytest.raises(ValueError, match="MPE state: expected"):
                env.set_state(0, np.concatenate([env.get_state(0), [0.0]]))
        finally:
            env.close()


def test_simple_tag_catch_from_a_set_state():
    """Adversaries touching the good agent: +10 per touching pair for every adversary, -10 per touch for the good
    agent, and terminate_on_success ends the episode (terminated), as in mpe2 from the same world."""
    from mpe2 import simple_tag_v3

    env = pp.make("MPE/simple_tag-v3", env_type="gymnasium", num_envs=1, terminate_on_success=True, seed=3)
    ref = simple_tag_v3.parallel_env(terminate_on_success=True)
    try:
        env.reset()
        ref.reset(seed=3)
        world = ref.aec_env.unwrapped.world
        prey = world.agents[3]
        for k, adversary in enumerate(world.agents[:2]):  # two of the three adversaries on the prey
            adversary.state.p_pos = prey.state.p_pos + np.array([0.05, -0.04 * k])
        env.set_state(0, _world_state(ref))
        obs, rew, term, trunc, _ = env.step(np.zeros(4, dtype=np.int32))
        robs, rrew, rterm, _, _ = ref.step({a: 0 for a in ref.possible_agents})
        assert bool(term[0]) and all(rterm.values()) and not trunc[0]
        assert list(rrew.values())[:3] == [20.0, 20.0, 20.0] and rrew["agent_0"] <= -20.0
        _check_obs(obs, robs, _players(env), "caught")
        _check_rewards(rew, list(rrew.values()), _exp_rewards(ref.aec_env.unwrapped), "caught")
    finally:
        env.close()
        ref.close()


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


@pytest.mark.parametrize(
    "task_id, row, action, words",
    [
        (
            "MPE/simple_speaker_listener-v4",
            0,
            3,
            "'speaker_0' (player row 0) takes Discrete(3) actions, in [0, 3), got 3",
        ),
        (
            "MPE/simple_speaker_listener-v4",
            0,
            4,
            "'speaker_0' (player row 0) takes Discrete(3) actions, in [0, 3), got 4",
        ),
        ("MPE/simple_world_comm-v3", 1, 5, "'adversary_0' (player row 1) takes Discrete(5) actions, in [0, 5), got 5"),
    ],
)
def test_an_action_past_its_agents_own_range_is_refused(task_id, row, action, words):
    """Every row takes Discrete(largest n); an agent given an action past its own n raises an EnvError naming it
    (mpe2 asserts the action is in the agent's space), before the world changes."""
    env = pp.make(task_id, env_type="gymnasium", num_envs=2, seed=4)
    try:
        env.reset()
        before = [env.get_state(i) for i in range(2)]
        actions = np.zeros(2 * env.spec.max_num_players, dtype=np.int32)
        actions[env.spec.max_num_players + row] = action  # env 1's agent
        with pytest.raises(pp.EnvError) as e:
            env.step(actions)
        assert words in str(e.value) and list(e.value.env_ids) == [1]
        np.testing.assert_array_equal(env.get_state(1), before[1])  # the world did not move
    finally:
        env.close()


@pytest.mark.parametrize("task_id", IDS)
def test_pettingzoo_single_env_has_mpe2s_agents(task_id):
    """The PettingZoo face gives each agent mpe2's name, spaces and observations (its rows sliced back), takes each
    agent's own action shape, and passes PettingZoo's parallel_api_test and parallel_seed_test."""
    from pettingzoo.test import parallel_api_test, parallel_seed_test

    for continuous in (False, True):
        view = pp.make_pettingzoo(task_id, view="single", num_envs=1, continuous_actions=continuous, seed=0)
        ref = _reference(task_id, continuous_actions=continuous)
        try:
            assert view.possible_agents == ref.possible_agents
            for a in ref.possible_agents:
                ours, theirs = view.observation_space(a), ref.observation_space(a)
                assert (ours.shape, ours.dtype) == (theirs.shape, theirs.dtype)
                ours, theirs = view.action_space(a), ref.action_space(a)
                assert type(ours) is type(theirs) and ours.shape == theirs.shape
                assert continuous or ours.n == theirs.n
            obs, _ = view.reset(seed=21)
            robs, _ = ref.reset(seed=21)
            rng = np.random.default_rng(0)
            for t in range(8):
                for a in ref.possible_agents:
                    np.testing.assert_array_equal(obs[a], robs[a], err_msg=f"{task_id} step {t} {a}")
                spaces = {a: ref.action_space(a) for a in ref.possible_agents}
                if continuous:
                    actions = {a: rng.uniform(-0.2, 1.2, v.shape).astype(np.float32) for a, v in spaces.items()}
                else:
                    actions = {a: int(rng.integers(v.n)) for a, v in spaces.items()}
                obs, rew, _, _, _ = view.step(actions)
                robs, rrew, _, _, _ = ref.step(actions)
                agents = ref.possible_agents
                loose = _exp_rewards(ref.aec_env.unwrapped)
                _check_rewards(np.array([rew[a] for a in agents]), [rrew[a] for a in agents], loose, f"step {t}")
            parallel_api_test(view, num_cycles=30)
        finally:
            view.close()
            ref.close()
        kw = dict(view="single", num_envs=1, continuous_actions=continuous)
        parallel_seed_test(lambda kw=kw: pp.make_pettingzoo(task_id, **kw), num_cycles=30)


def test_pettingzoo_batched_face_slices_and_pads_each_agents_rows():
    """The batched PettingZoo pool: each agent's observations sliced to its own size, its own action shape taken (and
    padded for the engine, a wider one refused), the same episode as the gymnasium face's padded rows."""
    kw = dict(num_envs=3, continuous_actions=True, seed=5)
    env = pp.make("MPE/simple_speaker_listener-v4", env_type="pettingzoo", **kw)
    rows = pp.make("MPE/simple_speaker_listener-v4", env_type="gymnasium", **kw)
    rng = np.random.default_rng(1)
    try:
        obs, _ = env.reset()
        robs, _ = rows.reset()
        for t in range(30):
            assert obs["speaker_0"].shape == (3, 3) and obs["listener_0"].shape == (3, 11)
            np.testing.assert_array_equal(obs["speaker_0"], robs[0::2, :3], err_msg=f"step {t}")
            np.testing.assert_array_equal(obs["listener_0"], robs[1::2], err_msg=f"step {t}")
            speaker = rng.uniform(-0.2, 1.2, (3, 3)).astype(np.float32)
            listener = rng.uniform(-0.2, 1.2, (3, 5)).astype(np.float32)
            padded = np.stack([np.pad(speaker, ((0, 0), (0, 2))), listener], axis=1).reshape(6, 5)
            obs, rew, *_ = env.step({"speaker_0": speaker, "listener_0": listener})
            robs, rrew, *_ = rows.step(padded)
            np.testing.assert_array_equal(np.stack([rew["speaker_0"], rew["listener_0"]], axis=1).ravel(), rrew)
        with pytest.raises(ValueError, match=r"actions\['speaker_0'\] must have shape \(3, 3\)"):
            env.step({"speaker_0": np.zeros((3, 5), np.float32), "listener_0": np.zeros((3, 5), np.float32)})
    finally:
        env.close()
        rows.close()
