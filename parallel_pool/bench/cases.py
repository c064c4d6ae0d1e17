"""What to measure: the tasks, the runners that can run each task, and the list of cases of one benchmark run.

A *case* is one measurement: (task, runner, mode, num_envs, batch_size, num_threads). Cases are plain dicts so they
can be sent as JSON to a fresh worker process (see `measure.py`).
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass, field
from typing import Any

# runner key -> (display name, kind). kind "pool": has sync and async modes; "vector": one synchronous step API.
RUNNERS: dict[str, str] = {
    "parallel_pool": "ParallelPool",
    "envpool": "EnvPool",
    "ale_vector": "ale_py AtariVectorEnv",
    "gym_native": "gymnasium native vector env",
    "gym_sync": "gymnasium SyncVectorEnv",
    "gym_async": "gymnasium AsyncVectorEnv",
    "for_loop": "for-loop over gymnasium envs",
    "supersuit": "SuperSuit's vector env (a PettingZoo env's agents as rows)",
}
POOL_RUNNERS = ("parallel_pool", "envpool", "ale_vector")  # these run in both sync and async mode


@dataclass(frozen=True)
class Task:
    """One benchmark task. `id` is the ParallelPool / EnvPool id; `gym_id` the gymnasium id for the baselines."""

    id: str
    gym_id: str | None
    frame_skip: int = 1  # emulator frames per step (Atari); frames/s = steps/s x frame_skip
    num_envs: tuple[int, ...] = (1, 8, 256)  # sizes of the full run
    single_core_envs: int = 4096  # envs stepped on one thread to measure the single-core rate (overhead amortised)
    max_process_envs: int = 256  # AsyncVectorEnv starts one process per env: skip it above this many envs
    config: dict = field(default_factory=dict)  # extra config for ParallelPool and EnvPool (same for both)
    envpool_has: bool = True  # False: do not even look for it in EnvPool (importing envpool takes seconds)
    note: str = ""


TASKS: dict[str, Task] = {
    "CartPole-v1": Task("CartPole-v1", "CartPole-v1"),
    "Pong-v5": Task(
        "Pong-v5",
        "ALE/Pong-v5",
        frame_skip=4,
        num_envs=(1, 8, 64),
        single_core_envs=32,
        max_process_envs=64,
        note="gymnasium baselines: ALE/Pong-v5 with frameskip=1, repeat_action_probability=0, "
        "AtariPreprocessing(noop_max=30, frame_skip=4, screen_size=84, grayscale) and "
        "FrameStackObservation(4), as EnvPool's Pong-v5 defaults (gymnasium has no fire-reset "
        "wrapper; EnvPool and ale_py press FIRE after reset)",
    ),
    "Ant-v5": Task("Ant-v5", "Ant-v5", num_envs=(1, 8, 64), single_core_envs=64, max_process_envs=64),
    "HalfCheetah-v5": Task(
        "HalfCheetah-v5", "HalfCheetah-v5", num_envs=(1, 8, 64), single_core_envs=64, max_process_envs=64
    ),
    "FrozenLake-v1": Task("FrozenLake-v1", "FrozenLake-v1"),
    # the third cheap env (no StepBatch: 11 output arrays per row); its gymnasium env is the minigrid package's,
    # which the python-envs case measures
    "MiniGrid-DoorKey-8x8-v0": Task("MiniGrid-DoorKey-8x8-v0", None),
    # picked up once their families are built (DMC through EnvPool's id, ViZDoom's basic scenario)
    "CheetahRun-v1": Task("CheetahRun-v1", None, num_envs=(1, 8, 64), single_core_envs=64),
    "Basic-v1": Task("Basic-v1", None, num_envs=(1, 8, 64), single_core_envs=32),
    "Dummy-v0": Task(
        "Dummy-v0",
        None,
        envpool_has=False,
        note="the testing env with step_cost_us=0: pure engine overhead (gymnasium and EnvPool 1.2.5 have no such env)",
    ),
}
DEFAULT_TASKS = (
    "CartPole-v1",
    "FrozenLake-v1",
    "MiniGrid-DoorKey-8x8-v0",
    "Pong-v5",
    "Ant-v5",
    "HalfCheetah-v5",
    "CheetahRun-v1",
    "Basic-v1",
    "Dummy-v0",
)
QUICK_TASKS = ("CartPole-v1", "Dummy-v0")


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _has(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def envpool_tasks() -> set[str]:
    """Task ids EnvPool has (empty if it is not installed). Imports envpool (slow: seconds)."""
    if not _has("envpool"):
        return set()
    try:
        import envpool

        return set(envpool.list_all_envs())
    except Exception:  # a broken envpool install is the same as none for the benchmark
        return set()


def runners_for(task: Task, ours: set[str], theirs: set[str]) -> list[str]:
    """The runners that can run `task` here, in display order."""
    out: list[str] = []
    if task.id in ours:
        out.append("parallel_pool")
    if task.id in theirs:
        out.append("envpool")
    if task.gym_id is not None:
        needs = {"ALE/": "ale_py", "Ant": "mujoco", "HalfCheetah": "mujoco"}
        dep = next((m for prefix, m in needs.items() if task.gym_id.startswith(prefix)), None)
        if dep is None or _has(dep):
            if task.gym_id.startswith("ALE/") and _has("ale_py.vector_env"):
                out.append("ale_vector")
            if task.gym_id == "CartPole-v1":
                out.append("gym_native")  # gymnasium's numpy-vectorised CartPoleVectorEnv
            out += ["gym_sync", "gym_async", "for_loop"]
    return out


XLA_STEPS = 256  # env steps per jitted scan (one xla call) of an Atari task: ms of emulation, the call's cost vanishes


def xla_available(runner: str) -> tuple[bool, str]:
    """(whether an engine's xla() can run here, why not): jax for all; our build's XLA support; chex for ale_py's
    AtariVectorEnv.xla()."""
    if not _has("jax"):
        return False, "jax is not installed"
    if runner == "parallel_pool":
        from parallel_pool import _core

        return bool(_core.has_xla), "this build has no env.xla()"
    if runner == "ale_vector":
        return _has("chex"), "AtariVectorEnv.xla() needs chex (the jax and test extras have it)"
    return True, ""


def thread_counts(cores: int) -> list[int]:
    """1, 2, 4, ... below `cores`, and `cores` itself."""
    out, t = [], 1
    while t < cores:
        out.append(t)
        t *= 2
    out.append(cores)
    return out


@dataclass
class Plan:
    tasks: list[str]
    cases: list[dict]
    skipped: list[str]
    cores: int


def _async_batch(num_envs: int) -> int:
    """Async mode keeps num_envs envs in flight and receives half of them per call (1 when num_envs is 1)."""
    return max(1, num_envs // 2)


class _Cases:
    """The cases of a plan, each once: a case two figures need carries both purposes."""

    def __init__(self) -> None:
        self.cases: list[dict] = []
        self.index: dict[tuple, dict] = {}  # a case's settings (purpose aside) -> the case

    def add(self, **c: Any) -> None:
        key = tuple(sorted((k, v) for k, v in c.items() if k != "purpose"))
        old = self.index.get(key)
        if old is not None:
            old["purpose"] = sorted(set(old["purpose"]) | set(c["purpose"]))
            return
        self.index[key] = c
        self.cases.append(c)


def _main_cases(
    out: _Cases, name: str, task: Task, avail: list[str], sizes: list[int], cores: int, skipped: list[str]
) -> None:
    """Each runner at each size, the engines sync and async, and for Atari also through their xla() (a jitted scan
    of about XLA_STEPS env steps per call) where it runs."""
    atari = task.gym_id is not None and task.gym_id.startswith("ALE/")
    for r in avail:
        modes = ("sync", "async") if r in POOL_RUNNERS else ("sync",)
        calls: list[str | None] = [None]
        if atari and r in POOL_RUNNERS:
            ok, why = xla_available(r)
            if ok:
                calls.append("xla")
            else:
                skipped.append(f"{name}: {RUNNERS[r]} xla ({why})")
        for n in sizes:
            if r == "gym_async" and n > task.max_process_envs:
                skipped.append(f"{name}: {RUNNERS[r]} at {n} envs (more than {task.max_process_envs} processes)")
                continue
            for mode in modes:
                b = n if mode == "sync" else _async_batch(n)
                t = min(b, cores) if r in POOL_RUNNERS else 0
                for call in calls:
                    xla = {"call": "xla", "scan": max(1, XLA_STEPS // b)} if call else {}
                    out.add(
                        task=name, runner=r, mode=mode, num_envs=n, batch_size=b, num_threads=t, purpose=["main"], **xla
                    )


def _scaling_cases(out: _Cases, name: str, avail: list[str], big: int, threads: list[int]) -> None:
    """The engines' thread scaling at the largest size."""
    for r in [r for r in avail if r in POOL_RUNNERS]:
        for t in threads:
            for mode in ("sync", "async"):
                b = big if mode == "sync" else _async_batch(big)
                out.add(
                    task=name,
                    runner=r,
                    mode=mode,
                    num_envs=big,
                    batch_size=b,
                    num_threads=min(t, b),
                    purpose=["scaling"],
                )


def _single_core_cases(out: _Cases, name: str, avail: list[str], m: int) -> None:
    """Single-core rate: one thread, many envs in one call, so the per-call overhead is amortised away; the process
    is pinned to one CPU (ParallelPool's calling thread also steps envs while it waits)."""
    for r in [r for r in avail if r in ("parallel_pool", "envpool")]:
        out.add(
            task=name,
            runner=r,
            mode="sync",
            num_envs=m,
            batch_size=m,
            num_threads=1,
            pin_cpu=True,
            purpose=["single_core"],
        )
    if "for_loop" in avail:
        out.add(
            task=name, runner="for_loop", mode="sync", num_envs=1, batch_size=1, num_threads=0, purpose=["single_core"]
        )


def _run_order(chosen: list[str]) -> Any:
    """The sort key that runs the cases compared with each other back to back (same task and size, all runners),
    so a change in the machine's load during the run shifts them alike."""
    order = list(RUNNERS)
    group = {"main": 0, "scaling": 1, "single_core": 2}

    def key(c: dict) -> tuple:
        g = min(group[p] for p in c["purpose"])
        return (
            chosen.index(c["task"]),
            g,
            c["num_envs"],
            c["num_threads"] if g == 1 else 0,
            order.index(c["runner"]),
            "call" in c,
            c["mode"] != "sync",
        )

    return key


def make_plan(
    tasks: list[str],
    *,
    quick: bool,
    num_envs: list[int] | None = None,
    threads: list[int] | None = None,
    runners: list[str] | None = None,
    cores: int | None = None,
    ours: set[str] | None = None,
    theirs: set[str] | None = None,
) -> Plan:
    """All the cases of one run. Cases appear once even when two figures need them (e.g. the thread scaling at
    num_threads == cores is the main run's largest size)."""
    import parallel_pool

    cores = cores or available_cores()
    ours = set(parallel_pool.list_all_envs(include_unlisted=True)) if ours is None else ours
    if theirs is None:
        wanted = [TASKS[t] for t in tasks if t in TASKS and TASKS[t].envpool_has]
        theirs = envpool_tasks() if wanted and (not runners or "envpool" in runners) else set()
    out = _Cases()
    skipped: list[str] = []
    chosen: list[str] = []
    for name in tasks:
        if name not in TASKS:
            raise ValueError(f"unknown benchmark task {name!r}; choose from {sorted(TASKS)}")
        task = TASKS[name]
        if task.id not in ours:
            skipped.append(f"{name}: not in parallel_pool.list_all_envs() (family not built)")
            continue
        chosen.append(name)
        avail = [r for r in runners_for(task, ours, theirs) if not runners or r in runners]
        sizes = list(num_envs or ((1, 4) if quick else task.num_envs))
        _main_cases(out, name, task, avail, sizes, cores, skipped)
        _scaling_cases(out, name, avail, max(sizes), threads or thread_counts(cores))
        _single_core_cases(out, name, avail, 64 if quick else task.single_core_envs)
    out.cases.sort(key=_run_order(chosen))
    return Plan(chosen, out.cases, skipped, cores)


def case_label(c: dict) -> str:
    """Display name of a case's runner and mode, e.g. 'ParallelPool async'."""
    name = RUNNERS[c["runner"]]
    if c["runner"] == "gym_native":
        name = {"CartPole-v1": "gymnasium CartPoleVectorEnv (numpy)"}.get(c["task"], name)
    if c["runner"] in POOL_RUNNERS:
        name += f"{' xla' if c.get('call') == 'xla' else ''} {c['mode']}"
    return name
