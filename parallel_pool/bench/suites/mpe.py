"""MPE throughput, side by side in one run: ParallelPool's C++ MPE (sync, and async with batch num_envs / 2) against
mpe2's Python env (the package the C++ port is aligned with) in gymnasium's AsyncVectorEnv (the env's agents as one
gymnasium.Env, a process per env) and in SuperSuit's vector env (pettingzoo_env_to_vec_env_v1 + concat_vec_envs_v1:
the agents as rows, on a process per core); 8 and 64 envs, random actions for every agent.

    parallel-pool bench --case mpe                               # MPE/simple_spread-v3, 4 s per measurement
    parallel-pool bench --case mpe --task MPE/simple-v3 --num-envs 8
    parallel-pool bench --case mpe --quick                       # 0.5 s per measurement (a smoke run)

Env steps/s are counted the same way for all: one step of one env (all its agents acting) is one step; agent
steps/s are that times the agent count. Each measurement runs in a fresh worker process
(parallel_pool.bench.measure), contenders alternating, the best of `repeats` reported, with memory per env (the
measuring process and its children, divided by num_envs). The last column: our sync pool over the faster of the two
mpe2 vectorizers at the same num_envs.
"""

from __future__ import annotations

import argparse
import os

from parallel_pool.bench.measure import measure_rounds
from parallel_pool.bench.suites.atari import have


def contenders(task: str, n: int) -> dict[str, dict]:
    """{name: case} at n envs: our pool sync and async (batch n / 2), mpe2 in AsyncVectorEnv and in SuperSuit."""
    b = max(n // 2, 1)
    pool = {"task": task, "runner": "parallel_pool", "num_envs": n, "num_threads": 0}
    out = {
        f"ParallelPool sync {n} envs": dict(pool, mode="sync", batch_size=n),
        f"ParallelPool async {n} envs, batch {b}": dict(pool, mode="async", batch_size=b),
    }
    if have("mpe2"):
        peer = {"task": task, "peer": "mpe2", "mode": "sync", "num_envs": n, "batch_size": n, "num_threads": 0}
        out[f"mpe2 AsyncVectorEnv {n} envs"] = dict(peer, runner="gym_async")
        if have("supersuit"):
            out[f"mpe2 SuperSuit {n} envs"] = dict(peer, runner="supersuit")
    return out


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--task", default="MPE/simple_spread-v3")
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--repeats", type=int, default=2, help="alternating rounds; the best is reported")
    ap.add_argument("--num-envs", type=int, nargs="+", default=[8, 64])
    ap.add_argument("--quick", action="store_true", help="0.5 s per measurement, 1 round (a smoke run)")
    args = ap.parse_args(argv)
    if args.quick:
        args.seconds, args.repeats = 0.5, 1
    import parallel_pool

    agents = parallel_pool.make_spec(args.task).max_num_players
    timing = {"warmup": min(0.5, args.seconds / 4), "duration": args.seconds, "repeats": 1}
    load0 = os.getloadavg()
    print(f"{args.task} ({agents} agents), {len(os.sched_getaffinity(0))} cores, load average before {load0[0]:.2f}")
    print(f"{'contender':44s} {'env steps/s':>12s} {'agent steps/s':>14s} {'MiB/env':>8s} {'ours sync / mpe2':>17s}")
    for n in args.num_envs:
        runs = measure_rounds(contenders(args.task, n), timing, args.repeats)
        sps = {name: max(r["steps_per_s"] for r in rs) for name, rs in runs.items()}
        theirs = [v for name, v in sps.items() if name.startswith("mpe2")]
        ours = next(v for name, v in sps.items() if name.startswith("ParallelPool sync"))
        for name, rs in runs.items():
            mem = max(r["mem_per_env_bytes"] for r in rs) / 2**20
            ratio = f"{ours / max(theirs):16.1f}x" if theirs and name.startswith("ParallelPool sync") else ""
            print(f"{name:44s} {sps[name]:12.0f} {sps[name] * agents:14.0f} {mem:8.2f} {ratio:>17s}")
    print(f"load average after {os.getloadavg()[0]:.2f}")
    return 0
