"""ParallelPool vs EnvPool vs gymnasium's AsyncVectorEnv on the Box2D ids, side by side in one run.

    parallel-pool bench --case box2d [--tasks LunarLander-v3 BipedalWalker-v3] [--seconds 2] [--repeats 3] [--quick]

Columns (steps/s = env steps per second, all envs together):
  parallel_pool, envpool   num_envs=16, batch_size=8, recv()/send() in a loop (EnvPool's async pattern)
  AsyncVectorEnv           gymnasium's own env, 16 worker processes, every env stepped per call
and the memory per env (the measuring process and its children, divided by num_envs). Each measurement runs in
its own worker process (parallel_pool.bench.measure); runs alternate between the contenders and the best of
`repeats` is reported, because the machine may be shared; the load average before and after is printed too.
"""

from __future__ import annotations

import argparse
import importlib.util
import os

from parallel_pool.bench.measure import measure_rounds
from parallel_pool.bench.suites.mujoco import pool_case


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", nargs="+", default=["LunarLander-v3", "BipedalWalker-v3"])
    ap.add_argument("--num-envs", type=int, default=16)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=2.0, help="timed seconds per measurement")
    ap.add_argument("--repeats", type=int, default=3, help="alternating rounds; the best is reported")
    ap.add_argument("--quick", action="store_true", help="the first task, 4 envs (batch 2), 0.1 s, 1 round")
    args = ap.parse_args(argv)
    if args.quick:
        args.tasks, args.num_envs, args.batch_size, args.seconds, args.repeats = args.tasks[:1], 4, 2, 0.1, 1
    n, b = args.num_envs, args.batch_size
    timing = {"warmup": min(0.5, args.seconds / 4), "duration": args.seconds, "repeats": 1}
    libs = ["parallel_pool", "envpool"]
    if importlib.util.find_spec("envpool") is None:
        print("envpool not installed: no envpool column")
        libs.remove("envpool")
    load0 = os.getloadavg()
    for task in args.tasks:
        contenders = {lib: pool_case(lib, task, n, b) for lib in libs}
        gym_case = {"task": task, "runner": "gym_async", "mode": "sync", "num_envs": n, "batch_size": n}
        contenders["AsyncVectorEnv"] = gym_case | {"num_threads": 0}
        runs = measure_rounds(contenders, timing, args.repeats)
        best = {k: max(r["steps_per_s"] for r in rs) for k, rs in runs.items()}
        mem = {k: min(r["mem_per_env_bytes"] for r in rs) for k, rs in runs.items()}
        ours = best["parallel_pool"]
        ratios = "".join(f"  vs {k} {ours / v:.2f}x" for k, v in best.items() if k != "parallel_pool")
        print(
            f"{task:18s} "
            + "  ".join(f"{k} {v:8.0f}/s ({mem[k] / 2**20:.1f} MiB/env)" for k, v in best.items())
            + ratios,
            flush=True,
        )
    load1 = os.getloadavg()
    print(
        f"\ncores: {len(os.sched_getaffinity(0))}, load average (1/5/15 min) before "
        f"{load0[0]:.2f}/{load0[1]:.2f}/{load0[2]:.2f}, after {load1[0]:.2f}/{load1[1]:.2f}/{load1[2]:.2f}"
    )
    print(
        f"parallel_pool / envpool: {n} envs, batch {b}, recv/send; AsyncVectorEnv: {n} envs, one process each, "
        f"every env per step; {args.seconds} s per measurement, best of {args.repeats} alternating runs"
    )
    return 0
