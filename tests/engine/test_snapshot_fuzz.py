"""Snapshots are untrusted input (saved with np.savez, shared, loaded back): random tampering of every C++ family's
snapshots, taken mid-episode. Each tampered snapshot is either refused by set_state with a ValueError or TypeError
that leaves the envs exactly as they were (their snapshot is unchanged), or accepted, and then the next steps each
return (a hang dumps every thread's stack and fails the test) with finite rewards.

Each family runs in a Python of its own under faulthandler, so that a crash or a hang fails the test with the
tamper that caused it instead of killing or stalling pytest. Families this build leaves out are skipped (the
sanitizer job's ASan+UBSan build has only some of them).
"""

from __future__ import annotations

import json

import pytest
from pyproc import run_python

from parallel_pool import _build_info

# family -> {task: make() kwargs}: one task of every env class of the cheap families, a few of the others
FAMILIES = {
    "classic_control": {
        "CartPole-v1": {},
        "MountainCar-v0": {},
        "MountainCarContinuous-v0": {},
        "Pendulum-v1": {},
        "Acrobot-v1": {},
        "phys2d/CartPole-v1": {},
        "phys2d/Pendulum-v0": {},
    },
    "toy_text": {
        "Blackjack-v1": {},
        "Catch-v0": {},
        "CliffWalking-v0": {},
        "FrozenLake-v1": {},
        "NChain-v0": {},
        "Taxi-v3": {},
    },
    "mujoco_gym": {"Hopper-v5": {}, "Ant-v5": {}, "HalfCheetah-v4": {"frame_stack": 2}},
    "mujoco_dmc": {"CartpoleSwingup-v1": {}, "FingerTurnHard-v1": {}},
    "box2d": {"LunarLander-v3": {}, "BipedalWalker-v3": {}},
    "minigrid": {"MiniGrid-DoorKey-5x5-v0": {}, "MiniGrid-Dynamic-Obstacles-5x5-v0": {}, "BabyAI-GoToLocal-v0": {}},
    "atari": {"Pong-v5": {}, "MsPacman-v5": {}},
    "mpe": {
        "MPE/simple_spread-v3": {},
        "MPE/simple_reference-v3": {"continuous_actions": True},
        "MPE/simple_crypto-v3": {},
        "MPE/simple_world_comm-v3": {"continuous_actions": True},
    },
}

# the child: every tamper of every task of one family; prints one JSON line of results
CHILD = r"""
import faulthandler, json, sys
import numpy as np
import parallel_pool as pp
from gymnasium.vector.utils import batch_space

faulthandler.enable()
faulthandler.dump_traceback_later(HANG_S, exit=True)  # a step that never returns: every stack, then exit 1
rng = np.random.default_rng(SEED)
ids = [0, 1]
results = {"refused": 0, "accepted": 0, "failures": []}


def fail(task, name, what):
    results["failures"].append(f"{task}: {name}: {what}")


def same(a, b):
    return all(np.array_equal(np.asarray(a[k]), np.asarray(b[k]), equal_nan=np.asarray(a[k]).dtype.kind == "f")
               for k in a)


def whole_tampers(snap, other):
    # (name, snapshot) pairs that change the snapshot's structure
    n = len(snap["lengths"])
    out = [("another task's snapshot", other), ("another task's snapshot relabelled", dict(other, task=snap["task"]))]
    for k, v in snap.items():
        v = np.asarray(v)
        out += [
            (f"no {k}", {kk: vv for kk, vv in snap.items() if kk != k}),
            (f"{k} renamed", {(kk + "_" if kk == k else kk): vv for kk, vv in snap.items()}),
            (f"{k} as objects", dict(snap, **{k: np.array([None] * max(v.size, 1), dtype=object)})),
            (f"{k} as str", dict(snap, **{k: np.array("2")})),
            (f"{k} as float", dict(snap, **{k: v.astype(np.float64) if v.dtype.kind in "biuf" else np.array(2.0)})),
            (f"{k} as float32", dict(snap, **{k: v.astype(np.float32) if v.dtype.kind in "biuf" else np.array(2.0)})),
            (f"{k} as int8", dict(snap, **{k: v.astype(np.int8) if v.dtype.kind in "biuf" else np.array(2)})),
            (f"{k} flattened", dict(snap, **{k: v.ravel()})),
            (f"{k} 2-d", dict(snap, **{k: v.reshape(1, -1) if v.ndim == 1 else v[None]})),
        ]
        if v.ndim >= 1:
            out += [(f"{k} extra row", dict(snap, **{k: np.concatenate([v, v[:1]])})),
                    (f"{k} one row short", dict(snap, **{k: v[:-1]}))]
    values, lengths = snap["values"], snap["lengths"]
    out += [
        ("values cut short", dict(snap, lengths=np.maximum(lengths - 1, 0))),
        ("values extended", dict(snap, values=np.concatenate([values, values[:, :3]], axis=1), lengths=lengths + 3)),
        ("values emptied", dict(snap, values=values[:, :0], lengths=lengths * 0)),
        ("values narrower than lengths", dict(snap, values=values[:, :-1])),
        ("lengths negative", dict(snap, lengths=-lengths)),
        ("lengths huge", dict(snap, lengths=lengths + 2**40)),
        ("format 3", dict(snap, format=np.array(3))),
        ("version other", dict(snap, version=np.array("0.0.0"))),
        ("env_ids negative", dict(snap, env_ids=-snap["env_ids"] - 1)),
        ("rows swapped", {k: (np.asarray(v)[::-1] if np.ndim(v) and k != "env_ids" else v) for k, v in snap.items()}),
    ]
    for e in (-1, 2**31 - 1, 2**31, 2**40 + 5, 2**63 - 1):
        out.append((f"elapsed {e}", dict(snap, elapsed=np.array([e] * n, dtype=np.int64))))
    out.append(("elapsed uint64 max", dict(snap, elapsed=np.array([2**64 - 1] * n, dtype=np.uint64))))
    gen = snap["generator"]
    for name, fill in [("zero", 0), ("all ones", 2**32 - 1)]:
        g = gen.copy()
        g[:, :-1] = fill
        out.append((f"generator {name}", dict(snap, generator=g)))
    for pos in (624, 625, 2**32 - 1):
        g = gen.copy()
        g[:, -1] = pos
        out.append((f"generator position {pos}", dict(snap, generator=g)))
    out.append(("generator as int64", dict(snap, generator=gen.astype(np.int64))))
    return out


def perturbations(snap, atari):
    # (name, snapshot) pairs that change one value
    out = []
    for _ in range(PERTURBATIONS):
        s = {k: np.array(v, copy=True) for k, v in snap.items()}
        r = int(rng.integers(len(s["lengths"])))
        if rng.random() < 0.1:
            j = int(rng.integers(s["generator"].shape[1]))
            w = [0, 1, 2**31, 2**32 - 1, int(rng.integers(2**32))][int(rng.integers(5))]
            s["generator"][r, j] = w
            out.append((f"generator[{r}, {j}] = {w}", s))
            continue
        if s["lengths"][r] == 0:
            continue
        j = int(rng.integers(s["lengths"][r]))
        old = s["values"][r, j]
        kinds = ["0", "-1", "huge", "-huge", "tiny", "nan", "inf", "-inf", "2**31", "2**53+1", "-0.5", "flip64"]
        if atari:
            kinds += ["byte"] * 6 + ["flipbyte"] * 6
        kind = kinds[int(rng.integers(len(kinds)))]
        if kind == "flip64":
            bits = np.array([old]).view(np.uint64)
            bits ^= np.uint64(1) << np.uint64(int(rng.integers(64)))
            new = bits.view(np.float64)[0]
        elif kind == "byte":
            new = float(rng.integers(256))
        elif kind == "flipbyte":
            new = float(int(old) ^ (1 << int(rng.integers(8)))) if 0 <= old < 256 and old == int(old) else 0.0
        else:
            new = {"0": 0.0, "-1": -1.0, "huge": 1e300, "-huge": -1e300, "tiny": 1e-300, "nan": np.nan,
                   "inf": np.inf, "-inf": -np.inf, "2**31": 2.0**31, "2**53+1": 2.0**53 + 2, "-0.5": -0.5}[kind]
        s["values"][r, j] = new
        out.append((f"values[{r}, {j}] = {new!r} (was {old!r})", s))
    return out


for task, kwargs in TASKS.items():
    print("==", task, flush=True)
    env = pp.make(task, num_envs=2, seed=5, **kwargs)
    twin = pp.make(task, num_envs=2, seed=5, **kwargs)
    # multi-player envs (MPE) take one action per player row
    players = env.spec.max_num_players
    space = env.action_space if players == 1 else batch_space(env.spec.action_space, 2 * players)
    space.seed(5)
    actions = [space.sample() for _ in range(8 + STEPS)]
    for e in (env, twin):
        e.reset()
        for a in actions[:8]:
            e.step(a)
    snap = env.get_state(ids)
    other_task = OTHER[task]
    other = pp.make(other_task, num_envs=2, seed=5)
    other.reset()
    other_snap = other.get_state(ids)
    other.close()
    tampers = whole_tampers(snap, other_snap) + perturbations(snap, task in ATARI)
    for name, bad in tampers:
        before = env.get_state(ids)
        try:
            env.set_state(ids, bad)
        except (ValueError, TypeError) as e:
            results["refused"] += 1
            if not str(e):
                fail(task, name, f"{type(e).__name__} without a message")
            if not same(env.get_state(ids), before):
                fail(task, name, "refused, but the envs changed")
            continue
        except Exception as e:  # any other error is not a clear refusal
            fail(task, name, f"{type(e).__name__}: {e}")
            env.set_state(ids, snap)
            continue
        results["accepted"] += 1
        for a in actions[8:]:
            try:
                reward = env.step(a)[1]
            except pp.EnvError:  # an env that refuses to go on from the state says so; the pool goes on
                continue
            if not np.all(np.isfinite(reward)):
                fail(task, name, f"accepted, then a reward of {reward}")
        env.set_state(ids, snap)
    # the envs still step as the twin that saw no tampering
    env.set_state(ids, snap)
    for a in actions[8:]:
        for x, y in zip(env.step_arrays(a), twin.step_arrays(a)):
            if not np.array_equal(x, y):
                fail(task, "after every tamper", "the restored env parts from its untampered twin")
    env.close()
    twin.close()
print(json.dumps(results))
"""

OTHER = {  # the snapshot relabelled as the task's own: another task of the same family, with another layout
    "CartPole-v1": "Pendulum-v1",
    "MountainCar-v0": "Acrobot-v1",
    "MountainCarContinuous-v0": "MountainCar-v0",
    "Pendulum-v1": "CartPole-v1",
    "Acrobot-v1": "CartPole-v1",
    "phys2d/CartPole-v1": "Acrobot-v1",
    "phys2d/Pendulum-v0": "Pendulum-v1",
    "Blackjack-v1": "Taxi-v3",
    "Catch-v0": "NChain-v0",
    "CliffWalking-v0": "FrozenLake-v1",
    "FrozenLake-v1": "FrozenLake8x8-v1",
    "NChain-v0": "Blackjack-v1",
    "Taxi-v3": "Catch-v0",
    "Hopper-v5": "Walker2d-v5",
    "Ant-v5": "Humanoid-v5",
    "HalfCheetah-v4": "HalfCheetah-v5",
    "CartpoleSwingup-v1": "CartpoleBalance-v1",
    "FingerTurnHard-v1": "FingerSpin-v1",
    "LunarLander-v3": "LunarLanderContinuous-v3",
    "BipedalWalker-v3": "BipedalWalkerHardcore-v3",
    "MiniGrid-DoorKey-5x5-v0": "MiniGrid-DoorKey-6x6-v0",
    "MiniGrid-Dynamic-Obstacles-5x5-v0": "MiniGrid-Empty-5x5-v0",
    "BabyAI-GoToLocal-v0": "BabyAI-GoToRedBall-v0",
    "Pong-v5": "Breakout-v5",
    "MsPacman-v5": "Pong-v5",
    "MPE/simple_spread-v3": "MPE/simple_reference-v3",
    "MPE/simple_reference-v3": "MPE/simple-v3",
    "MPE/simple_crypto-v3": "MPE/simple_speaker_listener-v4",
    "MPE/simple_world_comm-v3": "MPE/simple_tag-v3",
}


@pytest.mark.parametrize("family", list(FAMILIES))
def test_tampered_snapshots_are_refused_or_step_in_bounded_time(family):
    why, _ = _build_info.FAMILIES[family]
    if why is not None:
        pytest.skip(f"the {family} family is not in this build ({why})")
    hang_s = 60
    settings = {
        "HANG_S": hang_s,
        "SEED": 41,
        "PERTURBATIONS": 120,
        "STEPS": 3,
        "TASKS": FAMILIES[family],
        "OTHER": OTHER,
        "ATARI": set(FAMILIES["atari"]),
    }
    code = "".join(f"{k} = {v!r}\n" for k, v in settings.items()) + CHILD
    out = run_python(code, timeout=hang_s + 30)
    where = f"\nstdout:\n{out.stdout[-3000:]}\nstderr:\n{out.stderr[-6000:]}"
    assert out.returncode == 0, f"the fuzz run of {family} crashed or hung{where}"
    results = json.loads(out.stdout.strip().splitlines()[-1])
    assert not results["failures"], "\n".join(results["failures"][:40]) + where
    assert results["refused"] > 0 and results["accepted"] > 0, results
