"""Test shim: EnvPool's import paths mapped onto parallel_pool's EnvPool face."""

from parallel_pool.envpool.python.protocol import *  # noqa: F403
