"""Test shim: EnvPool's import paths mapped onto parallel_pool's EnvPool face (parallel_pool.envpool), to run EnvPool's
own unit tests against it."""

from parallel_pool.envpool import *  # noqa: F403
from parallel_pool.envpool import __version__  # noqa: F401
