"""RLlib (new API stack): its EnvRunners make their envs with gymnasium.make_vec, so
environment("ParallelPool/CartPole-v1") with gym_env_vectorize_mode="vector_entry_point" reaches the pool, and
RLlib's PPO (examples/rllib_ppo.py's config) trains CartPole-v1 to >= 475.

RLlib pins gymnasium 1.2.2, so these tests run in a venv of their own (.ci/rllib.sh, which sets PP_RLLIB_TESTS);
tests/conftest.py leaves this file out of other runs."""

from __future__ import annotations

import importlib.util
import pathlib
import sys

import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.rllib")

import parallel_pool  # noqa: E402
from parallel_pool.frontends import GymnasiumPool  # noqa: E402

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "rllib_ppo.py"
_spec = importlib.util.spec_from_file_location("rllib_ppo", EXAMPLE)
rllib_ppo = importlib.util.module_from_spec(_spec)
sys.modules["rllib_ppo"] = rllib_ppo
_spec.loader.exec_module(rllib_ppo)


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_env_runner_steps_the_pool():
    algo = rllib_ppo.config_for("CartPole-v1", num_envs=4, seed=0).build_algo()
    runner = algo.env_runner
    assert isinstance(runner.env.unwrapped, GymnasiumPool)
    assert runner.env.unwrapped.num_envs == 4 and runner.env.unwrapped.config["seed"] == 0
    episodes = runner.sample(num_timesteps=400, random_actions=True)
    assert sum(len(e) for e in episodes) >= 400
    algo.stop()


@pytest.mark.training
def test_rllib_ppo_cartpole_reaches_475():
    algo = rllib_ppo.config_for("CartPole-v1", num_envs=8, seed=0).build_algo()
    best, steps = float("-inf"), 0
    for _ in range(60):
        result = algo.train()
        steps = result["env_runners"]["num_env_steps_sampled_lifetime"]
        best = max(best, result["env_runners"].get("episode_return_mean", float("-inf")))
        if best >= 475:
            break
    algo.stop()
    print(f"RLlib PPO CartPole-v1: episode_return_mean {best:.1f} after {steps} steps")
    assert best >= 475, f"episode_return_mean {best:.1f} < 475 after {steps} steps"
    assert parallel_pool.list_all_envs()  # the package RLlib ran is this one
