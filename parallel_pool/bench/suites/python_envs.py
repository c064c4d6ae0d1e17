"""Envs written in Python: ParallelPool's worker processes (parallel_pool.process_engine) against gymnasium's
AsyncVectorEnv(shared_memory=True), side by side in one run.

    parallel-pool bench --case python-envs [--sizes 8 64] [--seconds 2] [--repeats 2] [--quick]

Rows (steps/s = env steps per second, all envs together; each measurement in its own worker process, contenders
alternating, the best of `repeats`):
- LunarLander-v3 and MiniGrid-DoorKey-8x8-v0 (its image alone, and as users make it: a Dict with the mission's
  Text) at each size: ours sync (step of every env), ours async (batch_size = num_envs / 2, whichever envs finish
  first), gymnasium AsyncVectorEnv (one process per env, every env per step; shared memory, but for the Text
  mission, which it can only pickle).
- a pure-Python env spinning 1 ms per step, 4 x cores envs: ours sync against cores x the rate of one env stepped in
  a plain loop (the physical limit).
- the process round trip: 1 env that does nothing, µs per step, ours and AsyncVectorEnv, beside the C++ engine's
  1-env CartPole step.
- memory per env: the measuring process and its children (the workers), divided by num_envs.
PufferLib 3.0's Multiprocessing vector is not among them: pufferlib==3.0.0 does not install here (its build
downloads a file from outside the package index).
"""

from __future__ import annotations

import argparse
import os

from parallel_pool.bench.measure import measure_rounds
from parallel_pool.bench.peers import PICKLED_OBS, PYTHON_ENVS


def _case(env_fn: str, runner: str, num_envs: int, batch_size: int) -> dict:
    mode = "sync" if batch_size == num_envs else "async"
    return {
        "task": env_fn,
        "env_fn": env_fn,
        "runner": runner,
        "mode": mode,
        "num_envs": num_envs,
        "batch_size": batch_size,
        "num_threads": 0,
    }


def _best(runs: dict[str, list[dict]], key: str = "steps_per_s") -> dict[str, float]:
    return {name: max(r[key] for r in rs) for name, rs in runs.items()}


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="+", type=int, default=[8, 64])
    ap.add_argument("--seconds", type=float, default=2.0, help="timed seconds per measurement")
    ap.add_argument("--repeats", type=int, default=2, help="alternating rounds; the best is reported")
    ap.add_argument("--quick", action="store_true", help="size 4, 0.1 s, 1 round (a smoke run)")
    args = ap.parse_args(argv)
    if args.quick:
        args.sizes, args.seconds, args.repeats = [4], 0.1, 1
    timing = {"warmup": min(0.5, args.seconds / 4), "duration": args.seconds, "repeats": 1}
    cores = len(os.sched_getaffinity(0))
    load0 = os.getloadavg()

    for env_fn in ("lunar", "minigrid", "minigrid-mission"):
        for n in args.sizes:
            gym = "AsyncVectorEnv" + (" (no shm)" if env_fn in PICKLED_OBS else "")
            contenders = {
                "ours sync": _case(env_fn, "parallel_pool", n, n),
                "ours async": _case(env_fn, "parallel_pool", n, max(1, n // 2)),
                gym: _case(env_fn, "gym_async", n, n),
            }
            runs = measure_rounds(contenders, timing, args.repeats)
            best, mem = _best(runs), _best(runs, "mem_per_env_bytes")
            gym_rate = best[gym]
            print(
                f"{PYTHON_ENVS[env_fn][1]:58s} {n:3d} envs  "
                + "  ".join(f"{k} {v:8.0f}/s ({v / gym_rate:4.2f}x)" for k, v in best.items())
                + "  MiB/env "
                + " ".join(f"{mem[k] / 2**20:.1f}" for k in ("ours sync", gym)),
                flush=True,
            )

    n = 1 if args.quick else 4 * cores
    runs = measure_rounds(
        {"ours": _case("spin", "parallel_pool", n, n), "one env": _case("spin", "for_loop", 1, 1)}, timing, args.repeats
    )
    best = _best(runs)
    print(
        f"{PYTHON_ENVS['spin'][1]}: ours {best['ours']:.0f}/s with {n} envs = "
        f"{best['ours'] / (cores * best['one env']):.2f} of cores x one env ({cores} x {best['one env']:.0f}/s)"
    )

    trip = {
        "ours (process engine)": _case("null", "parallel_pool", 1, 1),
        "AsyncVectorEnv": _case("null", "gym_async", 1, 1),
        "ours C++ CartPole-v1": {
            "task": "CartPole-v1",
            "runner": "parallel_pool",
            "mode": "sync",
            "num_envs": 1,
            "batch_size": 1,
            "num_threads": 0,
        },
    }
    best = _best(measure_rounds(trip, timing, args.repeats))
    print("round trip, 1 env: " + "  ".join(f"{k} {1e6 / v:.1f} us/step" for k, v in best.items()))
    load1 = os.getloadavg()
    print(f"\ncores: {cores}, load average (1 min) before {load0[0]:.2f}, after {load1[0]:.2f}")
    return 0
