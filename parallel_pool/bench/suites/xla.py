"""env.xla() throughput, side by side in one run, on the same task and config:

  pp-python   ParallelPool, plain Python loop on the pool (sync: send + recv; async: recv, then send to those ids)
  pp-py-step  ParallelPool, plain Python loop of env.step(action) (sync only: one engine call per step)
  pp-xla      ParallelPool, one jitted lax.scan over `step` (sync) or recv/send (async)
  ep-xla      EnvPool 1.2.5's xla(), the same jitted scan (if envpool is installed)
  ep-python   EnvPool, the plain Python loop (reference)

Each loop runs `--iters` batches; the figure is the best of `--repeats` interleaved repeats (steps/s = env steps,
i.e. batches x batch_size). Compilation is excluded (one warm-up call per loop).

    parallel-pool bench --case xla [--task CartPole-v1] [--configs 8:8,64:64,16:8] [--iters 20000] [--quick]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np


def python_loop(env, iters: int, n: int, bs: int, async_: bool):
    act = np.zeros(bs if async_ else n, np.int32)
    if async_:
        env.async_reset()
        t0 = time.perf_counter()
        for _ in range(iters):
            info = env.recv()[-1]
            env.send(act, info["env_id"])
        dt = time.perf_counter() - t0
        for _ in range(n // bs):  # drain what is still in flight so the next loop starts clean
            env.recv()
        return dt
    env.reset()
    t0 = time.perf_counter()
    for _ in range(iters):
        env.send(act)
        env.recv()
    return time.perf_counter() - t0


def python_step_loop(env, iters: int, n: int):
    act = np.zeros(n, np.int32)
    env.reset()
    t0 = time.perf_counter()
    for _ in range(iters):
        env.step(act)
    return time.perf_counter() - t0


def make_xla_loop(env, iters: int, n: int, bs: int, async_: bool):
    import jax
    import jax.numpy as jnp

    handle, recv, send, step = env.xla()
    act = jnp.zeros(bs if async_ else n, jnp.int32)

    if async_:

        @jax.jit
        def run(h):
            def body(h, _):
                h, s = recv(h)
                h = send(h, act, s[-1]["env_id"])
                return h, None

            h, _ = jax.lax.scan(body, h, None, length=iters)
            return h
    else:

        @jax.jit
        def run(h):
            def body(h, _):
                h, _s = step(h, act)
                return h, None

            h, _ = jax.lax.scan(body, h, None, length=iters)
            return h

    state = {"h": handle}

    def go():
        if async_:
            env.async_reset()
        else:
            env.reset()
        t0 = time.perf_counter()
        state["h"] = jax.block_until_ready(run(state["h"]))
        dt = time.perf_counter() - t0
        if async_:
            for _ in range(n // bs):  # drain what is still in flight
                env.recv()
        return dt

    go()  # compile + warm up
    return go


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

    import parallel_pool

    try:
        import envpool
    except ImportError:
        envpool = None

    print(
        f"task {args.task}, {args.iters} batches per loop, best of {args.repeats}; cores {os.cpu_count()}; "
        f"load {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}"
    )
    header = f"{'num_envs:batch':>14} {'system':>10} {'steps/s':>12} {'us/batch':>9} {'vs pp-python':>12}"
    print(header)
    for cfg in args.configs.split(","):
        n, bs = (int(x) for x in cfg.split(":"))
        async_ = bs < n
        if n % bs:
            raise SystemExit(f"num_envs must be a multiple of batch_size, got {cfg}")
        kw = dict(num_envs=n, batch_size=bs, num_threads=args.num_threads, seed=0)
        runners = {}
        pp_env = parallel_pool.make(args.task, env_type="gymnasium", **kw)
        runners["pp-python"] = lambda e=pp_env, n=n, bs=bs, a=async_: python_loop(e, args.iters, n, bs, a)
        if not async_:
            runners["pp-py-step"] = lambda e=pp_env, n=n: python_step_loop(e, args.iters, n)
        runners["pp-xla"] = make_xla_loop(pp_env, args.iters, n, bs, async_)
        if envpool is not None:
            ep_env = envpool.make(args.task, env_type="gymnasium", **kw)
            runners["ep-xla"] = make_xla_loop(ep_env, args.iters, n, bs, async_)
            ep_py = envpool.make(args.task, env_type="gymnasium", **kw)
            runners["ep-python"] = lambda e=ep_py, n=n, bs=bs, a=async_: python_loop(e, args.iters, n, bs, a)
        best = {k: float("inf") for k in runners}
        for _ in range(args.repeats):
            for k, f in runners.items():
                best[k] = min(best[k], f())
        base = best["pp-python"]
        for k, t in best.items():
            sps = args.iters * bs / t
            print(f"{cfg:>14} {k:>10} {sps:12,.0f} {t / args.iters * 1e6:9.2f} {base / t:11.2f}x")
    print(f"load after: {os.getloadavg()[0]:.2f}")
    return 0
