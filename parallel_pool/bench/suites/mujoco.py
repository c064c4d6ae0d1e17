"""ParallelPool vs EnvPool on MuJoCo gym tasks, side by side in one run.

    parallel-pool bench --case mujoco [--tasks Ant-v5 HalfCheetah-v5] [--steps 3000] [--repeats 3] [--quick]

Modes (steps/s = env steps per second, all envs together):
  sync1   num_envs=1, step() in a loop
  async   num_envs=16, batch_size=8, recv()/send() in a loop (EnvPool's async pattern)
  syncN   num_envs=8 (batch_size=8), step() in a loop
Runs alternate between the two libraries and the best of `repeats` is reported, because the machine may be
shared; the load average before and after is printed with the table. The process CPU time per env step (all
threads, including spinning) is printed too: it is less sensitive to other load than wall-clock throughput.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np


def make(lib: str, task: str, **kw):
    if lib == "parallel_pool":
        import parallel_pool

        return parallel_pool.make(task, env_type="gymnasium", **kw)
    import envpool

    return envpool.make_gymnasium(task, **kw)


def bench_sync(lib, task, num_envs, steps, seed=0):
    env = make(lib, task, num_envs=num_envs, seed=seed)
    nu = env.action_space.shape[-1]
    acts = np.random.default_rng(seed).uniform(-1, 1, (64, num_envs, nu))
    env.reset()
    for i in range(20):
        env.step(acts[i % 64])
    n = max(1, steps // num_envs)
    c0, t0 = time.process_time(), time.perf_counter()
    for i in range(n):
        env.step(acts[i % 64])
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    env.close()
    return n * num_envs / dt, cpu / (n * num_envs) * 1e6


def bench_async(lib, task, num_envs, batch_size, steps, seed=0):
    env = make(lib, task, num_envs=num_envs, batch_size=batch_size, seed=seed)
    nu = env.action_space.shape[-1]
    acts = np.random.default_rng(seed).uniform(-1, 1, (64, batch_size, nu))
    env.async_reset()
    for i in range(20):
        info = env.recv()[-1]
        env.send(acts[i % 64], info["env_id"])
    n = max(1, steps // batch_size)
    c0, t0 = time.process_time(), time.perf_counter()
    for i in range(n):
        info = env.recv()[-1]
        env.send(acts[i % 64], info["env_id"])
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    env.close()
    return n * batch_size / dt, cpu / (n * batch_size) * 1e6


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", nargs="+", default=["Ant-v5", "HalfCheetah-v5"])
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--modes", nargs="+", default=["sync1", "async", "syncN"])
    ap.add_argument("--quick", action="store_true", help="Ant-v5 only, 50 steps, 1 repeat (a smoke run)")
    args = ap.parse_args(argv)
    if args.quick:
        args.tasks, args.steps, args.repeats = ["Ant-v5"], 50, 1
    libs = ["parallel_pool"]
    try:
        import envpool  # noqa: F401

        libs.append("envpool")
    except ImportError:
        print("envpool not installed: ParallelPool only")
    load0 = os.getloadavg()
    rows = []
    for task in args.tasks:
        for mode in args.modes:
            best = {lib: 0.0 for lib in libs}
            cpu = {lib: float("inf") for lib in libs}
            for _ in range(args.repeats):
                for lib in libs:
                    if mode == "sync1":
                        r, c = bench_sync(lib, task, 1, args.steps)
                    elif mode == "syncN":
                        r, c = bench_sync(lib, task, 8, args.steps * 2)
                    else:
                        r, c = bench_async(lib, task, 16, 8, args.steps * 2)
                    best[lib] = max(best[lib], r)
                    cpu[lib] = min(cpu[lib], c)
            rows.append((task, mode, best))
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
        f"{args.repeats} alternating runs; cpu = process CPU time (all threads) per env step, lowest run"
    )
    return 0
