"""DeepMind Control Suite family (core/envs/mujoco_dmc): dmc-a's domains aligned with dm_control 1.0.50
(tests/dmc_reference.py), and the family's shared behaviour: specs, front-ends, state round trips."""

from __future__ import annotations

import pytest

pytest.importorskip("dm_control")

import dmc_reference as ref  # noqa: E402

import parallel_pool as pp  # noqa: E402

if "CartpoleSwingup-v1" not in pp.list_all_envs():
    pytest.skip("the mujoco_dmc family is not in this build (PP_SKIP_FAMILIES)", allow_module_level=True)


def reacher_target(physics, extra):
    physics.named.model.geom_pos["target", ["x", "y"]] = extra


def finger_target(physics, extra):
    physics.named.model.site_pos["target", ["x", "z"]] = extra


def point_mass_gains(physics, extra):
    physics.model.wrap_prm[:4] = extra


# task id -> (dm_control domain, task, options for the harness)
TASKS: dict[str, tuple[str, str, dict]] = {
    "AcrobotSwingup-v1": ("acrobot", "swingup", {}),
    "AcrobotSwingupSparse-v1": ("acrobot", "swingup_sparse", {}),
    "BallInCupCatch-v1": ("ball_in_cup", "catch", {}),
    "CartpoleBalance-v1": ("cartpole", "balance", {}),
    "CartpoleBalanceSparse-v1": ("cartpole", "balance_sparse", {}),
    "CartpoleSwingup-v1": ("cartpole", "swingup", {}),
    "CartpoleSwingupSparse-v1": ("cartpole", "swingup_sparse", {}),
    "CartpoleTwoPoles-v1": ("cartpole", "two_poles", {}),
    "CartpoleThreePoles-v1": ("cartpole", "three_poles", {}),
    "FingerSpin-v1": (
        "finger",
        "spin",
        {"task_state": finger_target, "extra_keys": ("target_position", "dist_to_target")},
    ),
    "FingerTurnEasy-v1": ("finger", "turn_easy", {"task_state": finger_target}),
    "FingerTurnHard-v1": ("finger", "turn_hard", {"task_state": finger_target}),
    "PendulumSwingup-v1": ("pendulum", "swingup", {}),
    "PointMassEasy-v1": ("point_mass", "easy", {"task_state": point_mass_gains}),
    "PointMassHard-v1": ("point_mass", "hard", {"task_state": point_mass_gains}),
    "ReacherEasy-v1": ("reacher", "easy", {"task_state": reacher_target}),
    "ReacherHard-v1": ("reacher", "hard", {"task_state": reacher_target}),
}
CI_TASKS = ["CartpoleSwingup-v1", "CartpoleThreePoles-v1", "FingerTurnHard-v1", "PointMassHard-v1", "BallInCupCatch-v1"]


def align(task_id: str, **kwargs) -> int:
    domain, task, options = TASKS[task_id]
    return ref.check_alignment(task_id, domain, task, **options, **kwargs)


@pytest.mark.parametrize("task_id", CI_TASKS)
def test_alignment(task_id):
    align(task_id, steps=100)


@pytest.mark.slow
@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_alignment_full_episode(task_id):
    assert align(task_id, steps=1001) == 1000


@pytest.mark.parametrize("task_id", ["CartpoleSwingup-v1", "ReacherHard-v1"])
def test_reset_distribution(task_id):
    domain, task, _ = TASKS[task_id]
    ref.check_reset_distribution(task_id, domain, task)


@pytest.mark.slow
@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_reset_distribution_all(task_id):
    domain, task, _ = TASKS[task_id]
    ref.check_reset_distribution(task_id, domain, task)
