"""The `parallel-pool` command (also `python -m parallel_pool`): version, task list, task info, demo, benchmarks.

parallel-pool --version
parallel-pool list [--family atari]
parallel-pool info CartPole-v1
parallel-pool demo [--task Pong-v5] [--num-envs 8] [--seconds 2]
parallel-pool bench [--case atari] [--quick] ...
"""

from __future__ import annotations

import argparse
import os
import sys

PROG = "parallel-pool"


# ---- list / info ---------------------------------------------------------------------------------------------
def list_tasks(family: str | None) -> int:
    import parallel_pool
    from parallel_pool import families as fam

    ids = parallel_pool.list_all_envs()
    if family is not None:
        known = fam.families()
        if family not in known:
            choices = ", ".join(sorted(known)) or "none: this build does not list its families"
            raise SystemExit(f"{PROG} list: unknown family {family!r} (families: {choices})")
        reason, family_ids = known[family]
        if reason is not None:
            raise SystemExit(f"{PROG} list: the {family} family is not in this build: {reason}")
        ids = [i for i in ids if i in set(family_ids)]
    print("\n".join(ids))
    if family is None:  # on stderr, so stdout stays a plain list of ids
        for name, (reason, _) in sorted(fam.families().items()):
            if reason is not None:
                print(f"note: the {name} family is not in this build: {reason}", file=sys.stderr)
    return 0


def _describe_space(space) -> str:
    return repr(space).replace("\n", " ")


def task_info(task_id: str, backend: str | None = None) -> int:
    import parallel_pool
    from parallel_pool import families as fam
    from parallel_pool.registry import config_keys, env_class_of

    try:
        spec = parallel_pool.make_spec(task_id, backend=backend)
    except (ValueError, ImportError) as e:
        raise SystemExit(f"{PROG} info: {e}") from None
    if spec.backend == "python":
        return _python_info(task_id, spec)
    print(f"{task_id}: env class {env_class_of(task_id)}, family {fam.family_of(task_id) or 'unknown'}")
    print(f"  observation space (one env): {_describe_space(spec.observation_space)}")
    print(f"  action space (one env):      {_describe_space(spec.action_space)}")
    print("  config keys (default, doc):")
    keys = config_keys(task_id)
    width = max(len(k) for k in keys)
    for name, (default, doc, choices) in sorted(keys.items()):
        listed = all(c in doc for c in choices)  # most docs already spell out their choices
        allowed = f" (one of {', '.join(choices)})" if choices and not listed else ""
        print(f"    {name:<{width}} = {default!r:<12} {doc}{allowed}")
    return 0


def _python_info(task_id: str, spec) -> int:
    """A gymnasium id run by Python envs in worker processes: gymnasium's entry point and kwargs, the pool's keys."""
    from parallel_pool.python_env import gymnasium_env_spec

    gym_spec = gymnasium_env_spec(task_id)
    where = f"gymnasium.make in worker processes), entry point {gym_spec.entry_point}"
    print(f"{task_id}: a Python env (backend python: {where}")
    print(f"  observation space (one env): {_describe_space(spec.observation_space)}")
    print(f"  action space (one env):      {_describe_space(spec.action_space)}")
    print("  config keys (the pool's, with their values here):")
    pool_keys = ("num_envs", "batch_size", "num_threads", "seed", "max_episode_steps", "autoreset_mode", "info_keys")
    width = max(len(k) for k in pool_keys)
    for name in pool_keys:
        print(f"    {name:<{width}} = {spec.config_dict[name]!r}")
    kwargs = gym_spec.kwargs or {}
    print("  the env's own keys (gymnasium.make's kwargs; registered values):" + ("" if kwargs else " none registered"))
    for name, value in sorted(kwargs.items()):
        print(f"    {name} = {value!r}")
    return 0


# ---- demo ----------------------------------------------------------------------------------------------------
def _measure(case: dict, seconds: float) -> float:
    """Env steps per second of a case, built by the benchmark's one factory and timed by its one loop, in this
    process (a demo, not a figure: no worker process to start per row)."""
    from parallel_pool.bench.measure import measure_case

    timing = {"warmup": min(0.5, seconds / 4), "duration": seconds, "repeats": 1}
    return float(measure_case(case, timing, isolated=False)["steps_per_s"])


def _gymnasium_row(case: dict, seconds: float) -> tuple[str, float, str]:
    from parallel_pool.bench.peers import gymnasium_peer

    peer, why_not = gymnasium_peer(case["task"])
    if peer is None:
        return "gymnasium SyncVectorEnv", float("nan"), f"skipped: {why_not}"
    try:
        rate = _measure(dict(case, runner="gym_sync"), seconds)
    except ImportError as e:  # an optional dependency of the gymnasium env (e.g. imageio for MuJoCo)
        return (
            "gymnasium SyncVectorEnv",
            float("nan"),
            (f'skipped: gymnasium\'s {peer.gym_id} needs {e.name} (pip install "parallel-pool[bench]")'),
        )
    return "gymnasium SyncVectorEnv", rate, peer.note or peer.gym_id


def _envpool_row(case: dict, seconds: float) -> tuple[str, float, str]:
    try:
        import envpool
    except ImportError:
        return "envpool (sync)", float("nan"), 'skipped: not installed (pip install "parallel-pool[bench]")'
    if case["task"] not in envpool.list_all_envs():
        return "envpool (sync)", float("nan"), f"skipped: EnvPool has no {case['task']}"
    return "envpool (sync)", _measure(dict(case, runner="envpool"), seconds), case["task"]


def demo(task: str = "CartPole-v1", num_envs: int = 8, seconds: float = 2.0, backend: str | None = None) -> int:
    import parallel_pool
    from parallel_pool.bench.runners import random_actions
    from parallel_pool.schema import tree_map

    print(f"ParallelPool demo: {task}, {num_envs} envs, ~{seconds:g} s per measurement")
    try:
        env = parallel_pool.make(task, env_type="gymnasium", num_envs=num_envs, seed=0, backend=backend)
    except (ValueError, ImportError) as e:
        raise SystemExit(f"{PROG} demo: {e}") from None
    backend = env.spec.backend
    env.reset()
    for a in random_actions(env.single_action_space, num_envs, batches=5):
        obs, rew, term, trunc, info = env.step(a)
    env.close()
    print(f"  obs batch {tree_map(lambda v: f'{v.shape} {v.dtype}', obs)}; info keys {sorted(info)}")
    case = {"task": task, "mode": "sync", "num_envs": num_envs, "batch_size": num_envs, "num_threads": 0}
    ours = _measure(dict(case, runner="parallel_pool", config={"backend": backend}), seconds)
    note = task if backend == "cpp" else f"{task} (gymnasium's env in worker processes)"
    rows = [("parallel_pool (sync)", ours, note), _gymnasium_row(case, seconds), _envpool_row(case, seconds)]
    print(f"  {'runner':<26}{'steps/s':>12}{'ours / it':>12}  env")
    for name, rate, note in rows:
        measured = rate == rate  # not NaN
        rate_s = f"{rate:>12,.0f}" if measured else f"{'-':>12}"
        ratio = f"{ours / rate:>11.2f}x" if measured else f"{'-':>12}"
        print(f"  {name:<26}{rate_s}{ratio}  {note}")
    return 0


# ---- command line --------------------------------------------------------------------------------------------
def _version() -> str:
    from parallel_pool._version import __version__

    return f"{PROG} {__version__}"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG, description="ParallelPool: RL environments stepped in parallel by a C++ engine, with EnvPool's API."
    )
    p.add_argument("--version", action="version", version=_version())
    sub = p.add_subparsers(dest="cmd", required=True, metavar="{list,info,demo,bench}")
    ls = sub.add_parser("list", help="list the task ids of this build")
    ls.add_argument("--family", help="only this env family's ids (e.g. atari, classic_control, mujoco_gym)")
    backend_help = (
        "cpp or python (default: C++ where the id has a port, else gymnasium's env in worker processes; "
        "'package:Id' imports the package that registers Id)"
    )
    info = sub.add_parser("info", help="a task's spaces and config keys with their defaults and docs")
    info.add_argument("task_id")
    info.add_argument("--backend", choices=("cpp", "python"), help=backend_help)
    d = sub.add_parser("demo", help="make a pool, step it, print throughput against gymnasium (and EnvPool)")
    d.add_argument(
        "--task",
        default="CartPole-v1",
        help="an id of `parallel-pool list` or of gymnasium's registry (default CartPole-v1)",
    )
    d.add_argument("--backend", choices=("cpp", "python"), help=backend_help)
    d.add_argument("--num-envs", type=int, default=8)
    d.add_argument("--seconds", type=float, default=2.0, help="per measurement (default 2)")
    # parsed by parallel_pool.bench.main: shown here for --help only
    sub.add_parser(
        "bench", help="benchmark against EnvPool and gymnasium vector envs (parallel-pool bench -h)", add_help=False
    )
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        code = _dispatch(sys.argv[1:] if argv is None else list(argv))
        sys.stdout.flush()  # a closed pipe shows up here, not at interpreter exit
        return code
    except BrokenPipeError:  # `parallel-pool list | head`: the reader left; stop quietly, as shell tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python flushes
        return 1


def _dispatch(argv: list[str]) -> int:
    if argv and argv[0] == "bench":  # its own parser (argparse's REMAINDER would drop leading options)
        from parallel_pool.bench import main as bench_main

        return bench_main(argv[1:], prog=f"{PROG} bench")
    args = parser().parse_args(argv)
    if args.cmd == "list":
        return list_tasks(args.family)
    if args.cmd == "info":
        return task_info(args.task_id, args.backend)
    if args.num_envs < 1 or args.seconds <= 0:
        raise SystemExit(f"{PROG} demo: --num-envs must be >= 1 and --seconds > 0")
    return demo(args.task, args.num_envs, args.seconds, args.backend)
