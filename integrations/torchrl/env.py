"""A TorchRL ``EnvBase`` over a pool: ``batch_size=[num_envs]``, specs from the pool's spaces, partial resets.

TorchRL's loop (``rollout``, collectors) steps every env, then resets the envs whose ``done`` is set by calling
``reset`` with a ``"_reset"`` mask. Two of the pool's autoreset modes serve that loop:

- ``"disabled"`` (the default here): a finished env waits; ``_reset`` resets the masked envs through the pool's
  ``reset_mask``, and every row comes back (the others unchanged).
- ``"same_step"``: the pool resets a finished env inside the step; the step's ``("next", obs)`` is the episode's
  final observation (``info["final_obs"]``) and the reset observation is kept until TorchRL asks for it, so the
  partial reset costs no engine call.

``"next_step"`` has no place in that loop (the step after an episode's end would be a reset whose action is
ignored, which TorchRL would record as a transition); it is refused.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import torch
from tensordict import TensorDict, TensorDictBase

from parallel_pool.pool import BasePool
from parallel_pool.schema import tree_map
from parallel_pool.translate import successor_obs
from torchrl.data import Bounded, Categorical, Composite, MultiCategorical, OneHot, Unbounded
from torchrl.envs import EnvBase

_MODES = ("disabled", "same_step")


class ParallelPoolEnv(EnvBase):
    """``num_envs`` envs stepped in parallel, as one TorchRL env with ``batch_size=[num_envs]``.

        env = ParallelPoolEnv("CartPole-v1", num_envs=8, seed=0)
        rollout = env.rollout(100, break_when_any_done=False)  # a TensorDict of shape [8, 100]

    Observations: a Box space is the ``"observation"`` entry; a Dict space gives one entry per key. Actions:
    ``"action"`` (Discrete: one-hot unless ``categorical_action_encoding=True``, as TorchRL's ``GymEnv``). Rewards
    are ``(num_envs, 1)`` float32; ``done`` / ``terminated`` / ``truncated`` are ``(num_envs, 1)`` bools.

    Args:
        task_id: a task id (``parallel_pool.list_all_envs()`` or gymnasium's registry), a callable returning a
            ``gymnasium.Env`` (as ``env_fn``), or a sync pool of the gymnasium front-end made with
            ``autoreset_mode`` "disabled" or "same_step".
        env_fn: a callable returning a ``gymnasium.Env``, run in worker processes (instead of ``task_id``).
        device: where the tensors go (the envs run on the CPU).
        categorical_action_encoding: Discrete actions as integers (``Categorical``) instead of one-hot.
        **kwargs: ``parallel_pool.make``'s arguments when the adapter makes the pool (``num_envs``, ``seed``,
            ``autoreset_mode`` "disabled" (default) or "same_step", the task's own keys).

    Raises:
        ValueError: an async pool, a next_step pool, a multi-player env, or config keys given with a pool.
        TypeError: an action or observation space TorchRL's specs cannot hold here (Tuple, Text, ...).
    """

    def __init__(
        self,
        task_id: Any = None,
        *,
        env_fn: Any = None,
        device: Any = "cpu",
        categorical_action_encoding: bool = False,
        **kwargs: Any,
    ):
        import parallel_pool

        if isinstance(task_id, BasePool):
            if kwargs:
                raise ValueError(
                    f"config keys {sorted(kwargs)} configure a pool the adapter makes, but a made pool was given: "
                    f"pass the task id instead (ParallelPoolEnv({task_id.spec.task_id!r}, ...))"
                )
            pool = task_id
        else:
            if callable(task_id) and not isinstance(task_id, str):
                task_id, env_fn = None, task_id
            kwargs.setdefault("autoreset_mode", "disabled")
            pool = parallel_pool.make(task_id, env_type="gymnasium", env_fn=env_fn, **kwargs)
        mode = pool.spec.config.autoreset_mode
        problem = (
            f"autoreset_mode={mode!r} (use one of {list(_MODES)})"
            if mode not in _MODES
            else "an async pool (batch_size < num_envs; TorchRL steps every env)"
            if pool.is_async
            else f"{pool.spec.max_num_players} players per env (multi-player envs need a multi-agent spec)"
            if pool.spec.max_num_players != 1
            else None
        )
        if problem is not None:
            pool.close()
            raise ValueError(f"ParallelPoolEnv: {pool.spec.task_id} was made with {problem}")
        self.pool = pool
        self.same_step = mode == "same_step"
        self.categorical = categorical_action_encoding
        n = pool.num_envs
        super().__init__(device=device, batch_size=torch.Size([n]))
        obs_space = pool.single_observation_space
        if isinstance(obs_space, gymnasium.spaces.Dict):
            self._obs_keys = list(obs_space.spaces)
            self.observation_spec = Composite(
                {k: _spec(s, n, self.device) for k, s in obs_space.spaces.items()}, shape=(n,), device=self.device
            )
        else:
            self._obs_keys = None
            self.observation_spec = Composite(observation=_spec(obs_space, n, self.device), shape=(n,))
        self.action_spec = _spec(pool.single_action_space, n, self.device, one_hot=not categorical_action_encoding)
        self.reward_spec = Unbounded(shape=(n, 1), dtype=torch.float32, device=self.device)
        flag = Categorical(2, shape=(n, 1), dtype=torch.bool, device=self.device)
        self.done_spec = Composite(
            done=flag, terminated=flag.clone(), truncated=flag.clone(), shape=(n,), device=self.device
        )
        self._seed: int | None = None
        self._reset_rows: dict[int, Any] = {}  # same_step: env id -> its reset observation, until TorchRL resets it

    # ---- EnvBase -------------------------------------------------------------------------------------------
    def _reset(self, tensordict: TensorDictBase | None = None, **kwargs: Any) -> TensorDictBase:
        mask = None if tensordict is None else tensordict.get("_reset", None)
        mask = None if mask is None else mask.reshape(-1).cpu().numpy()
        if (
            self.same_step
            and mask is not None
            and mask.any()
            and all(i in self._reset_rows for i in np.flatnonzero(mask))
        ):
            # the envs TorchRL resets finished in the last step and were reset by the pool there: their rows wait here
            obs = tree_map(np.copy, self._last_obs)
            for i in np.flatnonzero(mask):
                tree_map(lambda dst, src, i=i: dst.__setitem__(i, src), obs, self._reset_rows.pop(int(i)))
        elif mask is None or mask.all():
            obs, _ = self.pool.reset(seed=self._seed)
            self._seed = None
            self._reset_rows.clear()
        elif self.same_step:  # an env TorchRL resets before it finished: reset it in the pool
            ids = np.flatnonzero(mask)
            rows, _ = self.pool.reset(env_id=ids)
            obs = tree_map(np.copy, self._last_obs)
            tree_map(lambda dst, src: dst.__setitem__(ids, src), obs, rows)
            for i in ids:
                self._reset_rows.pop(int(i), None)
        else:
            obs, _ = self.pool.reset(options={"reset_mask": mask})
        self._last_obs = obs
        out = self._obs_td(obs)
        false = torch.zeros((self.pool.num_envs, 1), dtype=torch.bool, device=self.device)
        out.update({"done": false, "terminated": false.clone(), "truncated": false.clone()})
        return out

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        action = tensordict.get("action").detach().cpu()
        if isinstance(self.action_spec, OneHot):
            action = action.to(torch.int64).argmax(-1)
        obs, reward, terminated, truncated, info = self.pool.step(action.numpy())
        self._last_obs = obs
        if self.same_step:  # finished envs: ("next", obs) is the final observation; the reset one waits for _reset
            ended = np.asarray(terminated) | np.asarray(truncated)
            for i in np.flatnonzero(ended):
                self._reset_rows[int(i)] = tree_map(lambda x, i=i: np.copy(x[i]), obs)
            if ended.any():
                obs = successor_obs(obs, info["final_obs"], ended)
        out = self._obs_td(obs)
        term = torch.as_tensor(np.asarray(terminated)).reshape(-1, 1).to(self.device)
        trunc = torch.as_tensor(np.asarray(truncated)).reshape(-1, 1).to(self.device)
        out.update(
            {
                "reward": torch.as_tensor(np.asarray(reward, dtype=np.float32)).reshape(-1, 1).to(self.device),
                "done": term | trunc,
                "terminated": term,
                "truncated": trunc,
            }
        )
        return out

    def _set_seed(self, seed: int | None) -> None:
        """The next full reset reseeds env i with seed + i."""
        self._seed = seed

    def close(self, *, raise_if_closed: bool = True) -> None:
        """Close the pool."""
        self.pool.close()
        super().close(raise_if_closed=raise_if_closed)

    # ---- helpers -------------------------------------------------------------------------------------------
    def _obs_td(self, obs: Any) -> TensorDict:
        """The observation entries, as new tensors of the spec's dtypes (e.g. int64 for Discrete observations)."""
        spec = self.observation_spec
        if self._obs_keys is None:
            data = {"observation": _tensor(obs, spec["observation"].dtype, self.device)}
        else:
            data = {k: _tensor(obs[k], spec[k].dtype, self.device) for k in self._obs_keys}
        return TensorDict(data, batch_size=self.batch_size, device=self.device)

    def __repr__(self) -> str:
        return f"ParallelPoolEnv({self.pool.spec.task_id!r}, num_envs={self.pool.num_envs})"


def _tensor(array: Any, dtype: torch.dtype, device: Any) -> torch.Tensor:
    """A new tensor of `array` (the pool's result arrays are its own)."""
    return torch.tensor(np.asarray(array), device=device).to(dtype)


def _spec(space: gymnasium.Space, n: int, device: Any, one_hot: bool = False) -> Any:
    """TorchRL's spec of `n` rows of a gymnasium space."""
    if isinstance(space, gymnasium.spaces.Box):
        dtype = torch.from_numpy(np.zeros((), space.dtype)).dtype
        shape = (n, *space.shape)
        if np.all(np.isfinite(space.low)) and np.all(np.isfinite(space.high)):
            low = torch.as_tensor(np.array(np.broadcast_to(space.low, space.shape))).expand(shape)
            high = torch.as_tensor(np.array(np.broadcast_to(space.high, space.shape))).expand(shape)
            return Bounded(low=low.to(dtype), high=high.to(dtype), shape=shape, dtype=dtype, device=device)
        return Unbounded(shape=shape, dtype=dtype, device=device)
    if isinstance(space, gymnasium.spaces.Discrete):
        if int(space.start) != 0:
            raise TypeError(f"a Discrete space starting at {space.start} has no TorchRL spec here")
        if one_hot:
            return OneHot(int(space.n), shape=(n, int(space.n)), device=device)
        return Categorical(int(space.n), shape=(n,), dtype=torch.int64, device=device)
    if isinstance(space, gymnasium.spaces.MultiDiscrete):
        nvec = [int(v) for v in np.asarray(space.nvec).reshape(-1)]
        return MultiCategorical(nvec, shape=(n, len(nvec)), dtype=torch.int64, device=device)
    if isinstance(space, gymnasium.spaces.Dict):
        return Composite({k: _spec(s, n, device) for k, s in space.spaces.items()}, shape=(n,), device=device)
    raise TypeError(f"ParallelPoolEnv: no TorchRL spec for the space {space!r}")
