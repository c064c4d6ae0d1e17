"""DeepMind Control Suite family (core/envs/mujoco_dmc): the domains without a file of their own, aligned with
dm_control 1.0.50 (tests/support/dmc_reference.py), and the family's shared behaviour: specs, front-ends, state round
trips."""

from __future__ import annotations

import os
import shutil
from typing import Any

import numpy as np
import pytest

pytest.importorskip("dm_control")

import dmc_reference as ref  # noqa: E402

import parallel_pool as pp  # noqa: E402

if "CartpoleSwingup-v1" not in pp.list_all_envs():
    pytest.skip("the mujoco_dmc family is not in this build (PP_SKIP_FAMILIES)", allow_module_level=True)


class ModelField:
    """Task state dm_control keeps in a model field: the values our get_state appends (see dmc_env.h)."""

    def __init__(self, field: str, name: str | None, index):
        self.field, self.name, self.index = field, name, index

    def _array(self, physics):
        return getattr(physics.named.model, self.field) if self.name else getattr(physics.model, self.field)

    def get(self, physics) -> np.ndarray:
        a = self._array(physics)
        return np.array(a[self.name, self.index] if self.name else a[self.index], dtype=np.float64)

    def __call__(self, physics, extra) -> None:  # the harness's task_state setter
        a = self._array(physics)
        if self.name:
            a[self.name, self.index] = extra
        else:
            a[self.index] = extra


REACHER_TARGET = ModelField("geom_pos", "target", ["x", "y"])
FINGER_TARGET = ModelField("site_pos", "target", ["x", "z"])
POINT_MASS_GAINS = ModelField("wrap_prm", None, slice(0, 4))


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
        {"task_state": FINGER_TARGET, "extra_keys": ("target_position", "dist_to_target")},
    ),
    "FingerTurnEasy-v1": ("finger", "turn_easy", {"task_state": FINGER_TARGET}),
    "FingerTurnHard-v1": ("finger", "turn_hard", {"task_state": FINGER_TARGET}),
    "PendulumSwingup-v1": ("pendulum", "swingup", {}),
    "PointMassEasy-v1": ("point_mass", "easy", {"task_state": POINT_MASS_GAINS}),
    "PointMassHard-v1": ("point_mass", "hard", {"task_state": POINT_MASS_GAINS}),
    "ReacherEasy-v1": ("reacher", "easy", {"task_state": REACHER_TARGET}),
    "ReacherHard-v1": ("reacher", "hard", {"task_state": REACHER_TARGET}),
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


# ---- specs and front-ends


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_envpool_names_config_and_spec(task_id):
    """EnvPool's observation keys and shapes, action shape and bounds, and config defaults."""
    envpool = pytest.importorskip("envpool")
    theirs = envpool.make_spec(task_id)
    ours = pp.make_spec(task_id)
    their_obs = {k: v.shape for k, v in theirs.observation_spec()._asdict().items() if k not in ("env_id", "players")}
    our_obs = {k: v.shape for k, v in ours.observation_spec()._asdict().items() if k not in ref.POOL_FIELDS}
    assert list(our_obs.items()) == list(their_obs.items())
    ta, oa = theirs.action_spec(), ours.action_spec()
    assert oa.shape == ta.shape and oa.dtype == np.float64
    assert np.array_equal(oa.minimum, ta.minimum) and np.array_equal(oa.maximum, ta.maximum)
    for key in ("max_episode_steps", "frame_skip", "task_name"):
        assert getattr(ours.config, key) == getattr(theirs.config, key), key


def _rollout(task_id: str, env_type: str, steps: int = 5) -> list[dict[str, np.ndarray]]:
    """Observations (dicts of batched arrays) of 2 envs through a front-end, same seed and actions each time."""
    env: Any = pp.make(task_id, env_type=env_type, num_envs=2, seed=7)  # the front-end's type depends on env_type
    actions = ref.random_actions(pp.make_spec(task_id).action_spec(), steps, seed=1)
    batch = np.stack([actions, actions], axis=1)

    def as_dict(obs):
        return {k: np.asarray(v) for k, v in obs._asdict().items() if k not in ref.POOL_FIELDS}

    if env_type == "dm":
        out = [as_dict(env.reset().observation)]
        out += [as_dict(env.step(a).observation) for a in batch]
    else:
        out = [dict(env.reset()[0])]
        out += [dict(env.step(a)[0]) for a in batch]
    env.close()
    return out


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_front_ends_agree(task_id):
    """gymnasium (Dict space, batched), gym and dm (namedtuple observation) give the same observations."""
    env = pp.make(task_id, env_type="gymnasium", num_envs=2)
    keys = list(pp.make_spec(task_id).observation_spec()._asdict())
    keys = [k for k in keys if k not in ref.POOL_FIELDS]
    assert sorted(env.single_observation_space.spaces) == sorted(keys)
    for k in keys:
        assert env.observation_space[k].shape == (2, *env.single_observation_space[k].shape)
    env.close()
    runs = {t: _rollout(task_id, t) for t in ("gymnasium", "gym", "dm")}
    for t in ("gym", "dm"):
        for step, (a, b) in enumerate(zip(runs["gymnasium"], runs[t])):
            assert sorted(a) == sorted(b) == sorted(keys)
            for k in keys:
                assert np.array_equal(a[k], b[k]), f"{t} front-end, step {step}, {k!r}"


def test_dm_specs_accepted_by_acme_and_validate_every_row():
    """acme's make_environment_spec accepts the dm front-end; each env's row of every timestep conforms to the
    specs (dm_env test_utils' checks: observation, reward and discount specs validate the values)."""
    specs = pytest.importorskip("acme.specs")
    env = pp.make("FingerTurnHard-v1", env_type="dm", num_envs=3, seed=2)
    spec = specs.make_environment_spec(env)
    action_spec = env.action_spec()
    rng = np.random.default_rng(0)
    ts = env.reset()
    for t in range(20):
        for i in range(3):
            for k, s in spec.observations._asdict().items():
                if k not in ref.POOL_FIELDS:
                    s.validate(np.asarray(getattr(ts.observation, k))[i])
            if t > 0:
                spec.rewards.validate(np.asarray(ts.reward)[i])
                spec.discounts.validate(np.asarray(ts.discount)[i])
        actions = rng.uniform(action_spec.minimum, action_spec.maximum, size=(3, *action_spec.shape))
        action_spec.validate(actions[0])
        ts = env.step(actions)


# ---- state


@pytest.mark.parametrize("task_id", ["ReacherHard-v1", "FingerTurnEasy-v1", "BallInCupCatch-v1", "PointMassHard-v1"])
def test_state_from_dm_control_mid_episode(task_id):
    """dm_control's state after 30 steps (physics.get_state() plus the task's model fields), set into our env,
    gives dm_control's next observations and rewards."""
    domain, task, options = TASKS[task_id]
    dm = ref.dm_env(domain, task, seed=3)
    dm.reset()
    actions = ref.random_actions(dm.action_spec(), 40, seed=3)
    for a in actions[:30]:
        dm.step(a)
    extra = options["task_state"].get(dm.physics) if "task_state" in options else np.zeros(0)
    env = pp.make(task_id, env_type="dm", num_envs=1, seed=0)
    env.reset()
    env.set_state(0, np.concatenate([dm.physics.get_state(), extra]))
    for t, a in enumerate(actions[30:], 31):
        want = dm.step(a)
        got = env.step(a[None])
        ref.assert_obs_close(
            ref.first_row(got.observation), want.observation, 1e-6, f"step {t}", options.get("extra_keys", ())
        )
        assert abs(float(got.reward[0]) - want.reward) <= 1e-6


def test_state_round_trip_between_envs():
    """get_state of one env set into another: both continue identically; the physics part alone keeps the
    target env's own task state."""
    env = pp.make("ReacherEasy-v1", env_type="dm", num_envs=2, seed=0)
    env.reset()
    actions = ref.random_actions(env.action_spec(), 10, seed=0)
    for a in actions[:5]:
        env.step(np.stack([a, a]))
    state = env.get_state(0)
    nq_nv_na = len(state) - 2  # reacher appends its target's (x, y)
    env.set_state(1, state)
    assert np.array_equal(env.get_state(1), state)
    for a in actions[5:]:
        ts = env.step(np.stack([a, a]))
        for k in ("position", "to_target", "velocity"):
            rows = np.asarray(getattr(ts.observation, k))
            assert np.array_equal(rows[0], rows[1]), k
    target_1 = env.get_state(1)[nq_nv_na:]
    env.set_state(1, env.get_state(0)[:nq_nv_na])
    assert np.array_equal(env.get_state(1)[nq_nv_na:], target_1)


def test_set_state_rejects_a_wrong_size():
    env = pp.make("CartpoleSwingup-v1", num_envs=1)
    env.reset()
    with pytest.raises(ValueError, match=r"nq \+ nv \+ na = 4"):
        env.set_state(0, np.zeros(5))


# ---- models


def test_models_are_built_once_into_the_cache(tmp_path, monkeypatch):
    from parallel_pool import dmc_models

    monkeypatch.setenv("PARALLEL_POOL_CACHE", str(tmp_path))
    dmc_models.model_path.cache_clear()
    path = pp.make_spec("CartpoleTwoPoles-v1").config.xml_file
    assert path.startswith(str(tmp_path)) and path.endswith("model.xml")
    assert b"pole_2" in open(path, "rb").read()
    assert pp.make_spec("CartpoleTwoPoles-v1").config.xml_file == path
    dmc_models.model_path.cache_clear()


@pytest.mark.parametrize(
    "value, match",
    [
        ("dm_control:suite.cartpole.no_such_builder()", "no model builder"),
        ("dm_control:suite.cartpole.get_model_and_assets(num_poles=x)", "literal values"),
        ("dm_control:cartpole", "is not of the form"),
        ("/no/such/model.xml", "does not exist"),
    ],
)
def test_bad_xml_file_is_a_clear_error(value, match):
    with pytest.raises(ValueError, match=match) as e:
        pp.make("CartpoleSwingup-v1", xml_file=value)
    assert "xml_file" in str(e.value)


def test_without_dm_control_make_names_the_extra(tmp_path, monkeypatch):
    import importlib.metadata

    from parallel_pool import dmc_models

    real = importlib.metadata.version

    def version(dist):
        if dist == "dm-control":
            raise importlib.metadata.PackageNotFoundError(dist)
        return real(dist)

    monkeypatch.setattr(importlib.metadata, "version", version)
    monkeypatch.setenv("PARALLEL_POOL_CACHE", str(tmp_path))
    dmc_models.model_path.cache_clear()
    with pytest.raises(ValueError, match=r'xml_file.*pip install "parallel-pool\[dmc\]"'):
        pp.make("PendulumSwingup-v1")
    dmc_models.model_path.cache_clear()


# ---- benchmark case


def test_bench_case_dmc_quick(capsys):
    """`parallel-pool bench --case dmc --quick` runs; an unregistered default id is skipped, not an error."""
    from parallel_pool.bench import main as bench_main

    assert bench_main(["--case", "dmc", "--quick", "--tasks", "NoSuchTask-v1", "PendulumSwingup-v1"]) == 0
    out = capsys.readouterr().out
    assert "NoSuchTask-v1: not registered in this build, skipped" in out
    row = [ln for ln in out.splitlines() if ln.startswith("PendulumSwingup-v1")]
    assert len(row) == 1 and "parallel_pool" in row[0] and "dm_control" in row[0]


# ---- the model cache's faults: each is rebuilt or cleaned, never a permanent error

_POLES = "dm_control:suite.cartpole.get_model_and_assets(num_poles=2)"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    from parallel_pool import dmc_models

    monkeypatch.setenv("PARALLEL_POOL_CACHE", str(tmp_path))
    dmc_models.model_path.cache_clear()
    yield dmc_models
    dmc_models.model_path.cache_clear()


def test_cache_rebuilds_a_half_written_or_foreign_folder(cache):
    path = cache.model_path(_POLES)
    folder = os.path.dirname(path)
    for damage in ("half-written", "foreign", "a file"):
        shutil.rmtree(folder) if os.path.isdir(folder) else os.remove(folder)
        if damage == "a file":
            open(folder, "w").close()
        else:
            os.makedirs(folder)
            open(os.path.join(folder, "junk" if damage == "foreign" else "model.xml"), "w").close()
        cache.model_path.cache_clear()
        assert cache.model_path(_POLES) == path
        assert b"pole_2" in open(path, "rb").read() and not os.path.exists(os.path.join(folder, "junk"))
    assert [n for n in os.listdir(os.path.dirname(folder)) if n.startswith(".tmp-")] == []


def test_cache_key_has_the_layout_version_and_a_relative_root_is_made_absolute(cache, tmp_path, monkeypatch):
    path = cache.model_path(_POLES)
    monkeypatch.setattr(cache, "LAYOUT", cache.LAYOUT + 1)
    cache.model_path.cache_clear()
    assert cache.model_path(_POLES) != path  # another writer's layout never reads this folder
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PARALLEL_POOL_CACHE", "relative")
    cache.model_path.cache_clear()
    path = cache.model_path(_POLES)
    assert os.path.isabs(path) and path.startswith(str(tmp_path / "relative"))
    monkeypatch.chdir("/")
    assert os.path.exists(path)  # the engine gets a path that holds after a chdir


def test_cache_cleans_the_temp_folders_of_dead_writers(cache, tmp_path):
    import socket
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    root = tmp_path / "dmc-models"
    host = socket.gethostname()
    stale = root / f".tmp-{host}-{int(dead.stdout)}-abc"
    live = root / f".tmp-{host}-{os.getpid()}-def"  # a writer still at work
    other = root / f".tmp-otherhost-{int(dead.stdout)}-ghi"  # pids of other hosts cannot be checked here
    for d in (stale, live, other):
        (d / "sub").mkdir(parents=True)
    cache.model_path(_POLES)
    assert not stale.exists() and live.exists() and other.exists()


# ---- the time limit in the default run (the full-episode alignment of every task is `slow`)


def test_time_limit_last_step_and_discount():
    """DMC's 1000-step time limit: aligned with dm_control to the end (step 1000 is LAST with dm_control's discount,
    1.0: a truncation, not a termination); the dm front-end then starts a new episode (FIRST), and gymnasium's says
    truncated, not terminated, at step 1000."""
    assert align("CartpoleSwingup-v1", steps=1001) == 1000
    env = pp.make("CartpoleSwingup-v1", env_type="dm", num_envs=1, seed=0)
    env.reset()
    zero = np.zeros((1, 1))
    types = [int(env.step(zero).step_type[0]) for _ in range(999)]
    assert types == [1] * 999  # MID
    ts = env.step(zero)
    assert int(ts.step_type[0]) == 2 and float(ts.discount[0]) == 1.0 and ts.observation.elapsed_step[0] == 1000
    ts = env.step(zero)
    assert int(ts.step_type[0]) == 0 and ts.observation.elapsed_step[0] == 0  # FIRST: the next episode
    env.close()
    gym_env = pp.make("CartpoleSwingup-v1", num_envs=1, seed=0)
    gym_env.reset()
    ends = [
        (t, term[0], trunc[0])
        for t in range(1, 1002)
        for _, _, term, trunc, _ in [gym_env.step(zero)]
        if term[0] or trunc[0]
    ]
    assert ends == [(1000, False, True)]
    gym_env.close()
