"""The EnvPool face's pools: thin subclasses of the front-ends (parallel_pool.frontends) with EnvPool's
conventions: single-env spaces, info without gymnasium's `_key` masks, `config` as EnvPool's dict, `all_env_ids`,
`recv(reset=...)`, `render(env_ids=None)` rendering env 0, EnvPool's repr and class names; and EnvPool 0.8's gym
4-tuple API for old clients (LegacyGymPool)."""

from __future__ import annotations

import pprint
from collections import namedtuple
from typing import Any, cast

import gymnasium
import numpy as np

from parallel_pool.envpool._spec import FaceSpec
from parallel_pool.envpool.python import protocol
from parallel_pool.frontends import DmPool, GymnasiumPool, GymPool, gym_result
from parallel_pool.pool import BasePool


class _Face:
    """What every pool of the face has, as EnvPool's pools have it."""

    _render_env_id = 0  # EnvPool's make(render_env_id=...): the env render() shows by default

    def _face_init(self, spec: FaceSpec, render_env_id: int) -> None:
        self.config = spec.config._asdict()  # EnvPool's pool.config: the spec's config as a dict
        self._render_env_id = int(render_env_id)
        if spec.env_seed:  # EnvPool's per-env seeds (seed=[...] / env_seed=[...]) seed the first reset
            self._next_seed = list(spec.env_seed)

    @property
    def all_env_ids(self) -> np.ndarray:
        """All env ids, int32 (EnvPool's)."""
        return self._all_ids  # type: ignore[attr-defined]

    def render(self, env_ids: Any = None, camera_id: int | None = None) -> np.ndarray:
        """Frames of `env_ids` as uint8 (n, H, W, 3); default: the one env `render_env_id` (0), as EnvPool."""
        if camera_id is not None:
            raise ValueError("render(camera_id=...) is not supported here: each family renders its default view")
        if env_ids is None:
            env_ids = [self._render_env_id]
        return BasePool.render(self, env_ids)  # type: ignore[arg-type]

    def __repr__(self) -> str:
        config = ", ".join(f"{k}={pprint.pformat(v)}" for k, v in self.config.items())
        return f"{type(self).__name__}({config})"

    def __str__(self) -> str:
        return self.__repr__()


class FaceGymnasiumPool(_Face, GymnasiumPool, protocol.GymnasiumEnvPool, gymnasium.Env):  # type: ignore[misc]
    """EnvPool's gymnasium pool: a gymnasium VectorEnv (and gymnasium.Env) whose observation_space/action_space are
    one env's, as EnvPool's; info has EnvPool's keys only (no `_key` masks)."""

    _info_masks = False
    is_vector_env = True  # EnvPool's flag for gymnasium wrappers of its era

    def __init__(self, spec: FaceSpec, render_mode: str | None = None, render_env_id: int = 0):
        GymnasiumPool.__init__(self, spec, render_mode)
        self.observation_space = self.single_observation_space
        self.action_space = self.single_action_space
        self._face_init(spec, render_env_id)

    def reset(
        self, env_id: Any = None, *, seed: Any = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset every env (or env_id, or options={"reset_mask": mask}); seed reseeds (EnvPool ignores it)."""
        return self._reset_front(seed, options, env_id)

    def recv(self, reset: bool = False, return_info: bool = True) -> Any:
        """The next batch: (obs, reward, terminated, truncated, info), or (obs, info) with reset=True."""
        obs, reward, term, trunc, info = GymnasiumPool.recv(self)
        return (obs, info) if reset else (obs, reward, term, trunc, info)


def _legacy_space(space: Any) -> Any:
    """A gymnasium space as old gym's (when gym is installed), so `isinstance(env.action_space,
    gym.spaces.Discrete)` in old clients holds; gymnasium's own space when gym is not installed."""
    try:
        import gym
    except ImportError:
        return space
    if isinstance(space, gymnasium.spaces.Discrete):
        start = int(space.start)
        return gym.spaces.Discrete(int(space.n), start=start) if start else gym.spaces.Discrete(int(space.n))
    if isinstance(space, gymnasium.spaces.Box):
        return gym.spaces.Box(space.low, space.high, space.shape, space.dtype)
    if isinstance(space, gymnasium.spaces.Dict):
        return gym.spaces.Dict({k: _legacy_space(v) for k, v in space.spaces.items()})
    raise TypeError(f"no old-gym equivalent of {space!r}")


class LegacyGymPool(_Face, GymPool, protocol.EnvPool):  # type: ignore[misc]
    """EnvPool 0.6-0.8's gym API (what it returned with gym < 0.26 installed): step -> (obs, reward, done, info)
    with done = terminated | truncated and info["TimeLimit.truncated"]; reset -> obs (or (obs, info) with
    gym_reset_return_info=True); xla()'s step returns the same 4-tuple. Spaces are old gym's when gym is
    installed."""

    _info_masks = False

    def __init__(self, spec: FaceSpec, render_mode: str | None = None, render_env_id: int = 0):
        GymPool.__init__(self, spec, render_mode)
        self._keeper = None  # step() adds a key to each result's info dict: a kept result could never be reused
        self.observation_space = self.single_observation_space = _legacy_space(spec.observation_space)
        self.action_space = self.single_action_space = _legacy_space(spec.action_space)
        self._face_init(spec, render_env_id)
        self._return_info = bool(cast(Any, spec.config).gym_reset_return_info)

    @staticmethod
    def _legacy(result: tuple[Any, Any, Any, Any, dict[str, Any]]) -> tuple[Any, Any, Any, dict[str, Any]]:
        obs, reward, term, trunc, info = result
        info["TimeLimit.truncated"] = trunc
        return obs, reward, term | trunc, info

    def from_arrays(self, arrays: Any, xp: Any = np) -> Any:
        """The 4-tuple from a raw engine batch (numpy, or jax arrays inside env.xla())."""
        return self._legacy(gym_result(self.schema, arrays, xp, masks=False))

    def step(self, actions: Any, env_id: Any = None) -> Any:
        """(obs, reward, done, info) of the envs `env_id` (default: all; async: the last batch's)."""
        return self._legacy(GymPool.step(self, actions, env_id))

    def reset(self, env_id: Any = None) -> Any:  # type: ignore[override]
        """obs of the reset envs (every env, or env_id); (obs, info) with gym_reset_return_info=True."""
        obs, info = GymPool.reset(self, env_id)
        return (obs, info) if self._return_info else obs

    def recv(self, reset: bool = False, return_info: bool = True) -> Any:
        """The next batch as step() returns it; reset=True: (obs, info), or obs with return_info=False (EnvPool
        0.8's recv; its reset() passes return_info=gym_reset_return_info)."""
        result = GymPool.recv(self)
        if reset:
            return (result[0], result[-1]) if return_info else result[0]
        return self._legacy(result)


class FaceDmPool(_Face, DmPool, protocol.DMEnvPool):
    """EnvPool's dm_env pool: the timestep's observation is EnvPool's `State` (env_id, players, observation keys,
    info keys); discount stays ours (0 only on termination)."""

    def __init__(self, spec: FaceSpec, render_mode: str | None = None, render_env_id: int = 0):
        DmPool.__init__(self, spec, render_mode)
        fields = spec.state_fields
        state = namedtuple("State", fields)  # type: ignore[misc]
        # dm_result builds our State's fields; EnvPool's has no elapsed_step and another order
        self._state_type = lambda **values: state(**{k: values[k] for k in fields})  # type: ignore[assignment]
        self._face_init(spec, render_env_id)

    def recv(self, reset: bool = False, return_info: bool = True) -> Any:
        """The next batch as a dm_env.TimeStep."""
        return DmPool.recv(self)
