"""parallel_pool.integrations.torchrl.ParallelPoolEnv: TorchRL's check_env_specs over a C++ id of every family, a
Python env and Dict observations; partial resets through "_reset" in both autoreset modes TorchRL's loop can use,
with the final observation kept as ("next", obs); seeds; the refusals."""

from __future__ import annotations

import sys

import cloudpickle
import gymnasium as gym
import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchrl")

from parallel_pool.integrations.torchrl import ParallelPoolEnv  # noqa: E402
from torchrl.envs.utils import check_env_specs  # noqa: E402

import parallel_pool as pp  # noqa: E402

# the Python envs below travel to the worker processes by value, as a user's script's envs do
cloudpickle.register_pickle_by_value(sys.modules[__name__])

# one C++ id per family (Dict observations among them: MiniGrid's image + direction, DMC's named arrays); ViZDoom's
# frames are a uint8 Box like Pong's, and its engine processes are tested in tests/envs/vizdoom
FAMILY_IDS = [
    "CartPole-v1",
    "FrozenLake-v1",
    "Hopper-v5",
    "CheetahRun-v1",
    "Pong-v5",
    "LunarLanderContinuous-v3",
    "MiniGrid-Empty-5x5-v0",
]


@pytest.mark.parametrize("task", FAMILY_IDS)
@pytest.mark.parametrize("mode", ["disabled", "same_step"])
def test_check_env_specs_for_every_family(task, mode):
    if task not in pp.list_all_envs():
        pytest.skip(f"{task}'s family is not built")
    env = ParallelPoolEnv(task, num_envs=3, seed=1, autoreset_mode=mode)
    check_env_specs(env, seed=0)
    env.close()


class _DictEnv(gym.Env):
    """A Python env with Dict observations that ends after `length` steps."""

    def __init__(self, length: int = 3):
        self.length = length
        self.observation_space = gym.spaces.Dict(
            {"pos": gym.spaces.Box(0, 10, (1,), np.int64), "goal": gym.spaces.Box(-1.0, 1.0, (2,), np.float32)}
        )
        self.action_space = gym.spaces.Discrete(3)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self._obs(), {}

    def _obs(self):
        return {"pos": np.array([self.t]), "goal": np.array([0.5, -0.5], np.float32)}

    def step(self, action):
        self.t += 1
        return self._obs(), float(action), self.t >= self.length, False, {}


def test_python_env_with_dict_observations():
    env = ParallelPoolEnv(_DictEnv, num_envs=2, length=3)
    assert set(env.observation_spec.keys()) == {"pos", "goal"}
    check_env_specs(env, seed=0)
    env.close()


@pytest.mark.parametrize("mode", ["disabled", "same_step"])
def test_rollout_resets_finished_envs_and_keeps_their_final_observation(mode):
    env = ParallelPoolEnv(_DictEnv, num_envs=2, length=3, autoreset_mode=mode, categorical_action_encoding=True)
    td = env.rollout(7, break_when_any_done=False)
    assert td.batch_size == torch.Size([2, 7])
    pos = td.get("pos")[..., 0]
    next_pos = td.get(("next", "pos"))[..., 0]
    done = td.get(("next", "done"))[..., 0]
    for i in range(2):
        assert pos[i].tolist() == [0, 1, 2, 0, 1, 2, 0]  # each episode starts again at 0 after its third step
        assert next_pos[i].tolist() == [1, 2, 3, 1, 2, 3, 1]  # the final observation (3) is kept as ("next", obs)
        assert done[i].tolist() == [False, False, True, False, False, True, False]
        assert td.get(("next", "terminated"))[i, :, 0].tolist() == done[i].tolist()
    env.close()


def test_partial_reset_of_a_running_env_in_same_step_mode():
    env = ParallelPoolEnv("CartPole-v1", num_envs=3, seed=2, autoreset_mode="same_step")
    td = env.reset()
    td = env.step(td.set("action", env.action_spec.zero()))
    before = td.get(("next", "observation")).clone()
    reset = env.reset(td.get("next").set("_reset", torch.tensor([[False], [True], [False]])))
    obs = reset.get("observation")
    np.testing.assert_array_equal(obs[[0, 2]].numpy(), before[[0, 2]].numpy())  # the others are unchanged
    assert not torch.equal(obs[1], before[1])
    env.close()


def test_seeds_reproduce_and_differ():
    def first_obs(seed):
        env = ParallelPoolEnv("CartPole-v1", num_envs=2)
        env.set_seed(seed)
        obs = env.reset().get("observation")
        env.close()
        return obs

    assert torch.equal(first_obs(5), first_obs(5)) and not torch.equal(first_obs(5), first_obs(6))
    ref = pp.make("CartPole-v1", num_envs=2)
    np.testing.assert_array_equal(first_obs(5).numpy(), ref.reset(seed=5)[0])
    ref.close()


def test_refusals_name_the_problem():
    with pytest.raises(ValueError, match="autoreset_mode='next_step'"):
        ParallelPoolEnv("CartPole-v1", num_envs=2, autoreset_mode="next_step")
    with pytest.raises(ValueError, match="async pool"):
        ParallelPoolEnv("CartPole-v1", num_envs=4, batch_size=2)
    pool = pp.make("CartPole-v1", num_envs=2, autoreset_mode="disabled")
    with pytest.raises(ValueError, match="pass the task id"):
        ParallelPoolEnv(pool, seed=3)
    env = ParallelPoolEnv(pool)  # a made pool of a usable mode is taken as it is
    assert env.batch_size == torch.Size([2])
    env.close()
