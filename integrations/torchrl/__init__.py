"""TorchRL adapter: ``from parallel_pool.integrations.torchrl import ParallelPoolEnv``.

Needs ``pip install parallel-pool[torchrl]``.
"""

from .env import ParallelPoolEnv

__all__ = ["ParallelPoolEnv"]
