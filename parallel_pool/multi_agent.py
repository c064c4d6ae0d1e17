"""PettingZoo's API over the pool: `make(..., env_type="pettingzoo")` and `make_pettingzoo(..., view=...)`.

Three faces of one multi-player pool, all built from the arrays the other front-ends read (`agent_grid`):

- `PettingZooPool` (view "batched"): a batched ParallelEnv. Every dict is keyed by agent and holds one row per env of
  the batch: `obs[agent]` has shape (n, ...), `rewards[agent]`, `terminations[agent]`, `truncations[agent]` shape (n,).
  An agent that has left an env (or that env never had) keeps its rows, zeros, with `infos[agent]["active"]` False.
- `ParallelEnvView` (view "single"): one env as a plain `pettingzoo.ParallelEnv` (its dicts hold only the live
  agents, one env's values each), for PettingZoo's own tests and single-env code.
- `AgentRowsEnv` (view "agent_rows"): a gymnasium `VectorEnv` of num_envs x agents rows, env-major and agent-minor
  (row e * num_agents + j is agent j of env e), with one agent's spaces: parameter sharing.

Agents: a PettingZoo env's `possible_agents` (`make(env_fn=...)`); a C++ multi-player env's players are
"player_0" ... "player_{max_num_players - 1}", or the names of its spec's player table (whose agents may differ:
`_player_spaces`). docs/multi-agent.md says what each face does and does not do.
"""

from __future__ import annotations

import copy
import typing as _typing
import warnings
from dataclasses import dataclass
from operator import itemgetter

import numpy as np
from gymnasium import spaces as gym_spaces
from gymnasium.vector import VectorEnv
from gymnasium.vector.utils import batch_space

from parallel_pool.pool import BasePool
from parallel_pool.schema import Schema, tree_map
from parallel_pool.spec import AutoresetMode, EnvSpec

if _typing.TYPE_CHECKING:  # the annotations' names only (strings at run time): dir() lists the API
    from collections.abc import Sequence
    from typing import Any

try:  # the single-env view is a real pettingzoo.ParallelEnv where PettingZoo is installed (an optional dependency)
    from pettingzoo import ParallelEnv as _ParallelEnv
except ImportError:  # pragma: no cover - without PettingZoo it is a class with the same methods
    _ParallelEnv = object

__all__ = ["VIEWS", "AgentGrid", "PettingZooPool", "ParallelEnvView", "AgentRowsEnv", "agent_grid"]

VIEWS = ("batched", "single", "agent_rows")
"""The faces `make_pettingzoo(view=...)` gives: `PettingZooPool`, `ParallelEnvView`, `AgentRowsEnv`."""

# the per-player info arrays in which a pool of PettingZoo envs (worker processes) says how each agent ended; they
# become terminations / truncations and the active mask, not info entries
_AGENT_FLAGS = ("agent_terminated", "agent_truncated")
# infos[agent] keys of the batch itself (not the env's info)
_BATCH_KEYS = ("env_id", "elapsed_step", "active")


@dataclass(frozen=True)
class AgentGrid:
    """One result batch as an (env, agent) grid: row k is the batch's k-th env, column j agent j.

    Attributes:
        env_id: (n,) the batch's envs.
        elapsed_step: (n,) each env's steps in its episode (0: a reset row).
        obs: (n, P, ...) observations (a dict of them for several observation keys); zeros where not active.
        reward: (n, P); 0 where not active.
        terminated: (n, P) the agent terminated at this step (False where not active).
        truncated: (n, P) the agent was truncated at this step (its own truncation, or the env's time limit).
        active: (n, P) the env has an entry for the agent in this result, as PettingZoo's own dicts would: the agent
            was live when the step began (or is in the reset's observations).
        left: (n, P) the agent is no longer live once this step is done (its rows are inactive until the env
            resets); what the pool keeps for the envs' next results.
        exists: (n, P) the env has a player row for the agent (C++ envs with fewer players than max_num_players
            have fewer rows).
        agent_info: per-player info arrays, (n, P, ...).
        env_info: per-env info arrays, (n, ...): the same value for every agent of an env.
    """

    env_id: np.ndarray
    elapsed_step: np.ndarray
    obs: Any
    reward: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    active: np.ndarray
    left: np.ndarray
    exists: np.ndarray
    agent_info: dict[str, np.ndarray]
    env_info: dict[str, np.ndarray]


def agent_grid(
    schema: Schema, arrays: Sequence[np.ndarray], players: int, num_envs: int, left_before: np.ndarray
) -> AgentGrid:
    """A raw engine batch as an (env, agent) grid: the one function from the engine's arrays to every face here.

    Args:
        schema: the pool's schema.
        arrays: the engine's batch.
        players: max_num_players (the grid's columns).
        num_envs: the pool's envs (env ids are below it).
        left_before: (n, P) which agents of the batch's envs had left in an earlier step of the current episode
            (the `left` of each env's previous result).
    """
    env_id, owner = arrays[schema.env_id], arrays[schema.players_env_id]
    n, rows = len(env_id), len(owner)
    if rows == n * players:  # every env has all its players (PettingZoo envs, ViZDoom): a reshape, no copy
        exists = np.ones((n, players), dtype=bool)

        def grid(a: np.ndarray) -> np.ndarray:
            return a.reshape((n, players) + a.shape[1:])

    else:  # fewer players in some envs: the engine writes each env's rows together, in the batch's env order
        at = np.empty(num_envs, dtype=np.intp)
        at[env_id] = np.arange(n)
        k = at[owner]
        starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]]) if rows else np.zeros(0, dtype=np.intp)
        j = np.arange(rows) - np.repeat(starts, np.diff(np.r_[starts, rows]))
        exists = np.zeros((n, players), dtype=bool)
        exists[k, j] = True

        def grid(a: np.ndarray) -> np.ndarray:
            out = np.zeros((n, players) + a.shape[1:], dtype=a.dtype)
            out[k, j] = a
            return out

    def per_agent(i: int) -> np.ndarray:
        """Field i on the grid: a per-player array's rows, or a per-env array's value for each agent of the env."""
        a = arrays[i]
        return grid(a) if schema.fields[i].per_player else np.repeat(a[:, None], players, axis=1)

    elapsed = arrays[schema.elapsed_step]
    env_term, env_trunc = per_agent(schema.terminated), per_agent(schema.truncated)
    if "info:agent_terminated" in schema.index:  # a PettingZoo env: each agent's own end flags (set until reset)
        flag_term = grid(arrays[schema.index["info:agent_terminated"]])
        flag_trunc = grid(arrays[schema.index["info:agent_truncated"]])
        active = exists & ((elapsed == 0)[:, None] | ~left_before)
        left = flag_term | flag_trunc
        terminated = flag_term & active
        # the env's time limit truncates the agents still live
        truncated = (flag_trunc | (env_trunc & ~flag_term)) & active
    else:  # a C++ env's players live as long as its episode
        active = exists
        left = np.zeros((n, players), dtype=bool)
        terminated, truncated = env_term & active, env_trunc & active
    obs_at = [schema.index[schema.obs_name(k)] for k in schema.obs_keys]
    agent_info, env_info = {}, {}
    for key, i in schema.info_at:
        if key in _AGENT_FLAGS:
            continue
        if schema.fields[i].per_player:
            agent_info[key] = grid(arrays[i])
        else:
            env_info[key] = arrays[i]
    return AgentGrid(
        env_id=env_id,
        elapsed_step=elapsed,
        obs=per_agent(obs_at[0]) if schema.single_obs else {k: per_agent(i) for k, i in zip(schema.obs_keys, obs_at)},
        reward=per_agent(schema.reward),
        terminated=terminated,
        truncated=truncated,
        active=active,
        left=left,
        exists=exists,
        agent_info=agent_info,
        env_info=env_info,
    )


def _column(j: int) -> Any:
    """A function that takes column j (agent j) of a grid array."""
    return lambda a: a[:, j]


def _player_spaces(spec: EnvSpec, agents: Sequence[Any]) -> tuple[dict, dict, dict, dict]:
    """Each agent's (observation space, action space, observation size, action size) where the env's player table
    (engine_spec["players"]) says its players differ: an agent's observation is the first obs_size values of its
    row (zeros follow) and its action the first action_size values of a Box row (a Discrete action: Discrete(n) of its
    own). Elsewhere every agent has the pool's spaces (its sizes: empty dicts). One space object per agent, the same
    object every call (PettingZoo's API test checks it; seeding one agent's space leaves the others' alone)."""
    table = list(spec.engine_spec.get("players", ()))
    obs, act = spec.observation_space, spec.action_space
    if not table:
        return {a: copy.deepcopy(obs) for a in agents}, {a: copy.deepcopy(act) for a in agents}, {}, {}
    obs_spaces: dict[Any, Any] = {}
    act_spaces: dict[Any, Any] = {}
    obs_sizes: dict[Any, int] = {}
    act_sizes: dict[Any, int] = {}
    for a, player in zip(agents, table):
        k, m = player["obs_size"], player["action_size"]
        obs_sizes[a] = k
        obs_spaces[a] = gym_spaces.Box(obs.low[:k], obs.high[:k], dtype=obs.dtype)
        if isinstance(act, gym_spaces.Discrete):
            act_spaces[a] = gym_spaces.Discrete(m)
        else:
            act_sizes[a] = m
            act_spaces[a] = gym_spaces.Box(act.low[:m], act.high[:m], dtype=act.dtype)
    return obs_spaces, act_spaces, obs_sizes, act_sizes


def _neutral_action(space: Any) -> Any:
    """A valid action of `space` that means nothing in particular: the action row of an agent that is not live (the
    env never sees it), in range so that the engine's checks pass."""
    if isinstance(space, gym_spaces.Dict):
        return {k: _neutral_action(s) for k, s in space.spaces.items()}
    if isinstance(space, gym_spaces.Discrete):
        return np.asarray(space.start, dtype=space.dtype)
    if isinstance(space, gym_spaces.MultiDiscrete):
        return np.asarray(space.start, dtype=space.dtype).copy()
    if isinstance(space, gym_spaces.Box):
        return np.clip(np.zeros(space.shape), space.low, space.high).astype(space.dtype)
    return np.zeros(space.shape, dtype=space.dtype)  # MultiBinary


def _warn_options(options: Any) -> None:
    """reset's options: the pool has no channel that carries them to the envs; say so rather than drop them silently."""
    if options is None:
        return
    if not isinstance(options, dict):
        raise TypeError(f"reset options must be a dict or None, got {type(options).__name__}")
    if options:
        warnings.warn(
            f"reset options {sorted(map(str, options))} are not passed to the envs: the pool has no channel for them",
            UserWarning,
            stacklevel=3,
        )


class PettingZooPool(BasePool):
    """A batched PettingZoo ParallelEnv: `parallel_pool.make(task_id, env_type="pettingzoo")`.

    `reset()` returns `(obs, infos)` and `step(actions)` `(obs, rewards, terminations, truncations, infos)`, each a dict
    agent -> one row per env of the batch (all envs of a sync pool, in env order; an async pool: the envs
    `infos[agent]["env_id"]` names). `actions` is a dict agent -> one action per env stepped.

    Every agent of `possible_agents` has its rows in every result (`agents` is `possible_agents`): an agent that has
    left an env (or that the env never had) reads zeros there, with `infos[agent]["active"]` False, and its action
    rows are ignored. `terminations[agent]` / `truncations[agent]` are True at the step where the agent ends (the env's
    time limit truncates the agents still live). An env's episode ends when none of its agents is live; next_step
    autoreset (the default) resets it at its next step, as the other front-ends do ("disabled": `reset(env_id=...)`).

    `infos[agent]` holds `env_id`, `elapsed_step`, `active` and the env's info arrays (per player: the agent's row).
    """

    def __init__(
        self, spec: EnvSpec, render_mode: str | None = None, thread_pool: Any = None, *, agent_rows: bool = False
    ):
        # agent_rows: the pool serves `AgentRowsEnv`, whose rows carry same-step autoreset's final observations
        if spec.autoreset_mode == AutoresetMode.SAME_STEP and not agent_rows:
            raise ValueError(
                "env_type='pettingzoo' has no final observation of an ended episode (PettingZoo's API has none): "
                "autoreset_mode='same_step' is not available with it; use 'next_step' or 'disabled' (or "
                "make_pettingzoo(..., view='agent_rows'), whose rows have final observations)"
            )
        BasePool.__init__(self, spec, render_mode, thread_pool)
        players = self.max_num_players
        named = [p["name"] for p in spec.engine_spec.get("players", ())]
        agents = tuple(getattr(spec, "agents", ()) or named or (f"player_{j}" for j in range(players)))
        self.possible_agents: list[Any] = list(agents)
        self.agents: list[Any] = list(agents)
        self._agent_at = {a: j for j, a in enumerate(agents)}
        self._obs_spaces, self._act_spaces, self._obs_sizes, self._act_sizes = _player_spaces(spec, agents)
        self._action_shapes = [tuple(a["shape"]) for a in spec.action_arrays]
        self.metadata: dict[str, Any] = {
            "name": spec.id,
            "autoreset_mode": self.autoreset_mode,
            "render_modes": [] if render_mode is None else [render_mode],
            "is_parallelizable": True,
        }
        self._left = np.zeros((self.num_envs, players), dtype=bool)  # agents gone in each env's current episode
        self._players = np.full(self.num_envs, players, dtype=np.int64)  # rows of each env (its latest result)

    # ---- PettingZoo's attributes -------------------------------------------------------------------------------
    def observation_space(self, agent: Any) -> Any:
        """One env's observation space of `agent` (the same object on every call)."""
        return self._obs_spaces[self._check_agent(agent)]

    def action_space(self, agent: Any) -> Any:
        """One env's action space of `agent` (the same object on every call)."""
        return self._act_spaces[self._check_agent(agent)]

    @property
    def num_agents(self) -> int:
        """len(agents)."""
        return len(self.agents)

    @property
    def max_num_agents(self) -> int:
        """len(possible_agents)."""
        return len(self.possible_agents)

    def _check_agent(self, agent: Any) -> Any:
        if agent not in self._agent_at:
            raise ValueError(f"unknown agent {agent!r}; the agents are {self.possible_agents}")
        return agent

    # ---- results ---------------------------------------------------------------------------------------------
    def grid(self, arrays: Sequence[np.ndarray]) -> AgentGrid:
        """A raw batch of this pool (`step_arrays`, `recv_arrays`) as an `AgentGrid`.

        Call it once per batch, in order: it keeps which agents have left each env for that env's next result.
        """
        env_id = arrays[self.schema.env_id]
        g = agent_grid(self.schema, arrays, self.max_num_players, self.num_envs, self._left[env_id])
        self._left[env_id] = g.left
        self._players[env_id] = g.exists.sum(axis=1)
        return g

    def _result(self, arrays: Sequence[np.ndarray]) -> tuple[dict[Any, Any], ...]:
        g = self.grid(arrays)
        obs, rewards, terms, truncs, infos = {}, {}, {}, {}, {}
        for j, agent in enumerate(self.possible_agents):
            col = _column(j)
            obs[agent] = tree_map(col, g.obs)
            if agent in self._obs_sizes:  # the agent's own values, without the row's padding
                obs[agent] = obs[agent][:, : self._obs_sizes[agent]]
            rewards[agent], terms[agent], truncs[agent] = g.reward[:, j], g.terminated[:, j], g.truncated[:, j]
            info = {"env_id": g.env_id, "elapsed_step": g.elapsed_step, "active": g.active[:, j]}
            info.update((k, v[:, j]) for k, v in g.agent_info.items())
            info.update(g.env_info)
            infos[agent] = info
        return obs, rewards, terms, truncs, infos

    # ---- actions ---------------------------------------------------------------------------------------------
    def _batch_ids(self, env_id: Any) -> tuple[Any, int, np.ndarray]:
        """(the env ids a step acts on, as the engine takes them; how many; each one's player rows)."""
        ids = self._default_ids(env_id)
        if ids is None:
            return None, self.num_envs, self._players
        flat = np.atleast_1d(np.asarray(ids))
        if flat.dtype.kind not in "iu":  # the engine's to refuse, with its message
            return ids, len(flat), np.full(len(flat), self.max_num_players, dtype=np.int64)
        # out-of-range ids too: here they read as the last env's rows
        return ids, len(flat), np.take(self._players, flat.astype(np.intp), mode="clip")

    def _agent_action(self, agent: Any, value: Any, n: int) -> list[np.ndarray]:
        """An agent's actions for n envs, one array per action key, checked for the batch's shape."""
        names = self._action_names
        if len(names) == 1:
            parts = [value]
        else:
            if not isinstance(value, dict) or sorted(value) != sorted(names):
                raise ValueError(
                    f"actions[{agent!r}] must be a dict with the action keys {names}, got "
                    f"{sorted(value) if isinstance(value, dict) else type(value).__name__}"
                )
            parts = [value[k] for k in names]
        out = []
        for name, part, shape in zip(names, parts, self._action_shapes):
            a = np.asarray(part)
            own = (self._act_sizes[agent],) if agent in self._act_sizes else shape
            if a.shape != (n, *own):
                key = "" if len(names) == 1 else f"[{name!r}]"
                raise ValueError(
                    f"actions[{agent!r}]{key} must have shape {(n, *own)} (one action per env stepped), "
                    f"got shape {a.shape}"
                )
            if own != shape:  # the rest of the shared row, which the agent does not read
                a = np.concatenate([a, np.zeros((n, shape[0] - own[0]), dtype=a.dtype)], axis=1)
            out.append(a)
        return out

    def player_actions(self, actions: Any, n: int, rows: np.ndarray) -> Any:
        """A dict agent -> n actions as the engine's player rows (env-major, agent-minor).

        Args:
            actions: {agent: an array of n actions (a dict of them for several action keys)}, every agent.
            n: the envs stepped.
            rows: each env's player rows (fewer than max_num_players in some C++ envs: its last agents' actions are
                left out).
        """
        if not isinstance(actions, dict):
            raise TypeError(
                f"actions must be a dict agent -> one action per env (agents {self.possible_agents}), "
                f"got {type(actions).__name__}"
            )
        unknown = [a for a in actions if a not in self._agent_at]
        if unknown:
            raise ValueError(f"actions for unknown agents {unknown}; the agents are {self.possible_agents}")
        missing = [a for a in self.possible_agents if a not in actions]
        if missing:
            raise ValueError(
                f"no actions for agents {missing}: every agent of {self.possible_agents} needs one action per env "
                f"stepped ({n}); the rows of envs where an agent is not active are ignored"
            )
        per_agent = [self._agent_action(a, actions[a], n) for a in self.possible_agents]
        players = len(self.possible_agents)
        every = len(rows) == n and bool(np.all(rows == players))
        keys = []
        for parts in zip(*per_agent):
            grid = np.stack(parts, axis=1)  # (n, players, ...)
            if every:
                keys.append(grid.reshape((n * players,) + grid.shape[2:]))
            else:
                keys.append(grid[np.arange(players) < np.asarray(rows)[:, None]])
        return keys[0] if len(keys) == 1 else dict(zip(self._action_names, keys))

    # ---- calls -----------------------------------------------------------------------------------------------
    def reset(
        self, seed: Any = None, options: dict[str, Any] | None = None, env_id: Any = None
    ) -> tuple[dict[Any, Any], dict[Any, Any]]:
        """Reset every env (or the envs `env_id`).

        Args:
            seed: None, an int s (env i gets s + i) or one seed per env reset.
            options: PettingZoo's reset options: not passed to the envs (a warning says so).
            env_id: the envs to reset; None: all.

        Returns:
            `(obs, infos)`, dicts agent -> one row per env (async pools: the first batch_size envs to finish).
        """
        _warn_options(options)
        obs, _, _, _, infos = self._result(self._reset_raw(env_id, seed))
        return obs, infos

    def step(self, actions: Any, env_id: Any = None) -> tuple[dict[Any, Any], ...]:
        """Step the envs `env_id` (None: all; async pools: the envs of the last batch received).

        Args:
            actions: a dict agent -> one action per env stepped (shape (n, ...)), every agent of possible_agents.
            env_id: the envs to step.

        Returns:
            `(obs, rewards, terminations, truncations, infos)`, dicts agent -> one row per env of the batch.

        Raises:
            ValueError: an unknown agent, a missing agent, or an agent's actions of another shape than (n, ...).
        """
        ids, n, rows = self._batch_ids(env_id)
        return self._result(self.step_arrays(self.player_actions(actions, n, rows), ids))

    def send(self, action: Any, env_id: Any = None) -> None:
        """Queue a dict agent -> actions for the envs `env_id`; `recv()` returns the results (async pools)."""
        ids, n, rows = self._batch_ids(env_id)
        BasePool.send(self, self.player_actions(action, n, rows), ids)

    def xla(self) -> Any:
        """Not available: the agents' active mask depends on each env's earlier results (kept in Python)."""
        self.engine  # noqa: B018 -- a closed pool's own error first
        raise ValueError(
            "env.xla() is not available with env_type='pettingzoo'; make the pool with env_type='gymnasium' (player "
            "rows, info['players']['env_id']) to step it inside jax.jit"
        )

    def get_state(self, env_id: Any, key: bytes | None = None) -> Any:
        """BasePool.get_state; a snapshot of several envs also holds which agents had left them ("agents_left")."""
        state = BasePool.get_state(self, env_id, key)
        if isinstance(state, dict):
            state["agents_left"] = self._left[self._state_ids(env_id)].copy()
        return state

    def set_state(self, env_id: Any, state: Any, key: bytes | None = None, trusted: bool = False) -> None:
        """BasePool.set_state; the restored envs' agents that had left stay inactive (the snapshot's "agents_left")."""
        left = None
        # (a snapshot without "lengths" is the base's to refuse)
        if hasattr(state, "keys") and "agents_left" in state and "lengths" in state:
            left = np.asarray(state["agents_left"])
            shape = (len(np.asarray(state["lengths"])), self.max_num_players)
            if left.dtype != np.bool_ or left.shape != shape:
                raise ValueError(
                    f"set_state: the snapshot's 'agents_left' must be bool of shape {shape}, got {left.dtype} of "
                    f"shape {left.shape}"
                )
        BasePool.set_state(self, env_id, state, key, trusted)
        if left is not None:
            ids = self._state_ids(env_id)
            self._left[ids] = left if len(left) == len(ids) else left[0]

    def close(self) -> None:
        """Stop the envs. Idempotent."""
        BasePool.close(self)

    def __repr__(self) -> str:
        backend = ", backend='python'" if self.spec.backend == "python" else ""
        sizes = f"num_envs={self.num_envs}, batch_size={self.batch_size}"
        return f"PettingZooPool({self.spec.id!r}, {sizes}, agents={self.possible_agents}{backend})"


class ParallelEnvView(_ParallelEnv):
    """One env of a pool as a plain `pettingzoo.ParallelEnv`: `make_pettingzoo(..., view="single")`.

    Its dicts hold the live agents only, each with one env's value (not batched), as PettingZoo's API says; `agents`
    shrinks as agents leave and is empty when the episode has ended (then call `reset()`). The env runs as in any
    pool (in C++, or in a worker process for envs written in Python).
    """

    def __init__(self, pool: PettingZooPool):
        if pool.num_envs != 1:
            raise ValueError(
                f"the single-env view needs a pool of one env, got num_envs={pool.num_envs}; use the batched pool "
                "(view='batched') for several"
            )
        self.pool = pool
        self.possible_agents: list[Any] = list(pool.possible_agents)
        self.agents: list[Any] = []
        self.metadata = dict(pool.metadata)
        self.render_mode = pool.render_mode
        self._neutral = {a: tree_map(lambda v: v[None], _neutral_action(pool.action_space(a))) for a in pool.agents}

    def observation_space(self, agent: Any) -> Any:
        """The observation space of `agent` (the same object on every call)."""
        return self.pool.observation_space(agent)

    def action_space(self, agent: Any) -> Any:
        """The action space of `agent` (the same object on every call)."""
        return self.pool.action_space(agent)

    def _one(self, obs: dict, rewards: dict | None, terms: dict, truncs: dict, infos: dict) -> tuple:
        live = [a for a in self.possible_agents if infos[a]["active"][0]]
        out_obs = {a: tree_map(lambda v: v[0], obs[a]) for a in live}
        out_infos = {a: {k: v[0] for k, v in infos[a].items() if k not in _BATCH_KEYS} for a in live}
        if rewards is None:
            self.agents = live
            return out_obs, out_infos
        out_rew = {a: float(rewards[a][0]) for a in live}
        out_term = {a: bool(terms[a][0]) for a in live}
        out_trunc = {a: bool(truncs[a][0]) for a in live}
        self.agents = [a for a in live if not (out_term[a] or out_trunc[a])]
        return out_obs, out_rew, out_term, out_trunc, out_infos

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        """Reset the env (seed: reseed it; options: not passed to the env, a warning says so)."""
        obs, infos = self.pool.reset(seed=seed, options=options)
        return self._one(obs, None, {}, {}, infos)

    def step(self, actions: dict[Any, Any]) -> tuple[dict, dict, dict, dict, dict]:
        """Step the live agents: `actions` has one action for each agent in `agents`."""
        if not isinstance(actions, dict):
            raise TypeError(f"actions must be a dict agent -> action, got {type(actions).__name__}")
        if not self.agents:
            raise ValueError("no agent is live (the episode has ended, or reset() was not called): call reset()")
        unknown = [a for a in actions if a not in self.agents]
        if unknown:
            raise ValueError(
                f"actions for agents {unknown} that are not live; the live agents are {self.agents} "
                f"(of {self.possible_agents})"
            )
        missing = [a for a in self.agents if a not in actions]
        if missing:
            raise ValueError(f"no actions for the live agents {missing}; give one action for each of {self.agents}")
        batch = {
            a: tree_map(lambda v: np.asarray(v)[None], actions[a]) if a in actions else self._neutral[a]
            for a in self.possible_agents
        }
        return self._one(*self.pool.step(batch))

    def render(self) -> Any:
        """The env's frame (uint8 (H, W, 3)); needs render_mode="rgb_array"."""
        return self.pool.render()[0]

    def state(self) -> Any:
        """Not available: the pool's envs have no global state array."""
        raise NotImplementedError(f"{self.pool.spec.id} in a pool has no state()")

    def close(self) -> None:
        """Stop the env. Idempotent."""
        self.pool.close()

    def __str__(self) -> str:
        return str(self.pool.spec.id)

    def __repr__(self) -> str:
        return f"ParallelEnvView({self.pool!r})"


class AgentRowsEnv(VectorEnv):
    """A gymnasium VectorEnv with a row per agent of every env: `make_pettingzoo(..., view="agent_rows")`.

    num_envs is the pool's envs x agents; row `e * num_agents + j` is agent j (`possible_agents[j]`) of env e
    (env-major, agent-minor, the engine's own player-row order). `single_observation_space` / `single_action_space`
    are one agent's: every agent must have the same spaces (a shared policy), except in an env whose engine rows are
    padded to its largest agent (MPE): there the rows and spaces are the padded ones, each agent reading its own
    prefix of a Box action, and a Discrete action past an agent's own is its action 0 (SuperSuit's
    pad_observations_v0 + pad_action_space_v0). What parameter-sharing trainers take (SuperSuit's
    pettingzoo_env_to_vec_env_v1 + concat_vec_envs_v1 make the same rows).

    A row of an agent that has left its env reads zeros with reward 0 and `info["active"]` False until the env's
    episode ends; then every row of the env resets at its next step (next_step autoreset). `info` holds per row
    `env_id`, `agent` (its index in possible_agents), `active`, `elapsed_step` and the env's info arrays, each with
    gymnasium's `_key` mask.

    With `autoreset_mode="same_step"` an env whose episode ends returns its reset rows at once, with gymnasium's
    `info["final_obs"]` (one per row, None where the row is not done) and `info["final_info"]` (the step's info of
    the done rows); a row whose agent leaves before its env ends is done there too, its last observation both its
    observation and its final one, and is done again (terminated, zeros) when its env ends, so that every row's
    episode ends with its env's. `parallel_pool.translate.Translator` (SB3's agent-rows VecEnv) reads this form.
    """

    def __init__(self, pool: PettingZooPool):
        if pool.is_async:
            raise ValueError(
                f"the agents-as-rows view needs a sync pool (batch_size == num_envs), got batch_size={pool.batch_size} "
                f"and num_envs={pool.num_envs}"
            )
        agents = pool.possible_agents
        first = agents[0]
        other = [
            a
            for a in agents[1:]
            if pool.observation_space(a) != pool.observation_space(first)
            or pool.action_space(a) != pool.action_space(first)
        ]
        # an env whose player table gives its agents other sizes (MPE) has engine rows padded to the largest: those
        # rows are the shared policy's spaces, as SuperSuit's pad_observations_v0 + pad_action_space_v0 make them
        self._padded = bool(other) and bool(pool._obs_sizes)
        if other and not self._padded:
            raise ValueError(
                f"agents {other} have other spaces than {first!r}: the agents-as-rows view gives every row one "
                "agent's spaces (a shared policy); SuperSuit's pad_observations_v0 and pad_action_space_v0 make an "
                "env's agents alike"
            )
        self.pool = pool
        self.num_agents = len(agents)
        self.num_envs = pool.num_envs * self.num_agents
        if self._padded:
            self.single_observation_space = copy.deepcopy(pool.spec.observation_space)
            self.single_action_space = copy.deepcopy(pool.spec.action_space)
        else:
            self.single_observation_space = copy.deepcopy(pool.observation_space(first))
            self.single_action_space = copy.deepcopy(pool.action_space(first))
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.metadata = {"autoreset_mode": pool.autoreset_mode, "render_modes": pool.metadata["render_modes"]}
        self.render_mode = pool.render_mode
        self._agent = np.tile(np.arange(self.num_agents), pool.num_envs)
        self._true = np.ones(self.num_envs, dtype=bool)
        self._true.flags.writeable = False
        # a sync vector env of rows, as the pools' translator reads one
        self.autoreset_mode = pool.autoreset_mode
        self.batch_size = self.num_envs
        self.is_async = False

    def _flat(self, a: np.ndarray) -> np.ndarray:
        """A grid array (n, P, ...) as rows (n * P, ...), env-major."""
        return a.reshape((a.shape[0] * self.num_agents,) + a.shape[2:])

    def _info(self, g: AgentGrid) -> dict[str, Any]:
        p, flat = self.num_agents, self._flat
        info: dict[str, Any] = {
            "env_id": np.repeat(g.env_id, p),
            "agent": self._agent,
            "active": flat(g.active),
            "elapsed_step": np.repeat(g.elapsed_step, p),
        }
        info.update((k, flat(v)) for k, v in g.agent_info.items())
        info.update((k, np.repeat(v, p, axis=0)) for k, v in g.env_info.items())
        for key in list(info):
            info["_" + key] = self._true
        return info

    def _rows(self, arrays: Sequence[np.ndarray]) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """A raw batch of the pool as rows."""
        pool, schema, flat = self.pool, self.pool.schema, self._flat
        ended = (arrays[schema.terminated] | arrays[schema.truncated]) if schema.has_final else None
        if ended is None or not ended.any():
            g = pool.grid(arrays)
            obs, terminated, truncated = tree_map(flat, g.obs), flat(g.terminated), flat(g.truncated)
            info = self._info(g)
            done = terminated | truncated
            if ended is not None and done.any():  # agents that left envs that go on: their observation is their last
                self._add_final(info, done, obs, info)
            return obs, flat(g.reward), terminated, truncated, info
        # same-step autoreset: the ended envs' rows hold their reset; the step itself (its elapsed step, info and the
        # agents' end flags) is in the final: copies
        env_id, players = arrays[schema.env_id], pool.max_num_players
        left_before = pool._left[env_id]
        ended_rows = np.isin(arrays[schema.players_env_id], env_id[ended])
        step = list(arrays)
        step[schema.elapsed_step] = np.where(
            ended, arrays[schema.index["final:elapsed_step"]], step[schema.elapsed_step]
        )
        for key, i in schema.info_at:
            mask = ended_rows if schema.fields[i].per_player else ended
            final = arrays[schema.index["final:info:" + key]]
            step[i] = np.where(mask.reshape(mask.shape + (1,) * (final.ndim - 1)), final, arrays[i])
        g = pool.grid(step)  # the step's ends and active mask, and the envs' bookkeeping
        pool._left[env_id[ended]] = False  # their new episodes
        reset = agent_grid(schema, arrays, players, pool.num_envs, left_before)  # the ended envs' reset rows
        last = list(arrays)
        for k in schema.obs_keys:
            last[schema.index[schema.obs_name(k)]] = arrays[schema.index["final:" + schema.obs_name(k)]]
        env_ended = np.repeat(ended, self.num_agents)
        obs = tree_map(flat, g.obs)
        last_obs = tree_map(  # the ended envs' final rows; elsewhere the rows themselves (agents that left)
            lambda f, o: np.where(env_ended.reshape((-1,) + (1,) * (o.ndim - 1)), flat(f), o),
            agent_grid(schema, last, players, pool.num_envs, left_before).obs,
            obs,
        )
        # a row whose agent left earlier ends with its env (terminated, zeros its last observation): no row's
        # return runs on into the env's next episode
        dead = env_ended & flat(g.exists & ~g.active)
        terminated, truncated = flat(g.terminated) | dead, flat(g.truncated)
        info = self._info(reset)
        self._add_final(info, terminated | truncated, last_obs, self._info(g))
        return obs, flat(g.reward), terminated, truncated, info

    def _add_final(self, info: dict[str, Any], done: np.ndarray, last_obs: Any, step_info: dict[str, Any]) -> None:
        """Gymnasium's same-step keys: the done rows' last observations and their step's info."""
        final_obs = np.full(self.num_envs, None, dtype=object)
        for r in np.flatnonzero(done):
            final_obs[r] = tree_map(itemgetter(r), last_obs)
        final_info = {k: v for k, v in step_info.items() if not k.startswith("_")}
        final_info.update({"_" + k: done for k in list(final_info)})
        info["final_obs"], info["_final_obs"] = final_obs, done
        info["final_info"], info["_final_info"] = final_info, done

    def reset(self, *, seed: Any = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Reset every env; seed: None, an int s (env i gets s + i) or one seed per env (not per row)."""
        _warn_options(options)
        obs, _, _, _, info = self._rows(self.pool._reset_raw(None, seed))
        return obs, info

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """Step every env with one action per row (shape (num_envs, ...), rows as `reset` returns them)."""
        n, p = self.pool.num_envs, self.num_agents
        names = self.pool._action_names
        parts = [actions] if len(names) == 1 else [actions[k] for k in names] if isinstance(actions, dict) else None
        if parts is None:
            raise ValueError(f"actions must be a dict with the action keys {names}, got {type(actions).__name__}")
        per_agent: dict[Any, Any] = {}
        for j, agent in enumerate(self.pool.possible_agents):
            cols = []
            for name, part in zip(names, parts):
                a = np.asarray(part)
                if a.ndim == 0 or a.shape[0] != self.num_envs:
                    raise ValueError(
                        f"actions{'' if len(names) == 1 else f'[{name!r}]'} must have one row per agent of every env "
                        f"({self.num_envs} = {n} envs x {p} agents), got shape {a.shape}"
                    )
                col = a.reshape((n, p) + a.shape[1:])[:, j]
                cols.append(self._own_action(agent, col) if self._padded else col)
            per_agent[agent] = cols[0] if len(names) == 1 else dict(zip(names, cols))
        rows = self.pool.player_actions(per_agent, n, self.pool._players)
        return self._rows(self.pool.step_arrays(rows))

    def _own_action(self, agent: Any, col: np.ndarray) -> np.ndarray:
        """A padded row's action as `agent`'s own: a Box's first values (the rest are padding); a Discrete value past
        the agent's own actions is its action 0, as SuperSuit's pad_action_space_v0 reads it (a shared policy samples
        from the largest agent's actions; its probability mass there is the no-op's)."""
        space = self.pool.action_space(agent)
        if isinstance(space, gym_spaces.Discrete):
            col = np.asarray(col)
            return np.where((col >= space.start + space.n) | (col < space.start), space.start, col)
        return np.asarray(col)[:, : space.shape[0]]

    def render(self) -> Any:
        """The envs' frames (one per env, not per row); needs render_mode="rgb_array"."""
        return self.pool.render()

    def close_extras(self, **kwargs: Any) -> None:
        """Gymnasium's hook for VectorEnv.close(): stop the pool."""
        self.pool.close()

    def __repr__(self) -> str:
        return f"AgentRowsEnv({self.pool!r}, num_envs={self.num_envs})"


# `annotations` is the __future__ import's flag, not part of the API
del annotations
