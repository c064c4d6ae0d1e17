"""The physical limit: the single-thread rate of the bare env, stepped in a tight C++ loop on one thread (no pool,
no queue, no Python), and `cores x` that rate as the ceiling of any engine on this machine.

    python -m parallel_pool.bench.limit CartPole-v1 Ant-v5 --seconds 2

The loop is `_core.bare_step_loop` (core/bench/bare_loop.h): the same env class the pool steps, precomputed random
actions (64 sets, cycled), reset when an episode ends or reaches max_episode_steps, as the pool does.
"""

from __future__ import annotations

import argparse
import os
import sys

from parallel_pool.bench.cases import available_cores


def bare_rate(task: str, seconds: float = 1.0, pin: bool = True, **config) -> float:
    """Env steps per CPU-second of one env of `task` in a tight C++ loop on this thread (pinned to one CPU if
    `pin`). Per CPU-second, not per wall second: what one core does when it runs the env, even where other load
    takes the core part of the time (the rate per wall second would measure that load)."""
    import parallel_pool
    from parallel_pool import _core

    spec = parallel_pool.make_spec(task, **config)
    before = os.sched_getaffinity(0) if pin and hasattr(os, "sched_setaffinity") else None
    if before is not None:
        os.sched_setaffinity(0, {min(before)})
    try:
        res = _core.bare_step_loop(spec.env_class, spec.config_dict, float(seconds), 1)
    finally:
        if before is not None:
            os.sched_setaffinity(0, before)
    return res["steps"] / (res["cpu_seconds"] if res["cpu_seconds"] > 0 else res["seconds"])


def physical_limit(task: str, seconds: float = 1.0, repeats: int = 3, cores: int | None = None) -> dict:
    """{"single_thread": best bare rate over `repeats`, "cores": n, "limit": n x that} (best: caches and
    frequency only ever slow a loop down)."""
    rate = max(bare_rate(task, seconds) for _ in range(repeats))
    n = cores or available_cores()
    return {"single_thread": rate, "cores": n, "limit": n * rate}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m parallel_pool.bench.limit", description=__doc__.split("\n\n")[0])
    p.add_argument("tasks", nargs="+")
    p.add_argument("--seconds", type=float, default=1.0)
    p.add_argument("--repeats", type=int, default=3)
    a = p.parse_args(argv)
    for t in a.tasks:
        r = physical_limit(t, a.seconds, a.repeats)
        print(f"{t:<20} {r['single_thread']:>14,.0f} steps/s on one thread; x {r['cores']} cores = {r['limit']:,.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
