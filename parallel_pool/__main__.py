"""Command line: `python -m parallel_pool demo | list | bench ...`."""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def _rate(step, actions, seconds: float) -> float:
    """Steps per second of `step(actions[i])` over about `seconds`."""
    n, i, t0 = 0, 0, time.perf_counter()
    while True:
        step(actions[i % len(actions)])
        i += 1
        if i % 64 == 0 and time.perf_counter() - t0 >= seconds:
            return i * len(actions[0]) / (time.perf_counter() - t0)


def demo(task: str = "CartPole-v1", num_envs: int = 8, seconds: float = 2.0) -> None:
    import gymnasium as gym

    import parallel_pool

    print(f"ParallelPool demo: {task}, {num_envs} envs, ~{seconds:.0f}s per measurement")
    env = parallel_pool.make(task, env_type="gymnasium", num_envs=num_envs, seed=0)
    obs, info = env.reset()
    rng = np.random.default_rng(0)
    actions = [np.stack([env.single_action_space.sample() for _ in range(num_envs)]) for _ in range(256)]
    for i in range(5):
        obs, rew, term, trunc, info = env.step(actions[i])
    print(f"  obs batch {obs.shape} {obs.dtype}; info keys {sorted(info)}")
    ours = _rate(env.step, actions, seconds)
    env.close()
    rows = [("parallel_pool (sync)", ours)]
    base = gym.make_vec(task, num_envs=num_envs, vectorization_mode="sync")
    base.reset(seed=0)
    rows.append(("gymnasium SyncVectorEnv", _rate(base.step, actions, seconds)))
    base.close()
    try:
        import envpool

        ep = envpool.make(task, env_type="gymnasium", num_envs=num_envs, seed=0)
        ep.reset()
        rows.append(("envpool (sync)", _rate(ep.step, actions, seconds)))
        ep.close()
    except Exception as e:  # envpool is optional
        rows.append((f"envpool: not available ({type(e).__name__})", float("nan")))
    del rng
    print(f"  {'runner':<42}{'steps/s':>12}{'ours / it':>12}")
    for name, rate in rows:
        print(f"  {name:<42}{rate:>12,.0f}{ours / rate:>11.2f}x")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "bench":  # argparse's REMAINDER drops leading options (--quick), so hand over directly
        from parallel_pool.bench import main as bench_main

        return bench_main(argv[1:])
    p = argparse.ArgumentParser(prog="python -m parallel_pool")
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("demo", help="make a pool, step it, print throughput against gymnasium (and EnvPool)")
    d.add_argument("--task", default="CartPole-v1")
    d.add_argument("--num-envs", type=int, default=8)
    d.add_argument("--seconds", type=float, default=2.0)
    sub.add_parser("list", help="list all task ids")
    b = sub.add_parser("bench", help="benchmark against EnvPool and gymnasium vector envs", add_help=False)
    b.add_argument("rest", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    if args.cmd == "demo":
        demo(args.task, args.num_envs, args.seconds)
    elif args.cmd == "list":
        import parallel_pool

        print("\n".join(parallel_pool.list_all_envs()))
    elif args.cmd == "bench":
        from parallel_pool.bench import main as bench_main

        return bench_main(args.rest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
