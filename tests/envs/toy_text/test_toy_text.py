"""Toy text family: alignment with gymnasium (FrozenLake, Taxi, CliffWalking, Blackjack) and EnvPool (Catch, NChain,
and the draw streams of the others), transition by transition where deterministic and by distribution where not.

Deterministic transitions are checked over the complete (state, action) table (our env is put in each state with
set_state, the reference's table `env.unwrapped.P` says what must happen) and along trajectories with episode limits.
Stochastic transitions are checked with chi-square / binomial bounds over enough samples that a wrong table fails;
each statistical test also shows that the same counts reject a plausible wrong table, so the test has the power it
claims.
"""

from __future__ import annotations

import math
from collections import Counter

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.toy_text.blackjack import BlackjackEnv as GymBlackjack
from gymnasium.envs.toy_text.cliffwalking import CliffWalkingEnv as GymCliffWalking
from gymnasium.envs.toy_text.frozen_lake import FrozenLakeEnv as GymFrozenLake
from gymnasium.envs.toy_text.taxi import TaxiEnv as GymTaxi

import parallel_pool as pp

IDS = ["Catch-v0", "FrozenLake-v1", "FrozenLake8x8-v1", "Taxi-v3", "NChain-v0", "CliffWalking-v0", "Blackjack-v1"]
# gymnasium 1.4's CliffWalking-v1 ids and its functional (jax) tabular envs, on the same env types (as EnvPool has them)
IDS += ["CliffWalking-v1", "CliffWalkingSlippery-v1", "tabular/CliffWalking-v0", "tabular/Blackjack-v0"]


# ---------------------------------------------------------------------------------------------------------------
# statistics helpers
def chi2_critical(df: int, z: float = 5.0) -> float:
    """Upper quantile of chi-square(df) at standard-normal z (Wilson-Hilferty); z=5 is p ~ 3e-7."""
    a = 2.0 / (9.0 * df)
    return df * (1.0 - a + z * math.sqrt(a)) ** 3


def chi2_test(counts: dict, probs: dict) -> tuple[float, int, int]:
    """counts: {(key, outcome): n}; probs: {key: {outcome: p}}. Returns (statistic, df, impossible), where
    impossible counts samples of outcomes the table gives probability 0."""
    stat, df, impossible = 0.0, 0, 0
    per_key: dict = {}
    for (key, outcome), n in counts.items():
        per_key.setdefault(key, {})[outcome] = n
    for key, obs in per_key.items():
        total = sum(obs.values())
        p = probs[key]
        impossible += sum(n for o, n in obs.items() if p.get(o, 0.0) == 0.0)
        support = [o for o, q in p.items() if q > 0]
        for o in support:
            e = total * p[o]
            stat += (obs.get(o, 0) - e) ** 2 / e
        df += len(support) - 1
    return stat, df, impossible


def assert_fits(counts, probs, wrong_probs=None):
    stat, df, impossible = chi2_test(counts, probs)
    assert impossible == 0, f"{impossible} samples of transitions the reference table rules out"
    if df > 0:
        assert stat < chi2_critical(df), f"chi2 {stat:.1f} with df {df} (critical {chi2_critical(df):.1f})"
    if wrong_probs is not None:  # the same samples must reject a wrong table
        w_stat, w_df, w_imp = chi2_test(counts, wrong_probs)
        assert w_imp > 0 or w_stat > chi2_critical(max(w_df, 1)), "the test cannot tell the wrong table apart"


def table_probs(P: dict) -> dict:
    """gymnasium's P[s][a] = [(p, s', r, term), ...] -> {(s, a): {(s', r, term): p}} (outcomes merged)."""
    out = {}
    for s, row in P.items():
        for a, trans in row.items():
            d: dict = {}
            for p, s2, r, t in trans:
                key = (int(s2), float(r), bool(t))
                d[key] = d.get(key, 0.0) + p
            out[(s, a)] = d
    return out


# ---------------------------------------------------------------------------------------------------------------
# driving our envs from given states
def sweep(env, pairs, rounds=1):
    """Put env i in state pairs[i][0], step it with action pairs[i][1], `rounds` times.
    Yields (i, obs, reward, terminated, truncated, info) per env per round."""
    n = len(pairs)
    actions = np.array([a for _, a in pairs], dtype=np.int32)
    env.reset()
    for _ in range(rounds):
        for i, (s, _) in enumerate(pairs):
            env.set_state(i, np.atleast_1d(s))
        obs, rew, term, trunc, info = env.step(actions)
        yield obs, rew, term, trunc, info
        done = np.flatnonzero(term | trunc)
        if len(done):  # next-step autoreset is pending there: take it now so set_state sticks
            env.reset(env_id=done.astype(np.int32))
        assert len(obs) == n


def check_table(task, ref_P, n_states, n_actions, **kwargs):
    """Every (state, action) of the reference table, deterministic: obs, reward, terminated exactly."""
    pairs = [(s, a) for s in range(n_states) for a in range(n_actions)]
    env = pp.make(task, num_envs=len(pairs), **kwargs)
    obs, rew, term, trunc, _ = next(sweep(env, pairs))
    for i, (s, a) in enumerate(pairs):
        ((p, s2, r, t),) = ref_P[s][a]
        assert p == 1.0
        assert (obs[i], rew[i], term[i]) == (s2, r, t), (task, s, a)
        assert not trunc[i]
    env.close()


def greedy_policy(P: dict, n_states: int, n_actions: int, gamma=0.95, iters=300) -> np.ndarray:
    """Value iteration on the reference's table (expected values), for trajectories that reach goals."""
    k = max(len(P[s][a]) for s in range(n_states) for a in range(n_actions))
    prob, nxt, rew, term = (np.zeros((n_states, n_actions, k)) for _ in range(4))
    for s in range(n_states):
        for a in range(n_actions):
            for j, (p, s2, r, t) in enumerate(P[s][a]):
                prob[s, a, j], nxt[s, a, j], rew[s, a, j], term[s, a, j] = p, s2, r, t
    nxt = nxt.astype(int)
    v = np.zeros(n_states)
    for _ in range(iters):
        q = (prob * (rew + gamma * (1 - term) * v[nxt])).sum(-1)
        v = q.max(1)
    return q.argmax(1)


def run_aligned(ours, ref, choose, n_steps, sync=None, seed=0):
    """Step our 1-env pool and a gymnasium env with the same actions; compare every step, through episode ends and
    resets. `sync(ref, obs)` puts the reference in our reset state (random starts). Returns outcome counts."""
    rng = np.random.default_rng(seed)
    obs, info = ours.reset()
    ref_obs, _ = ref.reset(seed=seed)
    if sync:
        ref_obs = sync(ref, obs[0])
    np.testing.assert_array_equal(obs[0], ref_obs)
    stats = Counter()
    episode = 0
    for _ in range(n_steps):
        a = choose(rng, obs[0], episode)
        obs, rew, term, trunc, info = ours.step(np.array([a], dtype=np.int32))
        ref_obs, ref_rew, ref_term, ref_trunc, _ = ref.step(a)
        np.testing.assert_array_equal(obs[0], np.asarray(ref_obs))
        assert rew[0] == ref_rew
        assert term[0] == ref_term
        # gymnasium's TimeLimit also flags truncation on a terminating last step; ours reports termination only
        assert trunc[0] == (ref_trunc and not ref_term)
        if ref_term or ref_trunc:
            stats["terminated" if ref_term else "truncated"] += 1
            stats[("reward", float(ref_rew))] += 1
            obs, rew, term, trunc, info = ours.step(np.array([0], dtype=np.int32))  # next-step autoreset
            assert rew[0] == 0 and not term[0] and not trunc[0] and info["elapsed_step"][0] == 0
            ref_obs, _ = ref.reset()
            if sync:
                ref_obs = sync(ref, obs[0])
            np.testing.assert_array_equal(obs[0], ref_obs)
            episode += 1
    return stats


def set_s(ref, obs):
    ref.unwrapped.s = int(obs)
    return int(obs)


# ---------------------------------------------------------------------------------------------------------------
# registry, spaces, config keys (EnvPool's)
def test_all_ids_registered():
    assert set(IDS) <= set(pp.list_all_envs())


@pytest.mark.parametrize("task", IDS)
def test_spaces_and_config_match_envpool(task):
    envpool = pytest.importorskip("envpool")
    ref = envpool.make_spec(task)
    ours = pp.make_spec(task)
    assert ours.observation_space == ref.observation_space
    assert ours.action_space == ref.action_space
    ref_cfg = ref.config._asdict()
    ours_cfg = ours.config._asdict()
    for key, value in ref_cfg.items():
        if key in ("base_path", "env_seed", "gym_reset_return_info", "batch_size"):
            continue
        assert key in ours_cfg, key
        assert ours_cfg[key] == value, (key, ours_cfg[key], value)
    env = pp.make(task, num_envs=2, env_type="gymnasium")
    obs, info = env.reset()
    assert env.single_observation_space.contains(obs[0])
    ref_env = envpool.make_gymnasium(task, num_envs=2)
    _, ref_info = ref_env.reset()
    assert set(ref_info) <= set(info), (set(ref_info), set(info))


@pytest.mark.parametrize("task", IDS)
def test_front_ends(task):
    spec = pp.make_spec(task)
    for env_type in ("gym", "dm"):
        env = pp.make(task, env_type=env_type, num_envs=3)
        env.reset()
        out = env.step(np.zeros(3, dtype=np.int32))
        assert out is not None
        env.close()
    # async mode: every env answers, ids as given
    env = pp.make(task, num_envs=4, batch_size=2)
    env.async_reset()
    seen = []
    for _ in range(6):
        obs, rew, term, trunc, info = env.recv()
        assert all(spec.observation_space.contains(o) for o in obs)
        seen.extend(info["env_id"].tolist())
        env.send(np.ones(2, dtype=np.int32), info["env_id"])
    assert set(seen) == {0, 1, 2, 3}


def test_bad_config():
    with pytest.raises(ValueError, match="size"):
        pp.make("FrozenLake-v1", size=5)
    with pytest.raises(ValueError, match="success_rate"):
        pp.make("FrozenLake-v1", success_rate=1.5)
    with pytest.raises(ValueError, match="height"):
        pp.make("Catch-v0", height=1)


@pytest.mark.parametrize(
    "task,key,value,allowed",
    [
        ("FrozenLake-v1", "size", 2**32 + 4, "4 or 8"),  # would wrap to a valid 4 if narrowed first
        ("Catch-v0", "height", 2**32 + 10, r"\[2, 4096\]"),
        ("Catch-v0", "width", -(2**32) + 5, r"\[1, 4096\]"),
        ("Catch-v0", "width", 5000, r"\[1, 4096\]"),
    ],
)
def test_size_keys_are_range_checked_before_narrowing(task, key, value, allowed):
    with pytest.raises(ValueError, match=f"'{key}' must be (in )?{allowed}, got {value}"):
        pp.make_spec(task, **{key: value})


def test_bad_set_state():
    env = pp.make("Taxi-v3")
    with pytest.raises(ValueError):
        env.set_state(0, [500])
    for task, n in (("Taxi-v3", 500), ("FrozenLake-v1", 16), ("CliffWalking-v0", 48)):
        env = pp.make(task)
        for bad in ([3.5], [float("nan")], [-1], [n], [2.0**40], [1, 2]):
            # NaN is refused by the engine for every env (not finite), the rest by the env's own index check
            with pytest.raises(ValueError, match=r"not finite|one integer index in \[0, " + str(n)):
                env.set_state(0, bad)
        env.set_state(0, [n - 1])
        assert env.get_state(0)[0] == n - 1
    env = pp.make("Blackjack-v1")
    with pytest.raises(ValueError):
        env.set_state(0, [2, 1, 11, 2, 10, 10])


# ---------------------------------------------------------------------------------------------------------------
# FrozenLake
@pytest.mark.parametrize("task,map_name", [("FrozenLake-v1", "4x4"), ("FrozenLake8x8-v1", "8x8")])
def test_frozen_lake_table_not_slippery(task, map_name):
    ref = GymFrozenLake(map_name=map_name, is_slippery=False)
    check_table(task, ref.P, ref.observation_space.n, 4, is_slippery=False)


@pytest.mark.parametrize("task,limit", [("FrozenLake-v1", 100), ("FrozenLake8x8-v1", 200)])
def test_frozen_lake_trajectories_not_slippery(task, limit):
    ours = pp.make(task, is_slippery=False)
    ref = gym.make(task, is_slippery=False)
    assert ref.spec.max_episode_steps == limit == ours.spec.max_episode_steps
    n = ref.observation_space.n
    policy = greedy_policy(ref.unwrapped.P, n, 4)

    def choose(rng, obs, episode):
        mode = episode % 3
        if mode == 0:  # mostly greedy: reaches the goal
            return int(policy[obs]) if rng.random() > 0.1 else int(rng.integers(4))
        if mode == 1:  # mostly pushing into the top-left walls: runs into the time limit
            return int(rng.choice(4, p=[0.48, 0.02, 0.02, 0.48]))
        return int(rng.integers(4))  # random: falls into holes

    stats = run_aligned(ours, ref, choose, 6 * limit)
    assert stats["truncated"] >= 1 and stats[("reward", 1.0)] >= 1 and stats[("reward", 0.0)] >= 1, stats


@pytest.mark.parametrize(
    "task,map_name,success_rate",
    [("FrozenLake-v1", "4x4", 1 / 3), ("FrozenLake8x8-v1", "8x8", 1 / 3), ("FrozenLake-v1", "4x4", 0.6)],
)
def test_frozen_lake_slippery_distribution(task, map_name, success_rate):
    ref = GymFrozenLake(map_name=map_name, is_slippery=True, success_rate=success_rate)
    n = ref.observation_space.n
    # a wrong table: the second slip goes backwards instead of to the other side
    straight = GymFrozenLake(map_name=map_name, is_slippery=False).P
    fail = (1 - success_rate) / 2
    wrong_P = {
        s: {
            a: [
                (success_rate, *straight[s][a][0][1:]),
                (fail, *straight[s][(a - 1) % 4][0][1:]),
                (fail, *straight[s][(a + 2) % 4][0][1:]),
            ]
            for a in range(4)
        }
        for s in ref.P
    }
    pairs = [(s, a) for s in range(n) for a in range(4)]
    env = pp.make(task, num_envs=len(pairs), success_rate=success_rate, seed=7)
    counts = Counter()
    for obs, rew, term, _, _ in sweep(env, pairs, rounds=240):
        for i, (s, a) in enumerate(pairs):
            counts[((s, a), (int(obs[i]), float(rew[i]), bool(term[i])))] += 1
    assert_fits(counts, table_probs(ref.P), table_probs(wrong_P))


def test_frozen_lake_matches_envpool_streams():
    """Default (slippery, success_rate 1/3): the slip is drawn as EnvPool draws it, so trajectories are EnvPool's."""
    envpool = pytest.importorskip("envpool")
    for task, map_name in (("FrozenLake-v1", "4x4"), ("FrozenLake8x8-v1", "8x8")):
        ref = GymFrozenLake(map_name=map_name)
        policy = greedy_policy(ref.P, ref.observation_space.n, 4, gamma=0.99, iters=100)
        compare_with_envpool(envpool, task, num_envs=32, steps=600, policy=policy)


def assert_same_as_envpool(x, y, mask=slice(None), limit=None):
    """Our step output x vs EnvPool's y. EnvPool reports a termination on the step that also hits the episode limit
    as truncation; ours (and gymnasium's) reports it as a termination."""
    for u, v in zip(x[:2], y[:2]):
        np.testing.assert_array_equal(u[mask], v[mask])
    term, trunc, ref_term, ref_trunc = x[2][mask], x[3][mask], y[2][mask], y[3][mask]
    np.testing.assert_array_equal(term | trunc, ref_term | ref_trunc)
    differ = term != ref_term
    if differ.any():
        assert limit is not None and (x[4]["elapsed_step"][mask][differ] == limit).all()
        assert term[differ].all() and ref_trunc[differ].all() and not trunc[differ].any()
    for key in y[4]:
        if key != "players":
            np.testing.assert_array_equal(x[4][key][mask], y[4][key][mask], err_msg=key)


def compare_with_envpool(envpool, task, num_envs, steps, seed=3, need_done=True, policy=None, **kwargs):
    """Step ours and EnvPool with the same seed and actions (random, or policy[obs] 70% of the time)."""
    ours = pp.make(task, num_envs=num_envs, seed=seed, **kwargs)
    ref = envpool.make_gymnasium(task, num_envs=num_envs, seed=seed, **kwargs)
    n_actions = ours.single_action_space.n
    rng = np.random.default_rng(seed)
    o1, _ = ours.reset()
    o2, _ = ref.reset()
    np.testing.assert_array_equal(o1, o2)
    dones = 0
    rewards = Counter()
    for _ in range(steps):
        a = rng.integers(0, n_actions, num_envs).astype(np.int32)
        if policy is not None:
            a = np.where(rng.random(num_envs) < 0.7, policy[o1], a).astype(np.int32)
        x, y = ours.step(a), ref.step(a)
        assert_same_as_envpool(x, y, limit=ours.spec.max_episode_steps)
        o1 = x[0]
        dones += int((x[2] | x[3]).sum())
        rewards.update(x[1].tolist())
    assert dones > 0 or not need_done
    assert len(rewards) > 1
    return dones


# ---------------------------------------------------------------------------------------------------------------
# Taxi
def test_taxi_table():
    ref = GymTaxi()
    check_table("Taxi-v3", ref.P, 500, 6)


def test_taxi_trajectories():
    ours = pp.make("Taxi-v3", seed=1)
    ref = gym.make("Taxi-v4")  # gymnasium 1.4's Taxi; its dry dynamics are v3's
    assert ref.spec.max_episode_steps == 200 == ours.spec.max_episode_steps
    policy = greedy_policy(ref.unwrapped.P, 500, 6, iters=60)

    def choose(rng, obs, episode):
        if episode % 2 == 0:
            return int(policy[obs]) if rng.random() > 0.2 else int(rng.integers(6))
        return int(rng.integers(6))

    stats = run_aligned(ours, ref, choose, 2500, sync=set_s)
    assert stats["truncated"] >= 2 and stats[("reward", 20.0)] >= 5, stats


def test_taxi_reset_distribution():
    """Uniform over the 300 states with the passenger at a stand other than the destination (gymnasium's)."""
    n = 15000
    env = pp.make("Taxi-v3", num_envs=n, seed=11)
    obs, _ = env.reset()
    probs = GymTaxi().initial_state_distrib
    assert probs[obs].min() > 0, "a start state gymnasium never uses"
    counts = Counter(((0,), int(s)) for s in obs)
    support = np.flatnonzero(probs)
    assert len(support) == 300
    ref = {(0,): {int(s): probs[s] for s in range(500)}}
    # wrong: EnvPool's draw, which also starts with the passenger at the destination
    wrong = {
        (0,): {
            ((r * 5 + c) * 5 + p) * 4 + d: 1 / 400
            for r in range(5)
            for c in range(5)
            for p in range(4)
            for d in range(4)
        }
    }
    weights = {int(s): (1.3 if s < 250 else 0.7) for s in support}  # a non-uniform start
    tilted = {(0,): {s: w / sum(weights.values()) for s, w in weights.items()}}
    assert_fits(counts, ref, tilted)
    assert chi2_test(counts, wrong)[0] > chi2_critical(399)


def test_taxi_matches_envpool_until_its_invalid_start():
    """Same draws as EnvPool: identical until EnvPool starts an episode with passenger == destination."""
    envpool = pytest.importorskip("envpool")
    n = 64
    ours = pp.make("Taxi-v3", num_envs=n, seed=5)
    ref = envpool.make_gymnasium("Taxi-v3", num_envs=n, seed=5)
    o1, _ = ours.reset()
    o2, _ = ref.reset()
    alive = (o2 // 4) % 5 != o2 % 4
    assert alive.sum() > n // 2
    np.testing.assert_array_equal(o1[alive], o2[alive])
    rng = np.random.default_rng(0)
    compared = resets = 0
    for _ in range(1500):
        a = rng.integers(0, 6, n).astype(np.int32)
        x, y = ours.step(a), ref.step(a)
        reset = y[4]["elapsed_step"] == 0
        alive &= ~(reset & ((y[0] // 4) % 5 == y[0] % 4))
        assert_same_as_envpool(x, y, alive, limit=200)
        compared += int(alive.sum())
        resets += int((alive & reset).sum())
    assert compared > 15000 and resets > 20


# ---------------------------------------------------------------------------------------------------------------
# CliffWalking
def test_cliff_walking_table():
    ref = GymCliffWalking()
    check_table("CliffWalking-v0", ref.P, 48, 4)


def tabular_cliff_walking(max_episode_steps):
    """gymnasium's functional CliffWalking, which takes its action as an int32 array of shape (1,)."""
    ref = gym.make("tabular/CliffWalking-v0", max_episode_steps=max_episode_steps)
    return gym.wrappers.TransformAction(ref, lambda a: np.array([a], np.int32), gym.spaces.Discrete(4))


@pytest.mark.parametrize(
    "task,make_ref",
    [
        ("CliffWalking-v0", lambda n: gym.make("CliffWalking-v1", max_episode_steps=n)),
        ("CliffWalking-v1", lambda n: gym.make("CliffWalking-v1", max_episode_steps=n)),
        ("tabular/CliffWalking-v0", tabular_cliff_walking),
    ],
)
def test_cliff_walking_trajectories(task, make_ref):
    ours = pp.make(task, max_episode_steps=60)
    ref = make_ref(60)
    policy = greedy_policy(GymCliffWalking().P, 48, 4, iters=100)

    def choose(rng, obs, episode):
        eps = 0.05 if episode % 2 == 0 else 1.0
        return int(policy[obs]) if rng.random() > eps else int(rng.integers(4))

    stats = run_aligned(ours, ref, choose, 1500)
    assert stats["truncated"] >= 2 and stats["terminated"] >= 5, stats


@pytest.mark.parametrize("task,kwargs", [("CliffWalking-v0", {"is_slippery": True}), ("CliffWalkingSlippery-v1", {})])
def test_cliff_walking_slippery_distribution(task, kwargs):
    ref = GymCliffWalking(is_slippery=True)
    straight = GymCliffWalking(is_slippery=False)
    # wrong: slips twice as likely to the left-hand side as to the right-hand side
    wrong_P = {
        s: {a: [(p * w, *rest) for (p, *rest), w in zip(row[a], (4 / 3, 1.0, 2 / 3))] for a in range(4)}
        for s, row in ref.P.items()
    }
    pairs = [(s, a) for s in range(48) for a in range(4)]
    env = pp.make(task, num_envs=len(pairs), seed=9, **kwargs)
    counts = Counter()
    for obs, rew, term, _, info in sweep(env, pairs, rounds=300):
        np.testing.assert_allclose(info["prob"], 1 / 3, rtol=1e-6)
        for i, (s, a) in enumerate(pairs):
            counts[((s, a), (int(obs[i]), float(rew[i]), bool(term[i])))] += 1
    assert_fits(counts, table_probs(ref.P), table_probs(wrong_P))
    assert chi2_test(counts, table_probs(straight.P))[2] > 0
    not_slippery = pp.make("CliffWalking-v0")
    _, info = not_slippery.reset()
    assert info["prob"][0] == 1.0


@pytest.mark.parametrize(
    "task,kwargs",
    [
        ("CliffWalking-v0", {"is_slippery": False}),
        ("CliffWalking-v0", {"is_slippery": True}),
        ("CliffWalkingSlippery-v1", {}),
        ("tabular/CliffWalking-v0", {}),
    ],
)
def test_cliff_walking_matches_envpool(task, kwargs):
    envpool = pytest.importorskip("envpool")
    # a random walk rarely reaches the goal (and EnvPool's CliffWalking ignores max_episode_steps, ours honours it:
    # test_cliff_walking_trajectories), but it falls into the cliff often
    compare_with_envpool(envpool, task, num_envs=16, steps=800, need_done=False, **kwargs)


def test_cliff_walking_v1_ids():
    assert not pp.make_spec("CliffWalking-v1").config.is_slippery
    assert pp.make_spec("CliffWalkingSlippery-v1").config.is_slippery
    assert not pp.make_spec("tabular/CliffWalking-v0").config.is_slippery


# ---------------------------------------------------------------------------------------------------------------
# Catch (EnvPool's)
def catch_model(state, action, height, width):
    """The rules of EnvPool's Catch (bsuite): paddle moves action - 1, clamped; ball falls one row."""
    row, col, paddle = state
    paddle = min(max(paddle + action - 1, 0), width - 1)
    row += 1
    done = row == height - 1
    reward = (1.0 if col == paddle else -1.0) if done else 0.0
    board = np.zeros((height, width), np.float32)
    board[row, col] = 1
    board[height - 1, paddle] = 1
    return (row, col, paddle), board, reward, done


@pytest.mark.parametrize("height,width", [(10, 5), (6, 7)])
def test_catch_rules(height, width):
    pairs = [((r, c, p), a) for r in range(height - 1) for c in range(width) for p in range(width) for a in range(3)]
    env = pp.make("Catch-v0", num_envs=len(pairs), height=height, width=width)
    obs, rew, term, trunc, _ = next(sweep(env, pairs))
    for i, (s, a) in enumerate(pairs):
        _, board, reward, done = catch_model(s, a, height, width)
        np.testing.assert_array_equal(obs[i], board)
        assert (rew[i], term[i], trunc[i]) == (reward, done, False)
    # the start: ball on the top row at a uniform column, paddle in the middle
    n = 5000
    env = pp.make("Catch-v0", num_envs=n, height=height, width=width, seed=2)
    obs, _ = env.reset()
    assert (obs[:, 1:-1] == 0).all() and (obs[:, -1].argmax(1) == width // 2).all() and (obs.sum((1, 2)) == 2).all()
    counts = Counter(((0,), int(c)) for c in obs[:, 0].argmax(1))
    assert_fits(
        counts,
        {(0,): {c: 1 / width for c in range(width)}},
        {(0,): {c: (1.5 if c == 0 else 1.0) / (width + 0.5) for c in range(width)}},
    )


@pytest.mark.parametrize("kwargs", [{}, {"height": 6, "width": 7}])
def test_catch_matches_envpool(kwargs):
    envpool = pytest.importorskip("envpool")
    dones = compare_with_envpool(envpool, "Catch-v0", num_envs=32, steps=200, **kwargs)
    assert dones >= 32 * 10


# ---------------------------------------------------------------------------------------------------------------
# NChain (EnvPool's)
def test_nchain_matches_envpool():
    envpool = pytest.importorskip("envpool")
    # 1200 steps cross the 1000-step limit: truncation and the reset after it are compared too
    dones = compare_with_envpool(envpool, "NChain-v0", num_envs=8, steps=1200)
    assert dones == 8


def test_nchain_slip_distribution():
    """From each state and action: the intended move with probability 0.8, the other one with 0.2."""
    pairs = [(s, a) for s in range(5) for a in range(2)] * 200
    env = pp.make("NChain-v0", num_envs=len(pairs), seed=4)

    def outcome(s, a):  # the deterministic part (gym's NChain rules): (next state, reward)
        if a == 1:
            return 0, 2.0
        return (s + 1, 0.0) if s < 4 else (4, 10.0)

    probs = {(s, a): {outcome(s, a): 0.8, outcome(s, 1 - a): 0.2} for s in range(5) for a in range(2)}
    wrong = {(s, a): {outcome(s, a): 0.75, outcome(s, 1 - a): 0.25} for s in range(5) for a in range(2)}
    counts = Counter()
    slips = total = 0
    for obs, rew, term, trunc, _ in sweep(env, pairs, rounds=12):
        assert not term.any()
        for i, (s, a) in enumerate(pairs):
            o = (int(obs[i]), float(rew[i]))
            counts[((s, a), o)] += 1
            slips += o != outcome(s, a)
            total += 1
    assert_fits(counts, probs, wrong)
    sigma = math.sqrt(0.2 * 0.8 / total)
    assert abs(slips / total - 0.2) < 5 * sigma and 5 * sigma < 0.025


# ---------------------------------------------------------------------------------------------------------------
# Blackjack
class ScriptedCards:
    """Stands in for gymnasium's np_random: choice() deals the cards our env drew, in order."""

    def __init__(self):
        self.cards: list[int] = []

    def choice(self, deck):
        assert self.cards, "gymnasium drew more cards than our env"
        return self.cards.pop(0)


def split_state(state):
    state = [int(x) for x in state]
    n = state[0]
    return state[1 : 1 + n], state[2 + n :]


@pytest.mark.parametrize("natural,sab", [(False, True), (False, False), (True, False), (True, True)])
def test_blackjack_aligned_with_gymnasium(natural, sab):
    """Gymnasium is dealt the cards our env drew; everything else (sums, usable ace, busts, the dealer's play, the
    natural / sab payouts, termination) must then agree exactly."""
    n = 128
    env = pp.make("Blackjack-v1", num_envs=n, natural=natural, sab=sab, seed=17)
    refs = [GymBlackjack(natural=natural, sab=sab) for _ in range(n)]
    cards = [ScriptedCards() for _ in range(n)]
    for r, c in zip(refs, cards):
        r.reset(seed=0)
        r._np_random = c
    obs, _ = env.reset()
    rng = np.random.default_rng(0)
    state = []
    for i in range(n):
        p, d = split_state(env.get_state(i))
        refs[i].player, refs[i].dealer = list(p), list(d)
        np.testing.assert_array_equal(obs[i], refs[i]._get_obs())
        state.append((p, d))
    rewards = Counter()
    for _ in range(30):
        hit_below = rng.integers(12, 21, n)
        act = (obs[:, 0] < hit_below).astype(np.int32)
        obs, rew, term, trunc, info = env.step(act)
        for i in range(n):
            p, d = split_state(env.get_state(i))
            if info["elapsed_step"][i] == 0:  # autoreset step: gymnasium starts the same hands
                refs[i].player, refs[i].dealer = list(p), list(d)
                np.testing.assert_array_equal(obs[i], refs[i]._get_obs())
                assert rew[i] == 0 and not term[i]
            else:
                p0, d0 = state[i]
                assert p[: len(p0)] == p0 and d[: len(d0)] == d0
                cards[i].cards = p[len(p0) :] + d[len(d0) :]
                o, r, t, _, _ = refs[i].step(int(act[i]))
                assert cards[i].cards == []
                np.testing.assert_array_equal(obs[i], o)
                assert (rew[i], term[i], trunc[i]) == (r, t, False), (p, d, act[i])
                if t:
                    rewards[r] += 1
            state[i] = (p, d)
    assert rewards[1.0] > 50 and rewards[-1.0] > 50 and rewards[0.0] > 5
    if natural and not sab:
        assert rewards[1.5] > 0


@pytest.mark.parametrize(
    "natural,sab,hands",
    [
        # naturals against a dealer 20 / a dealer natural / a dealer 19, and a 21 that is not a natural, under each rule
        # set; the expected reward is gymnasium's for the same hands
        (False, True, ([1, 10], [10, 10])),
        (False, True, ([10, 1], [1, 10])),
        (True, False, ([1, 10], [10, 9])),
        (True, True, ([1, 10], [10, 9])),
        (False, False, ([1, 10], [10, 9])),
        (False, True, ([5, 6, 10], [10, 7])),
        (True, False, ([5, 6, 10], [10, 8])),
    ],
)
def test_blackjack_naturals(natural, sab, hands):
    env = pp.make("Blackjack-v1", natural=natural, sab=sab)
    env.reset()
    p, d = hands
    env.set_state(0, [len(p), *p, len(d), *d])
    obs, rew, term, _, _ = env.step(np.zeros(1, np.int32))  # stick; the dealer holds >= 17: no draw
    ref = GymBlackjack(natural=natural, sab=sab)
    ref.reset(seed=0)
    ref.player, ref.dealer = list(p), list(d)
    o, r, t, _, _ = ref.step(0)
    np.testing.assert_array_equal(obs[0], o)
    assert rew[0] == r and term[0] and t


def test_blackjack_card_distribution():
    """Cards of the infinite deck: 1..9 with probability 1/13 each, 10 with 4/13 (gymnasium's deck)."""
    n = 4000
    env = pp.make("Blackjack-v1", num_envs=n, seed=23)
    env.reset()
    counts = Counter()
    for i in range(n):
        p, d = split_state(env.get_state(i))
        for c in p + d:
            counts[((0,), c)] += 1
    deck = Counter([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10])
    probs = {(0,): {c: k / 13 for c, k in deck.items()}}
    wrong = {(0,): {c: (1 / 10) for c in range(1, 11)}}  # a deck without face cards
    assert_fits(counts, probs, wrong)


def test_blackjack_returns_match_gymnasium_distribution():
    """Episode returns under a fixed policy: ours and gymnasium's own (own random draws) agree in distribution."""
    n_eps = 4000

    def policy(o):
        return int(o[0] < 17)

    ref = GymBlackjack(natural=True, sab=False)
    ref_counts = Counter()
    for k in range(n_eps):
        o, _ = ref.reset(seed=1000 + k)
        done = False
        while not done:
            o, r, done, _, _ = ref.step(policy(o))
        ref_counts[r] += 1
    env = pp.make("Blackjack-v1", num_envs=n_eps, natural=True, sab=False, seed=31)
    obs, _ = env.reset()
    ours = Counter()
    active = np.ones(n_eps, bool)
    while active.any():
        act = (obs[:, 0] < 17).astype(np.int32)
        obs, rew, term, _, _ = env.step(act)
        for i in np.flatnonzero(active & term):
            ours[float(rew[i])] += 1
        active &= ~term
        # finished envs step on into new episodes; only each env's first episode is counted
    # two-sample chi-square over the reward categories
    keys = sorted(set(ref_counts) | set(ours))
    stat = 0.0
    for k in keys:
        a, b = ours[k], ref_counts[k]
        if a + b:
            stat += (a - b) ** 2 / (a + b)
    assert stat < chi2_critical(len(keys) - 1), (ours, ref_counts)
    assert ours[1.5] > 0 and ours[-1.0] > 0


def test_blackjack_matches_envpool_draws():
    """Same draw order as EnvPool: the same hands, sums, dealer card, rewards and terminations. (EnvPool's third
    observation is "holds an ace", gymnasium's is "usable ace"; ours is gymnasium's, checked from our hands.)"""
    envpool = pytest.importorskip("envpool")
    n = 128
    ours = pp.make("Blackjack-v1", num_envs=n, seed=8)
    ref = envpool.make_gymnasium("Blackjack-v1", num_envs=n, seed=8)
    (o1, _), (o2, _) = ours.reset(), ref.reset()
    rng = np.random.default_rng(1)
    differ = 0
    for _ in range(60):
        np.testing.assert_array_equal(o1[:, :2], o2[:, :2])
        for i in range(n):
            p, _ = split_state(ours.get_state(i))
            assert o1[i, 2] == int(1 in p and sum(p) + 10 <= 21)
            differ += int(o1[i, 2] != o2[i, 2])
        a = rng.integers(0, 2, n).astype(np.int32)
        x, y = ours.step(a), ref.step(a)
        assert_same_as_envpool((y[0],) + tuple(x[1:]), y)  # observations: compared above (first two) and below
        o1, o2 = x[0], y[0]
    assert differ > 0  # the known EnvPool divergence did occur, and only there


def test_tabular_blackjack_matches_gymnasium_functional():
    """tabular/Blackjack-v0 against gymnasium's functional (jax) Blackjack: its random keys cannot be reproduced,
    so each of our transitions (cards drawn by us) is handed to its observation, reward and terminal functions,
    and the dealer's draws are checked against its stopping rule."""
    jax = pytest.importorskip("jax")
    from gymnasium.envs.tabular import blackjack as tab

    func = tab.BlackjackFunctional()
    params = func.get_default_params()  # Sutton & Barto rules, no natural bonus: what the id registers
    # params close over as constants (its reward branches on them in Python)
    observation = jax.jit(lambda state: func.observation(state, None, params))
    reward = jax.jit(lambda state, action, next_state: func.reward(state, action, next_state, None, params))
    terminal = jax.jit(lambda state: func.terminal(state, None, params))
    dealer_stop = jax.jit(tab.dealer_stop)

    def hand(cards):
        h = np.zeros(21, np.float32)
        h[: len(cards)] = cards
        return jax.numpy.asarray(h)

    def jax_state(p, d, action=None):
        """gymnasium's EnvState for these hands; `done` as its transition sets it after `action`."""
        done = 0 if action is None else int(bool(tab.is_bust(hand(p))) * action + (1 - action))
        return tab.EnvState(
            dealer_hand=hand(d), player_hand=hand(p), dealer_cards=len(d), player_cards=len(p), done=done
        )

    n = 48
    env = pp.make("tabular/Blackjack-v0", num_envs=n, seed=21)
    obs, _ = env.reset()
    states = [split_state(env.get_state(i)) for i in range(n)]
    for i, (p, d) in enumerate(states):
        np.testing.assert_array_equal(obs[i], observation(jax_state(p, d)))
    rng = np.random.default_rng(4)
    rewards = Counter()
    for _ in range(12):
        act = (obs[:, 0] < rng.integers(12, 21, n)).astype(np.int32)
        obs, rew, term, trunc, info = env.step(act)
        for i in range(n):
            p, d = split_state(env.get_state(i))
            if info["elapsed_step"][i] > 0:  # not an autoreset step
                a = int(act[i])
                before, after = jax_state(*states[i]), jax_state(p, d, a)
                np.testing.assert_array_equal(obs[i], observation(after))
                assert rew[i] == float(reward(before, a, after)), (p, d, a)
                assert bool(term[i]) == bool(terminal(after)) and not trunc[i]
                if a == 0:  # the dealer drew while below 17, and only then
                    assert all(bool(dealer_stop((None, hand(d[:k])))) for k in range(2, len(d)))
                    assert not bool(dealer_stop((None, hand(d))))
                rewards[float(rew[i])] += bool(term[i])
            states[i] = (p, d)
    assert rewards[1.0] > 20 and rewards[-1.0] > 20 and rewards[0.0] > 0, rewards
