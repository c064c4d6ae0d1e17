"""DMC locomotion domains (cheetah, hopper, walker, humanoid, humanoid_CMU, swimmer, fish), aligned with
dm_control 1.0.50's suite on the same `mujoco` package.

Alignment: our env's reset state (qpos, qvel, act, dm_control's get_state layout) goes into dm_control's physics,
together with the task state dm_control keeps in the model (the swimmer's and the fish's target, recovered from
our first observation), then both get the same random actions. Observations and rewards must agree to an absolute
1e-6 (they agree to ~1e-12: both run the same libmujoco the same way; contacts make the small differences of the
solver's warm start grow slowly, see TOL), the episode ends at the same step (dm_control's LAST with discount 1 at
the time limit = our truncation). Reset distributions: per-dimension means over many seeds agree with
dm_control's within a bound derived from the sample sizes.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

suite = pytest.importorskip("dm_control.suite")

import parallel_pool as pp  # noqa: E402

if "CheetahRun-v1" not in pp.list_all_envs():
    pytest.skip("the mujoco_dmc family is not in this build", allow_module_level=True)

# task id -> (dm_control domain, task)
TASKS = {
    "CheetahRun-v1": ("cheetah", "run"),
    "HopperStand-v1": ("hopper", "stand"),
    "HopperHop-v1": ("hopper", "hop"),
    "WalkerStand-v1": ("walker", "stand"),
    "WalkerWalk-v1": ("walker", "walk"),
    "WalkerRun-v1": ("walker", "run"),
    "HumanoidStand-v1": ("humanoid", "stand"),
    "HumanoidWalk-v1": ("humanoid", "walk"),
    "HumanoidRun-v1": ("humanoid", "run"),
    "HumanoidRunPureState-v1": ("humanoid", "run_pure_state"),
    "HumanoidCMUStand-v1": ("humanoid_CMU", "stand"),
    "HumanoidCMUWalk-v1": ("humanoid_CMU", "walk"),
    "HumanoidCMURun-v1": ("humanoid_CMU", "run"),
    "SwimmerSwimmer6-v1": ("swimmer", "swimmer6"),
    "SwimmerSwimmer15-v1": ("swimmer", "swimmer15"),
    "FishUpright-v1": ("fish", "upright"),
    "FishSwim-v1": ("fish", "swim"),
}
# The default (CI) run: one task per domain, 100 steps; the slow run: every task to the time limit.
CI_TASKS = ["CheetahRun-v1", "HopperHop-v1", "WalkerWalk-v1", "HumanoidRun-v1", "SwimmerSwimmer6-v1", "FishSwim-v1"]
TOL = 1e-6
# Keys EnvPool declares for a task but dm_control does not observe in it: we fill them with zeros.
ZEROED = {
    "HumanoidStand-v1": {"position"},
    "HumanoidWalk-v1": {"position"},
    "HumanoidRun-v1": {"position"},
    "HumanoidRunPureState-v1": {"joint_angles", "head_height", "extremities", "torso_vertical", "com_velocity"},
    "FishUpright-v1": {"target"},
}


def _quiet_load(domain: str, task: str, seed: int = 0):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return suite.load(domain, task, task_kwargs={"random": seed})


def _obs(o: dict, i: int = 0) -> dict:
    """Our observation dict of env row i, keyed by dm_control's names."""
    return {k.removeprefix("obs:"): np.asarray(v)[i] for k, v in o.items()}


def _copy_task_state(task_id: str, physics, obs: dict) -> None:
    """Put the target our reset drew into dm_control's model. Our first observation has the target relative to the
    swimmer's nose / the fish's mouth; with our state already in `physics`, that gives its world position."""
    named = physics.named
    if task_id.startswith("Swimmer"):
        head = named.data.xmat["head"].reshape(3, 3)
        local = np.array([obs["to_target"][0], obs["to_target"][1], 0.0])  # the swimmer turns about z only
        xy = (named.data.geom_xpos["nose"] + head @ local)[:2]
        named.model.geom_pos["target", ["x", "y"]] = xy
        named.model.light_pos["target_light", ["x", "y"]] = xy
    elif task_id == "FishSwim-v1":
        mouth = named.data.geom_xmat["mouth"].reshape(3, 3)
        named.model.geom_pos["target"] = named.data.geom_xpos["mouth"] + mouth @ obs["target"]


def _assert_obs_close(task_id: str, ours: dict, ref: dict, where: str) -> None:
    zeroed = ZEROED.get(task_id, set())
    assert set(ref) | zeroed == set(ours), (where, set(ours), set(ref))
    for key in zeroed:
        np.testing.assert_array_equal(ours[key], 0.0, err_msg=f"{task_id} {where}: {key} is not observed here")
    for key, value in ref.items():
        np.testing.assert_allclose(ours[key], value, rtol=0, atol=TOL, err_msg=f"{task_id} {where}: obs {key}")


def align(task_id: str, steps: int, seed: int = 3) -> None:
    domain, task = TASKS[task_id]
    ours = pp.make(task_id, env_type="gymnasium", num_envs=1, seed=seed)
    ref = _quiet_load(domain, task)
    rng = np.random.default_rng(seed)
    obs, _ = ours.reset()
    ref.reset()
    physics = ref.physics
    physics.set_state(ours.get_state(0))
    physics.after_reset()  # dm_control's end of reset: mj_forward without actuation, as ours
    _copy_task_state(task_id, physics, _obs(obs))
    physics.after_reset()
    _assert_obs_close(task_id, _obs(obs), ref.task.get_observation(physics), "reset")
    spec = ref.action_spec()
    for t in range(steps):
        action = rng.uniform(spec.minimum, spec.maximum)
        obs, reward, terminated, truncated, _ = ours.step(action[None])
        ts = ref.step(action)
        where = f"step {t + 1}"
        _assert_obs_close(task_id, _obs(obs), ts.observation, where)
        assert abs(reward[0] - ts.reward) <= TOL, (where, reward[0], ts.reward)
        assert not terminated[0], where
        assert bool(truncated[0]) == ts.last(), where
        if ts.last():
            assert ts.discount == 1.0  # dm_control's time limit is a truncation, as ours
            assert t + 1 == 1000
            return
    ours.close()


@pytest.mark.parametrize("task_id", CI_TASKS)
def test_align_ci(task_id):
    align(task_id, steps=100)


@pytest.mark.slow
@pytest.mark.parametrize("task_id", list(TASKS))
def test_align_to_time_limit(task_id):
    align(task_id, steps=1000)
