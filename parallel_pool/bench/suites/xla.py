"""env.xla() throughput, side by side in one run, on the same task and config:

  pp-python   ParallelPool, plain Python loop on the pool (sync: send + recv; async: recv, then send to those ids)
  pp-py-step  ParallelPool, plain Python loop of env.step(action) (sync only: one engine call per step)
  pp-xla      ParallelPool, one jitted lax.scan over `step` (sync) or recv/send (async)
  ep-xla      EnvPool 1.2.5's xla(), the same jitted scan (if envpool is installed)
  ep-python   EnvPool, the plain Python loop (reference)

Each loop runs `--iters` batches in its own worker process (parallel_pool.bench.measure); the figure is the
best of `--repeats` interleaved repeats (steps/s = env steps,
i.e. batches x batch_size). Compilation is excluded (one warm-up call per loop).

    parallel-pool bench --case xla [--task CartPole-v1] [--configs 8:8,64:64,16:8] [--iters 20000] [--quick]
"""

from __future__ import annotations

import argparse
import importlib.util
import os

from parallel_pool.bench.measure import measure_rounds


def contenders(task: str, n: int, bs: int, threads: int, iters: int) -> dict[str, dict]:
    """{system: case} for one num_envs:batch_size config (async when bs < n)."""
    mode = "async" if bs < n else "sync"
    base = {"task": task, "mode": mode, "num_envs": n, "batch_size": bs, "num_threads": threads}
    pp = dict(base, runner="parallel_pool")
    out = {"pp-python": dict(pp, call="send_recv") if mode == "sync" else pp}
    if mode == "sync":
        out["pp-py-step"] = dict(pp, call="step")
    out["pp-xla"] = dict(pp, call="xla", scan=iters)
    if importlib.util.find_spec("envpool") is not None:
        ep = dict(base, runner="envpool")
        out["ep-xla"] = dict(ep, call="xla", scan=iters)
        out["ep-python"] = dict(ep, call="send_recv") if mode == "sync" else ep
    return out


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    p = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--task", default="CartPole-v1")
    p.add_argument("--configs", default="8:8,64:64,16:8,64:16", help="num_envs:batch_size list")
    p.add_argument("--iters", type=int, default=20000, help="batches per timed loop")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--num-threads", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="configs 8:8,16:8, 200 batches, 1 repeat (a smoke run)")
    args = p.parse_args(argv)
    if args.quick:
        args.configs, args.iters, args.repeats = "8:8,16:8", 200, 1
    configs = []
    for cfg in args.configs.split(","):
        n, bs = (int(x) for x in cfg.split(":"))
        if n % bs:
            raise SystemExit(f"num_envs must be a multiple of batch_size, got {cfg}")
        configs.append((cfg, n, bs))
    print(
        f"task {args.task}, {args.iters} batches per loop, best of {args.repeats}; cores {os.cpu_count()}; "
        f"load {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}"
    )
    header = f"{'num_envs:batch':>14} {'system':>10} {'steps/s':>12} {'us/batch':>9} {'vs pp-python':>12}"
    print(header)
    for cfg, n, bs in configs:
        named = contenders(args.task, n, bs, args.num_threads, args.iters)
        # the Python loops make --iters calls of one batch; the jitted loops one call of --iters batches
        python = {k: c for k, c in named.items() if c.get("call") != "xla"}
        jitted = {k: c for k, c in named.items() if c.get("call") == "xla"}
        runs = measure_rounds(python, {"warmup": 0.05, "calls": args.iters, "repeats": 1}, args.repeats)
        # the jitted loop's warm-up call compiles it (compilation is not timed)
        runs.update(measure_rounds(jitted, {"warmup": 0.0, "calls": 1, "repeats": 1}, args.repeats))
        best = {k: max(r["steps_per_s"] for r in runs[k]) for k in named}
        base = best["pp-python"]
        for k, sps in best.items():
            t = args.iters * bs / sps
            print(f"{cfg:>14} {k:>10} {sps:12,.0f} {t / args.iters * 1e6:9.2f} {sps / base:11.2f}x")
    print(f"load after: {os.getloadavg()[0]:.2f}")
    return 0
