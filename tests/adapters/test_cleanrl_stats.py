"""parallel_pool.integrations.cleanrl.EpisodeStatistics: returns and lengths of real episodes from batched pools.

Dummy-v0 keeps its own books (obs[1] = steps taken this episode, info["score"] = the episode's return), so every
episode the wrapper reports is checked against what the env itself says, in sync and async pools, with next-step
and same-step autoreset, for terminated and truncated episodes. Episodic life is checked on EnvPool's Breakout
(the Atari API ParallelPool's Atari envs follow): EnvPool's elapsed_step counts a game's steps across lives."""

from __future__ import annotations

import numpy as np
import pytest
from parallel_pool.integrations.cleanrl import EpisodeStatistics

import parallel_pool


def _final(info, key, i, same_step, done):
    if same_step and done:
        return info["final_info"][key][i]
    return info[key][i]


def random_batches(env, n: int, batch_size: int, num_actions: int, rng):
    """Resets `env` (n envs), then yields its batches for random actions in [0, num_actions): sync steps
    (batch_size 0), or recv()s, each answered at once with a send for the envs it returned."""
    if batch_size:
        env.async_reset()
    else:
        env.reset()
    while True:
        if batch_size:
            out = env.recv()
            env.send(rng.integers(0, num_actions, batch_size).astype(np.int32), out[4]["env_id"])
        else:
            out = env.step(rng.integers(0, num_actions, n).astype(np.int32))
        yield out


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
@pytest.mark.parametrize("batch_size", [0, 3])  # sync, async
@pytest.mark.parametrize("max_steps", [1000, 4])  # terminated after 5 steps / truncated after 4
@pytest.mark.parametrize("env_type", ["gymnasium", "gym"])
def test_dummy_episodes_match_the_env_books(mode, batch_size, max_steps, env_type):
    n = 6
    env = EpisodeStatistics(
        parallel_pool.make(
            "Dummy-v0",
            env_type=env_type,
            num_envs=n,
            batch_size=batch_size,
            episode_len=5,
            max_episode_steps=max_steps,
            autoreset_mode=mode,
        )
    )
    same = mode == "same_step"
    rng = np.random.default_rng(0)
    expected = []
    reported = 0
    for _, (obs, rew, term, trunc, info) in zip(range(40), random_batches(env, n, batch_size, 10, rng)):
        ids = info["env_id"]
        done = term | trunc
        for i in np.flatnonzero(done):
            final_obs = info["final_obs"][i] if same else obs[i]
            expected.append((int(ids[i]), float(_final(info, "score", i, same, True)), int(final_obs[1])))
        if "episode" in info:
            for i in np.flatnonzero(info["_episode"]):
                assert (int(ids[i]), info["episode"]["r"][i], info["episode"]["l"][i]) == expected[reported]
                reported += 1
        else:
            assert not done.any()
    assert reported == len(expected) > 2 * n
    assert set(env.length_queue) == {min(5, max_steps)}
    assert env.episode_count == reported
    env.close()


def _breakout(**kw):
    envpool = pytest.importorskip("envpool")
    try:
        return envpool.make("Breakout-v5", env_type="gymnasium", **kw)
    except Exception as e:  # noqa: BLE001 (an envpool build without Atari)
        pytest.skip(f"envpool has no Breakout-v5: {e}")


@pytest.mark.parametrize("batch_size", [0, 2])
def test_episodic_life_reports_whole_games(batch_size):
    n = 4
    env = EpisodeStatistics(
        _breakout(
            num_envs=n, batch_size=batch_size or n, episodic_life=True, reward_clip=True, seed=5, max_episode_steps=400
        )
    )
    rng = np.random.default_rng(0)
    scores = np.zeros(n)  # the game's raw score since its start, every row counted
    life_losses, games = 0, []
    for obs, rew, term, trunc, info in random_batches(env, n, batch_size, 4, rng):
        if len(games) >= 6:
            break
        ids = info["env_id"]
        assert rew.max() <= 1.0  # clipped for the agent ...
        scores[ids] += info["reward"]  # ... the score is not
        game_over = trunc | (info["terminated"] == 1)
        life_losses += int((term & ~game_over).sum())
        for i in np.flatnonzero(game_over):
            e = ids[i]
            games.append((int(e), scores[e], int(info["elapsed_step"][i])))
            scores[e] = 0
        got = []
        if "episode" in info:
            got = [
                (int(ids[i]), info["episode"]["r"][i], int(info["episode"]["l"][i]))
                for i in np.flatnonzero(info["_episode"])
            ]
        assert got == games[len(games) - len(got) :] and len(got) == game_over.sum()
    assert life_losses > len(games)  # lives were lost without ending the reported episodes
    assert sum(r for _, r, _ in games) > 0  # points were scored, and counted whole
    env.close()


@pytest.mark.skipif(
    "Pong-v5" not in parallel_pool.list_all_envs(),
    reason="this build has no Atari envs (Pong-v5 not in parallel_pool.list_all_envs())",
)
@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_parallel_pool_atari_episodic_life(mode):
    n = 4
    env = EpisodeStatistics(
        parallel_pool.make(
            "Breakout-v5",
            num_envs=n,
            episodic_life=True,
            reward_clip=True,
            seed=5,
            max_episode_steps=400,
            autoreset_mode=mode,
        )
    )
    same = mode == "same_step"
    rng = np.random.default_rng(0)
    scores = np.zeros(n)
    env.reset()
    reported = 0
    for _ in range(3000):
        obs, rew, term, trunc, info = env.step(rng.integers(0, 4, n).astype(np.int32))
        done = term | trunc
        raw = np.array([_final(info, "reward", i, same, done[i]) for i in range(n)])
        scores += raw
        over = trunc | np.array([bool(_final(info, "terminated", i, same, done[i])) for i in range(n)])
        if "episode" in info:
            np.testing.assert_array_equal(info["_episode"], over)
            np.testing.assert_allclose(info["episode"]["r"][over], scores[over])
            reported += over.sum()
        else:
            assert not over.any()
        scores[over] = 0
    assert reported > 0
