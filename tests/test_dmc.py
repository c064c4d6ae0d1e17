"""DeepMind Control Suite family (core/envs/mujoco_dmc): dmc-a's domains aligned with dm_control 1.0.50
(tests/dmc_reference.py), and the family's shared behaviour: specs, front-ends, state round trips."""

from __future__ import annotations

import pytest

pytest.importorskip("dm_control")

import dmc_reference as ref  # noqa: E402

import parallel_pool as pp  # noqa: E402

if "CartpoleSwingup-v1" not in pp.list_all_envs():
    pytest.skip("the mujoco_dmc family is not in this build (PP_SKIP_FAMILIES)", allow_module_level=True)

# task id -> (dm_control domain, task)
TASKS = {
    "CartpoleBalance-v1": ("cartpole", "balance"),
    "CartpoleBalanceSparse-v1": ("cartpole", "balance_sparse"),
    "CartpoleSwingup-v1": ("cartpole", "swingup"),
    "CartpoleSwingupSparse-v1": ("cartpole", "swingup_sparse"),
    "CartpoleTwoPoles-v1": ("cartpole", "two_poles"),
    "CartpoleThreePoles-v1": ("cartpole", "three_poles"),
}
CI_TASKS = ["CartpoleSwingup-v1", "CartpoleThreePoles-v1"]


@pytest.mark.parametrize("task_id", CI_TASKS)
def test_alignment(task_id):
    ref.check_alignment(task_id, *TASKS[task_id], steps=100, tol=0.0)


@pytest.mark.slow
@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_alignment_full_episode(task_id):
    assert ref.check_alignment(task_id, *TASKS[task_id], steps=1001) == 1000


@pytest.mark.parametrize("task_id", ["CartpoleBalance-v1", "CartpoleSwingup-v1"])
def test_reset_distribution(task_id):
    ref.check_reset_distribution(task_id, *TASKS[task_id])
