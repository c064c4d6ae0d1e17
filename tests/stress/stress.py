"""Engine stress run for the sanitizer builds (.ci/sanitize.sh): mixed sync/async pools, env_id subsets and
subset resets, env exceptions (Dummy-v0's error_action), multi-player rows, same-step autoreset, close while idle
and while another thread waits, thread counts 1..4. Checks results as it goes; exits non-zero on any mismatch.

Uses only the `_core` module: PP_CORE_DIR=<build dir> imports the `_core` built there (e.g. build/asan),
otherwise parallel_pool._core."""

from __future__ import annotations

import os
import sys
import threading

import numpy as np

if os.environ.get("PP_CORE_DIR"):
    sys.path.insert(0, os.environ["PP_CORE_DIR"])
    import _core  # noqa: E402
else:
    from parallel_pool import _core  # noqa: E402

TASKS = _core.tasks()


def make(task: str, **config) -> _core.Engine:
    env_type, overrides = TASKS[task]
    return _core.Engine(env_type, dict(overrides, **config))


def named(pool, arrays) -> dict:
    return {name: a for (name, *_), a in zip(pool.output_specs, arrays)}


def check(cond: bool, what: str) -> None:
    if not cond:
        raise AssertionError(what)


def sync_run(rng, threads: int, mode: str) -> None:
    n = 6
    pool = make(
        "Dummy-v0",
        num_envs=n,
        num_threads=threads,
        episode_len=4,
        error_action=9,
        autoreset_mode=mode,
        seed=int(rng.integers(0, 2**63 - 1)),
    )
    pool.reset()
    for _ in range(60):
        ids = rng.permutation(n)[: rng.integers(1, n + 1)].astype(np.int32)
        if rng.random() < 0.15:
            out = named(pool, pool.reset(ids))  # a reset_mask-like subset reset
            check((out["elapsed_step"] == 0).all(), "subset reset rows are episode starts")
            continue
        act = rng.integers(0, 10, len(ids)).astype(np.int32)
        try:
            out = named(pool, pool.step(act, ids))
        except _core.EnvError as e:
            # (an env told to fail while it was due for its autoreset resets instead)
            check(set(e.env_ids) <= set(ids[act == 9].tolist()) and not e.batch_kept, f"sync EnvError ids {e}")
            continue
        check(np.array_equal(out["env_id"], ids), "sync rows follow env_id order")
    pool.close()


def async_run(rng, threads: int) -> None:
    n, bs = 8, 3
    pool = make(
        "Dummy-v0",
        num_envs=n,
        batch_size=bs,
        num_threads=threads,
        episode_len=5,
        error_action=9,
        step_cost_us=float(rng.integers(0, 50)),
    )
    pool.send(None, None, True)
    in_flight = n
    for _ in range(80):
        try:
            out = named(pool, pool.recv())
        except _core.EnvError as e:
            check(e.batch_kept and len(e.env_ids) > 0, "async EnvError keeps the batch")
            out = named(pool, pool.recv())
            check(all(i in out["env_id"] for i in e.env_ids), "kept batch holds the failed envs")
        ids = out["env_id"].copy()
        check(len(ids) == bs and len(set(ids.tolist())) == bs, "async batch of distinct envs")
        in_flight -= bs
        act = rng.integers(0, 10, bs).astype(np.int32)
        pool.send(act, ids)
        in_flight += bs
    check(in_flight == n, "no env lost")
    pool.close()


def multi_player_run(rng, threads: int) -> None:
    pool = make("TwoPlayer-v0", num_envs=4, batch_size=2, num_threads=threads, max_num_players=3, vary_players=True)
    pool.send(None, None, True)
    for _ in range(30):
        out = named(pool, pool.recv())
        ids = out["env_id"].copy()
        rows = sum(pool.num_players(int(i)) for i in ids)
        check(len(out["players.env_id"]) == rows, "player rows")
        pool.send(rng.integers(0, 3, rows).astype(np.int32), ids)
    pool.close()


def close_while_waiting(threads: int) -> None:
    pool = make("Dummy-v0", num_envs=2, num_threads=threads, step_cost_us=20000.0)
    pool.reset()
    t = threading.Thread(target=lambda: pool.step(np.ones(2, np.int32)))
    t.start()
    pool.close()  # waits for the step in progress, then closes
    t.join()
    pool.close()
    idle = make("Dummy-v0", num_envs=3, num_threads=threads)
    idle.close()  # never used


def main() -> int:
    rounds = int(os.environ.get("PP_STRESS_ROUNDS", "3"))
    rng = np.random.default_rng(int(os.environ.get("PP_STRESS_SEED", "0")))
    for r in range(rounds):
        for threads in (1, 2, 3, 4):
            for mode in ("next_step", "same_step"):
                sync_run(rng, threads, mode)
            async_run(rng, threads)
            multi_player_run(rng, threads)
            close_while_waiting(threads)
        print(f"round {r + 1}/{rounds} ok", flush=True)
    print("stress ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
