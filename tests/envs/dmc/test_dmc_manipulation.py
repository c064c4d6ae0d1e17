"""DeepMind Control Suite family (core/envs/mujoco_dmc): manipulator, stacker, quadruped and lqr, aligned with
dm_control 1.0.50 step by step (tests/support/dmc_reference.py), with their task state (target poses, escape's
terrain, lqr's stiffness: values dm_control keeps in its model, appended to our get_state) copied across.
Dog has its own file, test_dmc_dog.py."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("dm_control")
stats = pytest.importorskip("scipy.stats")
ndimage = pytest.importorskip("scipy.ndimage")

import dmc_reference as ref  # noqa: E402

import parallel_pool as pp  # noqa: E402

if "ManipulatorBringBall-v1" not in pp.list_all_envs():
    pytest.skip("the mujoco_dmc family is not in this build (PP_SKIP_FAMILIES)", allow_module_level=True)

# task id -> (dm_control domain, task)
TASKS = {
    "ManipulatorBringBall-v1": ("manipulator", "bring_ball"),
    "ManipulatorBringPeg-v1": ("manipulator", "bring_peg"),
    "ManipulatorInsertBall-v1": ("manipulator", "insert_ball"),
    "ManipulatorInsertPeg-v1": ("manipulator", "insert_peg"),
    "StackerStack2-v1": ("stacker", "stack_2"),
    "StackerStack4-v1": ("stacker", "stack_4"),
    "QuadrupedWalk-v1": ("quadruped", "walk"),
    "QuadrupedRun-v1": ("quadruped", "run"),
    "QuadrupedEscape-v1": ("quadruped", "escape"),
    "QuadrupedFetch-v1": ("quadruped", "fetch"),
    "LqrLqr21-v1": ("lqr", "lqr_2_1"),
    "LqrLqr62-v1": ("lqr", "lqr_6_2"),
}
CI_TASKS = ["ManipulatorInsertPeg-v1", "StackerStack4-v1", "QuadrupedFetch-v1", "QuadrupedEscape-v1", "LqrLqr62-v1"]
# EnvPool's quadruped observation has every task's keys; the ones dm_control's task lacks are zeros (origin is
# filled for every task, as EnvPool does)
QUADRUPED_ONLY_IN = {"rangefinder": "escape", "ball_state": "fetch", "target_position": "fetch", "origin": "escape"}
# Contacts make a few tasks' floating-point results depend on summation order (numpy's vs MuJoCo's 3x3 products in
# the torso-frame observations): agreement to 1e-12 there, bit-exact elsewhere.
# Stacker's reward takes the nearest box by numpy's norm, whose summation order differs from ours in the last bit.
# Bit-identical on the machine the tests were written on; numpy's and OpenBLAS's kernels (which dm_control's
# observations and rewards go through) are chosen per CPU, so another CPU can differ in the last bits.
ULPS = 1e-12
TOL = {"QuadrupedFetch-v1": 1e-12, "QuadrupedEscape-v1": 1e-12, "StackerStack2-v1": 1e-12, "StackerStack4-v1": 1e-12}


# ---- the task state dm_control keeps in its model, from the tail of our get_state
def _target_pose(physics, task: str, extra: np.ndarray) -> None:
    """manipulator: the target's (x, z, qw, qy); the receptacle of an insert task has the same pose."""
    peg = "peg" in task
    bodies = ["target_peg" if peg else "target_ball"] + (["slot" if peg else "cup"] if "insert" in task else [])
    for body in bodies:
        physics.named.model.body_pos[body, ["x", "z"]] = extra[:2]
        physics.named.model.body_quat[body, ["qw", "qy"]] = extra[2:]


def task_state(domain: str, task: str):
    def put(physics, extra: np.ndarray) -> None:
        if domain == "manipulator":
            _target_pose(physics, task, extra)
        elif domain == "stacker":
            physics.named.model.body_pos["target", ["x", "z"]] = extra
        elif domain == "lqr":
            physics.model.jnt_stiffness[:] = extra
        elif extra.size:  # quadruped escape: the terrain
            physics.model.hfield_data[:] = extra

    return put


def dm_task_state(domain: str, task: str, physics) -> np.ndarray:
    """dm_control's side of the same values (what our get_state appends)."""
    m = physics.named.model
    if domain == "manipulator":
        target = "target_peg" if "peg" in task else "target_ball"
        return np.concatenate([m.body_pos[target, ["x", "z"]], m.body_quat[target, ["qw", "qy"]]])
    if domain == "stacker":
        return np.asarray(m.body_pos["target", ["x", "z"]])
    return np.zeros(0)


@pytest.fixture
def unit_lqr_actions(monkeypatch, request):
    """dm_control's LQR action_spec is +-1e10 (unlimited motors): random actions that large only measure how fast
    both blow up; a unit box exercises the dynamics."""
    if TASKS[request.node.callspec.params["task_id"]][0] == "lqr":
        random_actions = ref.random_actions
        monkeypatch.setattr(ref, "random_actions", lambda spec, n, seed: np.clip(random_actions(spec, n, seed), -1, 1))


def _needs_gl(domain: str, task: str) -> None:
    """dm_control's escape reset re-uploads the terrain to a rendering context: skip where none can be made."""
    if (domain, task) == ("quadruped", "escape"):
        try:
            ref.dm_env(domain, task).reset()
        except Exception as e:  # noqa: BLE001  (no OpenGL: FatalError/RuntimeError depending on the backend)
            pytest.skip(f"dm_control's quadruped escape needs an OpenGL context here: {e}")


def _align(task_id: str, steps: int, seed: int = 0, **make_kwargs) -> int:
    domain, task = TASKS[task_id]
    _needs_gl(domain, task)
    tol = TOL.get(task_id, ULPS)
    extra = tuple(k for k, only_in in QUADRUPED_ONLY_IN.items() if only_in != task) if domain == "quadruped" else ()
    return ref.check_alignment(
        task_id,
        domain,
        task,
        steps=steps,
        seed=seed,
        tol=tol,
        task_state=task_state(domain, task),
        extra_keys=extra,
        **make_kwargs,
    )


@pytest.mark.parametrize("task_id", CI_TASKS)
def test_alignment(task_id, unit_lqr_actions):
    _align(task_id, 100)


@pytest.mark.slow
@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_alignment_full_episode(task_id, unit_lqr_actions):
    if TASKS[task_id][0] == "lqr":  # dm_control's LQR has no time limit (ours is EnvPool's 1000 steps): lift ours
        assert _align(task_id, 1000, seed=3, max_episode_steps=1001) == 1000
    else:
        assert _align(task_id, 1001, seed=3) == 1000


def _reset_task_states(task_id: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The task state (target pose or position) after n resets: ours (n envs) and dm_control's (n resets)."""
    domain, task = TASKS[task_id]
    env = pp.make(task_id, num_envs=n, seed=0)
    env.reset()
    dm = ref.dm_env(domain, task)
    size = ref.physics_size(dm.physics)
    ours = np.asarray([env.get_state(i)[size:] for i in range(n)])
    theirs = []
    for _ in range(n):
        dm.reset()
        theirs.append(dm_task_state(domain, task, dm.physics))
    return ours, np.asarray(theirs)


@pytest.mark.parametrize("task_id", ["ManipulatorInsertBall-v1", "LqrLqr62-v1"])
def test_reset_distribution(task_id):
    ref.check_reset_distribution(task_id, *TASKS[task_id], n=150)


@pytest.mark.slow
@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_reset_distribution_all(task_id):
    _needs_gl(*TASKS[task_id])
    ref.check_reset_distribution(task_id, *TASKS[task_id])


@pytest.mark.parametrize("task_id", ["ManipulatorBringPeg-v1", "StackerStack2-v1"])
def test_target_distribution(task_id, n=150, alpha=1e-3):
    """The targets dm_control places in the model on reset: same distribution per coordinate (two-sample KS at a
    Bonferroni-corrected level)."""
    ours, theirs = _reset_task_states(task_id, n)
    assert ours.shape == theirs.shape
    for i in range(ours.shape[1]):
        p = stats.ks_2samp(ours[:, i], theirs[:, i]).pvalue
        assert p > alpha / ours.shape[1], f"{task_id}: target coordinate {i} differs from dm_control's (KS p = {p:.2g})"


def test_escape_terrain_is_a_smooth_bowl():
    """Escape's terrain is dm_control's: bowl * zoom(bumps), bumps ~ U(0.15, 1) on a 30 x 30 grid zoomed by scipy's
    cubic spline to 201 x 201. scipy's zoom is linear (a matrix Z per axis): the terrain divided by the bowl must lie
    in the span of scipy's own Z on both sides; different envs get different terrains."""
    env = pp.make("QuadrupedEscape-v1", num_envs=2, seed=1)
    env.reset()
    dm = ref.dm_env("quadruped", "escape")
    n = ref.physics_size(dm.physics)
    res, bump_res = 201, 30
    grid = np.linspace(-1, 1, res)
    radius = np.clip(np.sqrt(grid[None, :] ** 2 + grid[:, None] ** 2), 0.04, 1)
    bowl = 0.5 - np.cos(2 * np.pi * radius) / 2
    # scipy's 1-D zoom as a matrix: its columns are the zoomed unit vectors
    zoom = np.stack([ndimage.zoom(np.eye(bump_res)[j][None, :], (1, res / bump_res))[0] for j in range(bump_res)], 1)
    # A central block, inside the bowl's rim (bowl > 0 there): smooth = Zb B Zb^T with Zb = zoom[block], so the
    # smooth part must lie in the span of Zb on both sides: P smooth P == smooth for the projector P onto it.
    block = slice(40, 161)
    zb = zoom[block]
    projector = zb @ np.linalg.pinv(zb)
    terrains = []
    for i in range(2):
        terrain = np.asarray(env.get_state(i)[n:]).reshape(res, res)
        terrains.append(terrain)
        smooth = terrain[block, block] / bowl[block, block]
        fit = bowl[block, block] * (projector @ smooth @ projector.T)
        # heights are float32 in the model: agreement to float32 precision
        np.testing.assert_allclose(fit, terrain[block, block], rtol=0, atol=1e-6)
        # bumps: the spline's coefficients are bounded by the bumps' range only loosely; the mean is a fair check
        assert 0.15 < smooth.mean() < 1
    assert not np.array_equal(terrains[0], terrains[1])


def test_quadruped_keys_other_tasks_have():
    """EnvPool's quadruped keys on walk: rangefinder, ball_state and target_position are zeros; origin is the
    origin in the torso frame (EnvPool fills it for every task)."""
    env = pp.make("QuadrupedWalk-v1", env_type="dm", num_envs=1, seed=0)
    ts = env.reset()
    for _ in range(5):
        ts = env.step(np.zeros((1, 12)))
    obs = ref.first_row(ts.observation)
    for key in ("rangefinder", "ball_state", "target_position"):
        assert not obs[key].any(), key
    dm = ref.dm_env("quadruped", "walk")
    dm.reset()
    ref.put_state(dm.physics, env.get_state(0))
    np.testing.assert_allclose(obs["origin"], dm.physics.origin(), rtol=0, atol=ULPS)


def test_lqr_stiffness_is_per_env_and_fixed():
    """Each env draws its joints' stiffness from U(15, 25) once (dm_control draws it when building an env's model):
    different envs differ, resets keep it, and the same seed gives the same."""
    env = pp.make("LqrLqr62-v1", num_envs=3, seed=7)
    env.reset()
    stiffness = [np.asarray(env.get_state(i)[12:]) for i in range(3)]
    assert all(s.shape == (6,) and (s >= 15).all() and (s < 25).all() for s in stiffness)
    assert not np.array_equal(stiffness[0], stiffness[1])
    for _ in range(3):
        env.reset()
    np.testing.assert_array_equal(np.asarray(env.get_state(0)[12:]), stiffness[0])
    again = pp.make("LqrLqr62-v1", num_envs=1, seed=7)
    again.reset()
    np.testing.assert_array_equal(np.asarray(again.get_state(0)[12:]), stiffness[0])


def test_lqr_terminates_at_the_origin_like_dm_control():
    """dm_control ends an LQR episode (discount 0) once |state| < 1e-6: put both near the origin and step."""
    env = pp.make("LqrLqr21-v1", env_type="dm", num_envs=1, seed=0)
    env.reset()
    dm = ref.dm_env("lqr", "lqr_2_1")
    dm.reset()
    state = np.asarray(env.get_state(0))
    state[:4] = [1e-8, -1e-8, 0, 0]
    env.set_state(0, state)
    ref.put_state(dm.physics, state, task_state("lqr", "lqr_2_1"))
    ts = env.step(np.zeros((1, 1)))
    r = dm.step(np.zeros(1))
    assert r.last() and r.discount == 0.0
    assert int(ts.step_type[0]) == int(r.step_type) and float(ts.discount[0]) == 0.0
    np.testing.assert_array_equal(ref.first_row(ts.observation)["position"], r.observation["position"])


def test_task_state_length_is_checked():
    env = pp.make("StackerStack2-v1", num_envs=1)
    env.reset()
    state = np.asarray(env.get_state(0))
    env.set_state(0, state[:-2])  # the physics part alone is accepted (the target stays)
    np.testing.assert_array_equal(np.asarray(env.get_state(0)), state)
    with pytest.raises(ValueError, match="with the task's state"):
        env.set_state(0, state[:-1])


# ---- EnvPool parity and front-ends: the family checks of test_dmc.py, run on these ids
@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_envpool_names_config_and_spec(task_id):
    import test_dmc

    test_dmc.test_envpool_names_config_and_spec(task_id)


@pytest.mark.parametrize(
    "task_id", ["ManipulatorBringBall-v1", "StackerStack4-v1", "QuadrupedEscape-v1", "LqrLqr21-v1"]
)
def test_front_ends_agree(task_id):
    import test_dmc

    test_dmc.test_front_ends_agree(task_id)
