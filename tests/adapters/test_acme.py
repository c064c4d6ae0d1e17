"""ACME adapter (parallel_pool.integrations.acme): specs, per-env episode boundaries against the engine's
next-step reference, truncation as a discount-1 LAST step, and the batched EnvironmentLoop (per-env observe calls,
update schedule, per-env episode logs through ACME's loggers; sync and async)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

pytest.importorskip("acme")

import dm_env  # noqa: E402
import gymnasium as gym  # noqa: E402
from acme import core, specs  # noqa: E402
from acme.utils import loggers  # noqa: E402
from parallel_pool.integrations.acme import BatchedEnvironment, BatchedEnvironmentLoop  # noqa: E402

import parallel_pool  # noqa: E402


def test_make_environment_spec_gives_single_env_specs():
    env = BatchedEnvironment("CartPole-v1", num_envs=3, seed=0)
    spec = specs.make_environment_spec(env)
    ref = gym.make("CartPole-v1")
    assert spec.observations.shape == ref.observation_space.shape
    assert spec.observations.dtype == ref.observation_space.dtype
    np.testing.assert_array_equal(spec.observations.maximum, ref.observation_space.high)
    assert spec.actions.num_values == ref.action_space.n
    assert spec.rewards.shape == () and spec.discounts.shape == ()
    ts = env.reset()
    assert ts.observation.shape == (3, 4) and list(ts.step_type) == [dm_env.StepType.FIRST] * 3
    spec.observations.validate(ts.observation[0])
    env.close()


def test_each_env_ends_and_restarts_alone_and_truncation_keeps_discount_one():
    """Row by row equal to the engine's gymnasium front-end in next-step mode with the same seed and actions:
    LAST exactly where it terminates or truncates, discount 0 only on termination, FIRST (the env's own reset,
    action ignored) on that env's next step, while every other env carries on."""
    n, limit = 4, 25
    env = BatchedEnvironment("CartPole-v1", num_envs=n, seed=9, max_episode_steps=limit)
    ref = parallel_pool.make("CartPole-v1", env_type="gymnasium", num_envs=n, seed=9, max_episode_steps=limit)
    ts = env.reset()
    np.testing.assert_array_equal(ts.observation, ref.reset()[0])
    rng = np.random.default_rng(0)
    prev_done = np.zeros(n, dtype=bool)
    seen = defaultdict(int)
    for _ in range(300):
        actions = rng.integers(0, 2, n).astype(np.int32)
        ts = env.step(actions)
        obs, rew, term, trunc, info = ref.step(actions)
        np.testing.assert_array_equal(ts.observation, obs)
        np.testing.assert_array_equal(ts.reward, rew)
        expected = np.where(
            prev_done, dm_env.StepType.FIRST, np.where(term | trunc, dm_env.StepType.LAST, dm_env.StepType.MID)
        )
        np.testing.assert_array_equal(ts.step_type, expected)
        np.testing.assert_array_equal(ts.discount, np.where(term, 0.0, 1.0))
        np.testing.assert_array_equal(env.info["elapsed_step"], info["elapsed_step"])
        np.testing.assert_array_equal(env.env_id, np.arange(n))
        seen["first_while_others_mid"] += int(prev_done.any() and not prev_done.all())
        seen["terminated"] += int(term.sum())
        seen["truncated_discount_1"] += int((trunc & (ts.discount == 1.0)).sum())
        prev_done = term | trunc
    assert seen["first_while_others_mid"] > 0 and seen["terminated"] > 0 and seen["truncated_discount_1"] > 0
    env.close()
    ref.close()


class RecordingActor(core.Actor):
    """A batched actor with a fixed policy (push the cart toward the pole's lean) that records its calls."""

    def __init__(self):
        self.calls: dict[int, list] = defaultdict(list)
        self.updates = 0
        self.batches = 0

        self.last_obs: dict[int, np.ndarray] = {}

    @staticmethod
    def policy(observation):
        return (observation[..., 2] + 0.3 * observation[..., 3] > 0).astype(np.int32)

    def select_action(self, observation):
        self.batches += 1
        return self.policy(observation)

    def observe_first(self, timestep, env_id=None):
        assert timestep.first() and timestep.reward is None
        self.calls[env_id].append(("first", timestep))
        self.last_obs[env_id] = timestep.observation

    def observe(self, action, next_timestep, env_id=None):
        # the action handed back is the one chosen for this env's previous observation (rows of an async
        # pool's batches belong to different envs from one step to the next)
        assert int(action) == self.policy(self.last_obs[env_id])
        self.calls[env_id].append(("observe", int(action), next_timestep))
        self.last_obs[env_id] = next_timestep.observation

    def update(self, wait=False):
        self.updates += 1


def _episodes(calls) -> list[tuple[float, int]]:
    """(return, length) of each complete episode in an env's call record, checking the call order."""
    out, ret, length, started = [], 0.0, 0, False
    for call in calls:
        if call[0] == "first":
            assert not started or length == 0, "observe_first in the middle of an episode"
            started, ret, length = True, 0.0, 0
            continue
        assert started, "observe before observe_first"
        ts = call[2]
        ret += float(ts.reward)
        length += 1
        if ts.last():
            out.append((ret, length))
            started = False
    return out


def test_loop_feeds_each_env_its_own_timesteps_and_logs_its_episodes():
    n, limit = 4, 60
    env = BatchedEnvironment("CartPole-v1", num_envs=n, seed=2, max_episode_steps=limit)
    actor = RecordingActor()
    logger = loggers.InMemoryLogger()
    steps = BatchedEnvironmentLoop(env, actor, logger=logger).run(num_steps=600)
    assert actor.updates == actor.batches  # update() once per batched step
    # the reference: the same seed and policy, stepped by hand on the engine's next-step gymnasium front-end
    ref = parallel_pool.make("CartPole-v1", env_type="gymnasium", num_envs=n, seed=2, max_episode_steps=limit)
    obs, _ = ref.reset()
    ref_eps: dict[int, list] = defaultdict(list)
    ret, length, skip = np.zeros(n), np.zeros(n, int), np.zeros(n, bool)
    ref_steps = 0
    for _ in range(actor.batches):
        obs, rew, term, trunc, _ = ref.step(actor.select_action(obs))
        ret[~skip] += rew[~skip]
        length[~skip] += 1
        ref_steps += int((~skip).sum())
        for e in np.flatnonzero((term | trunc) & ~skip):
            ref_eps[e].append((ret[e], int(length[e])))
            ret[e], length[e] = 0.0, 0
        skip = term | trunc  # the next row of a finished env is its reset
    assert steps == ref_steps
    for e in range(n):
        assert _episodes(actor.calls[e]) == ref_eps[e]
    logged = defaultdict(list)
    for record in logger.data:
        logged[record["env_id"]].append((record["episode_return"], record["episode_length"]))
        assert record["steps_per_second"] > 0
    assert dict(logged) == {e: v for e, v in ref_eps.items() if v}
    assert logger.data[-1]["episodes"] == sum(len(v) for v in ref_eps.values())
    assert logger.data[-1]["steps"] <= steps
    env.close()
    ref.close()


def test_async_loop_gives_each_env_the_same_episodes_as_sync():
    """Trajectories depend on (seed, env_id, actions) only: with a policy of the observation, every env's
    episodes are the same whether the pool is sync or async (rows arrive in completion order)."""

    def run(batch_size):
        env = BatchedEnvironment("CartPole-v1", num_envs=6, batch_size=batch_size, seed=4, max_episode_steps=80)
        actor = RecordingActor()
        BatchedEnvironmentLoop(env, actor, logger=loggers.InMemoryLogger()).run(num_steps=2000)
        env.close()
        return {e: _episodes(c) for e, c in actor.calls.items()}

    sync, async_ = run(6), run(3)
    assert sorted(async_) == list(range(6))
    for e in range(6):
        k = min(len(sync[e]), len(async_[e]))
        assert k >= 2
        assert sync[e][:k] == async_[e][:k]


def test_stock_actor_signature_without_env_id():
    class Stock(core.Actor):
        def __init__(self):
            self.observed = 0

        def select_action(self, observation):
            return np.zeros(len(observation), np.int32)

        def observe_first(self, timestep):
            pass

        def observe(self, action, next_timestep):
            self.observed += 1

        def update(self, wait=False):
            pass

    actor = Stock()
    env = BatchedEnvironment("CartPole-v1", num_envs=2, seed=0)
    steps = BatchedEnvironmentLoop(env, actor, logger=loggers.InMemoryLogger(), should_update=False).run(num_episodes=2)
    assert actor.observed == steps > 0


def test_errors_are_clear():
    with pytest.raises(ValueError, match="autoreset_mode"):
        BatchedEnvironment("CartPole-v1", num_envs=2, autoreset_mode="same_step")
    with pytest.raises(ValueError, match="no_such_key"):
        BatchedEnvironment("CartPole-v1", num_envs=2, no_such_key=3)
    env = BatchedEnvironment("CartPole-v1", num_envs=2, seed=0)
    loop = BatchedEnvironmentLoop(env, RecordingActor(), logger=loggers.InMemoryLogger())
    with pytest.raises(ValueError, match="should be None"):
        loop.run(num_episodes=1, num_steps=1)
    env.reset()
    with pytest.raises(ValueError):
        env.step(np.zeros(3, np.int32))  # one action per env
    ts = env.step(np.zeros(2, np.int32))  # the env stays usable
    assert ts.observation.shape == (2, 4)


@pytest.mark.skipif("Pong-v5" not in parallel_pool.list_all_envs(), reason="this build has no Atari envs")
def test_atari_observation_is_the_frame_stack_and_info_holds_the_rest():
    env = BatchedEnvironment("Pong-v5", num_envs=2, seed=0)
    spec = specs.make_environment_spec(env)
    env.reset()
    ts = env.step(np.zeros(2, np.int32))
    assert ts.observation.shape == (2,) + spec.observations.shape == (2, 4, 84, 84)
    assert ts.observation.dtype == np.uint8
    assert {"lives", "reward", "elapsed_step"} <= set(env.info)
    np.testing.assert_array_equal(env.info["elapsed_step"], [1, 1])
    env.close()
