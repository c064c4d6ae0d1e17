"""PPO (CleanRL-style, single file) in JAX whose rollout is a `jax.lax.scan` over ParallelPool's `env.xla()` step:
collecting a rollout and the PPO update run as ONE jitted function per iteration, the envs stepped by the C++
engine from inside XLA.

    python examples/ppo_jax_xla.py --env-id CartPole-v1 --total-timesteps 150000

Needs only jax (pip install 'parallel-pool[jax]'): the MLPs and Adam are written out below.

Next-step autoreset, handled exactly: the step that ends an episode returns the true final observation (so a
time-limit truncation bootstraps from V(final obs), and only termination cuts the value), and the following step
of that env ignores its action and returns the reset observation; that "reset transition" is masked out of the
loss.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import parallel_pool


@dataclasses.dataclass
class Args:
    env_id: str = "CartPole-v1"
    seed: int = 1
    total_timesteps: int = 150_000
    num_envs: int = 8
    num_steps: int = 128
    learning_rate: float = 1e-3
    anneal_lr: bool = True
    gamma: float = 0.99
    gae_lambda: float = 0.95
    num_minibatches: int = 4
    update_epochs: int = 4
    clip_coef: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    hidden: int = 64
    num_threads: int = 0
    quiet: bool = False


# ---- networks: two tanh MLPs (actor, critic), orthogonal init as in CleanRL ----------------------------------


def _dense(key, n_in, n_out, scale):
    return {
        "w": jax.nn.initializers.orthogonal(scale)(key, (n_in, n_out), jnp.float32),
        "b": jnp.zeros((n_out,), jnp.float32),
    }


def init_params(key, obs_dim, n_actions, hidden):
    k = jax.random.split(key, 6)
    s = float(np.sqrt(2))
    return {
        "actor": [
            _dense(k[0], obs_dim, hidden, s),
            _dense(k[1], hidden, hidden, s),
            _dense(k[2], hidden, n_actions, 0.01),
        ],
        "critic": [_dense(k[3], obs_dim, hidden, s), _dense(k[4], hidden, hidden, s), _dense(k[5], hidden, 1, 1.0)],
    }


def _mlp(layers, x):
    for layer in layers[:-1]:
        x = jnp.tanh(x @ layer["w"] + layer["b"])
    return x @ layers[-1]["w"] + layers[-1]["b"]


def logits_fn(params, obs):
    return _mlp(params["actor"], obs)


def value_fn(params, obs):
    return _mlp(params["critic"], obs)[..., 0]


# ---- Adam with global-norm gradient clipping ------------------------------------------------------------------


def adam_init(params):
    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    return {"m": zeros, "v": zeros, "t": jnp.zeros((), jnp.int32)}


def adam_update(params, grads, opt, lr, max_norm, b1=0.9, b2=0.999, eps=1e-5):
    norm = jnp.sqrt(sum(jnp.sum(g * g) for g in jax.tree_util.tree_leaves(grads)))
    grads = jax.tree_util.tree_map(lambda g: g * jnp.minimum(1.0, max_norm / (norm + 1e-6)), grads)
    t = opt["t"] + 1
    m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, opt["m"], grads)
    v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, opt["v"], grads)
    c1, c2 = 1 - b1**t, 1 - b2**t
    params = jax.tree_util.tree_map(lambda p, m, v: p - lr * (m / c1) / (jnp.sqrt(v / c2) + eps), params, m, v)
    return params, {"m": m, "v": v, "t": t}


# ---- training ---------------------------------------------------------------------------------------------------


def train(args: Args) -> dict:
    env = parallel_pool.make(
        args.env_id, env_type="gymnasium", num_envs=args.num_envs, seed=args.seed, num_threads=args.num_threads
    )
    handle, recv, send, step = env.xla()
    obs_dim = int(np.prod(env.single_observation_space.shape))
    n_actions = int(env.single_action_space.n)
    batch = args.num_envs * args.num_steps
    minibatch = batch // args.num_minibatches
    num_iterations = args.total_timesteps // batch

    key = jax.random.PRNGKey(args.seed)
    key, pkey = jax.random.split(key)
    params = init_params(pkey, obs_dim, n_actions, args.hidden)
    opt = adam_init(params)
    obs, _ = env.reset()
    carry = {
        "handle": handle,
        "obs": jnp.asarray(obs, jnp.float32),
        "prev_done": jnp.zeros(args.num_envs, bool),  # obs is a final observation: the next step resets
        "ep_ret": jnp.zeros(args.num_envs, jnp.float32),
        "ep_len": jnp.zeros(args.num_envs, jnp.int32),
    }

    def rollout(params, carry, key):
        def body(c, key):
            logits = logits_fn(params, c["obs"])
            action = jax.random.categorical(key, logits).astype(jnp.int32)
            logp = jax.nn.log_softmax(logits)[jnp.arange(args.num_envs), action]
            value = value_fn(params, c["obs"])
            handle, (next_obs, reward, term, trunc, info) = step(c["handle"], action)
            valid = ~c["prev_done"]
            done = term | trunc
            ep_ret = c["ep_ret"] + reward
            ep_len = c["ep_len"] + valid.astype(jnp.int32)
            out = {
                "obs": c["obs"],
                "action": action,
                "logp": logp,
                "value": value,
                "reward": reward,
                "term": term,
                "done": done,
                "valid": valid,
                "next_obs": next_obs,
                "finished_ret": jnp.where(done, ep_ret, 0.0),
                "finished_len": jnp.where(done, ep_len, 0),
                "finished": done,
            }
            c = {
                "handle": handle,
                "obs": next_obs.astype(jnp.float32),
                "prev_done": done,
                "ep_ret": jnp.where(done, 0.0, ep_ret),
                "ep_len": jnp.where(done, 0, ep_len),
            }
            return c, out

        keys = jax.random.split(key, args.num_steps)
        return jax.lax.scan(body, carry, keys)

    def gae(params, tr):
        next_value = value_fn(params, tr["next_obs"])  # V(s_{t+1}): the true final obs at episode ends

        def body(adv_next, x):
            # only termination cuts the bootstrap; any episode end cuts the advantage chain
            delta = x["reward"] + args.gamma * x["next_value"] * (1.0 - x["term"]) - x["value"]
            adv = delta + args.gamma * args.gae_lambda * (1.0 - x["done"]) * adv_next
            return adv, adv

        xs = {
            "reward": tr["reward"],
            "term": tr["term"].astype(jnp.float32),
            "done": tr["done"].astype(jnp.float32),
            "value": tr["value"],
            "next_value": next_value,
        }
        _, adv = jax.lax.scan(body, jnp.zeros(args.num_envs), xs, reverse=True)
        return adv, adv + tr["value"]

    def loss_fn(params, mb):
        logits = logits_fn(params, mb["obs"])
        logp_all = jax.nn.log_softmax(logits)
        logp = logp_all[jnp.arange(logits.shape[0]), mb["action"]]
        ratio = jnp.exp(logp - mb["logp"])
        w = mb["valid"].astype(jnp.float32)
        wsum = jnp.maximum(w.sum(), 1.0)
        adv = mb["adv"]
        mean = (adv * w).sum() / wsum
        std = jnp.sqrt((((adv - mean) ** 2) * w).sum() / wsum)
        adv = (adv - mean) / (std + 1e-8)
        pg = jnp.maximum(-adv * ratio, -adv * jnp.clip(ratio, 1 - args.clip_coef, 1 + args.clip_coef))
        pg_loss = (pg * w).sum() / wsum
        v = value_fn(params, mb["obs"])
        v_clipped = mb["value"] + jnp.clip(v - mb["value"], -args.clip_coef, args.clip_coef)
        v_loss = 0.5 * (jnp.maximum((v - mb["ret"]) ** 2, (v_clipped - mb["ret"]) ** 2) * w).sum() / wsum
        entropy = (-(jnp.exp(logp_all) * logp_all).sum(-1) * w).sum() / wsum
        return pg_loss - args.ent_coef * entropy + args.vf_coef * v_loss, (pg_loss, v_loss, entropy)

    @partial(jax.jit, donate_argnums=(1,))
    def iteration(params, carry, opt, key, lr):
        key, rkey, skey = jax.random.split(key, 3)
        carry, tr = rollout(params, carry, rkey)
        adv, ret = gae(params, tr)
        flat = {k: tr[k].reshape((batch,) + tr[k].shape[2:]) for k in ("obs", "action", "logp", "value", "valid")}
        flat["adv"] = adv.reshape(batch)
        flat["ret"] = ret.reshape(batch)

        def epoch(state, ekey):
            params, opt = state
            perm = jax.random.permutation(ekey, batch).reshape(args.num_minibatches, minibatch)

            def mb_step(state, idx):
                params, opt = state
                mb = jax.tree_util.tree_map(lambda x: x[idx], flat)
                (loss, aux), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, mb)
                params, opt = adam_update(params, grads, opt, lr, args.max_grad_norm)
                return (params, opt), (loss, *aux)

            return jax.lax.scan(mb_step, (params, opt), perm)

        (params, opt), losses = jax.lax.scan(epoch, (params, opt), jax.random.split(skey, args.update_epochs))
        n_fin = tr["finished"].sum()
        stats = {
            "episodes": n_fin,
            "return_sum": tr["finished_ret"].sum(),
            "length_sum": tr["finished_len"].sum(),
            "loss": losses[0].mean(),
            "v_loss": losses[2].mean(),
            "entropy": losses[3].mean(),
        }
        return params, carry, opt, key, stats

    history = []  # (global_step, episodes finished in this iteration, sum of their returns)
    returns_window: list[float] = []
    t0 = time.time()
    for it in range(1, num_iterations + 1):
        frac = 1.0 - (it - 1.0) / num_iterations
        lr = args.learning_rate * (frac if args.anneal_lr else 1.0)
        params, carry, opt, key, stats = iteration(params, carry, opt, key, jnp.float32(lr))
        stats = jax.device_get(stats)
        global_step = it * batch
        if stats["episodes"] > 0:
            history.append((global_step, int(stats["episodes"]), float(stats["return_sum"])))
            returns_window.append(float(stats["return_sum"] / stats["episodes"]))
        if not args.quiet and (it % 10 == 0 or it == num_iterations):
            recent = np.mean(returns_window[-5:]) if returns_window else float("nan")
            print(
                f"step {global_step:7d}  episodic_return(mean of last 5 iters) {recent:7.1f}  "
                f"entropy {float(stats['entropy']):.3f}  v_loss {float(stats['v_loss']):.3f}  "
                f"SPS {int(global_step / (time.time() - t0))}"
            )
    env.close()
    return {"history": history, "seconds": time.time() - t0, "params": params}


def evaluate(params: Any, env_id: str, episodes: int, seed: int) -> float:
    """Mean return of the greedy policy (argmax of the logits) over `episodes` episodes, one per env of a fresh pool
    seeded with `seed`: a deterministic function of the trained parameters, unlike the training returns."""
    env = parallel_pool.make(env_id, num_envs=episodes, seed=seed)
    obs, _ = env.reset()
    policy = jax.jit(lambda p, o: jnp.argmax(logits_fn(p, o), axis=-1))
    returns = np.zeros(episodes)
    running = np.ones(episodes, dtype=bool)
    while running.any():
        obs, reward, term, trunc, _ = env.step(np.asarray(policy(params, jnp.asarray(obs, jnp.float32))))
        returns += reward * running
        running &= ~(term | trunc)
    env.close()
    return float(returns.mean())


def parse_args() -> Args:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for f in dataclasses.fields(Args):
        name = "--" + f.name.replace("_", "-")
        if f.type in ("bool", bool):
            p.add_argument(name, type=lambda s: s.lower() in ("1", "true", "yes"), default=f.default)
        else:
            p.add_argument(name, type=type(f.default), default=f.default)
    return Args(**vars(p.parse_args()))


if __name__ == "__main__":
    args = parse_args()
    out = train(args)
    score = evaluate(out["params"], args.env_id, episodes=20, seed=10_000)
    print(f"done in {out['seconds']:.1f}s; greedy evaluation return {score:.1f}")
