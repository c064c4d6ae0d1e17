"""The Python side of a pool: turns the engine's flat output arrays into (obs, reward, terminated, truncated,
info), with EnvPool's info keys. The gymnasium, gym and dm front-ends all build on `BasePool`."""

from __future__ import annotations

from typing import Any

import numpy as np

from parallel_pool import _core
from parallel_pool.spec import EnvSpec


class BasePool:
    """A pool of C++ envs stepped on worker threads. Sync when batch_size == num_envs, async otherwise."""

    def __init__(self, spec: EnvSpec):
        self.spec = spec
        self._pool = _core.Pool(spec.env_type, spec._config_dict)
        self.num_envs: int = self._pool.num_envs
        self.batch_size: int = self._pool.batch_size
        self.is_async: bool = self.batch_size < self.num_envs
        self.config = dict(spec._config_dict)
        self.autoreset_mode: str = self.config["autoreset_mode"]
        names: list[str] = self._pool.output_names
        idx = {n: i for i, n in enumerate(names)}
        self._obs_names = [a["name"] for a in spec.observation_arrays]
        self._single_obs = len(self._obs_names) == 1 and self._obs_names[0] == "obs"
        self._obs_idx = [idx["obs"]] if self._single_obs else [idx["obs:" + n] for n in self._obs_names]
        self._info_idx = [(a["name"], idx["info:" + a["name"]]) for a in spec.info_arrays]
        self._i_rew, self._i_term, self._i_trunc = idx["reward"], idx["terminated"], idx["truncated"]
        self._i_env, self._i_elapsed, self._i_penv = idx["env_id"], idx["elapsed_step"], idx["players.env_id"]
        self._action_names = [a["name"] for a in spec.action_arrays]
        self._final_idx = {n[len("final:"):]: i for n, i in idx.items() if n.startswith("final:")}
        self._masks: dict[int, np.ndarray] = {}
        self._all_ids = np.arange(self.num_envs, dtype=np.int32)

    # ---- engine calls -------------------------------------------------------------------------------
    def _actions(self, action: Any):
        if isinstance(action, dict):
            missing = [n for n in self._action_names if n not in action]
            extra = [k for k in action if k not in self._action_names]
            if missing or extra:
                raise ValueError(f"action dict must have keys {self._action_names}; missing {missing}, unexpected {extra}")
            return [action[n] for n in self._action_names]
        return action

    def _env_ids(self, env_id: Any):
        return None if env_id is None else env_id

    def send(self, action: Any, env_id: Any = None) -> None:
        """Queue actions for env_id (default: all envs) and return at once."""
        self._pool.send(self._actions(action), self._env_ids(env_id), False, None)

    def recv(self):
        """Block until batch_size envs have results; return (obs, reward, terminated, truncated, info)."""
        return self._unpack(self._pool.recv())

    def async_reset(self, seed: Any = None) -> None:
        """Send a reset to every env; collect the results with recv(). seed=s reseeds env i with s + i."""
        self._pool.send(None, None, True, self._seeds(seed, self.num_envs, None))

    def _seeds(self, seed: Any, n: int, env_id: Any):
        if seed is None:
            return None
        if isinstance(seed, (int, np.integer)):
            ids = self._all_ids if env_id is None else np.asarray(env_id)
            return int(seed) + ids.astype(np.int64)
        seeds = np.asarray(seed, dtype=np.int64)
        if seeds.shape != (n,):
            raise ValueError(f"seed must be an int or one int per env being reset ({n}), got shape {seeds.shape}")
        return seeds

    def _reset_raw(self, env_id: Any = None, seed: Any = None):
        n = self.num_envs if env_id is None else len(np.atleast_1d(env_id))
        seeds = self._seeds(seed, n, env_id)
        if self.is_async:
            self._pool.send(None, self._env_ids(env_id), True, seeds)
            return self._pool.recv()
        return self._pool.reset(self._env_ids(env_id), seeds)

    def _step_raw(self, action: Any, env_id: Any = None):
        return self._pool.step(self._actions(action), self._env_ids(env_id))

    # ---- output ------------------------------------------------------------------------------------
    def _mask(self, n: int) -> np.ndarray:
        m = self._masks.get(n)
        if m is None:
            m = np.ones(n, dtype=bool)
            m.flags.writeable = False
            self._masks[n] = m
        return m

    def _obs(self, out, indices=None):
        idx = self._obs_idx if indices is None else indices
        if self._single_obs:
            return out[idx[0]]
        return {n: out[i] for n, i in zip(self._obs_names, idx)}

    def _info(self, out) -> dict:
        info = {
            "env_id": out[self._i_env],
            "elapsed_step": out[self._i_elapsed],
            "players": {"env_id": out[self._i_penv]},
        }
        for name, i in self._info_idx:
            info[name] = out[i]
        return info

    def _unpack(self, out):
        info = self._info(out)
        if self._final_idx:
            self._add_final(out, info)
        return out[self._obs_idx[0]] if self._single_obs else self._obs(out), out[self._i_rew], out[
            self._i_term], out[self._i_trunc], info

    def _add_final(self, out, info: dict) -> None:
        """Same-step autoreset: gymnasium's final_obs / final_info (object array + masks), only where done."""
        done = out[self._i_term] | out[self._i_trunc]
        info["_final_obs"] = done
        info["_final_info"] = done
        n = len(done)
        final_obs = np.full(n, None, dtype=object)
        final_info: dict[str, Any] = {}
        if done.any():
            idx = np.flatnonzero(done)
            obs = self._obs(out, [self._final_idx[("obs" if self._single_obs else "obs:" + k)] for k in self._obs_names])
            for i in idx:
                final_obs[i] = obs[i] if self._single_obs else {k: v[i] for k, v in obs.items()}
            final_info = {"env_id": out[self._i_env], "_env_id": done,
                          "elapsed_step": out[self._final_idx["elapsed_step"]], "_elapsed_step": done}
            for name, _ in self._info_idx:
                final_info[name] = out[self._final_idx["info:" + name]]
                final_info["_" + name] = done
        info["final_obs"] = final_obs
        info["final_info"] = final_info

    # ---- lifecycle ----------------------------------------------------------------------------------
    def close(self) -> None:
        if not self._pool.closed:
            self._pool.close()

    @property
    def closed(self) -> bool:
        return self._pool.closed

    def __len__(self) -> int:
        return self.num_envs

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        pool = getattr(self, "_pool", None)
        if pool is not None and not pool.closed:
            pool.close()

    def xla(self):
        """(handle, recv, send, step) for use inside jax.jit; see parallel_pool.xla."""
        from parallel_pool.xla import make_xla

        return make_xla(self)

    # ---- alignment-test hooks -------------------------------------------------------------------------
    def get_state(self, env_id: int) -> np.ndarray:
        """The simulator state of one env (envs that expose it), for alignment tests."""
        return np.asarray(self._pool._get_state(int(env_id)))

    def set_state(self, env_id: int, state) -> None:
        self._pool._set_state(int(env_id), [float(x) for x in np.ravel(state)])
