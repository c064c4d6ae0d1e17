"""PPO in JAX (CleanRL-style single file) whose update is one jitted function, with the env backend as a switch.

    python examples/train/ppo_jax.py --env-id Ant-v5 --backend pp-xla --time-budget 1200 --eval-every 200000 \
        --target 5000 --log runs/Ant-v5/pp-xla-seed1.jsonl

Two ways to collect a rollout, one algorithm:
- `pp-xla`, `envpool-xla`: the pool is stepped inside `jax.lax.scan` through its `env.xla()` functions, so one jitted
  call collects the rollout, computes GAE and runs every PPO epoch (`--split-timing`: the same two halves as two
  jitted calls, so the log can say how long each took);
- `pp` (ParallelPool, sync), `pp-async` (ParallelPool send/recv, --batch-size < --num-envs), `envpool` (EnvPool 1.2.5
  make_gymnasium, sync), `gymnasium` (gymnasium's AsyncVectorEnv): a host loop with a jitted policy, built by
  common.make_envs (the torch scripts' backends). Rows are filed per env, so whatever order an async pool hands
  them out in, the learner gets the same (num_steps, num_envs) rollout as from the scan.
`--overlap` (pp-async): the batch that completes a rollout is sent before the update, so the pool steps while the
learner learns (one update of policy lag, as EnvPool's async PPO); without it those envs wait for the new policy.

Next-step autoreset, as every backend here has it: the step that ends an episode returns the true final observation
(a truncated episode bootstraps from its value; only termination cuts it), and the env's next row is the reset: its
action is ignored, so that row is masked out of the loss.

Hyperparameters (PRESETS, each with its source): Ant-v5 and HalfCheetah-v5 from rl_games 1.6.5's
configs/mujoco/ant_envpool.yaml and halfcheetah_envpool.yaml (the configs of EnvPool's rl_games MuJoCo demo);
Pong-v5 from CleanRL's ppo_atari_envpool_xla_jax.py; CartPole-v1 small and fast (examples/ppo_jax_xla.py's).

Over 600 lines for one reason: CleanRL's convention, one file a reader can follow from arguments to the last log
line; the parts shared with the torch scripts live in common.py.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
import types
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import RunLog, load_checkpoint, machine, make_envs, save_checkpoint  # noqa: E402

XLA_BACKENDS = ("pp-xla", "envpool-xla")
HOST_BACKENDS = ("pp", "pp-async", "envpool", "gymnasium")
BACKENDS = XLA_BACKENDS + HOST_BACKENDS


@dataclasses.dataclass
class Args:
    """Every hyperparameter; a field left None comes from the task's preset (PRESETS)."""

    env_id: str = "CartPole-v1"
    backend: str = "pp-xla"
    preset: str | None = None  # the PRESETS entry (default: env_id's)
    seed: int = 1
    total_timesteps: int | None = None
    num_envs: int | None = None
    num_steps: int | None = None  # steps per env per rollout
    minibatch_size: int | None = None  # rows per minibatch (must divide num_envs * num_steps)
    update_epochs: int | None = None
    learning_rate: float | None = None
    lr_schedule: str | None = None  # linear (annealed to 0 over total_timesteps) | adaptive (KL) | constant
    kl_threshold: float | None = None  # adaptive: lr / 1.5 when KL > 2x this, x 1.5 when KL < half of it
    gamma: float | None = None
    gae_lambda: float | None = None
    clip_coef: float | None = None
    clip_vloss: bool | None = None
    ent_coef: float | None = None
    vf_coef: float | None = None  # weight of 0.5 * (value error)^2 (rl_games' critic_coef)
    bounds_loss_coef: float | None = None  # rl_games' "regularisation" bound loss: coef * sum(mu^2)
    max_grad_norm: float | None = None
    adam_eps: float | None = None
    adv_norm: str | None = None  # batch (rl_games: over the rollout) | minibatch (CleanRL)
    normalize_input: bool | None = None  # running mean/var of observations (rl_games' normalize_input)
    normalize_value: bool | None = None  # value head predicts normalised returns (rl_games' normalize_value)
    reward_clip: bool | None = None  # learner sees sign(reward) (Atari)
    torso: str | None = None  # mlp | nature_cnn
    hidden: tuple[int, ...] | None = None
    activation: str | None = None  # elu | tanh | relu
    init: str | None = None  # torch (PyTorch's Linear default) | variance_scaling | orthogonal (CleanRL's)
    separate: bool | None = None  # separate actor and critic torsos
    batch_size: int = 0  # pp-async: envs per recv (0: num_envs // 2)
    overlap: bool = False
    split_timing: bool = False
    time_budget: float = 0.0  # seconds, checked after each update, resumed segments included (0: none)
    target: float | None = None  # stop once an evaluation returns at least this
    eval_every: int = 0  # env steps between deterministic evaluations on fresh envs (0: none)
    eval_episodes: int = 10
    log: str = ""
    checkpoint: str = ""
    checkpoint_every: int = 50
    quiet: bool = False


_RL_GAMES = dict(
    lr_schedule="adaptive",
    kl_threshold=0.008,
    gamma=0.99,
    gae_lambda=0.95,  # tau
    clip_coef=0.2,  # e_clip
    ent_coef=0.0,
    bounds_loss_coef=0.0,  # bound_loss_type: regularisation, bounds_loss_coef: 0.0
    max_grad_norm=1.0,  # grad_norm, truncate_grads: True
    adam_eps=1e-8,  # rl_games' torch.optim.Adam(eps=1e-08)
    adv_norm="batch",  # normalize_advantage, over the whole rollout
    normalize_input=True,
    normalize_value=True,
    reward_clip=False,
    torso="mlp",
    activation="elu",
    separate=False,
    num_envs=64,  # num_actors
    minibatch_size=2048,
)
PRESETS: dict[str, dict[str, Any]] = {
    # rl_games 1.6.5 configs/mujoco/ant_envpool.yaml (EnvPool's rl_games MuJoCo demo; ~5.9K at 8.2M steps):
    # 64 actors x horizon 64, minibatch 2048, mini_epochs 4, lr 3e-4 adaptive at kl 0.008, units 256-128-64 elu,
    # initializer default, clip_value True, critic_coef 2, max_epochs 2000 (2000 x 4096 = 8.19M steps)
    "Ant-v5": dict(
        _RL_GAMES,
        num_steps=64,
        update_epochs=4,
        learning_rate=3e-4,
        clip_vloss=True,
        vf_coef=2.0,
        hidden=(256, 128, 64),
        init="torch",
        total_timesteps=2000 * 64 * 64,
    ),
    # rl_games 1.6.5 configs/mujoco/halfcheetah_envpool.yaml: 64 actors x horizon 256, minibatch 2048,
    # mini_epochs 5, lr 5e-4 adaptive at kl 0.008, units 128-64-32 elu, variance_scaling_initializer scale 2,
    # clip_value False, critic_coef 4, max_epochs 1000 (16.4M steps)
    "HalfCheetah-v5": dict(
        _RL_GAMES,
        num_steps=256,
        update_epochs=5,
        learning_rate=5e-4,
        clip_vloss=False,
        vf_coef=4.0,
        hidden=(128, 64, 32),
        init="variance_scaling",
        total_timesteps=1000 * 64 * 256,
    ),
    # CleanRL's ppo_atari_envpool_xla_jax.py (vwxyzjn/cleanrl) defaults: 8 envs x 128 steps, 4 minibatches, 4 epochs,
    # lr 2.5e-4 annealed, gamma 0.99, GAE 0.95, clip 0.1 (value too), ent 0.01, vf 0.5, grad norm 0.5, Adam eps 1e-5,
    # advantages normalised per minibatch, Nature CNN shared by actor and critic (orthogonal init), 10M steps;
    # its envpool Pong clips rewards to their sign
    "Pong-v5": dict(
        num_envs=8,
        num_steps=128,
        minibatch_size=256,
        update_epochs=4,
        learning_rate=2.5e-4,
        lr_schedule="linear",
        kl_threshold=0.0,
        gamma=0.99,
        gae_lambda=0.95,
        clip_coef=0.1,
        clip_vloss=True,
        ent_coef=0.01,
        vf_coef=0.5,
        bounds_loss_coef=0.0,
        max_grad_norm=0.5,
        adam_eps=1e-5,
        adv_norm="minibatch",
        normalize_input=False,
        normalize_value=False,
        reward_clip=True,
        torso="nature_cnn",
        hidden=(512,),
        activation="relu",
        init="orthogonal",
        separate=False,
        total_timesteps=10_000_000,
    ),
    # small and fast: examples/ppo_jax_xla.py's CartPole settings (CleanRL's ppo.py shape, lr 1e-3)
    "CartPole-v1": dict(
        num_envs=8,
        num_steps=128,
        minibatch_size=256,
        update_epochs=4,
        learning_rate=1e-3,
        lr_schedule="linear",
        kl_threshold=0.0,
        gamma=0.99,
        gae_lambda=0.95,
        clip_coef=0.2,
        clip_vloss=True,
        ent_coef=0.01,
        vf_coef=0.5,
        bounds_loss_coef=0.0,
        max_grad_norm=0.5,
        adam_eps=1e-5,
        adv_norm="minibatch",
        normalize_input=False,
        normalize_value=False,
        reward_clip=False,
        torso="mlp",
        hidden=(64, 64),
        activation="tanh",
        init="orthogonal",
        separate=True,
        total_timesteps=150_000,
    ),
}
CHOICES = {
    "backend": BACKENDS,
    "lr_schedule": ("linear", "adaptive", "constant"),
    "adv_norm": ("batch", "minibatch"),
    "torso": ("mlp", "nature_cnn"),
    "activation": ("elu", "tanh", "relu"),
    "init": ("torch", "variance_scaling", "orthogonal"),
}
ACTIVATIONS = {"elu": jax.nn.elu, "tanh": jnp.tanh, "relu": jax.nn.relu}


def resolve(args: Args) -> Args:
    """`args` with every None field taken from its preset, checked (ValueError naming the field) before anything
    starts."""
    name = args.preset or args.env_id
    if name not in PRESETS:
        raise ValueError(f"no preset for {name!r}: pass --preset, one of {', '.join(PRESETS)}")
    filled = {
        k: (PRESETS[name].get(k) if v is None else v) for k, v in dataclasses.asdict(args).items() if k != "preset"
    }
    a = Args(preset=name, **filled)
    for field, allowed in CHOICES.items():
        if getattr(a, field) not in allowed:
            raise ValueError(f"--{field.replace('_', '-')} {getattr(a, field)!r}: choose one of {', '.join(allowed)}")
    for field in ("num_envs", "num_steps", "minibatch_size", "update_epochs", "total_timesteps", "checkpoint_every"):
        if getattr(a, field) < 1:
            raise ValueError(f"--{field.replace('_', '-')} must be >= 1, got {getattr(a, field)}")
    if not a.hidden or min(a.hidden) < 1:
        raise ValueError(f"--hidden needs at least one layer width, each >= 1, got {a.hidden}")
    rows = a.num_envs * a.num_steps
    if rows % a.minibatch_size:
        raise ValueError(f"--minibatch-size {a.minibatch_size} must divide num_envs x num_steps = {rows}")
    if a.time_budget < 0 or a.eval_every < 0 or a.eval_episodes < 1 or a.batch_size < 0:
        raise ValueError("--time-budget, --eval-every and --batch-size must be >= 0, --eval-episodes >= 1")
    if a.overlap and a.backend != "pp-async":
        raise ValueError(f"--overlap needs a backend whose send does not wait (pp-async), got {a.backend!r}")
    if a.split_timing and a.backend not in XLA_BACKENDS:
        raise ValueError(f"--split-timing is for the xla backends ({', '.join(XLA_BACKENDS)}), got {a.backend!r}")
    if a.target is not None and not a.eval_every:
        raise ValueError("--target needs --eval-every (the target is checked on the evaluations)")
    return a


# ---- networks: plain jax -----------------------------------------------------------------------------------------
def _dense(key: Any, n_in: int, n_out: int, init: str, scale: float) -> dict:
    kw = key
    if init == "orthogonal":  # CleanRL: orthogonal weights with a per-layer gain, zero bias
        w = jax.nn.initializers.orthogonal(scale)(kw, (n_in, n_out), jnp.float32)
    elif init == "variance_scaling":  # rl_games' variance_scaling_initializer(scale=2.0), fan in, truncated normal
        w = jax.nn.initializers.variance_scaling(2.0, "fan_in", "truncated_normal")(kw, (n_in, n_out), jnp.float32)
    else:  # PyTorch's nn.Linear default (rl_games' "default"): uniform +-1/sqrt(fan_in)
        bound = 1.0 / np.sqrt(n_in)
        w = jax.random.uniform(kw, (n_in, n_out), jnp.float32, -bound, bound)
    return {"w": w, "b": jnp.zeros((n_out,), jnp.float32)}  # rl_games zeroes every bias too


def _conv(key: Any, c_in: int, c_out: int, k: int) -> dict:
    # HWIO: the kernel of a channels-last convolution (see Net._torso); orthogonal over the fan-in as CleanRL's
    w = jax.nn.initializers.orthogonal(np.sqrt(2))(key, (k, k, c_in, c_out), jnp.float32)
    return {"w": w, "b": jnp.zeros((c_out,), jnp.float32)}


NATURE = ((32, 8, 4), (64, 4, 2), (64, 3, 1))  # (channels, kernel, stride) of the Nature DQN torso


class Net:
    """Actor-critic: a torso (MLP or Nature CNN; one shared, or one each with `separate`), a policy head (logits, or
    the Gaussian mean with a state-independent log std starting at 0) and a value head."""

    def __init__(self, a: Args, obs_shape: tuple, continuous: bool, n_out: int):
        self.a, self.obs_shape, self.continuous, self.n_out = a, obs_shape, continuous, n_out
        self.act = ACTIVATIONS[a.activation]

    def _torso_init(self, key: Any) -> dict:
        a = self.a
        keys = list(jax.random.split(key, 8))
        layers, convs = [], []
        if a.torso == "nature_cnn":
            c, h = self.obs_shape[0], self.obs_shape[1]
            for ch, k, s in NATURE:
                convs.append(_conv(keys.pop(), c, ch, k))
                c, h = ch, (h - k) // s + 1
            n_in = c * h * h
        else:
            n_in = int(np.prod(self.obs_shape))
        for n in a.hidden:
            layers.append(_dense(keys.pop(), n_in, n, a.init, np.sqrt(2)))
            n_in = n
        return {"conv": convs, "dense": layers}

    def init(self, key: Any) -> dict:
        k_t, k_v, k_pi, k_vh = jax.random.split(key, 4)
        n_last = self.a.hidden[-1]
        params = {
            "torso": self._torso_init(k_t),
            "pi": _dense(k_pi, n_last, self.n_out, self.a.init, 0.01),
            "v": _dense(k_vh, n_last, 1, self.a.init, 1.0),
        }
        if self.a.separate:
            params["torso_v"] = self._torso_init(k_v)
        if self.continuous:
            params["log_std"] = jnp.zeros((self.n_out,), jnp.float32)
        return params

    def _torso(self, p: dict, x: jax.Array) -> jax.Array:
        if p["conv"]:
            # channels last: XLA on CPU runs a channels-first convolution inside a loop body (the rollout's scan)
            # ~20x slower than outside one (jax-ml/jax#12868); channels last is as fast in a loop as outside
            x = jnp.transpose(x.astype(jnp.float32) / 255.0, (0, 2, 3, 1))
            for layer, (_, _, s) in zip(p["conv"], NATURE):
                x = jax.lax.conv_general_dilated(
                    x, layer["w"], (s, s), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC")
                )
                x = jax.nn.relu(x + layer["b"])
            x = x.reshape(x.shape[0], -1)
        else:
            x = x.reshape(x.shape[0], -1)
        for layer in p["dense"]:
            x = self.act(x @ layer["w"] + layer["b"])
        return x

    def __call__(self, params: dict, x: jax.Array) -> tuple[jax.Array, jax.Array]:
        """(logits or Gaussian mean, value as the head outputs it: normalised when normalize_value)."""
        h = self._torso(params["torso"], x)
        hv = self._torso(params["torso_v"], x) if self.a.separate else h
        return h @ params["pi"]["w"] + params["pi"]["b"], (hv @ params["v"]["w"] + params["v"]["b"])[:, 0]


# ---- distributions ----------------------------------------------------------------------------------------------
def log_prob(net: Net, params: dict, out: jax.Array, action: jax.Array) -> tuple[jax.Array, jax.Array]:
    """(log-probability of `action`, entropy) under the head's output `out`."""
    if net.continuous:
        log_std = params["log_std"]
        lp = -0.5 * (((action - out) / jnp.exp(log_std)) ** 2) - log_std - 0.5 * np.log(2 * np.pi)
        ent = jnp.sum(log_std + 0.5 * np.log(2 * np.pi * np.e)) * jnp.ones(out.shape[0])
        return lp.sum(-1), ent
    logp_all = jax.nn.log_softmax(out)
    lp = jnp.take_along_axis(logp_all, action[:, None].astype(jnp.int32), axis=1)[:, 0]
    return lp, -(jnp.exp(logp_all) * logp_all).sum(-1)


# ---- running mean / variance (rl_games' RunningMeanStd) ---------------------------------------------------------
def rms_init(shape: tuple) -> dict:
    return {"mean": jnp.zeros(shape, jnp.float32), "var": jnp.ones(shape, jnp.float32), "count": jnp.float32(1e-4)}


def rms_update(rms: dict, x: jax.Array, w: jax.Array) -> dict:
    """Fold rows `x` (weights `w`: 1 for rows that count, 0 for masked ones) into the running mean and variance."""
    x = x.astype(jnp.float32)
    wx = w.reshape((-1,) + (1,) * (x.ndim - 1))
    n = jnp.maximum(w.sum(), 1.0)
    mean = (x * wx).sum(0) / n
    var = (((x - mean) ** 2) * wx).sum(0) / n
    delta, total = mean - rms["mean"], rms["count"] + n
    new_mean = rms["mean"] + delta * n / total
    m2 = rms["var"] * rms["count"] + var * n + delta**2 * rms["count"] * n / total
    return {"mean": new_mean, "var": m2 / total, "count": total}


def normalize_obs(a: Args, rms: dict, obs: jax.Array) -> jax.Array:
    """rl_games: (obs - mean) / sqrt(var + 1e-5), clipped to +-5; images go in raw (the CNN scales them)."""
    if not a.normalize_input:
        return obs if a.torso == "nature_cnn" else obs.astype(jnp.float32)
    return jnp.clip((obs.astype(jnp.float32) - rms["mean"]) / jnp.sqrt(rms["var"] + 1e-5), -5.0, 5.0)


def denorm_value(a: Args, rms: dict, v: jax.Array) -> jax.Array:
    return v * jnp.sqrt(rms["var"] + 1e-5) + rms["mean"] if a.normalize_value else v


def norm_value(a: Args, rms: dict, v: jax.Array) -> jax.Array:
    return (v - rms["mean"]) / jnp.sqrt(rms["var"] + 1e-5) if a.normalize_value else v


# ---- the algorithm: policy step, GAE, the PPO update (one code path for every backend) ----------------------------
class PPO:
    def __init__(self, a: Args, obs_space: Any, act_space: Any):
        self.a = a
        self.obs_shape = tuple(obs_space.shape)
        self.continuous = hasattr(act_space, "low")
        n_out = int(np.prod(act_space.shape)) if self.continuous else int(act_space.n)
        self.net = Net(a, self.obs_shape, self.continuous, n_out)
        if self.continuous:
            self.low = jnp.asarray(act_space.low, jnp.float32)
            self.high = jnp.asarray(act_space.high, jnp.float32)
        self.tx = optax.chain(optax.clip_by_global_norm(a.max_grad_norm), optax.scale_by_adam(eps=a.adam_eps))

    def init(self, key: Any) -> dict:
        params = self.net.init(key)
        return {
            "params": params,
            "opt": self.tx.init(params),
            "lr": jnp.float32(self.a.learning_rate),
            "obs_rms": rms_init(self.obs_shape),
            "ret_rms": rms_init(()),
            "key": jax.random.fold_in(key, 1),
        }

    def policy(self, state: dict, obs: jax.Array, key: Any) -> dict:
        """One step of the behaviour policy: the env's action (clipped to the action space), the action trained on,
        its log-probability and the value (in return units)."""
        out, v = self.net(state["params"], normalize_obs(self.a, state["obs_rms"], obs))
        if self.continuous:
            action = out + jnp.exp(state["params"]["log_std"]) * jax.random.normal(key, out.shape)
            env_action = jnp.clip(action, self.low, self.high)
        else:
            action = env_action = jax.random.categorical(key, out).astype(jnp.int32)
        logp, _ = log_prob(self.net, state["params"], out, action)
        return {
            "env_action": env_action,
            "action": action,
            "logp": logp,
            "value": denorm_value(self.a, state["ret_rms"], v),
        }

    def greedy(self, state: dict, obs: jax.Array) -> jax.Array:
        """The deterministic policy: the Gaussian's mean (clipped) or the most likely action."""
        out, _ = self.net(state["params"], normalize_obs(self.a, state["obs_rms"], obs))
        return jnp.clip(out, self.low, self.high) if self.continuous else jnp.argmax(out, -1).astype(jnp.int32)

    def gae(self, ro: dict) -> tuple[jax.Array, jax.Array]:
        """Advantages and returns over a (num_steps, num_envs) rollout. Row t's successor holds V(next obs), the true
        final observation when row t ended an episode: termination cuts the bootstrap, any end cuts the chain."""
        a = self.a
        next_value = jnp.concatenate([ro["value"][1:], ro["last_value"][None]], 0)

        def body(adv_next: jax.Array, x: tuple) -> tuple:
            reward, term, done, value, nv = x
            delta = reward + a.gamma * nv * (1.0 - term) - value
            adv = delta + a.gamma * a.gae_lambda * (1.0 - done) * adv_next
            return adv, adv

        xs = (ro["reward"], ro["term"].astype(jnp.float32), ro["done"].astype(jnp.float32), ro["value"], next_value)
        _, adv = jax.lax.scan(body, jnp.zeros_like(ro["last_value"]), xs, reverse=True)
        return adv, adv + ro["value"]

    def loss(self, params: dict, state: dict, mb: dict) -> tuple[jax.Array, dict]:
        a = self.a
        out, v = self.net(params, normalize_obs(a, state["obs_rms"], mb["obs"]))
        logp, entropy = log_prob(self.net, params, out, mb["action"])
        w = mb["valid"]
        wsum = jnp.maximum(w.sum(), 1.0)
        mean = lambda x: (x * w).sum() / wsum  # noqa: E731  (masked mean over the rows trained on)
        logratio = logp - mb["logp"]
        ratio = jnp.exp(logratio)
        adv = mb["adv"]
        if a.adv_norm == "minibatch":
            m = mean(adv)
            adv = (adv - m) / (jnp.sqrt(mean((adv - m) ** 2)) + 1e-8)
        pg_loss = mean(jnp.maximum(-adv * ratio, -adv * jnp.clip(ratio, 1 - a.clip_coef, 1 + a.clip_coef)))
        if a.clip_vloss:
            v_clipped = mb["value"] + jnp.clip(v - mb["value"], -a.clip_coef, a.clip_coef)
            v_loss = 0.5 * mean(jnp.maximum((v - mb["ret"]) ** 2, (v_clipped - mb["ret"]) ** 2))
        else:
            v_loss = 0.5 * mean((v - mb["ret"]) ** 2)
        ent = mean(entropy)
        loss = pg_loss - a.ent_coef * ent + a.vf_coef * v_loss
        if a.bounds_loss_coef and self.continuous:
            loss = loss + a.bounds_loss_coef * mean((out**2).sum(-1))
        stats = {
            "pg_loss": pg_loss,
            "v_loss": v_loss,
            "entropy": ent,
            "approx_kl": mean((ratio - 1) - logratio),
            "clipfrac": mean((jnp.abs(ratio - 1) > a.clip_coef).astype(jnp.float32)),
        }
        return loss, (stats, out)

    def policy_kl(self, params: dict, out: jax.Array, prev: dict, w: jax.Array) -> jax.Array:
        """rl_games' policy_kl: KL(current || previous) of the head's distribution, summed over action dims, mean
        over the rows (weights `w`); `prev` holds each row's head output (and log std) when it was last trained on."""
        if self.continuous:
            log_std = jnp.broadcast_to(params["log_std"], out.shape)
            s0, s1 = jnp.exp(log_std), jnp.exp(prev["log_std"])
            kl = jnp.log(s1 / s0 + 1e-5) + (s0**2 + (prev["out"] - out) ** 2) / (2.0 * (s1**2 + 1e-5)) - 0.5
        else:
            lp0, lp1 = jax.nn.log_softmax(out), jax.nn.log_softmax(prev["out"])
            kl = jnp.exp(lp0) * (lp0 - lp1)
        return (kl.sum(-1) * w).sum() / jnp.maximum(w.sum(), 1.0)

    def learn(self, state: dict, ro: dict) -> tuple[dict, dict]:
        """The PPO update on one rollout: GAE, update_epochs x shuffled minibatches of Adam steps (the KL-adaptive
        schedule adjusts lr after each minibatch, as rl_games' default 'legacy' schedule does), then the observation
        statistics take the rollout in. The epochs see the observations normalised as the policy saw them when it
        acted (rl_games renormalises with statistics updated during the epochs, so its first ratios are not 1 and its
        KL-adaptive lr collapses while the statistics settle)."""
        a = self.a
        valid = ro["valid"].astype(jnp.float32)
        rows = valid.size
        state = dict(state)
        adv, ret = self.gae(ro)
        value = ro["value"]
        if a.normalize_value:
            state["ret_rms"] = rms_update(state["ret_rms"], ret.reshape(-1), valid.reshape(-1))
            ret, value = norm_value(a, state["ret_rms"], ret), norm_value(a, state["ret_rms"], value)
        if a.adv_norm == "batch":
            n = valid.sum()
            m = (adv * valid).sum() / n
            adv = (adv - m) / (jnp.sqrt((((adv - m) ** 2) * valid).sum() / n) + 1e-8)
        flat = {
            "obs": ro["obs"].reshape((rows,) + self.obs_shape),
            "action": ro["action"].reshape((rows,) + ro["action"].shape[2:]),
            "logp": ro["logp"].reshape(-1),
            "value": value.reshape(-1),
            "adv": adv.reshape(-1),
            "ret": ret.reshape(-1),
            "valid": valid.reshape(-1),
        }
        n_mb = rows // a.minibatch_size
        key, sub = jax.random.split(state["key"])
        grad = jax.grad(self.loss, has_aux=True)

        adaptive = a.lr_schedule == "adaptive"
        prev = None
        if adaptive:  # each row's head output as it was last trained on (rl_games' dataset.update_mu_sigma)
            out0, _ = self.net(state["params"], normalize_obs(a, state["obs_rms"], flat["obs"]))
            prev = {"out": out0}
            if self.continuous:
                prev["log_std"] = jnp.broadcast_to(state["params"]["log_std"], out0.shape)

        def minibatch(carry: tuple, idx: jax.Array) -> tuple:
            params, opt, lr, prev = carry
            mb = jax.tree_util.tree_map(lambda x: x[idx], flat)
            grads, (stats, out) = grad(params, state, mb)
            if adaptive:
                # rl_games' AdaptiveScheduler ('legacy': after each minibatch), on the KL between the policy now and
                # when these rows were last trained on; lr bounded to [1e-6, 1e-2]
                kl = self.policy_kl(params, out, jax.tree_util.tree_map(lambda x: x[idx], prev), mb["valid"])
                lr = jnp.where(kl > 2 * a.kl_threshold, jnp.maximum(lr / 1.5, 1e-6), lr)
                lr = jnp.where(kl < 0.5 * a.kl_threshold, jnp.minimum(lr * 1.5, 1e-2), lr)
                prev = dict(prev, out=prev["out"].at[idx].set(out))
                if self.continuous:
                    prev["log_std"] = prev["log_std"].at[idx].set(jnp.broadcast_to(params["log_std"], out.shape))
                stats["policy_kl"] = kl
            updates, opt = self.tx.update(grads, opt, params)
            params = jax.tree_util.tree_map(lambda p, u: p - lr * u, params, updates)
            return (params, opt, lr, prev), stats

        # A CNN's epochs are unrolled: XLA on CPU runs the convolutions of a gradient inside a loop body about 10x
        # slower than the same convolutions outside one, whatever the layout (jax-ml/jax#12868; docs/training.md has
        # the measurement). An MLP's stay a loop, which compiles faster.
        unroll = a.torso == "nature_cnn"

        def epoch(carry: tuple, ekey: Any) -> tuple:
            perm = jax.random.permutation(ekey, rows).reshape(n_mb, a.minibatch_size)
            return jax.lax.scan(minibatch, carry, perm, unroll=unroll)

        (params, opt, lr, _), stats = jax.lax.scan(
            epoch,
            (state["params"], state["opt"], state["lr"], prev),
            jax.random.split(sub, a.update_epochs),
            unroll=unroll,
        )
        state.update(params=params, opt=opt, lr=lr, key=key)
        if a.normalize_input:  # after the epochs: they train on the statistics the rollout was collected with
            state["obs_rms"] = rms_update(state["obs_rms"], flat["obs"], flat["valid"])
        stats = jax.tree_util.tree_map(jnp.mean, stats)
        stats["lr"] = lr
        return state, stats

    def learner_reward(self, reward: Any) -> Any:
        return jnp.sign(reward) if self.a.reward_clip else reward


# ---- rollout (a): the pool inside lax.scan through env.xla() ---------------------------------------------------
class XlaRollout:
    """The pool stepped from inside jit. `iteration(state, carry)` collects num_steps rows per env, then runs the
    update: one jitted call (two with split_timing)."""

    def __init__(self, ppo: PPO, env: Any):
        self.ppo, self.env, self.a = ppo, env, ppo.a
        handle, _, _, self._step = env.xla()
        obs, _ = env.reset()
        n = self.a.num_envs
        self.carry = {
            "handle": handle,
            "obs": jnp.asarray(obs),
            "prev_done": jnp.zeros(n, bool),  # obs is a final observation: the env's next step is its reset
            "ep_ret": jnp.zeros(n, jnp.float32),
            "ep_len": jnp.zeros(n, jnp.int32),
        }
        self.collect = jax.jit(self._collect, donate_argnums=(1,))
        self.learn = jax.jit(ppo.learn)
        self.fused = jax.jit(self._fused, donate_argnums=(1,))

    def _collect(self, state: dict, carry: dict) -> tuple[dict, dict]:
        ppo = self.ppo
        key, sub = jax.random.split(state["key"])

        def body(c: dict, k: Any) -> tuple:
            p = ppo.policy(state, c["obs"], k)
            handle, (obs, reward, term, trunc, _) = self._step(c["handle"], p["env_action"])
            reward = reward.astype(jnp.float32)
            done = term | trunc
            valid = ~c["prev_done"]
            ep_ret = c["ep_ret"] + reward
            ep_len = c["ep_len"] + valid.astype(jnp.int32)
            row = {
                "obs": c["obs"],
                "action": p["action"],
                "logp": p["logp"],
                "value": p["value"],
                "reward": ppo.learner_reward(reward),
                "term": term,
                "done": done,
                "valid": valid,
                "ended": done & valid,
                "ep_ret": ep_ret,
                "ep_len": ep_len,
            }
            c = {
                "handle": handle,
                "obs": obs.astype(c["obs"].dtype),
                "prev_done": done,
                "ep_ret": jnp.where(done, 0.0, ep_ret),
                "ep_len": jnp.where(done, 0, ep_len),
            }
            return c, row

        carry, ro = jax.lax.scan(body, carry, jax.random.split(sub, self.a.num_steps))
        out, v = ppo.net(state["params"], normalize_obs(self.a, state["obs_rms"], carry["obs"]))
        ro["last_value"] = denorm_value(self.a, state["ret_rms"], v)
        return carry, ro

    def _fused(self, state: dict, carry: dict) -> tuple:
        carry, ro = self._collect(state, carry)
        state = dict(state, key=jax.random.fold_in(state["key"], 7))
        state, stats = self.ppo.learn(state, ro)
        return state, carry, stats, {k: ro[k] for k in ("ended", "ep_ret", "ep_len")}

    def rollout(self, state: dict) -> tuple[dict, dict]:
        """One rollout as its own jitted call: ((num_steps, num_envs) rows, timing and episodes)."""
        t0 = time.perf_counter()
        self.carry, ro = self.collect(state, self.carry)
        jax.block_until_ready(ro)
        ended = episodes(jax.device_get({k: ro[k] for k in ("ended", "ep_ret", "ep_len")}))
        # the env's and the policy's time inside one scan: logged as env time
        return ro, {"env_s": time.perf_counter() - t0, "infer_s": 0.0, **ended}

    def iteration(self, state: dict) -> tuple[dict, dict, dict]:
        """(new state, stats, timing and episodes): the rollout and the update, one jitted call unless split_timing."""
        if not self.a.split_timing:
            state, self.carry, stats, ep = self.fused(state, self.carry)
            stats, ep = jax.device_get((stats, ep))
            return state, stats, {"learn_s": None, "env_s": None, "infer_s": None, **episodes(ep)}
        ro, info = self.rollout(state)
        t = time.perf_counter()
        state = dict(state, key=jax.random.fold_in(state["key"], 7))
        state, stats = self.learn(state, ro)
        stats = jax.device_get(stats)
        return state, stats, {**info, "learn_s": time.perf_counter() - t}

    def close(self) -> None:
        self.env.close()


def episodes(ro: dict) -> dict:
    """The returns and lengths of the episodes that ended in a rollout, in step order."""
    t, i = np.nonzero(np.asarray(ro["ended"]))
    return {
        "returns": [round(float(x), 2) for x in np.asarray(ro["ep_ret"])[t, i]],
        "lengths": [int(x) for x in np.asarray(ro["ep_len"])[t, i]],
    }


# ---- rollout (b): a host loop over recv/send ---------------------------------------------------------------------
class HostRollout:
    """Rows filed per env: env i's k-th row of this rollout goes to [k, i]; its outcome (reward, terminated,
    truncated) arrives with the env's next row. The rollout is complete once every env has num_steps + 1 rows (the
    last one gives the bootstrap value); rows past num_steps move to the front of the next rollout (an async pool's
    faster envs run ahead). The batch that completes a rollout is acted on again with the new policy after the update,
    or, with overlap, sent right away."""

    FIELDS = ("obs", "action", "logp", "value", "reward", "term", "done", "valid")

    def __init__(self, ppo: PPO, envs: Any):
        self.ppo, self.envs, self.a = ppo, envs, ppo.a
        # the call's key is derived inside the jitted function: one dispatch per batch
        self.policy = jax.jit(lambda state, obs, i: ppo.policy(state, obs, jax.random.fold_in(state["key"], i)))
        self.learn = jax.jit(ppo.learn)
        self.cap = 2 * (self.a.num_steps + 1)
        self.buf: dict[str, np.ndarray] = {}
        self.cnt = np.zeros(envs.num_envs, dtype=np.int64)
        self.prev_done = np.zeros(envs.num_envs, dtype=bool)
        self.ep_ret = np.zeros(envs.num_envs)
        self.ep_len = np.zeros(envs.num_envs, dtype=np.int64)
        self.held: tuple | None = None  # (obs, env ids) of the batch waiting for the new policy
        self.calls = 0
        envs.start()

    def _alloc(self, fields: dict) -> None:
        n = self.envs.num_envs
        for k, v in fields.items():
            old = self.buf.get(k)
            new = np.zeros((self.cap, n, *v.shape[1:]), dtype=v.dtype)
            if old is not None:
                new[: len(old)] = old
            self.buf[k] = new

    def _act(self, state: dict, obs: np.ndarray, ids: np.ndarray) -> np.ndarray:
        """The policy on one batch; files its rows; returns the env actions."""
        self.calls += 1
        if obs.dtype == np.float64:  # jax computes in float32
            obs = obs.astype(np.float32)
        acting = {k: state[k] for k in ("params", "obs_rms", "ret_rms", "key")}  # not the optimizer's state
        p = jax.device_get(self.policy(acting, obs, self.calls))
        rows = self.cnt[ids]
        fields = {"obs": obs, "action": p["action"], "logp": p["logp"], "value": p["value"]}
        if not self.buf:
            scalars = {"reward": np.zeros(1, np.float32), "term": np.zeros(1, bool), "done": np.zeros(1, bool)}
            self._alloc({**fields, **scalars, "valid": np.zeros(1, bool)})
        for k, v in fields.items():
            self.buf[k][rows, ids] = v
        self.buf["valid"][rows, ids] = ~self.prev_done[ids]
        return p["env_action"]

    def _outcome(self, reward: np.ndarray, term: np.ndarray, trunc: np.ndarray, ids: np.ndarray, ended: tuple) -> int:
        """Files the outcomes of the envs' previous rows; returns how many rows were env steps (not first resets)."""
        has = self.cnt[ids] > 0
        ids_h, prev = ids[has], self.cnt[ids[has]] - 1
        done = term[has] | trunc[has]
        self.buf["reward"][prev, ids_h] = np.asarray(self.ppo.learner_reward(reward[has]))
        self.buf["term"][prev, ids_h] = term[has]
        self.buf["done"][prev, ids_h] = done
        real = self.buf["valid"][prev, ids_h]  # the outcome of a real step, not of a reset
        self.ep_ret[ids_h[real]] += reward[has][real]
        self.ep_len[ids_h[real]] += 1
        end = ids_h[real & done]
        ended[0].extend(round(float(x), 2) for x in self.ep_ret[end])
        ended[1].extend(int(x) for x in self.ep_len[end])
        self.ep_ret[end], self.ep_len[end] = 0, 0
        self.prev_done[ids] = False
        self.prev_done[ids_h] = done
        return len(ids_h)

    def rollout(self, state: dict) -> tuple[dict, dict]:
        """((num_steps, num_envs) rows, timing and episodes)."""
        a, envs = self.a, self.envs
        T = a.num_steps
        env0, infer = envs.env_seconds, 0.0
        ended: tuple[list, list] = ([], [])
        if self.held is not None:  # the batch that completed the last rollout, acted on by the new policy
            obs, ids = self.held
            self.held = None
            self.cnt[ids] -= 1  # its rows are filed again
            t = time.perf_counter()
            action = self._act(state, obs, ids)
            infer += time.perf_counter() - t
            self.cnt[ids] += 1
            envs.send(action, ids)
        steps = 0
        while self.cnt.min() < T + 1:
            obs, reward, term, trunc, ids = envs.recv()
            if self.buf:
                steps += self._outcome(np.asarray(reward, np.float32), np.asarray(term), np.asarray(trunc), ids, ended)
            if self.cnt[ids].max() >= self.cap:
                self.cap *= 2
                self._alloc({k: v[:1] for k, v in self.buf.items()})
            t = time.perf_counter()
            action = self._act(state, obs, ids)
            infer += time.perf_counter() - t
            self.cnt[ids] += 1
            if self.cnt.min() >= T + 1 and not a.overlap:
                self.held = (obs, ids)
            else:
                envs.send(action, ids)
        ro = {k: self.buf[k][:T] for k in self.FIELDS}
        ro["last_value"] = self.buf["value"][T].copy()
        for k in self.buf:  # rows past num_steps start the next rollout (np.roll copies: `ro` keeps its rows)
            self.buf[k] = np.roll(self.buf[k], -T, axis=0)
        self.cnt -= T
        timing = {"env_s": envs.env_seconds - env0, "infer_s": infer}
        return ro, {**timing, "steps": steps, "returns": ended[0], "lengths": ended[1]}

    def iteration(self, state: dict) -> tuple[dict, dict, dict]:
        """(new state, stats, timing and episodes): the rollout, then the jitted update."""
        ro, info = self.rollout(state)
        t = time.perf_counter()
        state = dict(state, key=jax.random.fold_in(state["key"], 7))
        state, stats = self.learn(state, ro)
        stats = jax.device_get(stats)
        return state, stats, {**info, "learn_s": time.perf_counter() - t}

    def close(self) -> None:
        self.envs.close()


# ---- evaluation ---------------------------------------------------------------------------------------------------
def evaluate(ppo: PPO, state: dict, episodes: int, seed: int, greedy: Callable | None = None) -> float:
    """Mean return of the deterministic policy over one episode on each of `episodes` fresh envs of a ParallelPool
    pool seeded with `seed` (the same yardstick whatever backend trained the policy)."""
    import parallel_pool

    greedy = greedy or jax.jit(ppo.greedy)
    env = parallel_pool.make(ppo.a.env_id, num_envs=episodes, seed=seed)
    try:
        obs, _ = env.reset()
        returns = np.zeros(episodes)
        running = np.ones(episodes, dtype=bool)
        while running.any():
            obs, reward, term, trunc, _ = env.step(np.asarray(greedy(state, obs)))
            returns += reward * running
            running &= ~(term | trunc)
    finally:
        env.close()
    return float(returns.mean())


# ---- the run ------------------------------------------------------------------------------------------------------
def make_rollout(ppo_for: Callable[[Any, Any], PPO], a: Args, seed: int) -> tuple[PPO, Any]:
    """(the algorithm, the rollout collector) for the backend."""
    if a.backend in XLA_BACKENDS:
        if a.backend == "pp-xla":
            import parallel_pool

            env = parallel_pool.make(a.env_id, env_type="gymnasium", num_envs=a.num_envs, seed=seed)
        else:
            import envpool

            env = envpool.make_gymnasium(a.env_id, num_envs=a.num_envs, seed=seed)
        obs_space = getattr(env, "single_observation_space", env.observation_space)
        act_space = getattr(env, "single_action_space", env.action_space)
        if a.backend == "envpool-xla" and np.dtype(act_space.dtype) == np.float64:
            env.close()
            # EnvPool's xla() takes exactly the spec's dtype; jax makes float64 only with jax_enable_x64
            raise ValueError(
                f"--backend envpool-xla cannot step {a.env_id}: EnvPool's xla() needs float64 actions, which jax "
                "does not make by default; use --backend envpool (or pp-xla, which widens float32 actions)"
            )
        ppo = ppo_for(obs_space, act_space)
        return ppo, XlaRollout(ppo, env)
    envs = make_envs(a.backend, a.env_id, a.num_envs, seed, a.batch_size)
    obs_space = envs.single_observation_space or envs.env.observation_space
    act_space = envs.single_action_space or envs.env.action_space
    ppo = ppo_for(obs_space, act_space)
    return ppo, HostRollout(ppo, envs)


def train(args: Args) -> dict:
    """PPO until total_timesteps, the time budget or the target; logs every update, evaluates every eval_every
    steps, checkpoints. Returns the summary (with the final learner state and the PPO object)."""
    a = resolve(args)
    ckpt = load_checkpoint(a.checkpoint)
    update, global_step, elapsed = (ckpt["update"], ckpt["global_step"], ckpt["elapsed"]) if ckpt else (0, 0, 0.0)
    # a resumed run's envs start from a fresh seed: replaying the first segment's episodes would be no new data
    ppo, roll = make_rollout(lambda o, s: PPO(a, o, s), a, a.seed + update * 7919)
    state = ppo.init(jax.random.PRNGKey(a.seed))
    if ckpt:
        state = jax.tree_util.tree_map(jnp.asarray, ckpt["state"])
    log = RunLog(
        a.log,
        types.SimpleNamespace(**dataclasses.asdict(a), device=jax.default_backend()),
        a.backend,
        a.env_id,
        resumed=ckpt is not None,
        versions={"jax": jax.__version__},
    )
    rows = a.num_envs * a.num_steps
    num_updates = max(1, a.total_timesteps // rows)
    greedy = jax.jit(ppo.greedy)
    next_eval = (global_step // a.eval_every + 1) * a.eval_every if a.eval_every else 0
    eval_return = ckpt.get("eval_return") if ckpt else None
    start = time.perf_counter() - elapsed
    reason = "total_timesteps"
    while update < num_updates:
        if a.lr_schedule == "linear":
            state["lr"] = jnp.float32(a.learning_rate * (1.0 - update / num_updates))
        t0 = time.perf_counter()
        state, stats, info = roll.iteration(state)
        update += 1
        global_step += info.get("steps", rows)
        update_s = time.perf_counter() - t0
        record: dict[str, Any] = {}
        if a.eval_every and global_step >= next_eval:
            next_eval += a.eval_every
            t = time.perf_counter()
            eval_return = evaluate(ppo, state, a.eval_episodes, a.seed + 10_000 + global_step, greedy)
            record = {"eval_return": round(eval_return, 2), "eval_s": round(time.perf_counter() - t, 3)}
        wall = time.perf_counter() - start
        r = lambda x: None if x is None else round(x, 4)  # noqa: E731
        log.write(
            kind="update",
            update=update,
            steps=global_step,
            wall=round(wall, 3),
            update_s=round(update_s, 4),
            env_s=r(info["env_s"]),
            infer_s=r(info["infer_s"]),
            learn_s=r(info["learn_s"]),
            returns=info["returns"],
            lengths=info["lengths"],
            **machine(),
            **{k: float(v) for k, v in stats.items()},
            **record,
        )
        if not a.quiet:
            recent = np.mean(info["returns"]) if info["returns"] else float("nan")
            print(
                f"update {update} steps {global_step} wall {wall:.1f}s return {recent:.1f} "
                f"eval {eval_return} sps {global_step / wall:.0f} kl {float(stats['approx_kl']):.4f} "
                f"lr {float(stats['lr']):.2e}",
                flush=True,
            )
        reached = a.target is not None and eval_return is not None and eval_return >= a.target
        out_of_time = bool(a.time_budget) and wall >= a.time_budget
        if a.checkpoint and (update % a.checkpoint_every == 0 or update == num_updates or out_of_time or reached):
            save_checkpoint(
                a.checkpoint,
                state=jax.device_get(state),
                update=update,
                global_step=global_step,
                elapsed=wall,
                eval_return=eval_return,
            )
        if reached or out_of_time:
            reason = "target" if reached else "time_budget"
            break
    roll.close()
    wall = time.perf_counter() - start
    summary = {"reason": reason, "updates": update, "steps": global_step, "wall": round(wall, 1)}
    if eval_return is not None:
        summary["eval_return"] = eval_return
    log.write(kind="end", **summary)
    log.close()
    if not a.quiet:
        print("SUMMARY", summary)
    return {**summary, "state": state, "ppo": ppo, "args": a}


def parse_args(argv: list[str] | None = None) -> Args:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for f in dataclasses.fields(Args):
        name = "--" + f.name.replace("_", "-")
        t = str(f.type)
        if t.startswith("bool"):
            p.add_argument(name, type=lambda s: s.lower() in ("1", "true", "yes"), default=f.default, metavar="BOOL")
        elif t.startswith("tuple"):
            p.add_argument(name, type=int, nargs="+", default=f.default)
        elif t.startswith("int"):
            p.add_argument(name, type=int, default=f.default)
        elif t.startswith("float"):
            p.add_argument(name, type=float, default=f.default)
        else:
            p.add_argument(name, type=str, default=f.default)
    ns = vars(p.parse_args(argv))
    if ns["hidden"] is not None:
        ns["hidden"] = tuple(ns["hidden"])
    return Args(**ns)


if __name__ == "__main__":
    train(parse_args())
