"""EnvPool's `envpool.python.api` path: the public types.

EnvPool's py_env, which builds pool classes from its C++ bindings, has no counterpart: ParallelPool registers its
envs in C++.
"""

from parallel_pool.envpool.python.protocol import DMEnvPool, EnvPool, EnvSpec, GymnasiumEnvPool

__all__ = ["DMEnvPool", "EnvPool", "EnvSpec", "GymnasiumEnvPool"]
