"""ParallelPool vs EnvPool vs dm_control's own Python loop on DeepMind Control Suite tasks, in one run.

    parallel-pool bench --case dmc [--tasks CheetahRun-v1 WalkerWalk-v1] [--steps 3000] [--repeats 3] [--quick]

Columns (steps/s = env steps per second, all envs together):
  parallel_pool, envpool   num_envs=16, batch_size=8, recv()/send() in a loop (EnvPool's async pattern)
  dm_control               one `suite.load(domain, task)` env stepped in a Python loop (how dm_control runs)
A default task that this build does not register is skipped with a note (the DMC ids arrive domain by domain); if
none is registered the run falls back to CartpoleSwingup-v1. Each measurement runs in its own worker process
(parallel_pool.bench.measure); runs alternate between the libraries and the best of `repeats` is reported (the
machine may be shared); the load average before and after is printed with the table.
"""

from __future__ import annotations

import argparse
import importlib.util
import os

from parallel_pool.bench.measure import measure_rounds
from parallel_pool.bench.suites.mujoco import pool_case

DEFAULT_TASKS = ["CheetahRun-v1", "WalkerWalk-v1", "HumanoidRun-v1"]
FALLBACK_TASK = "CartpoleSwingup-v1"


def available_tasks(wanted: list[str]) -> list[str]:
    import parallel_pool

    registered = set(parallel_pool.list_all_envs())
    tasks = [t for t in wanted if t in registered]
    for t in wanted:
        if t not in registered:
            print(f"{t}: not registered in this build, skipped")
    if not tasks:
        print(f"no requested task is registered: using {FALLBACK_TASK}")
        tasks = [FALLBACK_TASK]
    return tasks


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", nargs="+", default=DEFAULT_TASKS)
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="the first task only, 200 steps, 1 repeat (a smoke run)")
    args = ap.parse_args(argv)
    tasks = available_tasks(args.tasks)
    if args.quick:
        tasks, args.steps, args.repeats = tasks[:1], 200, 1
    libs = ["parallel_pool", "envpool", "dm_control"]
    for lib in ("envpool", "dm_control"):
        if importlib.util.find_spec(lib) is None:
            print(f"{lib} not installed: no {lib} column")
            libs.remove(lib)
    load0 = os.getloadavg()
    for task in tasks:
        named = {lib: pool_case(lib, task, 16, 8) for lib in libs if lib != "dm_control"}
        one = {"task": task, "runner": "dm_control", "mode": "sync", "num_envs": 1, "batch_size": 1, "num_threads": 0}
        runs = measure_rounds(named, {"warmup": 0.05, "calls": max(1, args.steps // 8), "repeats": 1}, args.repeats)
        if "dm_control" in libs:
            timing = {"warmup": 0.05, "calls": args.steps, "repeats": 1}
            runs.update(measure_rounds({"dm_control": one}, timing, args.repeats))
        best = {lib: max(r["steps_per_s"] for r in runs[lib]) for lib in libs}
        ratios = "".join(
            f"  vs {lib} {best['parallel_pool'] / best[lib]:.2f}x" for lib in libs if lib != "parallel_pool"
        )
        print(f"{task:20s} " + "  ".join(f"{lib} {best[lib]:8.0f}/s" for lib in libs) + ratios, flush=True)
    load1 = os.getloadavg()
    print(
        f"\ncores: {os.cpu_count()}, load average (1/5/15 min) before {load0[0]:.2f}/{load0[1]:.2f}/{load0[2]:.2f}, "
        f"after {load1[0]:.2f}/{load1[1]:.2f}/{load1[2]:.2f}"
    )
    print(
        f"parallel_pool / envpool: 16 envs, batch 8, recv/send; dm_control: 1 env, Python loop; {args.steps} steps, "
        f"best of {args.repeats} alternating runs"
    )
    return 0
