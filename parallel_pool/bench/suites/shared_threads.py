"""Two pools on one shared ThreadPool vs one pool of both sizes vs two pools with threads of their own, in one run.

    parallel-pool bench --case shared-threads [--tasks CartPole-v1,Ant-v5] [--num-envs 16] [--threads 2]

Rows per task (all async, batch_size = half the envs of each pool, one caller):
  one pool       2 x num_envs envs on `threads` threads (the throughput two pools should reach together)
  shared         two pools of num_envs envs on one parallel_pool.ThreadPool(threads): one call = recv + send on each
  private        the same two pools, each with `threads` threads of its own (2 x threads threads: oversubscribed)
Each row is measured in its own worker process (parallel_pool.bench.measure), rows round robin over `--rounds`; the
figure is steps/s (median of rounds) and its ratio to "one pool" (goal for shared: >= 0.95).
"""

from __future__ import annotations

import argparse
import statistics

from parallel_pool.bench.measure import measure_rounds, seconds_timing

TASKS = ("CartPole-v1", "Ant-v5")


def contenders(task: str, n: int, threads: int) -> dict[str, dict]:
    base = {"task": task, "runner": "parallel_pool", "mode": "async", "num_threads": threads}
    return {
        "one pool": dict(base, num_envs=2 * n, batch_size=n),
        "shared": dict(base, num_envs=n, batch_size=n // 2, pools={"count": 2, "share": "shared"}),
        "private": dict(base, num_envs=n, batch_size=n // 2, pools={"count": 2, "share": "private"}),
    }


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    p = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tasks", default=",".join(TASKS))
    p.add_argument("--num-envs", type=int, default=16, help="envs of each of the two pools")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seconds", type=float, default=2.0, help="timed seconds per measurement")
    p.add_argument("--quick", action="store_true", help="one short round (a smoke run)")
    args = p.parse_args(argv)
    if args.quick:
        args.rounds, args.seconds = 1, 0.2
    timing = seconds_timing(args.seconds, warmup=0.3)
    print(f"{args.num_envs} envs per pool, {args.threads} threads; steps/s (median of {args.rounds} rounds)")
    for task in args.tasks.split(","):
        runs = measure_rounds(contenders(task, args.num_envs, args.threads), timing, rounds=args.rounds)
        sps = {name: statistics.median(r["steps_per_s"] for r in res) for name, res in runs.items()}
        for name, v in sps.items():
            print(f"  {task:14s} {name:10s} {v:12,.0f} steps/s  {v / sps['one pool']:5.2f}x one pool")
    return 0
