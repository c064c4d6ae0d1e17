"""API parity with EnvPool for the same task and config (skipped where envpool is not installed)."""

import numpy as np
import pytest

import parallel_pool as pp

envpool = pytest.importorskip("envpool", reason="envpool is not installed; parity tests need it")

COMMON_KEYS = [
    "num_envs",
    "batch_size",
    "num_threads",
    "max_num_players",
    "thread_affinity_offset",
    "seed",
    "max_episode_steps",
    "reward_threshold",
]


@pytest.mark.parametrize("task", ["CartPole-v0", "CartPole-v1"])
def test_spec_and_spaces_match_envpool(task):
    ours, theirs = pp.make_spec(task, num_envs=4), envpool.make_spec(task, num_envs=4)
    for key in COMMON_KEYS:
        assert getattr(ours.config, key) == getattr(theirs.config, key), key
    assert ours.observation_space == theirs.observation_space
    assert ours.action_space == theirs.action_space


@pytest.mark.parametrize("env_type", ["gymnasium", "gym", "dm"])
def test_outputs_match_envpool(env_type):
    kw = dict(num_envs=4, seed=7)
    a = pp.make("CartPole-v1", env_type=env_type, **kw)
    b = envpool.make("CartPole-v1", env_type=env_type, **kw)
    rng = np.random.default_rng(1)
    if env_type == "dm":
        ta, tb = a.reset(), b.reset()
        assert set(tb.observation._fields) <= set(ta.observation._fields)
        for _ in range(300):
            act = rng.integers(0, 2, 4).astype(np.int32)
            ta, tb = a.step(act), b.step(act)
            np.testing.assert_array_equal(ta.observation.obs, tb.observation.obs)
            np.testing.assert_array_equal(ta.step_type, tb.step_type)
            np.testing.assert_array_equal(ta.reward, tb.reward)
            assert ta.reward.dtype == tb.reward.dtype and ta.observation.obs.dtype == tb.observation.obs.dtype
        return
    (oa, ia), (ob, ib) = a.reset(), b.reset()
    np.testing.assert_array_equal(oa, ob)  # same generator, same seeds: bit-identical resets
    assert set(ib) <= set(ia)
    for k in ib:
        if k != "players":
            assert ia[k].dtype == ib[k].dtype, k
    for _ in range(600):  # several episodes, through next-step auto-resets
        act = rng.integers(0, 2, 4).astype(np.int32)
        ra, rb = a.step(act), b.step(act)
        for x, y in zip(ra[:4], rb[:4]):
            np.testing.assert_array_equal(x, y)
            assert x.dtype == y.dtype
        for k in ("env_id", "elapsed_step"):
            np.testing.assert_array_equal(ra[4][k], rb[4][k])
        np.testing.assert_array_equal(ra[4]["players"]["env_id"], rb[4]["players"]["env_id"])


def test_async_info_keys_match_envpool():
    a = pp.make("CartPole-v1", num_envs=4, batch_size=2)
    b = envpool.make("CartPole-v1", env_type="gymnasium", num_envs=4, batch_size=2)
    a.async_reset()
    b.async_reset()
    ra, rb = a.recv(), b.recv()
    assert ra[0].shape == rb[0].shape and set(rb[4]) <= set(ra[4])
