"""MiniGrid throughput, side by side in one run: ParallelPool's C++ MiniGrid, EnvPool's, and the minigrid package's
env (ImgObsWrapper) in gymnasium's AsyncVectorEnv; 16 envs each, the pools async with batch 8, random actions.

    parallel-pool bench --case minigrid                          # MiniGrid-DoorKey-8x8-v0, 4 s per measurement
    parallel-pool bench --case minigrid --task BabyAI-GoToLocal-v0
    parallel-pool bench --case minigrid --quick                  # 0.5 s per measurement (a smoke run)

Each measurement runs in a fresh worker process (parallel_pool.bench.measure), contenders alternating, the best of
`repeats` reported, with memory per env (the measuring process and its children, divided by num_envs). The
AsyncVectorEnv row always runs MiniGrid-DoorKey-8x8-v0 (the Python env the python-envs case uses).
"""

from __future__ import annotations

import argparse
import os

from parallel_pool.bench.measure import measure_rounds
from parallel_pool.bench.suites.atari import have


def contenders(task: str, n: int) -> dict[str, dict]:
    """{name: case}: the two C++ pools async (batch n / 2), minigrid's Python env in AsyncVectorEnv."""
    b = max(n // 2, 1)
    pool = {"task": task, "mode": "async", "num_envs": n, "batch_size": b, "num_threads": 0}
    out = {f"ParallelPool async {n} envs, batch {b}": dict(pool, runner="parallel_pool")}
    if have("envpool"):
        out[f"EnvPool async {n} envs, batch {b}"] = dict(pool, runner="envpool")
    if have("minigrid"):
        gym = {"task": "minigrid", "env_fn": "minigrid", "runner": "gym_async", "mode": "sync"}
        out[f"AsyncVectorEnv {n} envs (minigrid DoorKey-8x8)"] = dict(gym, num_envs=n, batch_size=n, num_threads=0)
    return out


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--task", default="MiniGrid-DoorKey-8x8-v0")
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--repeats", type=int, default=2, help="alternating rounds; the best is reported")
    ap.add_argument("--num-envs", type=int, default=16)
    ap.add_argument("--quick", action="store_true", help="0.5 s per measurement, 1 round (a smoke run)")
    args = ap.parse_args(argv)
    if args.quick:
        args.seconds, args.repeats = 0.5, 1
    timing = {"warmup": min(0.5, args.seconds / 4), "duration": args.seconds, "repeats": 1}
    load0 = os.getloadavg()
    runs = measure_rounds(contenders(args.task, args.num_envs), timing, args.repeats)
    print(f"\n{args.task}, {len(os.sched_getaffinity(0))} cores, load average before {load0[0]:.2f}")
    print(f"{'contender':48s} {'steps/s':>10s} {'MiB/env':>8s}")
    for name, rs in runs.items():
        sps = max(r["steps_per_s"] for r in rs)
        mem = max(r["mem_per_env_bytes"] for r in rs) / 2**20
        print(f"{name:48s} {sps:10.0f} {mem:8.2f}")
    print(f"load average after {os.getloadavg()[0]:.2f}")
    return 0
