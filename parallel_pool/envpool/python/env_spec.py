"""EnvPool's `envpool.python.env_spec` path: the face's spec class."""

from parallel_pool.envpool._spec import FaceSpec

__all__ = ["FaceSpec"]
