"""EnvPool's `envpool.python` package path.

Its public types, and the face's implementations under EnvPool's module names (protocol, api, env_spec, envpool,
gymnasium_envpool, dm_envpool).
"""

from parallel_pool.envpool.python.protocol import DMEnvPool, EnvPool, EnvSpec, GymnasiumEnvPool

__all__ = ["DMEnvPool", "EnvPool", "EnvSpec", "GymnasiumEnvPool"]
