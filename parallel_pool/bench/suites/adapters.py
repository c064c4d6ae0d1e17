"""Per-step cost of the framework adapters on CartPole-v1 (8 envs, random actions), side by side with the
frameworks' own in-process vector envs over gymnasium's CartPole, in one run.

    parallel-pool bench --case adapters [--steps 20000] [--num-envs 8] [--quick]

Each row is one measurement in its own worker process (parallel_pool.bench.measure): `--steps` batched steps
after a warm-up; the figure is the mean time per batched step.
"""

from __future__ import annotations

import argparse
import importlib.util

from parallel_pool.bench.measure import measure_rounds

TASK = "CartPole-v1"


def contenders(n: int) -> dict[str, dict]:
    """{row name: case}; a framework that is not installed has no rows."""
    base = {"task": TASK, "mode": "sync", "num_envs": n, "batch_size": n, "num_threads": 0}
    out = {
        "parallel_pool gymnasium front-end (same_step)": dict(
            base, runner="parallel_pool", config={"autoreset_mode": "same_step"}
        ),
        "Translator.step (per-env records)": dict(base, runner="translator"),
    }
    if importlib.util.find_spec("stable_baselines3") is not None:
        out["SB3 ParallelPoolVecEnv.step"] = dict(base, runner="sb3")
        out["SB3 DummyVecEnv(gymnasium CartPole).step"] = dict(base, runner="sb3_dummy")
    if importlib.util.find_spec("tianshou") is not None:
        out["Tianshou ParallelPoolVectorEnv.step (+reset of done)"] = dict(base, runner="tianshou")
        out["Tianshou DummyVectorEnv(gymnasium CartPole).step (+reset)"] = dict(base, runner="tianshou_dummy")
    out["gymnasium SyncVectorEnv (same_step)"] = dict(base, runner="gym_sync", autoreset_mode="SameStep")
    return out


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    p = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=20_000)
    p.add_argument("--num-envs", type=int, default=8)
    p.add_argument("--quick", action="store_true", help="200 steps (a smoke run)")
    args = p.parse_args(argv)
    if args.quick:
        args.steps = 200
    n = args.num_envs
    runs = measure_rounds(contenders(n), {"warmup": 0.05, "calls": args.steps, "repeats": 1})
    print(f"{TASK}, {n} envs, {args.steps} steps each; microseconds per batched step")
    for name, res in runs.items():
        us = res[0]["steps_per_call"] / res[0]["steps_per_s"] * 1e6  # the mean time of one call
        print(f"  {name:60s} {us:8.1f} us")
    return 0
