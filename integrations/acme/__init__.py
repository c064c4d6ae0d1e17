"""ACME adapter: ``from parallel_pool.integrations.acme import BatchedEnvironment, BatchedEnvironmentLoop``.

``BatchedEnvironment(task_id, num_envs=..., ...)`` is a ``dm_env.Environment`` over the pool with single-env specs
(``acme.specs.make_environment_spec`` accepts it) and batched timesteps, each env resetting on its own;
``BatchedEnvironmentLoop(env, actor)`` drives one ``acme.core.Actor`` on every env, like ``acme.EnvironmentLoop``.
Needs ``pip install parallel-pool[acme]`` (dm-acme 0.2.4).
"""

from .environment import BatchedEnvironment
from .loop import BatchedEnvironmentLoop

__all__ = ["BatchedEnvironment", "BatchedEnvironmentLoop"]
