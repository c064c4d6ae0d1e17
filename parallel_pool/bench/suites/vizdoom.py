"""ViZDoom throughput, side by side in one run: ParallelPool, EnvPool and vizdoom's own gymnasium wrapper in
gymnasium's AsyncVectorEnv, 16 envs each (the pools async with batch 8), random button presses, frame skip 4.

    parallel-pool bench --case vizdoom                # Basic-v1, 8 s per measurement
    parallel-pool bench --case vizdoom --quick        # 1 s per measurement (a smoke run)

Each measurement runs in a fresh worker process (parallel_pool.bench.measure); engine start-up is not timed. Every
env is an engine process, so the figures depend on the cores the engines get: compare them only within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import time

from parallel_pool.bench.measure import measure_rounds, seconds_timing
from parallel_pool.bench.peers import gymnasium_peer
from parallel_pool.bench.suites.atari import have


def contenders(task: str, n: int) -> dict[str, dict]:
    """{name: case}: the pools async (batch n / 2, random button presses), the wrapper's envs in AsyncVectorEnv."""
    b = max(n // 2, 1)
    pool = {"task": task, "mode": "async", "num_envs": n, "batch_size": b, "num_threads": 0, "binary_actions": True}
    out = {f"ParallelPool async {n} envs, batch {b}": dict(pool, runner="parallel_pool")}
    if have("envpool"):
        out[f"EnvPool async {n} envs, batch {b}"] = dict(pool, runner="envpool")
    peer, _ = gymnasium_peer(task)
    if peer is not None:  # vizdoom's gymnasium wrapper has the scenario
        gym = {"task": task, "runner": "gym_async", "mode": "sync", "num_envs": n, "batch_size": n, "num_threads": 0}
        out[f"gymnasium AsyncVectorEnv {n} envs ({peer.gym_id})"] = gym
    return out


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--task", default="Basic-v1")
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--num-envs", type=int, default=16)
    ap.add_argument("--json", default=None, help="write the results here")
    ap.add_argument("--quick", action="store_true", help="1 s per measurement (a smoke run)")
    args = ap.parse_args(argv)
    if args.quick:
        args.seconds = 1.0
    load_before = os.getloadavg()
    t_start = time.time()
    timing = seconds_timing(args.seconds)
    runs = measure_rounds(contenders(args.task, args.num_envs), timing, timeout=args.seconds * 20 + 180)
    # call_us: the mean time per call (an async call often returns at once: its median says little)
    results = {
        name: {"sps": r[0]["steps_per_s"], "call_us": r[0]["steps_per_call"] / r[0]["steps_per_s"] * 1e6}
        for name, r in runs.items()
    }
    print(
        f"\n{args.task}, {os.cpu_count()} cores, one run x {args.seconds:.0f} s, load average before "
        f"{load_before[0]:.2f}, after {os.getloadavg()[0]:.2f} (wall {time.time() - t_start:.0f} s)"
    )
    print(f"{'contender':52s} {'steps/s':>9s} {'frames/s':>9s} {'us/call':>8s}")
    for name, res in results.items():
        print(f"{name:52s} {res['sps']:9.0f} {4 * res['sps']:9.0f} {res['call_us']:8.0f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"task": args.task, "load_before": load_before, "results": results}, f, indent=1)
    return 0
