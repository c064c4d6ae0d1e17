"""examples/mappo_mpe.py, MAPPO on MPE simple_spread through the agents-as-rows view: a few updates give finite
losses, the centralised critic sees each row's env and agent, and the run log is report.py's format. The recorded run
is in docs/training/mappo/, not run here."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("optax")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mappo_mpe.py"


def _load():
    spec = importlib.util.spec_from_file_location("mappo_mpe", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


M = _load()


def test_critic_input_is_the_rows_env_state_and_agent_id():
    obs = np.arange(2 * 3 * 2, dtype=np.float32).reshape(6, 2)  # 2 envs x 3 agents, 2 floats each
    x = np.asarray(M.critic_input(obs, 3))
    assert x.shape == (6, 2 * 3 + 3)
    for row in range(6):
        e, j = divmod(row, 3)
        np.testing.assert_array_equal(x[row, :6], obs[3 * e : 3 * e + 3].reshape(-1))  # its env's observations
        np.testing.assert_array_equal(x[row, 6:], np.eye(3)[j])  # its agent


def test_a_few_updates_have_finite_losses_and_a_report_log(tmp_path):
    log = tmp_path / "run.jsonl"
    args = M.parse_args(
        ["--num-envs", "4", "--num-steps", "30", "--total-timesteps", "360", "--update-epochs", "2", "--quiet"]
        + ["--log", str(log)]
    )
    summary = M.train(args)
    assert summary["updates"] == 3 and summary["steps"] == 360
    for k in ("pg_loss", "v_loss", "entropy"):
        assert math.isfinite(summary[k]), summary
    assert 0 < summary["entropy"] <= math.log(5) + 1e-5  # a distribution over the 5 moves
    records = [json.loads(line) for line in log.read_text().splitlines()]
    start, *updates, end = records
    assert start["kind"] == "start" and start["task"] == "MPE/simple_spread-v3" and start["command"] and start["time"]
    assert [u["update"] for u in updates] == [1, 2, 3] and end["kind"] == "end"
    # 4 envs x 90 steps: episodes of 25 steps (and a reset step each) end 3 times per env
    episodes = sum(len(u["returns"]) for u in updates)
    assert episodes == 12 and all(r < 0 for u in updates for r in u["returns"])  # mpe2's rewards are costs
    sys.path.insert(0, str(EXAMPLE.parent / "train"))
    try:
        import report  # examples/train/report.py reads the log as it reads the PPO scripts'
    finally:
        sys.path.remove(str(EXAMPLE.parent / "train"))
    (run,) = report.load_runs(tmp_path)
    assert run.task == "MPE/simple_spread-v3" and len(run.updates) == 3
