"""CleanRL-style helpers: ``from parallel_pool.integrations.cleanrl import EpisodeStatistics``.

The single-file training scripts live in ``examples/`` (``ppo_cartpole.py``, ``ppo_atari_async.py``).
"""

from .stats import EpisodeStatistics

__all__ = ["EpisodeStatistics"]
