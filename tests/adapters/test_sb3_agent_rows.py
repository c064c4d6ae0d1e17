"""parallel_pool.integrations.sb3.AgentRowsVecEnv: a multi-agent pool's agents as rows of an SB3 VecEnv (a shared
policy). The checks SB3's own VecEnv tests make (shapes, dtypes, per-row infos, terminal_observation, seeds,
attribute calls, its wrappers), each row against the PettingZoo env stepped directly, and PPO runs over it."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
pytest.importorskip("pettingzoo")
torch = pytest.importorskip("torch")

from parallel_pool.integrations.sb3 import AgentRowsVecEnv  # noqa: E402
from relay_env import AGENTS, Relay  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.vec_env import VecEnv, VecFrameStack, VecMonitor, VecNormalize  # noqa: E402

import parallel_pool as pp  # noqa: E402

torch.set_num_threads(1)


def _expected_step(env, row_actions):
    """One env's rows as the VecEnv must give them, from the env stepped directly: (obs, reward, done, terminal obs
    or None, TimeLimit.truncated, active) per agent."""
    live = list(env.agents)
    obs, rew, term, trunc, _ = env.step({a: int(row_actions[j]) for j, a in enumerate(AGENTS) if a in live})
    ended = not env.agents
    reset_obs = env.reset()[0] if ended else None
    rows = []
    zeros = np.zeros(3, np.float32)
    for a in AGENTS:
        if a in live:
            done = term[a] or trunc[a]
            now = reset_obs[a] if ended else obs[a]
            rows.append((now, rew[a], done, obs[a] if done else None, trunc[a] and not term[a], True))
        else:  # left earlier: zeros, and done with its env
            rows.append((reset_obs[a] if ended else zeros, 0.0, ended, zeros if ended else None, False, False))
    return rows


def test_rows_follow_the_env_stepped_directly():
    venv = AgentRowsVecEnv(env_fn=Relay, num_envs=2, seed=3, num_threads=1, cycles=5)
    try:
        assert isinstance(venv, VecEnv) and venv.num_envs == 6 and venv.num_agents == 3
        assert venv.observation_space == Relay().observation_space("scout") and venv.action_space.n == 3
        refs = [Relay(cycles=5) for _ in range(2)]
        obs = venv.reset()
        for e, ref in enumerate(refs):  # env e is seeded with seed + e, as make() seeds it
            ref_obs, _ = ref.reset(seed=3 + e)
            np.testing.assert_array_equal(obs[3 * e : 3 * e + 3], [ref_obs[a] for a in AGENTS])
        assert [(r["env_id"], r["agent"], r["elapsed_step"]) for r in venv.reset_infos] == [
            (e, j, 0) for e in range(2) for j in range(3)
        ]
        rng = np.random.default_rng(0)
        seen = {"left": 0, "dead end": 0, "truncated": 0}
        for t in range(12):  # two episodes and more: the scout leaves at 2, the others are truncated at 5
            act = rng.integers(0, 3, 6)
            obs, rew, dones, infos = venv.step(act)
            assert obs.shape == (6, 3) and rew.dtype == np.float32 and dones.dtype == np.bool_ and len(infos) == 6
            for e, ref in enumerate(refs):
                for j, (r_obs, r_rew, r_done, r_term, r_tl, r_active) in enumerate(_expected_step(ref, act[3 * e :])):
                    row, ctx = 3 * e + j, f"step {t} env {e} agent {AGENTS[j]}"
                    np.testing.assert_array_equal(obs[row], r_obs, err_msg=ctx)
                    assert (rew[row], dones[row]) == (r_rew, r_done), ctx
                    info = infos[row]
                    assert (info["env_id"], info["agent"], info["active"]) == (e, j, r_active), ctx
                    assert info["TimeLimit.truncated"] is r_tl, ctx
                    if r_term is None:
                        assert "terminal_observation" not in info, ctx
                    else:
                        np.testing.assert_array_equal(info["terminal_observation"], r_term, err_msg=ctx)
                        seen["truncated" if r_tl else "dead end" if not r_active else "left"] += 1
        assert all(seen.values()), seen  # every kind of row end was compared
    finally:
        venv.close()


def test_mpe_rows_are_the_next_step_views_rows_reset_in_the_same_step():
    """The C++ MPE env: each row as the agents-as-rows view (next-step autoreset) gives it, the ended episode's last
    observation in terminal_observation and the next episode's first one returned at once."""
    kw = dict(num_envs=2, seed=5)
    venv = AgentRowsVecEnv("MPE/simple_spread-v3", **kw)
    ref = pp.make_pettingzoo("MPE/simple_spread-v3", view="agent_rows", **kw)
    try:
        assert venv.num_envs == 6 and venv.observation_space.shape == (18,) and venv.action_space.n == 5
        np.testing.assert_array_equal(venv.reset(), ref.reset()[0])
        rng = np.random.default_rng(1)
        ends = 0
        for t in range(30):
            act = rng.integers(0, 5, 6)
            obs, rew, dones, infos = venv.step(act)
            r_obs, r_rew, r_term, r_trunc, r_info = ref.step(act)
            np.testing.assert_allclose(rew, r_rew, rtol=1e-6, err_msg=f"step {t}")
            np.testing.assert_array_equal(dones, r_term | r_trunc)
            if dones.any():  # max_cycles 25: every row of both envs truncated together
                assert dones.all() and all(i["TimeLimit.truncated"] is True for i in infos)
                np.testing.assert_array_equal(np.stack([i["terminal_observation"] for i in infos]), r_obs)
                assert all(i["elapsed_step"] == 25 for i in infos)
                r_obs, *_ = ref.step(act)  # the next-step view's reset step (the action is ignored)
                assert [i["elapsed_step"] for i in venv.reset_infos] == [0] * 6
                ends += 1
            np.testing.assert_array_equal(obs, r_obs, err_msg=f"step {t}")
        assert ends == 1
    finally:
        venv.close()
        ref.close()


@pytest.mark.parametrize("continuous", [False, True])
def test_agents_that_differ_share_the_padded_rows(continuous):
    """simple_speaker_listener: the speaker has 3 actions and 3 observations, the listener 5 and 11. The rows are
    the engine's padded ones (one shared policy's spaces); a row's action past its agent's own is that agent's
    action 0 (SuperSuit's pad_action_space_v0), a Box row's padding is ignored: the same episode as the gymnasium
    face given the agents' own actions."""
    task, kw = "MPE/simple_speaker_listener-v4", dict(num_envs=2, seed=4, continuous_actions=continuous)
    view = pp.make_pettingzoo(task, view="agent_rows", **kw)
    ref = pp.make(task, **kw)
    try:
        assert view.single_observation_space.shape == (11,) and view.num_envs == 4
        if continuous:
            assert view.single_action_space.shape == (5,)
        else:
            assert view.single_action_space.n == 5
        obs, _ = view.reset()
        np.testing.assert_array_equal(obs, ref.reset()[0])
        rng = np.random.default_rng(0)
        for t in range(30):  # through the end of an episode (max_cycles 25)
            act = rng.uniform(0, 1, (4, 5)).astype(np.float32) if continuous else rng.integers(0, 5, 4)
            own = act.copy()
            if continuous:
                own[0::2, 3:] = rng.uniform(0, 1, (2, 2))  # the speaker's padding: anything
            else:
                own[0::2] = np.where(act[0::2] >= 3, 0, act[0::2])  # speaker rows (agent 0 of each env)
            obs, rew, term, trunc, _ = view.step(act)
            r_obs, r_rew, r_term, r_trunc, _ = ref.step(own)
            np.testing.assert_array_equal(obs, r_obs, err_msg=f"step {t}")
            np.testing.assert_array_equal(rew, r_rew, err_msg=f"step {t}")
            np.testing.assert_array_equal(trunc, np.repeat(r_trunc, 2))
    finally:
        view.close()
        ref.close()
    if not continuous:
        with pytest.raises(Exception, match="speaker_0"):  # the gymnasium face keeps refusing such an action
            env = pp.make(task, num_envs=1)
            try:
                env.reset()
                env.step(np.array([4, 0]))
            finally:
                env.close()


def test_sb3_vec_env_calls_seeds_and_wrappers():
    venv = AgentRowsVecEnv("MPE/simple_spread-v3", num_envs=2, max_cycles=4)
    assert venv.seed(11) == list(range(11, 17))  # SB3 gives a seed per row; each env takes its first row's
    obs = venv.reset()
    ref = pp.make_pettingzoo("MPE/simple_spread-v3", view="agent_rows", num_envs=2, max_cycles=4)
    np.testing.assert_array_equal(obs, ref.reset(seed=[11, 14])[0])
    ref.close()
    assert venv.observation_space.contains(obs[0])
    assert venv.get_attr("max_cycles") == [4] * 6 and venv.get_attr("max_cycles", indices=[5]) == [4]
    assert venv.get_attr("action_space", indices=[0, 3]) == [venv.action_space] * 2
    assert venv.env_method("get_config", indices=[4])[0]["max_cycles"] == 4
    assert venv.env_is_wrapped(VecMonitor) == [False] * 6
    with pytest.raises(AttributeError, match="no per-row method 'reset'"):
        venv.env_method("reset", indices=[0])
    with pytest.raises(AttributeError, match="pass config keys"):
        venv.set_attr("max_cycles", 10)
    venv.set_options({"x": 1})
    with pytest.raises(ValueError, match="no reset options"):
        venv.reset()
    venv.set_options(None)
    monitored = VecNormalize(VecMonitor(venv), gamma=0.9)
    monitored.reset()
    episodes = []
    for _ in range(8):
        _, _, dones, infos = monitored.step(np.zeros(6, np.int64))
        episodes += [i["episode"]["l"] for i in infos if "episode" in i]
        for i in np.flatnonzero(dones):  # VecNormalize normalizes the terminal observation as well
            assert infos[i]["terminal_observation"].shape == (18,)
    assert episodes == [4] * 12  # every row's episode: max_cycles steps
    monitored.close()


@pytest.mark.parametrize("wrapper", [None, VecNormalize, VecFrameStack])
def test_sb3s_terminal_obs_and_seeding_checks(wrapper):
    """SB3 2.9.2's own VecEnv checks (tests/test_vec_envs.py: test_vecenv_terminal_obs, test_vec_deterministic) over
    the agent rows, bare and in SB3's wrappers: every row's done at its episode's end and only then, a
    terminal_observation exactly there, the next episode's first observation returned; seed() + reset() repeat."""
    venv = AgentRowsVecEnv("MPE/simple_spread-v3", num_envs=2, max_cycles=3)
    venv = venv if wrapper is None else wrapper(venv, n_stack=2) if wrapper is VecFrameStack else wrapper(venv)
    rows = venv.num_envs
    venv.seed(3)  # through the wrapper (SB3's VecEnvWrapper passes it on) ...
    first = venv.unwrapped.reset()  # ... compared before normalisation or stacking, as SB3's check does
    venv.seed(3)
    np.testing.assert_array_equal(venv.unwrapped.reset(), first)
    venv.reset()
    for step in range(1, 8):
        obs, rew, dones, infos = venv.step(np.zeros(rows, np.int64))
        assert len(obs) == len(rew) == len(dones) == len(infos) == rows
        assert dones.tolist() == [step % 3 == 0] * rows  # max_cycles 3: every row of both envs ends together
        for row, info in enumerate(infos):
            assert ("terminal_observation" in info) == (step % 3 == 0)
            if step % 3 == 0:
                assert info["terminal_observation"].shape == obs[row].shape
                assert not np.array_equal(info["terminal_observation"], obs[row])  # obs is the next episode's
    venv.close()


def test_refusals_name_what_to_pass():
    with pytest.raises(ValueError, match="same_step"):
        AgentRowsVecEnv("MPE/simple_spread-v3", num_envs=2, autoreset_mode="next_step")
    with pytest.raises(ValueError, match="needs a sync pool"):
        AgentRowsVecEnv("MPE/simple_spread-v3", num_envs=2, batch_size=1)
    view = pp.make_pettingzoo("MPE/simple_spread-v3", view="agent_rows", num_envs=2)
    with pytest.raises(ValueError, match="same_step"):
        AgentRowsVecEnv(view)
    view.reset()  # a refused view stays the caller's, usable
    view.close()
    with pytest.raises(TypeError, match="AgentRowsVecEnv takes"):
        AgentRowsVecEnv(3)
    view = pp.make_pettingzoo("MPE/simple_spread-v3", view="agent_rows", num_envs=2, autoreset_mode="same_step")
    with pytest.raises(ValueError, match="a made view was given"):
        AgentRowsVecEnv(view, num_envs=4)
    venv = AgentRowsVecEnv(view)  # a made view
    assert venv.num_envs == 6
    venv.close()
    # the dict faces have no final observations: same-step stays refused there
    with pytest.raises(ValueError, match="same_step"):
        pp.make("MPE/simple_spread-v3", env_type="pettingzoo", autoreset_mode="same_step")
    with pytest.raises(ValueError, match="view='agent_rows'"):
        pp.make(env_fn=Relay, num_envs=1, autoreset_mode="same_step")


@pytest.mark.parametrize("source", ["MPE/simple_spread-v3", "MPE/simple_speaker_listener-v4", "mpe2", "relay"])
def test_ppo_trains_a_shared_policy(source):
    """SB3's PPO, unchanged, over the C++ MPE env (one whose agents differ: padded rows), mpe2's own (a PettingZoo
    package env in the pool's worker processes) and the test env whose agent leaves mid-episode."""
    kw = dict(num_envs=2, seed=0)
    if source == "mpe2":
        spread = pytest.importorskip("mpe2.simple_spread_v3")
        venv = AgentRowsVecEnv(env_fn=spread.parallel_env, num_threads=1, **kw)
    elif source == "relay":
        venv = AgentRowsVecEnv(env_fn=Relay, num_threads=1, **kw)
    else:
        venv = AgentRowsVecEnv(source, **kw)
    model = PPO("MlpPolicy", venv, n_steps=32, batch_size=64, n_epochs=2, seed=0, device="cpu")
    model.learn(384)  # two rollouts of 32 steps x 6 rows
    assert model.num_timesteps == 384
    losses = {k: v for k, v in model.logger.name_to_value.items() if k.startswith("train/")}
    assert losses and all(np.isfinite(v) for v in losses.values()), losses
    venv.close()
