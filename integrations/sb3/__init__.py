"""Stable-Baselines3 adapter: ``from parallel_pool.integrations.sb3 import ParallelPoolVecEnv``.

Needs ``pip install parallel-pool[sb3]``.
"""

from .vec_env import AgentRowsVecEnv, ParallelPoolVecEnv, make_vec_env

__all__ = ["AgentRowsVecEnv", "ParallelPoolVecEnv", "make_vec_env"]
