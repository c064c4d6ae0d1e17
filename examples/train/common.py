"""What the two headline PPO scripts (ppo_continuous.py, ppo_atari.py) share because it is really the same: the env
backend behind one switch, the rollout of rows in arrival order with its GAE, the PPO update, the run log, checkpoints.
The single-file examples (examples/ppo_cartpole.py, examples/ppo_atari_async.py) use its arguments, networks and PPO
epochs (their rollouts, with same-step autoreset, are their own) and share their greedy evaluation and summary here.

Every backend is driven through the same two calls, EnvPool's async pattern: ``recv()`` hands back a batch of rows
(observation, the reward/terminated/truncated of that env's previous action, env ids) and ``send(action, env_ids)``
acts on exactly those envs. A sync backend is the special case where each batch is every env in order (``send``
keeps the actions, the next ``recv`` steps them), so one rollout and one GAE serve all four backends and the
algorithm cannot differ between them. All backends use next-step autoreset (EnvPool's, gymnasium's default): the
row after an episode end holds the true final observation, its action is ignored and the following row is the reset.
Such a "dead" row is never trained on; its value is what a truncated episode bootstraps from.

Over 600 lines for one reason: it is what keeps the headline scripts single files; each part (backends, rollout,
update, log, checkpoints) is a section a script uses whole.
"""

from __future__ import annotations

import functools
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import psutil
import runlog
import torch

BACKENDS = ("pp", "pp-async", "envpool", "gymnasium")


@dataclass
class PPOHyperparams:
    """CleanRL's PPO arguments that every torch PPO script here takes (the two train scripts and the single-file
    examples); each script subclasses it and sets its own defaults where CleanRL's for its task differ."""

    env_id: str = ""
    """the task id (parallel_pool.list_all_envs())"""
    seed: int = 1
    """seed of the experiment (envs, torch, numpy)"""
    total_timesteps: int = 1_000_000
    """step budget (env steps)"""
    num_envs: int = 8
    """number of parallel envs"""
    num_steps: int = 128
    """steps per env per rollout (rollout = num_envs * num_steps rows)"""
    learning_rate: float = 2.5e-4
    """Adam learning rate"""
    gamma: float = 0.99
    """discount factor"""
    gae_lambda: float = 0.95
    """GAE's lambda"""
    num_minibatches: int = 4
    """minibatches per epoch of the PPO update"""
    update_epochs: int = 4
    """epochs over the rollout per PPO update"""
    norm_adv: bool = True
    """normalise the advantages per minibatch"""
    clip_coef: float = 0.2
    """the PPO clip range"""
    ent_coef: float = 0.0
    """entropy bonus weight"""
    vf_coef: float = 0.5
    """value loss weight"""
    max_grad_norm: float = 0.5
    """gradient norm clip"""
    torch_threads: int = 1
    """torch.set_num_threads"""


@dataclass
class PPOArgs(PPOHyperparams):
    """The arguments both train scripts take."""

    backend: str = "pp"
    """pp (ParallelPool sync) | pp-async (send/recv, batch_size < num_envs) | envpool | gymnasium (AsyncVectorEnv)"""
    time_budget: float = 0.0
    """stop after the first update that ends past this many seconds of training, resumed segments included (0: none)"""
    batch_size: int = 0
    """pp-async: envs per recv (0: num_envs // 2)"""
    anneal_lr: bool = True
    clip_vloss: bool = True
    device: str = "cpu"
    """torch device: cpu, or cuda when this torch has CUDA"""
    log: str = ""
    """JSONL run log (appended to)"""
    checkpoint: str = ""
    """save the learner here every --checkpoint-every updates and at the end; an existing one is resumed from"""
    checkpoint_every: int = 50


# ---- env backends ------------------------------------------------------------------------------------------------
class Envs:
    """One backend behind recv/send. ``env_seconds`` accumulates the wall time spent inside the backend's calls."""

    def __init__(self, env: Any, num_envs: int, batch_size: int, sync: bool, reset_seed: int | None):
        self.env = env
        self.num_envs = num_envs
        self.batch_size = batch_size
        self.sync = sync
        self.single_observation_space = (
            env.single_observation_space if hasattr(env, "single_observation_space") else None
        )
        self.single_action_space = env.single_action_space if hasattr(env, "single_action_space") else None
        self.env_seconds = 0.0
        self._reset_seed = reset_seed
        self._action: np.ndarray | None = None
        self._first: tuple | None = None
        self._all = np.arange(num_envs, dtype=np.int32)

    def start(self) -> None:
        """Reset every env; the first recv()s return the reset observations (reward 0)."""
        t = time.perf_counter()
        if self.sync:
            kw = {} if self._reset_seed is None else {"seed": self._reset_seed}
            obs, _ = self.env.reset(**kw)
            zeros = np.zeros(self.num_envs, dtype=bool)
            self._first = (obs, np.zeros(self.num_envs), zeros, zeros, self._all)
        else:
            self.env.async_reset()
        self.env_seconds += time.perf_counter() - t

    def recv(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        t = time.perf_counter()
        if self._first is not None:
            out, self._first = self._first, None
        elif self.sync:
            obs, reward, term, trunc, _ = self.env.step(self._action)
            out = (obs, reward, term, trunc, self._all)
        else:
            obs, reward, term, trunc, info = self.env.recv()
            out = (obs, reward, term, trunc, np.asarray(info["env_id"], dtype=np.int32))
        self.env_seconds += time.perf_counter() - t
        return out

    def send(self, action: np.ndarray, env_ids: np.ndarray) -> None:
        t = time.perf_counter()
        if self.sync:
            self._action = action  # rows came in env order: the next recv() steps them
        else:
            self.env.send(action, env_ids)
        self.env_seconds += time.perf_counter() - t

    def close(self) -> None:
        self.env.close()


def make_envs(backend: str, task_id: str, num_envs: int, seed: int, batch_size: int = 0) -> Envs:
    """`task_id` (our id, which is EnvPool's) on `backend`. Env i is seeded from (seed, i) by every backend
    (ParallelPool and EnvPool from the pool's seed, gymnasium by reset(seed=seed): seed + i). ``batch_size`` is used
    by pp-async only (0: num_envs // 2, EnvPool's async examples' ratio)."""
    if backend == "pp":
        import parallel_pool

        return Envs(parallel_pool.make(task_id, num_envs=num_envs, seed=seed), num_envs, num_envs, True, None)
    if backend == "pp-async":
        import parallel_pool

        b = batch_size or max(1, num_envs // 2)
        if not 0 < b < num_envs:
            raise ValueError(f"pp-async needs 0 < batch_size < num_envs, got batch_size={b}, num_envs={num_envs}")
        return Envs(parallel_pool.make(task_id, num_envs=num_envs, batch_size=b, seed=seed), num_envs, b, False, None)
    if backend == "envpool":
        import envpool

        return Envs(envpool.make_gymnasium(task_id, num_envs=num_envs, seed=seed), num_envs, num_envs, True, None)
    if backend == "gymnasium":
        from gymnasium.vector import AsyncVectorEnv

        from parallel_pool.bench import peers

        peer, why = peers.gymnasium_peer(task_id)
        if peer is None:
            raise ValueError(f"no gymnasium equivalent of {task_id}: {why}")
        env = AsyncVectorEnv([functools.partial(peers.make_env, peer) for _ in range(num_envs)])
        return Envs(env, num_envs, num_envs, True, seed)
    raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")


# ---- the networks (CleanRL's) --------------------------------------------------------------------------------------
def layer_init(layer: torch.nn.Module, std: float = np.sqrt(2), bias: float = 0.0) -> torch.nn.Module:
    """Orthogonal weights with gain `std`, constant bias."""
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias)
    return layer


def tanh_mlp(n_in: int, n_out: int, std: float) -> torch.nn.Sequential:
    """CleanRL's actor/critic for vector observations: two 64-unit tanh layers, the output layer's gain `std`."""
    return torch.nn.Sequential(
        layer_init(torch.nn.Linear(n_in, 64)),
        torch.nn.Tanh(),
        layer_init(torch.nn.Linear(64, 64)),
        torch.nn.Tanh(),
        layer_init(torch.nn.Linear(64, n_out), std=std),
    )


def nature_cnn(obs_shape: tuple[int, ...]) -> torch.nn.Sequential:
    """The Nature DQN torso of CleanRL's Atari scripts over (frames, H, W) observations (the caller scales them):
    three ReLU convolutions, then 512 ReLU units."""
    conv = [
        layer_init(torch.nn.Conv2d(obs_shape[0], 32, 8, stride=4)),
        torch.nn.ReLU(),
        layer_init(torch.nn.Conv2d(32, 64, 4, stride=2)),
        torch.nn.ReLU(),
        layer_init(torch.nn.Conv2d(64, 64, 3, stride=1)),
        torch.nn.ReLU(),
        torch.nn.Flatten(),
    ]
    with torch.no_grad():  # 64 * 7 * 7 for 84 x 84 frames
        n_flat = torch.nn.Sequential(*conv)(torch.zeros(1, *obs_shape)).shape[1]
    return torch.nn.Sequential(*conv, layer_init(torch.nn.Linear(n_flat, 512)), torch.nn.ReLU())


# ---- the rollout: rows in arrival order -------------------------------------------------------------------------
class Rollout:
    """Rows (observation, action, log-prob, value) in the order the backend handed them out. A row's outcome (reward,
    terminated, truncated) arrives with the next row of the same env, its successor. Rows whose outcome has not
    arrived when a rollout ends move to the front of the next one. Also counts the real episodes (raw rewards)."""

    def __init__(
        self,
        num_envs: int,
        rows: int,
        obs_shape: tuple,
        obs_dtype: torch.dtype,
        act_shape: tuple,
        act_dtype: torch.dtype,
    ):
        size = num_envs + rows  # carried rows (at most one per env) + this rollout's rows
        self.obs = torch.zeros((size, *obs_shape), dtype=obs_dtype)
        self.act = torch.zeros((size, *act_shape), dtype=act_dtype)
        self.logp, self.value, self.reward = torch.zeros(size), torch.zeros(size), torch.zeros(size)
        self.term = torch.zeros(size, dtype=torch.bool)
        self.trunc = torch.zeros(size, dtype=torch.bool)
        self.dead = np.zeros(size, dtype=bool)  # the row after an episode end: its action is ignored by the env
        self.succ = np.full(size, -1, dtype=np.int64)  # the same env's next row (-1: outcome not arrived)
        self.pending = np.full(num_envs, -1, dtype=np.int64)  # each env's row still waiting for its outcome
        self.groups: list[np.ndarray] = []  # one per recv: at most one row per env, successors in later groups
        self.n = 0
        self.ep_return = np.zeros(num_envs)
        self.ep_length = np.zeros(num_envs, dtype=np.int64)

    def begin(self) -> None:
        """Start a rollout: the rows still waiting for their outcome move to the front."""
        envs = np.flatnonzero(self.pending >= 0)
        src = torch.as_tensor(self.pending[envs])
        m = len(envs)
        for buf in (self.obs, self.act, self.logp, self.value):
            buf[:m] = buf[src].clone()
        self.dead[:m] = self.dead[self.pending[envs]]
        self.succ[:] = -1
        self.pending[envs] = np.arange(m)
        self.groups = [np.arange(m)] if m else []
        self.n = m

    def add(
        self,
        obs: torch.Tensor,
        raw_reward: np.ndarray,
        reward: np.ndarray,
        term: np.ndarray,
        trunc: np.ndarray,
        ids: np.ndarray,
        action: torch.Tensor,
        logp: torch.Tensor,
        value: torch.Tensor,
    ) -> tuple[list, list]:
        """One batch from recv() and the actions sent for it. `reward` is what the learner sees, `raw_reward` the
        game's (episode returns). Returns (returns, lengths) of the episodes that ended in this batch."""
        prev = self.pending[ids]
        has = prev >= 0
        p = prev[has]
        real = has.copy()
        real[has] = ~self.dead[p]  # the outcome of a real step (not of the reset after an episode end)
        self.reward[p] = torch.as_tensor(reward[has], dtype=torch.float32)
        self.term[p] = torch.as_tensor(term[has])
        self.trunc[p] = torch.as_tensor(trunc[has])
        rows = np.arange(self.n, self.n + len(ids))
        self.obs[rows] = obs
        self.act[rows], self.logp[rows], self.value[rows] = action, logp, value
        self.dead[rows] = real & (term | trunc)
        self.succ[p] = rows[has]
        self.pending[ids] = rows
        self.groups.append(rows)
        self.n += len(ids)
        # episode statistics from the real steps
        envs = ids[real]
        self.ep_return[envs] += raw_reward[real]
        self.ep_length[envs] += 1
        ended = ids[real & (term | trunc)]
        returns, lengths = self.ep_return[ended].tolist(), self.ep_length[ended].tolist()
        self.ep_return[ended], self.ep_length[ended] = 0, 0
        return returns, lengths

    def advantages(self, gamma: float, lam: float) -> tuple[torch.Tensor, torch.Tensor]:
        """(the rows to train on, their GAE advantages). GAE follows each env's chain of rows, newest group first
        (a group holds at most one row per env and successors lie in later groups, so each group is one vectorised
        step). Terminated: no bootstrap; truncated: bootstrap with the value of the successor (the dead row holding
        the final observation); either way the recursion stops there."""
        adv = torch.zeros(self.n)
        with torch.no_grad():
            for rows in reversed(self.groups):
                rows = rows[self.succ[rows] >= 0]
                if len(rows) == 0:
                    continue
                nxt, r = torch.as_tensor(self.succ[rows]), torch.as_tensor(rows)
                next_value = self.value[nxt] * (~self.term[r])
                delta = self.reward[r] + gamma * next_value - self.value[r]
                adv[r] = delta + gamma * lam * (~(self.term[r] | self.trunc[r])) * adv[nxt]
        train = np.flatnonzero((self.succ[: self.n] >= 0) & ~self.dead[: self.n])
        idx = torch.as_tensor(train)
        return idx, adv[idx]


# ---- the PPO update (CleanRL's, the same for both scripts) -------------------------------------------------------
def ppo_update(agent: Any, optimizer: torch.optim.Optimizer, ro: Rollout, args: Any, device: torch.device) -> dict:
    """PPO on the rollout's trainable rows (ppo_epochs), value loss clipped as args.clip_vloss says."""
    idx, b_adv = ro.advantages(args.gamma, args.gae_lambda)
    b_obs, b_act = ro.obs[idx].to(device), ro.act[idx].to(device)
    b_logp, b_val = ro.logp[idx].to(device), ro.value[idx].to(device)
    return ppo_epochs(agent, optimizer, args, b_obs, b_act, b_logp, b_adv.to(device), b_val, args.clip_vloss)


def ppo_epochs(
    agent: Any,
    optimizer: torch.optim.Optimizer,
    args: Any,
    b_obs: torch.Tensor,
    b_act: torch.Tensor,
    b_logp: torch.Tensor,
    b_adv: torch.Tensor,
    b_val: torch.Tensor,
    clip_vloss: bool,
) -> dict:
    """update_epochs passes of clipped PPO over a batch of rows (observations, actions, their log-probs, advantages
    and values at collection) in num_minibatches shuffled minibatches; the return target is advantage + value.
    `agent.get_action_and_value(obs, action)` -> (action, log-prob, entropy, value). Returns the last minibatch's
    losses, the last approx KL and the mean clip fraction."""
    b_ret = b_adv + b_val
    size = len(b_adv)
    mb_size = max(1, size // args.num_minibatches)
    clipfracs = []
    for _ in range(args.update_epochs):
        perm = torch.randperm(size, device=b_adv.device)
        for s in range(0, size, mb_size):
            mb = perm[s : s + mb_size]
            _, newlogp, entropy, newvalue = agent.get_action_and_value(b_obs[mb], b_act[mb])
            logratio = newlogp - b_logp[mb]
            ratio = logratio.exp()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - logratio).mean()
                clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
            mb_adv = b_adv[mb]
            if args.norm_adv and len(mb) > 1:
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
            pg_loss = torch.max(
                -mb_adv * ratio, -mb_adv * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
            ).mean()
            if clip_vloss:
                v_clipped = b_val[mb] + torch.clamp(newvalue - b_val[mb], -args.clip_coef, args.clip_coef)
                v_loss = 0.5 * torch.max((newvalue - b_ret[mb]) ** 2, (v_clipped - b_ret[mb]) ** 2).mean()
            else:
                v_loss = 0.5 * ((newvalue - b_ret[mb]) ** 2).mean()
            ent = entropy.mean()
            loss = pg_loss - args.ent_coef * ent + args.vf_coef * v_loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
            optimizer.step()
    return {
        "pg_loss": pg_loss.item(),
        "v_loss": v_loss.item(),
        "entropy": ent.item(),
        "approx_kl": approx_kl.item(),
        "clipfrac": float(np.mean(clipfracs)),
    }


# ---- the single-file examples' greedy evaluation and summary ---------------------------------------------------------
def greedy_return(env: Any, policy: Callable[[torch.Tensor], torch.Tensor]) -> float:
    """Mean return of `policy` (observations -> actions) over one episode per env of the fresh sync pool `env`,
    which it closes."""
    obs, _ = env.reset()
    returns = np.zeros(env.num_envs)
    running = np.ones(env.num_envs, dtype=bool)
    while running.any():
        with torch.no_grad():
            action = policy(torch.as_tensor(obs)).numpy()
        obs, reward, term, trunc, _ = env.step(action)
        returns += reward * running
        running &= ~(term | trunc)
    env.close()
    return float(returns.mean())


class GreedyEvaluations:
    """Every --eval-every env steps, `evaluate(episodes, seed)` (the greedy policy's mean return) on --eval-episodes
    fresh episodes; training stops once it reaches --target-return. `last` is the latest mean return."""

    def __init__(self, args: Any, evaluate: Callable[[int, int], float], last: float | None):
        self.args, self.evaluate, self.last = args, evaluate, last
        self.next_at = args.eval_every
        self.reached_at: int | None = None

    def target_reached(self, step: int) -> bool:
        """Evaluates when `step` env steps have passed the next --eval-every mark; True once the target is reached."""
        if self.args.eval_every and step >= self.next_at:
            self.next_at += self.args.eval_every
            self.last = self.evaluate(self.args.eval_episodes, self.args.seed + 10_000 + step)
            if self.last >= self.args.target_return:
                self.reached_at = step
        return self.reached_at is not None


def print_summary(
    args: Any, envs: Any, steps: int, seconds: float, evals: GreedyEvaluations, eval_return: float | None, **extra: Any
) -> dict:
    """The last line the single-file examples print, ``SUMMARY {...}`` (JSON); `envs` is the training pool's
    EpisodeStatistics, `extra` the script's own entries (appended). Returns the summary."""
    recent = list(envs.return_queue)[-20:]
    summary = {
        "env_id": args.env_id,
        "seed": args.seed,
        "steps": steps,
        "budget": args.total_timesteps,
        "eval_return": eval_return,
        "train_return_last20": float(np.mean(recent)) if recent else None,
        "episodes": envs.episode_count,
        "stopped_early_at": evals.reached_at,
        "seconds": round(seconds, 1),
        "sps": int(steps / seconds),
        **extra,
    }
    print("SUMMARY " + json.dumps(summary))
    return summary


# ---- run log --------------------------------------------------------------------------------------------------------
def machine() -> dict:
    """This process's RSS, the RSS of its child processes (gymnasium's workers), in MiB, and the machine's 1-minute
    load average (how shared the cores were)."""
    me = psutil.Process()
    children = 0
    for c in me.children(recursive=True):
        try:
            children += c.memory_info().rss
        except psutil.Error:
            pass
    return {
        "rss_mb": round(me.memory_info().rss / 2**20, 1),
        "rss_children_mb": round(children / 2**20, 1),
        "load1": os.getloadavg()[0],
    }


class RunLog(runlog.RunLog):
    """The PPO scripts' run log (runlog.RunLog): a "start" line (the command, arguments, versions, machine), one
    "update" line per PPO update, an "end" line. A resumed run appends to the same file (its "start" line says
    resumed). `versions`: the learner library's (default torch's; the JAX script gives jax's)."""

    def __init__(
        self, path: str | None, args: Any, backend: str, task_id: str, resumed: bool, versions: dict | None = None
    ):
        super().__init__(
            path,
            Path(__file__).parent,
            append=True,
            task=task_id,
            backend=backend,
            seed=args.seed,
            resumed=resumed,
            args=vars(args),
            **(versions if versions is not None else {"torch": torch.__version__}),
            device=args.device,
        )


def read_log(path: str | Path) -> list[dict]:
    """The records of a run log (a line cut short by a killed run is dropped)."""
    records = []
    for line in Path(path).read_text().splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records


# ---- checkpoints --------------------------------------------------------------------------------------------------
def save_checkpoint(path: str, **state: Any) -> None:
    """Write atomically (a run killed while saving keeps the previous checkpoint)."""
    tmp = f"{path}.tmp"
    torch.save(state, tmp)
    os.replace(tmp, path)


def load_checkpoint(path: str) -> dict | None:
    return torch.load(path, weights_only=False) if path and os.path.exists(path) else None


def check_args(args: Any) -> None:
    """The run-shape arguments both scripts share, checked before anything starts."""
    for name in ("num_envs", "num_steps", "total_timesteps", "num_minibatches", "update_epochs", "checkpoint_every"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if args.time_budget < 0 or args.batch_size < 0:
        raise ValueError("--time-budget and --batch-size must be >= 0 (0: no budget / the default batch)")
    if args.backend not in BACKENDS:
        raise ValueError(f"unknown backend {args.backend!r}; choose one of {', '.join(BACKENDS)}")


def pick_device(name: str) -> torch.device:
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"--device {name}: this torch ({torch.__version__}) sees no CUDA device")
    return torch.device(name)


# ---- the run: setup and the training loop both scripts share ----------------------------------------------------
def start_run(args: PPOArgs) -> tuple[torch.device, dict | None, Envs]:
    """Checks the arguments, seeds torch and numpy, and returns (device, the checkpoint to resume from or None, the
    envs)."""
    check_args(args)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    torch.set_num_threads(args.torch_threads)
    device = pick_device(args.device)
    ckpt = load_checkpoint(args.checkpoint)
    # a resumed run's envs start from a fresh seed: replaying the first segment's episodes would be no new data
    env_seed = args.seed + (ckpt["update"] * 7919 if ckpt else 0)
    return device, ckpt, make_envs(args.backend, args.env_id, args.num_envs, env_seed, args.batch_size)


# act(obs, reward, terminated, env_ids) -> (learner observation, env action, learner reward, action, log-prob, value)
Act = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], tuple]


def train(
    args: PPOArgs,
    envs: Envs,
    agent: torch.nn.Module,
    device: torch.device,
    ckpt: dict | None,
    rows: tuple[tuple, torch.dtype, tuple, torch.dtype],
    act: Act,
    extra_state: dict | None = None,
) -> dict:
    """PPO until total_timesteps or the time budget, logging every update and checkpointing. `rows` is the rollout's
    (observation shape, dtype, action shape, dtype); `act` is the script's policy step on one recv'd batch (its
    observation/reward preprocessing included); `extra_state` holds the script's own learner state (mutated in place)
    saved with each checkpoint (the script restores it from `ckpt` itself). Closes the envs; returns the summary."""
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
    ro = Rollout(N, recvs * B, *rows)

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
            x, env_action, learner_reward, action, logp, value = act(obs, reward, term, ids)
            infer_s += time.perf_counter() - t
            envs.send(env_action, ids)
            r, ln = ro.add(x, reward, learner_reward, term, trunc, ids, action, logp, value)
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
                **(extra_state or {}),
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
