"""ViZDoom throughput, side by side in one run: ParallelPool, EnvPool and vizdoom's own gymnasium wrapper in
gymnasium's AsyncVectorEnv, 16 envs each (the pools async with batch 8), random button presses, frame skip 4.

    parallel-pool bench --case vizdoom                # Basic-v1, 8 s per measurement
    parallel-pool bench --case vizdoom --quick        # 1 s per measurement (a smoke run)

Each measurement runs in a fresh subprocess; engine start-up is not timed. Every env is an engine process, so the
figures depend on the cores the engines get: compare them only within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from parallel_pool.bench.suites.atari import have

WORKER = r"""
import json, sys, time
import numpy as np
kind, task, seconds, n, batch = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rng = np.random.default_rng(0)
if kind in ("pp", "envpool"):
    lib = __import__("parallel_pool" if kind == "pp" else "envpool")
    env = lib.make(task, env_type="gymnasium", num_envs=n, batch_size=batch)
    buttons = (getattr(env, "single_action_space", None) or env.action_space).shape[-1]
    acts = rng.integers(0, 2, size=(64, batch, buttons)).astype(np.float64)
    env.async_reset()
    steps = calls = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        obs, r, te, tr, info = env.recv()
        ids = info["env_id"]
        env.send(acts[calls % 64, : len(ids)], ids)
        calls += 1
        steps += len(ids)
    dt = time.perf_counter() - t0
else:  # vizdoom's gymnasium wrapper in gymnasium's AsyncVectorEnv
    import gymnasium as gym

    def make():
        import gymnasium as gym
        import vizdoom.gymnasium_wrapper  # noqa: F401  (registers the Vizdoom*-v1 ids)
        return gym.make("VizdoomBasic-v1", frame_skip=4)

    env = gym.vector.AsyncVectorEnv([make] * n)
    env.reset(seed=0)
    steps = calls = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        env.step(env.action_space.sample())
        calls += 1
        steps += n
    dt = time.perf_counter() - t0
env.close()
print("RESULT " + json.dumps({"sps": steps / dt, "call_us": dt / calls * 1e6}))
"""


def measure(kind: str, task: str, seconds: float, n: int, batch: int) -> dict:
    from parallel_pool.bench import worker_env

    p = subprocess.run(
        [sys.executable, "-c", WORKER, kind, task, str(seconds), str(n), str(batch)],
        capture_output=True,
        text=True,
        timeout=seconds * 20 + 180,
        env=worker_env(),
        cwd=tempfile.gettempdir(),  # EnvPool's and the wrapper's engines write _vizdoom.ini into their working dir
    )
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"{kind} failed:\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}")


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--task", default="Basic-v1")
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--num-envs", type=int, default=16)
    ap.add_argument("--json", default=None, help="write the results here")
    ap.add_argument("--quick", action="store_true", help="1 s per measurement (a smoke run)")
    args = ap.parse_args(argv)
    if args.quick:
        args.seconds = 1.0
    n = args.num_envs
    contenders = [("pp", f"ParallelPool async {n} envs, batch {n // 2}")]
    if have("envpool"):
        contenders.append(("envpool", f"EnvPool async {n} envs, batch {n // 2}"))
    if args.task == "Basic-v1":  # the wrapper's id for the same scenario
        contenders.append(("gym_async", f"gymnasium AsyncVectorEnv {n} envs (VizdoomBasic-v1)"))
    load_before = os.getloadavg()
    t_start = time.time()
    results = {name: measure(kind, args.task, args.seconds, n, max(n // 2, 1)) for kind, name in contenders}
    print(
        f"\n{args.task}, {os.cpu_count()} cores, one run x {args.seconds:.0f} s, load average before "
        f"{load_before[0]:.2f}, after {os.getloadavg()[0]:.2f} (wall {time.time() - t_start:.0f} s)"
    )
    print(f"{'contender':52s} {'steps/s':>9s} {'frames/s':>9s} {'us/call':>8s}")
    for name, res in results.items():
        print(f"{name:52s} {res['sps']:9.0f} {4 * res['sps']:9.0f} {res['call_us']:8.0f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"task": args.task, "load_before": load_before, "results": results}, f, indent=1)
    return 0
