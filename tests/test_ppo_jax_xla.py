"""examples/ppo_jax_xla.py trains CartPole-v1: PPO with the rollout a lax.scan over env.xla()'s step inside one
jitted function. Budget: 150k env steps (about half a minute on 2 CPU cores). Bar: the episodes that finish in the
last 25k steps average a return of at least 400 (max 500; seeds 1-4 gave 443-473 here)."""

import importlib.util
import pathlib
import sys
import warnings

import pytest

pytest.importorskip("jax")
from parallel_pool import _core  # noqa: E402

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "ppo_jax_xla.py"


@pytest.mark.training
@pytest.mark.skipif(not _core.has_xla, reason="built without XLA support")
def test_ppo_jax_xla_trains_cartpole():
    spec = importlib.util.spec_from_file_location("ppo_jax_xla", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    budget, window = 150_000, 25_000
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = mod.train(mod.Args(env_id="CartPole-v1", seed=1, total_timesteps=budget, quiet=True))
    last = [(n, r) for step, n, r in out["history"] if step > budget - window]
    episodes = sum(n for n, _ in last)
    assert episodes >= 20, out["history"][-5:]
    mean_return = sum(r for _, r in last) / episodes
    print(
        f"CartPole-v1 PPO (jax, env.xla): mean return {mean_return:.1f} over the {episodes} episodes of the "
        f"last {window} of {budget} steps, {out['seconds']:.1f}s"
    )
    assert mean_return >= 400, mean_return
