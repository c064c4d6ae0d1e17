"""The headline training scripts (examples/train/, docs/training.md): each runs a few PPO updates on every env
backend and writes a valid run log; report.py turns logs into a PNG per task and a table; the rollout that serves
every backend computes GAE as a per-env loop does, whatever order the rows arrive in. The long runs are recorded in
docs/training/, not run here."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("tyro")
pytest.importorskip("psutil")

import parallel_pool  # noqa: E402

TRAIN = Path(__file__).resolve().parents[2] / "examples" / "train"
# where the parallel_pool under test comes from (the installed package in CI, the source tree with its in-place
# build in development): the scripts run in subprocesses with that folder first on their path, never the clone's
# root, whose source folder has no compiled extension when the package is installed
PACKAGE_ROOT = Path(parallel_pool.__file__).resolve().parent.parent


def load(name: str):
    """A module of examples/train (they import their sibling common.py by path, as the scripts do)."""
    sys.path.insert(0, str(TRAIN))
    try:
        spec = importlib.util.spec_from_file_location(f"train_{name}", TRAIN / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path.remove(str(TRAIN))


common = load("common")


def backend_missing(backend: str, task: str) -> str | None:
    """Why `backend` cannot run `task` here (None: it can)."""
    if task not in parallel_pool.list_all_envs():
        return f"this build has no {task}"
    if backend == "envpool" and importlib.util.find_spec("envpool") is None:
        return "envpool is not installed"
    if backend == "gymnasium":
        from parallel_pool.bench import peers

        if task == "Pong-v5" and importlib.util.find_spec("ale_py") is None:
            return "ale-py is not installed"
        if task != "Pong-v5" and importlib.util.find_spec("mujoco") is None:
            return "mujoco (gymnasium's MuJoCo envs) is not installed"
        peer, why = peers.gymnasium_peer(task)
        if peer is None:
            return why
    return None


def run_script(script: str, log: Path, *flags: str) -> list[dict]:
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join([str(PACKAGE_ROOT), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, str(TRAIN / script), "--log", str(log), *flags],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert proc.returncode == 0, f"{script} {flags} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return common.read_log(log)


def check_log(records: list[dict], task: str, backend: str, updates: int, steps_per_update: int) -> None:
    start, *ups, end = records
    assert start["kind"] == "start" and start["task"] == task and start["backend"] == backend, start
    assert start["resumed"] is False and "--backend" in start["command"], start
    assert [u["kind"] for u in ups] == ["update"] * updates
    assert [u["update"] for u in ups] == list(range(1, updates + 1))
    assert [u["steps"] for u in ups] == [steps_per_update * (i + 1) for i in range(updates)]
    walls = [u["wall"] for u in ups]
    assert walls == sorted(walls) and walls[0] > 0
    for u in ups:
        assert 0 < u["env_s"] < u["update_s"] and 0 < u["learn_s"] < u["update_s"], u
        assert u["env_s"] + u["infer_s"] + u["learn_s"] <= u["update_s"] + 1e-3, u
        assert u["rss_mb"] > 50, u
        for key in ("pg_loss", "v_loss", "entropy", "approx_kl"):
            assert math.isfinite(u[key]), u
        assert len(u["returns"]) == len(u["lengths"])
    if backend == "gymnasium":
        assert ups[-1]["rss_children_mb"] > 0  # the worker processes are counted
    assert end == {
        "kind": "end",
        "reason": "total_timesteps",
        "updates": updates,
        "steps": updates * steps_per_update,
        "wall": end["wall"],
    }


# (script, task, --num-steps, --total-timesteps, --num-minibatches, --update-epochs); 4 envs, 2 updates each
SCRIPT_RUNS = [("ppo_continuous.py", "HalfCheetah-v5", 32, 256, 4, 2), ("ppo_atari.py", "Pong-v5", 16, 128, 2, 1)]


@pytest.mark.parametrize("backend", common.BACKENDS)
@pytest.mark.parametrize("script,task,steps,total,minibatches,epochs", SCRIPT_RUNS)
def test_script_runs_a_few_updates(script, task, steps, total, minibatches, epochs, backend, tmp_path):
    if why := backend_missing(backend, task):
        pytest.skip(why)
    log = tmp_path / f"{backend}.jsonl"
    flags = ["--env-id", task, "--backend", backend, "--num-envs", "4", "--num-steps", str(steps)]
    flags += ["--total-timesteps", str(total), "--num-minibatches", str(minibatches), "--update-epochs", str(epochs)]
    check_log(run_script(script, log, *flags), task, backend, updates=2, steps_per_update=4 * steps)


def test_time_budget_stops_and_a_checkpoint_resumes_appending_to_the_log(tmp_path):
    log, ckpt = tmp_path / "run.jsonl", tmp_path / "run.pt"
    flags = ["--env-id", "HalfCheetah-v5", "--num-envs", "4", "--num-steps", "32", "--num-minibatches", "4"]
    flags += ["--update-epochs", "1", "--total-timesteps", "512", "--checkpoint", str(ckpt), "--checkpoint-every", "1"]
    first = run_script("ppo_continuous.py", log, *flags, "--time-budget", "1e-9")
    assert first[-1]["reason"] == "time_budget" and first[-1]["updates"] == 1  # the budget is checked per update
    assert ckpt.exists()
    records = run_script("ppo_continuous.py", log, *flags)
    starts = [r for r in records if r["kind"] == "start"]
    assert [s["resumed"] for s in starts] == [False, True]
    ups = [r for r in records if r["kind"] == "update"]
    assert [u["update"] for u in ups] == [1, 2, 3, 4] and ups[-1]["steps"] == 512
    assert ups[1]["wall"] >= ups[0]["wall"]  # the resumed segment's clock continues the first one's
    assert records[-1]["reason"] == "total_timesteps"


def test_bad_arguments_are_clear_errors_before_anything_starts(tmp_path):
    log = tmp_path / "bad.jsonl"
    env = dict(os.environ, PYTHONPATH=str(PACKAGE_ROOT))
    for flags, message in (
        (["--backend", "ray"], "unknown backend 'ray'"),
        (["--num-envs", "0"], "--num-envs must be >= 1"),
        (["--time-budget", "-5"], "--time-budget and --batch-size must be >= 0"),
    ):
        proc = subprocess.run(
            [sys.executable, str(TRAIN / "ppo_continuous.py"), "--log", str(log), *flags],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )
        assert proc.returncode != 0 and f"ValueError: {message}" in proc.stderr, (flags, proc.stderr[-2000:])
        assert not log.exists()  # nothing was started or written
    with pytest.raises(ValueError, match="unknown backend 'ray'.*pp-async"):
        common.make_envs("ray", "HalfCheetah-v5", 4, 1)
    with pytest.raises(ValueError, match="0 < batch_size < num_envs"):
        common.make_envs("pp-async", "HalfCheetah-v5", 4, 1, batch_size=4)


def reference_gae(env_rows: dict[int, list[int]], reward, value, term, trunc, dead, gamma, lam) -> dict[int, float]:
    """GAE per env as a plain backward loop over that env's rows (in order), bootstrapping a truncation with the
    value of the row that holds the final observation. Rows without a successor get none."""
    adv = {}
    for rows in env_rows.values():
        nxt_adv = 0.0
        for k in range(len(rows) - 2, -1, -1):
            j, nxt = rows[k], rows[k + 1]
            done = term[j] or trunc[j]
            delta = reward[j] + gamma * value[nxt] * (not term[j]) - value[j]
            nxt_adv = delta + gamma * lam * (not done) * nxt_adv
            adv[j] = nxt_adv
    return {j: a for j, a in adv.items() if not dead[j]}


@pytest.mark.parametrize("batch_size", [6, 2, 4])  # sync (every env in order), then two async batchings
def test_rollout_gae_matches_a_per_env_loop_in_any_arrival_order(batch_size):
    rng = np.random.default_rng(batch_size)
    N, per_env, gamma, lam = 6, 40, 0.9, 0.8
    ro = common.Rollout(N, N * per_env, (1,), torch.float32, (), torch.long)
    ro.begin()
    # a stream of batches: which envs finish first is random (sync: all, in order)
    steps = np.zeros(N, dtype=int)
    outcome = {}  # (env, its k-th row) -> (reward, term, trunc) that arrives with its (k+1)-th row
    env_rows: dict[int, list[int]] = {i: [] for i in range(N)}
    ended_ref = []
    ep = np.zeros(N)
    dead_ref = {}
    for _ in range(N * per_env // batch_size):
        ids = np.arange(N) if batch_size == N else np.sort(rng.choice(N, batch_size, replace=False))
        reward, term, trunc = np.zeros(len(ids)), np.zeros(len(ids), bool), np.zeros(len(ids), bool)
        for c, i in enumerate(ids):
            if steps[i] > 0:
                reward[c], term[c], trunc[c] = outcome[(i, steps[i] - 1)]
        values = torch.as_tensor(rng.normal(size=len(ids)), dtype=torch.float32)
        first = ro.n
        ro_returns, _ = ro.add(
            torch.zeros(len(ids), 1),
            reward,
            reward * 10,
            term,
            trunc,
            ids,
            torch.zeros(len(ids), dtype=torch.long),
            torch.zeros(len(ids)),
            values,
        )
        for c, i in enumerate(ids):
            row = first + c
            prev_dead = steps[i] > 0 and dead_ref[env_rows[i][-1]]
            if steps[i] > 0 and not prev_dead:
                ep[i] += reward[c]
                if term[c] or trunc[c]:
                    ended_ref.append(ep[i])
                    ep[i] = 0
            dead_ref[row] = bool(steps[i] > 0 and not prev_dead and (term[c] or trunc[c]))
            env_rows[i].append(row)
            # the outcome of this row's action; a dead row's (the reset) is always reward 0, not done
            r = rng.normal()
            done = rng.random() < 0.15 and not dead_ref[row]
            t = done and rng.random() < 0.5
            outcome[(i, steps[i])] = (0.0, False, False) if dead_ref[row] else (r, t, done and not t)
            steps[i] += 1
        assert sorted(ro_returns) == sorted(ended_ref[len(ended_ref) - len(ro_returns) :])
    assert any(dead_ref.values())
    assert ro.dead[: ro.n].tolist() == [dead_ref[j] for j in range(ro.n)]
    idx, adv = ro.advantages(gamma, lam)
    ref = reference_gae(
        env_rows, ro.reward.numpy(), ro.value.numpy(), ro.term.numpy(), ro.trunc.numpy(), dead_ref, gamma, lam
    )
    assert sorted(idx.tolist()) == sorted(ref)  # trained on: rows with an outcome that are not dead
    got = dict(zip(idx.tolist(), adv.tolist()))
    np.testing.assert_allclose([got[j] for j in sorted(ref)], [ref[j] for j in sorted(ref)], rtol=1e-5, atol=1e-5)
    # the learner's reward (here 10x the raw one) is what GAE used
    for i, rows in env_rows.items():
        for k, j in enumerate(rows[:-1]):
            assert ro.reward[j].item() == pytest.approx(10 * outcome[(i, k)][0], rel=1e-6)
    # the next rollout starts with each env's row still waiting for its outcome
    waiting = {i: rows[-1] for i, rows in env_rows.items()}
    values_waiting = {i: ro.value[j].item() for i, j in waiting.items()}
    ro.begin()
    assert ro.n == N and sorted(ro.pending.tolist()) == list(range(N))
    assert {i: ro.value[ro.pending[i]].item() for i in range(N)} == values_waiting


def write_log(path: Path, task: str, backend: str, seed: int, returns_per_update: list[list[float]]) -> None:
    records = [{"kind": "start", "task": task, "backend": backend, "seed": seed, "command": "test", "resumed": False}]
    for u, returns in enumerate(returns_per_update, 1):
        records.append(
            {
                "kind": "update",
                "update": u,
                "steps": 100 * u,
                "wall": 2.0 * u,
                "update_s": 2.0,
                "env_s": 0.5,
                "infer_s": 0.1,
                "learn_s": 1.0,
                "returns": returns,
                "lengths": [10] * len(returns),
                "rss_mb": 100.0 + u,
                "rss_children_mb": 0.0,
                "load1": 1.0 + u,
            }
        )
    records.append({"kind": "end", "reason": "time_budget", "updates": len(returns_per_update)})
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n" + '{"kind": "upda')  # a cut-off last line


def test_report_turns_logs_into_a_plot_and_a_table(tmp_path):
    report = load("report")
    write_log(tmp_path / "a.jsonl", "Task-v0", "pp", 1, [[], [1.0, 3.0], [5.0], [9.0, 9.0]])
    write_log(tmp_path / "b.jsonl", "Task-v0", "envpool", 1, [[0.0], [0.0], [2.0], [2.0]])
    write_log(tmp_path / "c.jsonl", "Task-v0", "envpool", 2, [[0.0], [4.0], [4.0], [4.0]])
    doc = tmp_path / "doc.md"
    doc.write_text(f"intro\n{report.MARK_START}\nold\n{report.MARK_END}\nrest\n")
    written = report.main([str(tmp_path), "--score", "Task-v0=4", "--window", "2", "--doc", str(doc)])
    png = tmp_path / "Task-v0.png"
    assert png in written and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = (tmp_path / "report.md").read_text()
    rows = {line.split(" | ")[1]: line.split(" | ") for line in text.splitlines() if line.startswith("| Task-v0")}
    assert set(rows) == {"pp", "envpool"}
    pp, ep = rows["pp"], rows["envpool"]
    # pp: windows of 2 -> update 2: mean(1, 3) = 2; update 3: mean(3, 5) = 4 -> reached at wall 6 s, 300 steps
    assert pp[2:6] == ["1", "4", "6", "300"]
    assert pp[6:8] == ["9", "9"]  # final and best mean return
    assert pp[8:13] == ["400", "8", "50", "25%", "50%"]  # steps, wall, steps/s, in env, in learner
    assert pp[13:15] == ["104", "1.0"]  # RSS 101 .. 104 MiB: the peak, growth from the middle update (103)
    # stalls, end, env/1k steps, learner, load, evaluations (none logged)
    assert pp[15:21] == ["1.00", "time_budget", "5.00", "1.00", "3.5", "— / — |"]
    # envpool: two seeds, seed 1 never reaches 4 (best mean 2), seed 2 does at update 3 (mean(4, 4))
    assert ep[2:6] == ["1, 2", "4", "— / 6", "— / 300"]
    body = doc.read_text()
    assert body.startswith("intro\n") and body.endswith("rest\n") and "old" not in body and "| Task-v0 | pp |" in body
    with pytest.raises(SystemExit, match="no run logs"):
        report.main([str(tmp_path / "empty")])
