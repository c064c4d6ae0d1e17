"""Per-env values and snapshots: per-env config values at make(), set_config / get_config at run time.

Per-env values are checked against the reference env built with that value (gymnasium's Pendulum(g=...), Ant-v5
(ctrl_cost_weight=...), FrozenLake(is_slippery=..., success_rate=...)); Atari's against our own single-env pool
built with that value (which tests/envs/atari/test_atari.py aligns with ale_py).
"""

from __future__ import annotations

import contextlib
import warnings

import gymnasium as gym
import numpy as np
import pytest

import parallel_pool as pp


@contextlib.contextmanager
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _pendulum_ref(g: float):
    with _quiet():
        ref = gym.make("Pendulum-v1", g=g).unwrapped
        ref.reset(seed=0)
    return ref


def _ref_step(ref, state, action):
    """The reference's (obs, reward) for one step of `action` from `state`."""
    ref.state = np.array(state, dtype=np.float64)
    obs, reward, *_ = ref.step(np.asarray(action, dtype=np.float32))
    return obs, reward


def _assert_step(obs, reward, ref_obs, ref_reward, what):
    np.testing.assert_allclose(obs, ref_obs, rtol=1e-6, atol=1e-6, err_msg=f"{what}: obs")
    np.testing.assert_allclose(reward, ref_reward, rtol=1e-5, atol=1e-6, err_msg=f"{what}: reward")


# ---- per-env values at make() ------------------------------------------------------------------------------------
def test_pendulum_g_per_env_matches_gymnasium():
    gs = [9.0, 9.8, 10.5, 12.0]
    env = pp.make("Pendulum-v1", num_envs=4, g=gs, seed=5)
    assert env.spec.config.g == tuple(gs)
    assert [env.get_config(i)["g"] for i in range(4)] == gs
    refs = [_pendulum_ref(g) for g in gs]
    default_ref = _pendulum_ref(10.0)
    env.reset()
    rng = np.random.default_rng(0)
    diverged = False
    for t in range(120):
        states = [env.get_state(i) for i in range(4)]
        a = rng.uniform(-2, 2, (4, 1)).astype(np.float32)
        obs, rew, *_ = env.step(a)
        for i, ref in enumerate(refs):
            _assert_step(obs[i], rew[i], *_ref_step(ref, states[i], a[i]), f"env {i} (g={gs[i]}) step {t}")
        # the values do matter: gymnasium's default g gives another step for env 3
        d_obs, _ = _ref_step(default_ref, states[3], a[3])
        diverged = diverged or not np.allclose(obs[3], d_obs, rtol=1e-6, atol=1e-6)
    assert diverged
    env.close()


def test_ant_v5_reward_weights_per_env_match_gymnasium():
    weights = [0.1, 0.5, 2.0]
    healthy = [1.0, 0.5, 3.0]
    env = pp.make("Ant-v5", num_envs=3, seed=2, ctrl_cost_weight=weights, healthy_reward=healthy)
    with _quiet():
        refs = [gym.make("Ant-v5", ctrl_cost_weight=w, healthy_reward=h).unwrapped for w, h in zip(weights, healthy)]
        for ref in refs:
            ref.reset(seed=0)
    env.reset()
    for i, ref in enumerate(refs):  # both start from the reference's reset state, then step side by side
        env.set_state(i, np.concatenate([ref.data.qpos, ref.data.qvel]))
    rng = np.random.default_rng(1)
    for t in range(40):
        a = rng.uniform(-1, 1, (3, 8))
        obs, rew, term, trunc, info = env.step(a)
        for i, ref in enumerate(refs):
            with _quiet():
                r_obs, r_rew, r_term, _, r_info = ref.step(a[i])
            what = f"env {i} step {t}"
            np.testing.assert_allclose(obs[i], r_obs, atol=1e-6, err_msg=what)
            np.testing.assert_allclose(rew[i], r_rew, atol=1e-6, err_msg=what)
            np.testing.assert_allclose(info["reward_ctrl"][i], r_info["reward_ctrl"], atol=1e-6, err_msg=what)
            assert bool(term[i]) == bool(r_term), what
        if term.any():
            break
    env.close()


def test_frozen_lake_per_env_slipperiness_follows_gymnasium_table():
    from gymnasium.envs.toy_text.frozen_lake import FrozenLakeEnv

    slippery = [False, True, True]
    success = [1.0 / 3.0, 1.0 / 3.0, 0.8]
    env = pp.make("FrozenLake-v1", num_envs=3, seed=1, is_slippery=slippery, success_rate=success)
    tables = [FrozenLakeEnv(is_slippery=s, success_rate=p).P for s, p in zip(slippery, success)]
    env.reset()
    rng = np.random.default_rng(0)
    intended = np.zeros(3)
    steps = 600
    for _ in range(steps):
        for i in range(3):  # start each step from a frozen non-goal tile, so no episode ends mid-count
            env.set_state(i, [0])
        a = rng.integers(0, 4, 3)
        obs, *_ = env.step(a)
        for i in range(3):
            outcomes = {s2: p for p, s2, _, _ in tables[i][0][int(a[i])] if p > 0}
            assert int(obs[i]) in outcomes, f"env {i}: state 0, action {a[i]} -> {obs[i]}, reference {outcomes}"
            intended[i] += int(obs[i]) == tables[0][0][int(a[i])][0][1]  # the not-slippery move
    assert intended[0] == steps  # not slippery: always the intended move
    assert intended[1] < 0.9 * steps  # slippery: it slips (some slips land where the move would)
    assert intended[2] / steps > intended[1] / steps + 0.2  # success_rate 0.8 moves as intended far more often
    env.close()


@pytest.mark.parametrize(
    "task,values",
    [
        ("Pong-v5", {"repeat_action_probability": [0.0, 0.25, 0.5], "mode": [0, 1, 0], "difficulty": [0, 0, 1]}),
        ("CartpoleSwingup-v1", {"frame_skip": [1, 2, 3], "task_name": ["swingup", "balance", "swingup_sparse"]}),
    ],
)
def test_per_env_values_equal_single_env_pools(task, values):
    """Env i of a pool with per-env values runs exactly as a one-env pool made with env i's values and seed (those
    pools are aligned with ale_py / dm_control by tests/envs/atari/test_atari.py and tests/envs/dmc/test_dmc.py)."""
    env = pp.make(task, num_envs=3, seed=11, max_episode_steps=60, **values)
    singles = [
        pp.make(task, num_envs=1, seed=11 + i, max_episode_steps=60, **{k: v[i] for k, v in values.items()})
        for i in range(3)
    ]

    def same(a, i, b, what):  # row i of a (an array or a dict of arrays) equals row 0 of b
        for k in a if isinstance(a, dict) else [None]:
            x, y = (a, b) if k is None else (a[k], b[k])
            np.testing.assert_array_equal(x[i], y[0], err_msg=f"{what} {k or ''}")

    obs, _ = env.reset()
    for i, s in enumerate(singles):
        same(obs, i, s.reset()[0], f"env {i} reset")
    env.action_space.seed(3)
    for t in range(150):
        a = env.action_space.sample()
        obs, rew, term, trunc, _ = env.step(a)
        for i, s in enumerate(singles):
            o, r, te, tr, _ = s.step(a[i : i + 1])
            same(obs, i, o, f"env {i} step {t}")
            assert (rew[i], term[i], trunc[i]) == (r[0], te[0], tr[0])
    for s in singles:
        s.close()
    env.close()


@pytest.mark.parametrize(
    "task,kwargs,error,words",
    [
        ("Pendulum-v1", {"g": [9.0, 10.0]}, ValueError, ["'g'", "2 per-env values for 4 envs"]),
        ("Pendulum-v1", {"g": [9.0, "x", 1.0, 2.0]}, TypeError, ["'g'"]),
        ("Pendulum-v1", {"g": [9.0, float("nan"), 1.0, 2.0]}, ValueError, ["'g'", "finite"]),
        ("Pendulum-v1", {"seed": [1, 2, 3, 4]}, ValueError, ["'seed'", "pool's own"]),
        ("Pendulum-v1", {"max_episode_steps": [5, 5, 5, 5]}, ValueError, ["'max_episode_steps'"]),
        ("Pendulum-v1", {"version": [1, 1, 0, 7]}, ValueError, ["version"]),
        ("FrozenLake-v1", {"success_rate": [0.5, 1.5, 0.5, 0.5]}, ValueError, ["success_rate"]),
        ("FrozenLake-v1", {"size": [4, 8, 4, 4]}, ValueError, ["'size'", "spaces"]),
        ("Ant-v5", {"exclude_current_positions_from_observation": [True, False] * 2}, ValueError, ["spaces"]),
        ("Pong-v5", {"img_height": [84, 64, 84, 84]}, ValueError, ["'img_height'", "spaces"]),
    ],
)
def test_bad_per_env_values_raise_naming_the_key(task, kwargs, error, words):
    with pytest.raises(error) as e:
        pp.make(task, num_envs=4, **kwargs)
    for w in words:
        assert w in str(e.value)


def _float_keys():
    """(a task of the class, the key) for every float config key of every env class built."""
    from parallel_pool import _core, registry

    task_of = {}
    for task in sorted(_core.tasks()):
        task_of.setdefault(registry.env_class_of(task), task)
    out = []
    for cls, keys in sorted(_core.env_classes().items()):
        for key, default, *_ in keys:
            if isinstance(default, float) and key != "reward_threshold":
                out.append((task_of[cls], key))
    return out


def test_non_finite_float_config_values_are_refused_for_every_env():
    """One rule for every float key of every env: NaN never, +-inf only where the key is an open bound (a range's
    end, reward_threshold). Ant-v5's ctrl_cost_weight=nan gave NaN rewards."""
    for task, key in _float_keys():
        with pytest.raises(ValueError, match=key):
            pp.make(task, num_envs=1, **{key: float("nan")})
    env = pp.make("Ant-v5", num_envs=2)
    for value in (float("inf"), -float("inf")):
        with pytest.raises(ValueError, match="'ctrl_cost_weight' must be a finite number"):
            pp.make("Ant-v5", num_envs=1, ctrl_cost_weight=value)
        with pytest.raises(ValueError, match="'ctrl_cost_weight' must be a finite number"):
            env.set_config([1], ctrl_cost_weight=value)
    assert env.get_config(1)["ctrl_cost_weight"] == env.get_config(0)["ctrl_cost_weight"]
    env.close()
    # open bounds: gymnasium's Hopper has healthy_z_range (0.7, inf); a threshold may be absent
    pp.make("Ant-v5", num_envs=1, healthy_z_max=float("inf"), reward_threshold=float("inf")).close()
    with pytest.raises(ValueError, match="'healthy_z_max' must be a number or"):
        pp.make("Ant-v5", num_envs=1, healthy_z_max=float("nan"))


# ---- set_config / get_config ---------------------------------------------------------------------------------------
class PendulumChecker:
    """Checks every returned row of a Pendulum pool against gymnasium's step from the env's previous state, with the
    g each env is expected to run with: its old g until its next reset after set_config, the new one from then on."""

    def __init__(self, env, g):
        self.env = env
        self.ref = _pendulum_ref(10.0)
        self.g = [g] * env.num_envs  # what each env runs with
        self.next_g = list(self.g)  # what it runs with from its next reset
        self.prev: dict[int, tuple] = {}  # env id -> (state, action) of its step in flight
        # steps checked: with the old g after set_config gave a new one (not applied yet), and with the new g
        self.checked = {"old_after_set": 0, "new": 0}
        self.new_g: float | None = None

    def set_config(self, ids, g):
        self.env.set_config(ids, g=g)
        self.new_g = g
        for i in np.atleast_1d(ids):
            self.next_g[int(i)] = g

    def rows(self, obs, rew, info, actions):
        """Check a batch (actions: what will be sent to these envs next) and remember their states."""
        for j, i in enumerate(info["env_id"]):
            i = int(i)
            if info["elapsed_step"][j] == 0:
                self.g[i] = self.next_g[i]
            elif i in self.prev:
                state, a = self.prev[i]
                self.ref.g = self.g[i]
                _assert_step(obs[j], rew[j], *_ref_step(self.ref, state, a), f"env {i} g={self.g[i]}")
                if self.g[i] != self.next_g[i]:
                    self.checked["old_after_set"] += 1
                elif self.g[i] == self.new_g:
                    self.checked["new"] += 1
            self.prev[i] = (self.env.get_state(i), actions[j])


def test_set_config_applies_at_the_next_reset_sync():
    env = pp.make("Pendulum-v1", num_envs=3, seed=4, max_episode_steps=8)
    check = PendulumChecker(env, 10.0)
    rng = np.random.default_rng(0)
    obs, info = env.reset()
    a = rng.uniform(-2, 2, (3, 1)).astype(np.float32)
    check.rows(obs, np.zeros(3), info, a)
    for t in range(40):
        if t == 3:
            check.set_config([1, 2], 15.0)
            assert env.get_config(1)["g"] == 15.0 and env.get_config(0)["g"] == 10.0
        obs, rew, _, _, info = env.step(a)
        a = rng.uniform(-2, 2, (3, 1)).astype(np.float32)
        check.rows(obs, rew, info, a)
    assert check.g == [10.0, 15.0, 15.0]
    # steps 4..8 of the first episode ran with the old g (checked), the later episodes with the new one
    assert check.checked["new"] > 10 and check.checked["old_after_set"] >= 4
    env.close()


def test_set_config_applies_at_the_next_reset_async():
    env = pp.make("Pendulum-v1", num_envs=6, batch_size=2, num_threads=2, seed=9, max_episode_steps=5)
    check = PendulumChecker(env, 10.0)
    rng = np.random.default_rng(2)
    env.async_reset()
    for t in range(80):
        obs, rew, _, _, info = env.recv()
        a = rng.uniform(-2, 2, (len(obs), 1)).astype(np.float32)
        check.rows(obs, rew, info, a)
        env.send(a, info["env_id"])
        if t == 10:  # four of the six envs have a step in flight now
            check.set_config(np.arange(6), 15.0)
    assert check.g == [15.0] * 6
    assert check.checked["new"] > 10 and check.checked["old_after_set"] > 4
    env.close()


def test_set_config_keeps_the_random_stream():
    """The rebuilt env takes over the env's generator: its next reset draws what the old env would have drawn."""
    a = pp.make("Pendulum-v1", num_envs=2, seed=3)
    b = pp.make("Pendulum-v1", num_envs=2, seed=3)
    a.reset()
    b.reset()
    a.set_config(1, g=7.0)
    a.reset()
    b.reset()
    np.testing.assert_array_equal(a.get_state(1), b.get_state(1))
    assert a.get_config(1)["g"] == 7.0 and b.get_config(1)["g"] == 10.0
    a.close()
    b.close()


def test_set_config_per_env_values_and_bad_values_change_nothing():
    env = pp.make("Pendulum-v1", num_envs=3, g=[9.0, 10.0, 11.0])
    env.reset()
    env.set_config([0, 2], g=[5.0, 6.0])
    assert [env.get_config(i)["g"] for i in range(3)] == [5.0, 10.0, 6.0]
    bad = [
        ({"g": [1.0, float("nan")]}, ValueError, "'g'"),
        ({"g": "x"}, TypeError, "'g'"),
        ({"g": [1.0, 2.0, 3.0]}, ValueError, "3 per-env values for 2 envs"),
        ({"seed": 1}, ValueError, "pool's own"),
        ({"nope": 1}, ValueError, "unknown config key"),
        ({"version": 7}, ValueError, "version"),
    ]
    for values, error, words in bad:
        with pytest.raises(error, match=words):
            env.set_config([0, 1], **values)
        assert [env.get_config(i)["g"] for i in range(3)] == [5.0, 10.0, 6.0]
    with pytest.raises(ValueError, match="out of range"):
        env.set_config([5], g=1.0)
    env.reset()
    assert [env.get_config(i)["g"] for i in range(3)] == [5.0, 10.0, 6.0]
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.set_config(0, g=1.0)


@pytest.mark.parametrize("env_type", ["gymnasium", "gym", "dm"])
def test_every_front_end_has_set_config(env_type):
    env = pp.make("Pendulum-v1", env_type=env_type, num_envs=2, g=[8.0, 9.0])
    env.set_config(1, g=3.0)
    assert env.get_config(0)["g"] == 8.0 and env.get_config(1)["g"] == 3.0
    env.close()


# ---- snapshots: get_state(env_ids) / set_state(env_ids, states) ----------------------------------------------------
SNAPSHOT_TASKS = {
    # task: make() kwargs that give episode ends within the rollout
    "CartPole-v1": {"max_episode_steps": 12},
    "Pendulum-v1": {"max_episode_steps": 10},
    "MountainCarContinuous-v0": {"max_episode_steps": 10},
    "Acrobot-v1": {"max_episode_steps": 10},
    "FrozenLake-v1": {},
    "Taxi-v3": {"max_episode_steps": 10},
    "Blackjack-v1": {},
    "CliffWalking-v0": {"max_episode_steps": 10},
    "Catch-v0": {},
    "NChain-v0": {"max_episode_steps": 10},
    "Ant-v5": {"max_episode_steps": 10},
    "Hopper-v5": {"max_episode_steps": 10},
    "Humanoid-v5": {"max_episode_steps": 10},
    "HalfCheetah-v4": {"max_episode_steps": 10, "frame_stack": 3},
    "CartpoleSwingup-v1": {"max_episode_steps": 10},
    "WalkerWalk-v1": {"max_episode_steps": 10},
    "FingerTurnHard-v1": {"max_episode_steps": 10},  # a task whose state includes its model's target
    "LqrLqr21-v1": {"max_episode_steps": 10},
    "QuadrupedRun-v1": {"max_episode_steps": 10},  # a task whose model has no task state (Escape's terrain)
    "Pong-v5": {"max_episode_steps": 12, "repeat_action_probability": 0.25},
    "Breakout-v5": {"episodic_life": True, "max_episode_steps": 40},
}


def _rollout(env, actions):
    """Every array of every step of `actions`, copied."""
    return [[np.array(x, copy=True) for x in env.step_arrays(a)] for a in actions]


@pytest.mark.parametrize("task", list(SNAPSHOT_TASKS))
def test_snapshot_restore_continues_bit_identically(task):
    """Snapshot, step k actions, restore, step the same k actions: the same arrays, over episode ends."""
    env = pp.make(task, num_envs=3, seed=1, **SNAPSHOT_TASKS[task])
    env.action_space.seed(0)
    env.reset()
    for _ in range(3):
        env.step(env.action_space.sample())
    ids = [0, 1, 2]
    snap = env.get_state(ids)
    actions = [env.action_space.sample() for _ in range(45)]
    first = _rollout(env, actions)
    env.set_state(ids, snap)
    second = _rollout(env, actions)
    done = first[0][env.schema.index["terminated"]] | first[0][env.schema.index["truncated"]]
    for step in first[1:]:
        done = done | step[env.schema.index["terminated"]] | step[env.schema.index["truncated"]]
    assert done.all(), "every env should end an episode within the rollout"
    for t, (a, b) in enumerate(zip(first, second)):
        for name, x, y in zip([s[0] for s in env.engine.output_specs], a, b):
            np.testing.assert_array_equal(x, y, err_msg=f"{task}: {name} at step {t} after the restore")
    env.close()


def test_snapshot_is_plain_numpy_and_branches(tmp_path):
    env = pp.make("CartPole-v1", num_envs=4, seed=3)
    env.reset()
    env.step(np.array([0, 1, 0, 1]))
    snap = env.get_state([2])
    np.savez(tmp_path / "s.npz", **snap)
    loaded = dict(np.load(tmp_path / "s.npz"))
    import pickle

    assert pickle.loads(pickle.dumps(snap)).keys() == snap.keys()
    env.set_state([0, 1, 2, 3], loaded)  # one snapshot into every env: four copies of env 2
    obs, *_ = env.step(np.array([1, 1, 1, 1]))
    assert all(np.array_equal(obs[0], o) for o in obs)
    env.close()


def test_bad_snapshots_are_refused_and_change_nothing():
    env = pp.make("CartPole-v1", num_envs=2, seed=3)
    env.reset()
    before = [env.get_state(i) for i in range(2)]
    snap = env.get_state([0, 1])
    other = pp.make("Acrobot-v1", num_envs=2).get_state([0, 1])
    with pytest.raises(ValueError, match="Acrobot-v1 cannot be restored into CartPole-v1"):
        env.set_state([0, 1], other)
    with pytest.raises(ValueError, match="taken by parallel_pool 0.0.0"):
        env.set_state([0, 1], dict(snap, version=np.array("0.0.0")))
    with pytest.raises(ValueError, match="a snapshot of 2 envs for 3 env ids"):
        env.set_state([0, 1, 1], snap)
    with pytest.raises(TypeError, match="takes a snapshot"):
        env.set_state([0, 1], {"values": snap["values"]})
    broken = {k: np.array(v, copy=True) for k, v in snap.items()}
    broken["values"][1, 0] = np.inf  # env 1's state is bad: env 0 is not restored either
    env.step(np.array([1, 1]))
    moved = [env.get_state(i) for i in range(2)]
    with pytest.raises(ValueError, match="not finite"):
        env.set_state([0, 1], broken)
    assert all(np.array_equal(env.get_state(i), moved[i]) for i in range(2))
    assert not np.array_equal(moved[0], before[0])
    env.close()


def _same_snapshot(a, b):
    for key in a:
        np.testing.assert_array_equal(np.asarray(a[key]), np.asarray(b[key]), err_msg=key)


def _refused(env, snap, error, match, ids=(0, 1)):
    """set_state raises `error` matching `match`, and the envs keep their state."""
    before = env.get_state(list(ids))
    with pytest.raises(error, match=match):
        env.set_state(list(ids), snap)
    _same_snapshot(env.get_state(list(ids)), before)


def test_snapshot_elapsed_out_of_range_is_refused_before_narrowing():
    env = pp.make("CartPole-v1", num_envs=2, seed=3, max_episode_steps=50)
    env.reset()
    env.step(np.array([0, 1]))
    snap = env.get_state([0, 1])
    # 2**40 + 5 was narrowed to int32 (5); 2**31 - 1 overflowed at the next step; an episode in progress at the
    # limit is a state no step leaves
    for elapsed, done in [
        (2**40 + 5, False),
        (2**31 - 1, False),
        (2**31 - 1, True),
        (-1, False),
        (50, False),
        (51, True),
    ]:
        bad = dict(snap, elapsed=np.array([elapsed, 1]), done=np.array([done, False]))
        _refused(env, bad, ValueError, "'elapsed' must be in")
    env.set_state([0, 1], dict(snap, elapsed=np.array([50, 49]), done=np.array([True, False])))
    *_, trunc, _ = env.step(np.array([0, 0]))
    assert not trunc[0] and trunc[1]  # env 0 reset (its episode had ended), env 1 reached the limit
    env.close()
    # an env without a time limit of its own: the limit is int32's largest value, and its counter must not wrap
    bj = pp.make("Blackjack-v1", num_envs=2, seed=3)
    bj.reset()
    snap = bj.get_state([0, 1])
    _refused(bj, dict(snap, elapsed=np.array([2**31 - 1, 0])), ValueError, "'elapsed' must be in")
    bj.close()


def test_degenerate_generator_states_are_refused():
    # an all-zero std::mt19937 draws only zeros: FrozenLake's slip draw (a rejection loop) then never returned
    env = pp.make("FrozenLake-v1", num_envs=2, seed=3)
    env.reset()
    env.step(np.array([1, 2]))
    snap = env.get_state([0, 1])
    zero = snap["generator"].copy()
    zero[0, :-1] = 0
    _refused(env, dict(snap, generator=zero), ValueError, "all-zero")
    zero[0, 0] = 0x7FFFFFFF  # the low bits of word 0 never reach the next words: still all-zero
    _refused(env, dict(snap, generator=zero), ValueError, "all-zero")
    past = snap["generator"].copy()
    past[1, -1] = 625  # the position: how many of the 624 words were handed out
    _refused(env, dict(snap, generator=past), ValueError, "position")
    ok = snap["generator"].copy()
    ok[0, :-1] = 0
    ok[0, 5] = 1  # one bit set is a state the generator's recurrence can be in
    env.set_state([0, 1], dict(snap, generator=ok))
    env.step(np.array([1, 2]))
    env.close()


def test_acrobot_states_no_step_can_leave_are_refused():
    # the angle wrap moves an angle by one turn per pass: 1e300 (or a velocity that throws it there) never returned
    env = pp.make("Acrobot-v1", num_envs=2, seed=3)
    env.reset()
    env.step(np.array([0, 2]))
    snap = env.get_state([0, 1])
    for col, value in [(0, 1e300), (1, -1e17), (0, 3.2), (2, 1e6), (3, -29.0)]:
        bad = {k: np.array(v, copy=True) for k, v in snap.items()}
        bad["values"][0, col] = value
        _refused(env, bad, ValueError, "Acrobot state")
    before = env.get_state(0)
    with pytest.raises(ValueError, match="th1"):
        env.set_state(0, [1e300, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(env.get_state(0), before)
    env.set_state(0, [np.pi, -np.pi, 4 * np.pi, -9 * np.pi])  # the bounds are states a step can leave
    env.step(np.array([1, 1]))
    env.close()


def test_minigrid_step_count_that_would_overflow_is_refused():
    # a snapshot's values: [format, n, width, height, x, y, dir, step count, ...]; the step after int's top
    # overflowed the count (the episode ends at that step: the count must still fit)
    env = pp.make("MiniGrid-Empty-5x5-v0", num_envs=2, seed=3)
    env.reset()
    env.step(np.array([2, 2]))
    snap = env.get_state([0, 1])
    assert snap["values"][0, 7] == 1
    bad = {k: np.array(v, copy=True) for k, v in snap.items()}
    bad["values"][0, 7] = 2**31 - 1
    _refused(env, bad, ValueError, "not an integer in \\[0, 2147483646\\]")
    bad["values"][0, 7] = 2**31 - 2  # the episode ends at the next step, which still counts
    env.set_state([0, 1], bad)
    *_, trunc, _ = env.step(np.array([0, 0]))
    assert trunc[0] and not trunc[1]
    env.close()


def _ale_bytes(snap, row=0):
    """The ALE state bytes of an Atari snapshot's row (its values: [count, bytes..., the env's own values])."""
    n = int(snap["values"][row, 0])
    return bytearray(snap["values"][row, 1 : 1 + n].astype(np.uint8).tobytes())


def _with_ale_bytes(snap, data, row=0):
    out = {k: np.array(v, copy=True) for k, v in snap.items()}
    out["values"][row, 1 : 1 + len(data)] = np.frombuffer(bytes(data), dtype=np.uint8)
    return out


def test_atari_snapshots_are_checked_before_ale_reads_them():
    """ALE trusts its serialized state: a bank number past the cartridge's mapped ROM pages past its image, a
    length field allocated what it said, an array length wrote past its array, another game's state failed with
    "Caught an unknown exception!". Each is refused with a ValueError naming the field, and the envs keep their
    state."""
    env = pp.make("MsPacman-v5", num_envs=2, seed=3)
    env.reset()
    for _ in range(5):
        env.step(np.array([1, 2]))
    snap = env.get_state([0, 1])
    data = _ale_bytes(snap)
    at = data.index(b"CartridgeF8") + len(b"CartridgeF8")
    bank = data.copy()
    bank[at : at + 4] = (5).to_bytes(4, "little")  # F8 has 2 banks
    _refused(env, _with_ale_bytes(snap, bank), ValueError, "ms_pacman: the cartridge's bank must be in \\[0, 1\\]")
    length = data.copy()
    length[24:28] = (0x40000000).to_bytes(4, "little")  # the emulator state's length (after 6 ints)
    _refused(env, _with_ale_bytes(snap, length), ValueError, "the emulator state has a length of 1073741824")
    ram = data.copy()
    at = data.index(b"M6532") + len(b"M6532")
    ram[at : at + 4] = (0x7FFFFFFF).to_bytes(4, "little")  # the RIOT's 128 bytes of RAM
    _refused(env, _with_ale_bytes(snap, ram), ValueError, "the RIOT's RAM must be 128")
    lives = {k: np.array(v, copy=True) for k, v in snap.items()}
    lives["values"][0, 1 + len(data) + 2] = 1e300  # lives, then the game's step count: ints, cast without a check
    _refused(env, lives, ValueError, "not an Atari snapshot")
    env.set_state([0, 1], snap)  # the untampered snapshot is still taken
    env.step(np.array([1, 2]))
    env.close()
    pong = pp.make("Pong-v5", num_envs=2, seed=3)
    pong.reset()
    breakout = pp.make("Breakout-v5", num_envs=2, seed=3)
    breakout.reset()
    relabelled = dict(pong.get_state([0, 1]), task=np.array("Breakout-v5"))
    _refused(breakout, relabelled, ValueError, "the ROM's md5 must be")
    pong.close()
    breakout.close()


@pytest.mark.parametrize(
    "change, error, match",
    [
        ({"lengths": lambda s: s["lengths"].astype(float)}, TypeError, "'lengths' must be"),
        ({"format": lambda s: np.array("2")}, TypeError, "'format' must be an integer"),
        ({"elapsed": lambda s: np.concatenate([s["elapsed"], [0]])}, ValueError, "'elapsed' must have shape"),
        ({"generator": lambda s: s["generator"].astype(float)}, TypeError, "'generator' must be"),
        ({"generator": lambda s: s["generator"].astype(np.int64)}, TypeError, "'generator' must be"),
        ({"generator": lambda s: s["generator"][:, :-1]}, ValueError, "'generator' must have shape"),
        ({"done": lambda s: s["done"].astype(np.int64)}, TypeError, "'done' must be"),
        ({"env_ids": lambda s: s["env_ids"][:1]}, ValueError, "'env_ids' must have shape"),
        ({"values": lambda s: s["values"].ravel()}, TypeError, "'values' must be a 2-d"),
        ({"values": lambda s: s["values"].astype(np.float32)}, ValueError, "'values' must be float64"),
        ({"lengths": lambda s: s["lengths"] + 1}, ValueError, "'lengths' must be in"),
        ({"task": lambda s: np.array(7)}, TypeError, "'task' must be a str"),
        ({"elapsed": lambda s: s["elapsed"].astype(float)}, TypeError, "'elapsed' must be"),
    ],
)
def test_snapshot_fields_are_checked_for_type_shape_and_range(change, error, match):
    env = pp.make("CartPole-v1", num_envs=2, seed=3)
    env.reset()
    env.step(np.array([0, 1]))
    snap = env.get_state([0, 1])
    env.step(np.array([1, 1]))
    bad = dict(snap, **{k: f(snap) for k, f in change.items()})
    _refused(env, bad, error, match)
    env.close()


def test_snapshot_of_an_env_with_a_result_pending_is_refused():
    env = pp.make("CartPole-v1", num_envs=4, batch_size=2, seed=3)
    env.async_reset()
    env.recv()
    with pytest.raises(ValueError, match="pending"):
        env.get_state([0, 1, 2, 3])
    env.close()


@pytest.mark.parametrize("task", ["Basic-v1"])
def test_families_without_snapshots_say_so(task):
    env = pp.make(task, num_envs=1)
    env.reset()
    with pytest.raises(RuntimeError, match=f"{task}: no snapshots"):
        env.get_state([0])
    env.close()


def test_docs_snippets_run():
    """docs/per-env.md's examples (per-env values, domain randomization in a loop and with SB3, MCTS-style
    branching) run as written."""
    import re
    from pathlib import Path

    doc = Path(__file__).resolve().parents[2] / "docs" / "per-env.md"
    snippets = re.findall(r"<!-- run -->\n```python\n(.*?)```", doc.read_text(), flags=re.S)
    assert len(snippets) == 4
    pytest.importorskip("stable_baselines3")
    for code in snippets:
        exec(compile(code, str(doc), "exec"), {})


def test_adapters_reach_per_env_config():
    from parallel_pool.integrations.sb3 import ParallelPoolVecEnv
    from parallel_pool.integrations.tianshou import ParallelPoolVectorEnv

    venv = ParallelPoolVecEnv("Pendulum-v1", num_envs=3, g=[9.0, 10.0, 11.0])
    assert venv.get_attr("g") == [9.0, 10.0, 11.0]
    venv.env_method("set_config", indices=[0, 2], g=4.0)
    assert [c["g"] for c in venv.env_method("get_config")] == [4.0, 10.0, 4.0]
    venv.close()
    tenv = ParallelPoolVectorEnv("Pendulum-v1", num_envs=2)
    tenv.set_env_attr("g", 7.5, id=[1])
    assert tenv.get_env_attr("g") == [10.0, 7.5]
    with pytest.raises(AttributeError):
        tenv.set_env_attr("not_a_key", 1)
    tenv.close()


# ---- envs written in Python (backend="python", env_fn): per-env kwargs, set_config, pickled snapshots -------------


class Walker(gym.Env):
    """A Python env with constructor kwargs: `length` steps per episode, `step_size` per unit of action, `level` (99
    is refused, as a bad value would be). Random start and noise from its np_random, so the stream matters."""

    observation_space = gym.spaces.Box(-1e3, 1e3, (2,), np.float64)
    action_space = gym.spaces.Discrete(3)

    def __init__(self, length: int = 6, step_size: float = 1.0, level: int = 0):
        if level == 99:
            raise ValueError("level 99 does not exist")
        self.length, self.step_size, self.level = length, step_size, level

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos, self.t = float(self.np_random.uniform(-1, 1)), 0
        return np.array([self.pos, self.t], np.float64), {"level": self.level}

    def step(self, action):
        self.pos += self.step_size * (int(action) - 1) + float(self.np_random.normal(0, 0.1))
        self.t += 1
        return np.array([self.pos, self.t]), self.pos, False, self.t >= self.length, {"level": self.level}


def test_python_env_per_env_values_equal_sync_vector_env_built_with_them():
    """LunarLander-v3 with a gravity per env (gymnasium.make's kwarg) runs as SyncVectorEnv of envs built with
    those gravities."""
    pytest.importorskip("Box2D")
    from gymnasium.vector import SyncVectorEnv

    gravity = [-4.0, -10.0, -7.5]
    env = pp.make("LunarLander-v3", backend="python", num_envs=3, num_threads=2, gravity=gravity, max_episode_steps=40)
    ref = SyncVectorEnv([lambda g=g: gym.make("LunarLander-v3", gravity=g, max_episode_steps=40) for g in gravity])
    try:
        assert env.spec.config.gravity == tuple(gravity)
        assert [env.get_config(i)["gravity"] for i in range(3)] == gravity
        np.testing.assert_array_equal(env.reset(seed=4)[0], ref.reset(seed=4)[0])
        ref.action_space.seed(0)
        for t in range(60):
            a = ref.action_space.sample()
            for x, y in zip(env.step(a)[:4], ref.step(a)[:4]):
                np.testing.assert_array_equal(x, y, err_msg=f"step {t}")
    finally:
        env.close()
        ref.close()


@pytest.mark.parametrize("batch_size", [2, 1])
def test_python_env_set_config_applies_at_the_next_reset_and_keeps_the_stream(batch_size):
    """set_config mid-episode: the episode ends with the old values; the next one runs with the new values, on
    the env's random stream continued (as the reference: a new env given the old one's np_random). Sync and
    async pools."""
    env = pp.make(env_fn=Walker, num_envs=2, batch_size=batch_size, num_threads=2, seed=3, length=[4, 6])
    ref = [Walker(length=4), Walker(length=6)]
    for i, r in enumerate(ref):
        r.reset(seed=3 + i)
    env.async_reset()
    for _ in range(2 // batch_size):
        env.recv()
    # one step of every env, then the new values (env 0 only); env 0's episode goes on with the old ones

    def step_all(action):
        out = {}
        env.send(np.array([action] * 2), np.array([0, 1]))
        for _ in range(2 // batch_size):
            obs, rew, term, trunc, info = env.recv()
            for j, e in enumerate(info["env_id"]):
                out[int(e)] = (obs[j], rew[j], trunc[j], info["level"][j])
        return out

    step_all(2)
    ref[0].step(2)
    ref[1].step(2)
    env.set_config(0, step_size=5.0, level=3)
    assert env.get_config(0)["step_size"] == 5.0 and "step_size" not in env.get_config(1)  # env 1: the default
    for t in range(1, 4):  # env 0's first episode: 4 steps, the old step size
        out = step_all(2)
        obs, *_ = ref[0].step(2)
        np.testing.assert_array_equal(out[0][0], obs, err_msg=f"old episode step {t}")
        assert out[0][3] == 0
    assert out[0][2]  # truncated: the old length
    new = Walker(length=4, step_size=5.0, level=3)  # the reference of the new episode: the old stream goes on
    new.np_random = ref[0].np_random
    obs, _ = new.reset()
    out = step_all(2)  # next-step autoreset: the reset row, with the new values
    np.testing.assert_array_equal(out[0][0], obs)
    assert out[0][3] == 3
    out = step_all(2)
    np.testing.assert_array_equal(out[0][0], new.step(2)[0])  # moved by 5, not 1
    env.close()


def test_python_env_bad_set_config_raises_and_changes_nothing():
    env = pp.make(env_fn=Walker, num_envs=3, num_threads=1, level=[0, 1, 2])
    env.reset()
    with pytest.raises(ValueError, match="level 99"):
        env.set_config([0, 2], level=[5, 99])
    with pytest.raises(ValueError, match="pool's own"):
        env.set_config(0, num_envs=4)
    with pytest.raises(ValueError, match="per-env values for 2 envs"):
        env.set_config([0, 1], level=[1, 2, 3])
    with pytest.raises(ValueError, match="unknown config keys"):
        pp.make(env_fn=Walker, num_envs=2, lenght=3)
    assert [env.get_config(i)["level"] for i in range(3)] == [0, 1, 2]
    obs, rew, term, trunc, info = env.step(np.ones(3, dtype=np.int64))
    env.close()


def test_python_env_snapshot_restore_continues_bit_identically():
    """Pickled env snapshots (CartPole through gymnasium.make, wrappers included): snapshot, step k actions across
    episode ends, restore, step the same k actions: identical results. A one-env snapshot branches into two."""
    env = pp.make("CartPole-v1", backend="python", num_envs=2, num_threads=2, seed=1)
    env.reset()
    for _ in range(5):
        env.step(np.array([1, 0]))
    snap = env.get_state([0, 1])
    assert snap["values"].dtype == np.uint8 and snap["elapsed"].tolist() == [5, 5]
    actions = np.random.default_rng(0).integers(0, 2, (80, 2))

    def run():
        return [env.step(a)[:4] for a in actions]

    first = run()
    assert any(r[2].any() for r in first)  # an episode ended in between
    env.set_state([0, 1], snap)
    for t, (x, y) in enumerate(zip(first, run())):
        for u, v in zip(x, y):
            np.testing.assert_array_equal(u, v, err_msg=f"step {t}")
    env.set_state([0, 1], snap)
    env.set_state([0, 1], env.get_state([0]))  # branching: env 0's state into both
    a, b = env.step(np.array([1, 1]))[0]
    np.testing.assert_array_equal(a, b)  # both envs at env 0's state
    env.close()


def test_python_env_snapshots_refuse_clearly():
    import threading

    class Locked(Walker):
        def __init__(self):
            super().__init__()
            self.lock = threading.Lock()

    env = pp.make(env_fn=Locked, num_envs=2, num_threads=1)
    env.reset()
    with pytest.raises(RuntimeError, match="cannot be pickled"):
        env.get_state([0])
    env.close()
    pytest.importorskip("Box2D")
    env = pp.make("LunarLander-v3", backend="python", num_envs=1)  # its pickle is a new env: EzPickle keeps its kwargs
    env.reset()
    with pytest.raises(RuntimeError, match="LunarLander pickles its constructor's arguments"):
        env.get_state([0])
    env.close()
    py = pp.make("CartPole-v1", backend="python", num_envs=2, num_threads=1, batch_size=1)
    cpp = pp.make("CartPole-v1", num_envs=2)
    cpp.reset()
    py.async_reset()
    py.recv()
    with pytest.raises(ValueError, match="pending"):
        py.get_state([0, 1])
    py.recv()
    with pytest.raises(ValueError, match="C\\+\\+ env's snapshot"):
        py.set_state([0], cpp.get_state([0]))
    with pytest.raises(ValueError, match="Python env's"):
        cpp.set_state([0], py.get_state([0]))
    with pytest.raises(NotImplementedError, match="get_state\\(\\[env_id\\]\\)"):
        py.get_state(0)
    py.close()
    cpp.close()


@pytest.mark.parametrize("task", ["MountainCar-v0", "MountainCarContinuous-v0"])
def test_mountain_car_goal_velocity_per_env_matches_gymnasium(task):
    """gymnasium's goal_velocity kwarg: the goal needs velocity >= it. Env i starts just before the goal, at
    velocities on either side of the goal velocities, and terminates exactly when gymnasium's env does."""
    goals = [0.0, 0.01, 0.03]
    env = pp.make(task, num_envs=3, goal_velocity=goals)
    with _quiet():
        refs = [gym.make(task, goal_velocity=g).unwrapped for g in goals]
    push = np.array([2, 2, 2]) if task == "MountainCar-v0" else np.ones((3, 1), dtype=np.float32)
    seen = set()
    for vel in np.linspace(-0.02, 0.05, 15):
        env.reset()
        for i, ref in enumerate(refs):
            ref.reset(seed=0)
            env.set_state(i, [0.49, vel])
            ref.state = np.array([0.49, vel])
        _, _, term, _, _ = env.step(push)
        for i, ref in enumerate(refs):
            with _quiet():
                _, _, r_term, _, _ = ref.step(push[i])
            assert bool(term[i]) == bool(r_term), f"goal_velocity {goals[i]}, velocity {vel}"
            seen.add((i, bool(term[i])))
    assert {(i, t) for i in range(3) for t in (False, True)} <= seen  # each env both short of and at its goal


def test_cartpole_sutton_barto_reward_per_env_matches_gymnasium():
    """gymnasium's CartPole(sutton_barto_reward=...): reward 0 per step and -1 on termination, else 1 always. Env i
    is put in the reference's state and stepped with the same actions, across several episode ends."""
    flags = [False, True, True]
    env = pp.make("CartPole-v1", num_envs=3, sutton_barto_reward=flags, seed=2)
    with _quiet():
        refs = [gym.make("CartPole-v1", sutton_barto_reward=f).unwrapped for f in flags]
    env.reset()
    rng = np.random.default_rng(0)
    ends, rewards = 0, set()
    for episode in range(4):
        for i, ref in enumerate(refs):
            ref.reset(seed=episode * 3 + i)
            env.set_state(i, ref.state)
        done = np.zeros(3, dtype=bool)
        while not done.all():
            a = rng.integers(0, 2, 3)
            _, reward, term, _, _ = env.step(a)
            for i, ref in enumerate(refs):
                if done[i]:
                    continue
                with _quiet():
                    _, r_reward, r_term, _, _ = ref.step(int(a[i]))
                assert (reward[i], bool(term[i])) == (r_reward, r_term), f"env {i} (sutton_barto_reward={flags[i]})"
                rewards.add((flags[i], float(reward[i])))
                done[i] = r_term
                ends += int(r_term)
        env.step(np.zeros(3, dtype=np.int64))  # the autoreset step of the envs that ended
    assert ends == 12 and rewards == {(False, 1.0), (True, 0.0), (True, -1.0)}
    env.close()


def test_adapters_reach_python_env_kwargs():
    """SB3's env_method / get_attr and Tianshou's set_env_attr / get_env_attr on a pool of Python envs."""
    from parallel_pool.integrations.sb3 import ParallelPoolVecEnv
    from parallel_pool.integrations.tianshou import ParallelPoolVectorEnv

    venv = ParallelPoolVecEnv(
        pp.make(env_fn=Walker, num_envs=3, num_threads=1, level=[1, 2, 3], autoreset_mode="same_step")
    )
    assert venv.get_attr("level") == [1, 2, 3]
    venv.env_method("set_config", indices=[0, 2], level=7)
    assert [c["level"] for c in venv.env_method("get_config")] == [7, 2, 7]
    with pytest.raises(ValueError, match="level 99"):
        venv.env_method("set_config", indices=[1], level=99)
    assert venv.get_attr("level") == [7, 2, 7]
    venv.close()
    tenv = ParallelPoolVectorEnv(pp.make(env_fn=Walker, num_envs=2, num_threads=1, level=0, autoreset_mode="same_step"))
    tenv.set_env_attr("level", 4, id=[1])
    assert tenv.get_env_attr("level") == [0, 4]
    tenv.reset()
    obs, rew, term, trunc, info = tenv.step(np.array([1, 1]))
    tenv.close()


# gymnasium v5 kwargs that EnvPool's (and our) keys name otherwise: ours -> gymnasium's (a range is two keys here,
# since a sequence value means one value per env); docs/per-env.md has the table
_MUJOCO_V5 = [
    (
        "Reacher-v5",
        {"dist_cost_weight": [0.5, 2.0], "ctrl_cost_weight": [3.0, 0.1]},
        lambda i, o: {
            "reward_dist_weight": o["dist_cost_weight"][i],
            "reward_control_weight": o["ctrl_cost_weight"][i],
        },
    ),
    (
        "Pusher-v5",
        {"near_cost_weight": [0.2, 1.0], "dist_cost_weight": [2.0, 0.5], "ctrl_cost_weight": [0.3, 0.01]},
        lambda i, o: {
            "reward_near_weight": o["near_cost_weight"][i],
            "reward_dist_weight": o["dist_cost_weight"][i],
            "reward_control_weight": o["ctrl_cost_weight"][i],
        },
    ),
    (
        "HumanoidStandup-v5",
        # (uph_cost_weight -> forward_reward_weight too, but gymnasium 1.4 never applies its uph_cost_weight)
        {"contact_cost_weight": [1e-6, 1e-5], "contact_cost_max": [5.0, 20.0]},
        lambda i, o: {
            "impact_cost_weight": o["contact_cost_weight"][i],
            "impact_cost_range": (-np.inf, o["contact_cost_max"][i]),
        },
    ),
    (
        "Hopper-v5",
        {"healthy_z_min": [0.7, 1.1], "healthy_angle_max": [0.2, 0.05]},
        lambda i, o: {
            "healthy_z_range": (o["healthy_z_min"][i], float("inf")),
            "healthy_angle_range": (-0.2, o["healthy_angle_max"][i]),
        },
    ),
]


@pytest.mark.parametrize("task,ours,theirs", _MUJOCO_V5, ids=[t for t, *_ in _MUJOCO_V5])
def test_mujoco_v5_kwargs_under_envpool_names_match_gymnasium(task, ours, theirs):
    """Env i made with our key's value steps as gymnasium's env made with the matching v5 kwarg, from the
    reference's states (reset state, then side by side), until an episode ends."""
    env = pp.make(task, num_envs=2, seed=2, **ours)
    with _quiet():
        refs = [gym.make(task, **theirs(i, ours)).unwrapped for i in range(2)]
        for ref in refs:
            ref.reset(seed=0)
    env.reset()
    for i, ref in enumerate(refs):
        env.set_state(i, np.concatenate([ref.data.qpos, ref.data.qvel]))
    rng = np.random.default_rng(1)
    shape = env.single_action_space.shape
    for t in range(60):
        a = rng.uniform(-1, 1, (2, *shape)).astype(np.float32)
        obs, rew, term, trunc, info = env.step(a)
        for i, ref in enumerate(refs):
            with _quiet():
                r_obs, r_rew, r_term, _, _ = ref.step(a[i])
            what = f"env {i} step {t}"
            np.testing.assert_allclose(obs[i], r_obs, rtol=1e-6, atol=1e-6, err_msg=what)
            np.testing.assert_allclose(rew[i], r_rew, rtol=1e-6, atol=1e-6, err_msg=what)
            assert bool(term[i]) == bool(r_term), what
        if (term | trunc).any():  # the pool's time limit, or an end: the unwrapped references go on
            break
    env.close()
