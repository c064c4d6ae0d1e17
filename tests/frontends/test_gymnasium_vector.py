"""The gymnasium front-end is a real gymnasium.vector.VectorEnv: its autoreset semantics and its behaviour under
gymnasium's vector wrappers are compared, step by step, with gymnasium's own SyncVectorEnv running a pure-Python
twin of Dummy-v0 (gymnasium 1.4 ships no vector-env checker, so the reference is gymnasium's own vector env)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv, VectorEnv
from gymnasium.wrappers import vector as vw

import parallel_pool

N = 3
_MODES = {
    "next_step": AutoresetMode.NEXT_STEP,
    "same_step": AutoresetMode.SAME_STEP,
    "disabled": AutoresetMode.DISABLED,
}
EPISODE_LEN = 4


class PyDummy(gym.Env):
    """Dummy-v0's dynamics in Python: obs [env_id, steps, last action, draw], reward = the action (sum of the two
    components when continuous), terminated after `episode_len` steps, info["score"] = the episode's return. The
    draw (obs[3]) comes from the C++ env's generator and is left out of comparisons (here it is 0)."""

    metadata = {"render_modes": []}

    def __init__(self, env_id: int, episode_len: int = EPISODE_LEN, continuous: bool = False):
        self.env_id, self.episode_len, self.continuous = env_id, episode_len, continuous
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (4,), np.float32)
        self.action_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32) if continuous else gym.spaces.Discrete(10)

    def _obs(self):
        return np.array([self.env_id, self.steps, self.last, 0.0], dtype=np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.steps, self.last, self.score = 0, 0.0, 0.0
        return self._obs(), {"score": np.float32(0)}

    def step(self, action):
        a = float(np.float32(action[0]) + np.float32(action[1])) if self.continuous else float(action)
        self.steps += 1
        self.last = np.float32(a)
        self.score = np.float32(self.score + np.float32(a))
        return self._obs(), a, self.steps >= self.episode_len, False, {"score": np.float32(self.score)}


def make_pair(mode: str, max_episode_steps: int = 1000, continuous: bool = False, **kw):
    ours = parallel_pool.make(
        "Dummy-v0",
        num_envs=N,
        episode_len=EPISODE_LEN,
        max_episode_steps=max_episode_steps,
        autoreset_mode=mode,
        continuous=continuous,
        **kw,
    )

    def fn(i):
        return lambda: gym.wrappers.TimeLimit(PyDummy(i, continuous=continuous), max_episode_steps)

    ref = SyncVectorEnv([fn(i) for i in range(N)], autoreset_mode=_MODES[mode])
    return ours, ref


def _strip(obs):
    """Drop the generator draw column (obs[..., 3])."""
    obs = np.asarray(obs)
    return obs[..., :3]


def assert_same_step(a, b, ctx=""):
    oa, ra, ta, tra, ia = a
    ob, rb, tb, trb, ib = b
    np.testing.assert_array_equal(_strip(oa), _strip(ob), err_msg=f"obs {ctx}")
    np.testing.assert_allclose(ra, rb, rtol=1e-6, err_msg=f"reward {ctx}")
    np.testing.assert_array_equal(ta, tb, err_msg=f"terminated {ctx}")
    np.testing.assert_array_equal(tra, trb, err_msg=f"truncated {ctx}")
    if "score" in ib:
        np.testing.assert_allclose(ia["score"], ib["score"], err_msg=f"info[score] {ctx}")
    if "_score" in ia:  # masks are optional (absent: every env reports the key), but must be right if given
        np.testing.assert_array_equal(ia["_score"], ib["_score"], err_msg=f"info[_score] {ctx}")
    if "final_obs" in ib:
        np.testing.assert_array_equal(ia["_final_obs"], ib["_final_obs"], err_msg=f"_final_obs {ctx}")
        for i in np.flatnonzero(ib["_final_obs"]):
            np.testing.assert_array_equal(_strip(ia["final_obs"][i]), _strip(ib["final_obs"][i]), err_msg=ctx)
            if "score" in ib["final_info"]:
                np.testing.assert_allclose(ia["final_info"]["score"][i], ib["final_info"]["score"][i], err_msg=ctx)


def lockstep(ours, ref, rng, steps: int):
    """`steps` steps of both pools with the same random Discrete(10) actions drawn from `rng`: yields (t, our
    step's result, the reference's)."""
    for t in range(steps):
        act = rng.integers(0, 10, N)
        yield t, ours.step(act.astype(np.int32)), ref.step(act)


def actions_for(space, steps, seed=0):
    space = space if isinstance(space, gym.spaces.Space) else space
    space.seed(seed)
    return [space.sample() for _ in range(steps)]


# ---- the VectorEnv contract ---------------------------------------------------------------------------------


def test_is_a_vector_env_with_batched_spaces():
    env = parallel_pool.make("CartPole-v1", num_envs=4)
    assert isinstance(env, VectorEnv) and env.unwrapped is env
    assert env.num_envs == 4
    assert env.single_observation_space == gym.spaces.Box(
        env.single_observation_space.low, env.single_observation_space.high, (4,), np.float32
    )
    assert env.observation_space.shape == (4, 4) and env.action_space == gym.spaces.MultiDiscrete([2] * 4)
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    obs, info = env.reset(seed=3)
    assert obs in env.observation_space
    for _ in range(30):
        obs, rew, term, trunc, info = env.step(env.action_space.sample())
        assert obs in env.observation_space
        assert rew.shape == term.shape == trunc.shape == (4,) and term.dtype == trunc.dtype == np.bool_
        assert isinstance(info, dict) and all(len(v) == 4 for v in info.values() if isinstance(v, np.ndarray))
    env.close()
    env.close()  # closing twice is fine


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_reset_seed_and_step_determinism(mode):
    a = parallel_pool.make("CartPole-v1", num_envs=4, autoreset_mode=mode)
    b = parallel_pool.make("CartPole-v1", num_envs=4, autoreset_mode=mode, seed=7)
    oa, _ = a.reset(seed=7)
    ob, _ = b.reset()
    np.testing.assert_array_equal(oa, ob)  # reset(seed=s) gives env i the seed s + i, as make(seed=s) does
    acts = actions_for(a.action_space, 60)
    for act in acts:
        assert_same_step(a.step(act), b.step(act))
    oa2, _ = a.reset(seed=7)
    np.testing.assert_array_equal(oa2, ob)
    a.close()
    b.close()


# ---- autoreset semantics == gymnasium's SyncVectorEnv -------------------------------------------------------


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
@pytest.mark.parametrize("max_steps", [1000, 3])  # 3 < EPISODE_LEN: episodes end by truncation
def test_autoreset_matches_sync_vector_env(mode, max_steps):
    ours, ref = make_pair(mode, max_steps)
    assert ours.metadata["autoreset_mode"] == ref.metadata["autoreset_mode"]
    oa, _ = ours.reset(seed=0)
    ob, _ = ref.reset(seed=0)
    np.testing.assert_array_equal(_strip(oa), _strip(ob))
    rng = np.random.default_rng(1)
    for t, a, b in lockstep(ours, ref, rng, 3 * EPISODE_LEN + 2):
        assert_same_step(a, b, f"mode={mode} t={t}")
    ours.close()
    ref.close()


def test_disabled_autoreset_reset_mask_matches_sync_vector_env():
    ours, ref = make_pair("disabled")
    ours.reset(seed=0)
    ref.reset(seed=0)
    rng = np.random.default_rng(2)
    for t, a, b in lockstep(ours, ref, rng, 2 * EPISODE_LEN):
        assert_same_step(a, b, f"t={t}")
        done = b[2] | b[3]
        if done.any():
            oa, ia = ours.reset(options={"reset_mask": done})
            ob, ib = ref.reset(options={"reset_mask": done})
            np.testing.assert_array_equal(_strip(oa), _strip(ob))
    ours.close()
    ref.close()


# ---- gymnasium's vector wrappers ------------------------------------------------------------------------------


def _run_wrapped(wrap, mode, steps=3 * EPISODE_LEN + 2, continuous=False, max_steps=1000, seed=0):
    ours, ref = make_pair(mode, max_steps, continuous=continuous)
    wo, wr = wrap(ours), wrap(ref)
    ro, rr = wo.reset(seed=seed), wr.reset(seed=seed)
    out = [(ro, rr)]
    for act in actions_for(ours.action_space, steps, seed=seed):
        out.append((wo.step(act), wr.step(act)))
    wo.close()
    wr.close()
    return wo, wr, out


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
@pytest.mark.parametrize("max_steps", [1000, 3])
def test_record_episode_statistics(mode, max_steps):
    wo, wr, out = _run_wrapped(vw.RecordEpisodeStatistics, mode, steps=4 * EPISODE_LEN, max_steps=max_steps)
    episodes = 0
    for so, sr in out[1:]:
        io, ir = so[4], sr[4]
        assert ("episode" in io) == ("episode" in ir)
        if "episode" in ir:
            episodes += ir["_episode"].sum()
            np.testing.assert_array_equal(io["_episode"], ir["_episode"])
            np.testing.assert_allclose(io["episode"]["r"], ir["episode"]["r"])
            np.testing.assert_array_equal(io["episode"]["l"], ir["episode"]["l"])
    assert episodes >= N
    assert list(wo.return_queue) == pytest.approx(list(wr.return_queue))
    assert list(wo.length_queue) == list(wr.length_queue)


def _compare_obs_stream(out):
    for so, sr in out:
        oo, orf = (so[0], sr[0])
        oo, orf = np.asarray(oo).reshape(N, -1), np.asarray(orf).reshape(N, -1)
        assert oo.shape == orf.shape
        np.testing.assert_allclose(oo[:, :3], orf[:, :3], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "wrap",
    [
        pytest.param(lambda e: vw.TransformObservation(e, lambda o: o * 2 + 1), id="TransformObservation"),
        pytest.param(
            lambda e: vw.VectorizeTransformObservation(
                e, gym.wrappers.TransformObservation, func=lambda o: o - 1, observation_space=None
            ),
            id="VectorizeTransformObservation",
        ),
        pytest.param(lambda e: vw.NormalizeObservation(e), id="NormalizeObservation"),
        pytest.param(lambda e: vw.DtypeObservation(e, np.float64), id="DtypeObservation"),
        pytest.param(lambda e: vw.FlattenObservation(e), id="FlattenObservation"),
        pytest.param(lambda e: vw.ReshapeObservation(e, (4, 1)), id="ReshapeObservation"),
    ],
)
def test_observation_wrappers(wrap):
    _, _, out = _run_wrapped(wrap, "next_step")
    _compare_obs_stream(out)


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
@pytest.mark.parametrize(
    "wrap",
    [
        pytest.param(lambda e: vw.NormalizeReward(e, gamma=0.9), id="NormalizeReward"),
        pytest.param(lambda e: vw.ClipReward(e, 0.0, 5.0), id="ClipReward"),
        pytest.param(lambda e: vw.TransformReward(e, lambda r: r * 0.5), id="TransformReward"),
    ],
)
def test_reward_wrappers(wrap, mode):
    _, _, out = _run_wrapped(wrap, mode)
    for so, sr in out[1:]:
        np.testing.assert_allclose(so[1], sr[1], rtol=1e-5)


@pytest.mark.parametrize(
    "wrap",
    [
        pytest.param(lambda e: vw.ClipAction(e), id="ClipAction"),
        pytest.param(lambda e: vw.RescaleAction(e, np.float32(0.0), np.float32(2.0)), id="RescaleAction"),
        pytest.param(lambda e: vw.TransformAction(e, lambda a: a * 0.5), id="TransformAction"),
    ],
)
def test_action_wrappers(wrap):
    _, _, out = _run_wrapped(wrap, "next_step", continuous=True)
    for so, sr in out[1:]:
        np.testing.assert_allclose(so[1], sr[1], rtol=1e-5, atol=1e-6)
        _compare_obs_stream([(so, sr)])


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_dict_info_to_list(mode):
    _, _, out = _run_wrapped(lambda e: vw.DictInfoToList(e), mode, max_steps=3)
    for so, sr in out[1:]:
        lo, lr = so[4], sr[4]
        assert isinstance(lo, list) and len(lo) == N
        for a, b in zip(lo, lr):
            assert a["score"] == pytest.approx(b["score"])
            assert ("final_obs" in a) == ("final_obs" in b)
            if "final_obs" in b:
                np.testing.assert_array_equal(a["final_obs"][:3], b["final_obs"][:3])


def test_wrappers_stack():
    """A typical stack: statistics outermost, normalisation and clipping inside."""

    def wrap(e):
        return vw.RecordEpisodeStatistics(vw.ClipReward(vw.NormalizeObservation(e), 0.0, 3.0))

    wo, wr, out = _run_wrapped(wrap, "next_step", steps=3 * EPISODE_LEN)
    _compare_obs_stream(out)
    assert list(wo.return_queue) == pytest.approx(list(wr.return_queue))
