"""The stages of a full benchmark run beyond the per-task throughput cases, and the one summary table:

- physical limit per task: cores x the bare env's single-thread rate (parallel_pool.bench.limit; ViZDoom: vizdoom's
  own single-game loop);
- loaded: async throughput ParallelPool / EnvPool under competing processes (parallel_pool.bench.suites.contention);
- memory: RSS per env at 1K envs, ParallelPool vs EnvPool, each measured in a fresh process.

`summary_markdown` turns them and the throughput cases into the table at the top of the report, and `plot_limits`
draws the fraction of the physical limit per task.
"""

from __future__ import annotations

import math
import statistics

from parallel_pool.bench.cases import TASKS

MEMORY_ENVS = 1000
MEMORY_TIMING = {"warmup": 0.01, "duration": 0.01, "repeats": 1, "action_batches": 64}


def measure_limits(tasks: list[str], cores: int, seconds: float, repeats: int) -> dict:
    """{task: {"single_thread", "cores", "limit"}} from the bare C++ loop (tasks that fail are left out)."""
    from parallel_pool.bench.limit import physical_limit

    out = {}
    for task in tasks:
        try:
            out[task] = physical_limit(task, seconds, repeats, cores)
        except Exception as e:  # a task the bare loop cannot run: fall back to the pool's single-core cases
            out[task] = {"error": f"{type(e).__name__}: {e}"}
    return out


def measure_memory(engines: dict[str, list[str]], num_envs: int, cores: int, timeout: float) -> list[dict]:
    """Peak RSS per env at num_envs envs (sync, num_threads = cores) of each task's engines ({task: [runner, ...]}),
    each in a fresh process."""
    from parallel_pool.bench.measure import run_isolated

    rows = []
    for task, runners in engines.items():
        for runner in runners:
            case = {
                "task": task,
                "runner": runner,
                "mode": "sync",
                "num_envs": num_envs,
                "batch_size": num_envs,
                "num_threads": min(cores, num_envs),
            }
            res = run_isolated(case, MEMORY_TIMING, timeout)
            rows.append({**case, "mem_per_env_bytes": res.get("mem_per_env_bytes"), "error": res.get("error")})
    return rows


def _best(results: dict, task: str, runner: str, mode: str) -> dict | None:
    """The runner's main case of `task` in `mode` at the largest num_envs measured."""
    cs = [
        c
        for c in results["cases"]
        if c["task"] == task
        and c["runner"] == runner
        and c["mode"] == mode
        and "main" in c["purpose"]
        and "call" not in c  # the Python loop's case, not the xla() scan's
        and "error" not in c
        and c.get("steps_per_s")
    ]
    return max(cs, key=lambda c: c["num_envs"]) if cs else None


def fractions(results: dict) -> dict:
    """{task: {"<runner> <mode>": fraction of the physical limit at the largest num_envs}}."""
    out: dict = {}
    for task in results["tasks"]:
        lim = results["limits"][task]["limit_steps_per_s"]
        if not lim:
            continue
        row = {}
        for runner in ("parallel_pool", "envpool"):
            for mode in ("sync", "async"):
                c = _best(results, task, runner, mode)
                if c is not None:
                    row[f"{runner} {mode}"] = c["steps_per_s"] / lim
        out[task] = row
    return out


def fmt_rate(x: float | None) -> str:
    """A rate for a table cell: 1.23M, 45.6K, 789, or — when there is none."""
    if x is None or not math.isfinite(x):
        return "—"
    if x >= 1e6:
        return f"{x / 1e6:.2f}M"
    if x >= 1e3:
        return f"{x / 1e3:.1f}K"
    return f"{x:.0f}"


def _loaded_cell(results: dict, task: str) -> str:
    rows = [r for r in results.get("loaded", []) if r["task"] == task and r["load"] != "quiet" and r["ratio"]]
    if not rows:
        return "—"
    worst = min(rows, key=lambda r: r["ratio"])
    med = statistics.median(r["ratio"] for r in rows)
    return f"{med:.2f}× (worst {worst['ratio']:.2f}×, {worst['load']})"


def _memory_cell(results: dict, task: str) -> str:
    rows = {r["runner"]: r for r in results.get("memory", []) if r["task"] == task}
    if not rows:
        return "—"

    def kib(r: dict | None) -> str:
        if r is None or not r.get("mem_per_env_bytes"):
            return "—" if r is None or not r.get("error") else "error"
        return f"{r['mem_per_env_bytes'] / 1024:,.0f}"

    return " / ".join(kib(rows.get(r)) for r in ("parallel_pool", "envpool"))


def summary_markdown(results: dict) -> list[str]:
    """One row per task: the largest-size sync and async rates (× EnvPool, fraction of the physical limit), the
    loaded ratio and memory per env at 1K envs."""
    if not results.get("tasks"):
        return []
    mem_n = results.get("memory_num_envs", MEMORY_ENVS)
    lines = [
        "## Summary",
        "",
        "Largest num_envs of each task. **limit** = cores × the bare env's single-thread rate (one env stepped in a "
        "tight C++ loop, no pool, no Python; ViZDoom, whose step waits on the engine's own process: vizdoom's own "
        "single-game loop, per CPU-second of both processes); ParallelPool's rate as a fraction of it. "
        "**loaded** = ParallelPool / "
        "EnvPool async steps/s under competing load (median over the load shapes, worst named; see *Under load*). "
        f"**KiB/env** = peak RSS per env at {mem_n} envs, ParallelPool / EnvPool.",
        "",
        "| task | family | bare env, 1 thread | limit | ParallelPool sync (× EnvPool, of limit) | "
        "ParallelPool async (× EnvPool, of limit) | loaded | KiB/env |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for task in results["tasks"]:
        lim = results["limits"][task]
        cells = []
        for mode in ("sync", "async"):
            c = _best(results, task, "parallel_pool", mode)
            if c is None:
                cells.append("—")
                continue
            v = f"{fmt_rate(c['steps_per_s'])} @{c['num_envs']}"
            extra = []
            if c.get("vs_envpool"):
                extra.append(f"{c['vs_envpool']:.2f}×")
            if c.get("vs_limit"):
                extra.append(f"{100 * c['vs_limit']:.0f}%")
            cells.append(v + (f" ({', '.join(extra)})" if extra else ""))
        bare = lim.get("bare_steps_per_s")
        lines.append(
            f"| {task} | {family(task)} | {fmt_rate(bare) if bare else '—'} | {fmt_rate(lim['limit_steps_per_s'])} | "
            + " | ".join(cells)
            + f" | {_loaded_cell(results, task)} | {_memory_cell(results, task)} |"
        )
    lines.append("")
    return lines + per_call_markdown(results)


def measure_per_call(calls: int, repeats: int) -> dict:
    """1-env CartPole-v1: one gymnasium front-end `step()`, one arrays-only `step_arrays()` of the same kind of pool
    and one plain gymnasium step (`gymnasium.make` with its wrappers, reset when done: the for-loop runner at one
    env), each built by runners.build and timed by its loop, in this process, alternating, each the best (lowest)
    mean over `repeats` batches of `calls` calls. Calls of a few µs vary several-fold between processes on a shared
    VM (the runner's isolated cases), while the best batch within one process is steady. One contender is alive at
    a time (a second idle pool's worker threads would compete for the cores), so each batch builds its runner and
    warms it up first."""
    import array

    from parallel_pool.bench import runners

    one = {"task": "CartPole-v1", "mode": "sync", "num_envs": 1, "batch_size": 1, "num_threads": 1}
    contenders = {
        "ours": dict(one, runner="parallel_pool", call="step"),
        "arrays": dict(one, runner="parallel_pool", call="step_arrays"),
        "plain": dict(one, runner="for_loop", num_threads=0),
        "loop": dict(one, runner="noop"),  # the timed loop's own cost per call, included in the three above
    }
    ts = array.array("d", bytes(8 * (calls + 1)))
    best = {name: math.inf for name in contenders}
    for _ in range(repeats):
        for name, case in contenders.items():
            r = runners.build(case)
            try:
                r.start()
                r.loop(min(calls, 1000), ts)  # warm-up: first-call costs, caches
                r.loop(calls, ts)
                best[name] = min(best[name], (ts[calls] - ts[0]) / calls)
            finally:
                r.close()
    return {
        "ours_us": best["ours"] * 1e6,
        "plain_us": best["plain"] * 1e6,
        "ratio": best["ours"] / best["plain"],
        "arrays_us": best["arrays"] * 1e6,
        "arrays_ratio": best["arrays"] / best["plain"],
        "loop_us": best["loop"] * 1e6,
        "calls": calls,
        "repeats": repeats,
    }


def per_call_markdown(results: dict) -> list[str]:
    """1-env CartPole: one gymnasium front-end step as a fraction of one plain gymnasium env step: from
    measure_per_call when the run has it, else the two medians of the runner's cases (the for-loop runner at 1
    env)."""
    pc = results.get("per_call")
    if pc:
        return [
            f"**Per call**: a 1-env CartPole-v1 `step()` through the gymnasium front-end takes {pc['ours_us']:.2f} µs, "
            f"{pc['ratio']:.2f}× one plain gymnasium CartPole-v1 step ({pc['plain_us']:.2f} µs, `gymnasium.make` with "
            f"its wrappers, reset when done; goal ≤ 0.15×); the arrays-only call `step_arrays()` (the engine's "
            f"batch without gymnasium's tuple and info dict) {pc['arrays_us']:.2f} µs, {pc['arrays_ratio']:.2f}×; "
            f"all in one process, alternating, best mean of {pc['repeats']} batches of {pc['calls']:,} calls"
            + (f" (each includes the harness's own {pc['loop_us']:.2f} µs per call)." if "loop_us" in pc else "."),
            "",
        ]

    def one(runner: str) -> dict | None:
        return next(
            (
                c
                for c in results["cases"]
                if c["task"] == "CartPole-v1"
                and c["runner"] == runner
                and c["mode"] == "sync"
                and c["num_envs"] == 1
                and "main" in c["purpose"]
                and "error" not in c
            ),
            None,
        )

    ours, plain = one("parallel_pool"), one("for_loop")
    if ours is None or plain is None:
        return []
    r = ours["latency_median_us"] / plain["latency_median_us"]
    return [
        f"**Per call**: a 1-env CartPole-v1 `step()` through the gymnasium front-end takes "
        f"{ours['latency_median_us']:.2f} µs (median), {r:.2f}× one plain gymnasium CartPole-v1 step "
        f"({plain['latency_median_us']:.2f} µs, `gymnasium.make` with its wrappers, reset when done; goal ≤ 0.15×).",
        "",
    ]


def family(task: str) -> str:
    try:
        from parallel_pool.families import family_of

        return family_of(TASKS[task].id) or "—"
    except Exception:
        return "—"


def plot_limits(results: dict, path: str) -> None:
    """Bars: each engine's throughput at the largest num_envs as a fraction of the task's physical limit."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fr = fractions(results)
    tasks = [t for t in results["tasks"] if fr.get(t)]
    keys = ["parallel_pool sync", "parallel_pool async", "envpool sync", "envpool async"]
    names = {"parallel_pool": "ParallelPool", "envpool": "EnvPool"}
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(tasks) + 2), 4))
    width = 0.8 / len(keys)
    for i, k in enumerate(keys):
        xs = [j + (i - (len(keys) - 1) / 2) * width for j in range(len(tasks))]
        ax.bar(
            xs,
            [fr[t].get(k, 0.0) for t in tasks],
            width,
            label=f"{names[k.split()[0]]} {k.split()[1]}",
            hatch="//" if k.endswith("async") else None,
        )
    ax.axhline(1.0, color="gray", ls="-.", lw=1)
    ax.set_xticks(range(len(tasks)), [f"{t}\n({family(t)})" for t in tasks], fontsize=8)
    ax.set_ylabel("fraction of physical limit")
    ax.set_title(f"Throughput / (cores × bare single-thread rate), {results['settings']['cores']} cores", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
