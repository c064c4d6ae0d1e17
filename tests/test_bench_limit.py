"""The physical-limit loop (`_core.bare_step_loop`, parallel_pool.bench.limit): it steps the real env, ends
episodes as the pool does, and its rate cannot exceed what the env's own cost allows."""

import pytest

import parallel_pool
from parallel_pool import _core
from parallel_pool.bench.limit import bare_rate, physical_limit


def _loop(task, seconds=0.0, min_steps=1, **config):
    spec = parallel_pool.make_spec(task, **config)
    return _core.bare_step_loop(spec.engine_type, spec.config_dict, seconds, min_steps)


def test_episodes_end_by_termination_and_by_max_episode_steps():
    # Dummy terminates after episode_len steps; max_episode_steps truncates earlier when it is smaller
    r = _loop("Dummy-v0", min_steps=700, episode_len=7)
    assert r["steps"] >= 700 and r["steps"] % 64 == 0  # the clock is read every 64 steps
    assert r["resets"] == 1 + r["steps"] // 7
    r = _loop("Dummy-v0", min_steps=64, episode_len=50, max_episode_steps=4)
    assert r["resets"] == 1 + r["steps"] // 4


def test_rate_is_bounded_by_the_env_cost():
    # a Dummy env busy-waits 2 ms per step: no honest loop makes more than 500 steps/s
    rate = bare_rate("Dummy-v0", seconds=0.05, step_cost_us=2000.0)
    assert 0 < rate <= 500


def test_cartpole_loop_runs_random_episodes():
    # random CartPole actions end an episode within a few dozen steps (as in gymnasium): many resets
    r = _loop("CartPole-v1", min_steps=6400)
    assert r["steps"] == 6400
    assert 6400 / 100 < r["resets"] < 6400 / 8


def test_physical_limit_is_cores_times_the_best_rate():
    r = physical_limit("Dummy-v0", seconds=0.01, repeats=2, cores=3)
    assert r["limit"] == pytest.approx(3 * r["single_thread"])


def test_unknown_config_key_is_named():
    with pytest.raises(Exception, match="no_such_key"):
        _loop("Dummy-v0", no_such_key=1)
