"""PettingZoo's API over the pool (parallel_pool.multi_agent): the batched pool, the single-env ParallelEnv view (under
PettingZoo's own API and seed tests), the agents-as-rows VectorEnv, AEC envs through env_fn, and bad input. Each
face is compared with the PettingZoo env itself stepped with the same seeds and actions."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from gymnasium.vector import VectorEnv

import parallel_pool as pp

pytest.importorskip("pettingzoo")
from pettingzoo import ParallelEnv  # noqa: E402
from pettingzoo.test import parallel_api_test, parallel_seed_test  # noqa: E402
from relay_env import AGENTS, Relay  # noqa: E402

from parallel_pool.multi_agent import AgentRowsEnv, ParallelEnvView, PettingZooPool  # noqa: E402


def _api_warnings(caught) -> list[str]:
    """The complaints of PettingZoo's parallel_api_test (it warns instead of failing for some of them)."""
    marks = ("Live agent", "dead last turn", "No agents present", "not all possible_agents")
    return [str(w.message) for w in caught if any(m in str(w.message) for m in marks)]


def _check_row(out, i, ref, ctx):
    """Env i's rows of a batched result `out` against the env's own dicts `ref` (obs, rewards, terms, truncs): an agent
    is active exactly where the env has an entry for it; inactive rows are zeros."""
    obs, rew, term, trunc, infos = out
    r_obs, r_rew, r_term, r_trunc = ref
    for a in AGENTS:
        present = a in r_obs
        assert infos[a]["active"][i] == present, f"{ctx} env {i} agent {a} active"
        if present:
            np.testing.assert_array_equal(obs[a][i], r_obs[a], err_msg=f"{ctx} env {i} agent {a}")
        else:
            assert not obs[a][i].any(), f"{ctx} env {i} agent {a}: an inactive row reads zeros"
        assert rew[a][i] == r_rew.get(a, 0.0), f"{ctx} env {i} agent {a} reward"
        assert term[a][i] == r_term.get(a, False), f"{ctx} env {i} agent {a} termination"
        assert trunc[a][i] == r_trunc.get(a, False), f"{ctx} env {i} agent {a} truncation"


# ---- the batched pool ---------------------------------------------------------------------------------------------


def test_batched_results_equal_independent_envs_with_agents_leaving():
    """num_envs Relay envs (different episode lengths) stepped in the pool and one by one with the same seeds and
    actions: every agent's rows, its active mask (scout leaves mid-episode), the next-step autoreset."""
    n, cycles = 3, [3, 4, 6]
    env = pp.make_pettingzoo(env_fn=Relay, num_envs=n, seed=7, num_threads=2, cycles=cycles)
    refs = [Relay(cycles=c) for c in cycles]
    assert isinstance(env, PettingZooPool) and env.possible_agents == AGENTS and env.agents == AGENTS
    try:
        obs, infos = env.reset()
        nothing = {a: np.zeros(n) for a in AGENTS}
        for i, r in enumerate(refs):
            _check_row((obs, nothing, nothing, nothing, infos), i, (r.reset(seed=7 + i)[0], {}, {}, {}), "reset")
        assert obs["scout"].shape == (n, 3) and infos["keeper"]["env_id"].tolist() == [0, 1, 2]
        rng = np.random.default_rng(0)
        need_reset = [False] * n
        seen = {"left early": 0, "terminated": 0, "truncated": 0, "autoreset": 0}
        for t in range(16):
            actions = {a: rng.integers(0, 3, n) for a in AGENTS}
            out = env.step(actions)
            assert all(out[0][a].shape == (n, 3) and out[1][a].shape == (n,) for a in AGENTS)  # never a shape change
            for i, r in enumerate(refs):
                if need_reset[i]:  # next_step: this step reset the env, ignoring the actions
                    ref = (r.reset()[0], {}, {}, {})
                    need_reset[i] = False
                    seen["autoreset"] += 1
                    assert out[4]["scout"]["elapsed_step"][i] == 0
                else:
                    r_obs, r_rew, r_term, r_trunc, _ = r.step({a: actions[a][i] for a in AGENTS if a in r.agents})
                    ref = (r_obs, r_rew, r_term, r_trunc)
                    need_reset[i] = not r.agents
                    seen["terminated"] += sum(r_term.values())
                    seen["truncated"] += sum(r_trunc.values())
                    seen["left early"] += "scout" not in r_obs and bool(r.agents)
                _check_row(out, i, ref, f"step {t}")
        assert all(seen.values()), seen
    finally:
        env.close()


def test_async_pool_returns_the_batch_envs_with_their_ids():
    env = pp.make_pettingzoo(env_fn=Relay, num_envs=4, batch_size=2, num_threads=2, seed=1, cycles=50)
    try:
        obs, infos = env.reset()
        steps = np.zeros(4, dtype=int)
        for _ in range(10):
            ids = infos["runner"]["env_id"]
            assert obs["runner"].shape == (2, 3) and len(set(ids.tolist())) == 2
            for a in AGENTS:
                assert (infos[a]["env_id"] == ids).all()
            np.testing.assert_array_equal(obs["keeper"][:, 1], steps[ids])  # each env's own step count
            steps[ids] += 1
            obs, _, _, _, infos = env.step({a: np.ones(2, np.int64) for a in AGENTS})  # the envs of the last batch
    finally:
        env.close()


def test_cpp_multi_player_env_players_are_agents():
    """A C++ multi-player env: its players are agents player_0.. (TwoPlayer-v0 with vary_players: env i has 1 + i % 3
    players, so the others are inactive there); env_id subsets; the env's end is every player's."""
    env = pp.make_pettingzoo("TwoPlayer-v0", num_envs=3, max_num_players=3, vary_players=True, episode_len=3)
    players = np.array([1, 2, 3])
    agents = ["player_0", "player_1", "player_2"]
    try:
        assert env.possible_agents == agents
        obs, infos = env.reset()
        for j, a in enumerate(agents):
            active = j < players
            np.testing.assert_array_equal(infos[a]["active"], active)
            np.testing.assert_array_equal(obs[a][active], [[e, j, 0] for e in range(3) if active[e]])
            assert not obs[a][~active].any()
        actions = {a: np.full(3, j) for j, a in enumerate(agents)}
        for t in (1, 2, 3):
            obs, rew, term, trunc, infos = env.step(actions)
            for j, a in enumerate(agents):
                active = j < players
                np.testing.assert_array_equal(rew[a], np.where(active, j, 0))
                np.testing.assert_array_equal(obs[a][:, 2], np.where(active, t, 0))
                np.testing.assert_array_equal(term[a], active & (t == 3))
        # a subset of envs, in the order given
        obs, rew, term, trunc, infos = env.step({a: np.array([1, 1]) for a in agents}, env_id=np.array([2, 1]))
        assert infos["player_0"]["env_id"].tolist() == [2, 1]
        np.testing.assert_array_equal(infos["player_2"]["active"], [True, False])
        np.testing.assert_array_equal(obs["player_1"][:, :3], [[2, 1, 0], [1, 1, 0]])  # both reset (next_step)
        obs, rew, *_ = env.step({a: np.array([2, 2]) for a in agents}, env_id=np.array([2, 1]))
        np.testing.assert_array_equal(rew["player_1"], [2, 2])
        np.testing.assert_array_equal(rew["player_2"], [2, 0])
    finally:
        env.close()


def test_disabled_autoreset_resets_the_envs_named():
    """autoreset_mode="disabled": an ended env waits; reset(env_id=...) restarts it alone, every agent active again."""
    env = pp.make_pettingzoo(env_fn=Relay, num_envs=2, num_threads=1, autoreset_mode="disabled", cycles=[3, 9])
    actions = {a: np.ones(2, np.int64) for a in AGENTS}
    try:
        env.reset(seed=0)
        for _ in range(3):
            _, _, term, trunc, infos = env.step(actions)
        assert trunc["runner"].tolist() == [True, False] and not infos["scout"]["active"].any()
        obs, infos = env.reset(env_id=[0])
        assert infos["runner"]["env_id"].tolist() == [0] and obs["scout"].shape == (1, 3)
        assert all(infos[a]["active"].tolist() == [True] for a in AGENTS) and obs["keeper"][0, 1] == 0
        _, _, _, _, infos = env.step({a: np.ones(2, np.int64) for a in AGENTS}, env_id=[1, 0])
        assert infos["scout"]["active"].tolist() == [False, True]  # env 1's scout left at step 2; env 0 restarted
        assert infos["keeper"]["elapsed_step"].tolist() == [4, 1]
    finally:
        env.close()


def test_gymnasium_pool_spaces_have_the_player_rows():
    """The gymnasium front-end of a multi-player pool: its batched spaces have a row per player, as its observations
    and actions do (they said num_envs rows)."""
    for env in (pp.make("TwoPlayer-v0", num_envs=3), pp.make(env_fn=Relay, num_envs=2, num_threads=1)):
        try:
            obs, _ = env.reset()
            rows = env.num_envs * env.spec.max_num_players
            assert env.observation_space.shape[0] == rows == obs.shape[0]
            assert env.observation_space.contains(obs)
            env.action_space.seed(0)
            obs, *_ = env.step(env.action_space.sample())
            assert env.observation_space.contains(obs)
        finally:
            env.close()


def test_snapshot_keeps_which_agents_left():
    """set_state of a snapshot taken after an agent left: the restored env's next results mask that agent again."""
    env = pp.make_pettingzoo(env_fn=Relay, num_envs=2, num_threads=1, seed=3, cycles=8)
    actions = {a: np.ones(2, np.int64) for a in AGENTS}
    try:
        env.reset()
        for _ in range(2):
            env.step(actions)  # scout terminated at step 2
        snap = env.get_state([0, 1])
        after = env.step(actions)
        assert not after[4]["scout"]["active"].any() and after[4]["runner"]["active"].all()
        for _ in range(7):
            env.step(actions)  # steps 4 to 8 (the end), the reset, step 1 of the next episode: scout is back
        env.set_state([0, 1], snap)
        again = env.step(actions)
        for a in AGENTS:
            np.testing.assert_array_equal(again[4][a]["active"], after[4][a]["active"])
            np.testing.assert_array_equal(again[0][a], after[0][a])
        with pytest.raises(ValueError, match="agents_left"):
            env.set_state([0, 1], {**snap, "agents_left": np.zeros((2, 2), bool)})
    finally:
        env.close()


# ---- the single-env view: a plain pettingzoo.ParallelEnv ------------------------------------------------------------


def _run_episode(env, seed, actions_seed=0, steps=40):
    """(every result of one episode of a ParallelEnv) with seeded actions for its live agents."""
    rng = np.random.default_rng(actions_seed)
    results = [env.reset(seed=seed)]
    for _ in range(steps):
        if not env.agents:
            break
        actions = {a: int(rng.integers(0, 3)) for a in env.agents}
        results.append(env.step(actions))
    return results


def _assert_same_results(ours, theirs):
    assert len(ours) == len(theirs)
    for t, (a, b) in enumerate(zip(ours, theirs)):
        for mine, ref in zip(a, b):
            assert list(mine) == list(ref), f"step {t}: agents {list(mine)} != {list(ref)}"
            for agent in ref:
                np.testing.assert_array_equal(np.asarray(mine[agent]), np.asarray(ref[agent]), err_msg=f"step {t}")


def test_single_env_view_passes_pettingzoo_tests_and_equals_the_env():
    view = pp.make_pettingzoo(env_fn=Relay, view="single", cycles=6)
    try:
        assert isinstance(view, ParallelEnvView) and isinstance(view, ParallelEnv)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            parallel_api_test(view, num_cycles=20)
        assert not _api_warnings(caught), _api_warnings(caught)
        _assert_same_results(_run_episode(view, seed=5), _run_episode(Relay(cycles=6), seed=5))
        assert view.agents == []
        with pytest.raises(ValueError, match="call reset"):
            view.step({})
    finally:
        view.close()
    parallel_seed_test(lambda: pp.make_pettingzoo(env_fn=Relay, view="single"))


def test_single_env_view_of_rps_and_its_aec_env():
    """PettingZoo's rock-paper-scissors as a ParallelEnv and as its AEC env (converted by PettingZoo's own
    aec_to_parallel): both pass PettingZoo's tests and equal rps's own parallel env, step for step."""
    pytest.importorskip("pygame")  # rps imports it
    from pettingzoo.classic.rps import rps

    for fn in (rps.parallel_env, rps.env):
        view = pp.make_pettingzoo(env_fn=fn, view="single")
        try:
            assert view.pool.spec.id == "rps_v2" and "rps_v2" in repr(view) and "<locals>" not in repr(view)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                parallel_api_test(view, num_cycles=30)
            assert not _api_warnings(caught), _api_warnings(caught)
            _assert_same_results(_run_episode(view, seed=2), _run_episode(rps.parallel_env(), seed=2))
        finally:
            view.close()
        parallel_seed_test(lambda fn=fn: pp.make_pettingzoo(env_fn=fn, view="single"))


@pytest.mark.parametrize("name", ["knights_archers_zombies_v11", "cooperative_pong_v6"])
def test_butterfly_envs_through_the_single_and_batched_faces(name):
    """Two of PettingZoo's butterfly games (their AEC-native parallel envs, pygame-drawn, agents that die in Knights
    Archers Zombies): the single-env view passes PettingZoo's API test and plays the game's own episode step for
    step; the batched face steps two of them."""
    pytest.importorskip("pygame")
    import importlib

    module = importlib.import_module(f"pettingzoo.butterfly.{name}")
    view = pp.make_pettingzoo(env_fn=module.parallel_env, view="single")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            parallel_api_test(view, num_cycles=20)
        assert not _api_warnings(caught), _api_warnings(caught)
        _assert_same_results(
            _run_episode(view, seed=3, steps=30), _run_episode(module.parallel_env(), seed=3, steps=30)
        )
    finally:
        view.close()
    env = pp.make_pettingzoo(env_fn=module.parallel_env, num_envs=2, seed=0)
    try:
        obs, infos = env.reset()
        assert set(obs) == set(env.possible_agents)
        for agent in env.possible_agents:
            assert obs[agent].shape == (2, *env.observation_space(agent).shape)
        for _ in range(3):
            obs, rew, term, trunc, infos = env.step({a: np.zeros(2, np.int64) for a in env.possible_agents})
            assert all(rew[a].shape == (2,) for a in env.possible_agents)
    finally:
        env.close()


def test_aec_env_is_converted_or_refused_at_make():
    pytest.importorskip("pygame")
    from pettingzoo.classic.rps import rps
    from pettingzoo.classic.tictactoe import tictactoe

    env = pp.make(env_fn=rps.env, num_envs=2, num_threads=1)  # was a TypeError in the first reset
    try:
        assert repr(env.spec.env_fn) == "aec_to_parallel(pettingzoo.classic.rps.rps.env)"
        assert repr(env) == "GymnasiumPool('rps_v2', num_envs=2, batch_size=2, backend='python')"
        obs, info = env.reset()
        assert obs.shape == (4,) and info["players"]["env_id"].tolist() == [0, 0, 1, 1]
    finally:
        env.close()
    with pytest.raises(ValueError, match="tictactoe_v3, a PettingZoo AEC env .*'is_parallelizable': True"):
        pp.make(env_fn=tictactoe.env, num_envs=1)


# ---- ViZDoom's several-agent envs ---------------------------------------------------------------------------------

_VIZDOOM = "MultiDuel-v1" in pp.list_all_envs()


@pytest.mark.skipif(not _VIZDOOM, reason="the vizdoom family is not built")
def test_vizdoom_several_agents_through_every_face():
    """MultiDuel with two agents: the single-env view passes PettingZoo's API and seed tests; the batched pool's rows
    are the gymnasium front-end's player rows for the same seed and actions (one result schema)."""
    kw = dict(max_num_players=2, max_episode_steps=6)
    view = pp.make_pettingzoo("MultiDuel-v1", view="single", **kw)
    try:
        assert view.possible_agents == ["player_0", "player_1"]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            parallel_api_test(view, num_cycles=10)
        assert not _api_warnings(caught), _api_warnings(caught)
    finally:
        view.close()
    parallel_seed_test(lambda: pp.make_pettingzoo("MultiDuel-v1", view="single", **kw), num_cycles=4)
    batched = pp.make_pettingzoo("MultiDuel-v1", num_envs=1, seed=3, **kw)
    rows = pp.make("MultiDuel-v1", num_envs=1, seed=3, **kw)
    try:
        out, ref = batched.reset(), rows.reset()
        rng = np.random.default_rng(0)
        for t in range(8):
            for j, a in enumerate(batched.possible_agents):
                np.testing.assert_array_equal(out[0][a][0], ref[0][j], err_msg=f"step {t} {a}")
                assert out[-1][a]["HEALTH"][0] == ref[-1]["HEALTH"][j]
            buttons = rng.integers(0, 2, (2, rows.single_action_space.shape[0])).astype(np.float64)
            out = batched.step({a: buttons[j : j + 1] for j, a in enumerate(batched.possible_agents)})
            ref = rows.step(buttons)
            for j, a in enumerate(batched.possible_agents):
                assert out[1][a][0] == ref[1][j]
                assert out[3][a][0] == ref[3][0]  # the env's time limit truncates every agent
    finally:
        batched.close()
        rows.close()


# ---- agents as rows: a gymnasium VectorEnv for a shared policy ----------------------------------------------------


def test_agent_rows_view_is_a_vector_env_in_env_major_order():
    from gymnasium.wrappers.vector import RecordEpisodeStatistics

    kw = dict(env_fn=Relay, num_envs=2, num_threads=1, seed=3, cycles=[4, 6])
    rows_env = pp.make_pettingzoo(view="agent_rows", **kw)
    batched = pp.make_pettingzoo(**kw)
    try:
        assert isinstance(rows_env, AgentRowsEnv) and isinstance(rows_env, VectorEnv) and rows_env.num_envs == 6
        assert rows_env.single_observation_space == batched.observation_space("scout")
        assert rows_env.single_action_space == batched.action_space("keeper")
        env = RecordEpisodeStatistics(rows_env)
        obs, info = env.reset()
        b_obs, b_infos = batched.reset()
        assert rows_env.observation_space.contains(obs)
        rows_env.action_space.seed(0)
        episodes = 0
        for t in range(14):
            act = rows_env.action_space.sample()
            obs, rew, term, trunc, info = env.step(act)
            b_obs, b_rew, b_term, b_trunc, b_infos = batched.step(
                {a: act.reshape(2, 3)[:, j] for j, a in enumerate(AGENTS)}
            )
            assert obs.shape == (6, 3) and rew.shape == term.shape == (6,)
            for e in range(2):
                for j, a in enumerate(AGENTS):
                    row = e * 3 + j  # env-major, agent-minor
                    np.testing.assert_array_equal(obs[row], b_obs[a][e], err_msg=f"step {t} row {row}")
                    assert (rew[row], term[row], trunc[row]) == (b_rew[a][e], b_term[a][e], b_trunc[a][e])
                    assert info["active"][row] == b_infos[a]["active"][e]
                    assert (info["env_id"][row], info["agent"][row]) == (e, j)
            if "episode" in info:
                np.testing.assert_array_equal(info["_episode"], term | trunc)
                episodes += int(info["_episode"].sum())
        assert episodes >= 6
    finally:
        rows_env.close()
        batched.close()


# ---- bad input ----------------------------------------------------------------------------------------------------


def test_bad_input_raises_clear_errors_and_changes_nothing():
    env = pp.make_pettingzoo(env_fn=Relay, num_envs=2, num_threads=1)
    good = {a: np.zeros(2, np.int64) for a in AGENTS}
    try:
        env.reset()
        with pytest.raises(ValueError, match=r"unknown agents \['ghost'\]; the agents are \['scout'"):
            env.step({**good, "ghost": np.zeros(2, np.int64)})
        with pytest.raises(ValueError, match=r"no actions for agents \['keeper'\]"):
            env.step({a: v for a, v in good.items() if a != "keeper"})
        with pytest.raises(ValueError, match=r"actions\['runner'\] must have shape \(2,\).*got shape \(3,\)"):
            env.step({**good, "runner": np.zeros(3, np.int64)})
        with pytest.raises(TypeError, match="dict agent"):
            env.step(np.zeros(6, np.int64))
        with pytest.raises(ValueError, match="unknown agent 'ghost'"):
            env.observation_space("ghost")
        _, _, _, _, infos = env.step(good)
        assert infos["scout"]["elapsed_step"].tolist() == [1, 1]  # the refused steps stepped nothing
        with pytest.warns(UserWarning, match="not passed to the envs"):
            env.reset(options={"difficulty": 2})
    finally:
        env.close()
    view = pp.make_pettingzoo(env_fn=Relay, view="single")
    try:
        with pytest.raises(ValueError, match="call reset"):
            view.step({"scout": 0})
        view.reset(seed=0)
        with pytest.raises(ValueError, match=r"no actions for the live agents \['keeper'\]"):
            view.step({"scout": 0, "runner": 0})
        view.step({a: 0 for a in AGENTS})
        view.step({a: 0 for a in AGENTS})  # scout terminated
        assert view.agents == ["runner", "keeper"]
        with pytest.raises(ValueError, match=r"agents \['scout'\] that are not live"):
            view.step({a: 0 for a in AGENTS})
    finally:
        view.close()
    with pytest.raises(ValueError, match="view must be one of"):
        pp.make_pettingzoo(env_fn=Relay, view="flat")
    with pytest.raises(ValueError, match="num_envs must be 1"):
        pp.make_pettingzoo(env_fn=Relay, view="single", num_envs=2)
    with pytest.raises(ValueError, match="needs a sync pool"):
        pp.make_pettingzoo("TwoPlayer-v0", view="agent_rows", num_envs=2, batch_size=1)
    with pytest.raises(ValueError, match="same_step"):
        pp.make("TwoPlayer-v0", env_type="pettingzoo", autoreset_mode="same_step")
    rows_env = pp.make_pettingzoo("TwoPlayer-v0", view="agent_rows", num_envs=2)
    try:
        rows_env.reset()
        with pytest.raises(ValueError, match=r"one row per agent of every env \(4 = 2 envs x 2 agents\)"):
            rows_env.step(np.zeros(2, np.int64))
    finally:
        rows_env.close()


def test_docs_example_runs():
    """docs/multi-agent.md's example runs as written."""
    import re
    from pathlib import Path

    pytest.importorskip("pygame")
    doc = Path(__file__).resolve().parents[2] / "docs" / "multi-agent.md"
    (code,) = re.findall(r"<!-- run -->\n```python\n(.*?)```", doc.read_text(), flags=re.S)
    exec(compile(code, str(doc), "exec"), {"__name__": "__main__"})
