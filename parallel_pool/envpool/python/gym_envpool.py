"""EnvPool 0.8's `envpool.python.gym_envpool` path: the gym 4-tuple pool of the face (old clients)."""

from parallel_pool.envpool._pools import LegacyGymPool

__all__ = ["LegacyGymPool"]
