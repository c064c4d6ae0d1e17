"""The physical-limit loop (`_core.bare_step_loop`, parallel_pool.bench.limit): it steps the real env, ends
episodes as the pool does, and its rate cannot exceed what the env's own cost allows."""

import pytest

import parallel_pool
from parallel_pool import _core
from parallel_pool.bench.limit import bare_rate, physical_limit


def _loop(task, seconds=0.0, min_steps=1, num_envs=1, **config):
    spec = parallel_pool.make_spec(task, **config)
    return _core.bare_step_loop(spec.env_class, spec.config_dict, seconds, min_steps, num_envs)


def test_episodes_end_by_termination_and_by_max_episode_steps():
    # Dummy terminates after episode_len steps; max_episode_steps truncates earlier when it is smaller
    r = _loop("Dummy-v0", min_steps=700, episode_len=7)
    assert r["steps"] >= 700 and r["steps"] % 64 == 0  # the clock is read every 64 steps
    assert r["resets"] == 1 + r["steps"] // 7
    r = _loop("Dummy-v0", min_steps=64, episode_len=50, max_episode_steps=4)
    assert r["resets"] == 1 + r["steps"] // 4


def test_many_envs_take_turns_and_end_their_episodes_each():
    # 5 envs round robin, each terminating after 7 of its own steps: every env resets at its start and after each of
    # its 7th steps (the step counts are multiples of 64, so the envs are a step apart at most)
    r = _loop("Dummy-v0", min_steps=640, num_envs=5, episode_len=7)
    steps = r["steps"]
    per_env = [steps // 5 + (1 if e < steps % 5 else 0) for e in range(5)]
    assert r["resets"] == sum(1 + n // 7 for n in per_env)
    # one env alone ends its episodes at the same steps as before
    assert _loop("Dummy-v0", min_steps=640, episode_len=7)["resets"] == 1 + steps // 7


def test_many_envs_rate_is_per_step_of_any_env():
    # every step busy-waits 200 us: with 4 envs round robin the loop still makes at most 5000 steps per wall second
    r = _loop("Dummy-v0", seconds=0.05, num_envs=4, step_cost_us=200.0)
    assert 0 < r["steps"] / r["seconds"] <= 5000


def test_num_envs_below_one_is_refused():
    with pytest.raises(ValueError, match="num_envs must be >= 1, got 0"):
        _loop("Dummy-v0", num_envs=0)


def test_rate_is_bounded_by_the_env_cost():
    # a Dummy env busy-waits 2 ms (of wall time) per step: no honest loop makes more than 500 steps per wall second
    r = _loop("Dummy-v0", seconds=0.05, step_cost_us=2000.0)
    assert 0 < r["steps"] / r["seconds"] <= 500
    # the loop's CPU time is this thread's: it spins, so it is most of the wall time, never more (+ clock grain)
    assert 0 < r["cpu_seconds"] <= r["seconds"] + 0.01


def test_rate_is_per_cpu_second():
    # the env spins 500 us of wall time per step, so a step costs at most 500 us of CPU time (less when the thread
    # is preempted meanwhile): at least ~2000 steps per CPU-second however loaded the machine is
    rate = bare_rate("Dummy-v0", seconds=0.1, step_cost_us=500.0)
    assert rate >= 1800


def test_cartpole_loop_runs_random_episodes():
    # random CartPole actions end an episode within a few dozen steps (as in gymnasium): many resets
    r = _loop("CartPole-v1", min_steps=6400)
    assert r["steps"] == 6400
    assert 6400 / 100 < r["resets"] < 6400 / 8


def test_physical_limit_is_cores_times_the_best_rate():
    r = physical_limit("Dummy-v0", seconds=0.01, repeats=2, cores=3)
    assert r["limit"] == pytest.approx(3 * r["single_thread"])


needs_vizdoom = pytest.mark.skipif(
    "Basic-v1" not in parallel_pool.list_all_envs(include_unlisted=True), reason="this build has no ViZDoom envs"
)


@needs_vizdoom
def test_doom_game_is_set_up_as_our_env():
    """vizdoom's own DoomGame for the ViZDoom limit plays our Basic-v1: its scenario, buttons, episode timeout,
    game variables and a screen of at least 320x240."""
    import vizdoom

    from parallel_pool.bench.peers import make_doom_game

    c = parallel_pool.make_spec("Basic-v1").config_dict
    game = make_doom_game("Basic-v1", "/nonexistent-until-init")
    try:
        assert game.get_episode_timeout() == (c["max_episode_steps"] + 1) * c["frame_skip"]
        assert game.get_available_buttons_size() == parallel_pool.make_spec("Basic-v1").action_space.shape[0]
        assert game.get_doom_scenario_path() == c["wad_path"] and game.get_doom_map() == c["map_id"]
        assert game.get_screen_width() >= 320 and game.get_mode() == vizdoom.Mode.PLAYER
        assert vizdoom.GameVariable.HITCOUNT in game.get_available_game_variables()
    finally:
        game.close()
    with pytest.raises(ValueError, match="several players or bots"):
        make_doom_game("MultiDuel-v1", "/tmp", max_num_players=2)


@needs_vizdoom
def test_vizdoom_limit_is_its_own_single_game_loop():
    """ViZDoom's step waits on the engine's process: its limit is vizdoom's single-game loop counted over both
    processes, not the bare loop's thread-CPU rate (which leaves the engine's work out)."""
    from parallel_pool.bench.limit import DOOM_LOOP, doom_game_rate

    r = doom_game_rate("Basic-v1", seconds=0.2)
    assert r["processes"] == 2 and r["steps_per_cpu_s"] > 0 and r["steps_per_s"] > 0
    lim = physical_limit("Basic-v1", seconds=0.1, repeats=1, cores=2)
    assert lim["source"] == DOOM_LOOP and lim["limit"] == pytest.approx(2 * lim["single_thread"])


def test_report_names_what_the_limit_measured():
    from parallel_pool.bench.limit import BARE_LOOP
    from parallel_pool.bench.report import annotate

    res = {
        "settings": {"cores": 2},
        "tasks": ["Basic-v1", "Dummy-v0"],
        "cases": [],
        "bare": {"Basic-v1": {"single_thread": 100.0, "source": "the game's loop"}, "Dummy-v0": {"single_thread": 9.0}},
    }
    annotate(res)
    assert res["limits"]["Basic-v1"]["from"] == "the game's loop"
    assert res["limits"]["Basic-v1"]["limit_steps_per_s"] == pytest.approx(200.0)
    assert res["limits"]["Dummy-v0"]["from"] == BARE_LOOP


def test_unknown_config_key_is_named():
    with pytest.raises(Exception, match="no_such_key"):
        _loop("Dummy-v0", no_such_key=1)


# ---- the stages of a full run: limit, loaded, memory, and the summary table built from them -------------------
def test_contention_quick_runs_both_engines_under_a_spinner(capsys):
    pytest.importorskip("envpool")
    from parallel_pool.bench import main as bench_main

    assert (
        bench_main(
            [
                "--case",
                "contention",
                "--tasks",
                "CartPole-v1",
                "--loads",
                "spin1",
                "--seconds",
                "0.05",
                "--repeats",
                "1",
                "--num-envs",
                "4",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "| CartPole-v1 |" in out and "spin1" in out


def test_unknown_load_is_named():
    from parallel_pool.bench.suites.contention import load_commands

    with pytest.raises(ValueError, match="'spinx'"):
        load_commands("spinx", 2)
    assert len(load_commands("spin3", 2)) == 3 and load_commands("quiet", 2) == []


def test_summary_uses_the_bare_rate_as_the_limit(tmp_path):
    from parallel_pool.bench import run

    res = run(str(tmp_path), quick=True, tasks=["Dummy-v0"], progress=False, memory_num_envs=8)
    lim = res["limits"]["Dummy-v0"]
    bare = res["bare"]["Dummy-v0"]["single_thread"]
    assert lim["single_core_steps_per_s"] == bare and lim["limit_steps_per_s"] == pytest.approx(bare * lim["cores"])
    sync = max(
        (c for c in res["cases"] if c["runner"] == "parallel_pool" and c["mode"] == "sync" and "main" in c["purpose"]),
        key=lambda c: c["num_envs"],
    )
    assert sync["vs_limit"] == pytest.approx(sync["steps_per_s"] / lim["limit_steps_per_s"])
    mem = [r for r in res["memory"] if r["task"] == "Dummy-v0"]
    assert [r["runner"] for r in mem] == ["parallel_pool"] and mem[0]["num_envs"] == 8 and mem[0]["mem_per_env_bytes"]
    md = open(res["files"]["markdown"]).read()
    row = next(ln for ln in md.splitlines() if ln.startswith("| Dummy-v0 | testing |"))
    assert f"{100 * sync['vs_limit']:.0f}%" in row
    with open(res["files"]["limit_plot"], "rb") as f:
        assert f.read(4) == b"\x89PNG"


def test_per_call_line_is_the_ratio_of_the_two_medians():
    from parallel_pool.bench.summary import per_call_markdown

    def case(runner, us):
        return {
            "task": "CartPole-v1",
            "runner": runner,
            "mode": "sync",
            "num_envs": 1,
            "purpose": ["main"],
            "latency_median_us": us,
        }

    res = {"cases": [case("parallel_pool", 3.0), case("for_loop", 12.0)]}
    assert "0.25× one plain gymnasium" in per_call_markdown(res)[0]
    assert per_call_markdown({"cases": [case("parallel_pool", 3.0)]}) == []


def test_per_call_line_prefers_the_in_process_measurement():
    from parallel_pool.bench.summary import measure_per_call, per_call_markdown

    pc = measure_per_call(calls=50, repeats=2)
    assert pc["ours_us"] > 0 and pc["plain_us"] > 0
    assert pc["ratio"] == pytest.approx(pc["ours_us"] / pc["plain_us"])
    assert pc["arrays_ratio"] == pytest.approx(pc["arrays_us"] / pc["plain_us"])
    assert 0 < pc["loop_us"] < pc["arrays_us"]  # the harness's own cost per call, named in the line
    line = per_call_markdown({"cases": [], "per_call": pc})[0]
    assert f"{pc['ratio']:.2f}× one plain gymnasium" in line and "best mean of 2 batches of 50 calls" in line
    assert f"includes the harness's own {pc['loop_us']:.2f} µs per call" in line
    assert (
        f"`step_arrays()` (the engine's batch without gymnasium's tuple and info dict) {pc['arrays_us']:.2f} µs" in line
    )
