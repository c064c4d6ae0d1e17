"""examples/ppo_atari_async.py's GAE over rows in completion order (async send/recv) equals plain per-env GAE."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("tyro")
pytest.importorskip("tqdm")

_spec = importlib.util.spec_from_file_location(
    "ppo_atari_async", Path(__file__).resolve().parents[2] / "examples" / "ppo_atari_async.py"
)
ppo_atari = importlib.util.module_from_spec(_spec)
sys.modules["ppo_atari_async"] = ppo_atari  # the script's dataclass looks its module up
_spec.loader.exec_module(ppo_atari)


def per_env_gae(rew, term, trunc, boot, values, gamma, lam):
    """Textbook GAE over one env's rows in time order; the last row's outcome is unknown (no advantage)."""
    L = len(rew)
    adv = np.zeros(L)
    for k in range(L - 2, -1, -1):
        if term[k]:
            delta, cont = rew[k] - values[k], 0.0
        elif trunc[k]:
            delta, cont = rew[k] + gamma * boot[k] - values[k], 0.0
        else:
            delta, cont = rew[k] + gamma * values[k + 1] - values[k], 1.0
        adv[k] = delta + gamma * lam * cont * adv[k + 1]
    return adv


@pytest.mark.parametrize("seed", range(5))
def test_chain_gae_equals_per_env_gae(seed):
    rng = np.random.default_rng(seed)
    n_envs, batch, gamma, lam = 6, 3, 0.97, 0.9
    lengths = rng.integers(2, 12, n_envs)
    left = lengths.copy()
    groups, order = [], []  # order[row] = (env, k)
    while (left > 0).sum() >= batch:
        envs = rng.choice(np.flatnonzero(left > 0), batch, replace=False)
        rows = np.arange(len(order), len(order) + batch)
        order += [(int(e), int(lengths[e] - left[e])) for e in envs]
        left[envs] -= 1
        groups.append(rows)
    n = len(order)
    data = {e: {key: rng.normal(size=lengths[e]) for key in ("rew", "val", "boot")} for e in range(n_envs)}
    for e in range(n_envs):
        end = rng.random(lengths[e])
        data[e]["term"] = end < 0.2
        data[e]["trunc"] = (end >= 0.2) & (end < 0.35)
    rew, val, boot = torch.zeros(n), torch.zeros(n), torch.zeros(n)
    term, trunc = torch.zeros(n, dtype=torch.bool), torch.zeros(n, dtype=torch.bool)
    succ = np.full(n, -1)
    last_row = {}
    for row, (e, k) in enumerate(order):
        rew[row], val[row], boot[row] = data[e]["rew"][k], data[e]["val"][k], data[e]["boot"][k]
        term[row], trunc[row] = bool(data[e]["term"][k]), bool(data[e]["trunc"][k])
        if e in last_row:
            succ[last_row[e]] = row
        last_row[e] = row
    adv = ppo_atari.chain_gae(groups, succ, rew, term, trunc, boot, val, gamma, lam, n).numpy()
    checked = 0
    for e in range(n_envs):
        rows = [row for row, (ee, _) in enumerate(order) if ee == e]
        if len(rows) < 2:
            continue
        d = data[e]
        L = len(rows)
        want = per_env_gae(d["rew"][:L], d["term"][:L], d["trunc"][:L], d["boot"][:L], d["val"][:L], gamma, lam)
        np.testing.assert_allclose(adv[rows], want, rtol=1e-5, atol=1e-5)
        checked += L - 1
    assert checked > 10


def test_nature_cnn_agent_on_atari_shaped_batches():
    """The Atari path of the script (uint8 (4, 84, 84) frames -> Nature CNN), one PPO-style gradient step."""
    torch.manual_seed(0)
    agent = ppo_atari.Agent((4, 84, 84), 6)
    assert agent.image
    x = torch.randint(0, 256, (5, 4, 84, 84), dtype=torch.uint8)
    action, logp, entropy, value = agent.get_action_and_value(x)
    assert action.shape == logp.shape == entropy.shape == value.shape == (5,)
    assert agent.greedy(x).shape == (5,)
    _, newlogp, _, newvalue = agent.get_action_and_value(x, action)
    torch.testing.assert_close(newlogp, logp)
    loss = -(newlogp.mean()) + newvalue.pow(2).mean()
    loss.backward()
    assert all(p.grad is not None and np.isfinite(p.grad.numpy()).all() for p in agent.parameters())
