"""The physical limit: the single-thread rate of the bare env, stepped in a tight C++ loop on one thread (no pool,
no queue, no Python), and `cores x` that rate as the ceiling of any engine on this machine. ViZDoom's step waits on
an engine process of its own, which the loop's thread-CPU time does not see: its single-thread rate is vizdoom's
own single-game loop per CPU-second of both processes (doom_game_rate).

    python -m parallel_pool.bench.limit CartPole-v1 Ant-v5 --seconds 2

The loop is `_core.bare_step_loop` (core/bench/bare_loop.h): the same env class the pool steps, precomputed random
actions (64 sets, cycled), reset when an episode ends or reaches max_episode_steps, as the pool does.
"""

from __future__ import annotations

import argparse
import os
import sys

from parallel_pool.bench.cases import available_cores


def bare_rate(task: str, seconds: float = 1.0, pin: bool = True, num_envs: int = 1, **config) -> float:
    """Env steps per CPU-second of one env of `task` in a tight C++ loop on this thread (pinned to one CPU if
    `pin`). Per CPU-second, not per wall second: what one core does when it runs the env, even where other load
    takes the core part of the time (the rate per wall second would measure that load). `num_envs` > 1: that many
    envs stepped round robin by the same loop (what their memory costs a core, without any pool)."""
    import parallel_pool
    from parallel_pool import _core

    spec = parallel_pool.make_spec(task, **config)
    before = os.sched_getaffinity(0) if pin and hasattr(os, "sched_setaffinity") else None
    if before is not None:
        os.sched_setaffinity(0, {min(before)})
    try:
        res = _core.bare_step_loop(spec.env_class, spec.config_dict, float(seconds), 1, num_envs)
    finally:
        if before is not None:
            os.sched_setaffinity(0, before)
    return res["steps"] / (res["cpu_seconds"] if res["cpu_seconds"] > 0 else res["seconds"])


def _cpu_of(procs: list) -> float:
    total = 0.0
    for p in procs:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except Exception:  # gone: it no longer adds CPU time
            pass
    return total


def doom_game_rate(task: str, seconds: float = 1.0, pin: bool = True, **config) -> dict:
    """vizdoom's own single-game loop at our task's settings (parallel_pool.bench.peers.make_doom_game): each step
    sets random buttons, advances frame_skip tics and reads the state (new episode when one ends), as our env's step
    does. A ViZDoom step waits on the engine's own process, so the bare C++ loop's CPU time (its thread's only) does
    not count the step's work; this counts both processes. Returns "steps_per_cpu_s" (steps per CPU-second of this
    process and the engine's), "steps_per_s" (per wall second) and "processes" (how many were counted); with `pin`
    both run on one CPU (the engine inherits the affinity), so the two rates agree on a quiet machine."""
    import tempfile
    import time

    import numpy as np
    import psutil

    import parallel_pool
    from parallel_pool.bench import peers

    frame_skip = int(parallel_pool.make_spec(task, **config).config_dict["frame_skip"])
    before = os.sched_getaffinity(0) if pin and hasattr(os, "sched_setaffinity") else None
    with tempfile.TemporaryDirectory(prefix="pp-doom-") as d:
        game = peers.make_doom_game(task, d, **config)
        me = psutil.Process()
        old = {c.pid for c in me.children(recursive=True)}
        if before is not None:
            os.sched_setaffinity(0, {min(before)})
        try:
            game.init()
            procs = [me] + [c for c in me.children(recursive=True) if c.pid not in old]
            rng = np.random.default_rng(0)
            actions = [list(map(float, a)) for a in rng.integers(0, 2, (64, game.get_available_buttons_size()))]

            def run(until: float) -> int:
                steps = 0
                while time.perf_counter() < until:
                    game.set_action(actions[steps % 64])
                    game.advance_action(frame_skip, True)
                    if game.is_episode_finished():
                        game.new_episode()
                    else:
                        game.get_state()
                    steps += 1
                return steps

            run(time.perf_counter() + min(0.2, seconds / 4))  # warm-up: the first episode's start
            cpu0, t0 = _cpu_of(procs), time.perf_counter()
            steps = run(t0 + seconds)
            wall, cpu = time.perf_counter() - t0, _cpu_of(procs) - cpu0
        finally:
            game.close()
            if before is not None:
                os.sched_setaffinity(0, before)
    return {"steps_per_cpu_s": steps / (cpu if cpu > 0 else wall), "steps_per_s": steps / wall, "processes": len(procs)}


BARE_LOOP = "the bare env stepped in a tight C++ loop on one thread, no pool, no Python"
DOOM_LOOP = (
    "vizdoom's own single-game loop (DoomGame at our settings: scenario, resolution, frame skip, game variables), "
    "per CPU-second of the game's two processes (the caller and the engine process it waits on)"
)


def single_thread_rate(task: str, seconds: float = 1.0) -> tuple[float, str]:
    """(one core's rate of `task`, what was measured): the bare C++ loop, or for ViZDoom, whose step waits on the
    engine's process (work the loop's thread-CPU time does not see), vizdoom's own single-game loop."""
    from parallel_pool.registry import env_class_of

    if env_class_of(task) == "Vizdoom":
        return doom_game_rate(task, seconds)["steps_per_cpu_s"], DOOM_LOOP
    return bare_rate(task, seconds), BARE_LOOP


def physical_limit(task: str, seconds: float = 1.0, repeats: int = 3, cores: int | None = None) -> dict:
    """{"single_thread": best single_thread_rate over `repeats`, "cores": n, "limit": n x that, "source": what was
    measured} (best: caches and frequency only ever slow a loop down)."""
    runs = [single_thread_rate(task, seconds) for _ in range(repeats)]
    rate = max(r for r, _ in runs)
    n = cores or available_cores()
    return {"single_thread": rate, "cores": n, "limit": n * rate, "source": runs[0][1]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m parallel_pool.bench.limit", description=__doc__.split("\n\n")[0])
    p.add_argument("tasks", nargs="+")
    p.add_argument("--seconds", type=float, default=1.0)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument(
        "--num-envs",
        type=int,
        default=1,
        help="also step this many envs round robin in the same loop (what their memory costs a core, no pool)",
    )
    a = p.parse_args(argv)
    for t in a.tasks:
        r = physical_limit(t, a.seconds, a.repeats)
        print(
            f"{t:<20} {r['single_thread']:>14,.0f} steps/s on one thread; x {r['cores']} cores = {r['limit']:,.0f} "
            f"({r['source']})"
        )
        if a.num_envs > 1:
            many = max(bare_rate(t, a.seconds, num_envs=a.num_envs) for _ in range(a.repeats))
            print(
                f"{'':<20} {many:>14,.0f} steps/s on one thread with {a.num_envs} envs round robin "
                f"({many / r['single_thread']:.2f} of one env's rate)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
