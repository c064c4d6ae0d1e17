"""RLlib's PPO (new API stack) on a ParallelPool pool, CartPole-v1 or Pong-v5.

    python examples/rllib_ppo.py --env-id CartPole-v1 --iterations 40
    python examples/rllib_ppo.py --env-id Pong-v5 --num-envs 32 --iterations 2000

RLlib's EnvRunners make their envs with `gymnasium.make_vec`; importing parallel_pool registers every id as
`ParallelPool/<id>` with the pool as its vector entry point, so `environment("ParallelPool/<id>")` plus
`env_runners(gym_env_vectorize_mode="vector_entry_point")` makes each EnvRunner's envs one pool (stepped on the
pool's threads; the pool's default next-step autoreset is the one RLlib's EnvRunner expects). Pool config keys go in
`env_config`. Needs `pip install "parallel-pool[rllib]"` (RLlib pins gymnasium 1.2.2: use a venv of its own).
The Pong settings follow RLlib's Atari PPO example (its tuned_examples/ppo/atari_ppo.py): 4 stacked 84x84 grey
frames (here the pool's own frame stack), 64x64 -> conv net, lr 2.5e-4 style clipped PPO.
"""

from __future__ import annotations

import argparse

from ray.rllib.algorithms.ppo import PPOConfig

import parallel_pool  # noqa: F401  (registers ParallelPool/<id> in gymnasium's registry)


def config_for(env_id: str, num_envs: int, seed: int) -> PPOConfig:
    """PPOConfig for CartPole-v1 (small MLP) or an Atari id (Nature-CNN-like encoder)."""
    config = (
        PPOConfig()
        .environment(f"ParallelPool/{env_id}", env_config={"seed": seed})
        .env_runners(num_env_runners=0, num_envs_per_env_runner=num_envs, gym_env_vectorize_mode="vector_entry_point")
        .debugging(seed=seed)
    )
    if env_id == "CartPole-v1":
        return config.training(
            lr=3e-4, train_batch_size_per_learner=4000, minibatch_size=256, num_epochs=10, vf_loss_coeff=0.01
        ).rl_module(model_config={"fcnet_hiddens": [64, 64], "fcnet_activation": "tanh", "vf_share_layers": False})
    return (
        config.environment(
            f"ParallelPool/{env_id}", env_config={"seed": seed, "episodic_life": True, "reward_clip": True}
        )
        .training(
            lr=2.5e-4,
            train_batch_size_per_learner=4000,
            minibatch_size=128,
            num_epochs=10,
            lambda_=0.95,
            kl_coeff=0.5,
            clip_param=0.1,
            vf_clip_param=10.0,
            entropy_coeff=0.01,
            vf_loss_coeff=0.05,
            grad_clip=100.0,
        )
        .rl_module(
            model_config={
                "conv_filters": [[16, 4, 2], [32, 4, 2], [64, 4, 2], [128, 4, 2]],
                "conv_activation": "relu",
                "head_fcnet_hiddens": [256],
                "vf_share_layers": True,
            }
        )
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env-id", default="CartPole-v1")
    p.add_argument("--num-envs", type=int, default=8)
    p.add_argument("--iterations", type=int, default=40)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--target", type=float, default=475.0)
    a = p.parse_args()
    algo = config_for(a.env_id, a.num_envs, a.seed).build_algo()
    for i in range(a.iterations):
        result = algo.train()
        ret = result["env_runners"].get("episode_return_mean", float("nan"))
        steps = result["env_runners"].get("num_env_steps_sampled_lifetime")
        print(f"iteration {i + 1} steps {steps} episode_return_mean {ret:.1f}", flush=True)
        if ret >= a.target:
            break
    algo.stop()


if __name__ == "__main__":
    main()
