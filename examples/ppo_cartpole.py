"""PPO on CartPole-v1 with a synchronous ParallelPool pool — one file, CleanRL style.

    python examples/ppo_cartpole.py --seed 1 --total-timesteps 100000

Differences from CleanRL's ppo.py: the pool steps all envs in C++ threads (``parallel_pool.make``), autoreset is
same-step, and a time-limit truncation is bootstrapped with V(final observation) (``info["final_obs"]``) instead of
being treated as a terminal state. Every ``--eval-every`` steps the greedy policy is evaluated on ``--eval-episodes``
fresh episodes; training stops early once their mean reaches ``--target-return``. The last line printed is a
summary (``SUMMARY {...}``, JSON).
"""

from __future__ import annotations

import os
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn as nn
import tyro
from parallel_pool.integrations.cleanrl import EpisodeStatistics
from torch.distributions.categorical import Categorical
from tqdm import tqdm

import parallel_pool

# CleanRL's arguments, networks and PPO epochs, shared with the headline scripts, and the greedy evaluation and
# summary of both single-file examples (examples/train/common.py)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "train"))
from common import GreedyEvaluations, PPOHyperparams, greedy_return, ppo_epochs, print_summary, tanh_mlp  # noqa: E402


@dataclass
class Args(PPOHyperparams):
    env_id: str = "CartPole-v1"
    total_timesteps: int = 100_000
    num_steps: int = 32
    learning_rate: float = 1e-3
    """Adam learning rate (annealed linearly to 0 over the budget)"""
    gamma: float = 0.98
    gae_lambda: float = 0.8
    num_minibatches: int = 1
    update_epochs: int = 20
    eval_every: int = 8192
    """evaluate the greedy policy every this many env steps (0: never)"""
    eval_episodes: int = 20
    final_eval_episodes: int = 20
    """episodes of the final evaluation (reported as eval_return)"""
    target_return: float = 475.0
    """stop early once the evaluation mean return reaches this (inf: never)"""
    progress: bool = True
    """show a progress bar"""


class Agent(nn.Module):
    def __init__(self, obs_dim: int, n_actions: int):
        super().__init__()
        self.critic = tanh_mlp(obs_dim, 1, std=1.0)
        self.actor = tanh_mlp(obs_dim, n_actions, std=0.01)

    def get_value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x).flatten()

    def get_action_and_value(self, x: torch.Tensor, action: torch.Tensor | None = None):
        logits = self.actor(x)
        probs = Categorical(logits=logits)
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(x).flatten()


def evaluate(agent: Agent, args: Args, episodes: int, seed: int) -> float:
    """Mean return of the greedy policy over `episodes` episodes (one per env of a fresh pool)."""
    env = parallel_pool.make(args.env_id, num_envs=episodes, seed=seed)
    return greedy_return(env, lambda x: agent.actor(x).argmax(dim=1))


def main(args: Args, make: Callable[..., Any] = parallel_pool.make) -> dict:
    """Train; `make` builds the training pool (examples/ppo_cartpole_ray.py passes parallel_pool.distributed.make)."""
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.torch_threads)

    envs = EpisodeStatistics(make(args.env_id, num_envs=args.num_envs, seed=args.seed, autoreset_mode="same_step"))
    obs_dim = int(np.prod(envs.single_observation_space.shape))
    agent = Agent(obs_dim, int(envs.single_action_space.n))
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    batch_size = args.num_envs * args.num_steps
    num_iterations = args.total_timesteps // batch_size
    obs_buf = torch.zeros((args.num_steps, args.num_envs, obs_dim))
    actions = torch.zeros((args.num_steps, args.num_envs), dtype=torch.long)
    logprobs = torch.zeros((args.num_steps, args.num_envs))
    rewards = torch.zeros((args.num_steps, args.num_envs))
    dones = torch.zeros((args.num_steps, args.num_envs))
    values = torch.zeros((args.num_steps, args.num_envs))

    start = time.perf_counter()
    global_step = 0
    evals = GreedyEvaluations(args, lambda episodes, seed: evaluate(agent, args, episodes, seed), last=float("nan"))
    next_obs, _ = envs.reset(seed=args.seed)
    next_obs = torch.as_tensor(next_obs)
    next_done = torch.zeros(args.num_envs)
    bar = tqdm(total=args.total_timesteps, disable=not args.progress, unit="step")
    for iteration in range(1, num_iterations + 1):
        frac = 1.0 - (iteration - 1.0) / num_iterations
        optimizer.param_groups[0]["lr"] = frac * args.learning_rate
        for step in range(args.num_steps):
            global_step += args.num_envs
            obs_buf[step] = next_obs
            dones[step] = next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs)
            values[step] = value
            actions[step] = action
            logprobs[step] = logprob
            obs, reward, term, trunc, info = envs.step(action.numpy())
            reward = torch.as_tensor(reward, dtype=torch.float32)
            if trunc.any():  # a time limit is not a terminal state: bootstrap with V(final observation)
                idx = np.flatnonzero(trunc)
                final = torch.as_tensor(np.stack(info["final_obs"][idx]))
                with torch.no_grad():
                    reward[idx] += args.gamma * agent.get_value(final)
            rewards[step] = reward
            next_obs = torch.as_tensor(obs)
            next_done = torch.as_tensor(term | trunc, dtype=torch.float32)
        bar.update(batch_size)

        with torch.no_grad():  # GAE; an episode boundary (terminated or truncated) cuts the recursion
            next_value = agent.get_value(next_obs)
            advantages = torch.zeros_like(rewards)
            lastgaelam = torch.zeros(args.num_envs)
            for t in reversed(range(args.num_steps)):
                if t == args.num_steps - 1:
                    nextnonterminal, nextvalues = 1.0 - next_done, next_value
                else:
                    nextnonterminal, nextvalues = 1.0 - dones[t + 1], values[t + 1]
                delta = rewards[t] + args.gamma * nextvalues * nextnonterminal - values[t]
                advantages[t] = lastgaelam = delta + args.gamma * args.gae_lambda * nextnonterminal * lastgaelam

        # CleanRL's ppo.py update, value loss unclipped
        b_obs, b_logprobs, b_actions = obs_buf.reshape(batch_size, obs_dim), logprobs.reshape(-1), actions.reshape(-1)
        b_advantages, b_values = advantages.reshape(-1), values.reshape(-1)
        ppo_epochs(agent, optimizer, args, b_obs, b_actions, b_logprobs, b_advantages, b_values, clip_vloss=False)

        recent = list(envs.return_queue)[-20:]
        bar.set_postfix(ret=f"{np.mean(recent):.1f}" if recent else "-", ev=f"{evals.last:.1f}")
        if evals.target_reached(global_step):
            break
    bar.close()
    seconds = time.perf_counter() - start
    eval_return = evaluate(agent, args, args.final_eval_episodes, seed=args.seed + 20_000)
    envs.close()
    return print_summary(args, envs, global_step, seconds, evals, eval_return)


if __name__ == "__main__":
    main(tyro.cli(Args))
