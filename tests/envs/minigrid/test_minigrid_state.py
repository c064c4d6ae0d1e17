"""MiniGrid snapshots and set_config, against the `minigrid` package.

A snapshot taken in episode A and restored after the env moved on to episode B continues A exactly: the grid, the
agent, the generator, and the mission's own state (the mission string and id, the target the env checks, BabyAI's
instruction and its verifier's progress). Each restored run is compared with the run it replays and with a copy of
the minigrid env taken at the snapshot, stepping the same actions. set_config rebuilds an env at its next reset;
the rebuilt env continues the layouts' generator, so its layouts are the minigrid env's after the same seeds.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import parallel_pool as pp

pytest.importorskip("minigrid")
from minigrid.utils.baby_ai_bot import BabyAIBot  # noqa: E402
from test_minigrid import _compare, _python_state, _ref  # noqa: E402

LIMIT = 30  # short episodes (max_steps of both envs), so that random actions reach episode B soon


def _kwargs(task_id):
    ours = {"max_episode_steps": LIMIT}
    if task_id.startswith("BabyAI"):
        ours["max_steps"] = LIMIT  # minigrid's kwarg: a fixed limit instead of the per-episode one
    return ours


def _mission(obs) -> str:
    return bytes(obs["mission"][0]).rstrip(b"\0").decode()


def _copy(result):
    obs, rew, term, trunc, info = result
    return ({k: v.copy() for k, v in obs.items()}, rew.copy(), term.copy(), trunc.copy(), copy.deepcopy(info))


def _same(a, b, where):
    for k in a[0]:
        np.testing.assert_array_equal(a[0][k], b[0][k], err_msg=f"obs {k} {where}")
    for i, name in ((1, "reward"), (2, "terminated"), (3, "truncated")):
        np.testing.assert_array_equal(a[i], b[i], err_msg=f"{name} {where}")
    for k in ("agent_pos", "mission_id", "elapsed_step"):
        np.testing.assert_array_equal(a[4][k], b[4][k], err_msg=f"info {k} {where}")


class _Both:
    """Ours (one env) and the minigrid env side by side; episodes that end are reset on both sides (ours by its
    next-step autoreset, minigrid by reset() without a seed), as test_minigrid.py's run_alongside does."""

    def __init__(self, task_id, seed):
        self.task_id = task_id
        self.ours = pp.make(task_id, num_envs=1, seed=seed, **_kwargs(task_id))
        self.ref = _ref(task_id, max_steps=LIMIT)
        obs, info = self.ours.reset()
        robs, _ = self.ref.reset(seed=seed)
        _compare(obs, [0.0], [False], [False], info, robs, 0.0, False, False, self.ref, f"{task_id} reset")
        self.done = False
        self.ended = 0

    def step(self, a, where):
        result = _copy(self.ours.step(np.array([a])))
        if self.done:
            robs, _ = self.ref.reset()
            rrew, rterm, rtrunc = 0.0, False, False
        else:
            robs, rrew, rterm, rtrunc, _ = self.ref.step(a)
        _compare(*result, robs, rrew, rterm, rtrunc, self.ref, f"{self.task_id} {where}")
        self.done = bool(rterm or rtrunc)
        self.ended += self.done
        return result

    def snapshot(self):
        return self.ours.get_state([0]), copy.deepcopy(self.ref), self.done

    def restore(self, snap):
        state, ref, done = snap
        self.ours.set_state([0], state)
        np.testing.assert_array_equal(self.ours.get_state([0])["values"], state["values"])  # a complete round trip
        self.ref, self.done = ref, done

    def close(self):
        self.ours.close()
        self.ref.close()


def _replay_from(both, snap, actions, recorded, where):
    """Restore `snap`, step `actions` again: the same results as `recorded`, and the minigrid copy's."""
    both.restore(snap)
    for t, (a, first) in enumerate(zip(actions, recorded)):
        _same(both.step(a, f"{where} replay step {t}"), first, f"{where} replay step {t}")


# Envs whose step checks something GenGrid chose besides the grid (a target object or cell, door positions, the
# balls that move) or whose mission string varies, and BabyAI levels of each instruction kind.
SNAPSHOT_IDS = [
    "MiniGrid-Fetch-8x8-N3-v0",
    "MiniGrid-GoToObject-8x8-N2-v0",
    "MiniGrid-GoToDoor-8x8-v0",
    "MiniGrid-PutNear-8x8-N3-v0",
    "MiniGrid-MemoryS7-v0",
    "MiniGrid-RedBlueDoors-6x6-v0",
    "MiniGrid-Unlock-v0",
    "MiniGrid-UnlockPickup-v0",
    "MiniGrid-KeyCorridorS3R3-v0",
    "MiniGrid-LockedRoom-v0",
    "MiniGrid-Dynamic-Obstacles-6x6-v0",
    "BabyAI-GoToLocal-v0",
    "BabyAI-PickupLoc-v0",
    "BabyAI-OpenDoorsOrderN4-v0",
    "BabyAI-PutNextLocal-v0",
    "BabyAI-UnlockPickup-v0",
    "BabyAI-Synth-v0",
    "BabyAI-BossLevel-v0",
]
# the ids whose mission string is the same in every episode
CONSTANT_MISSIONS = ("MiniGrid-Memory", "MiniGrid-RedBlue", "MiniGrid-Unlock-", "MiniGrid-Dynamic")


@pytest.mark.parametrize("task_id", SNAPSHOT_IDS)
def test_snapshot_from_an_earlier_episode_continues_it(task_id):
    """Snapshot 5 steps into episode A, play on into later episodes, restore: A continues as it did (obs with its
    mission, rewards, flags, infos), as the minigrid env copied at the snapshot continues, and through A's end into
    the episodes after it (the generator is in the snapshot too)."""
    missions_differed = False
    for seed in range(3):
        both = _Both(task_id, seed)
        rng = np.random.default_rng(seed)
        n = both.ours.single_action_space.n
        for t in range(5):
            both.step(int(rng.integers(n)), f"seed {seed} step {t}")
        snap = both.snapshot()
        mission_a = both.ref.unwrapped.mission
        actions, recorded = [], []
        while both.ended < 2 or len(actions) < 2 * LIMIT:  # at least one whole episode after A
            actions.append(int(rng.integers(n)))
            recorded.append(both.step(actions[-1], f"seed {seed} step {5 + len(actions)}"))
        missions_differed |= both.ref.unwrapped.mission != mission_a
        _replay_from(both, snap, actions, recorded, f"seed {seed}")
        both.close()
    if not task_id.startswith(CONSTANT_MISSIONS):
        assert missions_differed, "episode B's mission was A's in every seed: the test shows nothing"


def _progress(instr) -> bool:
    """Whether minigrid's verifier has recorded progress in this instruction (a part of a sequence done)."""
    parts = [getattr(instr, k, None) for k in ("a_done", "b_done")]
    inner = [getattr(instr, k) for k in ("instr_a", "instr_b") if hasattr(instr, k)]
    return "success" in parts or any(_progress(i) for i in inner)


def _solve_snapshot_restore(ours, ref, where, seed) -> bool:
    """One episode solved by the bot, snapshot at its first progress, played into the next episode, restored and
    replayed. False when the bot failed or solved the episode with no intermediate progress to keep."""
    ours.reset()
    ref.reset(seed=seed)
    bot = BabyAIBot(ref)
    pending = None  # (snapshot, minigrid copy, actions and results from there)
    rew = 0.0
    for t in range(ref.unwrapped.max_steps):
        u = ref.unwrapped
        if pending is None and (_progress(u.instrs) or u.carrying is not None):
            pending = (ours.get_state([0]), copy.deepcopy(ref), [], [])
        a = int(bot.replan())
        result = _copy(ours.step(np.array([a])))
        robs, rew, rterm, rtrunc, _ = ref.step(a)
        _compare(*result, robs, rew, rterm, rtrunc, ref, f"{where} step {t}")
        if pending is not None:
            pending[2].append(a)
            pending[3].append(result)
        if rterm or rtrunc:
            break
    if pending is None or rew <= 0:
        return False
    state, ref_copy, actions, recorded = pending
    for t in range(5):  # into episode B: the autoreset, then steps of B's own mission
        ours.step(np.array([t % 3]))
    ours.set_state([0], state)
    for t, (a, first) in enumerate(zip(actions, recorded)):
        result = _copy(ours.step(np.array([a])))
        robs, rrew, rterm, rtrunc, _ = ref_copy.step(a)
        _compare(*result, robs, rrew, rterm, rtrunc, ref_copy, f"{where} replay {t}")
        _same(result, first, f"{where} replay {t}")
    ref_copy.close()
    assert result[1][0] > 0 and result[2][0], "the restored episode ends in success, as A did"
    return True


@pytest.mark.parametrize(
    "task_id",
    [
        "BabyAI-GoToSeq-v0",
        "BabyAI-OpenDoorsOrderN4-v0",
        "BabyAI-OpenTwoDoors-v0",
        "BabyAI-MoveTwoAcrossS5N2-v0",
        "BabyAI-SynthSeq-v0",
        "BabyAI-PutNextLocal-v0",
    ],
)
def test_snapshot_keeps_the_verifiers_progress(task_id):
    """minigrid's BabyAI bot solves episode A; the snapshot is taken once the verifier has recorded progress (a part
    of a sequence done, or the object to put carried), then the env plays into episode B. Restored, A's remaining
    actions succeed at the same step with the same reward, as in the minigrid copy."""
    checked = 0
    for seed in range(4):
        ours = pp.make(task_id, num_envs=1, seed=seed)
        ref = _ref(task_id)
        try:
            checked += _solve_snapshot_restore(ours, ref, f"{task_id} seed {seed}", seed)
        finally:
            ours.close()
            ref.close()
    assert checked >= 2, "too few episodes solved with progress to keep"


def test_bad_snapshots_are_refused_and_change_nothing():
    ours = pp.make("BabyAI-SynthSeq-v0", num_envs=2, seed=0)
    ours.reset()
    before = ours.get_state([0, 1])
    other = pp.make("BabyAI-Synth-v0", num_envs=1, seed=0)
    other.reset()
    with pytest.raises(ValueError, match="BabyAI-Synth-v0 cannot be restored into BabyAI-SynthSeq-v0"):
        ours.set_state([0], other.get_state([0]))
    with pytest.raises(ValueError, match="format"):
        ours.set_state([0], {**before, "format": np.array(1)})

    def tampered(at, value):
        snap = copy.deepcopy(before)
        snap["values"][1, at] = value
        return snap

    values, n = before["values"][1], int(before["values"][1, 1])
    mission_at = 3 + n  # the mission's values: text (length, bytes), id, then BabyAI's limit, count, root, instrs
    root_at = mission_at + 1 + int(values[mission_at]) + 1 + 2
    count = int(values[root_at - 1])
    assert count >= 3  # SynthSeq: a sequence of two parts at least
    bad = {
        "version": (0, 1.0),
        "sizes": (1, n + 1.0),
        "mission text": (mission_at, 1e9),
        "root": (root_at, float(count)),
        "kind": (root_at + 1, 9.0),
        "generator": (int(before["lengths"][1]) - 2, 2.0),  # has_uint32 is 0 or 1
    }
    for what, (at, value) in bad.items():
        with pytest.raises(ValueError):
            ours.set_state([0, 1], tampered(at, value))
        after = ours.get_state([0, 1])
        np.testing.assert_array_equal(after["values"], before["values"], err_msg=what)
    # a sequence whose part is itself (a loop in the instruction tree): the last instruction is the root sequence
    last = root_at + 1
    for _ in range(count - 1):  # skip to the last instruction's values
        last += 7
        for _d in range(2):
            last += 3
            last += 1 + int(values[last])
            last += 1 + 2 * int(values[last])
    assert values[last] >= 4  # a sequence kind
    with pytest.raises(ValueError):
        ours.set_state([0, 1], tampered(last + 2, float(count - 1)))
    np.testing.assert_array_equal(ours.get_state([0, 1])["values"], before["values"])
    ours.close()
    other.close()


@pytest.mark.parametrize(
    "task_id, key, value, attr",
    [
        ("MiniGrid-DoorKey-8x8-v0", "size", 8, None),  # the same value: a rebuilt env, the same env
        ("MiniGrid-Fetch-8x8-N3-v0", "num_objs", 2, "numObjs"),
        ("MiniGrid-PutNear-8x8-N3-v0", "num_objs", 2, "numObjs"),
        ("MiniGrid-MultiRoom-N6-v0", "max_room_size", 6, "maxRoomSize"),
        ("BabyAI-GoToLocal-v0", "num_dists", 2, "num_dists"),
        ("BabyAI-BossLevel-v0", "locked_room_prob", 0.0, "locked_room_prob"),
    ],
)
def test_set_config_continues_the_layouts_generator(task_id, key, value, attr):
    """set_config at a reset: the rebuilt env's layouts are the minigrid env's after the same seed, its attribute
    changed at that reset (minigrid draws from np_random, which the change leaves alone), through explicit resets
    and an autoreset."""
    both = _Both(task_id, 4)
    ours = both.ours
    for episode in range(4):
        if episode == 1:
            ours.set_config([0], **{key: value})
            if attr is not None:
                setattr(both.ref.unwrapped, attr, value)
        obs, info = ours.reset()
        robs, _ = both.ref.reset()
        _compare(obs, [0.0], [False], [False], info, robs, 0.0, False, False, both.ref, f"{task_id} episode {episode}")
        if not task_id.startswith("BabyAI"):  # minigrid's BabyAI objects have no uid to compare
            np.testing.assert_array_equal(ours.get_state(0), _python_state(both.ref), err_msg=f"episode {episode}")
    # mid-episode: applied at the autoreset after the episode ends
    ours.set_config([0], **{key: ours.get_config(0)[key]})
    rng = np.random.default_rng(0)
    for t in range(4 * LIMIT):
        both.step(int(rng.integers(ours.single_action_space.n)), f"step {t}")
        if both.ended == 2:
            break
    assert both.ended == 2, "no autoreset compared"
    both.close()
