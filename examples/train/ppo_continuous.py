"""PPO for MuJoCo continuous control (Ant-v5, HalfCheetah-v5, ...), CleanRL style, with the env backend as a switch.

    python examples/train/ppo_continuous.py --env-id HalfCheetah-v5 --backend pp --time-budget 480 \
        --log docs/training/HalfCheetah-v5/pp-seed1.jsonl

Algorithm and hyperparameters: CleanRL's ppo_continuous_action.py (vwxyzjn/cleanrl, cleanrl/ppo_continuous_action.py,
the defaults behind its published MuJoCo results): lr 3e-4 annealed, gamma 0.99, GAE 0.95, 2048 steps per rollout,
32 minibatches, 10 epochs, clip 0.2 (value clipped too), entropy 0, vf 0.5, grad norm 0.5, 64-64 tanh actor and
critic, state-independent log std, observations normalised (running mean/std, clipped to +-10) and rewards scaled by
the running std of the discounted return (clipped to +-10), actions clipped to the action space for the env only.
One change: CleanRL runs 1 env x 2048 steps; here the same 2048-step rollout is 8 envs x 256 steps (--num-envs,
--num-steps), as a vectorised pool is meant to be used. CleanRL applies the normalisations as gymnasium wrappers;
here they are done on the batches, identically for every backend (common.py explains the backend interface).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import tyro
from torch.distributions.normal import Normal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import PPOArgs, start_run, tanh_mlp, train  # noqa: E402


@dataclass
class Args(PPOArgs):
    """CleanRL's ppo_continuous_action.py defaults (its 2048-step rollout as 8 envs x 256 steps)."""

    env_id: str = "HalfCheetah-v5"
    num_steps: int = 256
    learning_rate: float = 3e-4
    num_minibatches: int = 32
    update_epochs: int = 10


class Agent(nn.Module):
    def __init__(self, obs_dim: int, act_dim: int):
        super().__init__()
        self.critic = tanh_mlp(obs_dim, 1, std=1.0)
        self.actor_mean = tanh_mlp(obs_dim, act_dim, std=0.01)
        self.actor_logstd = nn.Parameter(torch.zeros(1, act_dim))

    def get_value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x).flatten()

    def get_action_and_value(self, x: torch.Tensor, action: torch.Tensor | None = None):
        mean = self.actor_mean(x)
        probs = Normal(mean, self.actor_logstd.expand_as(mean).exp())
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action).sum(1), probs.entropy().sum(1), self.critic(x).flatten()


class RunningMeanStd:
    """Running mean/variance over batches (Chan et al.), as gymnasium's NormalizeObservation/NormalizeReward keep."""

    def __init__(self, shape: tuple = ()):
        self.mean, self.var, self.count = np.zeros(shape), np.ones(shape), 1e-4

    def update(self, x: np.ndarray) -> None:
        b_mean, b_var, b = x.mean(0), x.var(0), x.shape[0]
        delta, total = b_mean - self.mean, self.count + b
        self.mean = self.mean + delta * b / total
        self.var = (self.var * self.count + b_var * b + delta**2 * self.count * b / total) / total
        self.count = total


def main(args: Args) -> dict:
    device, ckpt, envs = start_run(args)
    obs_space, act_space = envs.single_observation_space, envs.single_action_space
    obs_dim, act_dim = int(np.prod(obs_space.shape)), int(np.prod(act_space.shape))
    low, high = act_space.low.astype(np.float32), act_space.high.astype(np.float32)
    agent = Agent(obs_dim, act_dim).to(device)
    obs_rms, ret_rms = (ckpt["obs_rms"], ckpt["ret_rms"]) if ckpt else (RunningMeanStd((obs_dim,)), RunningMeanStd())
    discounted = np.zeros(args.num_envs)  # each env's discounted return, for the reward scale

    def act(raw_obs: np.ndarray, reward: np.ndarray, term: np.ndarray, ids: np.ndarray) -> tuple:
        discounted[ids] = discounted[ids] * args.gamma * (1 - term) + reward
        ret_rms.update(discounted[ids])
        scaled = np.clip(reward / np.sqrt(ret_rms.var + 1e-8), -10, 10)
        flat = raw_obs.reshape(len(ids), -1)
        obs_rms.update(flat)
        x = torch.as_tensor(np.clip((flat - obs_rms.mean) / np.sqrt(obs_rms.var + 1e-8), -10, 10), dtype=torch.float32)
        with torch.no_grad():
            action, logp, _, value = agent.get_action_and_value(x.to(device))
        action = action.cpu()
        env_action = np.clip(action.numpy(), low, high).astype(act_space.dtype)
        return x, env_action, scaled, action, logp.cpu(), value.cpu()

    rows = ((obs_dim,), torch.float32, (act_dim,), torch.float32)
    return train(args, envs, agent, device, ckpt, rows, act, {"obs_rms": obs_rms, "ret_rms": ret_rms})


if __name__ == "__main__":
    main(tyro.cli(Args))
