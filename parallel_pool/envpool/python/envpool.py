"""EnvPool's `envpool.python.envpool` path: the base type of every pool of the face."""

from parallel_pool.envpool.python.protocol import EnvPool

__all__ = ["EnvPool"]
