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
import time
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import tyro
from torch.distributions.normal import Normal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (  # noqa: E402
    Rollout,
    RunLog,
    check_args,
    load_checkpoint,
    machine,
    make_envs,
    pick_device,
    ppo_update,
    save_checkpoint,
)


@dataclass
class Args:
    env_id: str = "HalfCheetah-v5"
    backend: str = "pp"
    """pp (ParallelPool sync) | pp-async (send/recv, batch_size < num_envs) | envpool | gymnasium (AsyncVectorEnv)"""
    seed: int = 1
    total_timesteps: int = 1_000_000
    time_budget: float = 0.0
    """stop after the first update that ends past this many seconds of training, resumed segments included (0: none)"""
    num_envs: int = 8
    batch_size: int = 0
    """pp-async: envs per recv (0: num_envs // 2)"""
    num_steps: int = 256
    """steps per env per rollout (rollout = num_envs * num_steps rows)"""
    learning_rate: float = 3e-4
    anneal_lr: bool = True
    gamma: float = 0.99
    gae_lambda: float = 0.95
    num_minibatches: int = 32
    update_epochs: int = 10
    norm_adv: bool = True
    clip_coef: float = 0.2
    clip_vloss: bool = True
    ent_coef: float = 0.0
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    device: str = "cpu"
    """torch device: cpu, or cuda when this torch has CUDA"""
    torch_threads: int = 1
    log: str = ""
    """JSONL run log (appended to)"""
    checkpoint: str = ""
    """save the learner here every --checkpoint-every updates and at the end; an existing one is resumed from"""
    checkpoint_every: int = 50


def layer_init(layer: nn.Linear, std: float = np.sqrt(2), bias: float = 0.0) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


class Agent(nn.Module):
    def __init__(self, obs_dim: int, act_dim: int):
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, 1), std=1.0),
        )
        self.actor_mean = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, act_dim), std=0.01),
        )
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
    check_args(args)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    torch.set_num_threads(args.torch_threads)
    device = pick_device(args.device)
    ckpt = load_checkpoint(args.checkpoint)
    # a resumed run's envs start from a fresh seed: replaying the first segment's episodes would be no new data
    env_seed = args.seed + (ckpt["update"] * 7919 if ckpt else 0)
    envs = make_envs(args.backend, args.env_id, args.num_envs, env_seed, args.batch_size)
    obs_space, act_space = envs.single_observation_space, envs.single_action_space
    obs_dim, act_dim = int(np.prod(obs_space.shape)), int(np.prod(act_space.shape))
    low, high = act_space.low.astype(np.float32), act_space.high.astype(np.float32)

    agent = Agent(obs_dim, act_dim).to(device)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    obs_rms, ret_rms = RunningMeanStd((obs_dim,)), RunningMeanStd()
    discounted = np.zeros(args.num_envs)  # each env's discounted return, for the reward scale
    update, global_step, elapsed = 0, 0, 0.0
    if ckpt:
        agent.load_state_dict(ckpt["agent"])
        optimizer.load_state_dict(ckpt["optimizer"])
        obs_rms, ret_rms = ckpt["obs_rms"], ckpt["ret_rms"]
        update, global_step, elapsed = ckpt["update"], ckpt["global_step"], ckpt["elapsed"]
    log = RunLog(args.log, args, args.backend, args.env_id, resumed=ckpt is not None)

    N, B = envs.num_envs, envs.batch_size
    recvs = -(-args.num_steps * N // B)  # recv calls per rollout
    num_updates = max(1, args.total_timesteps // (recvs * B))
    ro = Rollout(N, recvs * B, (obs_dim,), torch.float32, (act_dim,), torch.float32)

    def policy(raw_obs: np.ndarray):
        obs_rms.update(raw_obs)
        x = np.clip((raw_obs - obs_rms.mean) / np.sqrt(obs_rms.var + 1e-8), -10, 10)
        x = torch.as_tensor(x, dtype=torch.float32)
        with torch.no_grad():
            action, logp, _, value = agent.get_action_and_value(x.to(device))
        return x, action.cpu(), logp.cpu(), value.cpu()

    start = time.perf_counter() - elapsed
    reason = "total_timesteps"
    envs.start()
    while update < num_updates:
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = (1.0 - update / num_updates) * args.learning_rate
        t0, env0, infer_s = time.perf_counter(), envs.env_seconds, 0.0
        ro.begin()
        returns: list[float] = []
        lengths: list[int] = []
        for _ in range(recvs):
            raw_obs, reward, term, trunc, ids = envs.recv()
            t = time.perf_counter()
            discounted[ids] = discounted[ids] * args.gamma * (1 - term) + reward
            ret_rms.update(discounted[ids])
            scaled = np.clip(reward / np.sqrt(ret_rms.var + 1e-8), -10, 10)
            x, action, logp, value = policy(raw_obs.reshape(len(ids), -1))
            env_action = np.clip(action.numpy(), low, high).astype(act_space.dtype)
            infer_s += time.perf_counter() - t
            envs.send(env_action, ids)
            r, ln = ro.add(x, reward, scaled, term, trunc, ids, action, logp, value)
            returns += r
            lengths += ln
            global_step += len(ids)

        t = time.perf_counter()
        stats = ppo_update(agent, optimizer, ro, args, device)
        learn_s = time.perf_counter() - t
        update += 1

        wall = time.perf_counter() - start
        log.write(
            kind="update",
            update=update,
            steps=global_step,
            wall=round(wall, 3),
            update_s=round(time.perf_counter() - t0, 4),
            env_s=round(envs.env_seconds - env0, 4),
            infer_s=round(infer_s, 4),
            learn_s=round(learn_s, 4),
            returns=[round(v, 2) for v in returns],
            lengths=lengths,
            **machine(),
            **stats,
            lr=optimizer.param_groups[0]["lr"],
        )
        out_of_time = bool(args.time_budget) and wall >= args.time_budget
        if args.checkpoint and (update % args.checkpoint_every == 0 or update == num_updates or out_of_time):
            save_checkpoint(
                args.checkpoint,
                agent=agent.state_dict(),
                optimizer=optimizer.state_dict(),
                obs_rms=obs_rms,
                ret_rms=ret_rms,
                update=update,
                global_step=global_step,
                elapsed=wall,
            )
        if out_of_time:
            reason = "time_budget"
            break
    envs.close()
    wall = time.perf_counter() - start
    summary = {"reason": reason, "updates": update, "steps": global_step, "wall": round(wall, 1)}
    log.write(kind="end", **summary)
    log.close()
    print("SUMMARY", summary)
    return summary


if __name__ == "__main__":
    main(tyro.cli(Args))
