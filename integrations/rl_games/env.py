"""rl_games vecenv over a ParallelPool pool.

rl_games' PPO steps every actor every step and wants, per batch, ``(obs, rewards, dones, infos)`` with ``infos`` a
dict of arrays: ``time_outs`` (truncations, which it bootstraps when ``value_bootstrap`` is on) and ``scores`` (the
game score its observer logs at episode ends). Its own ``ENVPOOL`` vecenv runs EnvPool with next-step autoreset, so
every episode end is followed by a fake transition (the ignored action, reward 0, the reset observation) that rl_games
trains on, and the final observation of an episode is never seen. This one runs the pool with same-step autoreset:
``obs`` is already the next episode's first observation where an episode ended, ``infos["final_obs"]`` holds the true
final observation, and there are no fake transitions.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

import parallel_pool
from parallel_pool.registry import autoreset_mode_name
from parallel_pool.translate import final_value, successor_obs
from rl_games.common.ivecenv import IVecEnv

__all__ = ["ParallelPoolRLGamesEnv"]

# info keys the pool gives that are not per-row step results (or are re-exposed under rl_games' names)
_SKIP_INFO = ("players", "final_obs", "final_info", "lives")


def _flatten(obs: dict, keys: list[str]) -> np.ndarray:
    """Each row's fields concatenated in ``keys`` order (the Dict space's, which `_flat_space` follows)."""
    return np.concatenate([np.asarray(obs[k], dtype=np.float32).reshape(len(obs[k]), -1) for k in keys], axis=1)


def _flat_space(space: gym.spaces.Dict) -> gym.spaces.Box:
    """The float32 Box that `_flatten` maps observations of ``space`` into (fields in the same order)."""
    flat = gym.spaces.flatten_space(space)
    return gym.spaces.Box(flat.low.astype(np.float32), flat.high.astype(np.float32), dtype=np.float32)


class ParallelPoolRLGamesEnv(IVecEnv):
    """rl_games ``IVecEnv`` over ``num_actors`` envs of one task.

    rl_games creates it from the ``env_config`` of a YAML config (``env_name: parallel_pool``; see
    ``parallel_pool.integrations.rl_games``).

    ``env_config`` keys: ``env_name`` (the task id, required), ``has_lives`` (Atari: count a game, not a life, as
    the episode whose score is logged; default: the pool's ``episodic_life``), ``flatten_obs`` (concatenate a dict
    observation into one float32 vector), and any ``parallel_pool.make`` config key (``seed``, ``num_threads``,
    ``max_episode_steps``, the task's own keys). ``num_envs`` is ``num_actors``.

    ``step`` returns ``(obs, rewards, dones, infos)``: ``dones = terminated | truncated`` (uint8), and ``infos``
    holds ``time_outs`` (truncated and not terminated), ``final_obs`` (the episode's true last observation where
    one ended, else the same as obs), ``scores`` (each env's running game score, unclipped: at a game end, the
    game's score), ``env_id`` and the task's info arrays as of the final step (``elapsed_step``, Atari's
    ``reward`` and game-over ``terminated``, ...).
    """

    def __init__(self, config_name: str, num_actors: int, **kwargs: Any):
        config = dict(kwargs)
        task_id = config.pop("env_name", None)
        if not isinstance(task_id, str):
            raise ValueError(
                f"env_config needs 'env_name': a ParallelPool task id such as 'CartPole-v1' (got {task_id!r})"
            )
        has_lives = config.pop("has_lives", None)
        self.flatten_obs = bool(config.pop("flatten_obs", False))
        self._check_config(config, num_actors)
        self.pool = parallel_pool.make(
            task_id, env_type="gymnasium", num_envs=num_actors, autoreset_mode="same_step", **config
        )
        self.num_actors = num_actors
        self.has_lives = bool(self.pool.config.get("episodic_life", False) if has_lives is None else has_lives)
        self.action_space = self.pool.single_action_space
        self.observation_space = self.pool.single_observation_space
        if self.flatten_obs:
            if not isinstance(self.observation_space, gym.spaces.Dict):
                raise ValueError(f"flatten_obs=True needs a dict observation; {task_id} has {self.observation_space}")
            self._obs_keys = list(self.observation_space.keys())
            self.observation_space = _flat_space(self.observation_space)
        self._action_dtype = self.action_space.dtype if isinstance(self.action_space, gym.spaces.Box) else None
        self._scores = np.zeros(num_actors, dtype=np.float64)
        self._next_seed: int | None = None

    @staticmethod
    def _check_config(config: dict, num_actors: int) -> None:
        """Keys rl_games fixes itself; everything else goes to parallel_pool.make, which validates it."""
        if config.get("num_envs", num_actors) != num_actors:
            raise ValueError(
                f"env_config num_envs={config['num_envs']} differs from num_actors={num_actors}; "
                "leave num_envs out (rl_games' num_actors sets it)"
            )
        config.pop("num_envs", None)
        if config.pop("batch_size", 0) not in (0, num_actors):
            raise ValueError(
                "env_config batch_size must equal num_actors: rl_games' PPO steps every actor every "
                "step, so an asynchronous pool (batch_size < num_envs) cannot feed it"
            )
        if config.pop("env_type", "gymnasium") not in ("gymnasium", "gym"):
            raise ValueError(
                "env_config env_type: the rl_games vecenv always runs the gymnasium front-end "
                "('gymnasium' or 'gym' are accepted for ENVPOOL configs)"
            )
        mode = config.pop("autoreset_mode", "same_step")
        if autoreset_mode_name(mode) != "same_step":
            raise ValueError(
                f"env_config autoreset_mode={mode!r}: the rl_games vecenv needs 'same_step' (rl_games "
                "acts on every env every step)"
            )

    # ---- observations and actions -----------------------------------------------------------------------------
    def _obs(self, obs: Any) -> Any:
        return _flatten(obs, self._obs_keys) if self.flatten_obs else obs

    def _action(self, actions: Any) -> np.ndarray:
        if hasattr(actions, "detach"):  # a torch tensor (rl_games hands numpy over, but players may not)
            actions = actions.detach().cpu().numpy()
        actions = np.asarray(actions)
        if self.pool.num_envs == 1 and actions.ndim == len(self.pool.single_action_space.shape):
            actions = actions[None]  # rl_games' player steps a 1-actor env with one env's action (no batch axis)
        if self._action_dtype is not None:
            return actions.astype(self._action_dtype, copy=False)
        return actions

    # ---- IVecEnv ----------------------------------------------------------------------------------------------
    def step(self, actions: Any):
        """Step every env: ``(obs, rewards, dones, infos)`` as the class docstring describes."""
        obs, reward, terminated, truncated, info = self.pool.step(self._action(actions))
        done = terminated | truncated
        infos = {k: final_value(info, k, done) for k in info if not k.startswith("_") and k not in _SKIP_INFO}
        infos["time_outs"] = truncated & ~terminated  # so dones & ~time_outs are the terminations
        final_obs = successor_obs(obs, info["final_obs"], done) if done.any() else obs
        infos["final_obs"] = self._obs(final_obs)
        self._update_scores(reward, terminated, truncated, info, infos)
        return self._obs(obs), reward.astype(np.float32, copy=False), done.astype(np.uint8), infos

    def _update_scores(self, reward, terminated, truncated, info, infos) -> None:
        """Per-env game scores for rl_games' observer.

        The observer logs ``infos["scores"]`` at rl_games' done rows, or, when ``infos`` has ``lives``, at the rows
        where ``lives == 0``.

        With episodic life (Atari), a lost life ends rl_games' episode but not the game: the score is summed over
        the whole game from the unclipped ``info["reward"]``, and ``infos["lives"]`` is 0 exactly on the rows whose
        game ended (game over or truncation) so that the observer logs whole games. Without it no ``lives`` key
        is given: the engine reports 0 lives all along for games without lives, which the observer would read as a
        game end on every step (rl_games' ENVPOOL vecenv deletes the key for the same reason).
        """
        done = terminated | truncated
        raw = final_value(info, "reward", done)
        self._scores += reward if raw is None else raw
        infos["scores"] = self._scores.copy()
        game_end = done
        if self.has_lives:
            game_over = final_value(info, "terminated", done)  # Atari: the real game-over flag under episodic life
            if game_over is None:
                lives = final_value(info, "lives", done)
                game_over = lives == 0 if lives is not None else np.ones_like(done)
            game_end = truncated | (terminated & game_over.astype(bool))
            lives = final_value(info, "lives", done)
            lives = np.ones(len(done), np.int32) if lives is None else np.maximum(lives, 1)
            infos["lives"] = np.where(game_end, 0, lives)
        self._scores[game_end] = 0.0

    def reset(self):
        """Reset every env (seeded by ``seed()`` when it was called since); the observations."""
        obs, _ = self.pool.reset(seed=self._next_seed)
        self._next_seed = None
        self._scores[:] = 0.0
        return self._obs(obs)

    def seed(self, seed: int) -> None:
        """Seeds the next reset: env i gets seed + i, as make(seed=...) does."""
        self._next_seed = seed

    def get_number_of_agents(self) -> int:
        """One agent per env."""
        return 1

    def get_env_info(self) -> dict:
        """The single-env spaces (what rl_games builds its network from)."""
        return {
            "action_space": self.action_space,
            "observation_space": self.observation_space,
            "agents": 1,
            "value_size": 1,
        }

    def close(self) -> None:
        """Close the pool."""
        self.pool.close()
