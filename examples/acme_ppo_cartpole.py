"""PPO written to ACME's interfaces (``acme.core.Actor`` / ``acme.core.Learner``, torch), trained on CartPole-v1
through ``parallel_pool.integrations.acme``'s batched environment and loop.

    python examples/acme_ppo_cartpole.py [--seed 1] [--budget 100000]

ACME's own agents cannot be installed next to this project's pins on Python 3.11 (``dm-acme[jax]`` / ``[tf]``
0.2.4 pin dm-reverb 0.6.1, which has no Python 3.11 wheel; dm-acme 0.4.0 needs dm-launchpad, which has none
either), so the agent is written here against ``acme.core`` with torch: the actor acts on the whole batch, keeps
each env's trajectory apart (the loop passes ``env_id``), and hands a rollout to the learner every
``rollout_size`` env steps; the learner runs PPO epochs and serves its weights through ``get_variables``.
Truncated episodes (LAST with discount 1) bootstrap with V(final observation); terminated ones (discount 0) do not.
Every ``eval_every`` steps the greedy policy plays one episode on each of 20 freshly seeded envs; training stops
once their mean return reaches ``target``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time

import dm_env
import numpy as np
import torch
from acme import core, specs
from acme.utils import loggers
from parallel_pool.integrations.acme import BatchedEnvironment, BatchedEnvironmentLoop
from torch import nn


@dataclasses.dataclass
class Config:
    seed: int = 1
    num_envs: int = 8
    rollout_size: int = 256  # env steps per learner step (8 envs x 32 steps)
    epochs: int = 20
    minibatch_size: int = 256
    gamma: float = 0.98
    gae_lambda: float = 0.8
    learning_rate: float = 1e-3  # annealed linearly to 0 over the budget
    clip: float = 0.2
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    budget: int = 100_000  # env steps
    eval_every: int = 8192
    eval_episodes: int = 20
    target: float = 475.0


def _layer(n_in: int, n_out: int, std: float = np.sqrt(2)) -> nn.Linear:
    layer = nn.Linear(n_in, n_out)
    nn.init.orthogonal_(layer.weight, std)
    nn.init.zeros_(layer.bias)
    return layer


class ActorCritic(nn.Module):
    def __init__(self, obs_dim: int, n_actions: int):
        super().__init__()
        self.pi = nn.Sequential(_layer(obs_dim, 64), nn.Tanh(), _layer(64, 64), nn.Tanh(), _layer(64, n_actions, 0.01))
        self.v = nn.Sequential(_layer(obs_dim, 64), nn.Tanh(), _layer(64, 64), nn.Tanh(), _layer(64, 1, 1.0))

    def dist(self, obs: torch.Tensor) -> torch.distributions.Categorical:
        return torch.distributions.Categorical(logits=self.pi(obs))

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.v(obs).squeeze(-1)


@dataclasses.dataclass
class Rollout:
    """Transitions of each env in time order, concatenated env after env; ``end`` marks each env's last one."""

    obs: np.ndarray
    action: np.ndarray
    reward: np.ndarray
    discount: np.ndarray  # 0 on termination, 1 elsewhere (truncation included)
    next_obs: np.ndarray
    last: np.ndarray  # the episode ended here (terminated or truncated)
    end: np.ndarray  # last transition of its env in this rollout


class PPOLearner(core.Learner):
    """PPO on the rollouts the actor enqueues; one ``step()`` per rollout."""

    def __init__(self, spec: specs.EnvironmentSpec, config: Config):
        self.config = config
        self.net = ActorCritic(int(np.prod(spec.observations.shape)), spec.actions.num_values)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=config.learning_rate, eps=1e-5)
        self._queue: list[Rollout] = []
        self.steps_seen = 0

    def enqueue(self, rollout: Rollout) -> None:
        self._queue.append(rollout)

    def _advantages(self, r: Rollout, v: np.ndarray, v_next: np.ndarray) -> np.ndarray:
        """GAE along each env's chain; a chain restarts after an episode end and stops at the rollout's end (its
        last transition is bootstrapped by V(next_obs), as in CleanRL)."""
        c = self.config
        delta = r.reward + c.gamma * r.discount * v_next - v
        carry = c.gamma * c.gae_lambda * r.discount * (1.0 - r.last) * (1.0 - r.end)
        adv = np.zeros_like(delta)
        acc = 0.0
        for t in range(len(delta) - 1, -1, -1):
            acc = delta[t] + carry[t] * acc
            adv[t] = acc
        return adv

    def step(self) -> None:
        c = self.config
        r = self._queue.pop(0)
        obs, next_obs = torch.as_tensor(r.obs), torch.as_tensor(r.next_obs)
        act = torch.as_tensor(r.action, dtype=torch.int64)
        with torch.no_grad():  # the actor acted with exactly these weights: they are the behaviour policy
            old_logp = self.net.dist(obs).log_prob(act)
            v = self.net.value(obs).numpy()
            v_next = self.net.value(next_obs).numpy()
        adv = self._advantages(r, v, v_next)
        ret = torch.as_tensor(adv + v)
        adv = torch.as_tensor(adv)
        self.steps_seen += len(r.reward)
        for group in self.opt.param_groups:
            group["lr"] = c.learning_rate * max(0.0, 1.0 - self.steps_seen / c.budget)
        n = len(adv)
        for _ in range(c.epochs):
            for idx in np.array_split(np.random.permutation(n), max(1, n // c.minibatch_size)):
                dist = self.net.dist(obs[idx])
                ratio = (dist.log_prob(act[idx]) - old_logp[idx]).exp()
                a = adv[idx]
                a = (a - a.mean()) / (a.std() + 1e-8)
                pg = torch.max(-a * ratio, -a * ratio.clamp(1 - c.clip, 1 + c.clip)).mean()
                v_loss = 0.5 * ((self.net.value(obs[idx]) - ret[idx]) ** 2).mean()
                loss = pg + c.vf_coef * v_loss
                self.opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.net.parameters(), c.max_grad_norm)
                self.opt.step()

    def get_variables(self, names):
        return [{k: v.detach().numpy().copy() for k, v in self.net.state_dict().items()} for _ in names]


class PPOActor(core.Actor):
    """Acts on a batch of observations; keeps each env's transitions apart (``env_id``) until a rollout is full.
    With ``learner=None`` it only acts (greedy if ``greedy``), e.g. for evaluation."""

    def __init__(
        self,
        spec: specs.EnvironmentSpec,
        learner: PPOLearner | None,
        config: Config,
        greedy: bool = False,
        variables: dict | None = None,
    ):
        self.net = ActorCritic(int(np.prod(spec.observations.shape)), spec.actions.num_values)
        self.learner = learner
        self.config = config
        self.greedy = greedy
        self._load(variables if variables is not None else learner.get_variables(["policy"])[0])
        self._prev_obs: dict[int, np.ndarray] = {}
        self._traj: dict[int, list[tuple]] = {}
        self._count = 0

    def _load(self, variables: dict) -> None:
        self.net.load_state_dict({k: torch.as_tensor(v) for k, v in variables.items()})

    def select_action(self, observation: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            dist = self.net.dist(torch.as_tensor(observation))
            action = dist.probs.argmax(-1) if self.greedy else dist.sample()
        return action.numpy().astype(np.int32)

    def observe_first(self, timestep: dm_env.TimeStep, env_id: int = 0) -> None:
        self._prev_obs[env_id] = timestep.observation

    def observe(self, action, next_timestep: dm_env.TimeStep, env_id: int = 0) -> None:
        if self.learner is None:
            return
        last = next_timestep.last()
        self._traj.setdefault(env_id, []).append(
            (
                self._prev_obs[env_id],
                action,
                next_timestep.reward,
                next_timestep.discount,
                next_timestep.observation,
                last,
            )
        )
        self._prev_obs[env_id] = next_timestep.observation
        self._count += 1

    def update(self, wait: bool = False) -> None:
        if self.learner is None or self._count < self.config.rollout_size:
            return
        self.learner.enqueue(self._rollout())
        self.learner.step()
        self._load(self.learner.get_variables(["policy"])[0])

    def _rollout(self) -> Rollout:
        rows, ends = [], []
        for env_id in sorted(self._traj):
            traj = self._traj[env_id]
            rows += traj
            ends += [False] * (len(traj) - 1) + [True]
        self._traj = {}
        self._count = 0
        obs, action, reward, discount, next_obs, last = zip(*rows)
        f32 = np.float32
        return Rollout(
            np.stack(obs).astype(f32),
            np.asarray(action),
            np.asarray(reward, f32),
            np.asarray(discount, f32),
            np.stack(next_obs).astype(f32),
            np.asarray(last, f32),
            np.asarray(ends, f32),
        )


def evaluate(spec: specs.EnvironmentSpec, variables: dict, config: Config, seed: int) -> float:
    """Mean return of the greedy policy over the first episode of each of ``eval_episodes`` fresh envs."""
    env = BatchedEnvironment("CartPole-v1", num_envs=config.eval_episodes, seed=seed)
    actor = PPOActor(spec, None, config, greedy=True, variables=variables)
    logger = loggers.InMemoryLogger()
    loop = BatchedEnvironmentLoop(env, actor, logger=logger, should_update=False)
    first: dict[int, float] = {}
    while len(first) < config.eval_episodes:
        loop.run(num_steps=config.eval_episodes)
        for record in logger.data:
            first.setdefault(record["env_id"], record["episode_return"])
    env.close()
    return float(np.mean(list(first.values())))


def train(config: Config, logger: loggers.Logger | None = None) -> dict:
    """Train until the greedy evaluation reaches ``target`` or ``budget`` env steps; then evaluate on fresh
    envs. Returns a summary (steps used, last and final evaluation returns, seconds)."""
    torch.manual_seed(config.seed)
    np.random.seed(config.seed)
    env = BatchedEnvironment("CartPole-v1", num_envs=config.num_envs, seed=config.seed)
    spec = specs.make_environment_spec(env)
    learner = PPOLearner(spec, config)
    actor = PPOActor(spec, learner, config)
    logger = logger or loggers.InMemoryLogger()
    loop = BatchedEnvironmentLoop(env, actor, logger=logger)
    t0 = time.perf_counter()
    steps, eval_return = 0, float("nan")
    while steps < config.budget:
        steps += loop.run(num_steps=min(config.eval_every, config.budget - steps))
        eval_return = evaluate(spec, learner.get_variables(["policy"])[0], config, config.seed + 10_000 + steps)
        if eval_return >= config.target:
            break
    seconds = time.perf_counter() - t0
    env.close()
    final = evaluate(spec, learner.get_variables(["policy"])[0], config, config.seed + 20_000)
    return {"steps": steps, "eval_return": eval_return, "final_eval_return": final, "seconds": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=Config.seed)
    parser.add_argument("--budget", type=int, default=Config.budget)
    args = parser.parse_args()
    torch.set_num_threads(1)
    summary = train(Config(seed=args.seed, budget=args.budget), loggers.TerminalLogger("train", time_delta=5.0))
    print("SUMMARY " + json.dumps(summary))


if __name__ == "__main__":
    main()
