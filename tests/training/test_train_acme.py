"""Training reproduction: PPO written to acme.core.Actor / acme.core.Learner (torch; ACME's own agents cannot be
installed here, see docs/adapters.md) trains on CartPole-v1 through parallel_pool.integrations.acme's
BatchedEnvironment and BatchedEnvironmentLoop (examples/acme_ppo_cartpole.py) to a mean greedy return >= 475 on
20 fresh episodes within a fixed step budget. Budget and wall-clock: docs/training.md."""

from __future__ import annotations

import importlib.util
import pathlib
import sys

import pytest

pytest.importorskip("acme")
torch = pytest.importorskip("torch")

ROOT = pathlib.Path(__file__).resolve().parents[2]
SEED = 1
BUDGET = 100_000  # env steps
TARGET = 475.0


def _example():
    spec = importlib.util.spec_from_file_location("acme_ppo_cartpole", ROOT / "examples" / "acme_ppo_cartpole.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.training
def test_acme_ppo_cartpole_reaches_475():
    example = _example()
    torch.set_num_threads(1)
    summary = example.train(example.Config(seed=SEED, budget=BUDGET, target=TARGET))
    print(f"ACME-interface PPO CartPole-v1: {summary}")
    assert summary["steps"] <= BUDGET
    assert summary["final_eval_return"] >= TARGET, summary


def test_learner_advantages_bootstrap_truncation_not_termination():
    """GAE of the example's learner: V(final obs) counts after a truncation (discount 1), not after a
    termination (discount 0); chains stop at episode ends and at each env's last transition."""
    import numpy as np

    example = _example()
    cfg = example.Config(gamma=0.5, gae_lambda=1.0)
    learner = example.PPOLearner.__new__(example.PPOLearner)
    learner.config = cfg
    r = example.Rollout(
        obs=None,
        action=None,
        next_obs=None,
        reward=np.array([1.0, 1.0, 1.0, 1.0], np.float32),
        discount=np.array([1.0, 0.0, 1.0, 1.0], np.float32),  # t=1 terminates; t=2 truncates
        last=np.array([0.0, 1.0, 1.0, 0.0], np.float32),
        end=np.array([0.0, 0.0, 0.0, 1.0], np.float32),
    )
    v = np.zeros(4, np.float32)
    v_next = np.full(4, 2.0, np.float32)
    adv = learner._advantages(r, v, v_next)
    # t=3: 1 + 0.5*2 = 2 (bootstrapped, chain ends); t=2: truncation, 1 + 0.5*2 = 2; t=1: termination, 1;
    # t=0: delta 1 + 0.5*2 = 2, plus 0.5 * adv[1] = 2.5
    np.testing.assert_allclose(adv, [2.5, 1.0, 2.0, 2.0])
