"""Envs written in Python: every info entry an env returns reaches the batch as gymnasium's SyncVectorEnv carries it
(keys that appear late, strings, keys only at an episode's end, nested dicts, values whose dtype or shape changes),
in every autoreset mode, in async batches, through every front-end and the SB3 adapter's per-env infos."""

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
POOL_KEYS = ("env_id", "elapsed_step", "players")  # the batch's own info keys (SyncVectorEnv has none)


class RichInfo(gym.Env):
    """A research env's infos: a float every step ("score"); a string ("note"); a key from the third step on
    ("bonus"); a key only at an episode's end ("is_success"); a nested dict with a string and a nested float; and
    values that change kind as the env runs: "count" int then float, "shape" a scalar then an array, "flip" a number
    then a str (changing=False leaves those out). They change by the env's count of steps (and of resets, with
    reset_counts: next-step autoreset spends a vector step on a reset), so that envs stepped together change at once
    (in one batch, SyncVectorEnv cuts a float to the int array its first row made, and raises on an array after
    scalars). Episodes have different lengths (by the seed), so rows differ in which keys they have."""

    observation_space = spaces.Box(-100.0, 100.0, (1,), np.float32)
    action_space = spaces.Discrete(3)

    def __init__(self, changing: bool = True, reset_counts: bool = False):
        self.changing, self.reset_counts = changing, reset_counts
        self.n = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.n += self.reset_counts
        self.t, self.x = 0, float(self.np_random.uniform(-1, 1))
        self.length = int(self.np_random.integers(3, 7))
        return np.array([self.x], np.float32), {"score": self.x, "note": "start"}

    def step(self, action):
        self.t += 1
        self.n += 1
        self.x += int(action) - 1 + float(self.np_random.normal(0, 0.1))
        info = {
            "score": self.x,
            "note": f"t={self.t}",
            "nested": {"label": "n" * self.t, "deep": {"v": self.x * 2}},
        }
        if self.changing:
            info["count"] = self.n if self.n < 3 else self.n + 0.5
            info["shape"] = 1.0 if self.n < 4 else np.array([1.0, float(self.n)])
            info["flip"] = 7 if self.n < 5 else "seven"
        if self.t >= 3:
            info["bonus"] = self.t * 10
        done = self.t >= self.length
        if done:
            info["is_success"] = self.x > 0
        return np.array([self.x], np.float32), 1.0, done, False, info


def _row(info: dict, i: int) -> dict:
    """Row i of a batched info dict: the keys whose `_key` mask is True there (nested dicts alike)."""
    out = {}
    for key, value in info.items():
        if key in POOL_KEYS or key.startswith("_") or not info[f"_{key}"][i]:
            continue
        out[key] = _row(value, i) if isinstance(value, dict) else value[i]
    return out


def _equal_rows(ours, ref, mask, what):
    for i in np.flatnonzero(mask):
        a, b = ours[i], ref[i]
        if isinstance(b, (np.ndarray, float, int, np.number, np.bool_, bool)):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=f"{what} row {i}")
        else:
            assert a == b, f"{what} row {i}: {a!r} != {b!r}"


def assert_info_equal(ours: dict, ref: dict, what: str, own=POOL_KEYS + ("final_obs", "final_info")) -> None:
    """Every key of `ref` (SyncVectorEnv's info) is in `ours` with the same `_key` mask and the same values in the
    rows that have it; a key of ours that ref lacks has no row (a typed column no env returned this step)."""
    masks = {k for k in ref if isinstance(k, str) and k.startswith("_") and k[1:] in ref}
    for key in ref:
        if key in masks or key in own:
            continue
        assert key in ours, f"{what}: {key!r} missing (ours: {sorted(ours)})"
        np.testing.assert_array_equal(ours[f"_{key}"], ref[f"_{key}"], err_msg=f"{what}: _{key}")
        if isinstance(ref[key], dict):
            assert_info_equal(ours[key], ref[key], f"{what}[{key!r}]", ())
        else:
            _equal_rows(ours[key], ref[key], ref[f"_{key}"], f"{what}[{key!r}]")
    for key in ours:
        if key in ref or key in own or (isinstance(key, str) and key.startswith("_")):
            continue
        assert not np.any(ours[f"_{key}"]), f"{what}: {key!r} has rows that SyncVectorEnv does not have"


def _assert_step(ours, ref, t):
    obs, rew, term, trunc, info = ours
    robs, rrew, rterm, rtrunc, rinfo = ref
    np.testing.assert_array_equal(obs, robs, err_msg=f"obs at step {t}")
    np.testing.assert_array_equal(rew, rrew)
    np.testing.assert_array_equal(term, rterm)
    np.testing.assert_array_equal(trunc, rtrunc)
    assert_info_equal(info, rinfo, f"info at step {t}")
    if "final_info" in rinfo:
        np.testing.assert_array_equal(info["_final_info"], rinfo["_final_info"])
        assert_info_equal(info["final_info"], rinfo["final_info"], f"final_info at step {t}")


@pytest.mark.parametrize("mode", MODES)
def test_every_info_entry_equals_sync_vector_env(mode):
    counts = mode == "next_step"
    env = pp.make(env_fn=RichInfo, num_envs=4, num_threads=2, autoreset_mode=mode, reset_counts=counts)
    ref = SyncVectorEnv([lambda: RichInfo(reset_counts=counts)] * 4, autoreset_mode=autoreset_mode(mode))
    seen: set[str] = set()
    try:
        _, info = env.reset(seed=5)
        _, rinfo = ref.reset(seed=5)
        assert_info_equal(info, rinfo, "reset info")
        assert info["note"].tolist() == ["start"] * 4
        for t in range(40):
            a = np.full(4, 2)
            out, rout = env.step(a), ref.step(a)
            _assert_step(out, rout, t)
            info = out[4]
            seen.update(k for k in info if not k.startswith("_"))
            seen.update(k for k in info.get("final_info", {}) if not k.startswith("_"))
            done = out[2] | out[3]
            if mode == "disabled" and done.any():
                _, info = env.reset(options={"reset_mask": done})
                _, rinfo = ref.reset(options={"reset_mask": done})
                assert_info_equal(info, rinfo, f"reset_mask info at step {t}")
                np.testing.assert_array_equal(info["_note"], done)
        assert {"bonus", "is_success", "nested", "note", "count", "shape", "flip"} <= seen
        # the kinds changed: int then float (widened), scalar then array, number then str (object arrays)
        assert out[4]["count"].dtype == np.float64 and out[4]["flip"].dtype == object
    finally:
        env.close()
        ref.close()


def test_values_that_change_kind_are_widened_or_become_objects():
    env = pp.make(env_fn=RichInfo, num_envs=2, num_threads=1)
    try:
        # the probe's first step saw count, shape and flip as numbers: typed columns
        assert {"count", "shape", "flip"} <= set(env.spec.config.info_keys)
        env.reset(seed=1)
        kinds = {}
        for _ in range(6):
            *_, info = env.step(np.full(2, 2))
            for key in ("count", "shape", "flip"):
                kinds.setdefault(key, []).append(info[key].dtype)
        assert np.dtype(np.int64) in kinds["count"] and np.dtype(np.float64) in kinds["count"]
        assert np.dtype(object) in kinds["shape"] and np.dtype(object) in kinds["flip"]
    finally:
        env.close()


def test_async_batches_carry_each_envs_own_info():
    """Rows of async batches (env_id subsets) hold the info each env returned, as the env itself gives it."""
    env = pp.make(env_fn=RichInfo, num_envs=4, batch_size=2, num_threads=2, seed=3)
    refs = [RichInfo() for _ in range(4)]
    expect = {e: [r.reset(seed=3 + e)[1]] for e, r in enumerate(refs)}
    ended = [False] * 4
    got: dict[int, list] = {e: [] for e in range(4)}
    try:
        env.async_reset()
        for _ in range(30):
            *_, term, trunc, info = env.recv()
            for j, e in enumerate(info["env_id"].tolist()):
                got[e].append(_row(info, j))
            env.send(np.full(2, 2), info["env_id"])
        for e in range(4):
            for _ in range(len(got[e]) - 1):  # the env's own infos, under next-step autoreset
                if ended[e]:
                    expect[e].append(refs[e].reset()[1])
                    ended[e] = False
                else:
                    *_, te, tr, i = refs[e].step(2)
                    expect[e].append(i)
                    ended[e] = te or tr
            for t, (a, b) in enumerate(zip(got[e], expect[e])):
                assert set(a) == set(b), f"env {e} row {t}: {sorted(a)} != {sorted(b)}"
                for k in b:
                    if isinstance(b[k], dict):
                        assert a[k]["label"] == b[k]["label"] and a[k]["deep"]["v"] == b[k]["deep"]["v"]
                    else:
                        np.testing.assert_array_equal(a[k], b[k], err_msg=f"env {e} row {t} {k}")
        assert max(len(rows) for rows in got.values()) > 7  # past an episode's end (3 to 6 steps)
    finally:
        env.close()


def test_gym_and_dm_front_ends_carry_every_entry():
    gym_env = pp.make(env_fn=RichInfo, num_envs=2, num_threads=1, env_type="gym")
    dm_env = pp.make(env_fn=RichInfo, num_envs=2, num_threads=1, env_type="dm")
    try:
        gym_env.reset(seed=0)
        dm_env.reset(seed=0)
        for _ in range(3):
            *_, info = gym_env.step(np.full(2, 2))
            ts = dm_env.step(np.full(2, 2))
        # EnvPool's gym info: values without `_key` masks
        assert info["note"].tolist() == ["t=3", "t=3"] and info["bonus"].tolist() == [30, 30]
        assert info["nested"]["label"].tolist() == ["nnn", "nnn"] and "_note" not in info
        # dm: the typed arrays as fields, the rest (and every mask) in the State's "info"
        extra = ts.observation.info
        assert extra["note"].tolist() == ["t=3", "t=3"] and extra["_bonus"].all() and extra["_score"].all()
        np.testing.assert_array_equal(ts.observation.score, info["score"])
        assert "info" in dm_env.observation_spec()._fields
    finally:
        gym_env.close()
        dm_env.close()


def test_info_keys_choose_the_typed_columns_and_every_entry_is_carried():
    env = pp.make(env_fn=RichInfo, num_envs=2, num_threads=1, info_keys=["score"])
    try:
        assert env.spec.config.info_keys == ("score",)
        _, info = env.reset(seed=0)
        assert info["note"].tolist() == ["start", "start"]
        *_, info = env.step(np.full(2, 2))
        assert info["count"].tolist() == [1, 1] and info["nested"]["deep"]["_v"].all()
    finally:
        env.close()
    env = pp.make(env_fn=RichInfo, num_envs=2, num_threads=1, info_keys={"is_success": ("bool", ())})
    try:
        _, info = env.reset(seed=0)
        assert not info["_is_success"].any()  # declared, not returned yet: no row has it
    finally:
        env.close()


class _Unpicklable(RichInfo):
    def step(self, action):
        obs, r, te, tr, info = super().step(action)
        info["lock"] = __import__("threading").Lock()
        return obs, r, te, tr, info


def test_an_info_entry_that_does_not_pickle_is_the_envs_error():
    env = pp.make(env_fn=_Unpicklable, num_envs=2, num_threads=1, info_keys={})
    try:
        env.reset(seed=0)
        with pytest.raises(pp.EnvError, match="cannot be sent"):
            env.step(np.full(2, 2))
    finally:
        env.close()


def test_sb3_infos_per_env_have_what_each_env_returned():
    pytest.importorskip("stable_baselines3")
    from parallel_pool.integrations.sb3 import ParallelPoolVecEnv

    venv = ParallelPoolVecEnv(env_fn=RichInfo, num_envs=3, num_threads=1)
    refs = [RichInfo() for _ in range(3)]
    try:
        venv.seed(4)
        venv.reset()
        for e, r in enumerate(refs):
            r.reset(seed=4 + e)
        successes = 0
        for t in range(12):
            _, _, dones, infos = venv.step(np.full(3, 2))
            for e, r in enumerate(refs):
                *_, te, tr, want = r.step(2)
                assert bool(dones[e]) == (te or tr)
                got = {k: v for k, v in infos[e].items() if k not in POOL_KEYS}
                got.pop("TimeLimit.truncated", None)
                got.pop("terminal_observation", None)
                assert set(got) == set(want), f"env {e} step {t}: {sorted(got)} != {sorted(want)}"
                assert got["note"] == want["note"]
                if "is_success" in want:
                    assert got["is_success"] == want["is_success"]
                    successes += 1
                if te or tr:
                    r.reset()
        assert successes > 0
    finally:
        venv.close()


def _names(env) -> list[str]:
    return [name for name, *_ in env.engine.output_specs]


def test_a_numeric_key_seen_late_gets_a_typed_array_from_then_on():
    """ "bonus" (an int from the third step on) gets shared-memory arrays when first seen; from then on the workers
    write it there and it no longer travels by the pipe. Strings never get one."""
    env = pp.make(env_fn=RichInfo, num_envs=2, num_threads=2, changing=False, autoreset_mode="same_step")
    try:
        assert "info:bonus" not in _names(env)
        env.reset(seed=0)
        for _ in range(3):
            *_, info = env.step(np.full(2, 2))
        assert info["bonus"].tolist() == [30, 30] and info["bonus"].dtype == np.int64
        assert {"info:bonus", "info_mask:bonus", "final:info:bonus"} <= set(_names(env))
        assert "info:note" not in _names(env)
        for t in range(4, 12):
            *_, term, trunc, info = env.step(np.full(2, 2))
            if not (term | trunc).any():
                rows = env.engine._objects["info_extra"]
                assert all("bonus" not in row for row in rows), f"step {t}: bonus still sent by pipe"
        assert "info:is_success" in _names(env)  # an end-only key, seen in a final info
    finally:
        env.close()


def test_keys_that_never_repeat_stop_growing_the_layout(monkeypatch):
    import parallel_pool.process_engine as process_engine

    class NewKeyEachStep(RichInfo):
        def step(self, action):
            obs, r, te, tr, info = super().step(action)  # (self.n: the env's steps)
            return obs, r, False, False, {f"k{self.n}": self.n}

    monkeypatch.setattr(process_engine, "_MAX_GROWN", 2)
    env = pp.make(env_fn=NewKeyEachStep, num_envs=1, num_threads=1, changing=False, max_episode_steps=100)
    try:
        env.reset(seed=0)
        for t in range(1, 8):
            *_, info = env.step(np.full(1, 2))
            assert info[f"k{t}"].tolist() == [t] and info[f"_k{t}"].tolist() == [True]  # carried either way
        # k1 from the probe at make(), then two grown: k2, k3
        assert [n for n in _names(env) if n.startswith("info:k")] == ["info:k1", "info:k2", "info:k3"]
    finally:
        env.close()


def test_a_restarted_worker_writes_the_arrays_added_before(monkeypatch):
    import os
    import signal

    env = pp.make(env_fn=RichInfo, num_envs=2, num_threads=2, changing=False)
    try:
        env.reset(seed=0)
        for _ in range(3):
            env.step(np.full(2, 2))
        assert "info:bonus" in _names(env)
        os.kill(env.engine.pids[0], signal.SIGKILL)
        with pytest.raises(pp.EnvError):
            for _ in range(3):
                env.step(np.full(2, 2))
        env.reset(seed=0)
        for _ in range(3):
            *_, info = env.step(np.full(2, 2))
        assert info["bonus"].tolist() == [30, 30] and info["_bonus"].all()
        assert all(row is None or "bonus" not in row for row in env.engine._objects["info_extra"])
    finally:
        env.close()


@pytest.mark.filterwarnings("ignore:parallel_pool xla")
def test_xla_keeps_the_layout_it_traced():
    jax = pytest.importorskip("jax")
    env = pp.make(env_fn=RichInfo, num_envs=2, num_threads=1, changing=False)
    try:
        handle, _, _, step = env.xla()
        env.reset(seed=0)
        before = _names(env)

        @jax.jit
        def run(h):
            return jax.lax.scan(lambda h, _: (step(h, jax.numpy.full(2, 2))[0], None), h, length=5)[0]

        run(handle)
        seen = [env.step(np.full(2, 2))[4].get("_bonus", np.zeros(2, bool)).any() for _ in range(8)]
        assert any(seen)  # carried in the object array
        assert _names(env) == before
    finally:
        env.close()


def test_sync_steps_of_some_envs_carry_their_own_infos():
    env = pp.make(env_fn=RichInfo, num_envs=3, num_threads=2, seed=2, changing=False, autoreset_mode="disabled")
    refs = [RichInfo(changing=False) for _ in range(3)]
    try:
        env.reset()
        for e, r in enumerate(refs):
            r.reset(seed=2 + e)
        for t in range(4):
            ids = [2, 0] if t % 2 == 0 else [1]
            *_, info = env.step(np.full(len(ids), 2), env_id=np.array(ids))
            assert info["env_id"].tolist() == ids
            for j, e in enumerate(ids):
                want = refs[e].step(2)[4]
                got = _row(info, j)
                assert set(got) == set(want), f"env {e} step {t}: {sorted(got)} != {sorted(want)}"
                assert got["note"] == want["note"] and got["nested"]["label"] == want["nested"]["label"]
    finally:
        env.close()
