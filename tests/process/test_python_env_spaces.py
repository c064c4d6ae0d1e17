"""Envs written in Python: every gymnasium space in the observation (Text, Graph, Sequence, OneOf, and Dict/Tuple
nesting to any depth) reaches the batch as gymnasium's SyncVectorEnv hands it over, in every autoreset mode and in
async batches; an observation outside its declared space is the env's error, naming the env and the key."""

from __future__ import annotations

import sys

import cloudpickle
import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.vector import SyncVectorEnv

import parallel_pool as pp
from parallel_pool.spec import autoreset_mode

cloudpickle.register_pickle_by_value(sys.modules[__name__])

MODES = ["next_step", "same_step", "disabled"]


class AllSpaces(gym.Env):
    """A Dict observation of every kind of leaf, with a Dict and a Tuple nested inside; samples of the space
    (drawn from the env's own generator), episodes of 2 to 4 steps."""

    def __init__(self, bad: str | None = None):
        self.observation_space = spaces.Dict(
            {
                "pos": spaces.Box(-5, 5, (2,), np.float32),
                "text": spaces.Text(12),
                "seq": spaces.Sequence(spaces.Discrete(4)),
                "graph": spaces.Graph(spaces.Box(0, 1, (2,)), spaces.Discrete(3)),
                "one": spaces.OneOf((spaces.Discrete(3), spaces.Box(0, 1, (2,)))),
                "inner": spaces.Dict(
                    {"a": spaces.Discrete(5), "t": spaces.Tuple((spaces.Box(0, 1, (1,)), spaces.Text(5)))}
                ),
            }
        )
        self.action_space = spaces.Discrete(2)
        self.bad = bad

    def _obs(self):
        obs = self.observation_space.sample()
        if self.bad == "long text" and self.t == 2:
            obs["text"] = "x" * 20
        if self.bad == "missing key" and self.t == 2:
            del obs["inner"]["a"]
        return obs

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.observation_space.seed(int(self.np_random.integers(1 << 30)))
        self.t, self.length = 0, int(self.np_random.integers(2, 5))
        return self._obs(), {}

    def step(self, action):
        self.t += 1
        info = None if self.bad == "info not a dict" and self.t == 2 else {}
        return self._obs(), float(action), self.t >= self.length, False, info


class SteadyText(AllSpaces):
    """Text leaves that keep their value for a few steps and then change (a worker sends a str only when it
    changes: the parent's row must hold the right one at every step, across episodes and resets)."""

    def _obs(self):
        obs = super()._obs()
        obs["text"] = "ab"[self.t // 2 % 2] * (1 + self.t // 4)
        obs["inner"]["t"] = (obs["inner"]["t"][0], "same")
        return obs


def assert_same(ours, ref, what):
    """`ours` holds what `ref` (SyncVectorEnv's) holds: the pool presents a Tuple space as a dict keyed "0", "1", ...
    and hands leaves of Python objects over as tuples, one object per env, as SyncVectorEnv does."""
    if isinstance(ref, dict):
        assert isinstance(ours, dict) and set(ours) == set(ref), f"{what}: keys {sorted(ours)} != {sorted(ref)}"
        for k in ref:
            assert_same(ours[k], ref[k], f"{what}[{k!r}]")
    elif isinstance(ref, tuple) and isinstance(ours, dict):  # a Tuple space
        assert sorted(ours) == [str(i) for i in range(len(ref))], what
        for i, r in enumerate(ref):
            assert_same(ours[str(i)], r, f"{what}[{i}]")
    elif isinstance(ref, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(ref), f"{what}: {ours!r} != {ref!r}"
        for i, (a, b) in enumerate(zip(ours, ref)):
            assert_same(a, b, f"{what}[{i}]")
    elif ref is None:
        assert ours is None, what
    else:
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(ref), err_msg=what)


@pytest.mark.parametrize("cls", [AllSpaces, SteadyText])
@pytest.mark.parametrize("mode", MODES)
def test_every_space_equals_sync_vector_env(mode, cls):
    env = pp.make(env_fn=cls, num_envs=3, num_threads=2, autoreset_mode=mode)
    ref = SyncVectorEnv([cls] * 3, autoreset_mode=autoreset_mode(mode))
    try:
        obs, _ = env.reset(seed=4)
        robs, _ = ref.reset(seed=4)
        assert_same(obs, robs, "reset obs")
        assert env.observation_space.contains(obs)
        assert isinstance(obs["text"], tuple) and isinstance(obs["inner"]["t"]["1"], tuple)
        ended = 0
        for t in range(20):
            a = np.array([t % 2, 1, 0])
            obs, rew, term, trunc, info = env.step(a)
            robs, rrew, rterm, rtrunc, rinfo = ref.step(a)
            assert_same(obs, robs, f"obs at step {t}")
            np.testing.assert_array_equal(term, rterm)
            done = term | trunc
            ended += int(done.sum())
            if mode == "same_step" and done.any():
                for i in np.flatnonzero(done):
                    assert_same(info["final_obs"][i], rinfo["final_obs"][i], f"final_obs[{i}] at step {t}")
            if mode == "disabled" and done.any():
                obs, _ = env.reset(options={"reset_mask": done})
                robs, _ = ref.reset(options={"reset_mask": done})
                assert_same(obs, robs, f"reset_mask obs at step {t}")
        assert ended > 0
    finally:
        env.close()
        ref.close()


def test_async_rows_hold_each_envs_objects():
    env = pp.make(env_fn=AllSpaces, num_envs=4, batch_size=2, num_threads=2, seed=9)
    refs = [AllSpaces() for _ in range(4)]
    expect = {e: [r.reset(seed=9 + e)[0]] for e, r in enumerate(refs)}
    got: dict[int, list] = {e: [] for e in range(4)}
    try:
        env.async_reset()
        for _ in range(24):
            obs, *_, info = env.recv()
            for j, e in enumerate(info["env_id"].tolist()):
                got[e].append(obs["text"][j])
            env.send(np.ones(2, np.int64), info["env_id"])
        for e, r in enumerate(refs):
            ended = False
            for _ in range(len(got[e]) - 1):  # next-step autoreset, as the pool steps
                if ended:
                    o, _ = r.reset()
                    ended = False
                else:
                    o, _, te, tr, _ = r.step(1)
                    ended = te or tr
                expect[e].append(o)
            assert got[e] == [o["text"] for o in expect[e]], f"env {e}"
        assert max(len(v) for v in got.values()) > 4
    finally:
        env.close()


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("long text", r"env \d: observation 'text' is 'xxxx.*', not in Text\(1, 12"),
        ("missing key", r"env \d: observation has no 'inner.a'"),
        ("info not a dict", r"env \d: info is None, not a dict"),
    ],
)
def test_an_observation_outside_its_space_is_the_envs_error(bad, message):
    """As gymnasium's check_env refuses them, with the env and the key named (a KeyError's traceback before, or a
    string cut to its array's width)."""
    env = pp.make(env_fn=AllSpaces, num_envs=2, num_threads=1, bad=bad, autoreset_mode="disabled")
    try:
        env.reset(seed=0)
        env.step(np.ones(2, np.int64))
        with pytest.raises(pp.EnvError, match=message):
            env.step(np.ones(2, np.int64))
    finally:
        env.close()


def test_text_actions_and_nested_action_spaces_are_refused_at_make():
    class TextAction(AllSpaces):
        def __init__(self):
            super().__init__()
            self.action_space = spaces.Text(4)

    class NestedAction(AllSpaces):
        def __init__(self):
            super().__init__()
            self.action_space = spaces.Dict({"a": spaces.Dict({"b": spaces.Discrete(2)})})

    with pytest.raises(ValueError, match="arrays of numbers"):
        pp.make(env_fn=TextAction, num_envs=1)
    with pytest.raises(ValueError, match="nests Dict/Tuple"):
        pp.make(env_fn=NestedAction, num_envs=1)
    with pytest.raises(ValueError, match="nests Dict/Tuple"):
        pp.make(env_fn=AllSpaces, num_envs=1, env_type="dm")
