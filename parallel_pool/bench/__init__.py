"""`parallel-pool bench`: every benchmark of the project, one runner.

The default case, `throughput`, measures ParallelPool against EnvPool, gymnasium's vector envs, a plain for-loop
and ale_py's AtariVectorEnv in one run on one machine:

    parallel-pool bench --out bench_out            # full run: table + plot in bench_out/
    parallel-pool bench --quick --out /tmp/b       # seconds, tiny sizes (CI)

The same from Python: `parallel_pool.bench.run(out_dir="bench_out", quick=True)` returns the results dict.
The focused cases live in parallel_pool/bench/suites/ and take their own options (`--quick` for a smoke run):

    parallel-pool bench --case atari      # Atari side by side, physical limit, RSS per env
    parallel-pool bench --case mujoco     # MuJoCo tasks, ParallelPool vs EnvPool
    parallel-pool bench --case xla        # env.xla() in jitted loops vs Python loops
    parallel-pool bench --case adapters   # per-step cost of the framework adapters
    parallel-pool bench --case dmc        # DeepMind Control Suite: ParallelPool vs EnvPool vs dm_control
    parallel-pool bench --case box2d      # LunarLander, BipedalWalker: vs EnvPool vs gymnasium AsyncVectorEnv
    parallel-pool bench --case vizdoom    # ViZDoom: ParallelPool vs EnvPool vs vizdoom's gymnasium wrapper
    parallel-pool bench --case minigrid   # MiniGrid/BabyAI: ParallelPool vs EnvPool vs minigrid in AsyncVectorEnv
    parallel-pool bench --case mpe        # MPE: ParallelPool vs mpe2 in AsyncVectorEnv and SuperSuit's vector env
    parallel-pool bench --case contention # async ParallelPool / EnvPool under competing load
    parallel-pool bench --case scaling    # 1..cores threads: fraction of linear scaling, ours vs EnvPool / ALE

Every contender of every case is built by runners.build (peers' envs by peers.py) and measured by measure.py, one
worker process per measurement. See docs/benchmarks.md for the method, docs/architecture.md for the path from this
command to a table row.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import time

from parallel_pool.bench.cases import DEFAULT_TASKS, QUICK_TASKS, RUNNERS, TASKS, case_label, make_plan

__all__ = ["main", "run", "CASES", "FULL_TIMING", "QUICK_TIMING"]

# --case name -> the module whose main(argv, prog) runs it (None: the throughput benchmark of this module)
CASES = {
    "throughput": None,
    "atari": "parallel_pool.bench.suites.atari",
    "mujoco": "parallel_pool.bench.suites.mujoco",
    "xla": "parallel_pool.bench.suites.xla",
    "adapters": "parallel_pool.bench.suites.adapters",
    "vizdoom": "parallel_pool.bench.suites.vizdoom",
    "dmc": "parallel_pool.bench.suites.dmc",
    "contention": "parallel_pool.bench.suites.contention",
    "python-envs": "parallel_pool.bench.suites.python_envs",
    "box2d": "parallel_pool.bench.suites.box2d",
    "shared-threads": "parallel_pool.bench.suites.shared_threads",
    "minigrid": "parallel_pool.bench.suites.minigrid",
    "scaling": "parallel_pool.bench.suites.scaling",
    "mpe": "parallel_pool.bench.suites.mpe",
}

FULL_TIMING = {"warmup": 0.5, "duration": 1.0, "repeats": 5, "action_batches": 64}
QUICK_TIMING = {"warmup": 0.02, "duration": 0.05, "repeats": 2, "action_batches": 64}


def run(
    out_dir: str | None = "bench_out",
    *,
    quick: bool = False,
    tasks: list[str] | None = None,
    num_envs: list[int] | None = None,
    threads: list[int] | None = None,
    runners: list[str] | None = None,
    isolate: bool | None = None,
    timing: dict | None = None,
    timeout: float | None = None,
    progress: bool = True,
    limit: bool = True,
    loaded: bool | None = None,
    loads: list[str] | None = None,
    memory: bool | None = None,
    memory_num_envs: int | None = None,
) -> dict:
    """Run the benchmark; write results.json, results.md, bench.png and limit.png into out_dir (unless None); return
    results. Besides the throughput cases: `limit` measures each task's bare single-thread rate (the physical limit),
    `loaded` the async ratio to EnvPool under competing processes (`loads`: shapes of
    parallel_pool.bench.suites.contention), `memory` RSS per env at `memory_num_envs` envs (default 1000). A full
    run does all three; --quick only the limit and memory (at 16 envs)."""
    from parallel_pool.bench import report
    from parallel_pool.bench.measure import measure_case, run_isolated

    started = time.time()
    load_before = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    timing = dict(timing or (QUICK_TIMING if quick else FULL_TIMING))
    isolate = (not quick) if isolate is None else isolate
    timeout = timeout or (120.0 if quick else 900.0)
    plan = make_plan(
        list(tasks or (QUICK_TASKS if quick else DEFAULT_TASKS)),
        quick=quick,
        num_envs=num_envs,
        threads=threads,
        runners=runners,
    )
    results: dict = {
        "started": datetime.datetime.now().isoformat(timespec="seconds"),
        "machine": report.machine_info(),
        "settings": {"quick": quick, "isolated": isolate, "timing": timing, "cores": plan.cores},
        "load_before": load_before,
        "tasks": plan.tasks,
        "skipped": plan.skipped,
        "cases": [],
    }
    bar = None
    if progress:
        try:
            import tqdm

            tqdm.tqdm.monitor_interval = 0  # no monitor thread (AsyncVectorEnv forks in in-process mode)
            bar = tqdm.tqdm(total=len(plan.cases), desc="bench", unit="case", file=sys.stderr)
        except ImportError:
            bar = None
    for case in plan.cases:
        case = dict(case, label=case_label(case))
        if bar is not None:
            bar.set_postfix_str(f"{case['task']} {case['label']} n={case['num_envs']} t={case['num_threads']}")
        if isolate:
            res = run_isolated(case, timing, timeout)
        else:
            try:
                res = measure_case(case, timing, isolated=False)
            except Exception as e:  # record, go on with the other cases
                res = {"error": f"{type(e).__name__}: {e}"}
        results["cases"].append({**case, **res})
        if bar is not None:
            bar.update(1)
        elif progress:
            print(
                f"  {case['task']:<12} {case['label']:<40} n={case['num_envs']:<5} "
                f"{res.get('steps_per_s', float('nan')):>14,.0f} steps/s",
                file=sys.stderr,
            )
    if bar is not None:
        bar.close()
    _extra_stages(results, plan, quick, timing, timeout, limit, loaded, loads, memory, memory_num_envs, progress)
    results["load_after"] = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    results["elapsed_s"] = time.time() - started
    report.annotate(results)
    if out_dir is not None:
        results["files"] = report.write(results, out_dir)
    return results


def _extra_stages(results, plan, quick, timing, timeout, limit, loaded, loads, memory, memory_num_envs, progress):
    """The physical limit, the loaded ratios and memory at 1K envs (see parallel_pool.bench.summary)."""
    from parallel_pool.bench import summary
    from parallel_pool.bench.cases import TASKS, envpool_tasks
    from parallel_pool.bench.suites import contention

    def say(what: str) -> None:
        if progress:
            print(f"bench: {what}", file=sys.stderr, flush=True)

    if limit and plan.tasks:
        say("physical limit (bare env loops)")
        seconds, repeats = (0.05, 1) if quick else (1.0, 3)
        results["bare"] = summary.measure_limits(plan.tasks, plan.cores, seconds, repeats)
    theirs = envpool_tasks() if (loaded or memory or (not quick and loaded is None)) else set()
    compared = [t for t in plan.tasks if TASKS[t].id in theirs]
    if loaded if loaded is not None else not quick:
        say(f"under load: {', '.join(compared) or 'no task EnvPool has'}")
        shapes = loads or contention.default_loads()
        seconds, repeats = (0.1, 1) if quick else (float(timing["duration"]), 3)
        results["loaded"] = contention.measure(compared, shapes, repeats, seconds, plan.cores)
    if "CartPole-v1" in plan.tasks:
        say("per-call cost (1-env CartPole-v1, in this process)")
        calls, repeats = (200, 1) if quick else (100_000, 5)
        results["per_call"] = summary.measure_per_call(calls, repeats)
    if memory if memory is not None else True:
        n = memory_num_envs or (16 if quick else summary.MEMORY_ENVS)
        say(f"memory at {n} envs")
        results["memory_num_envs"] = n
        engines = {t: ["parallel_pool"] + (["envpool"] if t in compared else []) for t in plan.tasks}
        results["memory"] = summary.measure_memory(engines, n, plan.cores, timeout)


def _ints(s: str) -> list[int]:
    return [int(x) for x in s.split(",") if x.strip()]


def _names(s: str) -> list[str]:
    return [x.strip() for x in s.split(",") if x.strip()]


def main(argv: list[str] | None = None, prog: str = "parallel-pool bench") -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    pick = argparse.ArgumentParser(add_help=False)
    pick.add_argument("--case", choices=list(CASES), default="throughput")
    case, rest = pick.parse_known_args(argv)
    module = CASES[case.case]
    if module is not None:
        import importlib

        return importlib.import_module(module).main(rest, prog=f"{prog} --case {case.case}")
    return _throughput_main(rest, prog)


def _throughput_main(argv: list[str], prog: str) -> int:
    p = argparse.ArgumentParser(
        prog=prog,
        epilog=f"Other cases (each with its own options, --quick for a smoke run): --case {{{','.join(CASES)}}}; "
        f"e.g. `{prog} --case atari --help`.",
        description="Throughput of ParallelPool against EnvPool, gymnasium vector envs, a for-loop and ale_py's "
        "AtariVectorEnv, in one run on this machine. Writes results.md, results.json and bench.png.",
    )
    p.add_argument("--out", default="bench_out", help="folder for results.md, results.json, bench.png")
    p.add_argument("--quick", action="store_true", help="seconds, tiny sizes, one process (for CI)")
    p.add_argument(
        "--tasks",
        type=_names,
        default=None,
        help=f"comma-separated, from {','.join(TASKS)} (default: those built, of "
        f"{','.join(DEFAULT_TASKS)}; quick: {','.join(QUICK_TASKS)})",
    )
    p.add_argument(
        "--num-envs", type=_ints, default=None, help="comma-separated sizes (default per task, e.g. 1,8,256)"
    )
    p.add_argument(
        "--threads", type=_ints, default=None, help="num_threads for the scaling figure (default 1,2,4..cores)"
    )
    p.add_argument("--runners", type=_names, default=None, help=f"only these, from {','.join(RUNNERS)}")
    p.add_argument("--repeats", type=int, default=None)
    p.add_argument("--duration", type=float, default=None, help="seconds per repeat")
    p.add_argument("--warmup", type=float, default=None, help="warm-up seconds")
    iso = p.add_mutually_exclusive_group()
    iso.add_argument(
        "--isolate",
        dest="isolate",
        action="store_true",
        default=None,
        help="each case in a fresh process (default unless --quick): clean peak RSS",
    )
    iso.add_argument("--no-isolate", dest="isolate", action="store_false", help="all cases in this process")
    p.add_argument("--timeout", type=float, default=None, help="seconds per isolated case")
    p.add_argument("--no-limit", action="store_true", help="skip the bare-env loops (the physical limit)")
    p.add_argument(
        "--loaded",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="measure async ParallelPool / EnvPool under competing load (default: on, off with --quick)",
    )
    p.add_argument(
        "--loads", type=_names, default=None, help="load shapes for --loaded (default quiet,spin1,spin2,spin4,torch)"
    )
    p.add_argument("--memory", action=argparse.BooleanOptionalAction, default=None, help="RSS per env at 1K envs")
    p.add_argument("--memory-envs", type=int, default=None, help="num_envs of the memory figure (default 1000)")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument(
        "--doc",
        default=None,
        help="also put the table and plot into this markdown file "
        "(e.g. docs/benchmarks.md), as the section --doc-title",
    )
    p.add_argument("--doc-title", default=None, help="section title naming the machine, e.g. '2-core AMD EPYC'")
    a = p.parse_args(argv)
    if a.runners:
        bad = [r for r in a.runners if r not in RUNNERS]
        if bad:
            p.error(f"unknown runner(s) {bad}; choose from {list(RUNNERS)}")
    if a.tasks:
        bad = [t for t in a.tasks if t not in TASKS]
        if bad:
            p.error(f"unknown task(s) {bad}; choose from {list(TASKS)}")
    timing = dict(QUICK_TIMING if a.quick else FULL_TIMING)
    for k in ("repeats", "duration", "warmup"):
        if getattr(a, k) is not None:
            timing[k] = getattr(a, k)
    res = run(
        a.out,
        quick=a.quick,
        tasks=a.tasks,
        num_envs=a.num_envs,
        threads=a.threads,
        runners=a.runners,
        isolate=a.isolate,
        timing=timing,
        timeout=a.timeout,
        progress=not a.no_progress,
        limit=not a.no_limit,
        loaded=a.loaded,
        loads=a.loads,
        memory=a.memory,
        memory_num_envs=a.memory_envs,
    )
    print(open(res["files"]["markdown"]).read())
    print(f"wrote {', '.join(res['files'].values())}")
    if a.doc:
        from parallel_pool.bench.report import update_doc

        m = res["machine"]
        title = a.doc_title or f"{res['settings']['cores']}-core {m.get('cpu', 'machine')}"
        slug = update_doc(res, a.doc, title)
        print(f"updated section {slug!r} of {a.doc}")
    return 1 if any("error" in c for c in res["cases"]) else 0
