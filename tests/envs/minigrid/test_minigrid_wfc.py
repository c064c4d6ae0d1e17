"""MiniGrid-WFC (core/envs/minigrid/wfc.h): EnvPool's six WFC ids, exact with minigrid 3.2.0's WFCEnv.

Generation is exact (docs/minigrid.md): env i of a pool seeded s builds the layout of `WFCEnv(preset).reset(seed=s+i)`
cell for cell, and steps as minigrid does; autoresets continue the generator as minigrid's reset() does.

minigrid's wheels and sdists (up to 3.2.0) do not ship the pattern images its WFC presets read
(minigrid/envs/wfc/patterns/*.png exist only in its source tree), so neither minigrid's WFC envs nor ours can make a
layout from a plain install. The alignment tests read the images from PP_MINIGRID_WFC_PATTERNS (that folder of a
Minigrid source checkout) or from minigrid's own folder where an install has them, and are skipped otherwise; the
tests that need no image (ids, spaces, keys, the error without images) always run.
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

import parallel_pool as pp

minigrid = pytest.importorskip("minigrid")
pytest.importorskip("networkx")
pytest.importorskip("imageio")
from minigrid.envs.wfc import WFCEnv  # noqa: E402
from minigrid.envs.wfc.config import PATTERN_PATH, WFC_PRESETS  # noqa: E402
from test_minigrid import _python_state, step_alongside  # noqa: E402

PRESETS = [
    "MazeSimple",
    "DungeonMazeScaled",
    "RoomsFabric",
    "ObstaclesBlackdots",
    "ObstaclesAngular",
    "ObstaclesHogs3",
]
IDS = {p: f"MiniGrid-WFC-{p}-v0" for p in PRESETS}


def _pattern_dir() -> Path | None:
    for folder in (os.environ.get("PP_MINIGRID_WFC_PATTERNS"), PATTERN_PATH):
        if folder and all((Path(folder) / Path(WFC_PRESETS[p].pattern_path).name).is_file() for p in PRESETS):
            return Path(folder)
    return None


PATTERNS = _pattern_dir()
needs_images = pytest.mark.skipif(
    PATTERNS is None,
    reason="minigrid's WFC pattern images are not installed (minigrid's wheels do not ship them): set "
    "PP_MINIGRID_WFC_PATTERNS to minigrid/envs/wfc/patterns of a Minigrid source checkout",
)


def _ref(preset: str, max_steps: int | None = None, ensure_connected: bool = True) -> WFCEnv:
    """minigrid's env for the preset (as gymnasium.make registers it), reading the images from PATTERNS."""
    assert PATTERNS is not None
    config = WFC_PRESETS[preset]
    config = dataclasses.replace(config, pattern_path=PATTERNS / Path(config.pattern_path).name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return WFCEnv(wfc_config=config, size=25, ensure_connected=ensure_connected, max_steps=max_steps)


def _ours(preset: str, **kwargs):
    return pp.make(IDS[preset], pattern_dir=str(PATTERNS), **kwargs)


def _steps_to_truncation(env, limit: int) -> int:
    """Turns left (never reaching the goal) until env 0's episode is truncated; its length."""
    left = np.zeros(env.num_envs, dtype=np.int32)
    for step in range(1, limit + 1):
        _, _, terminated, truncated, _ = env.step(left)
        assert not terminated[0]
        if truncated[0]:
            return step
    raise AssertionError(f"no truncation in {limit} steps")


# ---------------------------------------------------------------- what needs no image


def test_ids_spaces_and_keys_are_envpools():
    envpool = pytest.importorskip("envpool")
    listed, theirs = set(pp.list_all_envs()), set(envpool.list_all_envs())
    for preset, task_id in IDS.items():
        assert task_id in listed and task_id in theirs
        spec, ref = pp.make_spec(task_id), envpool.make_spec(task_id)
        assert spec.observation_space == ref.observation_space, task_id
        assert spec.action_space == ref.action_space, task_id
        assert spec.config.max_episode_steps == ref.config.max_episode_steps == 25 * 20, task_id
        for key in ("wfc_preset", "size", "ensure_connected"):
            assert getattr(spec.config, key) == getattr(ref.config, key), (task_id, key)
        assert spec.config.wfc_preset == preset


def test_make_without_the_images_says_where_they_come_from(tmp_path):
    with pytest.raises(ValueError, match=r"SimpleMaze\.png not found.*pattern_dir"):
        pp.make(IDS["MazeSimple"], num_envs=1, pattern_dir=str(tmp_path))
    (tmp_path / "Hogs.png").write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    with pytest.raises(ValueError, match=r"Hogs\.png: cannot read it"):
        pp.make(IDS["ObstaclesHogs3"], num_envs=1, pattern_dir=str(tmp_path))


def test_max_episode_steps_follows_size_as_minigrids_max_steps():
    """minigrid's WFCEnv: max_steps = size * 20 unless given. The pool's max_episode_steps follows a size given at
    make (the largest of per-env sizes); max_episode_steps given explicitly stays, and is every env's max_steps."""
    task = IDS["MazeSimple"]
    assert pp.make_spec(task).max_episode_steps == 500
    spec = pp.make_spec(task, size=10)
    assert spec.max_episode_steps == spec.config.max_episode_steps == 200 and spec.config.max_steps == 0
    assert pp.make_spec(task, num_envs=2, size=[10, 12]).max_episode_steps == 240
    assert pp.make_spec(task, max_steps=30).max_episode_steps == 30
    spec = pp.make_spec(task, size=10, max_episode_steps=77)
    assert spec.max_episode_steps == spec.config.max_steps == 77


@needs_images
def test_episode_limit_follows_size_at_make_and_through_set_config():
    """Episodes are truncated at minigrid's max_steps for the env's size: 10 * 20 when made with size=10, and after
    set_config(size=...) from the env's next reset on; a size whose max_steps the pool's time limit would cut short
    is refused (set_config, make), naming the keys."""
    env = _ours("MazeSimple", num_envs=1, seed=0, size=10)
    env.reset()
    assert _steps_to_truncation(env, 600) == 200
    env = _ours("MazeSimple", num_envs=1, seed=0)
    env.set_config(0, size=12)
    env.reset()
    assert _steps_to_truncation(env, 600) == 240
    with pytest.raises(ValueError, match="size 30 gives max_steps 600 .* above the pool's max_episode_steps 500"):
        env.set_config(0, size=30)
    with pytest.raises(ValueError, match="size 40 gives max_steps 800 .* max_episode_steps 100"):
        _ours("MazeSimple", num_envs=1, size=40, max_episode_steps=100, max_steps=0)
    env = _ours("MazeSimple", num_envs=1, seed=0, max_episode_steps=50)
    env.set_config(0, size=12)  # an explicit limit does not follow the size
    env.reset()
    assert _steps_to_truncation(env, 600) == 50


@pytest.mark.parametrize("key, value", [("size", 2), ("wfc_preset", "Maze"), ("agent_view_size", 4)])
def test_bad_config_raises(key, value):
    with pytest.raises(ValueError, match=key):
        pp.make_spec(IDS["MazeSimple"], **{key: value})


# ---------------------------------------------------------------- exact with minigrid


def _layouts_equal_minigrid(preset: str, seeds: list[int], monkeypatch) -> int:
    """Every cell, the agent and its direction of our layouts (env i of a pool seeded seeds[0] is seeded
    seeds[0] + i) equal minigrid's for the same seeds. Returns how many had a largest open area of fewer than half
    the open cells, where networkx lists the area's cells in CPython's set order (the start and the goal are
    picked by their position in that list)."""
    small_area = []
    largest = WFCEnv._get_largest_component

    def record(graph):  # graph: the open cells (the call drops the walls); the result: the largest area
        kept = largest(graph)
        small_area.append(2 * kept.number_of_nodes() < graph.number_of_nodes())
        return kept

    monkeypatch.setattr(WFCEnv, "_get_largest_component", staticmethod(record))
    assert seeds == list(range(seeds[0], seeds[0] + len(seeds)))
    ours = _ours(preset, num_envs=len(seeds), seed=seeds[0])
    obs, _ = ours.reset()
    ref = _ref(preset)
    for i, seed in enumerate(seeds):
        robs, _ = ref.reset(seed=seed)
        np.testing.assert_array_equal(ours.get_state(i), _python_state(ref), err_msg=f"{preset} seed {seed}")
        np.testing.assert_array_equal(obs["image"][i], robs["image"], err_msg=f"{preset} seed {seed}")
        assert obs["direction"][i] == robs["direction"]
    ours.close()
    return sum(small_area)


# minigrid's WFC takes 1 to 7 s per layout here: the default set compares two seeds per preset (MazeSimple's seed 0
# has a small largest area), the slow sweep 30 more.
@needs_images
@pytest.mark.parametrize("preset", PRESETS)
def test_layouts_equal_minigrid(preset, monkeypatch):
    small = _layouts_equal_minigrid(preset, [0, 1], monkeypatch)
    assert preset != "MazeSimple" or small >= 1


@needs_images
@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESETS)
def test_layouts_equal_minigrid_sweep(preset, monkeypatch):
    small = _layouts_equal_minigrid(preset, list(range(2, 32)), monkeypatch)
    assert preset != "MazeSimple" or small >= 3


@needs_images
def test_unconnected_layouts_and_reseeding_equal_minigrid():
    """ensure_connected=False keeps every open cell (the start and goal drawn from all of them, row-major), and
    reset(seed=s) reseeds as minigrid's reset(seed=s) does."""
    ours = _ours("MazeSimple", num_envs=2, seed=0, ensure_connected=False)
    ours.reset()
    ref = _ref("MazeSimple", ensure_connected=False)
    for i in range(2):
        ref.reset(seed=i)
        np.testing.assert_array_equal(ours.get_state(i), _python_state(ref), err_msg=f"seed {i}")
    ours.close()
    ours = _ours("ObstaclesBlackdots", num_envs=2, seed=0)
    ours.reset()
    ours.reset(seed=[11, 12])
    ref = _ref("ObstaclesBlackdots")
    for i, seed in enumerate([11, 12]):
        ref.reset(seed=seed)
        np.testing.assert_array_equal(ours.get_state(i), _python_state(ref), err_msg=f"reset(seed={seed})")
    ours.close()


def _episodes_equal_minigrid(preset: str, seed: int, steps: int, max_steps: int | None):
    """Random actions, compared every step with minigrid's env. Episodes that end are reset on both sides (ours by
    its autoreset, which continues the generator as minigrid's reset() without a seed does). Returns the ends."""
    ours = _ours(preset, num_envs=1, seed=seed, **({} if max_steps is None else {"max_episode_steps": max_steps}))
    ref = _ref(preset, max_steps=max_steps)
    rng = np.random.default_rng(seed)
    # forward three times as often as any other action, so that the agent walks into walls and goals
    actions = (int(rng.choice([0, 1, 2, 2, 2, 3, 4, 5, 6])) for _ in range(steps))
    ended = step_alongside(ours, ref, seed, actions, preset)
    ours.close()
    return ended


@needs_images
def test_episodes_equal_minigrid():
    """The preset whose reference is fastest, with episodes cut at 10 steps: 3 generated layouts compared."""
    assert _episodes_equal_minigrid("ObstaclesBlackdots", 7, 30, max_steps=10) >= 2


@needs_images
@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESETS)
def test_episodes_equal_minigrid_sweep(preset):
    _episodes_equal_minigrid(preset, 3, 150, max_steps=None)
    assert _episodes_equal_minigrid(preset, 5, 100, max_steps=25) >= 3


@needs_images
@pytest.mark.parametrize("preset", PRESETS)
def test_every_open_cell_is_reachable_from_the_agent(preset):
    """ensure_connected's promise, on 300 of our layouts: the border is wall, the goal is on an open cell other
    than the agent's, and every open cell (the goal's included) is reachable from the agent."""
    n = 300
    ours = _ours(preset, num_envs=n, seed=1000)
    ours.reset()
    open_share = []
    for i in range(n):
        s = np.asarray(ours.get_state(i))
        w, h, ax, ay = (int(v) for v in s[:4])
        types = s[13 : 13 + 7 * w * h].reshape(h, w, 7)[:, :, 0].T  # [x][y]: object type, 0 none
        assert (types[0, :] == 2).all() and (types[-1, :] == 2).all() and (types[:, 0] == 2).all()
        assert (types[:, -1] == 2).all()
        goals = np.argwhere(types == 8)
        assert len(goals) == 1 and tuple(goals[0]) != (ax, ay) and types[ax, ay] == 0
        passable = (types == 0) | (types == 8)
        seen, todo = {(ax, ay)}, [(ax, ay)]
        while todo:
            x, y = todo.pop()
            for nx_, ny_ in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
                if passable[nx_, ny_] and (nx_, ny_) not in seen:
                    seen.add((nx_, ny_))
                    todo.append((nx_, ny_))
        assert len(seen) == passable.sum(), f"{preset} env {i}: {passable.sum() - len(seen)} open cells unreachable"
        open_share.append(passable.sum() / (w - 2) / (h - 2))
    ours.close()
    assert 0.0 < np.mean(open_share) < 1.0


@needs_images
def test_snapshot_restores_layout_and_generator():
    """A snapshot (get_state of env ids) taken at reset and restored later replays the same steps and the same
    layouts drawn at the autoresets (10-step episodes), since it holds the numpy generator."""
    ours = _ours("RoomsFabric", num_envs=1, seed=5, max_episode_steps=10)
    ours.reset()
    snap = ours.get_state([0])
    first = [ours.step(np.array([a % 3]))[0]["image"].copy() for a in range(35)]
    ours.set_state([0], snap)
    again = [ours.step(np.array([a % 3]))[0]["image"].copy() for a in range(35)]
    for t, (x, y) in enumerate(zip(first, again)):
        np.testing.assert_array_equal(x, y, err_msg=f"step {t}")
    assert len({x.tobytes() for x in first[11:]}) > 1
    ours.close()
