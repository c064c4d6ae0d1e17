"""Training reproduction: Tianshou PPO on CartPole-v1 through parallel_pool.integrations.tianshou (its Collector and
OnPolicyTrainer) reaches a mean (deterministic) test return >= 475 within a fixed step budget.
Budget and wall-clock: docs/training.md."""

from __future__ import annotations

import time

import numpy as np
import pytest

pytest.importorskip("tianshou")
torch = pytest.importorskip("torch")

from parallel_pool.integrations.tianshou import ParallelPoolVectorEnv  # noqa: E402
from tianshou.algorithm import PPO  # noqa: E402
from tianshou.algorithm.modelfree.reinforce import DiscreteActorPolicy  # noqa: E402
from tianshou.algorithm.optim import AdamOptimizerFactory  # noqa: E402
from tianshou.data import Collector, VectorReplayBuffer  # noqa: E402
from tianshou.trainer import OnPolicyTrainerParams  # noqa: E402
from tianshou.utils.net.common import Net  # noqa: E402
from tianshou.utils.net.discrete import DiscreteActor, DiscreteCritic  # noqa: E402

SEED = 0
BUDGET = 100_000  # env steps
TARGET = 475.0
NUM_ENVS = 8


class _TwiceInARow:
    """Tianshou calls stop_fn with the best score so far, so the streak is kept from each test's own score
    (compute_score_fn sees every test step's returns)."""

    def __init__(self, target: float):
        self.target, self.streak = target, 0

    def score(self, stats) -> float:
        mean = float(stats.returns_stat.mean)
        self.streak = self.streak + 1 if mean >= self.target else 0
        return mean

    def stop(self, best_score: float) -> bool:
        return self.streak >= 2


def train_tianshou_cartpole(seed: int = SEED, budget: int = BUDGET, epoch_steps: int = 8_192):
    """PPO (collect 256 steps, 20 passes in minibatches of 256, gamma 0.98, GAE 0.8); after every epoch of
    `epoch_steps` steps, 20 deterministic test episodes; stops once two epochs in a row have a mean >= TARGET
    (one alone is not enough: Tianshou's early PPO policies can be perfect on 20 starts and poor on the next 20).
    Returns (steps used, final mean return over 20 fresh test episodes, seconds)."""
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    np.random.seed(seed)
    train_envs = ParallelPoolVectorEnv("CartPole-v1", num_envs=NUM_ENVS, seed=seed)
    test_envs = ParallelPoolVectorEnv("CartPole-v1", num_envs=10, seed=seed + 1000)
    obs_space = train_envs.observation_space[0]
    act_space = train_envs.action_space[0]
    actor = DiscreteActor(
        preprocess_net=Net(state_shape=obs_space.shape, hidden_sizes=[64, 64], activation=torch.nn.Tanh),
        action_shape=act_space.n,
        softmax_output=False,
    )
    critic = DiscreteCritic(
        preprocess_net=Net(state_shape=obs_space.shape, hidden_sizes=[64, 64], activation=torch.nn.Tanh)
    )
    policy = DiscreteActorPolicy(
        actor=actor, action_space=act_space, observation_space=obs_space, deterministic_eval=True
    )
    algo = PPO(
        policy=policy,
        critic=critic,
        optim=AdamOptimizerFactory(lr=1e-3),
        eps_clip=0.2,
        vf_coef=0.5,
        ent_coef=0.0,
        max_grad_norm=0.5,
        gae_lambda=0.8,
        gamma=0.98,
        max_batchsize=2048,
    )
    train_collector = Collector(algo, train_envs, VectorReplayBuffer(4096, NUM_ENVS))
    test_collector = Collector(algo, test_envs)
    streak = _TwiceInARow(TARGET)
    params = OnPolicyTrainerParams(
        training_collector=train_collector,
        test_collector=test_collector,
        max_epochs=budget // epoch_steps,
        epoch_num_steps=epoch_steps,
        collection_step_num_env_steps=256,
        update_step_num_repetitions=20,
        batch_size=256,
        test_step_num_episodes=20,
        stop_fn=streak.stop,
        compute_score_fn=streak.score,
        verbose=False,
        show_progress=False,
    )
    t0 = time.perf_counter()
    algo.run_training(params)
    seconds = time.perf_counter() - t0
    steps = train_collector.collect_step
    algo.policy.eval()
    test_collector.reset()
    stats = test_collector.collect(n_episode=20)
    mean = float(np.mean(stats.returns))
    train_envs.close()
    test_envs.close()
    return steps, mean, seconds


@pytest.mark.training
def test_tianshou_ppo_cartpole_reaches_475():
    steps, mean, seconds = train_tianshou_cartpole()
    print(f"Tianshou PPO CartPole-v1: mean return {mean:.1f} after {steps} steps in {seconds:.0f}s")
    assert steps <= BUDGET
    assert mean >= TARGET, f"mean return {mean:.1f} < {TARGET} after {steps} steps"


if __name__ == "__main__":
    print(train_tianshou_cartpole())
