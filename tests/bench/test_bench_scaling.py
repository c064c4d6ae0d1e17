"""`parallel-pool bench --case scaling`: the plan of cells, the fraction of linear scaling, and a tiny run end to end
(table, JSON, PNG, the machine named). Throughput itself is never asserted."""

from __future__ import annotations

import json

import pytest

from parallel_pool.bench import main as bench_main
from parallel_pool.bench.cases import thread_counts
from parallel_pool.bench.suites import scaling
from parallel_pool.bench.summary import fmt_rate


def test_plan_on_16_cores_covers_every_engine_thread_count_and_mode(monkeypatch):
    monkeypatch.setattr(scaling, "_has", lambda module: True)
    tasks = list(scaling.SCALING_TASKS)
    cells, skipped = scaling.plan(tasks, thread_counts(16), 16, None, set(tasks), set(tasks))
    assert not skipped
    # 4 tasks x (ParallelPool, EnvPool) + Pong's AtariVectorEnv = 9 pairs, x 2 modes x 5 thread counts
    assert len(cells) == 90
    pong = {(c["runner"], c["mode"], c["num_threads"]) for c in cells if c["task"] == "Pong-v5"}
    assert {("ale_vector", "async", 16), ("envpool", "sync", 1), ("parallel_pool", "async", 8)} <= pong
    assert {c["num_threads"] for c in cells} == {1, 2, 4, 8, 16}
    for c in cells:
        assert c["num_envs"] == (256 if c["task"] == "CartPole-v1" else 64)
        assert c["batch_size"] == (c["num_envs"] if c["mode"] == "sync" else c["num_envs"] // 2)
        assert c["batch_size"] >= c["num_threads"]  # every thread has envs to step
    # a task whose family is not built is named, not measured; ale_py's engine runs Atari only
    cells, skipped = scaling.plan(["Ant-v5", "Pong-v5"], [1, 2], 2, None, {"Ant-v5"}, set())
    assert skipped == ["Pong-v5: not in parallel_pool.list_all_envs() (family not built)"]
    assert {c["runner"] for c in cells} == {"parallel_pool"}


def test_fraction_of_linear_is_against_the_same_engine_and_mode_at_one_thread():
    def cell(runner, mode, t, median):
        return {"task": "Ant-v5", "runner": runner, "mode": mode, "num_threads": t, "median": median}

    cells = [
        cell("parallel_pool", "async", 1, 100.0),
        cell("parallel_pool", "async", 4, 360.0),
        cell("parallel_pool", "sync", 1, 50.0),
        cell("parallel_pool", "sync", 4, 100.0),
        cell("envpool", "async", 2, 120.0),  # its fewest threads: 2, i.e. 60 per thread
        cell("envpool", "async", 4, 180.0),
        cell("envpool", "sync", 4, None),  # failed: no fraction
    ]
    scaling.fractions(cells)
    assert [c["linear"] for c in cells] == [1.0, 0.9, 1.0, 0.5, 1.0, 0.75, None]
    res = {"threads": [1, 4], "cells": [dict(c, task="Pong-v5") for c in cells] + cells}
    lines = scaling.targets_markdown(res)
    assert "- Ant-v5 ParallelPool async, 4 threads: 0.90 of linear (target ≥ 0.9: met)" in lines
    res["bare"] = {"Ant-v5": 100.0}  # 360 steps/s at 4 threads against 4 x 100
    assert "- Ant-v5 ParallelPool async, 4 threads: 0.90 of linear (target ≥ 0.9: met); 0.90 of 4 × the bare loop" in (
        scaling.targets_markdown(res)
    )
    assert "- Pong-v5 ParallelPool async, 4 threads: 0.90 of linear (target ≥ 0.9: met)" in lines


def test_quick_run_writes_table_json_and_plot(tmp_path, capsys):
    out = tmp_path / "scaling"
    assert bench_main(["--case", "scaling", "--quick", "--runners", "parallel_pool", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    res = json.loads((out / "scaling.json").read_text())
    md = (out / "scaling.md").read_text()
    assert md in printed
    cpu = res["machine"]["cpu"]
    assert md.startswith(f"# Thread scaling, {cpu}, {res['cores']} cores")
    assert f"- Date: {res['started']} (UTC)" in md
    cells = res["cells"]
    assert sorted((c["mode"], c["num_threads"]) for c in cells) == [
        ("async", 1),
        ("async", 2),
        ("sync", 1),
        ("sync", 2),
    ]
    for c in cells:
        assert c["task"] == "CartPole-v1" and not c.get("error")
        assert 0 < c["low"] <= c["median"] <= c["high"]
    for mode in ("sync", "async"):
        one, two = sorted((c for c in cells if c["mode"] == mode), key=lambda c: c["num_threads"])
        assert one["linear"] == pytest.approx(1.0)
        assert two["linear"] == pytest.approx(two["median"] / (2 * one["median"]))
        row = next(ln for ln in md.splitlines() if ln.startswith(f"| ParallelPool | {mode} |"))
        assert f"({two['linear']:.2f})" in row
    # the physical limit at each thread count: threads x the bare loop's single-thread rate
    bare = res["bare"]["CartPole-v1"]
    assert bare > 0
    limit_row = next(ln for ln in md.splitlines() if ln.startswith("| threads × bare loop | (limit) |"))
    assert limit_row == f"| threads × bare loop | (limit) | {fmt_rate(bare)} | {fmt_rate(2 * bare)} |"
    assert (out / "scaling.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_input_is_named(capsys):
    for argv, word in (
        (["--threads", "0,2"], "--threads must be >= 1"),
        (["--tasks", "NoSuch-v0"], "NoSuch-v0"),
        (["--runners", "nope"], "unknown runner(s) ['nope']"),
    ):
        with pytest.raises(SystemExit):
            bench_main(["--case", "scaling", "--quick", "--out", "/nonexistent", *argv])
        assert word in capsys.readouterr().err
