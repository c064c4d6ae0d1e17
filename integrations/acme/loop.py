"""A batched EnvironmentLoop: ACME's loop, for a `BatchedEnvironment` and one actor acting on every env."""

from __future__ import annotations

import inspect
import time
from operator import itemgetter
from typing import Any

import dm_env
import numpy as np

from acme import core
from acme.utils import counting, loggers
from parallel_pool.schema import tree_map

from .environment import BatchedEnvironment

__all__ = ["BatchedEnvironmentLoop"]


def _row(tree: Any, i: int) -> Any:
    return tree_map(itemgetter(i), tree)


def _takes_env_id(method) -> bool:
    try:
        return "env_id" in inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False


class BatchedEnvironmentLoop:
    """Runs ``actor`` on every env of ``environment``, as ``acme.EnvironmentLoop`` does on one.

    Each iteration: ``actor.select_action(batch of observations)`` (one row per env of the latest timestep), one
    batched env step, then per row, in row order, ``actor.observe_first(timestep)`` for an env that starts an
    episode, or ``actor.observe(action, next_timestep)`` with that env's own action and timestep (LAST with discount
    0 on termination, 1 on truncation); then ``actor.update()`` once (if ``should_update``). Actors whose
    ``observe_first`` / ``observe`` accept an ``env_id`` keyword get the env's id (a batched actor needs it to keep
    each env's trajectory apart; in a sync pool rows come in env order).

    Every finished episode is written to ``logger`` (ACME's default logger unless given) as
    ``{"episode_return", "episode_length", "env_id", "steps_per_second", "episodes", "steps"}``;
    ``steps_per_second`` is the loop's env steps (all envs, FIRST rows not counted) per second of wall-clock since
    ``run`` started. Episodes carry on across ``run`` calls.
    """

    def __init__(
        self,
        environment: BatchedEnvironment,
        actor: core.Actor,
        counter: counting.Counter | None = None,
        logger: loggers.Logger | None = None,
        should_update: bool = True,
        label: str = "environment_loop",
    ):
        self._env = environment
        self._actor = actor
        self._counter = counter or counting.Counter()
        self._logger = logger or loggers.make_default_logger(label)
        self._should_update = should_update
        self._first_env_id = _takes_env_id(actor.observe_first)
        self._obs_env_id = _takes_env_id(actor.observe)
        n = environment.num_envs
        self._returns = np.zeros(n, dtype=np.float64)
        self._lengths = np.zeros(n, dtype=np.int64)
        self._timestep: dm_env.TimeStep | None = None
        self._actions: dict[int, Any] = {}  # env -> the action it was last sent

    def _observe_first(self, timestep: dm_env.TimeStep, i: int, env: int) -> None:
        first = dm_env.restart(_row(timestep.observation, i))
        if self._first_env_id:
            self._actor.observe_first(first, env_id=env)
        else:
            self._actor.observe_first(first)
        self._returns[env] = 0.0
        self._lengths[env] = 0

    def _observe(self, timestep: dm_env.TimeStep, i: int, env: int) -> dict | None:
        """Feed row i (env ``env``, and the action it was sent) to the actor.

        Returns the episode's record when it ended, else None.
        """
        step_type = dm_env.StepType(int(timestep.step_type[i]))
        row = dm_env.TimeStep(step_type, timestep.reward[i], timestep.discount[i], _row(timestep.observation, i))
        if self._obs_env_id:
            self._actor.observe(self._actions[env], row, env_id=env)
        else:
            self._actor.observe(self._actions[env], row)
        self._returns[env] += row.reward
        self._lengths[env] += 1
        if step_type == dm_env.StepType.LAST:
            return {
                "episode_return": float(self._returns[env]),
                "episode_length": int(self._lengths[env]),
                "env_id": env,
            }
        return None

    def run(self, num_episodes: int | None = None, num_steps: int | None = None) -> int:
        """Run until ``num_episodes`` episodes (over all envs) have ended or ``num_steps`` env steps were taken.

        Stops at the end of a batched step, so a few more steps or episodes than asked may be taken.

        Args:
            num_episodes: episodes to run, over all envs (None: no bound).
            num_steps: env steps to take, over all envs (None: no bound). At least one of the two is None; both
                None runs forever.

        Returns:
            The number of env steps taken.
        """
        if num_episodes is not None and num_steps is not None:
            raise ValueError('Either "num_episodes" or "num_steps" should be None.')
        start = time.time()
        episodes = steps = 0
        if self._timestep is None:
            self._timestep = self._env.reset()
            for i, env in enumerate(self._env.env_id):
                self._observe_first(self._timestep, i, int(env))
        while not (
            (num_episodes is not None and episodes >= num_episodes) or (num_steps is not None and steps >= num_steps)
        ):
            action = self._actor.select_action(self._timestep.observation)
            action = action.detach().cpu().numpy() if hasattr(action, "detach") else np.asarray(action)
            # an async pool's next batch holds other envs than this one: remember each env's action
            for i, env in enumerate(self._env.env_id):
                self._actions[int(env)] = _row(action, i)
            self._timestep = timestep = self._env.step(action)
            ended = []
            for i, env in enumerate(self._env.env_id):
                env = int(env)
                if timestep.step_type[i] == dm_env.StepType.FIRST:
                    self._observe_first(timestep, i, env)
                    continue
                steps += 1
                record = self._observe(timestep, i, env)
                if record is not None:
                    ended.append(record)
            if self._should_update:
                self._actor.update()
            episodes += len(ended)
            counts = self._counter.increment(
                steps=int((timestep.step_type != dm_env.StepType.FIRST).sum()), episodes=len(ended)
            )
            for record in ended:
                record["steps_per_second"] = steps / max(time.time() - start, 1e-9)
                record.update(counts)
                self._logger.write(record)
        return steps
