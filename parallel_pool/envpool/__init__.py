"""EnvPool's public API over ParallelPool's engine.

A program written for EnvPool 1.2 runs after changing only `import envpool` to
`import parallel_pool.envpool as envpool` (docs/migration.md says what differs, and why).

The pools it returns follow EnvPool's conventions (single-env observation_space/action_space, `spec.config.<key>`,
`all_env_ids`, EnvPool's info keys, repr and class names); `make_gym` with gym < 0.26 installed (or
legacy_gym=True) gives EnvPool 0.8's gym 4-tuple API for old clients. parallel_pool.make stays gymnasium's face.
"""

from parallel_pool.envpool.python.protocol import DMEnvPool, EnvPool, EnvSpec, GymnasiumEnvPool
from parallel_pool.envpool.registration import list_all_envs, make, make_dm, make_gym, make_gymnasium, make_spec

__version__ = "1.2.5"  # the EnvPool release whose API this face reproduces (programs may check it)

__all__ = [
    "DMEnvPool",
    "EnvPool",
    "EnvSpec",
    "GymnasiumEnvPool",
    "list_all_envs",
    "make",
    "make_dm",
    "make_gym",
    "make_gymnasium",
    "make_spec",
]
