"""parallel_pool.integrations.sb3.ParallelPoolVecEnv: SB3's VecEnv contract, its wrappers, and — the point of
the adapter — that SB3 sees a truncated episode as truncated and bootstraps it."""

from __future__ import annotations

import sys

import cloudpickle
import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
torch = pytest.importorskip("torch")

from parallel_pool.integrations.sb3 import ParallelPoolVecEnv, make_vec_env  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.callbacks import BaseCallback  # noqa: E402
from stable_baselines3.common.vec_env import VecEnv, VecFrameStack, VecMonitor, VecNormalize  # noqa: E402

import parallel_pool  # noqa: E402

# the Python envs below travel to the worker processes by value, as a user's script's envs do
cloudpickle.register_pickle_by_value(sys.modules[__name__])

torch.set_num_threads(1)


def test_step_reset_and_infos():
    venv = ParallelPoolVecEnv("Dummy-v0", num_envs=3, episode_len=3)
    assert isinstance(venv, VecEnv) and venv.num_envs == 3
    assert venv.observation_space.shape == (4,) and venv.action_space.n == 10
    obs = venv.reset()
    assert obs.shape == (3, 4) and [r["elapsed_step"] for r in venv.reset_infos] == [0, 0, 0]
    draws = obs[:, 3].copy()
    for t in range(3):
        obs, rew, dones, infos = venv.step(np.array([1, 2, 3]))
        assert rew.dtype == np.float32 and dones.dtype == np.bool_ and len(infos) == 3
    assert dones.all()
    np.testing.assert_array_equal(obs[:, 1], 0)  # same-step reset
    for i, info in enumerate(infos):
        term = info["terminal_observation"]
        assert term[1] == 3 and term[2] == i + 1 and term[3] == draws[i]
        assert info["TimeLimit.truncated"] is False  # terminated, not truncated
        assert info["score"] == 3 * (i + 1)
        assert venv.reset_infos[i]["elapsed_step"] == 0
    venv.close()


def test_truncation_flag_and_terminal_observation():
    venv = ParallelPoolVecEnv("Dummy-v0", num_envs=2, episode_len=10, max_episode_steps=2)
    venv.reset()
    _, _, dones, infos = venv.step(np.array([1, 1]))
    assert not dones.any() and not any(i["TimeLimit.truncated"] for i in infos)
    obs, _, dones, infos = venv.step(np.array([1, 1]))
    assert dones.all() and all(i["TimeLimit.truncated"] is True for i in infos)
    assert all(i["terminal_observation"][1] == 2 for i in infos) and (obs[:, 1] == 0).all()


class _Recorder(BaseCallback):
    def __init__(self):
        super().__init__()
        self.steps = []

    def _on_step(self) -> bool:
        self.steps.append(([dict(i) for i in self.locals["infos"]], self.locals["dones"].copy()))
        return True


def test_sb3_bootstraps_truncated_episodes():
    """With a tiny time limit, SB3's PPO must add gamma * V(terminal_observation) to the reward of every truncated
    step (OnPolicyAlgorithm.collect_rollouts) and leave terminated steps alone."""
    venv = ParallelPoolVecEnv("CartPole-v1", num_envs=4, seed=0, max_episode_steps=12)
    gamma = 0.9
    model = PPO("MlpPolicy", venv, n_steps=64, batch_size=64, gamma=gamma, seed=0, device="cpu")
    rec = _Recorder()
    _, callback = model._setup_learn(total_timesteps=256, callback=rec)
    callback.on_training_start(locals(), globals())
    model.collect_rollouts(model.env, callback, model.rollout_buffer, n_rollout_steps=64)
    stored = model.rollout_buffer.rewards  # (n_steps, n_envs), after SB3's bootstrapping
    truncated = terminated = 0
    for t, (infos, dones) in enumerate(rec.steps):
        for i, info in enumerate(infos):
            if dones[i] and info["TimeLimit.truncated"]:
                truncated += 1
                assert info["elapsed_step"] == 12
                obs_t = model.policy.obs_to_tensor(info["terminal_observation"])[0]
                with torch.no_grad():
                    v = model.policy.predict_values(obs_t).item()
                assert abs(v) > 1e-3  # a real bootstrap term, so the check below can fail
                assert stored[t, i] == pytest.approx(1.0 + gamma * v, rel=1e-5)
            else:
                if dones[i]:
                    terminated += 1
                    assert info["elapsed_step"] <= 12 and info["TimeLimit.truncated"] is False
                assert stored[t, i] == 1.0  # CartPole pays 1 per step; no bootstrap
    assert truncated > 0 and terminated > 0, (truncated, terminated)
    venv.close()


def test_vec_monitor_reports_real_episodes():
    venv = VecMonitor(ParallelPoolVecEnv("Dummy-v0", num_envs=2, episode_len=4, max_episode_steps=3))
    venv.reset()
    eps = []
    for t in range(9):
        _, _, dones, infos = venv.step(np.array([2, 5]))
        eps += [(i, info["episode"]["r"], info["episode"]["l"]) for i, info in enumerate(infos) if "episode" in info]
    # every episode is truncated after 3 steps: return = 3 * action, length 3
    assert sorted(eps) == sorted([(0, 6.0, 3), (1, 15.0, 3)] * 3)


def test_vec_normalize_normalizes_terminal_observation():
    venv = VecNormalize(ParallelPoolVecEnv("CartPole-v1", num_envs=4, seed=1, max_episode_steps=5), gamma=0.9)
    venv.reset()
    raw_pool = parallel_pool.make("CartPole-v1", num_envs=4, seed=1, max_episode_steps=5, autoreset_mode="same_step")
    raw_pool.reset()
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(12):
        act = rng.integers(0, 2, 4)
        obs, _, dones, infos = venv.step(act)
        raw_obs, _, term, trunc, raw_info = raw_pool.step(act)
        np.testing.assert_allclose(obs, venv.normalize_obs(raw_obs), rtol=1e-5)
        np.testing.assert_allclose(venv.get_original_obs(), raw_obs)
        for i in np.flatnonzero(dones):
            np.testing.assert_allclose(
                infos[i]["terminal_observation"], venv.normalize_obs(raw_info["final_obs"][i]), rtol=1e-5
            )
            checked += 1
    assert checked > 0


def test_vec_frame_stack_stacks_terminal_observation():
    venv = VecFrameStack(ParallelPoolVecEnv("Dummy-v0", num_envs=2, episode_len=3), n_stack=2)
    obs = venv.reset()
    assert obs.shape == (2, 8)
    prev = obs
    for t in range(3):
        obs, _, dones, infos = venv.step(np.array([1, 2]))
        if t < 2:
            np.testing.assert_array_equal(obs[:, :4], prev[:, 4:])  # oldest frame first
            prev = obs
    assert dones.all()
    for i in range(2):
        term = infos[i]["terminal_observation"]
        np.testing.assert_array_equal(term[:4], prev[i, 4:])  # the frame before the end ...
        assert term[4 + 1] == 3  # ... then the final frame
        np.testing.assert_array_equal(obs[i, :4], 0)  # a new episode starts from an empty stack
        assert obs[i, 4 + 1] == 0


def test_attributes_methods_and_their_errors():
    venv = ParallelPoolVecEnv("CartPole-v1", num_envs=3, seed=4, max_episode_steps=77)
    assert venv.get_attr("render_mode") == [None] * 3
    assert venv.get_attr("max_episode_steps", indices=[0, 2]) == [77, 77]
    assert venv.get_attr("observation_space")[0] == venv.observation_space
    assert venv.has_attr("spec") and not venv.has_attr("gravity")
    with pytest.raises(AttributeError, match="C\\+\\+.*'gravity'"):
        venv.get_attr("gravity")
    with pytest.raises(AttributeError, match="pass config keys"):
        venv.set_attr("max_episode_steps", 10)
    with pytest.raises(AttributeError, match="no method 'render_frame'"):
        venv.env_method("render_frame")
    assert venv.env_is_wrapped(VecMonitor) == [False] * 3
    venv.reset()
    state = venv.env_method("get_state", indices=1)[0]
    assert state.shape == (4,)
    venv.env_method("set_state", np.array([0.1, 0.0, 0.0, 0.0]), indices=[1])
    np.testing.assert_allclose(venv.env_method("get_state", indices=1)[0], [0.1, 0.0, 0.0, 0.0])
    ((obs, info),) = venv.env_method("reset", indices=[2])
    assert obs.shape == (4,) and info["elapsed_step"] == 0
    venv.close()


def test_seed_reproduces_make_seed():
    venv = make_vec_env("CartPole-v1", n_envs=4)
    assert venv.seed(11) == [11, 12, 13, 14]
    obs = venv.reset()
    ref, _ = parallel_pool.make("CartPole-v1", num_envs=4, seed=11).reset()
    np.testing.assert_array_equal(obs, ref)
    venv.reset()  # seeds are used once (SB3's convention): this reset continues the generators
    venv.seed(11)
    np.testing.assert_array_equal(venv.reset(), ref)
    venv.set_options({"foo": 1})
    with pytest.raises(ValueError, match="no reset options"):
        venv.reset()


def test_rejects_async_pools_and_next_step_pools():
    with pytest.raises(ValueError, match="batch_size == num_envs"):
        ParallelPoolVecEnv("CartPole-v1", num_envs=4, batch_size=2)
    with pytest.raises(ValueError, match="same_step"):
        ParallelPoolVecEnv(parallel_pool.make("CartPole-v1", num_envs=2))


def test_continuous_actions_learn_call_runs():
    venv = ParallelPoolVecEnv("Dummy-v0", num_envs=2, continuous=True)
    model = PPO("MlpPolicy", venv, n_steps=16, batch_size=16, n_epochs=1, seed=0, device="cpu")
    model.learn(32)
    assert model.num_timesteps == 32


def test_get_images_and_render_give_the_pools_frames():
    """SB3's render()/get_images() path: one frame per env, the pool's own frames (Atari: drawn in C++)."""
    venv = ParallelPoolVecEnv("Pong-v5", num_envs=2, render_mode="rgb_array")
    venv.reset()
    images = venv.get_images()
    assert len(images) == 2 and images[0].shape == (210, 160, 3) and images[0].dtype == np.uint8
    np.testing.assert_array_equal(np.stack(images), venv.pool.render())
    assert venv.render_mode == "rgb_array"
    tiled = venv.render()
    assert tiled is not None and tiled.ndim == 3
    venv.close()
    plain = ParallelPoolVecEnv("CartPole-v1", num_envs=1)
    with pytest.raises(ValueError, match="render_mode"):
        plain.get_images()
    plain.close()


class _Corridor(gym.Env):
    """A Python env: walk right (action 1) to the end of a corridor of `length` cells in time."""

    def __init__(self, length: int = 4):
        self.length = length
        self.observation_space = gym.spaces.Box(0.0, 1.0, (1,), np.float32)
        self.action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos = 0
        return np.zeros(1, np.float32), {}

    def step(self, action):
        self.pos += 1 if int(action) == 1 else 0
        done = self.pos >= self.length
        return np.array([self.pos / self.length], np.float32), float(done), done, False, {"pos": self.pos}


def test_env_fn_a_callable_and_a_python_id_make_the_pool_themselves():
    for venv in (
        ParallelPoolVecEnv(env_fn=_Corridor, num_envs=3, length=2),
        ParallelPoolVecEnv(_Corridor, num_envs=3, length=2),
    ):
        assert venv.num_envs == 3 and venv.pool.autoreset_mode == gym.vector.AutoresetMode.SAME_STEP
        venv.reset()
        venv.step(np.ones(3, dtype=np.int64))
        obs, rew, dones, infos = venv.step(np.ones(3, dtype=np.int64))
        assert dones.all() and rew.tolist() == [1.0, 1.0, 1.0]
        assert [i["terminal_observation"].tolist() for i in infos] == [[1.0]] * 3 and obs.tolist() == [[0.0]] * 3
        venv.close()
    venv = ParallelPoolVecEnv("Acrobot-v1", num_envs=2, backend="python")  # gymnasium's own Acrobot, in workers
    assert venv.pool.spec.backend == "python" and venv.reset().shape == (2, 6)
    venv.close()


def test_errors_name_what_was_passed_and_what_to_do():
    pool = parallel_pool.make("CartPole-v1", num_envs=2)
    with pytest.raises(
        ValueError, match=r"autoreset_mode='next_step'.*ParallelPoolVecEnv\('CartPole-v1', num_envs=2\)"
    ):
        ParallelPoolVecEnv(pool)
    with pytest.raises(ValueError, match=r"config keys \['seed'\].*pass the task id"):
        ParallelPoolVecEnv(parallel_pool.make("CartPole-v1", num_envs=2, autoreset_mode="same_step"), seed=3)
    with pytest.raises(TypeError, match="task id.*env_fn.*got 3"):
        ParallelPoolVecEnv(3)
    pool.close()


def test_make_vec_env_mirrors_sb3s(tmp_path):
    venv = make_vec_env("CartPole-v1", n_envs=4, seed=5, start_index=2, monitor_dir=str(tmp_path))
    assert isinstance(venv, VecMonitor) and isinstance(venv.venv, ParallelPoolVecEnv)
    assert venv.venv.pool.config["seed"] == 7  # env i gets seed + start_index + i, as SB3's make_vec_env seeds
    venv.reset()
    episodes = []
    for _ in range(200):
        _, _, dones, infos = venv.step(np.zeros(4, dtype=np.int64))
        episodes += [i["episode"] for i, d in zip(infos, dones) if d]
    assert len(episodes) >= 4 and all(e["r"] == e["l"] for e in episodes)
    venv.close()
    assert (tmp_path / "monitor.csv").read_text().count("\n") >= 2 + len(episodes) - 1
    # a callable with its keyword arguments, and a gymnasium wrapper applied in each worker
    venv = make_vec_env(
        _Corridor,
        n_envs=2,
        env_kwargs={"length": 3},
        wrapper_class=gym.wrappers.TransformReward,
        wrapper_kwargs={"func": lambda r: 10 * r},
    )
    venv.reset()
    for _ in range(3):
        _, rew, dones, _ = venv.step(np.ones(2, dtype=np.int64))
    assert dones.all() and rew.tolist() == [10.0, 10.0]
    venv.close()
    with pytest.raises(ValueError, match="vec_env_cls=DummyVecEnv"):
        from stable_baselines3.common.vec_env import DummyVecEnv

        make_vec_env("CartPole-v1", vec_env_cls=DummyVecEnv)
    with pytest.raises(ValueError, match="wrapper_class: 'Dummy-v0' runs in C\\+\\+"):
        make_vec_env("Dummy-v0", wrapper_class=gym.wrappers.TransformReward)
