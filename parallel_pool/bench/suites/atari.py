"""Atari throughput, side by side in one run: ParallelPool, EnvPool, ale_py's AtariVectorEnv, gymnasium's
AsyncVectorEnv, and the physical limit (cores x the single-env raw emulation speed of ale_py's ALEInterface).

    parallel-pool bench --case atari                 # Pong-v5, 8 s per measurement, 3 rounds
    parallel-pool bench --case atari --seconds 4 --rounds 1 --png bench_out/atari.png
    parallel-pool bench --case atari --quick         # 0.2 s per measurement, 1 round (a smoke run)

Every measurement runs in a fresh subprocess for `--seconds`, round-robin over `--rounds` rounds (so a burst of
load from elsewhere hits every contender alike); the table reports the median and the best round. All contenders
use EnvPool's Atari preprocessing (frame skip 4 with max-pool, 84x84 grayscale, stack 4, no-op starts) and random
actions. RSS per env: resident memory added by creating, resetting and stepping 16 envs, divided by 16.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import time

from parallel_pool.bench.measure import measure_rounds, seconds_timing


def have(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def contenders(task: str, cores: int) -> dict[str, dict]:
    """{name: case} of every contender this machine can run (runners.build makes each)."""

    def case(runner: str, n: int, batch: int | None = None, threads: int = 0) -> dict:
        b = n if batch is None else batch
        mode = "sync" if b == n else "async"
        return {"task": task, "runner": runner, "mode": mode, "num_envs": n, "batch_size": b, "num_threads": threads}

    out = {RAW: case("ale_raw", 1)}
    out["ParallelPool 1 env"] = case("parallel_pool", 1)
    out["ParallelPool sync 8 envs"] = case("parallel_pool", 8)
    out[OURS] = case("parallel_pool", 16, 8)
    if have("envpool"):
        out["EnvPool 1 env"] = case("envpool", 1)
        out["EnvPool sync 8 envs"] = case("envpool", 8)
        out["EnvPool async 16 envs, batch 8"] = case("envpool", 16, 8)
        out[f"EnvPool async 16/8, num_threads={cores}"] = case("envpool", 16, 8, cores)
    if have("ale_py"):
        out["ale_py AtariVectorEnv 8 envs"] = case("ale_vector", 8)
        out["ale_py AtariVectorEnv async 16, batch 8"] = case("ale_vector", 16, 8)
        out["gymnasium AsyncVectorEnv 8 envs"] = case("gym_async", 8)
    return out


RAW = "ALEInterface, 1 env (raw emulation)"
OURS = "ParallelPool async 16 envs, batch 8"


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--task", default="Pong-v5")
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", default=None, help="write the results here")
    ap.add_argument("--png", default=None, help="write a bar plot here (needs matplotlib)")
    ap.add_argument(
        "--only",
        default=None,
        help="comma-separated substrings: measure only matching contenders (raw emulation always)",
    )
    ap.add_argument("--quick", action="store_true", help="0.2 s per measurement, 1 round (a smoke run)")
    args = ap.parse_args(argv)
    if args.quick:
        args.seconds, args.rounds = 0.2, 1
    cores = os.cpu_count() or 1
    named = contenders(args.task, cores)
    if args.only:
        keys = [k.strip() for k in args.only.split(",")]
        named = {name: c for name, c in named.items() if name == RAW or any(k in name for k in keys)}
    timing = seconds_timing(args.seconds)

    def show(name: str, r: int, res: dict) -> None:
        print(f"  round {r + 1}: {name:45s} {res['steps_per_s']:9.0f} steps/s", flush=True)

    load_before = os.getloadavg()
    t_start = time.time()
    results = measure_rounds(named, timing, args.rounds, timeout=args.seconds * 20 + 180, progress=show)
    # memory: resident memory added by creating, resetting and stepping the pool's 16 envs (the async case), per env
    rss = {
        lib: statistics.median(x["mem_per_env_bytes"] for x in results[name]) / 2**20
        for lib, name in (("pp", OURS), ("envpool", "EnvPool async 16 envs, batch 8"))
        if name in results
    }
    load_after = os.getloadavg()

    med = {name: statistics.median(x["steps_per_s"] for x in v) for name, v in results.items()}
    best = {name: max(x["steps_per_s"] for x in v) for name, v in results.items()}
    # mean time per call (a call of an async pool often returns at once: its median says little)
    call = {
        name: statistics.median(x["steps_per_call"] / x["steps_per_s"] * 1e6 for x in v) for name, v in results.items()
    }
    # load-robust view: steps per CPU-second (all threads and child processes) and cores kept busy
    per_cpu = {
        name: statistics.median(x["steps_per_s"] / max(x["cpu_cores_used"], 1e-9) for x in v)
        for name, v in results.items()
    }
    busy = {name: statistics.median(x["cpu_cores_used"] for x in v) for name, v in results.items()}
    raw_name = RAW
    print(
        f"\n{args.task}, {cores} cores, {args.rounds} rounds x {args.seconds:.0f} s, "
        f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} "
        f"(wall {time.time() - t_start:.0f} s)"
    )
    print(
        f"{'contender':47s} {'steps/s med':>11s} {'best':>9s} {'frames/s':>9s} {'us/call':>8s} "
        f"{'steps/CPU-s':>11s} {'vs raw':>6s} {'cores busy':>10s}"
    )
    for name in results:
        print(
            f"{name:47s} {med[name]:11.0f} {best[name]:9.0f} {4 * med[name]:9.0f} {call[name]:8.0f} "
            f"{per_cpu[name]:11.0f} {per_cpu[name] / per_cpu[raw_name]:6.2f} {busy[name]:10.2f}"
        )
    limit = cores * med[raw_name]
    ours = med.get(OURS, float("nan"))
    print(f"\nphysical limit (cores x raw): {limit:.0f} steps/s")
    ratios = {"ParallelPool async / physical limit (target >= 0.9)": ours / limit}
    pairs = [
        ("EnvPool async 16 envs, batch 8", "ParallelPool async / EnvPool async (target >= 1.1)"),
        ("ale_py AtariVectorEnv 8 envs", "ParallelPool async / AtariVectorEnv 8 envs (target >= 1.3)"),
        ("ale_py AtariVectorEnv async 16, batch 8", "ParallelPool async / AtariVectorEnv async"),
        ("gymnasium AsyncVectorEnv 8 envs", "ParallelPool async / gymnasium AsyncVectorEnv (target >= 3)"),
        ("EnvPool 1 env", "ParallelPool 1 env / EnvPool 1 env"),
    ]
    for other, label in pairs:
        if other in med:
            num = med.get("ParallelPool 1 env", float("nan")) if label.startswith("ParallelPool 1 env") else ours
            ratios[label] = num / med[other]
    for label, v in ratios.items():
        print(f"  {label:62s} {v:6.2f}")
    for kind, v in rss.items():
        print(f"  RSS per env, {kind:8s} {v:6.2f} MiB")

    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(
                {
                    "task": args.task,
                    "cores": cores,
                    "load_before": load_before,
                    "load_after": load_after,
                    "results": results,
                    "median_sps": med,
                    "steps_per_cpu_s": per_cpu,
                    "ratios": ratios,
                    "rss_per_env_mb": rss,
                },
                f,
                indent=1,
            )
    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        names = list(med)
        fig, ax = plt.subplots(figsize=(9, 0.45 * len(names) + 1.5))
        ax.barh(names, [med[n] for n in names], color=["C2" if "ParallelPool" in n else "C0" for n in names])
        ax.axvline(limit, color="k", ls="--", label="physical limit (cores x raw)")
        ax.set_xlabel(f"{args.task} steps/s (median of {args.rounds})")
        ax.invert_yaxis()
        ax.legend()
        fig.tight_layout()
        os.makedirs(os.path.dirname(os.path.abspath(args.png)), exist_ok=True)
        fig.savefig(args.png, dpi=100)
    return 0
