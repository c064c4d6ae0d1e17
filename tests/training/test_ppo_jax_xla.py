"""examples/ppo_jax_xla.py trains CartPole-v1: PPO with the rollout a lax.scan over env.xla()'s step inside one
jitted function. Budget: 150k env steps (about half a minute on 2 CPU cores). Bar: the trained policy, greedy, averages
a return of at least 475 (max 500) over 20 evaluation episodes with fixed seeds (as the torch training tests)."""

import importlib.util
import pathlib
import sys
import warnings

import numpy as np
import pytest

pytest.importorskip("jax")
from parallel_pool import _core  # noqa: E402

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "ppo_jax_xla.py"


@pytest.mark.training
@pytest.mark.skipif(not _core.has_xla, reason="built without XLA support")
def test_ppo_jax_xla_trains_cartpole():
    spec = importlib.util.spec_from_file_location("ppo_jax_xla", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    budget = 150_000
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = mod.train(mod.Args(env_id="CartPole-v1", seed=1, total_timesteps=budget, quiet=True))
    # the bar is a deterministic evaluation (greedy policy, fixed seeds), as the torch training tests have it: the
    # training returns are noisy (exploration, the episodes that happen to end in a window)
    score = mod.evaluate(out["params"], "CartPole-v1", episodes=20, seed=10_000)
    assert mod.evaluate(out["params"], "CartPole-v1", episodes=20, seed=10_000) == score  # deterministic
    print(
        f"CartPole-v1 PPO (jax, env.xla): greedy evaluation return {score:.1f}, {budget} steps, {out['seconds']:.0f}s"
    )
    assert np.isfinite(score) and score >= 475, score
