"""The benchmark runner (`parallel-pool bench`): quick mode end to end, the isolated worker, the plan, the focused
cases (`--case NAME --quick`) and the timing arithmetic. Throughput itself is never asserted here (it depends on
the machine and its load)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import parallel_pool
from parallel_pool.bench import QUICK_TIMING, run
from parallel_pool.bench.cases import TASKS, make_plan, thread_counts
from parallel_pool.bench.measure import measure_case, run_isolated

# the folder holding the parallel_pool this test imported (site-packages after `pip install .`, or the source tree
# in a development build), so the CLI subprocesses run the same build
PKG_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(parallel_pool.__file__)))
NUMBER = re.compile(r"\d[\d,.]*[KM]?")


def _has(mod: str) -> bool:
    try:
        __import__(mod)
        return True
    except Exception:
        return False


def _row(md: str, label: str) -> str:
    rows = [ln for ln in md.splitlines() if ln.startswith(f"| {label} |")]
    assert rows, f"no table row for {label!r} in results.md"
    return rows[0]


def test_quick_end_to_end(tmp_path):
    res = run(str(tmp_path), quick=True, tasks=["CartPole-v1", "Dummy-v0"], progress=False)
    files = res["files"]
    for key in ("json", "markdown", "plot"):
        assert os.path.getsize(files[key]) > 0, key
    with open(files["plot"], "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    import matplotlib.image

    h, w = matplotlib.image.imread(files["plot"]).shape[:2]
    assert h > 300 and w > 600

    cases = res["cases"]
    errors = [(c["label"], c["num_envs"], c.get("error")) for c in cases if "error" in c]
    assert not errors, errors
    labels = {t: {c["label"] for c in cases if c["task"] == t} for t in ("CartPole-v1", "Dummy-v0")}
    expected = {
        "ParallelPool sync",
        "ParallelPool async",
        "gymnasium SyncVectorEnv",
        "gymnasium AsyncVectorEnv",
        "for-loop over gymnasium envs",
    }
    if _has("envpool"):
        expected |= {"EnvPool sync", "EnvPool async"}
    assert expected <= labels["CartPole-v1"]
    assert labels["Dummy-v0"] == {"ParallelPool sync", "ParallelPool async"}
    for c in cases:
        assert c["steps_per_s"] > 0 and np.isfinite(c["steps_per_s"])
        assert c["frames_per_s"] == c["steps_per_s"] * TASKS[c["task"]].frame_skip
        assert 0 < c["latency_median_us"] <= c["latency_p99_us"]
        assert len(c["steps_per_s_repeats"]) == QUICK_TIMING["repeats"]
        assert c["steps_per_s"] == pytest.approx(float(np.median(c["steps_per_s_repeats"])))
        assert c["mem_per_env_bytes"] == c["mem_bytes"] / c["num_envs"]
        assert c["steps_per_call"] == (c["num_envs"] if c["mode"] == "sync" else c["batch_size"])
        if c["runner"] == "envpool":
            assert c["vs_envpool"] == 1.0
    # AsyncVectorEnv runs its envs in child processes, and their memory is counted
    gym_async = [c for c in cases if c["runner"] == "gym_async"]
    assert gym_async and all(c["child_processes"] == c["num_envs"] and c["mem_children_bytes"] > 0 for c in gym_async)

    for c in cases:
        assert c["steps_per_s_at_median_call"] == pytest.approx(c["steps_per_call"] / (c["latency_median_us"] * 1e-6))
    pinned = [c for c in cases if "single_core" in c["purpose"] and c["runner"] == "parallel_pool"]
    assert pinned and all(c["pin_cpu"] and c["pinned_cpu"] >= 0 for c in pinned)
    assert len(os.sched_getaffinity(0)) == res["settings"]["cores"]  # the pinning was undone
    lim = res["limits"]["CartPole-v1"]
    assert lim["limit_steps_per_s"] == pytest.approx(lim["single_core_steps_per_s"] * res["settings"]["cores"])

    md = open(files["markdown"]).read()
    assert "## CartPole-v1" in md and "## Dummy-v0" in md and "Load average" in md
    for task, names in labels.items():
        section = md.split(f"## {task}")[1].split("\n## ")[0]
        for label in names:
            row = _row(section, label)
            cells = [x.strip() for x in row.strip("|").split("|")[1:]]
            assert cells and all(NUMBER.match(x) for x in cells), row
    saved = json.load(open(files["json"]))
    assert len(saved["cases"]) == len(cases)


def test_timing_arithmetic():
    """A Dummy env that busy-waits 2 ms per step cannot exceed 500 steps/s per env, and each call takes >= 2 ms."""
    case = {
        "task": "Dummy-v0",
        "runner": "parallel_pool",
        "mode": "sync",
        "num_envs": 1,
        "batch_size": 1,
        "num_threads": 1,
        "purpose": ["main"],
        "config": {"step_cost_us": 2000.0, "episode_len": 1000000},
    }  # no (free) reset steps
    r = measure_case(case, {"warmup": 0.02, "duration": 0.05, "repeats": 3}, isolated=False)
    assert 0 < r["steps_per_s"] <= 500 * 1.001
    assert r["latency_median_us"] >= 2000
    assert r["steps_per_call"] == 1 and r["calls_per_repeat"] >= 3
    # async: 4 envs in flight, 2 received per call; 2 worker threads plus the calling thread (which steps queued
    # envs while it waits in recv) make at most 3 steps per 2 ms
    case.update(mode="async", num_envs=4, batch_size=2, num_threads=2)
    r = measure_case(case, {"warmup": 0.02, "duration": 0.05, "repeats": 2}, isolated=False)
    assert r["steps_per_call"] == 2
    assert 0 < r["steps_per_s"] <= 1500 * 1.001


def test_isolated_worker_measures_peak_memory():
    case = {
        "task": "Dummy-v0",
        "runner": "parallel_pool",
        "mode": "sync",
        "num_envs": 64,
        "batch_size": 64,
        "num_threads": 1,
        "purpose": ["main"],
    }
    r = run_isolated(case, {"warmup": 0.01, "duration": 0.02, "repeats": 2}, timeout=120)
    assert "error" not in r, r
    assert r["steps_per_s"] > 0 and r["steps_per_call"] == 64
    assert r["mem_bytes"] >= 0 and r["child_processes"] == 0
    if sys.platform.startswith("linux"):
        assert r["mem_method"].startswith("peak RSS since baseline")
    bad = run_isolated(dict(case, task="CartPole-v1", config={"no_such_key": 1}), QUICK_TIMING, timeout=120)
    assert "no_such_key" in bad["error"]


def test_plan_handles_absent_and_present_families():
    # Pong and Ant absent from ParallelPool: skipped with a reason, nothing planned for them
    plan = make_plan(
        ["CartPole-v1", "Pong-v5", "Ant-v5"], quick=False, cores=2, ours={"CartPole-v1"}, theirs={"CartPole-v1"}
    )
    assert plan.tasks == ["CartPole-v1"]
    assert any(s.startswith("Pong-v5") for s in plan.skipped) and any(s.startswith("Ant-v5") for s in plan.skipped)
    main = [c for c in plan.cases if "main" in c["purpose"]]
    assert {c["num_envs"] for c in main} == {1, 8, 256}
    for n in (1, 8, 256):
        for mode in ("sync", "async"):
            assert any(c["runner"] == "parallel_pool" and c["mode"] == mode and c["num_envs"] == n for c in main)
            assert any(c["runner"] == "envpool" and c["mode"] == mode and c["num_envs"] == n for c in main)
        for r in ("gym_sync", "gym_async", "for_loop"):
            assert any(c["runner"] == r and c["num_envs"] == n for c in main)
    asyncs = [c for c in main if c["mode"] == "async"]
    assert all(c["batch_size"] == max(1, c["num_envs"] // 2) for c in asyncs)
    assert all(c["num_threads"] == min(c["batch_size"], 2) for c in main if c["runner"] == "parallel_pool")
    keys = [tuple(sorted((k, v) for k, v in c.items() if k != "purpose")) for c in plan.cases]
    assert len(keys) == len(set(keys))  # each measurement once
    assert any("single_core" in c["purpose"] for c in plan.cases)
    # once the families land, Pong and Ant are planned with their baselines
    plan = make_plan(
        ["Pong-v5", "Ant-v5"], quick=False, cores=2, ours={"Pong-v5", "Ant-v5"}, theirs={"Pong-v5", "Ant-v5"}
    )
    assert plan.tasks == ["Pong-v5", "Ant-v5"]
    pong = {c["runner"] for c in plan.cases if c["task"] == "Pong-v5"}
    assert {"parallel_pool", "envpool"} <= pong
    if _has("ale_py"):
        assert {"ale_vector", "gym_sync", "gym_async", "for_loop"} <= pong
    assert thread_counts(16) == [1, 2, 4, 8, 16] and thread_counts(2) == [1, 2] and thread_counts(6) == [1, 2, 4, 6]


def test_cli(tmp_path):
    out = tmp_path / "cli"
    doc = tmp_path / "docs" / "benchmarks.md"
    doc.parent.mkdir()
    doc.write_text("# Benchmarks\n\nintro\n")
    cmd = [
        sys.executable,
        "-m",
        "parallel_pool",
        "bench",
        "--quick",
        "--tasks",
        "Dummy-v0",
        "--out",
        str(out),
        "--no-progress",
        "--doc",
        str(doc),
        "--doc-title",
        "CI box",
    ]
    env = dict(os.environ, PYTHONPATH=PKG_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for _ in range(2):  # the second run replaces the section instead of adding another
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
        assert p.returncode == 0, p.stderr[-2000:]
    assert "## Dummy-v0" in p.stdout
    assert (out / "results.md").exists() and (out / "bench.png").exists() and (out / "results.json").exists()
    text = doc.read_text()
    assert text.startswith("# Benchmarks\n\nintro\n")
    assert text.count("<!-- bench:ci-box -->") == 1 and "### CI box" in text and "#### Dummy-v0" in text
    assert "![benchmark plot: CI box](img/bench_ci-box.png)" in text
    assert (doc.parent / "img" / "bench_ci-box.png").read_bytes()[:4] == b"\x89PNG"
    p = subprocess.run(
        [sys.executable, "-m", "parallel_pool", "bench", "--tasks", "NoSuch-v0"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )
    assert p.returncode != 0 and "unknown task" in p.stderr


# ---- the focused cases: `parallel-pool bench --case NAME --quick` (smoke runs; figures are never asserted) ----
def _bench_case(capsys, *argv: str) -> str:
    from parallel_pool.bench import main as bench_main

    assert bench_main(list(argv)) == 0
    return capsys.readouterr().out


def test_case_choices_and_help(capsys):
    from parallel_pool.bench import CASES
    from parallel_pool.bench import main as bench_main

    assert set(CASES) == {
        "throughput",
        "atari",
        "mujoco",
        "xla",
        "adapters",
        "vizdoom",
        "dmc",
        "contention",
        "python-envs",
        "box2d",
        "shared-threads",
        "minigrid",
        "scaling",
        "mpe",
    }
    with pytest.raises(SystemExit):
        bench_main(["--help"])
    out = capsys.readouterr().out
    assert out.startswith("usage: parallel-pool bench ") and "--case" in out
    with pytest.raises(SystemExit):
        bench_main(["--case", "mujoco", "--help"])
    assert capsys.readouterr().out.startswith("usage: parallel-pool bench --case mujoco ")
    with pytest.raises(SystemExit):
        bench_main(["--case", "nope"])
    assert "invalid choice: 'nope'" in capsys.readouterr().err


def test_case_shared_threads_quick(capsys):
    """Two pools on one ThreadPool, one pool of both sizes, two private pools: a row each, with a ratio."""
    out = _bench_case(capsys, "--case", "shared-threads", "--quick", "--tasks", "CartPole-v1", "--num-envs", "4")
    rows = [ln.split() for ln in out.splitlines() if ln.strip().startswith("CartPole-v1")]
    assert [r[1] for r in rows] == ["one", "shared", "private"]
    assert all(float(r[-3].rstrip("x")) > 0 for r in rows)


def test_case_python_envs_quick(capsys):
    out = _bench_case(capsys, "--case", "python-envs", "--quick")
    rows = [ln for ln in out.splitlines() if ln.startswith(("LunarLander-v3", "MiniGrid-DoorKey"))]
    assert len(rows) == 3 and all("ours sync" in r and "AsyncVectorEnv" in r for r in rows)
    assert "AsyncVectorEnv (no shm)" in rows[2] and "mission" in rows[2]  # the Text mission: pickled by gymnasium
    assert "of cores x one env" in out and "round trip, 1 env:" in out


def test_case_minigrid_quick(capsys):
    out = _bench_case(capsys, "--case", "minigrid", "--quick", "--num-envs", "4")
    rows = re.findall(r"^(ParallelPool|EnvPool|AsyncVectorEnv) .*?\s+(\d+)\s+([\d.]+)$", out, re.M)
    assert rows and rows[0][0] == "ParallelPool" and all(int(sps) > 0 for _, sps, _ in rows)


def test_case_mpe_quick(capsys):
    """Our C++ MPE sync and async against mpe2 in AsyncVectorEnv and SuperSuit's vector env, env steps counted alike:
    the agent steps are the env steps x 3, and our sync row carries the ratio."""
    out = _bench_case(capsys, "--case", "mpe", "--quick", "--num-envs", "2")
    rows = re.findall(
        r"^(ParallelPool (?:sync|async)|mpe2 \S+) .*?\s+(\d+)\s+(\d+)\s+([\d.]+)\s*([\d.]+x)?$", out, re.M
    )
    names = [r[0] for r in rows]
    assert names[:2] == ["ParallelPool sync", "ParallelPool async"]
    if _has("mpe2"):
        assert "mpe2 AsyncVectorEnv" in names and (not _has("supersuit") or "mpe2 SuperSuit" in names)
        assert rows[0][4].endswith("x")
    for _, sps, agent_sps, _, _ in rows:
        assert int(sps) > 0 and int(agent_sps) == pytest.approx(3 * int(sps), abs=3)


def test_case_adapters_quick(capsys):
    out = _bench_case(capsys, "--case", "adapters", "--quick", "--num-envs", "2")
    rows = re.findall(r"^  (.+?)\s+([\d.]+) us$", out, re.M)
    names = [name for name, _ in rows]
    assert "parallel_pool gymnasium front-end (same_step)" in names and "gymnasium SyncVectorEnv (same_step)" in names
    assert all(float(us) > 0 for _, us in rows)


@pytest.mark.skipif(not _has("mujoco"), reason="mujoco not installed")
def test_case_mujoco_quick(capsys):
    out = _bench_case(capsys, "--case", "mujoco", "--quick", "--modes", "sync1")
    row = [ln for ln in out.splitlines() if ln.startswith("Ant-v5")]
    assert len(row) == 1 and "parallel_pool" in row[0]
    assert float(re.search(r"parallel_pool +(\d+)/s", row[0]).group(1)) > 0


@pytest.mark.skipif(not (_has("jax") and parallel_pool._core.has_xla), reason="needs jax and an XLA-enabled build")
def test_case_xla_quick(capsys):
    out = _bench_case(capsys, "--case", "xla", "--quick", "--configs", "8:8")
    systems = re.findall(r"^ +8:8 +(\S+) +[\d,]+ ", out, re.M)
    assert {"pp-python", "pp-py-step", "pp-xla"} <= set(systems)


@pytest.mark.slow
@pytest.mark.skipif(not _has("ale_py"), reason="ale-py not installed")
def test_case_atari_quick(capsys, tmp_path):
    out = _bench_case(
        capsys,
        "--case",
        "atari",
        "--quick",
        "--num-envs",
        "1",
        "--only",
        "ParallelPool sync 1 env,AtariVectorEnv sync",
        "--json",
        str(tmp_path / "atari.json"),
    )
    assert "ParallelPool sync 1 env" in out and "physical limit" in out
    res = json.loads((tmp_path / "atari.json").read_text())
    assert res["median_sps"]["ParallelPool sync 1 env"] > 0
    if "ale_py AtariVectorEnv sync 1 env" in res["median_sps"]:  # ale_py's vector env, where it is installed
        assert res["ratios"]["ParallelPool sync 1 env / ale_py AtariVectorEnv sync 1 env"] > 0


@pytest.mark.slow
@pytest.mark.skipif(
    not (_has("vizdoom") and "Basic-v1" in parallel_pool.list_all_envs()), reason="needs vizdoom and the family"
)
def test_case_vizdoom_quick(capsys):
    out = _bench_case(capsys, "--case", "vizdoom", "--quick", "--num-envs", "2")
    rows = re.findall(r"^(ParallelPool|EnvPool|gymnasium) .+? +([\d.]+) +[\d.]+ +[\d.]+$", out, re.M)
    assert rows and rows[0][0] == "ParallelPool" and all(float(sps) > 0 for _, sps in rows)


# ---- the harness's shape: one package without import cycles, no program text run with `python -c` ----------------
def test_no_program_text_run_with_python_c():
    """Every process the harness starts runs a module (`python -m ...`): no Python program inside a string."""
    pkg_dir = os.path.dirname(os.path.abspath(parallel_pool.__file__))
    found = []
    for dirpath, _, files in os.walk(pkg_dir):
        for f in files:
            if f.endswith(".py"):
                text = open(os.path.join(dirpath, f)).read()
                if re.search(r"""["']-c["']""", text):
                    found.append(os.path.join(dirpath, f))
    assert not found, found


def test_load_generators_are_modules():
    from parallel_pool.bench.suites.contention import load_commands, running

    cmds = load_commands("spin2", 2) + load_commands("torch", 3)
    assert all(c[1:3] == ["-m", "parallel_pool.bench.load"] for c in cmds)
    assert cmds[-1][3:] == ["torch", "--threads", "3"]
    import psutil

    def spinners() -> list:
        """Live children running the spin load (children of earlier tests, zombies included, are not ours)."""
        out = []
        for p in psutil.Process().children():
            try:
                spin = p.cmdline()[1:4] == ["-m", "parallel_pool.bench.load", "spin"]
                if spin and p.status() != psutil.STATUS_ZOMBIE:
                    out.append(p)
            except psutil.Error:  # gone meanwhile
                pass
        return out

    import time

    with running("spin1", 2):  # the spinner is a live process that burns CPU
        deadline = time.monotonic() + 10
        while not (kids := spinners()) and time.monotonic() < deadline:
            time.sleep(0.05)  # a child just started may not have exec'd python yet (its cmdline is still ours)
        assert len(kids) == 1

        kids[0].cpu_percent()
        time.sleep(0.3)
        assert kids[0].cpu_percent() > 10
    assert not spinners()  # stopped afterwards


def test_one_factory_builds_every_peer_env():
    """The Atari contenders of every case come from peers.py: the throughput runners, the demo and the suites."""
    from parallel_pool.bench import peers, runners

    pong, _ = peers.gymnasium_peer("Pong-v5")
    if pong is None:
        pytest.skip("ale-py not installed")
    r = runners.build(
        {"task": "Pong-v5", "runner": "for_loop", "mode": "sync", "num_envs": 1, "batch_size": 1, "num_threads": 0}
    )
    try:
        ref = peers.make_atari_env(pong.gym_id)
        assert r.envs[0].observation_space == ref.observation_space
        assert r.envs[0].spec.id == ref.spec.id == "ALE/Pong-v5"
        ref.close()
    finally:
        r.close()


@pytest.mark.skipif("LunarLander-v3" not in parallel_pool.list_all_envs(), reason="this build has no Box2D envs")
def test_case_box2d_quick(capsys):
    out = _bench_case(capsys, "--case", "box2d", "--quick")
    rows = [ln for ln in out.splitlines() if ln.startswith("LunarLander-v3")]
    assert len(rows) == 1 and all(k in rows[0] for k in ("parallel_pool", "envpool", "AsyncVectorEnv", "MiB/env"))
    assert "vs envpool" in rows[0] and "vs AsyncVectorEnv" in rows[0]
