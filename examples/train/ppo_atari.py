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
import time
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import tyro
from torch.distributions.categorical import Categorical

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
    env_id: str = "Pong-v5"
    backend: str = "pp"
    """pp (ParallelPool sync) | pp-async (send/recv, batch_size < num_envs) | envpool | gymnasium (AsyncVectorEnv)"""
    seed: int = 1
    total_timesteps: int = 10_000_000
    time_budget: float = 0.0
    """stop after the first update that ends past this many seconds of training, resumed segments included (0: none)"""
    num_envs: int = 8
    batch_size: int = 0
    """pp-async: envs per recv (0: num_envs // 2)"""
    num_steps: int = 128
    """steps per env per rollout (rollout = num_envs * num_steps rows)"""
    learning_rate: float = 2.5e-4
    anneal_lr: bool = True
    gamma: float = 0.99
    gae_lambda: float = 0.95
    num_minibatches: int = 4
    update_epochs: int = 4
    norm_adv: bool = True
    clip_coef: float = 0.1
    clip_vloss: bool = True
    ent_coef: float = 0.01
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


def layer_init(layer: nn.Module, std: float = np.sqrt(2), bias: float = 0.0) -> nn.Module:
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


class Agent(nn.Module):
    def __init__(self, obs_shape: tuple[int, ...], n_actions: int):
        super().__init__()
        self.network = nn.Sequential(
            layer_init(nn.Conv2d(obs_shape[0], 32, 8, stride=4)),
            nn.ReLU(),
            layer_init(nn.Conv2d(32, 64, 4, stride=2)),
            nn.ReLU(),
            layer_init(nn.Conv2d(64, 64, 3, stride=1)),
            nn.ReLU(),
            nn.Flatten(),
            layer_init(nn.Linear(64 * 7 * 7, 512)),
            nn.ReLU(),
        )
        self.actor = layer_init(nn.Linear(512, n_actions), std=0.01)
        self.critic = layer_init(nn.Linear(512, 1), std=1)

    def get_action_and_value(self, x: torch.Tensor, action: torch.Tensor | None = None):
        hidden = self.network(x.float() / 255.0)
        probs = Categorical(logits=self.actor(hidden))
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(hidden).flatten()


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
    if len(obs_space.shape) != 3:
        raise ValueError(f"{args.env_id}: the Nature CNN needs (frames, 84, 84) observations, got {obs_space.shape}")

    agent = Agent(obs_space.shape, int(act_space.n)).to(device)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    update, global_step, elapsed = 0, 0, 0.0
    if ckpt:
        agent.load_state_dict(ckpt["agent"])
        optimizer.load_state_dict(ckpt["optimizer"])
        update, global_step, elapsed = ckpt["update"], ckpt["global_step"], ckpt["elapsed"]
    log = RunLog(args.log, args, args.backend, args.env_id, resumed=ckpt is not None)

    N, B = envs.num_envs, envs.batch_size
    recvs = -(-args.num_steps * N // B)  # recv calls per rollout
    num_updates = max(1, args.total_timesteps // (recvs * B))
    ro = Rollout(N, recvs * B, obs_space.shape, torch.uint8, (), torch.long)

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
            obs, reward, term, trunc, ids = envs.recv()
            t = time.perf_counter()
            x = torch.as_tensor(obs)
            with torch.no_grad():
                action, logp, _, value = agent.get_action_and_value(x.to(device))
            action, logp, value = action.cpu(), logp.cpu(), value.cpu()
            infer_s += time.perf_counter() - t
            envs.send(action.numpy(), ids)
            r, ln = ro.add(x, reward, np.sign(reward), term, trunc, ids, action, logp, value)
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
