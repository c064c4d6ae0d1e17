"""ale_py's AtariVectorEnv as a benchmark contender: built from our spec with the same preprocessing (checked frame
by frame against ours), and planned beside ParallelPool and EnvPool at every size of `--case atari`."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import parallel_pool
from parallel_pool.bench import peers
from parallel_pool.bench.cases import XLA_STEPS
from parallel_pool.bench.suites import atari


def _has(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:
        return False


needs_ale_vector = pytest.mark.skipif(
    not (_has("ale_py") and _has("ale_py.vector_env") and "Pong-v5" in parallel_pool.list_all_envs()),
    reason="needs ale_py's vector env and the atari family",
)


@needs_ale_vector
def test_atari_vector_kwargs_follow_our_config():
    kw = peers.atari_vector_kwargs("Pong-v5", num_envs=8, batch_size=4, num_threads=2)
    assert kw["game"] == "pong"
    assert (kw["num_envs"], kw["batch_size"], kw["num_threads"]) == (8, 4, 2)
    # our Pong-v5 (EnvPool's defaults): 4-frame skip, 84x84 grey, stack 4, up to 30 no-ops, fire reset, no sticky
    # actions, no episodic life, no reward clipping, 27000 steps = 108000 frames per episode
    assert kw["frameskip"] == 4 and kw["maxpool"] is True
    assert (kw["img_height"], kw["img_width"], kw["grayscale"], kw["stack_num"]) == (84, 84, True, 4)
    assert kw["noop_max"] == 30 and kw["use_fire_reset"] is True and kw["repeat_action_probability"] == 0.0
    assert kw["episodic_life"] is False and kw["reward_clipping"] is False
    assert kw["max_num_frames_per_episode"] == 108000
    # a changed setting of ours travels
    kw = peers.atari_vector_kwargs("Pong-v5", reward_clip=True, episodic_life=True, stack_num=2, frame_skip=3)
    assert kw["reward_clipping"] and kw["episodic_life"] and kw["stack_num"] == 2 and kw["frameskip"] == 3
    assert kw["max_num_frames_per_episode"] == 27000 * 3


@needs_ale_vector
def test_atari_vector_kwargs_refuse_what_ale_cannot_run():
    with pytest.raises(ValueError, match="use_inter_area_resize=False"):
        peers.atari_vector_kwargs("Pong-v5", use_inter_area_resize=False)


@needs_ale_vector
def test_atari_vector_env_steps_the_same_frames_as_ours():
    """With no random no-ops (noop_max=1) both play the same game: after the stack has filled, every frame is
    bit-identical. At reset the stacks differ: AtariVectorEnv fills the older slots with zeros, ours (as EnvPool)
    with the first frame."""
    theirs = peers.make_atari_vector_env("Pong-v5", num_envs=1, noop_max=1)
    ours = parallel_pool.make("Pong-v5", env_type="gymnasium", num_envs=1, noop_max=1)
    try:
        assert theirs.single_observation_space == ours.single_observation_space
        assert theirs.single_action_space == ours.single_action_space
        a, _ = theirs.reset(seed=0)
        b, _ = ours.reset()
        assert a.shape == b.shape == (1, 4, 84, 84) and a.dtype == b.dtype == np.uint8
        assert np.array_equal(a[0, -1], b[0, -1]) and b[0, 0].any() and not a[0, :-1].any()
        for k in range(12):
            act = np.array([k % 6], np.int32)
            x, rx, tx, ux, _ = theirs.step(act)
            y, ry, ty, uy, _ = ours.step(act)
            if k >= 2:  # the stack holds steps only: no reset frame left in it
                assert np.array_equal(x, y), k
            assert np.array_equal(rx, ry) and np.array_equal(tx, ty) and np.array_equal(ux, uy)
    finally:
        theirs.close()
        ours.close()


def test_case_atari_plans_every_engine_at_every_size(monkeypatch):
    monkeypatch.setattr(atari, "have", lambda module: True)
    monkeypatch.setattr(atari, "xla_available", lambda runner: (runner != "ale_vector", "no chex"))
    named, left_out = atari.contenders("Pong-v5", cores=2, sizes=[1, 8, 64])
    assert left_out == ["ale_py AtariVectorEnv xla: no chex"]
    for runner in ("parallel_pool", "envpool", "ale_vector"):
        cases = [c for c in named.values() if c["runner"] == runner and "call" not in c]
        got = sorted((c["num_envs"], c["mode"], c["batch_size"], c["num_threads"]) for c in cases)
        assert got == [
            (1, "sync", 1, 1),
            (8, "async", 4, 2),
            (8, "sync", 8, 2),
            (64, "async", 32, 2),
            (64, "sync", 64, 2),
        ]
        xla = [c for c in named.values() if c["runner"] == runner and c.get("call") == "xla"]
        assert len(xla) == (0 if runner == "ale_vector" else 5)
        assert all(c["scan"] * c["batch_size"] <= XLA_STEPS for c in xla)
    assert named["ale_py AtariVectorEnv async 64 envs, batch 32"]["batch_size"] == 32
    # the ratio pairs each peer with ParallelPool at the same size, mode and call
    med = {name: 1.0 for name in named}
    med["ParallelPool async 8 envs, batch 4"] = 3.0
    r = atari.ratios(named, med)
    assert r["ParallelPool async 8 envs, batch 4 / ale_py AtariVectorEnv async 8 envs, batch 4"] == 3.0
    assert "ParallelPool xla sync 8 envs / EnvPool xla sync 8 envs" in r
    assert not any("ale_py AtariVectorEnv xla" in k for k in r)


def test_throughput_plan_has_each_engine_xla_at_every_atari_size(monkeypatch):
    from parallel_pool.bench import cases
    from parallel_pool.bench.report import envpool_ref

    monkeypatch.setattr(cases, "xla_available", lambda runner: (runner != "ale_vector", "no chex"))
    monkeypatch.setattr(cases, "_has", lambda module: True)
    plan = cases.make_plan(["Pong-v5"], quick=False, cores=2, ours={"Pong-v5"}, theirs={"Pong-v5"})
    assert "Pong-v5: ale_py AtariVectorEnv xla (no chex)" in plan.skipped
    main = [c for c in plan.cases if "main" in c["purpose"]]
    for runner in ("parallel_pool", "envpool", "ale_vector"):
        loop = {(c["num_envs"], c["mode"], c["batch_size"]) for c in main if c["runner"] == runner and "call" not in c}
        assert loop == {(n, m, n if m == "sync" else max(1, n // 2)) for n in (1, 8, 64) for m in ("sync", "async")}
        xla = {(c["num_envs"], c["mode"]) for c in main if c["runner"] == runner and c.get("call") == "xla"}
        assert xla == (set() if runner == "ale_vector" else {(n, m) for n, m, _ in loop})
    xla = next(c for c in main if c["runner"] == "parallel_pool" and c.get("call") == "xla" and c["num_envs"] == 64)
    assert cases.case_label(xla) == "ParallelPool xla sync" and xla["scan"] * xla["batch_size"] <= XLA_STEPS
    # × EnvPool pairs an xla() case with EnvPool's xla(), a Python loop with EnvPool's loop
    res = {"cases": [dict(c, steps_per_s=2.0 if c.get("call") else 1.0) for c in main]}
    for c in res["cases"]:
        if c["runner"] != "envpool" and c["runner"] != "ale_vector" and c["mode"] == "sync":
            assert envpool_ref(res, c) == (2.0 if c.get("call") else 1.0)
