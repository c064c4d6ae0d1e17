"""A batched dm_env.Environment over a ParallelPool pool, for ACME.

Each of the ``num_envs`` envs follows dm_env's own episode convention on its own: the step that ends its episode is
LAST (discount 0 on termination, 1 on truncation, so a time limit is bootstrapped), and its next step ignores the
action and returns FIRST, the first observation of its next episode. Only that env is reset; the others keep
running. (EnvPool's ACME example resets every env as soon as one finishes.)
"""

from __future__ import annotations

from typing import Any

import dm_env
import numpy as np
from dm_env import specs

import parallel_pool
from parallel_pool.registry import autoreset_mode_name

__all__ = ["BatchedEnvironment"]


class BatchedEnvironment(dm_env.Environment):
    """``num_envs`` envs of one task as one ``dm_env.Environment`` whose timesteps are batches.

    Specs are those of a single env (what agents build their networks from), so
    ``acme.specs.make_environment_spec(env)`` works; every array of a ``TimeStep`` has a leading batch dimension
    (``step_type``, ``reward`` and ``discount`` too; a FIRST row has reward 0 and discount 1). ``env_id`` holds the
    env of each row of the latest timestep and ``info`` the task's info arrays (``elapsed_step``, Atari ``lives``,
    ...).

    Sync pools (``batch_size == num_envs``): ``reset()`` and ``step(action)`` cover every env, rows in env order;
    ``step(action, env_id)`` steps a subset. Async pools (``batch_size < num_envs``): ``reset()`` starts every env
    and returns the first ``batch_size`` that are ready, ``step(action)`` sends actions for the rows of the latest
    timestep and returns the next ``batch_size`` envs that finish; ``send`` / ``recv`` are available directly.

    Args:
        task_id: a task id from ``parallel_pool.list_all_envs()``.
        **config: ``parallel_pool.make`` config keys (``num_envs``, ``batch_size``, ``seed``, ``num_threads``,
            ``max_episode_steps``, the task's own keys).
    """

    def __init__(self, task_id: str, **config: Any):
        mode = config.pop("autoreset_mode", "next_step")
        if autoreset_mode_name(mode) != "next_step":
            raise ValueError(
                f"autoreset_mode={mode!r}: a dm_env environment starts a finished env's next episode "
                "on its next step (dm_env's convention), which is autoreset_mode='next_step'"
            )
        self.pool = parallel_pool.make(task_id, env_type="dm", **config)
        self.num_envs: int = self.pool.num_envs
        self.batch_size: int = self.pool.batch_size
        self.is_async: bool = self.pool.is_async
        # the pool's observation_spec() is EnvPool's State (observation arrays + info fields); ACME sees only the
        # observation: one array ("obs"), or a dict of the named observation arrays
        state_spec = self.pool.observation_spec()
        names = [a["name"] for a in self.pool.spec.observation_arrays]
        self._obs_names = None if names == ["obs"] else names
        self._obs_spec = state_spec.obs if self._obs_names is None else {n: getattr(state_spec, n) for n in names}
        self.env_id = np.arange(self.num_envs, dtype=np.int32)
        self.info: dict[str, np.ndarray] = {}

    # ---- specs (single env) -----------------------------------------------------------------------------------
    def observation_spec(self):
        """One env's observation spec (a dict of specs for a dict observation)."""
        return self._obs_spec

    def action_spec(self):
        """One env's action spec."""
        return self.pool.action_spec()

    def reward_spec(self):
        """One env's reward spec: a float32 scalar."""
        return specs.Array(shape=(), dtype=np.float32, name="reward")

    def discount_spec(self):
        """One env's discount spec: a float32 scalar in [0, 1]."""
        return specs.BoundedArray(shape=(), dtype=np.float32, minimum=0.0, maximum=1.0, name="discount")

    # ---- stepping ---------------------------------------------------------------------------------------------
    def _batch(self, ts: dm_env.TimeStep) -> dm_env.TimeStep:
        """The pool's TimeStep carries its info arrays in the observation: split them off."""
        state = ts.observation._asdict()
        if self._obs_names is None:
            observation = state.pop("obs")
        else:
            observation = {name: state.pop(name) for name in self._obs_names}
        self.env_id = state.pop("env_id")
        state.pop("players", None)
        self.info = state
        return dm_env.TimeStep(np.asarray(ts.step_type), ts.reward, ts.discount, observation)

    def reset(self, seed: Any = None) -> dm_env.TimeStep:
        """Start every env; sync pools return all rows, async ones the first ``batch_size`` envs that are ready.

        Args:
            seed: None, or an int s that gives env i the seed s + i.

        Returns:
            The batched first TimeStep (``StepType.FIRST`` rows).
        """
        return self._batch(self.pool.reset(seed=seed))

    def step(self, action: Any, env_id: Any = None) -> dm_env.TimeStep:
        """Step the envs ``env_id`` (default: the last batch's) with one action row each.

        Args:
            action: one row per env of the batch.
            env_id: the envs the rows are for; None: those of the last returned batch.

        Returns:
            The batched TimeStep (async pools: of the next ``batch_size`` envs to finish); ``self.env_id`` names
            its rows.
        """
        if self.is_async:
            self.send(action, self.env_id if env_id is None else env_id)
            return self.recv()
        return self._batch(self.pool.step(action, env_id))

    def send(self, action: Any, env_id: Any) -> None:
        """Send actions to the envs ``env_id`` without waiting (async pools; ``recv`` returns the results)."""
        self.pool.send(action, np.asarray(env_id, dtype=np.int32))

    def recv(self) -> dm_env.TimeStep:
        """The next batch of envs that finish; ``self.env_id`` names its rows."""
        return self._batch(self.pool.recv())

    def close(self) -> None:
        """Close the pool (idempotent)."""
        self.pool.close()
