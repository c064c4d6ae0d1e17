"""Asynchronous PPO on Atari with ParallelPool's send/recv — one file, CleanRL style.

    python examples/ppo_atari_async.py --env-id Pong-v5 --num-envs 16 --batch-size 8 --total-timesteps 10000000

The pool runs ``--num-envs`` envs but hands back only the first ``--batch-size`` that finish (``recv``); the agent
acts on those and ``send``s their actions straight back, so the envs never wait for the slowest one. Rows of a
rollout therefore arrive in completion order, each tagged with ``info["env_id"]``. Each row's outcome (reward,
terminated, truncated) arrives with the next row of the same env; GAE follows each env's own chain of rows, a row
whose outcome has not arrived by the end of a rollout is carried into the next one, and a time-limit truncation is
bootstrapped with V(final observation) (same-step autoreset: ``info["final_obs"]``). Atari is run as EnvPool's
CleanRL scripts run it (``episodic_life=True``, ``reward_clip=True``); `EpisodeStatistics` reports the real game
score and length. Vector-observation tasks (e.g. CartPole-v1) get an MLP instead of the Nature CNN.
The last line printed is a summary (``SUMMARY {...}``, JSON).
"""

from __future__ import annotations

import os
import random
import sys
import time
from dataclasses import dataclass

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
from common import (  # noqa: E402
    GreedyEvaluations,
    PPOHyperparams,
    greedy_return,
    layer_init,
    nature_cnn,
    ppo_epochs,
    print_summary,
    tanh_mlp,
)


@dataclass
class Args(PPOHyperparams):
    env_id: str = "Pong-v5"
    total_timesteps: int = 10_000_000
    num_envs: int = 16
    """envs in the pool"""
    clip_coef: float = 0.1
    ent_coef: float = 0.01
    batch_size: int = 8
    """envs handed back per recv (< num_envs: asynchronous)"""
    num_threads: int = 0
    """pool worker threads (0: one per core, up to batch_size)"""
    anneal_lr: bool = True
    eval_every: int = 0
    """evaluate the greedy policy every this many env steps (0: never)"""
    eval_episodes: int = 10
    final_eval_episodes: int = 0
    """episodes of the final greedy evaluation (0: none)"""
    target_return: float = float("inf")
    """stop early once an evaluation's mean return reaches this"""
    progress: bool = True


class Agent(nn.Module):
    """Nature CNN for image observations (C, H, W) uint8; a 64-64 tanh MLP for vector observations."""

    def __init__(self, obs_shape: tuple[int, ...], n_actions: int):
        super().__init__()
        self.image = len(obs_shape) == 3
        if self.image:
            self.network = nature_cnn(obs_shape)
            self.actor = layer_init(nn.Linear(512, n_actions), std=0.01)
            self.critic = layer_init(nn.Linear(512, 1), std=1.0)
        else:
            self.network = nn.Identity()
            self.actor = tanh_mlp(int(np.prod(obs_shape)), n_actions, std=0.01)
            self.critic = tanh_mlp(int(np.prod(obs_shape)), 1, std=1.0)

    def _features(self, x: torch.Tensor) -> torch.Tensor:
        if self.image:
            x = x.float() / 255.0
        return self.network(x.float())

    def get_value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(self._features(x)).flatten()

    def get_action_and_value(self, x: torch.Tensor, action: torch.Tensor | None = None):
        h = self._features(x)
        probs = Categorical(logits=self.actor(h))
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(h).flatten()

    def greedy(self, x: torch.Tensor) -> torch.Tensor:
        return self.actor(self._features(x)).argmax(dim=1)


def chain_gae(
    groups: list[np.ndarray],
    succ: np.ndarray,
    rew: torch.Tensor,
    term: torch.Tensor,
    trunc: torch.Tensor,
    boot: torch.Tensor,
    values: torch.Tensor,
    gamma: float,
    lam: float,
    n: int,
) -> torch.Tensor:
    """GAE over rows that arrived in completion order. Row j's successor (the same env's next row) is succ[j]
    (-1: its outcome has not arrived; such rows get no advantage). A group holds at most one row per env and
    successors always lie in later groups, so one vectorised pass per group, newest first, suffices. Terminated:
    no bootstrap; truncated: bootstrap with V(final observation) (boot); either way the GAE recursion stops."""
    adv = torch.zeros(n)
    with torch.no_grad():
        for rows in reversed(groups):
            rows = rows[succ[rows] >= 0]
            if len(rows) == 0:
                continue
            nxt = torch.as_tensor(succ[rows])
            r = torch.as_tensor(rows)
            done = term[r] | trunc[r]
            next_value = torch.where(trunc[r], boot[r], values[nxt] * (~term[r]))
            delta = rew[r] + gamma * next_value - values[r]
            adv[r] = delta + gamma * lam * (~done) * adv[nxt]
    return adv


def task_kwargs(env_id: str, train: bool) -> dict:
    """EnvPool-CleanRL's Atari settings for training; the raw game for evaluation."""
    fields = parallel_pool.make_spec(env_id).config._fields
    kw = {}
    if "episodic_life" in fields:
        kw["episodic_life"] = train
    if "reward_clip" in fields:
        kw["reward_clip"] = train
    return kw


def evaluate(agent: Agent, args: Args, episodes: int, seed: int) -> float:
    """Mean return of the greedy policy over `episodes` episodes (one per env of a fresh sync pool)."""
    env = parallel_pool.make(args.env_id, num_envs=episodes, seed=seed, **task_kwargs(args.env_id, train=False))
    return greedy_return(env, agent.greedy)


def main(args: Args) -> dict:
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.torch_threads)

    envs = EpisodeStatistics(
        parallel_pool.make(
            args.env_id,
            num_envs=args.num_envs,
            batch_size=args.batch_size,
            num_threads=args.num_threads,
            seed=args.seed,
            autoreset_mode="same_step",
            **task_kwargs(args.env_id, train=True),
        )
    )
    obs_space = envs.single_observation_space
    agent = Agent(obs_space.shape, int(envs.single_action_space.n))
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    N, B = args.num_envs, args.batch_size
    recvs = -(-args.num_steps * N // B)  # recv calls per rollout
    num_updates = max(1, args.total_timesteps // (recvs * B))
    R = N + recvs * B  # rows: carried-over rows (at most one per env) + this rollout's rows
    obs_buf = torch.zeros((R, *obs_space.shape), dtype=torch.as_tensor(np.zeros(0, obs_space.dtype)).dtype)
    act_buf = torch.zeros(R, dtype=torch.long)
    logp_buf, val_buf = torch.zeros(R), torch.zeros(R)
    rew_buf, boot_buf = torch.zeros(R), torch.zeros(R)
    term_buf, trunc_buf = torch.zeros(R, dtype=torch.bool), torch.zeros(R, dtype=torch.bool)
    env_buf = np.zeros(R, dtype=np.int64)
    succ = np.full(R, -1, dtype=np.int64)  # next row of the same env (its outcome has arrived)
    pending = np.full(N, -1, dtype=np.int64)  # each env's row whose outcome has not arrived yet

    start = time.perf_counter()
    global_step, updates = 0, 0
    evals = GreedyEvaluations(args, lambda episodes, seed: evaluate(agent, args, episodes, seed), last=None)
    stats = {"pg_loss": None, "v_loss": None, "entropy": None}
    envs.async_reset()
    bar = tqdm(total=num_updates * recvs * B, disable=not args.progress, unit="step")
    for update in range(num_updates):
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = (1.0 - update / num_updates) * args.learning_rate
        # rows still waiting for their outcome move to the front of the new rollout
        carried = np.flatnonzero(pending >= 0)
        src = torch.as_tensor(pending[carried])
        m = len(carried)
        for buf in (obs_buf, act_buf, logp_buf, val_buf):
            buf[:m] = buf[src].clone()
        env_buf[:m] = carried
        succ[:] = -1
        pending[carried] = np.arange(m)
        groups = [np.arange(m)] if m else []
        n = m
        for _ in range(recvs):
            obs, reward, term, trunc, info = envs.recv()
            ids = info["env_id"].astype(np.int64)
            prev = pending[ids]
            has = prev >= 0
            p = prev[has]
            rew_buf[p] = torch.as_tensor(reward[has], dtype=torch.float32)
            term_buf[p] = torch.as_tensor(term[has])
            trunc_buf[p] = torch.as_tensor(trunc[has])
            cut = has & trunc
            if cut.any():  # bootstrap a truncated episode with V(final observation)
                final = torch.as_tensor(np.stack(info["final_obs"][np.flatnonzero(cut)]))
                with torch.no_grad():
                    boot_buf[prev[cut]] = agent.get_value(final)
            x = torch.as_tensor(obs)
            with torch.no_grad():
                action, logp, _, value = agent.get_action_and_value(x)
            envs.send(action.numpy(), ids.astype(np.int32))
            rows = np.arange(n, n + len(ids))
            obs_buf[rows] = x
            act_buf[rows], logp_buf[rows], val_buf[rows] = action, logp, value
            env_buf[rows] = ids
            succ[p] = rows[has]
            pending[ids] = rows
            groups.append(rows)
            n += len(ids)
            global_step += len(ids)
        bar.update(recvs * B)

        adv = chain_gae(groups, succ, rew_buf, term_buf, trunc_buf, boot_buf, val_buf, args.gamma, args.gae_lambda, n)
        train = torch.as_tensor(np.flatnonzero(succ[:n] >= 0))
        # CleanRL's PPO epochs, value loss unclipped
        b_obs, b_act, b_logp, b_val = obs_buf[train], act_buf[train], logp_buf[train], val_buf[train]
        losses = ppo_epochs(agent, optimizer, args, b_obs, b_act, b_logp, adv[train], b_val, clip_vloss=False)
        stats = {k: losses[k] for k in ("pg_loss", "v_loss", "entropy")}
        updates += 1
        recent = list(envs.return_queue)[-20:]
        bar.set_postfix(ret=f"{np.mean(recent):.1f}" if recent else "-")
        if evals.target_reached(global_step):
            break
    bar.close()
    seconds = time.perf_counter() - start
    eval_return = evals.last
    if args.final_eval_episodes:
        eval_return = evaluate(agent, args, args.final_eval_episodes, seed=args.seed + 20_000)
    envs.close()
    return print_summary(
        args, envs, global_step, seconds, evals, eval_return, num_envs=N, batch_size=B, updates=updates, **stats
    )


if __name__ == "__main__":
    main(tyro.cli(Args))
