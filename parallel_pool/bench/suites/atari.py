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
import json
import os
import statistics
import subprocess
import sys
import time

WORKER = r"""
import json, os, sys, time
import numpy as np
kind, task, seconds, cfg = sys.argv[1], sys.argv[2], float(sys.argv[3]), json.loads(sys.argv[4])
import parallel_pool
rom = parallel_pool.make_spec(task).config.task
rng = np.random.default_rng(0)
out = {}

cpu0 = wall0 = 0.0


def mark():
    # start of the timed part: CPU time (this process and its reaped children) and wall time from here
    global cpu0, wall0
    import resource
    ru = [resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    cpu0 = sum(r.ru_utime + r.ru_stime for r in ru)
    wall0 = time.perf_counter()
    return wall0


def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

def run_pool(env, n, batch):
    acts = rng.integers(0, env_actions(env), size=(4096, max(batch, 1))).astype(np.int32)
    steps = calls = 0
    if batch == n:  # sync
        env.reset()
        t0 = mark()
        while time.perf_counter() - t0 < seconds:
            env.step(acts[calls % 4096, :n])
            calls += 1
            steps += n
    else:
        env.async_reset()
        t0 = mark()
        while time.perf_counter() - t0 < seconds:
            obs, r, te, tr, info = env.recv()
            ids = info["env_id"]
            env.send(acts[calls % 4096, :len(ids)], ids)
            calls += 1
            steps += len(ids)
    dt = time.perf_counter() - t0
    return steps / dt, dt / calls

def env_actions(env):
    sp = getattr(env, "single_action_space", None) or env.action_space
    return sp.n

if kind == "raw":  # one ALEInterface, 4 frames per step: the emulator alone
    import ale_py
    from ale_py import roms
    ale = ale_py.ALEInterface()
    ale.setLoggerMode(ale_py.LoggerMode.Error)
    ale.setFloat("repeat_action_probability", 0.0)
    ale.loadROM(roms.get_rom_path(rom))
    acts = ale.getMinimalActionSet()
    idx = rng.integers(0, len(acts), size=4096)
    steps = 0
    t0 = mark()
    while time.perf_counter() - t0 < seconds:
        a = acts[idx[steps % 4096]]
        for _ in range(4):
            ale.act(a)
        if ale.game_over():
            ale.reset_game()
        steps += 1
    dt = time.perf_counter() - t0
    out = {"sps": steps / dt, "call_us": dt / steps * 1e6}
elif kind in ("pp", "envpool"):
    n, batch = cfg["num_envs"], cfg.get("batch_size", cfg["num_envs"])
    kw = dict(cfg)
    if kind == "pp":
        import parallel_pool as lib
        mk = lambda: lib.make(task, env_type="gymnasium", **kw)
    else:
        import envpool as lib
        mk = lambda: lib.make(task, env_type="gymnasium", **kw)
    if cfg.get("rss"):
        kw.pop("rss")
        import gc
        gc.collect()
        before = rss()
        env = mk()
        env.reset()
        for i in range(100):
            env.step(rng.integers(0, env_actions(env), size=n).astype(np.int32))
        out = {"rss_per_env_mb": (rss() - before) / n / 2**20}
    else:
        env = mk()
        sps, call = run_pool(env, n, batch)
        out = {"sps": sps, "call_us": call * 1e6}
elif kind == "ale_vector":
    from ale_py.vector_env import AtariVectorEnv
    n, batch = cfg["num_envs"], cfg.get("batch_size", cfg["num_envs"])
    env = AtariVectorEnv(rom, num_envs=n, batch_size=0 if batch == n else batch, reward_clipping=False)
    acts = rng.integers(0, env.single_action_space.n, size=(4096, batch)).astype(np.int32)
    steps = calls = 0
    env.reset()
    t0 = mark()
    if batch == n:
        while time.perf_counter() - t0 < seconds:
            env.step(acts[calls % 4096])
            calls += 1
            steps += n
    else:
        env.send(acts[0])  # ALE's async API: send to the envs of the last batch, then recv
        while time.perf_counter() - t0 < seconds:
            env.recv()
            env.send(acts[calls % 4096])
            calls += 1
            steps += batch
        env.recv()
    dt = time.perf_counter() - t0
    out = {"sps": steps / dt, "call_us": dt / calls * 1e6}
elif kind == "gym_async":
    import gymnasium as gym, ale_py
    from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation
    gym.register_envs(ale_py)
    n = cfg["num_envs"]
    def make():
        import gymnasium as gym, ale_py
        from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation
        gym.register_envs(ale_py)
        e = gym.make("ALE/" + task, frameskip=1, repeat_action_probability=0.0)
        return FrameStackObservation(AtariPreprocessing(e, noop_max=30, frame_skip=4, screen_size=84), 4)
    env = gym.vector.AsyncVectorEnv([make] * n)
    env.reset(seed=0)
    acts = rng.integers(0, env.single_action_space.n, size=(4096, n))
    steps = calls = 0
    t0 = mark()
    while time.perf_counter() - t0 < seconds:
        env.step(acts[calls % 4096])
        calls += 1
        steps += n
    dt = time.perf_counter() - t0
    env.close()
    out = {"sps": steps / dt, "call_us": dt / calls * 1e6}
import resource
ru = [resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
out["cpu_s"] = sum(r.ru_utime + r.ru_stime for r in ru) - cpu0
out["wall_s"] = time.perf_counter() - wall0
print("RESULT " + json.dumps(out))
"""


def measure(kind: str, task: str, seconds: float, cfg: dict) -> dict:
    from parallel_pool.bench import worker_env

    p = subprocess.run(
        [sys.executable, "-c", WORKER, kind, task, str(seconds), json.dumps(cfg)],
        capture_output=True,
        text=True,
        timeout=seconds * 20 + 120,
        env=worker_env(),
    )
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"{kind} {cfg} failed:\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}")


def have(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


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

    contenders = [("raw", "ALEInterface, 1 env (raw emulation)", {})]
    contenders += [
        ("pp", "ParallelPool 1 env", {"num_envs": 1}),
        ("pp", "ParallelPool sync 8 envs", {"num_envs": 8}),
        ("pp", "ParallelPool async 16 envs, batch 8", {"num_envs": 16, "batch_size": 8}),
    ]
    if have("envpool"):
        contenders += [
            ("envpool", "EnvPool 1 env", {"num_envs": 1}),
            ("envpool", "EnvPool sync 8 envs", {"num_envs": 8}),
            ("envpool", "EnvPool async 16 envs, batch 8", {"num_envs": 16, "batch_size": 8}),
            (
                "envpool",
                f"EnvPool async 16/8, num_threads={cores}",
                {"num_envs": 16, "batch_size": 8, "num_threads": cores},
            ),
        ]
    if have("ale_py"):
        contenders += [
            ("ale_vector", "ale_py AtariVectorEnv 8 envs", {"num_envs": 8}),
            ("ale_vector", "ale_py AtariVectorEnv async 16, batch 8", {"num_envs": 16, "batch_size": 8}),
            ("gym_async", "gymnasium AsyncVectorEnv 8 envs", {"num_envs": 8}),
        ]

    if args.only:
        keys = [k.strip() for k in args.only.split(",")]
        contenders = [c for c in contenders if c[0] == "raw" or any(k in c[1] for k in keys)]
    load_before = os.getloadavg()
    results: dict[str, list[dict]] = {name: [] for _, name, _ in contenders}
    t_start = time.time()
    for r in range(args.rounds):
        for kind, name, cfg in contenders:
            res = measure(kind, args.task, args.seconds, cfg)
            results[name].append(res)
            print(f"  round {r + 1}: {name:45s} {res['sps']:9.0f} steps/s", flush=True)
    rss = {}
    for kind in ("pp", "envpool"):
        if kind == "envpool" and not have("envpool"):
            continue
        rss[kind] = measure(kind, args.task, 0, {"num_envs": 16, "rss": True})["rss_per_env_mb"]
    load_after = os.getloadavg()

    med = {name: statistics.median(x["sps"] for x in v) for name, v in results.items()}
    best = {name: max(x["sps"] for x in v) for name, v in results.items()}
    call = {name: statistics.median(x["call_us"] for x in v) for name, v in results.items()}
    # load-robust view: steps per CPU-second (all threads and child processes) and cores kept busy
    per_cpu = {
        name: statistics.median(x["sps"] * x["wall_s"] / max(x["cpu_s"], 1e-9) for x in v)
        for name, v in results.items()
    }
    busy = {name: statistics.median(x["cpu_s"] / x["wall_s"] for x in v) for name, v in results.items()}
    raw_name = "ALEInterface, 1 env (raw emulation)"
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
    ours = med.get("ParallelPool async 16 envs, batch 8", float("nan"))
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
