"""EnvPool's `envpool.python.gymnasium_envpool` path: the gymnasium pool of the face."""

from parallel_pool.envpool._pools import FaceGymnasiumPool

__all__ = ["FaceGymnasiumPool"]
