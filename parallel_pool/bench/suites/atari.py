"""Atari throughput, side by side in one run: ParallelPool, EnvPool and ale_py's AtariVectorEnv (ALE's own C++
batched env) at every num_envs of the throughput table's Atari rows, each sync, async (batch = num_envs / 2) and
through its `xla()` in a jitted scan where that runs; gymnasium's AsyncVectorEnv at 8 envs; and the physical limit
(cores x the single-env raw emulation speed of ale_py's ALEInterface).

    parallel-pool bench --case atari                 # Pong-v5 at 1, 8, 64 envs, 4 s per measurement, 3 rounds
    parallel-pool bench --case atari --num-envs 8,64 --seconds 8 --rounds 1 --png bench_out/atari.png
    parallel-pool bench --case atari --quick         # 0.2 s per measurement, 1 round, 1 and 4 envs (a smoke run)

Every measurement runs in a fresh subprocess for `--seconds`, round-robin over `--rounds` rounds (so a burst of
load from elsewhere hits every contender alike); the table reports the median and the best round. All contenders
use our Pong-v5 preprocessing (EnvPool's defaults: frame skip 4 with max-pool, 84x84 grayscale, stack 4, up to 30
no-ops, fire reset, no sticky actions, no episodic life, no reward clipping; AtariVectorEnv's arguments are read
from our spec by parallel_pool.bench.peers) and random actions; the engines run on min(batch, cores) threads. A
step is one env step of 4 frames for every contender; an xla call is a jitted scan of batches worth about 256
steps. RSS per env: resident memory added by creating, resetting and stepping the largest async pool, divided by
its num_envs.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import time

from parallel_pool.bench.cases import TASKS, XLA_STEPS, available_cores, xla_available
from parallel_pool.bench.measure import measure_rounds, seconds_timing

ENGINES = {"parallel_pool": "ParallelPool", "envpool": "EnvPool", "ale_vector": "ale_py AtariVectorEnv"}


def have(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package that is missing
        return False


def label(runner: str, mode: str, n: int, b: int, call: str = "") -> str:
    """A contender's row name, e.g. 'EnvPool async 64 envs, batch 32', 'ale_py AtariVectorEnv xla sync 8 envs'."""
    size = f"{n} env{'s' if n > 1 else ''}" + (f", batch {b}" if mode == "async" else "")
    return f"{ENGINES[runner]} {'xla ' if call == 'xla' else ''}{mode} {size}"


def contenders(task: str, cores: int, sizes: list[int], xla: bool = True) -> tuple[dict[str, dict], list[str]]:
    """({name: case} of every contender this machine can run (runners.build makes each), [what is left out and
    why])."""
    out = {RAW: {"task": task, "runner": "ale_raw", "mode": "sync", "num_envs": 1, "batch_size": 1, "num_threads": 0}}
    modules = {"parallel_pool": "parallel_pool", "envpool": "envpool", "ale_vector": "ale_py.vector_env"}
    engines = [r for r, module in modules.items() if have(module)]
    left_out = []
    for r in engines:
        if xla:
            ok, why = xla_available(r)
            if not ok:
                left_out.append(f"{ENGINES[r]} xla: {why}")
    for n in sizes:
        modes = [("sync", n)] + ([("async", max(1, n // 2))] if n > 1 else [])
        for r in engines:
            calls = [""] + (["xla"] if xla and xla_available(r)[0] else [])
            for call in calls:
                for mode, b in modes:
                    c = {"task": task, "runner": r, "mode": mode, "num_envs": n, "batch_size": b}
                    c["num_threads"] = min(b, cores)
                    if call:
                        c.update(call="xla", scan=max(1, XLA_STEPS // b))
                    out[label(r, mode, n, b, call)] = c
    if have("ale_py"):
        out[GYM] = {
            "task": task,
            "runner": "gym_async",
            "mode": "sync",
            "num_envs": 8,
            "batch_size": 8,
            "num_threads": 0,
        }
    return out, left_out


RAW = "ALEInterface, 1 env (raw emulation)"
GYM = "gymnasium AsyncVectorEnv 8 envs"


def ratios(named: dict[str, dict], med: dict[str, float]) -> dict[str, float]:
    """ParallelPool over each other engine at the same num_envs, mode and call (Python loop or xla)."""
    out = {}
    ours = {
        (c["mode"], c["num_envs"], c.get("call", "")): k for k, c in named.items() if c["runner"] == "parallel_pool"
    }
    for name, c in named.items():
        if c["runner"] in ("envpool", "ale_vector") and name in med:
            mine = ours.get((c["mode"], c["num_envs"], c.get("call", "")))
            if mine in med:
                out[f"{mine} / {name}"] = med[mine] / med[name]
    return out


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--task", default="Pong-v5")
    ap.add_argument("--num-envs", default=None, help="comma-separated sizes (default: the task's throughput sizes)")
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-xla", action="store_true", help="leave out the engines' xla() contenders")
    ap.add_argument("--json", default=None, help="write the results here")
    ap.add_argument("--png", default=None, help="write a bar plot here (needs matplotlib)")
    ap.add_argument(
        "--only",
        default=None,
        help="comma-separated substrings: measure only matching contenders (raw emulation always)",
    )
    ap.add_argument("--quick", action="store_true", help="0.2 s per measurement, 1 round, 1 and 4 envs (a smoke run)")
    args = ap.parse_args(argv)
    if args.num_envs:
        sizes = [int(x) for x in args.num_envs.split(",") if x.strip()]
    else:
        sizes = [1, 4] if args.quick else list(TASKS[args.task].num_envs if args.task in TASKS else (1, 8, 64))
    if args.quick:
        args.seconds, args.rounds = 0.2, 1
    cores = available_cores()
    named, left_out = contenders(args.task, cores, sizes, xla=not args.no_xla)
    if args.only:
        keys = [k.strip() for k in args.only.split(",")]
        named = {name: c for name, c in named.items() if name == RAW or any(k in name for k in keys)}
    timing = seconds_timing(args.seconds)

    def show(name: str, r: int, res: dict) -> None:
        print(f"  round {r + 1}: {name:45s} {res['steps_per_s']:9.0f} steps/s", flush=True)

    load_before = os.getloadavg()
    t_start = time.time()
    results = measure_rounds(named, timing, args.rounds, timeout=args.seconds * 20 + 180, progress=show)
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
    # memory: resident memory added by creating, resetting and stepping each engine's largest async pool, per env
    big = max(sizes)
    rss = {}
    for r, engine in ENGINES.items():
        name = label(r, "async" if big > 1 else "sync", big, max(1, big // 2))
        if name in results:
            rss[engine] = statistics.median(x["mem_per_env_bytes"] for x in results[name]) / 2**20
    print(
        f"\n{args.task}, {cores} cores, {args.rounds} rounds x {args.seconds:.0f} s, "
        f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} "
        f"(wall {time.time() - t_start:.0f} s)"
    )
    for why in left_out:
        print(f"not measured: {why}")
    print(
        f"{'contender':47s} {'steps/s med':>11s} {'best':>9s} {'frames/s':>9s} {'us/call':>8s} "
        f"{'steps/CPU-s':>11s} {'vs raw':>6s} {'cores busy':>10s}"
    )
    for name in results:
        print(
            f"{name:47s} {med[name]:11.0f} {best[name]:9.0f} {4 * med[name]:9.0f} {call[name]:8.0f} "
            f"{per_cpu[name]:11.0f} {per_cpu[name] / per_cpu[RAW]:6.2f} {busy[name]:10.2f}"
        )
    limit = cores * med[RAW]
    print(f"\nphysical limit (cores x raw): {limit:.0f} steps/s")
    ours = label("parallel_pool", "async" if big > 1 else "sync", big, max(1, big // 2))
    targets: dict[str, float] = {}
    if ours in med:
        targets[f"{ours} / physical limit (target >= 0.9)"] = med[ours] / limit
        if GYM in med:
            targets[f"{ours} / {GYM} (target >= 3)"] = med[ours] / med[GYM]
    pairs = ratios(named, med)
    for text, v in {**targets, **pairs}.items():
        print(f"  {text:90s} {v:6.2f}")
    for engine, v in rss.items():
        print(f"  RSS per env at {big} envs, {engine:22s} {v:6.2f} MiB")

    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(
                {
                    "task": args.task,
                    "cores": cores,
                    "num_envs": sizes,
                    "not_measured": left_out,
                    "load_before": load_before,
                    "load_after": load_after,
                    "cases": named,
                    "results": results,
                    "median_sps": med,
                    "steps_per_cpu_s": per_cpu,
                    "ratios": {**targets, **pairs},
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
