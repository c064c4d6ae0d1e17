"""Plots and a table from the JSONL run logs of ppo_continuous.py / ppo_atari.py / ppo_jax.py, and nothing else.

    python examples/train/report.py docs/training --score HalfCheetah-v5=500 --doc docs/training.md

Reads every *.jsonl under the folder (a file is one run; a resumed run appends its segments to it), and writes into
the folder (or --out):
- <task>.png: episodic return against wall-clock time and against env steps, one line per backend (the mean over
  seeds, with a band from the lowest to the highest seed when there are several);
- report.md: per task and backend, the time and env steps to reach the score, the final and best return, the steps/s
  of the whole training loop (env + learner), the fraction of the time spent in the env, the learner's, the peak RSS
  (this process + its children) and its growth over the run's second half, the slowest update against the median
  one, the env's seconds per 1k steps, the learner's per update, the load average.
With --doc, report.md's table also replaces the text between `<!-- training-report:start -->` and
`<!-- training-report:end -->` in that file (--section NAME: between `<!-- NAME:start -->` and `<!-- NAME:end -->`).
The curve is the mean return of the last --window episodes finished (all envs together), sampled at each update.
When a run logged deterministic evaluations (`eval_return`, ppo_jax.py's --eval-every), its time and steps to score
are those of the first evaluation at or above the score, and the plots show the evaluations as markers.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import read_log  # noqa: E402

# the score each task is timed to (--score overrides): the issue's targets for Pong and Ant
SCORES = {"Pong-v5": 20.0, "Ant-v5": 5000.0}
BACKEND_ORDER = ("pp-xla", "pp", "pp-async", "envpool-xla", "envpool", "gymnasium")
COLORS = {
    "pp-xla": "tab:purple",
    "pp": "tab:blue",
    "pp-async": "tab:cyan",
    "envpool-xla": "tab:red",
    "envpool": "tab:orange",
    "gymnasium": "tab:green",
}
MARK_START, MARK_END = "<!-- training-report:start -->", "<!-- training-report:end -->"  # --section's default


@dataclass
class Run:
    path: Path
    task: str
    backend: str
    seed: int
    command: str
    updates: list[dict] = field(default_factory=list)
    ended: str = ""  # the end line's reason ("" when the run was cut off)

    def curve(self, window: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(wall seconds, env steps, mean return of the last `window` episodes) at each update after the first
        episode ended."""
        done: list[float] = []
        wall, steps, ret = [], [], []
        for u in self.updates:
            done += u["returns"]
            if done:
                wall.append(u["wall"])
                steps.append(u["steps"])
                ret.append(float(np.mean(done[-window:])))
        return np.array(wall), np.array(steps), np.array(ret)

    def evals(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(wall seconds, env steps, return) of the deterministic evaluations the run logged (empty: none)."""
        ups = [u for u in self.updates if u.get("eval_return") is not None]
        return (
            np.array([u["wall"] for u in ups]),
            np.array([u["steps"] for u in ups]),
            np.array([u["eval_return"] for u in ups], dtype=float),
        )


def _fraction(ups: list[dict], key: str, total: float) -> float | None:
    """Sum of `key` over the updates / total; None when a run did not time that part (a fused jitted update)."""
    if any(u.get(key) is None for u in ups):
        return None
    return sum(u[key] for u in ups) / total


def load_runs(folder: Path) -> list[Run]:
    runs = []
    for path in sorted(folder.rglob("*.jsonl")):
        run = None
        for rec in read_log(path):
            if rec.get("kind") == "start" and (run is None or not rec.get("resumed")):
                # a fresh (not resumed) run appended to the same file replaces what was there
                run = Run(path, rec["task"], rec["backend"], rec["seed"], rec["command"])
            elif rec.get("kind") == "update" and run is not None:
                run.updates.append(rec)
            elif rec.get("kind") == "end" and run is not None:
                run.ended = rec["reason"]
        if run is not None and run.updates:
            runs.append(run)
    return runs


def summarize(run: Run, score: float | None, window: int) -> dict:
    wall, steps, ret = run.curve(window)
    ups = run.updates
    total_update = sum(u["update_s"] for u in ups)
    e_wall, e_steps, e_ret = run.evals()
    hit_wall, hit_steps = (e_wall, e_steps) if len(e_ret) else (wall, steps)
    hit_ret = e_ret if len(e_ret) else ret
    hit = np.flatnonzero(hit_ret >= score) if score is not None and len(hit_ret) else np.array([], dtype=int)
    rss = [u["rss_mb"] + u["rss_children_mb"] for u in ups]
    durations = [u["update_s"] for u in ups[1:]] or [ups[0]["update_s"]]  # the first update pays warm-up
    return {
        "wall": ups[-1]["wall"],
        "steps": ups[-1]["steps"],
        "time_to_score": float(hit_wall[hit[0]]) if len(hit) else None,
        "steps_to_score": int(hit_steps[hit[0]]) if len(hit) else None,
        "final": float(ret[-1]) if len(ret) else None,
        "best": float(ret.max()) if len(ret) else None,
        "episodes": sum(len(u["returns"]) for u in ups),
        "sps": ups[-1]["steps"] / ups[-1]["wall"],
        "env_frac": _fraction(ups, "env_s", total_update),
        "learn_frac": _fraction(ups, "learn_s", total_update),
        # the learner's allocator warms up over the first updates; a leak shows as growth in the second half
        "rss_growth": max(rss[len(rss) // 2 :]) - rss[len(rss) // 2],
        "rss_peak": max(rss),
        "slowest_over_median": max(durations) / statistics.median(durations),
        "ended": run.ended or "cut off",
        "env_per_1k": 1000 * env_s / ups[-1]["steps"] if (env_s := _fraction(ups, "env_s", 1.0)) is not None else None,
        "learn_median": statistics.median(u["learn_s"] for u in ups)
        if _fraction(ups, "learn_s", 1) is not None
        else None,
        "eval_final": float(e_ret[-1]) if len(e_ret) else None,
        "eval_best": float(e_ret.max()) if len(e_ret) else None,
        "load": statistics.median(u["load1"] for u in ups) if all("load1" in u for u in ups) else None,
    }


def _fmt(v: float | None, spec: str = ".0f") -> str:
    return "—" if v is None else format(v, spec)


def _pct(fraction: float | None) -> float | None:
    return None if fraction is None else 100 * fraction


def _many(values: list, spec: str = ".0f") -> str:
    """One value, or the seeds' values separated by slashes."""
    return " / ".join(_fmt(v, spec) for v in values)


def table(runs: list[Run], scores: dict[str, float], window: int) -> str:
    head = (
        "| task | backend | seeds | score | time to score (s) | env steps to score | final return | best return | "
        "env steps | wall (s) | steps/s (whole loop) | time in env | time in learner | peak RSS (MiB) | "
        "RSS growth, 2nd half (MiB) | "
        "slowest / median update | ended | env s per 1k steps | learner s per update (median) | "
        "load average (median) | evaluation: last / best |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    rows = []
    for task in sorted({r.task for r in runs}):
        score = scores.get(task)
        by_backend = {b: [r for r in runs if r.task == task and r.backend == b] for b in BACKEND_ORDER}
        for backend, group in by_backend.items():
            if not group:
                continue
            group.sort(key=lambda r: r.seed)
            s = [summarize(r, score, window) for r in group]
            rows.append(
                f"| {task} | {backend} | {', '.join(str(r.seed) for r in group)} | {_fmt(score)} | "
                f"{_many([x['time_to_score'] for x in s])} | {_many([x['steps_to_score'] for x in s])} | "
                f"{_many([x['final'] for x in s])} | {_many([x['best'] for x in s])} | "
                f"{_many([x['steps'] for x in s])} | {_many([x['wall'] for x in s])} | "
                f"{_many([x['sps'] for x in s])} | {_many([_pct(x['env_frac']) for x in s])}% | "
                f"{_many([_pct(x['learn_frac']) for x in s])}% | {_many([x['rss_peak'] for x in s])} | "
                f"{_many([x['rss_growth'] for x in s], '.1f')} | "
                f"{_many([x['slowest_over_median'] for x in s], '.2f')} | {', '.join(x['ended'] for x in s)} | "
                f"{_many([x['env_per_1k'] for x in s], '.2f')} | {_many([x['learn_median'] for x in s], '.2f')} | "
                f"{_many([x['load'] for x in s], '.1f')} | "
                f"{' / '.join(_fmt(x['eval_final']) + ' / ' + _fmt(x['eval_best']) for x in s)} |"
            )
    note = (
        f"\nReturn: mean of the last {window} episodes finished. Time in env: inside the backend's step/send/recv; "
        "in learner: the PPO update (the rest is policy inference and bookkeeping during the rollout). RSS: this "
        "process plus its children (gymnasium's worker processes); its growth is measured from the run's middle update "
        "to the peak after it (the first updates warm the learner's allocator up; a leak keeps growing). "
        "The learner is the same code in every run, so its time per update shows how loaded the machine was during "
        "that run; load average: the machine's 1-minute load average, logged at each update. Runs that logged "
        "deterministic evaluations of fresh envs are timed to the score by the first evaluation reaching it (last "
        "column: the last and the best evaluation); the others by the training return. A jitted update fused with its "
        "rollout is timed as a whole (—: no split); with --split-timing the rollout, env and policy in one scan, "
        "counts as env time.\n"
    )
    return head + "\n".join(rows) + "\n" + note


def plot(runs: list[Run], task: str, window: int, score: float | None, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for backend in BACKEND_ORDER:
        group = [r for r in runs if r.task == task and r.backend == backend]
        if not group:
            continue
        curves = [r.curve(window) for r in group]
        for ax, x_of, scale in ((axes[0], 0, 60.0), (axes[1], 1, 1.0)):
            xs = [c[x_of] / scale for c in curves if len(c[2])]
            ys = [c[2] for c in curves if len(c[2])]
            if not xs:
                continue
            for r in group:  # the deterministic evaluations, where the run logged them
                ev = r.evals()
                if len(ev[2]):
                    ax.plot(ev[x_of] / scale, ev[2], "o--", color=COLORS[backend], markersize=3, linewidth=0.8)
            if len(xs) == 1:
                ax.plot(xs[0], ys[0], label=backend, color=COLORS[backend])
                continue
            grid = np.linspace(max(x[0] for x in xs), min(x[-1] for x in xs), 200)
            ys_grid = np.array([np.interp(grid, x, y) for x, y in zip(xs, ys)])
            ax.plot(grid, ys_grid.mean(0), label=f"{backend} ({len(xs)} seeds)", color=COLORS[backend])
            ax.fill_between(grid, ys_grid.min(0), ys_grid.max(0), color=COLORS[backend], alpha=0.2)
    for ax, label in ((axes[0], "wall-clock time (minutes)"), (axes[1], "env steps")):
        if score is not None:
            ax.axhline(score, color="grey", linestyle=":", linewidth=1)
        ax.set_xlabel(label)
        ax.set_ylabel(f"episodic return (mean of last {window})")
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle(f"{task}: PPO, one line per env backend")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def markers(section: str) -> tuple[str, str]:
    return f"<!-- {section}:start -->", f"<!-- {section}:end -->"


def update_doc(doc: Path, text: str, section: str = "training-report") -> None:
    start, end = markers(section)
    body = doc.read_text()
    if start not in body or end not in body:
        raise ValueError(f"{doc} has no {start} ... {end} section to replace")
    head, rest = body.split(start, 1)
    _, tail = rest.split(end, 1)
    doc.write_text(f"{head}{start}\n{text}{end}{tail}")


def parse_scores(items: list[str]) -> dict[str, float]:
    scores = dict(SCORES)
    for item in items:
        task, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"--score takes TASK=VALUE, got {item!r}")
        scores[task] = float(value)
    return scores


def main(argv: list[str] | None = None) -> list[Path]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", type=Path, help="folder holding the runs' JSONL logs (searched recursively)")
    p.add_argument("--out", type=Path, default=None, help="where the PNGs and report.md go (default: the folder)")
    p.add_argument("--score", action="append", default=[], help="TASK=VALUE: the return each task is timed to")
    p.add_argument("--window", type=int, default=20, help="episodes in the return's moving mean")
    p.add_argument("--doc", type=Path, default=None, help="markdown file whose marked section gets the table")
    p.add_argument(
        "--section",
        default="training-report",
        help="--doc's section: between <!-- NAME:start --> and <!-- NAME:end -->",
    )
    a = p.parse_args(argv)
    runs = load_runs(a.folder)
    if not runs:
        raise SystemExit(f"no run logs (*.jsonl with update lines) under {a.folder}")
    scores = parse_scores(a.score)
    out = a.out or a.folder
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for task in sorted({r.task for r in runs}):
        png = out / f"{task}.png"
        png.parent.mkdir(parents=True, exist_ok=True)  # a namespaced id ("MPE/simple_spread-v3") is a folder
        plot(runs, task, a.window, scores.get(task), png)
        written.append(png)
    text = table(runs, scores, a.window)
    (out / "report.md").write_text(text)
    written.append(out / "report.md")
    if a.doc:
        update_doc(a.doc, text, a.section)
    for path in written:
        print(path)
    return written


if __name__ == "__main__":
    main()
