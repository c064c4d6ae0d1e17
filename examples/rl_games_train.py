"""rl_games PPO through ParallelPool: a stock rl_games YAML config and rl_games' own Runner.

    python examples/rl_games_train.py [--config examples/rl_games_cartpole.yaml] [--train-dir runs]
    python examples/rl_games_train.py --config examples/rl_games_pong.yaml

The only ParallelPool-specific lines are the import (which registers the vecenv type ``PARALLEL_POOL`` and the env
configuration ``parallel_pool`` with rl_games) and, in the YAML, ``env_name: parallel_pool`` plus ``env_config``.
Training stops once the mean return of the last ``games_to_track`` training episodes exceeds ``score_to_win``, or
at ``max_frames`` / ``max_epochs``; the best checkpoint lands in ``<train-dir>/<name>*/nn/``. Then one greedy game
is played on each of 20 envs of a freshly seeded pool and the mean score printed.
"""

from __future__ import annotations

import argparse
import pathlib

import numpy as np
import yaml

# importing the adapter registers the vecenv type PARALLEL_POOL and the env configuration parallel_pool
from parallel_pool.integrations.rl_games import ParallelPoolRLGamesEnv
from rl_games.torch_runner import Runner

HERE = pathlib.Path(__file__).resolve().parent


def train(config: dict, train_dir: str) -> pathlib.Path:
    """Train with rl_games' Runner; returns the latest best checkpoint (rl_games saves one whenever the mean
    training return improves)."""
    config["params"]["config"]["train_dir"] = train_dir
    runner = Runner()
    runner.load(config)
    runner.run({"train": True})
    name = config["params"]["config"]["name"]
    return max(pathlib.Path(train_dir).glob(f"{name}*/nn/{name}.pth"), key=lambda p: p.stat().st_mtime)


def evaluate(config: dict, checkpoint: pathlib.Path, episodes: int = 20, seed: int = 2000) -> float:
    """Mean greedy score over one game on each of ``episodes`` envs of a freshly seeded pool (with episodic life,
    a game ends where ``infos["lives"] == 0``, not at every lost life)."""
    runner = Runner()
    runner.load(config)
    player = runner.create_player()
    player.restore(str(checkpoint))
    player.has_batch_dimension = True
    env_config = dict(config["params"]["config"]["env_config"], seed=seed)
    env = ParallelPoolRLGamesEnv("parallel_pool", episodes, **env_config)
    obs = env.reset()
    scores = np.full(episodes, np.nan)
    while np.isnan(scores).any():
        actions = player.get_action(player.obs_to_torch(obs), is_deterministic=True).cpu().numpy()
        obs, _, dones, infos = env.step(actions)
        game_end = infos["lives"] == 0 if "lives" in infos else dones.astype(bool)
        first = game_end & np.isnan(scores)
        scores[first] = infos["scores"][first]
    env.close()
    return float(scores.mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default=str(HERE / "rl_games_cartpole.yaml"))
    parser.add_argument("--train-dir", default="runs")
    args = parser.parse_args()
    with open(args.config) as f:
        config = yaml.safe_load(f)
    checkpoint = train(config, args.train_dir)
    print(f"greedy mean return over 20 fresh episodes: {evaluate(config, checkpoint):.1f} ({checkpoint})")


if __name__ == "__main__":
    main()
