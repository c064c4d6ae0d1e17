"""The per-call fast path of the gym-style front-ends (sync pool, every env, one action array) gives exactly what
the general path gives: the same 5-tuple, the same info keys and masks, and the same rows kept for reset_mask."""

import numpy as np
import pytest

import parallel_pool


def _same(a, b):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _same(a[k], b[k])
    else:
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("env_type", ["gymnasium", "gym"])
@pytest.mark.parametrize("task", ["CartPole-v1", "Dummy-v0"])
def test_fast_path_matches_the_general_path(env_type, task):
    n = 3
    fast = parallel_pool.make(task, env_type=env_type, num_envs=n, seed=5)
    general = parallel_pool.make(task, env_type=env_type, num_envs=n, seed=5)
    fast.reset()
    general.reset()
    rng = np.random.default_rng(0)
    space = fast.single_action_space if env_type == "gymnasium" else fast.action_space
    for _ in range(30):
        act = np.array([space.sample() for _ in range(n)])
        a = fast.step(act)  # the fast path
        b = general.step(act, env_id=np.arange(n))  # the general path (explicit env ids)
        for x, y in zip(a, b):
            _same(x, y)
        assert list(a[4]) == list(b[4])  # same info keys in the same order
    mask = rng.random(n) < 0.5
    mask[0] = True
    _same(fast.reset(options={"reset_mask": mask})[0], general.reset(options={"reset_mask": mask})[0])
    fast.close()
    general.close()


def test_fast_path_on_a_closed_pool_names_the_front_end():
    env = parallel_pool.make("CartPole-v1", num_envs=2)
    env.reset()
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.step(np.zeros(2, np.int32))
