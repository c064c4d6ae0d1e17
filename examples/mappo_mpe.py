"""MAPPO on MPE simple_spread (CleanRL-style single file, JAX + optax) through the pool's agents-as-rows view.

    nice python examples/mappo_mpe.py --time-budget 240 --log docs/training/mappo/MPE-simple_spread-v3/pp-seed1.jsonl
    python examples/train/report.py docs/training/mappo --window 100   # the PNG and table from the log

The pool: `parallel_pool.make_pettingzoo("MPE/simple_spread-v3", view="agent_rows", ...)`, the C++ port of mpe2's
simple_spread_v3 (N=3 agents, local_ratio 0.5, max_cycles 25, discrete actions: the setting of the MAPPO paper's
MPE "Spread"). Row e * 3 + j is agent j of env e.

The learner (MAPPO, Yu et al. 2021, "The Surprising Effectiveness of PPO in Cooperative Multi-Agent Games"):
- one actor shared by the three agents (parameter sharing), on each agent's own 18-float observation: decentralised
  execution;
- a centralised critic: the env's three observations concatenated (54 floats, the global state) plus the agent's
  one-hot id (MAPPO's agent-specific state), because each agent's reward has its own collision term (local_ratio);
- separate Adam optimisers for the two, advantages normalised per batch, the value targets normalised by running
  statistics (MAPPO's ValueNorm).

Next-step autoreset, as the view has it: the step that ends an episode returns its final observations (max_cycles
truncates: the value bootstraps from the final state), and the env's next step is the reset, whose action is
ignored: those rows are masked out of the loss.

The log (`--log`, JSONL): a start line (when, where, the command, the commit), one line per update (env steps, wall
seconds, the episodes finished: each one's return per agent, mpe2's convention), an end line; examples/train/report.py
draws the curve from it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

import parallel_pool

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "train"))
from runlog import RunLog  # noqa: E402  (examples/train/runlog.py, the run log the training scripts share)

TASK = "MPE/simple_spread-v3"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--num-envs", type=int, default=32, help="envs (rows: 3 per env)")
    p.add_argument("--num-steps", type=int, default=50, help="steps per env per rollout")
    p.add_argument("--total-timesteps", type=int, default=2_000_000, help="env steps (not agent steps)")
    p.add_argument("--time-budget", type=float, default=None, help="stop after this many seconds")
    p.add_argument("--lr", type=float, default=7e-4, help="both optimisers' (MAPPO's MPE setting)")
    p.add_argument("--update-epochs", type=int, default=10, help="MAPPO's MPE setting")
    p.add_argument("--num-minibatches", type=int, default=2)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--clip-coef", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--max-grad-norm", type=float, default=10.0, help="MAPPO's")
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--log", default=None, help="JSONL run log")
    p.add_argument("--quiet", action="store_true")
    return p.parse_args(argv)


# ---- networks ---------------------------------------------------------------------------------------------------
def init_mlp(key: jax.Array, sizes: list[int], last_std: float) -> list[dict[str, jax.Array]]:
    """Orthogonal init (CleanRL's): sqrt(2) for the hidden layers, `last_std` for the output layer."""
    layers = []
    keys = jax.random.split(key, len(sizes) - 1)
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        std = last_std if i == len(sizes) - 2 else np.sqrt(2)
        w = jax.nn.initializers.orthogonal(std)(keys[i], (n_in, n_out), jnp.float32)
        layers.append({"w": w, "b": jnp.zeros(n_out, jnp.float32)})
    return layers


def mlp(layers: list[dict[str, jax.Array]], x: jax.Array) -> jax.Array:
    for layer in layers[:-1]:
        x = jnp.tanh(x @ layer["w"] + layer["b"])
    return x @ layers[-1]["w"] + layers[-1]["b"]


def critic_input(obs: jax.Array, num_agents: int) -> jax.Array:
    """Each row's centralised input: its env's observations concatenated, then the row's one-hot agent id."""
    n = obs.shape[0] // num_agents
    state = jnp.repeat(obs.reshape(n, -1), num_agents, axis=0)
    ids = jnp.tile(jnp.eye(num_agents, dtype=obs.dtype), (n, 1))
    return jnp.concatenate([state, ids], axis=1)


# ---- the run ----------------------------------------------------------------------------------------------------
def rss_mb() -> float:
    """This process's resident memory (MiB), from /proc (Linux), 0 elsewhere."""
    try:
        return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError):
        return 0.0


def train(args: argparse.Namespace) -> dict[str, Any]:
    envs = parallel_pool.make_pettingzoo(
        TASK, view="agent_rows", num_envs=args.num_envs, seed=args.seed, N=3, local_ratio=0.5, max_cycles=25
    )
    agents = envs.num_agents
    rows = envs.num_envs  # num_envs x agents
    obs_dim = envs.single_observation_space.shape[0]
    n_act = int(envs.single_action_space.n)
    log = RunLog(args.log, __file__, task=TASK, backend="pp", seed=args.seed, args=vars(args), jax=jax.__version__)

    key = jax.random.PRNGKey(args.seed)
    key, k_actor, k_critic = jax.random.split(key, 3)
    params = {
        "actor": init_mlp(k_actor, [obs_dim, args.hidden, args.hidden, n_act], 0.01),
        "critic": init_mlp(k_critic, [obs_dim * agents + agents, args.hidden, args.hidden, 1], 1.0),
    }
    tx = {
        part: optax.chain(optax.clip_by_global_norm(args.max_grad_norm), optax.adam(args.lr, eps=1e-5))
        for part in params
    }
    opt_state = {part: tx[part].init(params[part]) for part in params}
    # ValueNorm: running mean and variance of the value targets (the critic predicts normalised values)
    vnorm = {"mean": jnp.zeros(()), "var": jnp.ones(()), "count": jnp.asarray(1e-4)}

    @jax.jit
    def act(params: dict, vnorm: dict, obs: jax.Array, key: jax.Array) -> tuple[jax.Array, ...]:
        logits = mlp(params["actor"], obs)
        action = jax.random.categorical(key, logits)
        logp = jax.nn.log_softmax(logits)[jnp.arange(obs.shape[0]), action]
        value = mlp(params["critic"], critic_input(obs, agents))[:, 0] * jnp.sqrt(vnorm["var"]) + vnorm["mean"]
        return action, logp, value

    def loss_fn(params: dict, vnorm: dict, mb: dict) -> tuple[jax.Array, dict]:
        logits = mlp(params["actor"], mb["obs"])
        logp_all = jax.nn.log_softmax(logits)
        logp = jnp.take_along_axis(logp_all, mb["action"][:, None], axis=1)[:, 0]
        ratio = jnp.exp(logp - mb["logp"])
        adv = mb["adv"]
        pg = -jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - args.clip_coef, 1 + args.clip_coef) * adv)
        entropy = -(jnp.exp(logp_all) * logp_all).sum(axis=1)
        target = (mb["ret"] - vnorm["mean"]) / jnp.sqrt(vnorm["var"])
        v = mlp(params["critic"], mb["state"])[:, 0]
        w = mb["valid"] / jnp.maximum(mb["valid"].sum(), 1.0)  # the reset steps' rows count for nothing
        pg_loss, v_loss, ent = (pg * w).sum(), 0.5 * (((v - target) ** 2) * w).sum(), (entropy * w).sum()
        return pg_loss - args.ent_coef * ent + v_loss, {"pg_loss": pg_loss, "v_loss": v_loss, "entropy": ent}

    @jax.jit
    def update(params: dict, opt_state: dict, vnorm: dict, batch: dict, key: jax.Array) -> tuple:
        # the value targets' running statistics first (Welford's parallel update, over the valid rows)
        w = batch["valid"]
        n = w.sum()
        mean = (batch["ret"] * w).sum() / n
        var = (((batch["ret"] - mean) ** 2) * w).sum() / n
        delta, total = mean - vnorm["mean"], vnorm["count"] + n
        vnorm = {
            "mean": vnorm["mean"] + delta * n / total,
            "var": (vnorm["var"] * vnorm["count"] + var * n + delta**2 * vnorm["count"] * n / total) / total,
            "count": total,
        }
        size = batch["obs"].shape[0]
        mb_size = size // args.num_minibatches

        def epoch(carry: tuple, key: jax.Array) -> tuple:
            params, opt_state = carry
            order = jax.random.permutation(key, size)[: mb_size * args.num_minibatches]
            mbs = jax.tree_util.tree_map(
                lambda a: a[order].reshape((args.num_minibatches, mb_size) + a.shape[1:]), batch
            )

            def step(carry: tuple, mb: dict) -> tuple:
                params, opt_state = carry
                grads, stats = jax.grad(loss_fn, has_aux=True)(params, vnorm, mb)
                new_params, new_opt = {}, {}
                for part in params:
                    updates, new_opt[part] = tx[part].update(grads[part], opt_state[part], params[part])
                    new_params[part] = optax.apply_updates(params[part], updates)
                return (new_params, new_opt), stats

            return jax.lax.scan(step, (params, opt_state), mbs)

        (params, opt_state), stats = jax.lax.scan(epoch, (params, opt_state), jax.random.split(key, args.update_epochs))
        return params, opt_state, vnorm, jax.tree_util.tree_map(lambda s: s[-1, -1], stats)

    obs, info = envs.reset(seed=args.seed)
    valid = np.ones(rows, dtype=np.float32)  # the step from this obs counts (False: the env's reset step)
    ep_return = np.zeros(args.num_envs)
    start = time.perf_counter()
    steps, update_i, last = 0, 0, {}
    returns_all: list[float] = []
    T = args.num_steps
    while steps < args.total_timesteps and (args.time_budget is None or time.perf_counter() - start < args.time_budget):
        t0 = time.perf_counter()
        env_s = 0.0
        buf = {k: [] for k in ("obs", "action", "logp", "value", "reward", "term", "done", "valid")}
        finished: list[float] = []
        for _ in range(T):
            key, k = jax.random.split(key)
            action, logp, value = act(params, vnorm, jnp.asarray(obs), k)
            action = np.asarray(action)
            e0 = time.perf_counter()
            next_obs, reward, term, trunc, info = envs.step(action)
            env_s += time.perf_counter() - e0
            for name, v in (("obs", obs), ("action", action), ("logp", logp), ("value", value)):
                buf[name].append(np.asarray(v))
            buf["reward"].append(reward.astype(np.float32))
            buf["term"].append(term.astype(np.float32))
            buf["done"].append((term | trunc).astype(np.float32))
            buf["valid"].append(valid)
            ep_return += reward.reshape(-1, agents).mean(axis=1) * valid.reshape(-1, agents)[:, 0]
            ended = (term | trunc).reshape(-1, agents).any(axis=1)
            for e in np.flatnonzero(ended):
                finished.append(round(float(ep_return[e]), 3))
                ep_return[e] = 0.0
            valid = 1.0 - (term | trunc).astype(np.float32)  # the next step of an ended env is its reset
            obs = next_obs
            steps += args.num_envs
        _, _, next_value = act(params, vnorm, jnp.asarray(obs), key)
        b = {k: np.stack(v) for k, v in buf.items()}
        # GAE; an episode's end cuts the chain, a truncation bootstraps from the final state's value (the obs after
        # the ending step is the final one), a termination does not
        values = np.concatenate([b["value"], np.asarray(next_value)[None]])
        adv = np.zeros((T, rows), np.float32)
        last_gae = np.zeros(rows, np.float32)
        for t in reversed(range(T)):
            delta = b["reward"][t] + args.gamma * values[t + 1] * (1 - b["term"][t]) - values[t]
            last_gae = delta + args.gamma * args.gae_lambda * (1 - b["done"][t]) * last_gae
            adv[t] = last_gae
        ret = adv + b["value"]
        mask = b["valid"]
        adv = (adv - adv[mask > 0].mean()) / (adv[mask > 0].std() + 1e-8)
        batch = {
            "obs": b["obs"].reshape(T * rows, obs_dim),
            "state": np.asarray(jax.vmap(lambda o: critic_input(o, agents))(b["obs"])).reshape(T * rows, -1),
            "action": b["action"].reshape(-1),
            "logp": b["logp"].reshape(-1),
            "adv": adv.reshape(-1),
            "ret": ret.reshape(-1),
            "valid": mask.reshape(-1),
        }
        l0 = time.perf_counter()
        key, k = jax.random.split(key)
        params, opt_state, vnorm, stats = update(params, opt_state, vnorm, batch, k)
        last = {k: float(v) for k, v in stats.items()}
        learn_s = time.perf_counter() - l0
        update_i += 1
        returns_all += finished
        record = {
            "kind": "update",
            "update": update_i,
            "steps": steps,
            "wall": round(time.perf_counter() - start, 3),
            "update_s": round(time.perf_counter() - t0, 4),
            "env_s": round(env_s, 4),
            "learn_s": round(learn_s, 4),
            "returns": finished,
            "lengths": [25] * len(finished),
            **{k: round(v, 5) for k, v in last.items()},
            "rss_mb": round(rss_mb(), 1),
            "rss_children_mb": 0.0,
            "load1": os.getloadavg()[0],
        }
        log.write(**record)
        if not args.quiet and update_i % 10 == 0:
            recent = returns_all[-100:]
            print(f"update {update_i} steps {steps} return/agent {np.mean(recent):.2f} {last}", flush=True)
    wall = time.perf_counter() - start
    recent = returns_all[-100:]
    summary = {
        "steps": steps,
        "updates": update_i,
        "wall": round(wall, 1),
        "return_per_agent_last100": float(np.mean(recent)) if recent else None,
        **last,
    }
    log.write(kind="end", reason="budget" if steps < args.total_timesteps else "total_timesteps", **summary)
    log.close()
    envs.close()
    print("SUMMARY " + json.dumps(summary))
    return summary


if __name__ == "__main__":
    train(parse_args())
