"""Throughput under contention: ParallelPool's async throughput vs EnvPool's while other work shares the cores.

    parallel-pool bench --case contention [--tasks Ant-v5,HalfCheetah-v5,Pong-v5] [--loads quiet,spin1,...]

A machine running other work is the normal case (a learner on the same cores). Each load shape is started in
separate processes, then ParallelPool and EnvPool are measured alternately under it (the order flips every
repeat, one pool alive at a time, so neither sees the other's threads), and the median over repeats is reported:

  quiet   no load
  spinN   N processes each spinning one CPU (a pure-Python busy loop)
  torch   one process training an MLP with torch on all cores (a learner next to the env pool)

Engines run async: num_envs = 4 x cores (at least 16; --num-envs), batch_size = num_envs / 2, num_threads = cores.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from parallel_pool.bench.cases import available_cores
from parallel_pool.bench.measure import run_isolated, worker_env
from parallel_pool.bench.report import loaded_markdown

TASKS = ("Ant-v5", "HalfCheetah-v5", "Pong-v5")
LOADS = ("quiet", "spin1", "spin2", "spin4", "torch")


def default_loads() -> list[str]:
    """Every load shape; "torch" only where torch is installed."""
    import importlib.util

    return [x for x in LOADS if x != "torch" or importlib.util.find_spec("torch") is not None]


def load_commands(load: str, cores: int) -> list[list[str]]:
    """The processes of a load shape (empty for "quiet")."""
    if load == "quiet":
        return []
    gen = [sys.executable, "-m", "parallel_pool.bench.load"]
    if load.startswith("spin") and load[4:].isdigit():
        return [gen + ["spin"] for _ in range(int(load[4:]))]
    if load == "torch":
        return [gen + ["torch", "--threads", str(cores)]]
    raise ValueError(f"unknown load {load!r}; choose quiet, spinN (N processes) or torch")


@contextmanager
def running(load: str, cores: int) -> Iterator[None]:
    """Start the load's processes, wait until each runs, stop them afterwards."""
    # an empty working directory, as for the measuring workers (measure.run_isolated): `-m` puts the cwd first on
    # sys.path, and from a clone's root the source folder (no compiled extension) would shadow the package
    cwd = tempfile.mkdtemp(prefix="pp-load-")
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=worker_env(), cwd=cwd)
        for cmd in load_commands(load, cores)
    ]
    try:
        for p, cmd in zip(procs, load_commands(load, cores)):
            # torch's load says "ready" once torch is imported and the model built
            if "torch" in cmd and p.stdout is not None and p.stdout.readline().strip() != "ready":
                raise RuntimeError(f"the {load!r} load did not start (is torch installed?)")
        time.sleep(0.2)  # let the spinners reach their steady state
        yield
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()
        shutil.rmtree(cwd, ignore_errors=True)


def async_rate(runner: str, task: str, num_envs: int, batch: int, threads: int, seconds: float) -> float:
    """Async env steps/s of one engine: a fresh pool in its own worker process, 0.3 s warm-up, then `seconds` of
    recv/send calls (the harness's one measurement)."""
    case = {"task": task, "runner": runner, "mode": "async", "num_envs": num_envs, "batch_size": batch}
    res = run_isolated(dict(case, num_threads=threads), {"warmup": 0.3, "duration": seconds, "repeats": 1}, 300.0)
    if "error" in res:
        raise RuntimeError(f"{runner} {task} under load: {res['error']}")
    return float(res["steps_per_s"])


def default_num_envs(cores: int) -> int:
    return max(16, 4 * cores)


def measure(
    tasks: list[str],
    loads: list[str],
    repeats: int = 3,
    seconds: float = 1.0,
    cores: int | None = None,
    num_envs: int | None = None,
    progress: Callable[[dict], Any] | None = None,
) -> list[dict]:
    """One row per (task, load): each engine's median async steps/s and the ratio ParallelPool / EnvPool."""
    cores = cores or available_cores()
    num_envs = num_envs or default_num_envs(cores)
    batch = num_envs // 2
    engines = ["parallel_pool", "envpool"]
    rows: list[dict] = []
    for task in tasks:
        for load in loads:
            rates: dict[str, list[float]] = {e: [] for e in engines}
            with running(load, cores):
                for i in range(repeats):
                    for e in engines if i % 2 == 0 else engines[::-1]:
                        rates[e].append(async_rate(e, task, num_envs, batch, cores, seconds))
            med = {e: statistics.median(v) for e, v in rates.items()}
            row = {
                "task": task,
                "load": load,
                "num_envs": num_envs,
                "batch_size": batch,
                "num_threads": cores,
                "parallel_pool": med["parallel_pool"],
                "envpool": med["envpool"],
                "ratio": med["parallel_pool"] / med["envpool"] if med["envpool"] else None,
                "repeats": rates,
            }
            rows.append(row)
            if progress:
                progress(row)
    return rows


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", default=",".join(TASKS))
    ap.add_argument("--loads", default=None, help=f"comma-separated, from {','.join(LOADS)} (default: all)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=1.0, help="seconds per measurement")
    ap.add_argument("--num-envs", type=int, default=None, help="envs in flight (default 4 x cores, >= 16)")
    ap.add_argument("--quick", action="store_true", help="Ant-v5, quiet and spin1, 0.1 s, 1 repeat (smoke run)")
    a = ap.parse_args(argv)
    tasks, loads = a.tasks.split(","), a.loads.split(",") if a.loads else default_loads()
    if a.quick:
        tasks, loads, a.repeats, a.seconds = ["Ant-v5"], ["quiet", "spin1"], 1, 0.1
    for load in loads:
        load_commands(load, 1)  # unknown shapes fail before anything runs
    load0 = os.getloadavg()

    def show(r: dict) -> None:
        print(
            f"{r['task']:<16} {r['load']:<6} ParallelPool {r['parallel_pool']:>10,.0f}  EnvPool {r['envpool']:>10,.0f}"
            f"  {r['ratio']:.2f}x",
            flush=True,
        )

    rows = measure(tasks, loads, a.repeats, a.seconds, num_envs=a.num_envs, progress=show)
    print()
    print("\n".join(loaded_markdown(rows)))
    print(f"load average before {load0[0]:.2f}, after {os.getloadavg()[0]:.2f}")
    return 0
