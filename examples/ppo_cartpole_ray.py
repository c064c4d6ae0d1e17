"""PPO on CartPole-v1 with its envs on Ray actors: examples/ppo_cartpole.py's training loop, unchanged, given a pool
from ``parallel_pool.distributed.make`` (the same gymnasium vector env, its envs spread over ``--num-workers`` actors).

    python examples/ppo_cartpole_ray.py --num-workers 2 --seed 1 --total-timesteps 100000
    python examples/ppo_cartpole_ray.py --ray-address auto ...     # join a running cluster (`ray start --head`)

Same seed, same result as ppo_cartpole.py: env i is seeded with seed + i however many actors hold the envs. The
last line printed is the SUMMARY line of ppo_cartpole.py.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import ray
import tyro
from ppo_cartpole import Args, main

from parallel_pool import distributed


@dataclass
class RayArgs(Args):
    num_workers: int = 2
    """Ray actors holding the training envs (num_envs / num_workers each)"""
    ray_address: str | None = None
    """a running cluster's address ("auto", "ray://host:10001"); None starts a local one"""


if __name__ == "__main__":
    args = tyro.cli(RayArgs)
    ray.init(address=args.ray_address, log_to_driver=False)
    main(args, make=functools.partial(distributed.make, num_workers=args.num_workers))
