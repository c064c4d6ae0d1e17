"""Training reproductions through the CleanRL-style scripts in examples/, run as a user runs them (a subprocess,
command-line flags, the SUMMARY line parsed):

- examples/ppo_cartpole.py (sync) reaches a mean greedy evaluation return >= 475 on CartPole-v1 within its budget;
- examples/ppo_atari_async.py (async send/recv) runs a few updates end to end on Pong-v5 (skipped while the build has no
  Atari envs), and its async rollout/GAE logic also learns CartPole-v1 (the script picks an MLP for vector obs).
Budgets and wall-clock: docs/training.md."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("tyro")
pytest.importorskip("tqdm")

import parallel_pool  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TARGET = 475.0


def run_script(name: str, *flags: str, timeout: int = 900) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / name), "--no-progress", *flags],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    assert proc.returncode == 0, f"{name} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("SUMMARY ")]
    assert lines, f"{name} printed no SUMMARY line:\n{proc.stdout[-3000:]}"
    return json.loads(lines[-1][len("SUMMARY ") :])


@pytest.mark.training
def test_cleanrl_ppo_cartpole_reaches_475():
    budget = 100_000
    s = run_script("ppo_cartpole.py", "--seed", "1", "--total-timesteps", str(budget))
    print(f"CleanRL-style PPO CartPole-v1: {s}")
    assert s["steps"] <= budget
    assert s["eval_return"] >= TARGET, s


@pytest.mark.training
def test_async_ppo_script_learns_cartpole():
    budget = 150_000
    s = run_script(
        "ppo_atari_async.py",
        "--env-id",
        "CartPole-v1",
        "--seed",
        "1",
        "--total-timesteps",
        str(budget),
        "--num-envs",
        "16",
        "--batch-size",
        "8",
        "--num-steps",
        "32",
        "--learning-rate",
        "1e-3",
        "--update-epochs",
        "10",
        "--num-minibatches",
        "2",
        "--gamma",
        "0.98",
        "--gae-lambda",
        "0.8",
        "--ent-coef",
        "0.0",
        "--clip-coef",
        "0.2",
        "--eval-every",
        "16384",
        "--eval-episodes",
        "20",
        "--target-return",
        str(TARGET),
        "--final-eval-episodes",
        "20",
    )
    print(f"async PPO script on CartPole-v1: {s}")
    assert s["steps"] <= budget + 16 * 32
    assert s["eval_return"] >= TARGET, s


@pytest.mark.skipif(
    "Pong-v5" not in parallel_pool.list_all_envs(),
    reason="this build has no Atari envs (Pong-v5 not in parallel_pool.list_all_envs())",
)
def test_ppo_atari_runs_a_few_updates():
    s = run_script(
        "ppo_atari_async.py",
        "--env-id",
        "Pong-v5",
        "--seed",
        "1",
        "--num-envs",
        "8",
        "--batch-size",
        "4",
        "--num-steps",
        "16",
        "--total-timesteps",
        str(3 * 8 * 16),
        "--update-epochs",
        "1",
        "--num-minibatches",
        "2",
        "--eval-every",
        "0",
        "--final-eval-episodes",
        "0",
    )
    assert s["updates"] == 3, s
    assert s["steps"] >= 3 * 8 * 16, s
    for key in ("pg_loss", "v_loss", "entropy"):
        assert s[key] is not None and np.isfinite(s[key]), s
