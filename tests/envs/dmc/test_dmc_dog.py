"""DeepMind Control Suite family (core/envs/mujoco_dmc/dog.h): the five Dog tasks aligned with dm_control 1.0.50
step by step (tests/support/dmc_reference.py), their reset distributions, EnvPool's spec, and the model cache
writing dog's meshes where dog.xml looks for them."""

from __future__ import annotations

import os
import struct

import numpy as np
import pytest

pytest.importorskip("dm_control")
mujoco = pytest.importorskip("mujoco")

import dmc_reference as ref  # noqa: E402

import parallel_pool as pp  # noqa: E402
from parallel_pool import dmc_models  # noqa: E402

if "DogStand-v1" not in pp.list_all_envs():
    pytest.skip("the mujoco_dmc family is not in this build (PP_SKIP_FAMILIES)", allow_module_level=True)

# task id -> dm_control's dog task
TASKS = {
    "DogStand-v1": "stand",
    "DogWalk-v1": "walk",
    "DogTrot-v1": "trot",
    "DogRun-v1": "run",
    "DogFetch-v1": "fetch",
}
# EnvPool's dog observation has fetch's keys for every task; dm_control's other tasks lack them (zeros here)
FETCH_ONLY = ("ball_state", "target_position")
# bit-identical where written; dm_control's numpy/OpenBLAS kernels are chosen per CPU (last-bit differences)
ULPS = 1e-12


def _align(task_id: str, steps: int, seed: int = 0) -> int:
    task = TASKS[task_id]
    extra = () if task == "fetch" else FETCH_ONLY
    # bit-exact: the same MuJoCo, and every observation and reward factor computed in dm_control's order
    return ref.check_alignment(task_id, "dog", task, steps=steps, seed=seed, tol=ULPS, extra_keys=extra)


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_alignment(task_id):
    assert _align(task_id, 150) == 150


@pytest.mark.slow
@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_alignment_full_episode(task_id):
    """1000 steps (15 s of 0.015 s control steps), the last one a time limit with discount 1 in both."""
    assert _align(task_id, 1001, seed=3) == 1000


def test_rewards_are_not_trivial():
    """The alignment holds on informative rewards: they vary within an episode and between tasks (the move tasks
    scale standing by their forward factor, fetch by reaching and bringing the ball)."""
    per_task = {}
    for task_id in ("DogStand-v1", "DogRun-v1", "DogFetch-v1"):
        env = pp.make(task_id, env_type="dm", num_envs=1, seed=2)
        env.reset()
        actions = ref.random_actions(env.action_spec(), 60, seed=2)
        per_task[task_id] = np.array([float(env.step(a[None]).reward[0]) for a in actions])
    for task_id, rewards in per_task.items():
        assert np.all((rewards >= 0) & (rewards <= 1)), task_id
        assert np.ptp(rewards) > 0, f"{task_id}: constant reward {rewards[0]}"
    assert not np.array_equal(per_task["DogStand-v1"], per_task["DogRun-v1"])


@pytest.mark.parametrize("task_id", ["DogFetch-v1"])
def test_reset_distribution(task_id):
    """Heading, root velocities, activations and (fetch) the thrown ball, per state dimension vs dm_control."""
    ref.check_reset_distribution(task_id, "dog", TASKS[task_id], n=150)


@pytest.mark.slow
@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_reset_distribution_all(task_id):
    ref.check_reset_distribution(task_id, "dog", TASKS[task_id])


def test_fetch_only_keys_are_zeros_elsewhere():
    env = pp.make("DogWalk-v1", env_type="dm", num_envs=2, seed=0)
    ts = env.reset()
    for _ in range(3):
        ts = env.step(np.zeros((2, 38)))
    for key in FETCH_ONLY:
        assert not np.asarray(getattr(ts.observation, key)).any(), key
    fetch = pp.make("DogFetch-v1", env_type="dm", num_envs=2, seed=0)
    ts = fetch.reset()
    assert np.asarray(ts.observation.ball_state).all()


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_envpool_names_config_and_spec(task_id):
    import test_dmc

    test_dmc.test_envpool_names_config_and_spec(task_id)


def test_front_ends_agree():
    import test_dmc

    test_dmc.test_front_ends_agree("DogFetch-v1")


def test_state_moves_between_dm_control_and_us():
    """dm_control's physics.get_state() mid-episode goes into our env; both continue identically. The state is
    qpos, qvel, act: the solver's warm start is not part of it, so dm_control restarts from the state too (as its
    reset does) and the two agree bit for bit."""
    dm = ref.dm_env("dog", "run", seed=4)
    dm.reset()
    actions = ref.random_actions(dm.action_spec(), 40, seed=4)
    for a in actions[:20]:
        dm.step(a)
    state = dm.physics.get_state()
    ref.put_state(dm.physics, state)
    env = pp.make("DogRun-v1", env_type="dm", num_envs=1, seed=4)
    env.reset()
    env.set_state(0, state)
    for t, a in enumerate(actions[20:]):
        ts, r = env.step(a[None]), dm.step(a)
        ref.assert_obs_close(ref.first_row(ts.observation), r.observation, ULPS, f"step {t}", FETCH_ONLY)
        assert abs(float(ts.reward[0]) - r.reward) <= ULPS


# ---- the model cache: dog.xml reads its meshes and textures from meshdir/texturedir "dog_assets/", while
# dm_control's builder returns them by bare file name (MuJoCo's virtual file system matches bare names)


def _binary_stl(triangles: list[tuple[tuple[float, float, float], ...]]) -> bytes:
    out = bytearray(80) + struct.pack("<I", len(triangles))
    for tri in triangles:
        out += struct.pack("<3f", 0, 0, 0) + b"".join(struct.pack("<3f", *v) for v in tri) + b"\0\0"
    return bytes(out)


def test_cache_writes_bare_named_assets_where_the_compiler_looks(tmp_path):
    """A bare-named asset lands in the XML's meshdir (and texturedir where it differs); named paths stay as they
    are; MuJoCo compiles the written model from disk."""
    v = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)]
    tetra = _binary_stl([(v[0], v[2], v[1]), (v[0], v[1], v[3]), (v[0], v[3], v[2]), (v[1], v[2], v[3])])
    xml = """<mujoco><compiler meshdir="meshes/" texturedir="textures/"/><include file="./common/extra.xml"/>
      <asset><mesh name="tetra" file="tetra.stl"/></asset>
      <worldbody><body><freejoint/><geom type="mesh" mesh="tetra"/></body></worldbody></mujoco>"""
    extra = "<mujoco><option timestep='0.004'/></mujoco>"
    folder = str(tmp_path / "model")
    os.makedirs(folder)
    dmc_models._write(folder, xml, {"tetra.stl": tetra, "./common/extra.xml": extra})
    for name in ("meshes/tetra.stl", "textures/tetra.stl", "common/extra.xml"):
        assert os.path.isfile(os.path.join(folder, name)), name
    assert not os.path.exists(os.path.join(folder, "tetra.stl"))
    model = mujoco.MjModel.from_xml_path(os.path.join(folder, "model.xml"))
    assert model.nmesh == 1 and model.opt.timestep == 0.004


def test_cache_without_asset_dirs_writes_beside_the_xml(tmp_path):
    folder = str(tmp_path / "model")
    os.makedirs(folder)
    dmc_models._write(folder, b"<mujoco/>", {"a.png": b"x", "./common/b.xml": "<mujoco/>"})
    assert sorted(os.listdir(folder)) == ["a.png", "common", "model.xml"]


def test_dog_model_from_the_cache_is_dm_controls():
    """The cached dog model compiles to dm_control's: the same sizes, meshes and body masses."""
    path = dmc_models.model_path("dm_control:suite.dog.get_model_and_assets(remove_ball=False)")
    ours = mujoco.MjModel.from_xml_path(path)
    theirs = ref.dm_env("dog", "fetch").physics.model
    for field in ("nq", "nv", "nu", "na", "nmesh", "nmeshvert", "nsensordata"):
        assert getattr(ours, field) == getattr(theirs, field), field
    np.testing.assert_array_equal(ours.body_mass, theirs.body_mass)
