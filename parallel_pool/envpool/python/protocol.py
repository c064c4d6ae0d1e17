"""EnvPool's public types, under EnvPool's names and module path (`envpool.python.protocol`).

EnvPool declares them as typing Protocols, which `isinstance` refuses; here they are abstract base classes that the
face's pools and specs derive from, so annotations and isinstance checks written against EnvPool's names hold.
"""

from __future__ import annotations

import abc

from parallel_pool.spec import ArraySpec

__all__ = ["ArraySpec", "DMEnvPool", "EnvPool", "EnvSpec", "GymnasiumEnvPool"]


class EnvSpec(abc.ABC):  # noqa: B024 -- a type to check against, with nothing to override
    """A task's spec as EnvPool has it: `config` (a namedtuple), spaces, dm specs, `*_array_spec`."""


class EnvPool(abc.ABC):  # noqa: B024
    """Any pool of the EnvPool face (gymnasium, legacy gym or dm_env API)."""


class GymnasiumEnvPool(EnvPool):
    """A pool with EnvPool's gymnasium API: 5-tuple step, (obs, info) reset, single-env spaces."""


class DMEnvPool(EnvPool):
    """A pool with EnvPool's dm_env API: batched dm_env.TimeStep."""
