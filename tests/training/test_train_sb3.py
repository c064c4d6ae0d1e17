"""Training reproduction: SB3 PPO on CartPole-v1 through parallel_pool.integrations.sb3 reaches a mean
(deterministic) evaluation return >= 475 within a fixed step budget. Budget and wall-clock: docs/training.md."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("stable_baselines3")
torch = pytest.importorskip("torch")

from parallel_pool.integrations.sb3 import ParallelPoolVecEnv  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.callbacks import EvalCallback, StopTrainingOnRewardThreshold  # noqa: E402
from stable_baselines3.common.evaluation import evaluate_policy  # noqa: E402
from stable_baselines3.common.vec_env import VecMonitor  # noqa: E402

SEED = 1
BUDGET = 100_000  # env steps
TARGET = 475.0


def _lin(v: float):
    return lambda progress: progress * v


def train_sb3_cartpole(seed: int = SEED, budget: int = BUDGET, eval_every: int = 8_192, backend: str = "cpp"):
    """PPO with RL-Zoo's CartPole-v1 hyperparameters; evaluates 20 deterministic episodes every `eval_every`
    steps and stops at the first mean >= TARGET. Returns (steps used, final mean return, seconds).
    backend: "cpp" (the C++ CartPole) or "python" (gymnasium's CartPole in worker processes)."""
    torch.set_num_threads(1)
    venv = VecMonitor(ParallelPoolVecEnv("CartPole-v1", num_envs=8, seed=seed, backend=backend))
    eval_env = VecMonitor(ParallelPoolVecEnv("CartPole-v1", num_envs=10, seed=seed + 1000, backend=backend))
    model = PPO(
        "MlpPolicy",
        venv,
        n_steps=32,
        batch_size=256,
        gae_lambda=0.8,
        gamma=0.98,
        n_epochs=20,
        ent_coef=0.0,
        learning_rate=_lin(1e-3),
        clip_range=_lin(0.2),
        seed=seed,
        device="cpu",
        verbose=0,
    )
    stop = StopTrainingOnRewardThreshold(reward_threshold=TARGET, verbose=0)
    cb = EvalCallback(
        eval_env,
        callback_on_new_best=stop,
        n_eval_episodes=20,
        eval_freq=eval_every // 8,
        deterministic=True,
        verbose=0,
    )
    t0 = time.perf_counter()
    model.learn(total_timesteps=budget, callback=cb)
    seconds = time.perf_counter() - t0
    final_env = VecMonitor(ParallelPoolVecEnv("CartPole-v1", num_envs=10, seed=seed + 2000, backend=backend))
    mean, _ = evaluate_policy(model, final_env, n_eval_episodes=20, deterministic=True)  # fresh episodes
    final_env.close()
    steps = model.num_timesteps
    venv.close()
    eval_env.close()
    return steps, mean, seconds


@pytest.mark.training
@pytest.mark.parametrize("backend", ["cpp", "python"])
def test_sb3_ppo_cartpole_reaches_475(backend):
    steps, mean, seconds = train_sb3_cartpole(backend=backend)
    print(f"SB3 PPO CartPole-v1 ({backend}): mean return {mean:.1f} after {steps} steps in {seconds:.0f}s")
    assert steps <= BUDGET
    assert mean >= TARGET, f"mean return {mean:.1f} < {TARGET} after {steps} steps"


if __name__ == "__main__":
    print(train_sb3_cartpole())
