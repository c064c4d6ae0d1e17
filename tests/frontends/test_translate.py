"""parallel_pool.translate.Translator: same-step reset with the final observation kept, truncation distinct from
termination, per-env records. Dummy-v0 is deterministic: obs = [env_id, steps this episode, last action, a
per-episode draw from the env's generator], reward = action, info["score"] = the episode's return so far."""

from __future__ import annotations

import numpy as np
import pytest

import parallel_pool
from parallel_pool.translate import Translator


def make(n=3, **kw):
    kw.setdefault("episode_len", 3)
    return Translator.make("Dummy-v0", num_envs=n, final_obs_key="final", truncated_key="trunc", **kw)


def test_termination_same_step_reset_and_final_obs():
    tr = make()
    obs, infos = tr.reset()
    assert [rec["elapsed_step"] for rec in infos] == [0, 0, 0]
    draws = obs[:, 3].copy()
    for t in range(1, 4):
        x = tr.step(np.array([1, 2, 3]))
        if t < 3:
            assert not x.done.any() and x.next_obs is x.obs
            np.testing.assert_array_equal(x.obs[:, 1], [t] * 3)
            assert all(rec["trunc"] is False and "final" not in rec for rec in x.infos)
    # the third step ended every episode by termination
    np.testing.assert_array_equal(x.terminated, [True] * 3)
    np.testing.assert_array_equal(x.truncated, [False] * 3)
    np.testing.assert_array_equal(x.obs[:, 1], [0, 0, 0])  # reset observations to act on
    np.testing.assert_array_equal(x.next_obs[:, 1], [3, 3, 3])  # the true final observations
    np.testing.assert_array_equal(x.next_obs[:, 2], [1, 2, 3])
    np.testing.assert_array_equal(x.next_obs[:, 3], draws)  # same episode as the reset's draw
    assert not np.array_equal(x.obs[:, 3], draws)  # a new episode: a new draw
    for i, rec in enumerate(x.infos):
        assert rec["env_id"] == i and rec["elapsed_step"] == 3 and rec["score"] == 3 * (i + 1)
        assert rec["trunc"] is False
        np.testing.assert_array_equal(rec["final"], x.next_obs[i])
        reset = x.reset_infos[i]
        assert reset["elapsed_step"] == 0 and reset["score"] == 0
    np.testing.assert_array_equal(x.reward, [1, 2, 3])


def test_truncation_is_not_termination():
    tr = make(max_episode_steps=2, episode_len=5)
    tr.reset()
    tr.step(np.zeros(3, np.int64))
    x = tr.step(np.ones(3, np.int64))
    np.testing.assert_array_equal(x.truncated, [True] * 3)
    np.testing.assert_array_equal(x.terminated, [False] * 3)
    assert all(rec["trunc"] is True for rec in x.infos)
    np.testing.assert_array_equal(x.next_obs[:, 1], [2, 2, 2])
    np.testing.assert_array_equal(x.obs[:, 1], [0, 0, 0])


def test_subset_steps_follow_env_id_order():
    tr = make(4)
    tr.reset()
    x = tr.step(np.array([5, 7]), env_id=[3, 1])
    np.testing.assert_array_equal(x.env_id, [3, 1])
    np.testing.assert_array_equal(x.obs[:, 0], [3, 1])
    assert [rec["env_id"] for rec in x.infos] == [3, 1]
    assert [rec["score"] for rec in x.infos] == [5, 7]


def test_explicit_reset_hands_out_the_engine_reset_without_a_new_episode():
    tr = Translator.make("Dummy-v0", num_envs=3, episode_len=2, explicit_reset=True)
    tr.reset()
    tr.step(np.ones(3, np.int64))
    x = tr.step(np.ones(3, np.int64), env_id=[2, 0, 1])
    assert x.done.all()
    obs, infos = tr.reset(env_id=[0, 2])
    # the reset observation the engine produced inside the step (same draw): no second reset happened
    np.testing.assert_array_equal(obs, x.obs[[1, 0]])
    assert [rec["elapsed_step"] for rec in infos] == [0, 0]
    y = tr.step(np.ones(2, np.int64), env_id=[0, 2])
    np.testing.assert_array_equal(y.obs[:, 3], obs[:, 3])
    np.testing.assert_array_equal(y.obs[:, 1], [1, 1])
    # env 1 was not reset explicitly; a seeded reset goes to the engine
    obs1, _ = tr.reset(env_id=[1], seed=123)
    ref = parallel_pool.make("Dummy-v0", num_envs=3, episode_len=2, seed=123)
    np.testing.assert_array_equal(obs1[0], ref.reset()[0][1])  # env i reseeded with s gets s + i, as in make


def test_async_recv_records_follow_env_id():
    tr = Translator.make("Dummy-v0", num_envs=6, batch_size=2, episode_len=2, final_obs_key="final")
    tr.async_reset()
    seen = 0
    for _ in range(20):
        x = tr.recv()
        assert len(x.env_id) == 2
        for i, rec in enumerate(x.infos):
            assert rec["env_id"] == x.env_id[i] == x.obs[i, 0]
            if x.done[i]:
                assert rec["final"][1] == 2 and x.obs[i, 1] == 0
                seen += 1
        tr.send(x.env_id.astype(np.int64) % 10, x.env_id)
    assert seen > 0


def test_actions_are_coerced_to_the_env_dtype():
    torch = pytest.importorskip("torch")
    tr = Translator.make("Dummy-v0", num_envs=2, continuous=True)
    tr.reset()
    x = tr.step(np.full((2, 2), 0.25, dtype=np.float64))  # float64 -> the env's float32 Box
    np.testing.assert_allclose(x.reward, [0.5, 0.5])
    d = Translator.make("Dummy-v0", num_envs=2)
    d.reset()
    np.testing.assert_array_equal(d.step(torch.tensor([[4], [6]])).reward, [4, 6])  # torch column of ints


def test_translator_refuses_what_it_cannot_translate():
    with pytest.raises(ValueError, match="same_step"):
        Translator(parallel_pool.make("Dummy-v0", num_envs=2))
    with pytest.raises(ValueError, match="same_step"):
        Translator.make("Dummy-v0", autoreset_mode="next_step")
    with pytest.raises(ValueError, match="multi-player"):
        Translator.make("TwoPlayer-v0", num_envs=2)


@pytest.mark.parametrize("call", ["step", "send", "reset"])
def test_env_ids_are_not_narrowed(call):
    """2**32 + 1 is not env 1: the Translator passes env ids to the engine uncast, which rejects them (an int32
    cast used to step or reset env 1)."""
    tr = make(2)
    obs, _ = tr.reset()
    before = obs.copy()
    big = np.array([2**32 + 1])
    with pytest.raises(ValueError, match="env_id 4294967297 is out of range"):
        if call == "reset":
            tr.reset(big)
        else:
            getattr(tr, call)(np.array([1]), big)
    with pytest.raises(TypeError, match="must be integers"):
        tr.reset(np.array([1.0]))
    x = tr.step(np.array([0, 0]))  # nothing was stepped or reset: each env is one step into its episode
    np.testing.assert_array_equal(x.obs[:, 1], [1, 1])
    np.testing.assert_array_equal(x.obs[:, 3], before[:, 3])
