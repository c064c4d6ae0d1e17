"""PPO with the Nature CNN for Atari (Pong-v5), CleanRL style, with the env backend as a switch.

    python examples/train/ppo_atari.py --env-id Pong-v5 --backend pp --time-budget 3600 \
        --log docs/training/Pong-v5/pp-seed1.jsonl

Algorithm and hyperparameters: CleanRL's ppo_atari_envpool.py (vwxyzjn/cleanrl, cleanrl/ppo_atari_envpool.py): 8 envs
x 128 steps per rollout, lr 2.5e-4 annealed, gamma 0.99, GAE 0.95, 4 minibatches, 4 epochs, clip 0.1 (value clipped
too), entropy 0.01, vf 0.5, grad norm 0.5, Nature CNN on 4 stacked 84x84 grey frames / 255. The env is Pong-v5 as
EnvPool (and our Pong-v5) give it by default: no sticky actions, frame skip 4 with max-pooling, up to 30 no-ops,
27,000 agent steps (108,000 frames) per episode, no reward clipping, no episodic life; the gymnasium backend builds
the same from ALE/Pong-v5 with AtariPreprocessing + FrameStackObservation (parallel_pool/bench/peers.py). CleanRL's
EnvPool script asks EnvPool for reward_clip=True and episodic_life=True; here the reward is clipped (sign) by the
learner, identically for every backend, and episodic life changes nothing in Pong (the game has no lives). Episode
returns in the log are the game's scores (-21..21).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import tyro
from torch.distributions.categorical import Categorical

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import PPOArgs, layer_init, nature_cnn, start_run, train  # noqa: E402


@dataclass
class Args(PPOArgs):
    """CleanRL's ppo_atari_envpool.py defaults."""

    env_id: str = "Pong-v5"
    total_timesteps: int = 10_000_000
    clip_coef: float = 0.1
    ent_coef: float = 0.01


class Agent(nn.Module):
    def __init__(self, obs_shape: tuple[int, ...], n_actions: int):
        super().__init__()
        self.network = nature_cnn(obs_shape)
        self.actor = layer_init(nn.Linear(512, n_actions), std=0.01)
        self.critic = layer_init(nn.Linear(512, 1), std=1)

    def get_action_and_value(self, x: torch.Tensor, action: torch.Tensor | None = None):
        hidden = self.network(x.float() / 255.0)
        probs = Categorical(logits=self.actor(hidden))
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(hidden).flatten()


def main(args: Args) -> dict:
    device, ckpt, envs = start_run(args)
    obs_space, act_space = envs.single_observation_space, envs.single_action_space
    if len(obs_space.shape) != 3:
        envs.close()
        raise ValueError(f"{args.env_id}: the Nature CNN needs (frames, 84, 84) observations, got {obs_space.shape}")
    agent = Agent(obs_space.shape, int(act_space.n)).to(device)

    def act(obs: np.ndarray, reward: np.ndarray, term: np.ndarray, ids: np.ndarray) -> tuple:
        x = torch.as_tensor(obs)
        with torch.no_grad():
            action, logp, _, value = agent.get_action_and_value(x.to(device))
        action = action.cpu()
        return x, action.numpy(), np.sign(reward), action, logp.cpu(), value.cpu()

    return train(args, envs, agent, device, ckpt, (obs_space.shape, torch.uint8, (), torch.long), act)


if __name__ == "__main__":
    main(tyro.cli(Args))
