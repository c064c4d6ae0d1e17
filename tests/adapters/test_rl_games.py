"""rl_games adapter (parallel_pool.integrations.rl_games): registration, transitions against the engine's
next-step reference, time_outs, per-env game scores (Atari episodic life) and rl_games' observer, errors, and a
few epochs of rl_games PPO on Pong-v5 with rl_games' Atari network."""

from __future__ import annotations

import pathlib
import types

import numpy as np
import pytest

pytest.importorskip("rl_games")
torch = pytest.importorskip("torch")
yaml = pytest.importorskip("yaml")

import gymnasium as gym  # noqa: E402
from parallel_pool.integrations.cleanrl import EpisodeStatistics  # noqa: E402
from parallel_pool.integrations.rl_games import ParallelPoolRLGamesEnv  # noqa: E402
from parallel_pool.integrations.rl_games import env as rlg_env  # noqa: E402
from rl_games.common import env_configurations, vecenv  # noqa: E402
from rl_games.common.algo_observer import DefaultAlgoObserver  # noqa: E402

import parallel_pool  # noqa: E402
from parallel_pool.translate import successor_obs  # noqa: E402


def test_import_registers_vecenv_type_and_env_configuration():
    assert env_configurations.configurations["parallel_pool"]["vecenv_type"] == "PARALLEL_POOL"
    assert "PARALLEL_POOL" in vecenv.vecenv_config
    env = vecenv.create_vec_env("parallel_pool", 4, env_name="CartPole-v1", seed=3)
    assert isinstance(env, ParallelPoolRLGamesEnv)
    info = env.get_env_info()
    ref = gym.make("CartPole-v1")
    assert info["observation_space"] == ref.observation_space  # single-env spaces, not batched
    assert info["action_space"] == ref.action_space
    assert env.reset().shape == (4, 4)
    env.close()


def _ref_step(ref, actions, pending):
    """Step the next-step reference: envs whose episode ended last step first take their reset step alone."""
    reset_obs = None
    if pending.size:
        reset_obs = ref.step(np.zeros(len(pending), np.int64), pending.astype(np.int32))[0]
    return ref.step(actions)[:4], reset_obs


def test_transitions_match_next_step_engine_without_fake_steps():
    """Same seed and actions as the engine in next-step mode: rewards, dones, time_outs and final observations
    agree, and after an episode end ``obs`` is the reset observation the next-step pool only returns one
    (action-ignoring, reward-0) step later, a step rl_games' ENVPOOL vecenv trains on as if real."""
    n, limit = 4, 25  # a short limit gives truncations as well as terminations
    ours = ParallelPoolRLGamesEnv("parallel_pool", n, env_name="CartPole-v1", seed=5, max_episode_steps=limit)
    ref = parallel_pool.make("CartPole-v1", env_type="gymnasium", num_envs=n, seed=5, max_episode_steps=limit)
    prev_obs = ours.reset()
    np.testing.assert_array_equal(prev_obs, ref.reset()[0])
    rng = np.random.default_rng(0)
    pending = np.array([], dtype=np.int64)
    returns = np.zeros(n)
    seen = {"terminated": 0, "truncated": 0}
    for _ in range(300):
        actions = rng.integers(0, 2, n)
        obs, rew, dones, infos = ours.step(actions)
        (r_obs, r_rew, r_term, r_trunc), reset_obs = _ref_step(ref, actions, pending)
        if pending.size:
            np.testing.assert_array_equal(prev_obs[pending], reset_obs)
        np.testing.assert_array_equal(infos["final_obs"], r_obs)
        np.testing.assert_array_equal(rew, r_rew)
        np.testing.assert_array_equal(dones, (r_term | r_trunc).astype(np.uint8))
        np.testing.assert_array_equal(infos["time_outs"], r_trunc & ~r_term)
        np.testing.assert_array_equal(dones.astype(bool) & ~infos["time_outs"], r_term)
        assert dones.dtype == np.uint8 and rew.dtype == np.float32
        returns += r_rew
        done = (r_term | r_trunc).astype(bool)
        np.testing.assert_array_equal(infos["scores"][done], returns[done])  # per-env episode scores
        returns[done] = 0
        assert "lives" not in infos
        seen["terminated"] += int(r_term.sum())
        seen["truncated"] += int(r_trunc.sum())
        np.testing.assert_array_equal(obs[~done], r_obs[~done])
        pending = np.flatnonzero(done)
        prev_obs = obs
    assert seen["terminated"] > 0 and seen["truncated"] > 0
    ours.close()
    ref.close()


needs_atari = pytest.mark.skipif("Pong-v5" not in parallel_pool.list_all_envs(), reason="this build has no Atari envs")


def _fake_algo(n):
    return types.SimpleNamespace(games_to_track=100, ppo_device="cpu", writer=None, num_agents=1, num_actors=n)


@needs_atari
def test_atari_episodic_life_scores_whole_games_through_rl_games_observer():
    """With episodic life a lost life is an rl_games episode end but not a game end: rl_games' own observer
    logs exactly the whole-game, unclipped scores that EpisodeStatistics computes on the same trajectory."""
    n, cfg = 2, dict(seed=3, episodic_life=True, reward_clip=True, max_episode_steps=400)
    ours = ParallelPoolRLGamesEnv("parallel_pool", n, env_name="Breakout-v5", **cfg)
    assert ours.has_lives
    ref = EpisodeStatistics(
        parallel_pool.make("Breakout-v5", env_type="gymnasium", num_envs=n, autoreset_mode="same_step", **cfg)
    )
    observer = DefaultAlgoObserver()
    observer.after_init(_fake_algo(n))
    ours.reset()
    ref.reset()
    rng = np.random.default_rng(1)
    life_losses = 0
    for _ in range(900):
        actions = rng.integers(0, ours.action_space.n, n)
        _, rew, dones, infos = ours.step(actions)
        ref.step(actions)
        assert set(np.unique(rew)) <= {-1.0, 0.0, 1.0}  # clipped rewards for training, raw ones for scores
        game_end = infos["lives"] == 0
        life_losses += int((dones.astype(bool) & ~game_end).sum())
        observer.process_infos(infos, torch.from_numpy(np.flatnonzero(dones)))
    logged = observer.game_scores.current_size
    assert life_losses > 0 and logged >= 2
    expected = list(ref.return_queue)
    assert logged == len(expected)
    np.testing.assert_allclose(float(observer.game_scores.get_mean()), np.mean(expected), rtol=1e-6)
    assert max(expected) > 1  # unclipped sums: Breakout bricks score up to 7
    ours.close()
    ref.close()


def test_seed_reseeds_next_reset():
    env = ParallelPoolRLGamesEnv("parallel_pool", 3, env_name="CartPole-v1", seed=0)
    first = env.reset()
    env.seed(7)
    reseeded = env.reset()
    fresh = ParallelPoolRLGamesEnv("parallel_pool", 3, env_name="CartPole-v1", seed=7).reset()
    np.testing.assert_array_equal(reseeded, fresh)
    assert not np.array_equal(first, reseeded)


def test_continuous_actions_are_cast_to_the_pool_dtype():
    env = ParallelPoolRLGamesEnv("parallel_pool", 2, env_name="Pendulum-v1", seed=0)
    env.reset()
    obs, rew, dones, infos = env.step(np.zeros((2, 1), dtype=np.float64))  # rl_games hands float64/32 over
    assert obs.shape == (2, 3) and rew.shape == (2,)


def test_dict_observation_helpers():
    """No dict-observation task is in every build: the dict paths are checked directly."""
    obs = {"a": np.zeros((3, 2), np.float32), "b": np.arange(3, dtype=np.int32)}
    final = np.empty(3, dtype=object)
    final[1] = {"a": np.ones(2, np.float32), "b": np.int32(9)}
    stacked = successor_obs(obs, final, np.array([False, True, False]))  # what the vecenv's step uses
    np.testing.assert_array_equal(stacked["a"], [[0, 0], [1, 1], [0, 0]])
    np.testing.assert_array_equal(stacked["b"], [0, 9, 2])
    assert obs["b"][1] == 1  # the returned obs is not modified
    dict_space = gym.spaces.Dict({"b": gym.spaces.Box(0, 9, (), np.int32), "a": gym.spaces.Box(0, 1, (2,), np.float32)})
    keys = list(dict_space.keys())
    flat = rlg_env._flatten(stacked, keys)
    assert flat.dtype == np.float32
    expected = {"a": [[0, 0], [1, 1], [0, 0]], "b": [[0], [9], [2]]}
    np.testing.assert_array_equal(flat, np.concatenate([expected[k] for k in keys], axis=1))
    space = rlg_env._flat_space(dict_space)  # bounds in the same field order as the flattened rows
    assert space.shape == (3,) and space.dtype == np.float32
    np.testing.assert_array_equal(space.high, np.concatenate([[9] if k == "b" else [1, 1] for k in keys]))
    assert all(space.contains(row) for row in flat)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({}, "env_name"),
        ({"env_name": "CartPole-v1", "batch_size": 2}, "batch_size"),
        ({"env_name": "CartPole-v1", "num_envs": 3}, "num_envs"),
        ({"env_name": "CartPole-v1", "autoreset_mode": "next_step"}, "autoreset_mode"),
        ({"env_name": "CartPole-v1", "env_type": "dm"}, "env_type"),
        ({"env_name": "CartPole-v1", "flatten_obs": True}, "flatten_obs"),
        ({"env_name": "CartPole-v1", "no_such_key": 1}, "no_such_key"),
    ],
)
def test_bad_env_config_raises_naming_the_key(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ParallelPoolRLGamesEnv("parallel_pool", 4, **kwargs)


ROOT = pathlib.Path(__file__).resolve().parents[2]


@needs_atari
def test_pong_example_config_runs_a_few_epochs_with_rl_games_atari_network(tmp_path):
    from rl_games.torch_runner import Runner

    cfg = yaml.safe_load((ROOT / "examples" / "rl_games_pong.yaml").read_text())
    assert cfg["params"]["config"]["env_name"] == "parallel_pool"
    # a tiny budget: 3 epochs of 4 actors x 16 steps
    cfg["params"]["config"].update(
        train_dir=str(tmp_path),
        num_actors=4,
        horizon_length=16,
        minibatch_size=32,
        mini_epochs=1,
        max_epochs=3,
        save_best_after=100,
    )
    runner = Runner()
    runner.load(cfg)
    runner.run({"train": True})
    checkpoints = list(tmp_path.rglob("*.pth"))
    assert checkpoints, "rl_games saves a checkpoint when max_epochs is reached"
    state = torch.load(checkpoints[0], map_location="cpu", weights_only=False)
    weights = [v for v in state["model"].values() if torch.is_tensor(v) and v.is_floating_point()]
    assert weights and all(np.isfinite(w.numpy()).all() for w in weights)


def test_rl_games_player_plays_through_the_env_configuration(tmp_path, capsys):
    """rl_games' play mode builds its env with the registered env_creator (1 env) and plays whole episodes."""
    from rl_games.torch_runner import Runner

    cfg = yaml.safe_load((ROOT / "examples" / "rl_games_cartpole.yaml").read_text())
    cfg["params"]["config"].update(
        train_dir=str(tmp_path),
        max_frames=-1,
        max_epochs=1,
        save_best_after=100,
        env_config={"env_name": "CartPole-v1", "max_episode_steps": 20},
    )
    cfg["params"]["config"]["player"] = {"games_num": 2, "deterministic": True, "render": False}
    runner = Runner()
    runner.load(cfg)
    runner.run({"train": True})
    checkpoint = next(tmp_path.rglob("*.pth"))
    runner = Runner()
    runner.load(cfg)
    capsys.readouterr()
    runner.run({"train": False, "play": True, "checkpoint": str(checkpoint)})
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("reward:")]
    assert len(lines) == 2
    for line in lines:  # "reward: R steps: S ...": CartPole gives 1 per step, and the limit is 20 steps
        reward, steps = float(line.split()[1]), float(line.split()[3])
        assert reward == steps and 0 < steps <= 20
