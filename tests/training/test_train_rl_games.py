"""Training reproduction: rl_games PPO (rl_games.torch_runner.Runner, stock YAML examples/rl_games_cartpole.yaml)
on CartPole-v1 through parallel_pool.integrations.rl_games reaches a mean greedy return >= 475 on 20 fresh
episodes within a fixed step budget. Budget and wall-clock: docs/training.md."""

from __future__ import annotations

import importlib.util
import pathlib
import time

import pytest

pytest.importorskip("rl_games")
torch = pytest.importorskip("torch")
yaml = pytest.importorskip("yaml")

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUDGET = 100_000  # env steps (rl_games' max_frames)
TARGET = 475.0


def _example():
    spec = importlib.util.spec_from_file_location("rl_games_train", ROOT / "examples" / "rl_games_train.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.training
def test_rl_games_ppo_cartpole_reaches_475(tmp_path):
    example = _example()
    config = yaml.safe_load((ROOT / "examples" / "rl_games_cartpole.yaml").read_text())
    assert config["params"]["config"]["max_frames"] == BUDGET
    t0 = time.perf_counter()
    checkpoint = example.train(config, str(tmp_path))
    seconds = time.perf_counter() - t0
    frames = int(torch.load(checkpoint, weights_only=False)["frame"])  # env steps when the checkpoint was saved
    mean = example.evaluate(config, checkpoint)
    print(f"rl_games PPO CartPole-v1: greedy mean {mean:.1f} after {frames} steps in {seconds:.0f}s")
    assert frames <= BUDGET
    assert mean >= TARGET, f"mean return {mean:.1f} < {TARGET} after {frames} steps"
