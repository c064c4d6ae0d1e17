"""The three front-ends: gymnasium (a real gymnasium.vector.VectorEnv), gym-style (EnvPool 1.x), dm_env."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from parallel_pool.pool import BasePool
from parallel_pool.spec import EnvSpec

_MODES = {"next_step": AutoresetMode.NEXT_STEP, "same_step": AutoresetMode.SAME_STEP,
          "disabled": AutoresetMode.DISABLED}


class _GymStyle:
    """step, and reset(seed=, options={"reset_mask": mask}) / reset(env_id=...), for the gym-style front-ends."""

    _last_obs: Any = None

    def _reset_front(self: Any, seed=None, options=None, env_id=None):
        mask = None if options is None else options.get("reset_mask")
        if mask is not None:
            if env_id is not None:
                raise ValueError("give either env_id or options['reset_mask'], not both")
            mask = np.asarray(mask)
            if mask.dtype != bool or mask.shape != (self.num_envs,):
                raise ValueError(f"reset_mask must be a bool array of shape ({self.num_envs},), got "
                                 f"{mask.dtype} {mask.shape}")
            if self.is_async:
                raise ValueError("reset_mask needs a sync pool (batch_size == num_envs)")
            env_id = np.flatnonzero(mask).astype(np.int32)
            if len(env_id) == 0:
                raise ValueError("reset_mask selects no env")
        out = self._reset_raw(env_id, seed)
        obs, info = self._obs(out), self._info(out)
        if mask is not None and self._last_obs is not None:
            # gymnasium's convention: the full batch, with the masked envs reset and the rest unchanged
            full = _scatter(self._last_obs, obs, env_id)
            full_info = {}
            for k, v in info.items():
                if isinstance(v, np.ndarray) and k != "players" and not k.startswith("_"):
                    arr = np.zeros((self.num_envs,) + v.shape[1:], dtype=v.dtype)
                    arr[env_id] = v
                    full_info[k] = arr
                    full_info["_" + k] = mask.copy()
            full_info["players"] = info["players"]
            obs, info = full, full_info
        self._remember(obs, env_id)
        return obs, info

    def step(self: Any, actions, env_id=None):
        out = self._unpack(self._step_raw(actions, env_id))
        if self.autoreset_mode == "disabled":
            self._remember(out[0], env_id)
        return out

    def _remember(self: Any, obs, env_id=None):
        if self.autoreset_mode != "disabled" or self.is_async:
            return
        if env_id is None or self._last_obs is None:
            self._last_obs = _copy(obs)
        else:
            self._last_obs = _scatter(self._last_obs, obs if len(_first(obs)) == len(env_id) else _take(obs, env_id),
                                      env_id)


def _first(obs):
    return next(iter(obs.values())) if isinstance(obs, dict) else obs


def _copy(obs):
    return {k: v.copy() for k, v in obs.items()} if isinstance(obs, dict) else obs.copy()


def _take(obs, ids):
    return {k: v[ids] for k, v in obs.items()} if isinstance(obs, dict) else obs[ids]


def _scatter(full, part, ids):
    full = _copy(full)
    if isinstance(full, dict):
        for k in full:
            full[k][ids] = part[k]
    else:
        full[ids] = part
    return full


class GymnasiumPool(_GymStyle, BasePool, VectorEnv):
    """A gymnasium.vector.VectorEnv. observation_space/action_space are batched (batch_size rows);
    single_observation_space/single_action_space are one env's."""

    def __init__(self, spec: EnvSpec):
        BasePool.__init__(self, spec)
        self.metadata = {"autoreset_mode": _MODES[self.autoreset_mode], "render_modes": []}
        self.render_mode = None
        self.single_observation_space = spec.observation_space
        self.single_action_space = spec.action_space
        self.observation_space = batch_space(self.single_observation_space, self.batch_size)
        self.action_space = batch_space(self.single_action_space, self.batch_size)
        self.closed = False

    def reset(self, *, seed=None, options=None, env_id=None):
        return self._reset_front(seed, options, env_id)

    def close_extras(self, **kwargs):
        BasePool.close(self)

    def close(self, **kwargs):
        VectorEnv.close(self, **kwargs)

    @property
    def closed(self):
        return getattr(self, "_closed_flag", False) or (hasattr(self, "_pool") and self._pool.closed)

    @closed.setter
    def closed(self, value):
        self._closed_flag = value

    def __repr__(self):
        return f"GymnasiumPool({self.spec.task_id!r}, num_envs={self.num_envs}, batch_size={self.batch_size})"


class GymPool(_GymStyle, BasePool):
    """EnvPool 1.x's "gym" env_type: the same 5-tuple step and (obs, info) reset; spaces are single-env."""

    def __init__(self, spec: EnvSpec):
        super().__init__(spec)
        self.observation_space = spec.observation_space
        self.action_space = spec.action_space
        self.metadata = {"autoreset_mode": _MODES[self.autoreset_mode]}

    def reset(self, env_id=None, seed=None, options=None):
        return self._reset_front(seed, options, env_id)

    def __repr__(self):
        return f"GymPool({self.spec.task_id!r}, num_envs={self.num_envs}, batch_size={self.batch_size})"


class DmPool(BasePool):
    """dm_env style: reset/step return a batched dm_env.TimeStep. discount is 0 only where an episode
    terminated (never on truncation), so value bootstrapping at time limits stays right."""

    def __init__(self, spec: EnvSpec):
        if spec.config.autoreset_mode != "next_step":
            raise ValueError("env_type='dm' steps a finished env into a new episode (next_step autoreset); "
                             f"autoreset_mode={spec.config.autoreset_mode!r} is not available with it")
        super().__init__(spec)
        import dm_env

        self._dm = dm_env
        fields = list(self._obs_names) + ["env_id", "elapsed_step", "players"] + [n for n, _ in self._info_idx]
        self._State = namedtuple("State", fields)
        self._Players = namedtuple("players", ["env_id"])

    def observation_spec(self):
        return self.spec.observation_spec()

    def action_spec(self):
        return self.spec.action_spec()

    def _timestep(self, out):
        obs = self._obs(out)
        values = dict(obs) if isinstance(obs, dict) else {"obs": obs}
        values["env_id"] = out[self._i_env]
        values["elapsed_step"] = out[self._i_elapsed]
        values["players"] = self._Players(out[self._i_penv])
        for name, i in self._info_idx:
            values[name] = out[i]
        term, trunc = out[self._i_term], out[self._i_trunc]
        elapsed = out[self._i_elapsed]
        step_type = np.where(term | trunc, 2, np.where(elapsed == 0, 0, 1)).astype(np.int32)
        discount = (~term).astype(np.float32)
        if "discount" in values:  # an env may lower the discount itself (e.g. Atari's zero_discount_on_life_loss)
            discount *= values["discount"]
        return self._dm.TimeStep(step_type, out[self._i_rew], discount, self._State(**values))

    def reset(self, env_id=None, seed=None):
        return self._timestep(self._reset_raw(env_id, seed))

    def step(self, action, env_id=None):
        return self._timestep(self._step_raw(action, env_id))

    def recv(self):
        return self._timestep(self._pool.recv())

    def __repr__(self):
        return f"DmPool({self.spec.task_id!r}, num_envs={self.num_envs}, batch_size={self.batch_size})"

