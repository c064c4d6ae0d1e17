"""The one measurement of every benchmark: build a case's runner (runners.build), warm up, time several repeats of
its loop, read CPU and memory.

`run_isolated(case, timing)` runs it in a fresh worker process (`python -m parallel_pool.bench.measure` reads
{"case": ..., "timing": ...} as JSON on stdin and prints one line `RESULT <json>` on stdout): each case in its own
process keeps peak-RSS figures clean (no memory left over from an earlier case, no other library loaded) and keeps
one contender's threads and imports away from the next. `measure_rounds` runs a table's contenders that way, round
robin. Every figure of `parallel-pool bench` comes from here, except the bare C++ loop (limit.py) and the per-call
figure, which is measured in one process on purpose (summary.measure_per_call says why) with the same runners.
"""

from __future__ import annotations

import array
import gc
import json
import math
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from parallel_pool.bench import runners


def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            m = re.search(rf"^{field}:\s+(\d+) kB", f.read(), re.M)
        return int(m.group(1)) if m else None
    except OSError:
        return None


def _rss() -> int:
    """Current resident set size of this process, bytes."""
    kib = _status_kib("VmRSS")
    if kib is not None:
        return kib * 1024
    import psutil

    return psutil.Process().memory_info().rss


def _reset_peak() -> bool:
    """Reset this process's peak-RSS counter (Linux >= 4.0: write 5 to /proc/self/clear_refs)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return _status_kib("VmHWM") is not None
    except OSError:
        return False


def _children(exclude: frozenset[int] = frozenset()):
    """This process's live child processes, less those in `exclude` (pids that were there before the contender:
    e.g. the multiprocessing forkserver an earlier pool of Python envs left running in the same process)."""
    try:
        import psutil

        return [c for c in psutil.Process().children(recursive=True) if c.pid not in exclude]
    except Exception:
        return []


def _children_memory(exclude: frozenset[int] = frozenset()) -> int:
    """Memory of the child processes (gymnasium AsyncVectorEnv's workers): their PSS, so pages they share with
    this process after fork are counted once; RSS where PSS cannot be read."""
    total = 0
    for c in _children(exclude):
        try:
            mi = c.memory_full_info()
            total += getattr(mi, "pss", mi.rss)
        except Exception:
            try:
                total += c.memory_info().rss
            except Exception:
                pass
    return total


def _cpu_seconds() -> float:
    """CPU time of this process and its live children."""
    t = os.times()
    total = t.user + t.system
    for c in _children():
        try:
            ct = c.cpu_times()
            total += ct.user + ct.system
        except Exception:
            pass
    return total


def _call_stats(ts, lat: np.ndarray, calls: int, k50: int, k99: int) -> tuple[float, float]:
    """Median and p99 of the call times ts[i + 1] - ts[i], computed in place in `lat` (no allocation)."""
    tv = np.frombuffer(ts, dtype=np.float64, count=calls + 1)
    d = lat[:calls]
    np.subtract(tv[1:], tv[:-1], out=d)
    d.partition((k50, k99))
    return float(d[k50]), float(d[k99])


def _prime(case: dict) -> None:
    """Make, reset, step and close a 1-env instance of the same runner before the memory baseline, so lazy imports
    (front-end modules, env entry points, wrappers) and one-time library set-up are not counted as env memory."""
    one = dict(case, num_envs=1, batch_size=1, num_threads=min(1, case["num_threads"]))
    r = runners.build(one)
    try:
        r.start()
        ts = array.array("d", bytes(8 * 3))
        r.loop(2, ts)
    finally:
        r.close()
    del r
    gc.collect()


def seconds_timing(seconds: float, warmup: float = 0.5) -> dict:
    """Timing for about `seconds` of timed calls: repeats of at most 1 s each (their median is the figure), after a
    warm-up of at most `warmup` s."""
    repeats = max(1, math.ceil(seconds))
    return {"warmup": min(warmup, seconds / 4), "duration": seconds / repeats, "repeats": repeats}


def measure_case(case: dict, timing: dict, isolated: bool) -> dict:
    """Measure `case` (see runners.py); timing = {"warmup": s, "duration": s per repeat, "repeats": n}, or "calls":
    n calls per repeat instead of "duration".
    case["pin_cpu"]: run on one CPU only (threads created by the runner inherit the affinity)."""
    if case.get("pin_cpu") and hasattr(os, "sched_setaffinity"):
        before = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {min(before)})
        try:
            return dict(_measure(case, timing, isolated), pinned_cpu=min(before))
        finally:
            os.sched_setaffinity(0, before)
    return _measure(case, timing, isolated)


def _measure(case: dict, timing: dict, isolated: bool) -> dict:
    warnings.filterwarnings("ignore")
    t0 = time.perf_counter()
    runners._import_deps(case)
    _prime(case)
    warmup, duration, repeats = float(timing["warmup"]), float(timing.get("duration", 0.0)), int(timing["repeats"])
    fixed = int(timing.get("calls") or 0)  # a fixed number of calls per repeat instead of `duration` seconds
    cap = max(1000, fixed or int(duration * 2_000_000))  # the Python loop cannot make more than ~2M calls/s
    ts = array.array("d", bytes(8 * (cap + 1)))  # timestamps, allocated and touched before the memory baseline
    lat = np.ones(cap)  # per-call latencies of one repeat, computed in place (np.ones: pages touched now)
    _cpu_seconds(), _children_memory()  # imports psutil and reads /proc once, before the baseline
    _call_stats(ts, lat, 10, 4, 9)  # runs the statistics code once, so its first-use cost is not env memory
    gc.collect()
    base_rss = _rss()
    base_children = frozenset(c.pid for c in _children())  # not the contender's
    peak_ok = isolated and _reset_peak()

    r = runners.build(case)
    r.start()
    setup_s = time.perf_counter() - t0
    spc = r.steps_per_call

    # warm-up: double the number of calls until `warmup` seconds have gone by; the last chunk gives the call rate
    n, spent, offset, rate = 1, 0.0, 0, 0.0
    while True:
        r.loop(n, ts, offset)
        offset += n
        dt = ts[n] - ts[0]
        spent += dt
        rate = n / dt if dt > 0 else float(cap)
        if spent >= warmup:
            break
        n = min(2 * n, cap)
    calls = fixed or int(min(cap, max(3, math.ceil(duration * rate))))

    rates, medians, p99s = [], [], []
    k50, k99 = (calls - 1) // 2, min(calls - 1, int(math.ceil(0.99 * calls)) - 1)
    cpu0, wall0 = _cpu_seconds(), time.perf_counter()
    for _ in range(repeats):
        r.loop(calls, ts, offset)
        offset += calls
        rates.append(calls * spc / (ts[calls] - ts[0]))
        m50, m99 = _call_stats(ts, lat, calls, k50, k99)
        medians.append(m50)
        p99s.append(m99)
    cpu = (_cpu_seconds() - cpu0) / (time.perf_counter() - wall0)

    # memory: this process's peak since the baseline (or its current RSS) plus the children's
    if peak_ok:
        own = (_status_kib("VmHWM") or 0) * 1024 - base_rss
        mem_method = "peak RSS since baseline (VmHWM reset)"
    elif isolated:
        own = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - base_rss, _rss() - base_rss)
        mem_method = "peak RSS (ru_maxrss) minus baseline"
    else:
        own = _rss() - base_rss
        mem_method = "current RSS minus baseline (in-process: approximate)"
    children = _children_memory(base_children)
    nproc = len(_children(base_children))
    r.close()

    steps = float(np.median(rates))
    return {
        "steps_per_s": steps,
        "frames_per_s": steps * _frame_skip(case),
        "steps_per_s_repeats": rates,
        "calls_per_repeat": calls,
        "steps_per_call": spc,
        "latency_median_us": float(np.median(medians)) * 1e6,
        "steps_per_s_at_median_call": spc / float(np.median(medians)),
        "latency_p99_us": float(np.median(p99s)) * 1e6,
        "cpu_cores_used": cpu,
        "mem_bytes": own + children,
        "mem_per_env_bytes": (own + children) / case["num_envs"],
        "mem_children_bytes": children,
        "child_processes": nproc,
        "mem_method": mem_method,
        "setup_s": setup_s,
        "warmup_s": spent,
    }


def _frame_skip(case: dict) -> int:
    from parallel_pool.bench.cases import TASKS

    task = TASKS.get(case["task"])
    return 1 if task is None else task.frame_skip


def _package_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the worker and any processes it started
    except ProcessLookupError:
        pass
    proc.communicate()


def worker_env() -> dict:
    """The environment of a benchmark worker process: it imports this same parallel_pool (installed or source)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([_package_root()] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


def run_isolated(case: dict, timing: dict, timeout: float) -> dict:
    """Measure a case in a fresh Python process (clean peak RSS); errors and timeouts become {'error': ...}."""
    with tempfile.TemporaryDirectory(prefix="pp-bench-") as cwd:
        # an empty working directory: `-m` puts the cwd first on sys.path, so nothing there shadows the package
        # on PYTHONPATH, and files some engines write into their cwd (ViZDoom's _vizdoom.ini) go away with it
        proc = subprocess.Popen(
            [sys.executable, "-m", "parallel_pool.bench.measure"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=worker_env(),
            cwd=cwd,
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(json.dumps({"case": case, "timing": timing}), timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            return {"error": f"timed out after {timeout:.0f} s"}
        except BaseException:  # Ctrl-C: the worker runs in its own session and would not see it
            _kill_group(proc)
            raise
    for line in reversed(out.splitlines()):
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    return {"error": f"worker exited with code {proc.returncode}: {(err or out).strip()[-500:]}"}


def measure_rounds(
    contenders: dict[str, dict],
    timing: dict,
    rounds: int = 1,
    timeout: float = 900.0,
    progress: Callable[[str, int, dict], Any] | None = None,
) -> dict[str, list[dict]]:
    """{name: [one result per round]} for a table's contenders ({name: case}), each measurement in its own worker
    process, round robin with the order reversed every other round (a burst of load from elsewhere hits every
    contender alike). A failed measurement raises, naming the contender."""
    results: dict[str, list[dict]] = {name: [] for name in contenders}
    names = list(contenders)
    for r in range(rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            res = run_isolated(contenders[name], timing, timeout)
            if "error" in res:
                raise RuntimeError(f"{name}: {res['error']}\n{res.get('traceback', '')}")
            results[name].append(res)
            if progress is not None:
                progress(name, r, res)
    return results


def worker_main() -> int:
    req = json.loads(sys.stdin.read())
    try:
        res = measure_case(req["case"], req["timing"], isolated=True)
    except BaseException as e:  # report, don't crash: the parent records the error for this case
        import traceback

        res = {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()[-4000:]}
    sys.stdout.write("RESULT " + json.dumps(res) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(worker_main())
