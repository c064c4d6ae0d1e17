"""rl_games adapter: importing this module registers ParallelPool with rl_games.

    import parallel_pool.integrations.rl_games  # registers vecenv type "PARALLEL_POOL", env "parallel_pool"

After that a stock rl_games YAML config trains on any ParallelPool task with ``rl_games.torch_runner.Runner``::

    config:
      env_name: parallel_pool
      vecenv_type: PARALLEL_POOL      # optional: the env configuration already names it
      env_config: {env_name: CartPole-v1, seed: 0}

Needs ``pip install parallel-pool[rl-games]``.
"""

from __future__ import annotations

import typing as _typing

from rl_games.common import env_configurations, vecenv

from .env import ParallelPoolRLGamesEnv

if _typing.TYPE_CHECKING:  # the annotations' names only (strings at run time): dir() lists the API
    from typing import Any

__all__ = ["ParallelPoolRLGamesEnv", "register", "VECENV_TYPE", "ENV_NAME"]

VECENV_TYPE = "PARALLEL_POOL"
ENV_NAME = "parallel_pool"


def _create_env(**kwargs: Any) -> ParallelPoolRLGamesEnv:
    """rl_games' env_creator (used by its players): a vecenv of ``num_actors`` envs (default 1)."""
    return ParallelPoolRLGamesEnv(ENV_NAME, kwargs.pop("num_actors", 1), **kwargs)


def register() -> None:
    """Register the vecenv type ``PARALLEL_POOL`` and the env configuration ``parallel_pool`` with rl_games.

    Idempotent; importing this module does it.
    """
    vecenv.register(
        VECENV_TYPE, lambda config_name, num_actors, **kwargs: ParallelPoolRLGamesEnv(config_name, num_actors, **kwargs)
    )
    env_configurations.register(ENV_NAME, {"env_creator": _create_env, "vecenv_type": VECENV_TYPE})


register()


# `annotations` is the __future__ import's flag, not part of the API (the compiler read it already): out of dir()
del annotations
