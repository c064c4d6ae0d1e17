"""Bad input raises a clear Python exception, loses nothing, and leaves the pool usable."""

import numpy as np
import pytest

import parallel_pool as pp


@pytest.fixture
def env():
    e = pp.make("Dummy-v0", num_envs=3)
    e.reset()
    yield e
    e.close()


def _still_works(env, expected_elapsed):
    *_, info = env.step(np.array([1, 1, 1]))
    np.testing.assert_array_equal(info["elapsed_step"], expected_elapsed)


def test_wrong_action_shape(env):
    with pytest.raises(ValueError, match=r"shape \(2,\), expected \(3,\)"):
        env.step(np.array([1, 1]))
    with pytest.raises(ValueError, match="shape"):
        env.step(np.ones((3, 2), dtype=np.int32))
    _still_works(env, [1, 1, 1])  # the failed calls stepped nothing


def test_wrong_action_dtype(env):
    with pytest.raises(TypeError, match="must be integers"):
        env.step(np.array([0.5, 1.0, 1.0]))
    with pytest.raises(TypeError):
        env.step(np.array(["a", "b", "c"]))
    _still_works(env, [1, 1, 1])


def test_out_of_range_discrete_action(env):
    with pytest.raises(ValueError, match=r"row 1 is 10, outside the valid range \[0, 9\]"):
        env.step(np.array([1, 10, 1]))
    with pytest.raises(ValueError, match="outside the valid range"):
        env.step(np.array([-1, 1, 1]))
    _still_works(env, [1, 1, 1])


def test_nan_continuous_action():
    env = pp.make("Dummy-v0", num_envs=2, continuous=True)
    env.reset()
    bad = np.array([[0.1, 0.2], [np.nan, 0.0]], dtype=np.float32)
    with pytest.raises(ValueError, match="row 1 contains NaN"):
        env.step(bad)
    with pytest.raises(ValueError, match="inf"):
        env.step(np.array([[0.1, np.inf], [0.0, 0.0]]))
    obs, rew, *_ = env.step(np.array([[0.25, 0.25], [0.5, 0.0]]))  # float64 input is converted
    np.testing.assert_allclose(rew, [0.5, 0.5])


def test_unknown_and_duplicate_env_id(env):
    with pytest.raises(ValueError, match="env_id 3 is out of range"):
        env.step(np.array([1]), env_id=np.array([3]))
    with pytest.raises(ValueError, match="out of range"):
        env.step(np.array([1]), env_id=np.array([-1]))
    with pytest.raises(ValueError, match="appears more than once"):
        env.step(np.array([1, 1]), env_id=np.array([0, 0]))
    with pytest.raises(TypeError, match="env_id must be integers"):
        env.step(np.array([1]), env_id=np.array([0.0]))
    _still_works(env, [1, 1, 1])


def test_send_while_pending_and_bad_recv():
    env = pp.make("Dummy-v0", num_envs=4, batch_size=2)
    env.async_reset()
    with pytest.raises(ValueError, match="already has an action pending"):
        env.send(np.array([1]), np.array([0]))
    env.recv()
    env.recv()
    with pytest.raises(RuntimeError, match="wait forever"):
        env.recv()
    sync = pp.make("Dummy-v0", num_envs=2)
    with pytest.raises(RuntimeError, match="no actions were sent"):
        sync.recv()


def test_batch_size_larger_than_num_envs():
    with pytest.raises(ValueError, match=r"batch_size \(5\) must be <= num_envs \(4\)"):
        pp.make("CartPole-v1", num_envs=4, batch_size=5)


def test_unknown_task_and_key_suggest_close_matches():
    with pytest.raises(ValueError, match="did you mean 'CartPole-v1'"):
        pp.make("CartPole-v2")
    with pytest.raises(ValueError, match="did you mean 'CartPole-v1'"):
        pp.make("cartpole-v1")
    with pytest.raises(ValueError, match="did you mean 'num_envs'"):
        pp.make("CartPole-v1", num_env=4)
    with pytest.raises(TypeError, match="num_envs.*must be an int"):
        pp.make("CartPole-v1", num_envs=2.5)
    with pytest.raises(ValueError, match="autoreset_mode.*must be one of"):
        pp.make("CartPole-v1", autoreset_mode="sometimes")
    with pytest.raises(ValueError, match="env_type"):
        pp.make("CartPole-v1", env_type="gymnax")
    with pytest.raises(ValueError, match="num_envs must be >= 1"):
        pp.make("CartPole-v1", num_envs=0)


def test_exception_in_env_reaches_python():
    env = pp.make("Dummy-v0", num_envs=3, error_action=7, num_threads=2)
    env.reset()
    with pytest.raises(pp.EnvError, match="env 1: Dummy env 1 was told to fail"):
        env.step(np.array([1, 7, 1]))
    # the pool stays usable; the failed env starts a new episode on its next step
    obs, rew, term, trunc, info = env.step(np.array([1, 1, 1]))
    assert info["elapsed_step"][1] == 0 and info["elapsed_step"][0] == 2
    # in async mode too: the error surfaces from the recv that collects the failing env's batch
    env2 = pp.make("Dummy-v0", num_envs=4, batch_size=2, error_action=3, num_threads=2)
    env2.async_reset()
    first = env2.recv()[4]["env_id"]
    second = env2.recv()[4]["env_id"]
    env2.send(np.array([3, 3]), first)
    with pytest.raises(pp.EnvError, match="told to fail") as raised:
        env2.recv()
    assert sorted(raised.value.env_ids) == sorted(first.tolist()) and raised.value.batch_kept
    # the next recv returns that batch, the failed envs reset in place (see tests/engine/test_lifecycle.py)
    obs, rew, term, trunc, info = env2.recv()
    assert sorted(info["env_id"].tolist()) == sorted(first.tolist()) and (info["elapsed_step"] == 0).all()
    env2.send(np.array([1, 1]), second)
    env2.send(np.array([1, 1]), first)  # the failed envs are in the loop again
    got = np.concatenate([env2.recv()[4]["env_id"], env2.recv()[4]["env_id"]])
    assert sorted(got.tolist()) == [0, 1, 2, 3]


def test_async_errors_inside_runs_reach_their_batch():
    # A cheap env without StepBatch runs in async runs of many envs (once the cost estimate has settled), whose rows
    # are published together when the whole run is done: an env that throws inside such a run is reported exactly
    # once, by the recv of the batch its row went to, with its row reset in place; the other envs go on.
    env = pp.make("Dummy-v0", num_envs=64, batch_size=16, error_action=3, episode_len=1000, num_threads=2)
    env.async_reset()
    rng = np.random.default_rng(0)
    told, reported, failed_rows = 0, 0, 0
    steps = np.zeros(64, np.int64)
    for _ in range(2000):
        try:
            *_, info = env.recv()
        except pp.EnvError as e:
            assert e.batch_kept and all("told to fail" in m for m in e.messages)
            reported += len(e.env_ids)
            *_, info = env.recv()  # the kept batch: the failed envs' rows are a new episode's first
            failed = np.isin(info["env_id"], e.env_ids)
            assert failed.sum() == len(e.env_ids) and (info["elapsed_step"][failed] == 0).all()
            failed_rows += int(failed.sum())
        ids = info["env_id"]
        assert len(set(ids.tolist())) == len(ids)
        steps[ids] += 1
        actions = np.where(rng.random(len(ids)) < 0.01, 3, 1)
        told += int((actions == 3).sum())
        env.send(actions, ids)
    for _ in range(64 // 16):  # collect what is still in flight
        try:
            env.recv()
        except pp.EnvError as e:
            reported += len(e.env_ids)
            env.recv()
    env.close()
    assert told > 100
    assert reported == told and failed_rows <= told
    assert steps.min() > 0  # every env stayed in the loop


def test_use_after_close():
    env = pp.make("CartPole-v1", num_envs=2)
    env.reset()
    env.close()
    env.close()  # idempotent
    with pytest.raises(RuntimeError, match="closed"):
        env.step(np.array([0, 1]))
    with pytest.raises(RuntimeError, match="closed"):
        env.reset()
    dm = pp.make_dm("CartPole-v1", num_envs=2)
    dm.close()
    with pytest.raises(RuntimeError, match="closed"):
        dm.step(np.array([0, 1]))


def test_bad_reset_mask_and_seed():
    env = pp.make("Dummy-v0", num_envs=3, autoreset_mode="disabled")
    with pytest.raises(TypeError, match="reset_mask must be a bool numpy array"):  # gymnasium: TypeError too
        env.reset(options={"reset_mask": np.array([1, 0, 1])})
    with pytest.raises(ValueError, match=r"reset_mask must have shape \(3,\)"):
        env.reset(options={"reset_mask": np.array([True, False])})
    with pytest.raises(ValueError, match="one int per env"):
        env.reset(seed=[1, 2])
