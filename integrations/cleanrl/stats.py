"""Episode statistics for batched (sync or async) pools, CleanRL style."""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from parallel_pool.translate import final_value


class EpisodeStatistics:
    """Records the return and length of every *real* episode of a pool, batch by batch.

    Works on the gymnasium or gym front-end of ``parallel_pool.make``, sync or async (rows are matched to envs by
    ``info["env_id"]``), with next-step or same-step autoreset:

    - next-step autoreset: the row that follows an episode end is the reset observation (reward 0, action
      ignored); it counts toward neither episode;
    - Atari episodic life: with ``episodic_life=True`` a lost life sets ``terminated`` but the game goes on; the
      episode (as reported) ends only at game over (``info["terminated"]``, or ``info["lives"] == 0`` when only
      lives are given) or at truncation, and its return sums the unclipped ``info["reward"]`` when present
      (``reward_clip=True`` clips the reward the agent sees, not the score).

    When episodes end in a batch, ``info[stats_key]`` is ``{"r": returns, "l": lengths}`` (one entry per row, 0 where
    no episode ended) and ``info["_" + stats_key]`` the mask of rows where one did, as gymnasium's
    ``RecordEpisodeStatistics`` does. ``return_queue`` / ``length_queue`` keep the last ``buffer_length`` episodes.
    Everything else (spaces, ``send``/``recv``, ``xla``, config) is the wrapped pool's.
    """

    def __init__(self, env: Any, buffer_length: int = 100, stats_key: str = "episode"):
        self.env = env
        self.stats_key = stats_key
        n = env.num_envs
        self.same_step = getattr(env, "autoreset_mode", None) == AutoresetMode.SAME_STEP
        self.episode_returns = np.zeros(n, dtype=np.float64)
        self.episode_lengths = np.zeros(n, dtype=np.int64)
        self._skip = np.zeros(n, dtype=bool)  # the env's next row is a reset, not a step
        self.return_queue: deque[float] = deque(maxlen=buffer_length)
        self.length_queue: deque[int] = deque(maxlen=buffer_length)
        self.episode_count = 0

    def __getattr__(self, name: str) -> Any:
        if name == "env":
            raise AttributeError(name)
        return getattr(self.env, name)

    def __len__(self) -> int:
        return self.env.num_envs

    # ---- calls ------------------------------------------------------------------------------------------
    def reset(self, *args: Any, **kwargs: Any):
        """The wrapped pool's ``reset``; the reset envs' running returns and lengths start over."""
        obs, info = self.env.reset(*args, **kwargs)
        ids = info["env_id"]
        if getattr(self.env, "is_async", False) and len(ids) < self.env.num_envs:
            # an async pool's reset hands back batch_size envs; the others' reset rows come through recv()
            self._clear(slice(None))
            self._skip[:] = True
        self._clear(ids)
        return obs, info

    def async_reset(self, *args: Any, **kwargs: Any) -> None:
        """The wrapped pool's ``async_reset``; every env's running return and length start over."""
        self.env.async_reset(*args, **kwargs)
        self._clear(slice(None))
        self._skip[:] = True  # every env's next row is its reset observation

    def step(self, action: Any, env_id: Any = None):
        """The wrapped pool's ``step``, with the statistics of the episodes that ended added to ``info``."""
        return self._record(*self.env.step(action, env_id))

    def send(self, action: Any, env_id: Any = None) -> None:
        """The wrapped pool's ``send``."""
        self.env.send(action, env_id)

    def recv(self):
        """The wrapped pool's ``recv``, with the statistics of the episodes that ended added to ``info``."""
        return self._record(*self.env.recv())

    def close(self) -> None:
        """Close the wrapped pool."""
        self.env.close()

    # ---- bookkeeping -------------------------------------------------------------------------------------
    def _clear(self, ids) -> None:
        self.episode_returns[ids] = 0
        self.episode_lengths[ids] = 0
        self._skip[ids] = False

    def _final(self, info: dict, key: str, done: np.ndarray):
        """info[key] as of the step's own (final) state.

        With same-step autoreset a finished row's info is the reset state's, and its final state is in
        info["final_info"] (translate.final_value).
        """
        return final_value(info, key, done) if self.same_step else info.get(key)

    def _record(self, obs, reward, terminated, truncated, info):
        ids = info["env_id"]
        done = terminated | truncated
        raw = self._final(info, "reward", done)
        raw = reward if raw is None else raw
        counted = ~self._skip[ids]  # a reset row (after async_reset, or next-step autoreset) is no step
        self.episode_returns[ids[counted]] += raw[counted]
        self.episode_lengths[ids[counted]] += 1
        # with next-step autoreset the row after an episode end is the reset observation
        self._skip[ids] = False if self.same_step else done
        game_over = self._final(info, "terminated", done)
        if game_over is not None:
            real_end = truncated | (terminated & game_over.astype(bool))
        else:
            lives = self._final(info, "lives", done)
            real_end = truncated | (terminated & (lives == 0)) if lives is not None else done
        if real_end.any():
            rows = np.flatnonzero(real_end)
            envs = ids[rows]
            r = np.zeros(len(ids), dtype=np.float64)
            ln = np.zeros(len(ids), dtype=np.int64)
            r[rows] = self.episode_returns[envs]
            ln[rows] = self.episode_lengths[envs]
            self.return_queue.extend(r[rows].tolist())
            self.length_queue.extend(ln[rows].tolist())
            self.episode_count += len(rows)
            self.episode_returns[envs] = 0
            self.episode_lengths[envs] = 0
            if self.stats_key in info:
                raise ValueError(f"info already has a {self.stats_key!r} key; give EpisodeStatistics another stats_key")
            info[self.stats_key] = {"r": r, "l": ln}
            info["_" + self.stats_key] = real_end
        return obs, reward, terminated, truncated, info

    def __repr__(self) -> str:
        return f"EpisodeStatistics({self.env!r})"
