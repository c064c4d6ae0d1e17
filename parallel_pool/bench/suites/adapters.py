"""Per-step cost of the framework adapters on CartPole-v1 (8 envs, random actions), side by side with the
frameworks' own in-process vector envs over gymnasium's CartPole, in one run.

    parallel-pool bench --case adapters [--steps 20000] [--num-envs 8] [--quick]
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np

import parallel_pool
from parallel_pool.translate import Translator


def bench(step, actions, steps):
    for a in actions[:50]:
        step(a)
    t0 = time.perf_counter()
    for i in range(steps):
        step(actions[i % len(actions)])
    return (time.perf_counter() - t0) / steps * 1e6


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    p = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=20_000)
    p.add_argument("--num-envs", type=int, default=8)
    p.add_argument("--quick", action="store_true", help="200 steps (a smoke run)")
    args = p.parse_args(argv)
    if args.quick:
        args.steps = 200
    n = args.num_envs
    actions = np.random.default_rng(0).integers(0, 2, (1000, n))
    rows = []

    pool = parallel_pool.make("CartPole-v1", num_envs=n, autoreset_mode="same_step")
    pool.reset()
    rows.append(("parallel_pool gymnasium front-end (same_step)", bench(lambda a: pool.step(a), actions, args.steps)))
    tr = Translator.make(
        "CartPole-v1", num_envs=n, final_obs_key="terminal_observation", truncated_key="TimeLimit.truncated"
    )
    tr.reset()
    rows.append(("Translator.step (per-env records)", bench(tr.step, actions, args.steps)))
    try:
        from stable_baselines3.common.vec_env import DummyVecEnv

        from parallel_pool.integrations.sb3 import ParallelPoolVecEnv

        v = ParallelPoolVecEnv("CartPole-v1", num_envs=n)
        v.reset()
        rows.append(("SB3 ParallelPoolVecEnv.step", bench(v.step, actions, args.steps)))
        d = DummyVecEnv([lambda: gym.make("CartPole-v1") for _ in range(n)])
        d.reset()
        rows.append(("SB3 DummyVecEnv(gymnasium CartPole).step", bench(d.step, actions, args.steps)))
    except ImportError:
        pass
    try:
        from tianshou.env import DummyVectorEnv

        from parallel_pool.integrations.tianshou import ParallelPoolVectorEnv

        ids = np.arange(n)

        def ts_step(venv):
            def step(a):
                out = venv.step(a, ids)
                done = np.flatnonzero(out[2] | out[3])
                if len(done):
                    venv.reset(done)

            return step

        t = ParallelPoolVectorEnv("CartPole-v1", num_envs=n)
        t.reset()
        rows.append(("Tianshou ParallelPoolVectorEnv.step (+reset of done)", bench(ts_step(t), actions, args.steps)))
        dt = DummyVectorEnv([lambda: gym.make("CartPole-v1") for _ in range(n)])
        dt.reset()
        rows.append(
            ("Tianshou DummyVectorEnv(gymnasium CartPole).step (+reset)", bench(ts_step(dt), actions, args.steps))
        )
    except ImportError:
        pass
    g = gym.vector.SyncVectorEnv(
        [lambda: gym.make("CartPole-v1") for _ in range(n)], autoreset_mode=gym.vector.AutoresetMode.SAME_STEP
    )
    g.reset(seed=0)
    rows.append(("gymnasium SyncVectorEnv (same_step)", bench(g.step, actions, args.steps)))
    print(f"CartPole-v1, {n} envs, {args.steps} steps each; microseconds per batched step")
    for name, us in rows:
        print(f"  {name:60s} {us:8.1f} us")
    return 0
