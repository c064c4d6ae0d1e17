"""The example env of docs/adding-an-env.md (Corridor-v0, core/envs/examples/): the guide's listings are the real
files, its Python snippets run, and the env is tested like every other env: exactly against a reference model where
it is deterministic, by distribution where it is not, through all front-ends, async mode and (when built) XLA."""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import parallel_pool as pp

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "adding-an-env.md"


# ---------------------------------------------------------------------------------------------------------------
# the guide cannot rot
def test_guide_listings_are_the_files():
    text = GUIDE.read_text()
    listings = re.findall(r"<!-- file: (\S+) -->\n```\w*\n(.*?)```", text, flags=re.S)
    assert {p for p, _ in listings} == {"core/envs/examples/corridor.h", "core/envs/examples/register.cc"}
    for path, body in listings:
        assert body == (ROOT / path).read_text(), f"docs/adding-an-env.md's listing of {path} is out of date"


def test_guide_snippets_run():
    snippets = re.findall(r"<!-- run -->\n```python\n(.*?)```", GUIDE.read_text(), flags=re.S)
    assert snippets
    for code in snippets:
        exec(compile(code, str(GUIDE), "exec"), {})


# ---------------------------------------------------------------------------------------------------------------
# a reference model of the rules the guide states
class CorridorModel:
    def __init__(self, length):
        self.length = length

    def step(self, pos, action, slipped):
        move = 1 if action == 1 else -1
        if slipped:
            move = -move
        pos = min(max(pos + move, 0), self.length - 1)
        goal = pos == self.length - 1
        return pos, (1.0 if goal else -0.01), goal

    def obs(self, pos):
        o = np.zeros(self.length, np.float32)
        o[pos] = 1
        return o


def test_test_envs_are_made_but_not_listed():
    listed = set(pp.list_all_envs())
    for task in ("Dummy-v0", "TwoPlayer-v0", "Corridor-v0", "CorridorLong-v0"):
        assert task not in listed
        pp.make(task, num_envs=1).close()
    assert {"CartPole-v1", "Taxi-v3"} <= listed


def test_registered_with_spec_and_defaults():
    # an example type ("_Corridor"): made like any env, but not in the public list
    assert not {"Corridor-v0", "CorridorLong-v0"} & set(pp.list_all_envs())
    spec = pp.make_spec("Corridor-v0")
    assert spec.config.length == 8 and spec.config.slip_prob == 0.1 and spec.config.max_episode_steps == 100
    long = pp.make_spec("CorridorLong-v0")
    assert long.config.length == 32 and long.config.max_episode_steps == 400
    assert long.observation_space.shape == (32,) and long.observation_space.dtype == np.float32
    assert spec.action_space.n == 2


@pytest.mark.parametrize("length", [2, 5, 8])
def test_deterministic_transitions_exact(length):
    """slip_prob=0: every (state, action) against the model."""
    model = CorridorModel(length)
    pairs = [(s, a) for s in range(length - 1) for a in range(2)]
    env = pp.make("Corridor-v0", num_envs=len(pairs), length=length, slip_prob=0.0)
    env.reset()
    for i, (s, _) in enumerate(pairs):
        env.set_state(i, [s])
        assert env.get_state(i)[0] == s
    obs, rew, term, trunc, info = env.step(np.array([a for _, a in pairs], np.int32))
    for i, (s, a) in enumerate(pairs):
        pos, r, done = model.step(s, a, False)
        np.testing.assert_array_equal(obs[i], model.obs(pos))
        assert rew[i] == np.float32(r) and term[i] == done and not trunc[i] and not info["slipped"][i]


def test_trajectories_with_episode_limit():
    """Whole episodes against the model, with slips taken from info["slipped"], through terminations, the
    max_episode_steps truncation and the next-step autoreset."""
    length, limit = 6, 15
    model = CorridorModel(length)
    env = pp.make("Corridor-v0", num_envs=1, length=length, slip_prob=0.3, max_episode_steps=limit, seed=5)
    obs, _ = env.reset()
    pos = int(obs[0].argmax())
    rng = np.random.default_rng(0)
    stats = Counter()
    t = 0
    for _ in range(3000):
        a = int(rng.random() < 0.55)  # slightly right-biased: some episodes reach the goal, some time out
        obs, rew, term, trunc, info = env.step(np.array([a], np.int32))
        t += 1
        pos, r, done = model.step(pos, a, bool(info["slipped"][0]))
        np.testing.assert_array_equal(obs[0], model.obs(pos))
        assert rew[0] == np.float32(r) and term[0] == done
        assert trunc[0] == (t >= limit and not done) and info["elapsed_step"][0] == t
        if term[0] or trunc[0]:
            stats["terminated" if term[0] else "truncated"] += 1
            obs, rew, term, trunc, info = env.step(np.array([1], np.int32))  # the reset step
            assert rew[0] == 0 and not term[0] and not trunc[0] and info["elapsed_step"][0] == 0
            pos, t = int(obs[0].argmax()), 0
            assert pos < length - 1
    assert stats["terminated"] > 20 and stats["truncated"] > 20, stats


def test_slip_probability():
    """info["slipped"] occurs with probability slip_prob (binomial bound), independently of state and action,
    and the moves agree with it."""
    length, p = 5, 0.3
    model = CorridorModel(length)
    pairs = [(s, a) for s in range(length - 1) for a in range(2)] * 250
    env = pp.make("Corridor-v0", num_envs=len(pairs), length=length, slip_prob=p, seed=3)
    actions = np.array([a for _, a in pairs], np.int32)
    slips = Counter()
    env.reset()
    rounds = 10
    for _ in range(rounds):
        for i, (s, _) in enumerate(pairs):
            env.set_state(i, [s])
        obs, rew, term, _, info = env.step(actions)
        for i, (s, a) in enumerate(pairs):
            pos, _, _ = model.step(s, a, bool(info["slipped"][i]))
            assert obs[i].argmax() == pos
            slips[(s, a)] += int(info["slipped"][i])
        done = np.flatnonzero(term)
        if len(done):
            env.reset(env_id=done.astype(np.int32))
    per_pair = rounds * 250
    sigma = math.sqrt(p * (1 - p) / per_pair)
    for key, k in slips.items():
        assert abs(k / per_pair - p) < 5 * sigma, key
    total = sum(slips.values()) / (per_pair * len(slips))
    sigma_all = math.sqrt(p * (1 - p) / (per_pair * len(slips)))
    assert abs(total - p) < 5 * sigma_all and 5 * sigma_all < 0.02  # 0.28 or 0.32 would fail


def test_reset_distribution():
    length, n = 8, 7000
    env = pp.make("Corridor-v0", num_envs=n, length=length, seed=1)
    obs, _ = env.reset()
    assert (obs.sum(1) == 1).all()
    counts = np.bincount(obs.argmax(1), minlength=length)
    assert counts[-1] == 0  # never at the goal
    expected = n / (length - 1)
    chi2 = ((counts[:-1] - expected) ** 2 / expected).sum()
    assert chi2 < 35  # df 6: p < 1e-5 beyond this


def test_seeding_independent_of_threads_and_batching():
    def run(**kw):
        env = pp.make("Corridor-v0", num_envs=8, seed=11, **kw)
        out = [env.reset()[0]]
        for t in range(60):
            out.append(env.step(np.full(8, t % 2, np.int32))[0])
        return np.stack(out)

    base = run(num_threads=1)
    np.testing.assert_array_equal(base, run(num_threads=2))
    env = pp.make("Corridor-v0", num_envs=8, batch_size=3, seed=11)  # async: per-env trajectories are the same
    env.async_reset()
    per_env = {i: [] for i in range(8)}
    while min(len(v) for v in per_env.values()) < 61:
        obs, _, _, _, info = env.recv()
        ids = info["env_id"]
        for i, o in zip(ids, obs):
            per_env[i].append(o)
        env.send(np.array([(len(per_env[i]) - 1) % 2 for i in ids], np.int32), ids)
    for i in range(8):
        np.testing.assert_array_equal(np.stack(per_env[i][:61]), base[:, i])
    assert not np.array_equal(base[0], pp.make("Corridor-v0", num_envs=8, seed=12).reset()[0])


def test_front_ends():
    import dm_env
    import gymnasium

    g = pp.make("Corridor-v0", env_type="gymnasium", num_envs=3, length=4, slip_prob=0.0, max_episode_steps=2)
    assert isinstance(g, gymnasium.vector.VectorEnv)
    assert g.observation_space.shape == (3, 4) and g.single_observation_space.shape == (4,)
    d = pp.make("Corridor-v0", env_type="dm", num_envs=3, length=4, slip_prob=0.0, max_episode_steps=2)
    d.reset()
    for e, s in enumerate([0, 0, 1]):
        d.set_state(e, [s])
    ts = d.step(np.array([0, 0, 1], np.int32))  # cells 0, 0, 2
    assert list(ts.step_type) == [dm_env.StepType.MID] * 3
    ts = d.step(np.array([0, 1, 1], np.int32))  # env 2 reaches the goal on step 2; the others hit the limit
    assert list(ts.step_type) == [dm_env.StepType.LAST] * 3
    assert list(ts.discount) == [1.0, 1.0, 0.0]  # discount 0 only on termination
    assert list(ts.observation.slipped) == [False] * 3
    gym_style = pp.make("Corridor-v0", env_type="gym", num_envs=2)
    obs, info = gym_style.reset()
    assert obs.shape == (2, 8) and "slipped" in info


def test_bad_config():
    with pytest.raises(ValueError, match="length"):
        pp.make("Corridor-v0", length=1)
    with pytest.raises(ValueError, match="slip_prob"):
        pp.make("Corridor-v0", slip_prob=1.5)
    with pytest.raises(ValueError, match="slip_prb"):
        pp.make("Corridor-v0", slip_prb=0.5)  # unknown key, with a suggestion
    env = pp.make("Corridor-v0", length=4)
    with pytest.raises(ValueError):
        env.set_state(0, [3])  # the goal is not a state to start from


def test_xla_matches_plain_api():
    """env.xla() gives the same trajectories as the plain API (skipped where the engine was built without XLA)."""
    jax = pytest.importorskip("jax")
    pytest.importorskip("parallel_pool.xla")
    if not getattr(pp._core, "has_xla", False):
        pytest.skip("parallel_pool was built without XLA support")
    n, steps = 4, 30
    acts = (np.arange(steps * n).reshape(steps, n) % 3 == 0).astype(np.int32)
    ref = pp.make("Corridor-v0", num_envs=n, seed=2)
    ref.reset()
    want = [ref.step(a) for a in acts]
    env = pp.make("Corridor-v0", num_envs=n, seed=2)
    env.reset()
    handle, recv, send, step = env.xla()

    @jax.jit
    def rollout(handle, acts):
        def body(h, a):
            h, (obs, rew, term, trunc, info) = step(h, a)
            return h, (obs, rew, term, trunc)

        return jax.lax.scan(body, handle, acts)

    _, (obs, rew, term, trunc) = rollout(handle, acts)
    for t in range(steps):
        np.testing.assert_array_equal(np.asarray(obs[t]), want[t][0])
        np.testing.assert_array_equal(np.asarray(rew[t]), want[t][1])
        np.testing.assert_array_equal(np.asarray(term[t]), want[t][2])
        np.testing.assert_array_equal(np.asarray(trunc[t]), want[t][3])
