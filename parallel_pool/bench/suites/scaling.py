"""Thread scaling: steps/s of each engine at 1, 2, 4, ... N threads (N = the cores this process may use), as a
fraction of linear scaling (t x the same engine's own 1-thread rate), for CartPole-v1, Pong-v5, Ant-v5 and
HalfCheetah-v5: ParallelPool against EnvPool and, for Pong, ale_py's AtariVectorEnv, sync and async. It builds
nothing: it measures the installed package (or the source tree's build) as it is.

    parallel-pool bench --case scaling --out scaling_out      # the full run: <= 10 minutes on 16 cores
    parallel-pool bench --case scaling --quick --out /tmp/s   # seconds: CartPole, 1-2 threads (a smoke run)

Each cell (task, engine, mode, num_threads) is one fresh worker process (parallel_pool.bench.measure): 0.25 s of
warm-up, then 3 timed repeats of 0.4 s each; a cell's figure is the median of the 3 and its spread the lowest and
highest. The env count is fixed per task, so each thread count steps the same envs (strong scaling): 16 envs per
core for CartPole, 4 per core for the others (at least the throughput table's largest size); async receives half
of them per call, so every thread has envs to step. On 16 cores: 5 thread counts x 2 modes x 9 engine-task pairs
= 90 cells, each about 1.5 s of stepping plus the worker's start-up (imports, building the envs), sized to
finish within 10 minutes.
Writes scaling.md (the machine, its CPU model, cores and the date first), scaling.json and scaling.png (the
fraction of linear scaling per task).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
import time

from parallel_pool.bench.cases import TASKS, available_cores, envpool_tasks, thread_counts
from parallel_pool.bench.summary import fmt_rate

SCALING_TASKS = ("CartPole-v1", "Pong-v5", "Ant-v5", "HalfCheetah-v5")
ENGINES = {"parallel_pool": "ParallelPool", "envpool": "EnvPool", "ale_vector": "ale_py AtariVectorEnv"}
FULL = {"warmup": 0.25, "duration": 0.4, "repeats": 3}
QUICK = {"warmup": 0.02, "duration": 0.05, "repeats": 3}
ENVS_PER_CORE = {"CartPole-v1": 16}  # the others: 4
TARGET = 0.9  # of linear, for Ant-v5 and Pong-v5 async at the most threads
TARGET_TASKS = ("Ant-v5", "Pong-v5")


def num_envs_for(task: str, cores: int) -> int:
    """Envs of `task` at every thread count: enough that async's half-batch keeps `cores` threads busy."""
    return max(ENVS_PER_CORE.get(task, 4) * cores, max(TASKS[task].num_envs))


def engines_for(task: str, ours: set[str], theirs: set[str]) -> list[str]:
    out = [r for r, have in (("parallel_pool", task in ours), ("envpool", task in theirs)) if have]
    if task.startswith("Pong") and _has("ale_py.vector_env"):
        out.append("ale_vector")
    return out


def _has(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def plan(
    tasks: list[str], threads: list[int], cores: int, runners: list[str] | None, ours: set[str], theirs: set[str]
) -> tuple[list[dict], list[str]]:
    """(the cells to measure, what is left out and why)."""
    cells, skipped = [], []
    for task in tasks:
        if task not in ours:
            skipped.append(f"{task}: not in parallel_pool.list_all_envs() (family not built)")
            continue
        n = num_envs_for(task, cores)
        for r in [r for r in engines_for(task, ours, theirs) if not runners or r in runners]:
            for mode in ("sync", "async"):
                b = n if mode == "sync" else n // 2
                for t in threads:
                    cells.append(
                        {"task": task, "runner": r, "mode": mode, "num_envs": n, "batch_size": b, "num_threads": t}
                    )
    return cells, skipped


def fractions(cells: list[dict]) -> None:
    """Add each measured cell's "linear" fraction: its rate / (num_threads x the same engine and mode's rate at the
    fewest threads measured, scaled to one thread)."""
    base: dict[tuple, dict] = {}
    for c in cells:
        if c.get("median") is None:
            continue
        key = (c["task"], c["runner"], c["mode"])
        if key not in base or c["num_threads"] < base[key]["num_threads"]:
            base[key] = c
    for c in cells:
        b = base.get((c["task"], c["runner"], c["mode"]))
        if c.get("median") is None or b is None:
            c["linear"] = None
            continue
        per_thread = b["median"] / b["num_threads"]
        c["linear"] = c["median"] / (c["num_threads"] * per_thread)


def measure(cells: list[dict], timing: dict, timeout: float, progress: bool) -> None:
    """Measure each cell in its own worker process: median and spread of its repeats (in place)."""
    from parallel_pool.bench.measure import run_isolated

    for i, c in enumerate(cells):
        res = run_isolated(c, timing, timeout)
        if "error" in res:
            c.update(median=None, low=None, high=None, error=res["error"])
        else:
            reps = res["steps_per_s_repeats"]
            c.update(median=statistics.median(reps), low=min(reps), high=max(reps), cpu=res["cpu_cores_used"])
        if progress:
            got = "error" if c["median"] is None else f"{c['median']:,.0f} steps/s"
            print(
                f"  [{i + 1}/{len(cells)}] {c['task']:<15} {ENGINES[c['runner']]:<22} {c['mode']:<5} "
                f"threads={c['num_threads']:<3} {got}",
                file=sys.stderr,
                flush=True,
            )
    fractions(cells)


def markdown(res: dict) -> str:
    m = res["machine"]
    threads = res["threads"]
    t = res["timing"]
    lines = [
        f"# Thread scaling, {m.get('cpu', '?')}, {res['cores']} cores",
        "",
        f"- Machine: {m.get('cpu', '?')}; {res['cores']} cores available to the run ({m.get('logical_cpus')} "
        f"logical, {m.get('physical_cores', '?')} physical); {m.get('memory_gib', '?')} GiB memory; "
        f"{m.get('platform')}; Python {m.get('python')}",
        "- Versions: " + ", ".join(f"{k} {v}" for k, v in m.get("versions", {}).items()),
        f"- Date: {res['started']} (UTC), took {res['elapsed_s']:.0f} s; load average (1 min) before "
        f"{res['load_before'][0]:.2f}, after {res['load_after'][0]:.2f}",
        f"- Each cell: a fresh worker process, {t['warmup']} s warm-up, {t['repeats']} repeats of {t['duration']} s; "
        "steps/s is their median, [lowest-highest] their spread. Sync: `step()` on all envs; async: num_envs in "
        "flight, `recv()` of half + `send()`. Linear = the cell / (threads × the same engine and mode's 1-thread "
        "rate). The last row of each table is the physical limit at that many threads: threads × the bare env's "
        "single-thread rate (`python -m parallel_pool.bench.limit`).",
    ]
    if res["skipped"]:
        lines.append("- Not measured: " + "; ".join(res["skipped"]))
    lines.append("")
    for task in res["tasks"]:
        cs = [c for c in res["cells"] if c["task"] == task]
        if not cs:
            continue
        lines += [f"## {task}, {cs[0]['num_envs']} envs", ""]
        lines.append("| engine | mode | " + " | ".join(f"{n} thr" for n in threads) + " |")
        lines.append("|---|---|" + "---:|" * len(threads))
        for r in ENGINES:
            for mode in ("sync", "async"):
                row = {c["num_threads"]: c for c in cs if c["runner"] == r and c["mode"] == mode}
                if not row:
                    continue
                cells = []
                for n in threads:
                    c = row.get(n)
                    if c is None:
                        cells.append("—")
                    elif c["median"] is None:
                        cells.append("error")
                    else:
                        cells.append(
                            f"{fmt_rate(c['median'])} [{fmt_rate(c['low'])}-{fmt_rate(c['high'])}] ({c['linear']:.2f})"
                        )
                lines.append(f"| {ENGINES[r]} | {mode} | " + " | ".join(cells) + " |")
        bare = res.get("bare", {}).get(task)
        if bare:
            lines.append("| threads × bare loop | (limit) | " + " | ".join(fmt_rate(n * bare) for n in threads) + " |")
        lines.append("")
    lines += targets_markdown(res)
    errors = [c for c in res["cells"] if c.get("error")]
    if errors:
        lines += ["## Failed cells", ""]
        lines += [f"- {c['task']} {ENGINES[c['runner']]} {c['mode']} {c['num_threads']}: {c['error']}" for c in errors]
        lines.append("")
    return "\n".join(lines)


def targets_markdown(res: dict) -> list[str]:
    """ParallelPool async at the most threads, as a fraction of linear, for the target tasks."""
    most = max(res["threads"])
    out = []
    for task in TARGET_TASKS:
        c = next(
            (
                c
                for c in res["cells"]
                if c["task"] == task
                and c["runner"] == "parallel_pool"
                and c["mode"] == "async"
                and c["num_threads"] == most
                and c.get("linear") is not None
            ),
            None,
        )
        if c is not None:
            met = "met" if c["linear"] >= TARGET else "NOT met"
            bare = res.get("bare", {}).get(task)
            limit = f"; {c['median'] / (most * bare):.2f} of {most} × the bare loop" if bare else ""
            out.append(
                f"- {task} ParallelPool async, {most} threads: {c['linear']:.2f} of linear "
                f"(target ≥ {TARGET}: {met}){limit}"
            )
    return (["**Targets**", ""] + out + [""]) if out else []


def plot(res: dict, path: str) -> None:
    """One panel per task: the fraction of linear scaling by num_threads, a line per engine and mode (the spread of
    the repeats as error bars)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = [t for t in res["tasks"] if any(c["task"] == t for c in res["cells"])]
    fig, axes = plt.subplots(1, max(1, len(tasks)), figsize=(4.5 * max(1, len(tasks)), 4), squeeze=False)
    for ax, task in zip(axes[0], tasks):
        for i, r in enumerate(ENGINES):
            for mode in ("sync", "async"):
                cs = sorted(
                    (
                        c
                        for c in res["cells"]
                        if c["task"] == task and c["runner"] == r and c["mode"] == mode and c.get("linear") is not None
                    ),
                    key=lambda c: c["num_threads"],
                )
                if not cs:
                    continue
                x = [c["num_threads"] for c in cs]
                y = [c["linear"] for c in cs]
                scale = [c["linear"] / c["median"] for c in cs]  # the same factor maps the spread
                err = [
                    [c["linear"] - c["low"] * s for c, s in zip(cs, scale)],
                    [c["high"] * s - c["linear"] for c, s in zip(cs, scale)],
                ]
                ax.errorbar(
                    x,
                    y,
                    yerr=err,
                    fmt="--o" if mode == "async" else "-o",
                    color=f"C{i}",
                    capsize=3,
                    label=f"{ENGINES[r]} {mode}",
                )
        ax.axhline(1.0, color="gray", lw=1, ls="-.")
        ax.axhline(TARGET, color="gray", lw=0.8, ls=":")
        ax.set_xscale("log", base=2)
        ax.set_xticks(res["threads"], [str(t) for t in res["threads"]])
        ax.minorticks_off()
        ax.set(xlabel="num_threads", ylabel="fraction of linear scaling", title=f"{task}", ylim=(0, 1.2))
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    m = res["machine"]
    fig.suptitle(f"{m.get('cpu', '?')}, {res['cores']} cores, {res['started'][:10]}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def run(
    out_dir: str | None,
    *,
    tasks: list[str] | None = None,
    threads: list[int] | None = None,
    runners: list[str] | None = None,
    timing: dict | None = None,
    quick: bool = False,
    timeout: float = 300.0,
    progress: bool = True,
) -> dict:
    """Measure, write scaling.md / scaling.json / scaling.png into out_dir (unless None), return the results."""
    import parallel_pool
    from parallel_pool.bench.report import machine_info

    started = time.time()
    cores = available_cores()
    tasks = list(tasks or (("CartPole-v1",) if quick else SCALING_TASKS))
    bad = [t for t in tasks if t not in TASKS]
    if bad:
        raise ValueError(f"unknown scaling task(s) {bad}; choose from {list(SCALING_TASKS)}")
    threads = sorted(set(threads or ([1, 2] if quick else thread_counts(cores))))
    if threads[0] < 1:
        raise ValueError(f"--threads must be >= 1, got {threads}")
    ours = set(parallel_pool.list_all_envs(include_unlisted=True))
    theirs = envpool_tasks() if not runners or "envpool" in runners else set()
    cells, skipped = plan(tasks, threads, cores, runners, ours, theirs)
    res: dict = {
        "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine_info(),
        "cores": cores,
        "tasks": tasks,
        "threads": threads,
        "timing": dict(timing or (QUICK if quick else FULL)),
        "skipped": skipped,
        "load_before": list(os.getloadavg()),
    }
    measure(cells, res["timing"], timeout, progress)
    res["bare"] = bare_rates([t for t in tasks if any(c["task"] == t for c in cells)], quick)
    res.update(cells=cells, load_after=list(os.getloadavg()), elapsed_s=time.time() - started)
    if out_dir is not None:
        os.makedirs(out_dir, exist_ok=True)
        files = {
            k: os.path.join(out_dir, f)
            for k, f in (("markdown", "scaling.md"), ("json", "scaling.json"), ("plot", "scaling.png"))
        }
        with open(files["markdown"], "w") as f:
            f.write(markdown(res))
        plot(res, files["plot"])
        res["files"] = files
        with open(files["json"], "w") as f:
            json.dump(res, f, indent=1)
    return res


def bare_rates(tasks: list[str], quick: bool) -> dict[str, float | None]:
    """{task: the physical limit's single-thread rate (parallel_pool.bench.limit), None where it cannot run}: t x
    that is the ceiling at t threads, whatever the engine's own 1-thread rate (ParallelPool's calling thread steps
    envs too, which lifts its 1-thread cell above one core's work)."""
    from parallel_pool.bench.limit import physical_limit

    out: dict[str, float | None] = {}
    for task in tasks:
        try:
            out[task] = physical_limit(task, 0.05 if quick else 1.0, 1 if quick else 3, 1)["single_thread"]
        except Exception:  # a task the loop cannot run: the table leaves the row out
            out[task] = None
    return out


def _ints(s: str) -> list[int]:
    return [int(x) for x in s.split(",") if x.strip()]


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    p = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="scaling_out", help="folder for scaling.md, scaling.json, scaling.png")
    p.add_argument("--tasks", default=None, help=f"comma-separated (default {','.join(SCALING_TASKS)})")
    p.add_argument("--threads", type=_ints, default=None, help="comma-separated (default 1,2,4,...,cores)")
    p.add_argument("--runners", default=None, help=f"only these, from {','.join(ENGINES)}")
    p.add_argument("--repeats", type=int, default=None, help=f"timed repeats per cell (default {FULL['repeats']})")
    p.add_argument("--duration", type=float, default=None, help=f"seconds per repeat (default {FULL['duration']})")
    p.add_argument("--quick", action="store_true", help="CartPole-v1 at 1 and 2 threads, tiny repeats (a smoke run)")
    p.add_argument("--no-progress", action="store_true")
    a = p.parse_args(argv)
    runners = [r.strip() for r in a.runners.split(",")] if a.runners else None
    if runners and any(r not in ENGINES for r in runners):
        p.error(f"unknown runner(s) {[r for r in runners if r not in ENGINES]}; choose from {list(ENGINES)}")
    timing = dict(QUICK if a.quick else FULL)
    if a.repeats is not None:
        timing["repeats"] = a.repeats
    if a.duration is not None:
        timing["duration"] = a.duration
    try:
        res = run(
            a.out,
            tasks=[t.strip() for t in a.tasks.split(",")] if a.tasks else None,
            threads=a.threads,
            runners=runners,
            timing=timing,
            quick=a.quick,
            progress=not a.no_progress,
        )
    except ValueError as e:
        p.error(str(e))
    print(markdown(res))
    print(f"wrote {', '.join(res['files'].values())}")
    return 1 if any(c.get("error") for c in res["cells"]) else 0
