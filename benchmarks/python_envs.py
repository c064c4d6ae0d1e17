"""Python envs in the pool (parallel_pool.process_engine) against gymnasium's AsyncVectorEnv(shared_memory=True).

    PYTHONPATH=. python benchmarks/python_envs.py [--seconds 3] [--sizes 8 64] [--out results.json]

Cases (each measured in this one run, ratios are what to read; the machine and its load go with the figures):
- LunarLander-v3 and MiniGrid-DoorKey-8x8-v0 (ImgObsWrapper: the image, as every vectorizer can batch it), num_envs 8
  and 64: ours sync (step of every env), ours async (batch_size = num_envs / 2, whichever finish first),
  gymnasium AsyncVectorEnv (one process per env; its step is always every env). Steps/s counts env steps.
- a pure-Python env that spins ~1 ms per step: the pool's rate against cores x the rate of one env in a plain loop.
- per-step round trip: a 1-env pool of an env that does nothing (µs per step), beside the C++ engine's 1-env
  CartPole step and gymnasium's AsyncVectorEnv with 1 env.
- memory per env: proportional set size (PSS, /proc/<pid>/smaps_rollup) of the worker processes / num_envs.
PufferLib 3.0's Multiprocessing vector is measured when `import pufferlib.vector` works (pufferlib==3.0.0 does not
build here: its setup downloads a file, and this machine reaches only the package index).
"""

from __future__ import annotations

import argparse
import json
import os
import time

import gymnasium as gym
import numpy as np

import parallel_pool as pp


class Spin(gym.Env):
    """A pure-Python env whose step spins `cost` seconds of CPU (no sleep: it needs a core, as a real env does)."""

    observation_space = gym.spaces.Box(-1, 1, (4,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, cost: float = 1e-3):
        self.cost = cost

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(4, np.float32), {}

    def step(self, action):
        end = time.perf_counter() + self.cost
        while time.perf_counter() < end:
            pass
        return np.zeros(4, np.float32), 0.0, False, False, {}


def lunar():
    return gym.make("LunarLander-v3")


def minigrid():
    import minigrid  # noqa: F401  (registers the ids)
    from minigrid.wrappers import ImgObsWrapper

    return ImgObsWrapper(gym.make("MiniGrid-DoorKey-8x8-v0"))


def _actions(space, n: int, k: int = 64) -> list[np.ndarray]:
    space.seed(0)
    return [np.stack([space.sample() for _ in range(n)]) for _ in range(k)]


def ours_rate(env_fn, n: int, seconds: float, async_: bool) -> float:
    batch = n // 2 if async_ else n
    env = pp.make(env_fn=env_fn, num_envs=n, batch_size=batch, seed=0)
    acts = _actions(env.single_action_space, batch)
    try:
        if async_:
            env.async_reset()
            steps, t0, i = 0, time.perf_counter(), 0
            while time.perf_counter() - t0 < seconds:
                *_, info = env.recv()
                env.send(acts[i % len(acts)], info["env_id"])
                steps, i = steps + batch, i + 1
        else:
            env.reset()
            steps, t0, i = 0, time.perf_counter(), 0
            while time.perf_counter() - t0 < seconds:
                env.step(acts[i % len(acts)])
                steps, i = steps + n, i + 1
        return steps / (time.perf_counter() - t0)
    finally:
        env.close()


def gym_async_rate(env_fn, n: int, seconds: float) -> float:
    env = gym.vector.AsyncVectorEnv([env_fn] * n, shared_memory=True)
    acts = _actions(env.single_action_space, n)
    try:
        env.reset(seed=0)
        steps, t0, i = 0, time.perf_counter(), 0
        while time.perf_counter() - t0 < seconds:
            env.step(acts[i % len(acts)])
            steps, i = steps + n, i + 1
        return steps / (time.perf_counter() - t0)
    finally:
        env.close()


def puffer_rate(env_fn, n: int, seconds: float) -> float | None:
    try:
        import pufferlib.emulation
        import pufferlib.vector
    except ImportError:
        return None
    creator = lambda **kw: pufferlib.emulation.GymnasiumPufferEnv(env_creator=env_fn)  # noqa: E731
    env = pufferlib.vector.make(creator, num_envs=n, backend=pufferlib.vector.Multiprocessing)
    try:
        env.reset(seed=0)
        acts = _actions(env.single_action_space, n)
        steps, t0, i = 0, time.perf_counter(), 0
        while time.perf_counter() - t0 < seconds:
            env.step(acts[i % len(acts)])
            steps, i = steps + n, i + 1
        return steps / (time.perf_counter() - t0)
    finally:
        env.close()


def single_rate(env_fn, seconds: float) -> float:
    env = env_fn()
    env.reset(seed=0)
    steps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        env.step(0)
        steps += 1
    return steps / (time.perf_counter() - t0)


def per_step_us(step, seconds: float) -> float:
    steps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        step()
        steps += 1
    return (time.perf_counter() - t0) / steps * 1e6


def pss_kib(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
    return total


def memory_per_env(env_fn, n: int) -> dict[str, float]:
    env = pp.make(env_fn=env_fn, num_envs=n)
    env.reset()
    ours = pss_kib(env.engine.pids) / n
    env.close()
    ref = gym.vector.AsyncVectorEnv([env_fn] * n, shared_memory=True)
    ref.reset(seed=0)
    theirs = pss_kib([p.pid for p in ref.processes]) / n
    ref.close()
    return {"ours_MiB_per_env": ours / 1024, "gymnasium_async_MiB_per_env": theirs / 1024}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--sizes", type=int, nargs="+", default=[8, 64])
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    cores = os.cpu_count() or 1
    results: dict = {"cores": cores, "throughput": [], "machine_load_at_start": os.getloadavg()}
    print(f"{cores} cores; load average at start {os.getloadavg()}")
    columns = ["env", "num_envs", "ours sync", "ours async (batch n/2)", "gymnasium Async", "PufferLib MP"]
    print("| " + " | ".join(columns + ["sync ratio", "async ratio"]) + " |")
    print("|---|---|---|---|---|---|---|---|")
    for name, fn in (("LunarLander-v3", lunar), ("MiniGrid-DoorKey-8x8-v0", minigrid)):
        for n in args.sizes:
            row = {
                "env": name,
                "num_envs": n,
                "ours_sync": ours_rate(fn, n, args.seconds, False),
                "ours_async": ours_rate(fn, n, args.seconds, True),
                "gymnasium_async": gym_async_rate(fn, n, args.seconds),
                "pufferlib_mp": puffer_rate(fn, n, args.seconds),
            }
            results["throughput"].append(row)
            g = row["gymnasium_async"]
            puffer = "not installed" if row["pufferlib_mp"] is None else f"{row['pufferlib_mp']:,.0f}"
            print(
                f"| {name} | {n} | {row['ours_sync']:,.0f} | {row['ours_async']:,.0f} | {g:,.0f} | {puffer} | "
                f"{row['ours_sync'] / g:.2f}x | {row['ours_async'] / g:.2f}x |",
                flush=True,
            )
    one = single_rate(Spin, args.seconds)
    pool = ours_rate(Spin, 4 * cores, args.seconds, False)
    results["slow_env"] = {
        "single_env_steps_s": one,
        "pool_steps_s": pool,
        "fraction_of_cores_x_single": pool / (one * cores),
    }
    print(
        f"\n~1 ms pure-Python env: one env {one:,.0f} steps/s; pool of {4 * cores} envs on {cores} workers "
        f"{pool:,.0f} steps/s = {pool / (one * cores):.2f} of cores x single"
    )
    noop = pp.make(env_fn=lambda: Spin(0.0), num_envs=1)
    noop.reset()
    a = np.zeros(1, np.int64)
    ours_us = per_step_us(lambda: noop.step(a), args.seconds)
    noop.close()
    cpp = pp.make("CartPole-v1", num_envs=1)
    cpp.reset()
    cpp_us = per_step_us(lambda: cpp.step(a), args.seconds)
    cpp.close()
    g1 = gym.vector.AsyncVectorEnv([lambda: Spin(0.0)], shared_memory=True)
    g1.reset(seed=0)
    g_us = per_step_us(lambda: g1.step(a), args.seconds)
    g1.close()
    results["round_trip_us"] = {"ours_python": ours_us, "ours_cpp_cartpole": cpp_us, "gymnasium_async": g_us}
    print(
        f"per-step round trip, 1 env that does nothing: ours (process) {ours_us:.1f} us; C++ engine (CartPole) "
        f"{cpp_us:.1f} us; gymnasium AsyncVectorEnv {g_us:.1f} us"
    )
    for name, fn in (("LunarLander-v3", lunar), ("MiniGrid-DoorKey-8x8-v0", minigrid)):
        mem = memory_per_env(fn, 8)
        results.setdefault("memory", {})[name] = mem
        print(
            f"memory per env ({name}, 8 envs, PSS of the workers): ours {mem['ours_MiB_per_env']:.1f} MiB, "
            f"gymnasium AsyncVectorEnv {mem['gymnasium_async_MiB_per_env']:.1f} MiB"
        )
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
