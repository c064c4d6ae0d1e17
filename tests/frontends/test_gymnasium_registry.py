"""gymnasium's registry and enum: every id as ParallelPool/<id> (make_vec -> the pool with its keyword arguments,
make -> one env that passes check_env), the spelling that would fall through to gymnasium's own env, and
env.autoreset_mode as gymnasium's AutoresetMode (which gymnasium's vector wrappers require)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.wrappers.vector import RecordEpisodeStatistics

import parallel_pool as pp
from parallel_pool.frontends import GymnasiumPool
from parallel_pool.gymnasium_registry import NAMESPACE, SingleEnv, gymnasium_id


def test_every_id_is_registered_under_the_namespace():
    ours = {k for k in gym.registry if k.startswith(NAMESPACE + "/") or k.startswith(NAMESPACE + "-")}
    assert ours == {gymnasium_id(t) for t in pp.list_all_envs()}
    assert gymnasium_id("phys2d/CartPole-v1") == "ParallelPool-phys2d/CartPole-v1"
    assert gym.spec("ParallelPool-phys2d/CartPole-v1").kwargs == {"task_id": "phys2d/CartPole-v1"}
    spec = gym.spec("ParallelPool/CartPole-v1")
    assert spec.vector_entry_point == "parallel_pool:make" and spec.kwargs == {"task_id": "CartPole-v1"}


@pytest.mark.parametrize("mode", [None, "vector_entry_point"])
def test_make_vec_returns_the_pool_with_the_keyword_arguments(mode):
    kw = {} if mode is None else {"vectorization_mode": mode}
    env = gym.make_vec("ParallelPool/Pendulum-v1", num_envs=6, batch_size=3, seed=7, g=9.0, max_episode_steps=5, **kw)
    assert isinstance(env, GymnasiumPool)
    assert (env.num_envs, env.batch_size, env.is_async) == (6, 3, True)
    assert env.spec.task_id == "Pendulum-v1" and env.config["g"] == 9.0 and env.config["max_episode_steps"] == 5
    # gymnasium records its registration spec on the env it made; the pool's own spec is kept beside it
    assert env.registration_spec.id == "ParallelPool/Pendulum-v1" and env.registration_spec.kwargs["num_envs"] == 6
    # an async reset returns whichever 3 envs finish first: each is compared with that env of a sync pool
    ref = pp.make("Pendulum-v1", num_envs=6, seed=7, g=9.0, max_episode_steps=5)
    obs, info = env.reset()
    ref_obs, _ = ref.reset()
    assert len(info["env_id"]) == 3
    np.testing.assert_array_equal(obs, ref_obs[info["env_id"]])
    env.close()
    ref.close()


def test_make_vec_sync_mode_steps_single_envs_in_gymnasiums_vector_env():
    env = gym.make_vec("ParallelPool/CartPole-v1", num_envs=3, vectorization_mode="sync")
    assert isinstance(env, SyncVectorEnv)
    obs, _ = env.reset(seed=3)
    ref = pp.make("CartPole-v1", num_envs=1)
    for i in range(3):  # env i of SyncVectorEnv is seeded 3 + i, as env 0 of a pool seeded 3 + i
        np.testing.assert_array_equal(obs[i], ref.reset(seed=3 + i)[0][0])
    obs, reward, *_ = env.step(np.array([0, 1, 0]))
    assert obs.shape == (3, 4) and reward.tolist() == [1.0, 1.0, 1.0]
    env.close()
    ref.close()


@pytest.mark.parametrize("task", ["CartPole-v1", "Pendulum-v1", "FrozenLake-v1", "Hopper-v5", "Pong-v5"])
def test_make_gives_one_env_that_passes_check_env(task):
    if task not in pp.list_all_envs():
        pytest.skip(f"{task}'s family is not built")
    env = gym.make(f"ParallelPool/{task}")
    assert isinstance(env.unwrapped, SingleEnv)
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


def test_single_env_follows_the_pool_step_for_step():
    env = gym.make("ParallelPool/CartPole-v1", max_episode_steps=30)
    ref = pp.make("CartPole-v1", num_envs=1, max_episode_steps=30, autoreset_mode="disabled")
    obs, info = env.reset(seed=11)
    ref_obs, _ = ref.reset(seed=11)
    np.testing.assert_array_equal(obs, ref_obs[0])
    assert info["env_id"] == 0 and not any(k.startswith("_") for k in info)
    for t in range(200):
        a = t % 2
        obs, r, term, trunc, info = env.step(a)
        ref_obs, ref_r, ref_term, ref_trunc, _ = ref.step(np.array([a]))
        np.testing.assert_array_equal(obs, ref_obs[0])
        assert (r, term, trunc) == (float(ref_r[0]), bool(ref_term[0]), bool(ref_trunc[0]))
        assert isinstance(r, float) and isinstance(term, bool)
        if term or trunc:
            break
    assert term or trunc
    env.close()
    ref.close()


def test_module_prefixed_spellings():
    """`parallel_pool:ParallelPool/<id>` names the pool; `parallel_pool:<id>` looks `<id>` up in gymnasium's registry
    as is, which for CartPole-v1 is gymnasium's own env (the documented spelling has the namespace)."""
    env = gym.make_vec("parallel_pool:ParallelPool/CartPole-v1", num_envs=2)
    assert isinstance(env, GymnasiumPool)
    env.close()
    theirs = gym.make_vec("parallel_pool:CartPole-v1", num_envs=2)
    assert not isinstance(theirs, GymnasiumPool)
    theirs.close()


def test_autoreset_mode_is_gymnasiums_enum():
    assert pp.AutoresetMode is AutoresetMode
    for given, want in [("same_step", AutoresetMode.SAME_STEP), (AutoresetMode.DISABLED, AutoresetMode.DISABLED)]:
        env = pp.make("CartPole-v1", num_envs=2, autoreset_mode=given)
        assert env.autoreset_mode is want and env.metadata["autoreset_mode"] is want
        assert env.config["autoreset_mode"] == want.name.lower()
        env.close()
    env = pp.make(env_fn=lambda: gym.make("CartPole-v1"), num_envs=2, autoreset_mode=AutoresetMode.SAME_STEP)
    assert env.autoreset_mode is AutoresetMode.SAME_STEP
    env.close()
    with pytest.raises(ValueError, match="autoreset_mode.*'next_step', 'same_step', 'disabled'.*got 'sometimes'"):
        pp.make("CartPole-v1", autoreset_mode="sometimes")


def test_gymnasiums_vector_wrappers_accept_a_same_step_pool():
    env = RecordEpisodeStatistics(pp.make("CartPole-v1", num_envs=4, autoreset_mode="same_step", seed=0))
    env.reset(seed=0)
    episodes = 0
    for _ in range(300):
        _, _, term, trunc, info = env.step(np.zeros(4, dtype=np.int64))
        if "episode" in info:
            episodes += int(info["_episode"].sum())
            np.testing.assert_array_equal(
                info["episode"]["r"][info["_episode"]], info["episode"]["l"][info["_episode"]]
            )
    assert episodes >= 4
    env.close()
