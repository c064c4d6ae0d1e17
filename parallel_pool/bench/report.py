"""Turn a run's results into the markdown table (results.md), the plot (bench.png) and results.json."""

from __future__ import annotations

import json
import math
import os
import platform
from typing import Any

from parallel_pool.bench import summary
from parallel_pool.bench.cases import POOL_RUNNERS, RUNNERS, TASKS
from parallel_pool.bench.limit import BARE_LOOP
from parallel_pool.bench.summary import fmt_rate

# the throughput targets for CartPole-v1 (ParallelPool / EnvPool, same mode, at these num_envs): the per-call
# overhead is what a small env feels, so the fewer envs per call, the larger the lead it must keep
TARGETS = {1: 3.0, 8: 1.5, 256: 1.2}
_ORDER = list(RUNNERS)


def machine_info() -> dict:
    """What the table needs to say about the machine (lscpu's model name, cores, memory, versions)."""
    info: dict = {"platform": platform.platform(), "python": platform.python_version()}
    try:
        with open("/proc/cpuinfo") as f:
            names = [ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")]
        info["cpu"] = names[0] if names else platform.processor()
    except OSError:
        info["cpu"] = platform.processor()
    info["logical_cpus"] = os.cpu_count()
    try:
        import psutil

        info["physical_cores"] = psutil.cpu_count(logical=False)
        info["memory_gib"] = round(psutil.virtual_memory().total / 2**30, 1)
    except Exception:
        pass
    versions = {}
    for mod in ("parallel_pool", "numpy", "gymnasium", "envpool", "ale_py", "mujoco"):
        try:
            from importlib.metadata import version

            versions[mod] = version({"parallel_pool": "parallel-pool", "ale_py": "ale-py"}.get(mod, mod))
        except Exception:
            pass
    info["versions"] = versions
    return info


def _fmt(x: float | None, digits: int = 1) -> str:
    if x is None or not math.isfinite(x):
        return "—"
    return f"{x:,.{digits}f}"


def _ok(c: dict) -> bool:
    return "error" not in c and c.get("steps_per_s") is not None


def single_core(results: dict, task: str) -> tuple[float | None, str]:
    """Best one-thread rate of the task's single-core cases, and which runner gave it."""
    best, who = None, ""
    for c in results["cases"]:
        if c["task"] == task and "single_core" in c["purpose"] and _ok(c):
            if best is None or c["steps_per_s"] > best:
                where = "one thread, process pinned to one CPU" if c.get("pin_cpu") else "one thread"
                best, who = c["steps_per_s"], f"{c['label']}, {c['num_envs']} envs on {where}"
    return best, who


def envpool_ref(results: dict, c: dict) -> float | None:
    """EnvPool's rate for the same task, num_envs and mode (sync for the non-pool runners); for the engines, with
    the same num_threads where EnvPool was measured with it (thread scaling), else EnvPool's main case; an xla()
    case against EnvPool's xla(), every other case against EnvPool's Python loop."""
    mode = c["mode"] if c["runner"] in POOL_RUNNERS else "sync"
    same = [
        o
        for o in results["cases"]
        if o["runner"] == "envpool"
        and o["task"] == c["task"]
        and _ok(o)
        and o["num_envs"] == c["num_envs"]
        and o["mode"] == mode
        and o.get("call") == c.get("call")
    ]
    if c["runner"] in POOL_RUNNERS:
        for o in same:
            if o["num_threads"] == c["num_threads"] and o["batch_size"] == c["batch_size"]:
                return o["steps_per_s"]
    for o in same:
        if "main" in o["purpose"]:
            return o["steps_per_s"]
    return None


def annotate(results: dict) -> None:
    """Add ratios to EnvPool and to the physical limit to every case, and per-task limits."""
    cores = results["settings"]["cores"]
    results["limits"] = {}
    for task in results["tasks"]:
        sc, who = single_core(results, task)
        measured = results.get("bare", {}).get(task, {})
        bare = measured.get("single_thread")
        if bare:  # the bare env's loop is the physical limit; the pool's one-thread cases only stand in for it
            sc, who = bare, measured.get("source", BARE_LOOP)
        results["limits"][task] = {
            "single_core_steps_per_s": sc,
            "bare_steps_per_s": bare,
            "from": who,
            "cores": cores,
            "limit_steps_per_s": None if sc is None else sc * cores,
        }
    for c in results["cases"]:
        if not _ok(c):
            continue
        ref = envpool_ref(results, c)
        c["vs_envpool"] = None if ref is None else c["steps_per_s"] / ref
        lim = results["limits"][c["task"]]["limit_steps_per_s"]
        c["vs_limit"] = None if not lim else c["steps_per_s"] / lim


def _main_cases(results: dict, task: str) -> list[dict]:
    cs = [c for c in results["cases"] if c["task"] == task and "main" in c["purpose"]]
    return sorted(cs, key=lambda c: (_ORDER.index(c["runner"]), "call" in c, c["mode"] != "sync", c["num_envs"]))


def _labels(cases: list[dict]) -> list[str]:
    out: list[str] = []
    for c in cases:
        if c["label"] not in out:
            out.append(c["label"])
    return out


def markdown(results: dict) -> str:
    m, s = results["machine"], results["settings"]
    t = s["timing"]
    lines = ["# ParallelPool benchmark", ""]
    lines.append(
        f"- Machine: {m.get('cpu', '?')}; {s['cores']} cores available to the run "
        f"({m.get('logical_cpus')} logical, {m.get('physical_cores', '?')} physical); "
        f"{m.get('memory_gib', '?')} GiB memory; {m.get('platform')}; Python {m.get('python')}"
    )
    lines.append("- Versions: " + ", ".join(f"{k} {v}" for k, v in m.get("versions", {}).items()))
    la, lb = results.get("load_before"), results.get("load_after")
    if la and lb:
        lines.append(
            f"- Load average (1/5/15 min) before the run: {la[0]:.2f} / {la[1]:.2f} / {la[2]:.2f}; "
            f"after: {lb[0]:.2f} / {lb[1]:.2f} / {lb[2]:.2f}"
            + (" — **the machine was busy; figures are disturbed**" if max(la[0], lb[0]) > 0.5 * s["cores"] else "")
        )
    lines.append(
        f"- Method: random actions precomputed ({t.get('action_batches', 64)} batches, cycled); "
        f"warm-up {t['warmup']} s; {t['repeats']} repeats of ~{t['duration']} s; median of the repeats "
        f"reported; each case in {'its own fresh process' if s['isolated'] else 'one shared process'}"
        f"{' (quick mode)' if s['quick'] else ''}; started {results.get('started', '?')}, "
        f"took {results.get('elapsed_s', 0):.0f} s."
    )
    lines.append(
        "- Sync: `step(actions)` on all num_envs envs. Async: num_envs envs in flight, each call is "
        "`recv()` of batch_size = num_envs/2 envs + `send(actions, env_id)`. Engines (ParallelPool, EnvPool, "
        "ale_py's vector env) run with num_threads = min(batch_size, cores), the threads column (the thread-scaling "
        "table has the other counts; ParallelPool's own default is min(batch_size, cores - 1), its caller stepping "
        "envs too). Latency is per call. CPU = cores busy during the timed "
        "repeats (process + children). Memory/env = (peak RSS of the measuring process after the env was "
        'made − RSS just before, + PSS of child processes) / num_envs. "steps/s at p50 call" = steps per '
        "call / median call time: what an undisturbed call achieves (robust to a busy machine; steps/s, "
        "the mean rate, includes the time lost to descheduling)."
    )
    if results.get("skipped"):
        lines.append("- Not measured: " + "; ".join(results["skipped"]))
    lines.append("")
    lines += summary.summary_markdown(results)
    if results.get("loaded"):
        lines += ["## Under load", ""] + loaded_markdown(results["loaded"])
    for task in results["tasks"]:
        lines += _task_markdown(results, task)
    errors = [c for c in results["cases"] if not _ok(c)]
    if errors:
        lines += ["## Failed cases", ""]
        for c in errors:
            lines.append(f"- {c['task']} {c['label']} num_envs={c['num_envs']}: {c.get('error')}")
        lines.append("")
    return "\n".join(lines)


def _task_markdown(results: dict, task: str) -> list[str]:
    cases = _main_cases(results, task)
    fs = TASKS[task].frame_skip
    lim = results["limits"][task]
    lines = [f"## {task}", ""]
    if TASKS[task].note:
        lines += [f"{TASKS[task].note}.", ""]
    if lim["single_core_steps_per_s"]:
        lines += [
            f"Single-core rate: {fmt_rate(lim['single_core_steps_per_s'])} steps/s ({lim['from']}); "
            f"physical limit = {lim['cores']} cores × that = {fmt_rate(lim['limit_steps_per_s'])} steps/s.",
            "",
        ]
    sizes = sorted({c["num_envs"] for c in cases})
    unit = "frames/s" if fs > 1 else "steps/s"
    lines.append(f"**{unit} (× EnvPool, same mode)**" + (f" — frames = steps × frame_skip {fs}" if fs > 1 else ""))
    lines.append("")
    lines.append("| runner | " + " | ".join(f"{n} env{'s' if n > 1 else ''}" for n in sizes) + " |")
    lines.append("|---|" + "---:|" * len(sizes))
    for label in _labels(cases):
        row = [label]
        for n in sizes:
            c = next((c for c in cases if c["label"] == label and c["num_envs"] == n), None)
            if c is None:
                row.append("—")
            elif not _ok(c):
                row.append("error")
            else:
                v = fmt_rate(c["steps_per_s"] * fs)
                if c.get("vs_envpool") is not None and c["runner"] != "envpool":
                    v += f" ({c['vs_envpool']:.2f}×)"
                row.append(v)
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    lines.append("**Details**")
    lines.append("")
    head = (
        ["runner", "num_envs", "batch", "threads", "steps/s"]
        + (["frames/s"] if fs > 1 else [])
        + ["× EnvPool", "% of limit", "latency p50 µs", "latency p99 µs", "steps/s at p50 call", "CPU cores", "KiB/env"]
    )
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|---|" + "---:|" * (len(head) - 1))
    for c in cases:
        if not _ok(c):
            lines.append(
                f"| {c['label']} | {c['num_envs']} | {c['batch_size']} | {c['num_threads'] or '—'} | error: "
                f"{c.get('error', '')[:80]} |" + " |" * (len(head) - 5)
            )
            continue
        row = [
            c["label"],
            str(c["num_envs"]),
            str(c["batch_size"]),
            str(c["num_threads"] or "—"),
            f"{c['steps_per_s']:,.0f}",
        ]
        if fs > 1:
            row.append(f"{c['frames_per_s']:,.0f}")
        row += [
            _fmt(c.get("vs_envpool"), 2) + ("×" if c.get("vs_envpool") else ""),
            _fmt(None if c.get("vs_limit") is None else 100 * c["vs_limit"], 1) + ("%" if c.get("vs_limit") else ""),
            _fmt(c["latency_median_us"], 1),
            _fmt(c["latency_p99_us"], 1),
            f"{c['steps_per_s_at_median_call']:,.0f}",
            _fmt(c["cpu_cores_used"], 2),
            _fmt(c["mem_per_env_bytes"] / 1024, 1),
        ]
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    scal = [c for c in results["cases"] if c["task"] == task and "scaling" in c["purpose"]]
    if scal:
        threads = sorted({c["num_threads"] for c in scal})
        n = scal[0]["num_envs"]
        lines.append(f"**Thread scaling, {n} envs: steps/s by num_threads**")
        lines.append("")
        lines.append("| runner | " + " | ".join(str(t) for t in threads) + " |")
        lines.append("|---|" + "---:|" * len(threads))
        for label in _labels(sorted(scal, key=lambda c: (_ORDER.index(c["runner"]), c["mode"] != "sync"))):
            row = [label]
            for t in threads:
                c = next((c for c in scal if c["label"] == label and c["num_threads"] == t), None)
                row.append("—" if c is None else ("error" if not _ok(c) else fmt_rate(c["steps_per_s"])))
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
    if task == "CartPole-v1":
        lines += _targets(results, cases)
    return lines


def _targets(results: dict, cases: list[dict]) -> list[str]:
    out = []
    for n, target in TARGETS.items():
        for mode in ("sync", "async"):
            c = next(
                (
                    c
                    for c in cases
                    if c["runner"] == "parallel_pool" and c["mode"] == mode and c["num_envs"] == n and _ok(c)
                ),
                None,
            )
            if c is None or c.get("vs_envpool") is None:
                continue
            r = c["vs_envpool"]
            out.append(
                f"{n} env{'s' if n > 1 else ''} {mode}: {r:.2f}× "
                f"(target ≥ {target}×: {'met' if r >= target else 'NOT met'})"
            )
    if not out:
        return []
    return ["**Targets (ParallelPool / EnvPool, CartPole-v1):** " + "; ".join(out) + ".", ""]


def plot(results: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = results["tasks"]
    fig, axes = plt.subplots(
        len(tasks), 4, figsize=(20, 4.2 * len(tasks)), squeeze=False, gridspec_kw={"width_ratios": [1, 1, 1, 0.5]}
    )
    colors: dict[str, Any] = {}
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for row, task in zip(axes, tasks):
        cases = [c for c in _main_cases(results, task) if _ok(c)]
        fs = TASKS[task].frame_skip
        unit = "frames/s" if fs > 1 else "steps/s"
        for label in _labels(cases):
            cs = sorted((c for c in cases if c["label"] == label), key=lambda c: c["num_envs"])
            col = colors.setdefault(label, palette[len(colors) % len(palette)])
            style = "--" if label.endswith("async") else "-"
            x = [c["num_envs"] for c in cs]
            row[0].plot(x, [c["steps_per_s"] * fs for c in cs], style, marker="o", color=col, label=label)
            row[1].plot(x, [c["latency_median_us"] for c in cs], style, marker="o", color=col, label=label)
            row[1].plot(x, [c["latency_p99_us"] for c in cs], ":", marker="x", color=col, alpha=0.6)
        lim = results["limits"][task]["limit_steps_per_s"]
        if lim:
            row[0].axhline(lim * fs, color="gray", ls="-.", lw=1, label="physical limit")
        row[0].set(yscale="log", xlabel="num_envs", ylabel=unit, title=f"{task}: throughput")
        row[1].set(
            yscale="log", xlabel="num_envs", ylabel="µs per call", title=f"{task}: latency per call (o median, x p99)"
        )
        sizes = sorted({c["num_envs"] for c in cases})
        for ax in row[:2]:
            ax.set_xscale("log", base=2)
            if sizes:
                ax.set_xticks(sizes, [str(n) for n in sizes])
                ax.minorticks_off()
        scal = [c for c in results["cases"] if c["task"] == task and "scaling" in c["purpose"] and _ok(c)]
        for label in _labels(scal):
            cs = sorted((c for c in scal if c["label"] == label), key=lambda c: c["num_threads"])
            col = colors.setdefault(label, palette[len(colors) % len(palette)])
            row[2].plot(
                [c["num_threads"] for c in cs],
                [c["steps_per_s"] * fs for c in cs],
                "--" if label.endswith("async") else "-",
                marker="o",
                color=col,
                label=label,
            )
        n = scal[0]["num_envs"] if scal else "?"
        row[2].set(xlabel="num_threads", ylabel=unit, title=f"{task}: thread scaling ({n} envs)")
        if scal:
            row[2].set_xticks(sorted({c["num_threads"] for c in scal}))
        if scal:
            row[2].set_ylim(bottom=0)
        for ax in row[:3]:
            ax.grid(True, which="both", alpha=0.3)
        handles: dict = {}
        for ax in row[:3]:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                handles.setdefault(lab, h)
        row[3].axis("off")
        row[3].legend(
            list(handles.values()),
            list(handles.keys()),
            loc="center",
            fontsize=8,
            title=f"{task}\n(dashed: async)",
            title_fontsize=8,
        )
    m = results["machine"]
    la = results.get("load_before")
    fig.suptitle(
        f"ParallelPool benchmark — {m.get('cpu', '?')}, {results['settings']['cores']} cores"
        + (f", load avg {la[0]:.1f} at start" if la else "")
        + (" (quick mode)" if results["settings"]["quick"] else ""),
        fontsize=11,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def write(results: dict, out_dir: str) -> dict[str, str]:
    os.makedirs(out_dir, exist_ok=True)
    paths = {
        "json": os.path.join(out_dir, "results.json"),
        "markdown": os.path.join(out_dir, "results.md"),
        "plot": os.path.join(out_dir, "bench.png"),
        "limit_plot": os.path.join(out_dir, "limit.png"),
    }
    results["files"] = paths
    with open(paths["json"], "w") as f:
        json.dump(results, f, indent=1, default=str)
    with open(paths["markdown"], "w") as f:
        f.write(markdown(results) + "\n")
    plot(results, paths["plot"])
    summary.plot_limits(results, paths["limit_plot"])
    return paths


def update_doc(results: dict, doc: str, title: str) -> str:
    """Put this run's table and plot into `doc` (e.g. docs/benchmarks.md) as the section `title`: the text between
    `<!-- bench:<slug> -->` and `<!-- /bench:<slug> -->` is replaced (appended at the end if absent), and the plot is
    copied to `<doc dir>/img/bench_<slug>.png`. Returns the slug."""
    import re
    import shutil

    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "machine"
    img_dir = os.path.join(os.path.dirname(os.path.abspath(doc)), "img")
    os.makedirs(img_dir, exist_ok=True)
    shutil.copyfile(results["files"]["plot"], os.path.join(img_dir, f"bench_{slug}.png"))
    shutil.copyfile(results["files"]["limit_plot"], os.path.join(img_dir, f"limit_{slug}.png"))
    body = markdown(results).split("\n", 2)[2]  # without the "# ParallelPool benchmark" title
    body = re.sub(r"^## ", "#### ", body, flags=re.M)
    section = (
        f"<!-- bench:{slug} -->\n### {title}\n\n{body.strip()}\n\n"
        f"![fraction of the physical limit: {title}](img/limit_{slug}.png)\n\n"
        f"![benchmark plot: {title}](img/bench_{slug}.png)\n<!-- /bench:{slug} -->"
    )
    text = open(doc).read() if os.path.exists(doc) else "# Benchmarks\n"
    pat = re.compile(rf"<!-- bench:{re.escape(slug)} -->.*?<!-- /bench:{re.escape(slug)} -->", re.S)
    text = pat.sub(lambda _: section, text) if pat.search(text) else text.rstrip("\n") + "\n\n" + section + "\n"
    with open(doc, "w") as f:
        f.write(text)
    return slug


def loaded_markdown(rows: list) -> list[str]:
    """The table of the results' "loaded" rows (parallel_pool.bench.suites.contention measures them)."""
    if not rows:
        return []
    n, b, t = rows[0]["num_envs"], rows[0]["batch_size"], rows[0]["num_threads"]
    loads = list(dict.fromkeys(r["load"] for r in rows))
    lines = [
        f"**Under load: async steps/s, ParallelPool / EnvPool** ({n} envs, batch {b}, {t} threads; loads: quiet = "
        "none, spinN = N busy-looping processes, torch = an MLP training on all cores; median of alternating runs)",
        "",
        "| task | " + " | ".join(loads) + " |",
        "|---|" + "---:|" * len(loads),
    ]
    for task in dict.fromkeys(r["task"] for r in rows):
        cells = []
        for load in loads:
            r = next((r for r in rows if r["task"] == task and r["load"] == load), None)
            cells.append(
                "—"
                if r is None or r["ratio"] is None
                else f"{r['ratio']:.2f}× ({r['parallel_pool']:,.0f} / {r['envpool']:,.0f})"
            )
        lines.append(f"| {task} | " + " | ".join(cells) + " |")
    return lines + [""]
