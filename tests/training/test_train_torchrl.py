"""Training reproduction: TorchRL's PPO (its Collector, GAE and ClipPPOLoss) on CartPole-v1 through
parallel_pool.integrations.torchrl reaches a mean deterministic return >= 475 on fresh envs within a fixed step
budget. Budget and wall-clock: docs/training.md."""

from __future__ import annotations

import time

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchrl")

from parallel_pool.integrations.torchrl import ParallelPoolEnv  # noqa: E402
from tensordict.nn import TensorDictModule  # noqa: E402
from torchrl.collectors import Collector  # noqa: E402
from torchrl.envs.utils import ExplorationType, set_exploration_type  # noqa: E402
from torchrl.modules import MLP, OneHotCategorical, ProbabilisticActor, ValueOperator  # noqa: E402
from torchrl.objectives import ClipPPOLoss  # noqa: E402
from torchrl.objectives.value import GAE  # noqa: E402

SEED = 0
BUDGET = 150_000  # env steps
TARGET = 475.0
NUM_ENVS = 8
FRAMES_PER_BATCH = 2048  # 256 steps per env


def evaluate(actor, episodes: int = 16, seed: int = 10_000) -> float:
    """Mean return of the greedy policy over `episodes` fresh envs (one episode each, up to 500 steps)."""
    env = ParallelPoolEnv("CartPole-v1", num_envs=episodes)
    env.set_seed(seed)
    with torch.no_grad(), set_exploration_type(ExplorationType.DETERMINISTIC):
        td = env.rollout(500, actor, break_when_all_done=True, break_when_any_done=False)
    rewards = td.get(("next", "reward"))[..., 0]
    done = td.get(("next", "done"))[..., 0].to(torch.int64).cumsum(-1)
    alive = (done == 0) | ((done == 1) & td.get(("next", "done"))[..., 0])  # steps up to each env's first end
    env.close()
    return float((rewards * alive).sum(-1).mean())


def train_torchrl_cartpole(seed: int = SEED, budget: int = BUDGET):
    """PPO: 8 envs x 256 steps per batch, 10 epochs of minibatches of 256, gamma 0.99, GAE 0.95, clip 0.2, lr 1e-3,
    64-64 tanh MLPs (one-hot actions, as TorchRL's GymEnv gives CartPole). Evaluates after every batch once the
    batch's mean episode return passes the target; stops when the greedy policy reaches it.
    Returns (steps used, mean evaluation return, seconds)."""
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    env = ParallelPoolEnv("CartPole-v1", num_envs=NUM_ENVS, autoreset_mode="same_step")
    env.set_seed(seed)
    n_obs = env.observation_spec["observation"].shape[-1]
    n_act = env.action_spec.shape[-1]
    logits = TensorDictModule(
        MLP(in_features=n_obs, out_features=n_act, num_cells=[64, 64], activation_class=torch.nn.Tanh),
        in_keys=["observation"],
        out_keys=["logits"],
    )
    actor = ProbabilisticActor(
        logits, in_keys=["logits"], spec=env.action_spec, distribution_class=OneHotCategorical, return_log_prob=True
    )
    critic = ValueOperator(
        MLP(in_features=n_obs, out_features=1, num_cells=[64, 64], activation_class=torch.nn.Tanh),
        in_keys=["observation"],
    )
    advantage = GAE(gamma=0.99, lmbda=0.95, value_network=critic, average_gae=True)
    loss = ClipPPOLoss(actor, critic, clip_epsilon=0.2, entropy_coeff=0.0, critic_coeff=0.5, loss_critic_type="l2")
    optim = torch.optim.Adam(loss.parameters(), lr=1e-3)
    collector = Collector(env, actor, frames_per_batch=FRAMES_PER_BATCH, total_frames=budget)
    t0 = time.perf_counter()
    steps, score = 0, float("-inf")
    for batch in collector:
        steps += batch.numel()
        with torch.no_grad():
            advantage(batch)
        flat = batch.reshape(-1)
        for _ in range(10):
            for idx in torch.randperm(flat.numel()).split(256):
                out = loss(flat[idx])
                total = out["loss_objective"] + out["loss_critic"]
                optim.zero_grad()
                total.backward()
                torch.nn.utils.clip_grad_norm_(loss.parameters(), 0.5)
                optim.step()
        collector.update_policy_weights_()
        done = batch.get(("next", "done"))[..., 0]
        if done.any() and batch.get(("next", "reward")).sum() / done.sum() >= TARGET:
            score = evaluate(actor)
            if score >= TARGET:
                break
    seconds = time.perf_counter() - t0
    collector.shutdown()
    env.close()
    return steps, score, seconds


@pytest.mark.training
def test_torchrl_ppo_cartpole_reaches_475():
    steps, score, seconds = train_torchrl_cartpole()
    print(f"TorchRL PPO CartPole-v1: mean return {score:.1f} after {steps} steps in {seconds:.0f}s")
    assert steps <= BUDGET
    assert score >= TARGET, f"mean return {score:.1f} < {TARGET} after {steps} steps"


if __name__ == "__main__":
    print(train_torchrl_cartpole())
