"""DMC locomotion domains (cheetah, hopper, walker, humanoid, humanoid_CMU, swimmer, fish), aligned with
dm_control 1.0.50's suite on the same `mujoco` package, through the shared harness (tests/support/dmc_reference.py).

Alignment: our reset state (dm_control's get_state layout, then the swimmer's / the fish's target, which dm_control
keeps in the model) goes into dm_control's physics; both step with the same random actions. Observations and
rewards agree to 1e-6 (in practice to ~1e-13: the same libmujoco runs the same calls; the only difference left is
the constraint solver's warm start after our reset, which dm_control's set_state does not carry), and the episode
ends at the time limit with discount 1 as in dm_control. Reset distributions: the harness's per-dimension
two-sample tests on the physics state, plus the same test on the targets.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("dm_control")

import dmc_reference as ref  # noqa: E402

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
CI_TASKS = [
    "CheetahRun-v1",
    "HopperHop-v1",
    "WalkerWalk-v1",
    "HumanoidRun-v1",
    "HumanoidCMUStand-v1",
    "SwimmerSwimmer6-v1",
    "FishSwim-v1",
]


FEATURES = ("joint_angles", "head_height", "extremities", "torso_vertical", "com_velocity")
# EnvPool's keys that dm_control's task does not report (EnvPool declares one key set per domain); ours computes
# them the same way (docs/decisions.md, "DMC locomotion domains").
EXTRA_KEYS = {
    "HumanoidStand-v1": ("position",),
    "HumanoidWalk-v1": ("position",),
    "HumanoidRun-v1": ("position",),
    "HumanoidRunPureState-v1": FEATURES,
    "FishUpright-v1": ("target",),
}


def swimmer_target(physics, extra: np.ndarray) -> None:
    """Our swimmer's task state (the target's x, y) into dm_control's model: the target geom and its light."""
    physics.named.model.geom_pos["target", ["x", "y"]] = extra
    physics.named.model.light_pos["target_light", ["x", "y"]] = extra


def fish_target(physics, extra: np.ndarray) -> None:
    """Our FishSwim's task state (the target's position) into dm_control's model."""
    physics.named.model.geom_pos["target"] = extra


def task_state_writer(task_id: str):
    if task_id.startswith("Swimmer"):
        return swimmer_target
    return fish_target if task_id == "FishSwim-v1" else None


def align(task_id: str, steps: int) -> int:
    domain, task = TASKS[task_id]
    return ref.check_alignment(
        task_id,
        domain,
        task,
        steps=steps,
        seed=3,
        task_state=task_state_writer(task_id),
        extra_keys=EXTRA_KEYS.get(task_id, ()),
    )


@pytest.mark.parametrize("task_id", CI_TASKS)
def test_align_ci(task_id):
    assert align(task_id, steps=100) == 100


@pytest.mark.slow
@pytest.mark.parametrize("task_id", list(TASKS))
def test_align_to_time_limit(task_id):
    # every locomotion task runs to dm_control's time limit: 1000 control steps
    assert align(task_id, steps=1001) == 1000


@pytest.mark.parametrize("task_id", ["CheetahRun-v1", "WalkerWalk-v1", "HumanoidRun-v1", "SwimmerSwimmer6-v1"])
def test_reset_distribution_ci(task_id):
    ref.check_reset_distribution(task_id, *TASKS[task_id], n=200)


@pytest.mark.slow
@pytest.mark.parametrize("task_id", list(TASKS))
def test_reset_distribution(task_id):
    ref.check_reset_distribution(task_id, *TASKS[task_id], n=500)


def _targets_ours(task_id: str, n: int) -> np.ndarray:
    """The targets of n successive resets of one env (one generator, as on dm_control's side)."""
    env = pp.make(task_id, num_envs=1, seed=0)
    dims = 3 if task_id == "FishSwim-v1" else 2
    out = []
    for _ in range(n):
        env.reset()
        out.append(env.get_state(0)[-dims:])
    env.close()
    return np.asarray(out)


def _targets_dm(task_id: str, n: int) -> np.ndarray:
    env = ref.dm_env(*TASKS[task_id], seed=0)
    dims = 3 if task_id == "FishSwim-v1" else 2
    out = []
    for _ in range(n):
        env.reset()
        out.append(env.physics.named.model.geom_pos["target"][:dims].copy())
    return np.asarray(out)


@pytest.mark.parametrize("task_id", ["SwimmerSwimmer6-v1", "FishSwim-v1"])
def test_target_distribution(task_id):
    """The targets our resets draw against dm_control's: the harness's two-sample test, per coordinate (the
    swimmer's is a mixture: within 0.3 with probability 0.2, else within 2)."""
    from scipy import stats

    n, alpha = 400, 1e-3
    ours, theirs = _targets_ours(task_id, n), _targets_dm(task_id, n)
    for i in range(ours.shape[1]):
        p = stats.ks_2samp(ours[:, i], theirs[:, i]).pvalue
        assert p > alpha / ours.shape[1], (task_id, i, p)
    box = 0.4 if task_id == "FishSwim-v1" else 2.0
    assert np.all(np.abs(ours[:, :2]) <= box)


@pytest.mark.parametrize("task_id", ["SwimmerSwimmer6-v1", "FishSwim-v1"])
def test_set_state_moves_the_target(task_id):
    """get_state carries the target; set_state with another target changes what the next step observes, the same
    way as in dm_control (alignment continues from the edited state)."""
    env = pp.make(task_id, env_type="dm", num_envs=1, seed=1)
    env.reset()
    state = env.get_state(0)
    k = 3 if task_id == "FishSwim-v1" else 2
    state[-k:] = 0.1 * np.arange(1, k + 1)
    env.set_state(0, state)
    np.testing.assert_array_equal(env.get_state(0), state)
    dm = ref.dm_env(*TASKS[task_id], seed=1)
    dm.reset()
    ref.put_state(dm.physics, state, task_state_writer(task_id))
    action = np.zeros(dm.action_spec().shape)
    ts, r = env.step(action[None]), dm.step(action)
    ref.assert_obs_close(ref.first_row(ts.observation), r.observation, 1e-9, f"{task_id} after set_state")
    assert abs(float(ts.reward[0]) - r.reward) <= 1e-9


def test_unknown_task_name_is_refused():
    with pytest.raises(ValueError, match="task_name"):
        pp.make("WalkerWalk-v1", task_name="jog")


@pytest.mark.parametrize("task_id", list(TASKS))
def test_envpool_names_shapes_and_config(task_id):
    """EnvPool's keys and shapes (fish: in dm_control's order, target before velocity), action box and config
    defaults."""
    envpool = pytest.importorskip("envpool")
    theirs = envpool.make_spec(task_id)
    ours = pp.make_spec(task_id)
    their_obs = {k: v.shape for k, v in theirs.observation_spec()._asdict().items() if k not in ("env_id", "players")}
    our_obs = {k: v.shape for k, v in ours.observation_spec()._asdict().items() if k not in ref.POOL_FIELDS}
    assert our_obs == their_obs
    ta, oa = theirs.action_spec(), ours.action_spec()
    assert oa.shape == ta.shape and oa.dtype == np.float64
    assert np.array_equal(oa.minimum, ta.minimum) and np.array_equal(oa.maximum, ta.maximum)
    for key in ("max_episode_steps", "frame_skip", "task_name"):
        assert getattr(ours.config, key) == getattr(theirs.config, key), key


@pytest.mark.parametrize("task_id", ["HumanoidRun-v1", "HumanoidRunPureState-v1", "FishUpright-v1"])
def test_extra_keys_are_computed_as_in_dm_control(task_id):
    """The keys dm_control does not report for a task hold what dm_control computes for its sibling task from the
    same state: qpos as `position`, the humanoid features, the fish's (hidden) target seen from the mouth."""
    sibling = {"HumanoidRun-v1": "run_pure_state", "HumanoidRunPureState-v1": "run", "FishUpright-v1": "swim"}[task_id]
    env = pp.make(task_id, env_type="dm", num_envs=1, seed=2)
    ts = env.step(ref.random_actions(pp.make_spec(task_id).action_spec(), 1, seed=0))  # the reset row
    ts = env.step(ref.random_actions(pp.make_spec(task_id).action_spec(), 1, seed=1))
    dm = ref.dm_env(TASKS[task_id][0], sibling)
    dm.reset()
    ref.put_state(dm.physics, env.get_state(0))
    if task_id == "FishUpright-v1":  # the sibling (Swim) moved its target at reset: back to the model's default
        dm.physics.named.model.geom_pos["target"] = ref.dm_env("fish", "upright").physics.named.model.geom_pos["target"]
        dm.physics.forward()
    want = dm.task.get_observation(dm.physics)
    ours = ref.first_row(ts.observation)
    for key in EXTRA_KEYS[task_id]:
        np.testing.assert_allclose(ours[key], want[key], rtol=0, atol=1e-9, err_msg=key)
