"""ParallelPool vs EnvPool on MuJoCo gym tasks, side by side in one run.

    parallel-pool bench --case mujoco [--tasks Ant-v5 HalfCheetah-v5] [--steps 3000] [--repeats 3] [--quick]

Modes (steps/s = env steps per second, all envs together):
  sync1   num_envs=1, step() in a loop (`--steps` calls)
  async   num_envs=16, batch_size=8, recv()/send() in a loop (EnvPool's async pattern; 2 x `--steps` env steps)
  syncN   num_envs=8 (batch_size=8), step() in a loop (2 x `--steps` env steps)
Each measurement runs in its own worker process (parallel_pool.bench.measure); runs alternate between the two
libraries and the best of `repeats` is reported, because the machine may be shared; the load average before and
after is printed with the table. The CPU time per env step (all threads, including spinning) is printed too: it is
less sensitive to other load than wall-clock throughput.
"""

from __future__ import annotations

import argparse
import importlib.util
import os

from parallel_pool.bench.measure import measure_rounds

# mode -> (num_envs, batch_size, env steps per measurement as a multiple of --steps)
MODES = {"sync1": (1, 1, 1), "async": (16, 8, 2), "syncN": (8, 8, 2)}


def pool_case(lib: str, task: str, num_envs: int, batch_size: int) -> dict:
    """A pool contender of the MuJoCo and DMC cases (num_threads 0: the pool's default, min(batch, cores))."""
    mode = "sync" if batch_size == num_envs else "async"
    return {"task": task, "runner": lib, "mode": mode, "num_envs": num_envs, "batch_size": batch_size, "num_threads": 0}


def libraries() -> list[str]:
    if importlib.util.find_spec("envpool") is None:
        print("envpool not installed: ParallelPool only")
        return ["parallel_pool"]
    return ["parallel_pool", "envpool"]


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", nargs="+", default=["Ant-v5", "HalfCheetah-v5"])
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES))
    ap.add_argument("--quick", action="store_true", help="Ant-v5 only, 50 steps, 1 repeat (a smoke run)")
    args = ap.parse_args(argv)
    if args.quick:
        args.tasks, args.steps, args.repeats = ["Ant-v5"], 50, 1
    libs = libraries()
    load0 = os.getloadavg()
    for task in args.tasks:
        for mode in args.modes:
            n, b, factor = MODES[mode]
            timing = {"warmup": 0.05, "calls": max(1, args.steps * factor // b), "repeats": 1}
            runs = measure_rounds({lib: pool_case(lib, task, n, b) for lib in libs}, timing, args.repeats)
            best = {lib: max(r["steps_per_s"] for r in runs[lib]) for lib in libs}
            # CPU time per env step: cores busy / steps per second, the lowest run
            cpu = {lib: min(r["cpu_cores_used"] / r["steps_per_s"] * 1e6 for r in runs[lib]) for lib in libs}
            ratio = best["parallel_pool"] / best["envpool"] if "envpool" in best else float("nan")
            print(
                f"{task:16s} {mode:6s} "
                + "  ".join(f"{lib} {best[lib]:7.0f}/s (cpu {cpu[lib]:5.0f} us/step)" for lib in libs)
                + f"  ratio {ratio:.2f}x",
                flush=True,
            )
    load1 = os.getloadavg()
    print(
        f"\ncores: {os.cpu_count()}, load average (1/5/15 min) before {load0[0]:.2f}/{load0[1]:.2f}/{load0[2]:.2f}, "
        f"after {load1[0]:.2f}/{load1[1]:.2f}/{load1[2]:.2f}"
    )
    print(
        "modes: sync1 = 1 env step(); async = 16 envs, batch 8, recv/send; syncN = 8 envs step(); best of "
        f"{args.repeats} alternating runs; cpu = CPU time (all threads) per env step, lowest run"
    )
    return 0
