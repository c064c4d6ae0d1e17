"""EnvPool's `envpool.python.dm_envpool` path: the dm_env pool of the face."""

from parallel_pool.envpool._pools import FaceDmPool

__all__ = ["FaceDmPool"]
