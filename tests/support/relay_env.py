"""Relay: a small PettingZoo ParallelEnv whose agent "scout" leaves mid-episode, for the tests of the PettingZoo
faces and of SB3's agents-as-rows VecEnv. Registered to pickle by value: it travels to the pool's worker processes."""

from __future__ import annotations

import sys

import cloudpickle
import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

cloudpickle.register_pickle_by_value(sys.modules[__name__])

AGENTS = ["scout", "runner", "keeper"]


class Relay(ParallelEnv):
    """Three agents. "scout" terminates at step `scout_steps` and leaves while the others go on; they are truncated
    at step `cycles`. obs [agent index, step, a draw of the env's seeded generator]; reward = action x (index + 1)."""

    metadata = {"name": "relay_v0"}

    def __init__(self, cycles: int = 5, scout_steps: int = 2):
        self.possible_agents = list(AGENTS)
        self.cycles, self.scout_steps = cycles, scout_steps
        self._obs = spaces.Box(-10.0, 10.0, (3,), np.float32)
        self._act = spaces.Discrete(3)

    def observation_space(self, agent):
        return self._obs

    def action_space(self, agent):
        return self._act

    def reset(self, seed=None, options=None):
        if seed is not None or not hasattr(self, "rng"):
            self.rng = np.random.default_rng(seed)
        self.agents = list(self.possible_agents)
        self.t = 0
        return {a: self._o(a) for a in self.agents}, {a: {} for a in self.agents}

    def _o(self, agent):
        return np.array([AGENTS.index(agent), self.t, self.rng.uniform(-1, 1)], np.float32)

    def step(self, actions):
        self.t += 1
        obs = {a: self._o(a) for a in actions}
        rewards = {a: float(int(actions[a]) * (AGENTS.index(a) + 1)) for a in actions}
        terms = {a: a == "scout" and self.t >= self.scout_steps for a in actions}
        truncs = {a: not terms[a] and self.t >= self.cycles for a in actions}
        self.agents = [a for a in self.agents if not (terms[a] or truncs[a])]
        return obs, rewards, terms, truncs, {a: {} for a in actions}
