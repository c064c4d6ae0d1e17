"""parallel_pool.integrations.tianshou.ParallelPoolVectorEnv under Tianshou's own Collector / AsyncCollector:
what lands in the replay buffer is checked transition by transition on Dummy-v0 (obs = [env_id, steps this
episode, last action, draw]; reward = action; terminated after episode_len steps)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("tianshou")
torch = pytest.importorskip("torch")

from parallel_pool.integrations.tianshou import ParallelPoolVectorEnv  # noqa: E402
from tianshou.algorithm.modelfree.reinforce import DiscreteActorPolicy  # noqa: E402
from tianshou.data import AsyncCollector, Batch, Collector, VectorReplayBuffer  # noqa: E402
from tianshou.env import BaseVectorEnv  # noqa: E402
from tianshou.utils.net.common import Net  # noqa: E402
from tianshou.utils.net.discrete import DiscreteActor  # noqa: E402

import parallel_pool  # noqa: E402

torch.set_num_threads(1)


class _PolicyWithEntry(DiscreteActorPolicy):
    """tianshou 2.0.1's AsyncCollector indexes the per-env "policy" entry and hidden state of the policy's output,
    which DiscreteActorPolicy leaves empty / None (neither can be indexed, whatever the env); give it both."""

    def forward(self, batch, state=None):
        out = super().forward(batch, state)
        out.policy = Batch(step=np.zeros(len(out.act)))
        out.state = np.zeros(len(out.act))
        return out


def policy_for(venv, cls=DiscreteActorPolicy):
    obs_space, act_space = venv.observation_space[0], venv.action_space[0]
    actor = DiscreteActor(
        preprocess_net=Net(state_shape=obs_space.shape, hidden_sizes=[8]),
        action_shape=act_space.n,
        softmax_output=False,
    )
    return cls(actor=actor, action_space=act_space, observation_space=obs_space)


def env_transitions(buffer, env):
    """The transitions env `env` wrote into a VectorReplayBuffer, in order."""
    sub = buffer.buffers[env]
    return sub[np.arange(len(sub))]


def check_chain(b, episode_len, max_steps=1000):
    """Dummy-v0 transitions of one env, in order: obs_next is the true successor (the final observation at an
    episode end), the next transition starts from a reset, terminated/truncated are kept apart."""
    assert len(b) > 0
    for t in range(len(b)):
        steps = b.obs[t][1]
        np.testing.assert_array_equal(b.obs_next[t][:3], [b.obs[t][0], steps + 1, b.act[t]])
        assert b.rew[t] == b.act[t]
        end = steps + 1
        assert bool(b.terminated[t]) == (end >= episode_len)
        assert bool(b.truncated[t]) == (end >= max_steps and end < episode_len)
        if t + 1 < len(b):
            if b.done[t]:
                assert b.obs[t + 1][1] == 0  # the episode after a reset
            else:
                np.testing.assert_array_equal(b.obs[t + 1], b.obs_next[t])


@pytest.mark.parametrize("max_steps", [1000, 2])
def test_collector_fills_the_buffer_correctly(max_steps):
    venv = ParallelPoolVectorEnv("Dummy-v0", num_envs=3, episode_len=3, max_episode_steps=max_steps)
    assert isinstance(venv, BaseVectorEnv) and len(venv) == 3
    col = Collector(policy_for(venv), venv, VectorReplayBuffer(300, 3))
    col.reset()
    stats = col.collect(n_step=30, random=True)
    assert stats.n_collected_steps == 30
    ep_len = min(3, max_steps)
    assert stats.n_collected_episodes == 3 * (10 // ep_len) and set(stats.lens.tolist()) == {ep_len}
    for env in range(3):
        b = env_transitions(col.buffer, env)
        assert (b.obs[:, 0] == env).all()
        check_chain(b, 3, max_steps)
        assert b.info["score"][b.done].tolist() == pytest.approx(
            [b.rew[t - ep_len + 1 : t + 1].sum() for t in np.flatnonzero(b.done)]
        )
    venv.close()


def test_collect_episodes():
    venv = ParallelPoolVectorEnv("Dummy-v0", num_envs=4, episode_len=5, seed=3)
    col = Collector(policy_for(venv), venv)
    stats = col.collect(n_episode=6, reset_before_collect=True)
    assert stats.n_collected_episodes == 6 and set(stats.lens.tolist()) == {5}
    venv.close()


def test_reset_after_done_reuses_the_engine_reset():
    venv = ParallelPoolVectorEnv("Dummy-v0", num_envs=2, episode_len=1)
    venv.reset()
    obs_next, _, term, _, _ = venv.step(np.array([1, 1]))
    assert term.all() and (obs_next[:, 1] == 1).all()  # the final observations
    obs, infos = venv.reset([1, 0])
    assert (obs[:, 1] == 0).all() and [i["env_id"] for i in infos] == [1, 0]
    again, _, _, _, _ = venv.step(np.array([0]), [1])
    assert again[0, 3] == obs[0, 3]  # same episode (same draw): the reset was not done twice


def test_seed_attributes_and_errors():
    venv = ParallelPoolVectorEnv("CartPole-v1", num_envs=3)
    assert venv.seed(21) == [21, 22, 23]
    obs, _ = venv.reset()
    ref, _ = parallel_pool.make("CartPole-v1", num_envs=3, seed=21).reset()
    np.testing.assert_array_equal(obs, ref)
    assert venv.get_env_attr("max_episode_steps", [0, 2]) == [500, 500]
    assert venv.action_space[1].n == 2 and venv.observation_space[0].shape == (4,)
    with pytest.raises(AttributeError, match="no Python attribute 'gravity'"):
        venv.get_env_attr("gravity")
    with pytest.raises(AttributeError, match="pass config keys"):
        venv.set_env_attr("max_episode_steps", 3)
    with pytest.raises(ValueError, match="no reset arguments"):
        venv.reset(options={"x": 1})
    venv.close()
    with pytest.raises(AssertionError, match="cannot be called after close"):
        venv.step(np.zeros(3, np.int64))


def test_async_collector():
    venv = ParallelPoolVectorEnv("Dummy-v0", num_envs=8, batch_size=4, episode_len=3, seed=5)
    assert venv.is_async
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        col = AsyncCollector(policy_for(venv, _PolicyWithEntry), venv, VectorReplayBuffer(800, 8))
    col.reset()
    stats = col.collect(n_step=64)
    assert stats.n_collected_steps >= 64
    for env in range(8):
        b = env_transitions(col.buffer, env)
        if len(b):
            assert (b.obs[:, 0] == env).all()
            check_chain(b, 3)
    col.reset()  # drains the results still in flight, then resets every env
    stats = col.collect(n_step=32)
    assert stats.n_collected_steps >= 32
    venv.close()
