"""Tianshou adapter: ``from parallel_pool.integrations.tianshou import ParallelPoolVectorEnv``.

Needs ``pip install parallel-pool[tianshou]``.
"""

from .venv import ParallelPoolVectorEnv

__all__ = ["ParallelPoolVectorEnv"]
