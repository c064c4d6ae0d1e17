"""Family config keys against EnvPool 1.2.5 and reward thresholds against gymnasium: for a representative id per
family, every family-specific key EnvPool's spec has is accepted with EnvPool's default (or rejected with an
error that names what to use instead), and each task's reward_threshold is gymnasium's (inf: gymnasium has none)."""

from __future__ import annotations

import math

import pytest

import parallel_pool as pp

envpool = pytest.importorskip("envpool")

# Keys every EnvPool env has; the front-end layer (not the env families) owns them. reward_threshold follows
# gymnasium, not EnvPool (test_reward_threshold_is_gymnasiums).
POOL_KEYS = {
    "num_envs",
    "batch_size",
    "num_threads",
    "seed",
    "max_episode_steps",
    "thread_affinity_offset",
    "max_num_players",
    "env_seed",
    "gym_reset_return_info",
    "base_path",
    "reward_threshold",
}


def _default_differs_on_purpose(task, key):
    """MuJoCo -v4: post_constraint is True as in gymnasium 1.x (EnvPool: False; docs/mujoco_gym.md says why).
    CarRacing: lap_complete_percent is gymnasium's 0.95 (EnvPool stores it as float32, 0.949999988; docs/box2d.md)."""
    if task.startswith("CarRacing"):
        return key == "lap_complete_percent"
    return key == "post_constraint" and task.endswith("-v4")


REPRESENTATIVE = [
    "CartPole-v1",
    "Pendulum-v1",
    "Acrobot-v1",
    "MountainCarContinuous-v0",
    "Catch-v0",
    "FrozenLake8x8-v1",
    "Taxi-v3",
    "NChain-v0",
    "CliffWalking-v0",
    "Blackjack-v1",
    "Pong-v5",
    "Ant-v4",
    "Ant-v5",
    "Hopper-v4",
    "Humanoid-v5",
    "Pusher-v5",
    "LunarLander-v3",
    "BipedalWalkerHardcore-v3",
    "CarRacing-v3",
]


def _built(task):
    if task not in pp.list_all_envs():
        pytest.skip(f"{task}'s family is not built")


@pytest.mark.parametrize("task", REPRESENTATIVE)
def test_every_envpool_family_key_is_accepted_with_its_default(task):
    _built(task)
    theirs = envpool.make_spec(task).config._asdict()
    ours = pp.make_spec(task).config._asdict()
    family_keys = [k for k in theirs if k not in POOL_KEYS]
    missing = set(family_keys) - set(ours)
    assert not missing, f"{task}: EnvPool keys not accepted: {sorted(missing)}"
    for key in family_keys:
        if not _default_differs_on_purpose(task, key):
            assert ours[key] == theirs[key], f"{task}: default of {key!r}"
        # EnvPool's value is accepted as given
        assert getattr(pp.make_spec(task, **{key: theirs[key]}).config, key) == theirs[key]


def test_gymnasium_v5_render_camera_selects_the_camera():
    _built("Hopper-v4")
    assert pp.make_spec("Hopper-v4").config.gymnasium_v5_render_camera is False
    assert pp.make_spec("Hopper-v5").config.gymnasium_v5_render_camera is True


def _gymnasium_id(task):
    # the old MuJoCo ids (-v2/-v3) are gymnasium's -v4 envs (which gymnasium no longer registers under them)
    if pp.make_spec(task).env_class.endswith("-v4"):
        return task.rsplit("-", 1)[0] + "-v4"
    # EnvPool's Box2D -v2 ids are gymnasium's -v3 envs (docs/box2d.md)
    renamed = {"Taxi-v3": "Taxi-v4", "CliffWalking-v0": "CliffWalking-v1", "LunarLander-v2": "LunarLander-v3"}
    renamed |= {"LunarLanderContinuous-v2": "LunarLanderContinuous-v3", "CarRacing-v2": "CarRacing-v3"}
    return renamed.get(task, task)


def _threshold(task):
    """The task's reward_threshold, with inf (the C++ "none") read as None."""
    t = pp.make_spec(task).config.reward_threshold
    return None if t is None or t == math.inf else t


def test_reward_threshold_is_gymnasiums():
    import gymnasium as gym

    compared = 0
    for task in pp.list_all_envs():
        if pp.make_spec(task).env_class == "Atari":  # checked below
            continue
        try:
            theirs = gym.spec(_gymnasium_id(task)).reward_threshold
        except gym.error.Error:
            theirs = None
        assert _threshold(task) == theirs, task
        compared += theirs is not None
    assert compared >= 15


def test_atari_tasks_have_no_threshold():
    _built("Pong-v5")
    assert _threshold("Pong-v5") is None and _threshold("Breakout-v5") is None
