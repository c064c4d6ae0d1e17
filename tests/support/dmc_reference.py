"""Shared harness of the DeepMind Control Suite tests: our task against dm_control's own (`suite.load`).

- `check_alignment`: our env resets; its state (dm_control's physics.get_state() layout, plus the task's own state
  where it has one) goes into dm_control's physics the way dm_control resets (`with physics.reset_context():
  physics.set_state(...)`, i.e. mj_resetData, the state, mj_forward without actuation); both then step with the
  same random actions. Every observation array, the reward, the step type and the discount must agree (absolute
  tolerance `tol`; bit-exact where no contacts are involved) at every step, and the episode must end at the same
  step with the same discount.
- `check_reset_distribution`: the initial states of many of our envs (one seed each) against as many dm_control
  resets: a two-sample Kolmogorov-Smirnov test per state dimension (scipy), at a family-wise significance level of
  `alpha` (Bonferroni over the dimensions): the tolerance comes from the sample sizes, not a hand-picked number.
  Our generator is not numpy's, so the draws differ; their distributions must not.

Task state outside mjData (targets stored in the model, ...): a task that appends it to get_state passes
`task_state(physics, extra)` which writes those values into dm_control's physics / task.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

suite = pytest.importorskip("dm_control.suite")

import parallel_pool as pp  # noqa: E402

TaskState = Callable[[Any, np.ndarray], None]
# fields our dm front-end's observation namedtuple has besides the env's observations (EnvPool's layout)
POOL_FIELDS = ("env_id", "elapsed_step", "players")


@contextlib.contextmanager
def quiet():
    """dm_control's import of its renderer warns about a missing display; irrelevant here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def dm_env(domain: str, task: str, seed: int = 0):
    with quiet():
        return suite.load(domain, task, task_kwargs={"random": seed})


def physics_size(physics) -> int:
    return int(physics.model.nq + physics.model.nv + physics.model.na)


def put_state(physics, state: np.ndarray, task_state: TaskState | None = None) -> None:
    """Our env's state into dm_control's physics, the way dm_control's reset leaves it."""
    n = physics_size(physics)
    with physics.reset_context():
        physics.set_state(np.asarray(state[:n], dtype=np.float64))
        if task_state is not None:
            task_state(physics, np.asarray(state[n:], dtype=np.float64))
        elif len(state) != n:
            raise AssertionError(f"our state has {len(state) - n} task values: pass task_state to copy them")


def assert_obs_close(ours: dict, ref: dict, tol: float, what: str, extra_keys: tuple[str, ...] = ()) -> None:
    """Every dm_control observation array within `tol` of ours; ours has the same keys in the same order, plus
    `extra_keys` (EnvPool's keys that dm_control's task does not report, e.g. FingerSpin's target_position)."""
    keys = [k for k in ours if k not in extra_keys]
    assert keys == list(ref), f"{what}: observation keys {keys} != dm_control's {list(ref)}"
    for key, value in ref.items():
        a, b = np.asarray(ours[key], dtype=np.float64), np.asarray(value, dtype=np.float64)
        assert a.shape == b.shape, f"{what}: {key!r} shape {a.shape} != dm_control's {b.shape}"
        err = float(np.max(np.abs(a - b), initial=0.0))
        assert err <= tol, f"{what}: {key!r} differs by {err:.3g} > {tol} (ours {a}, dm_control {b})"


def first_row(observation) -> dict[str, np.ndarray]:
    """Env 0's observation arrays out of our dm front-end's batched namedtuple."""
    return {k: np.asarray(v)[0] for k, v in observation._asdict().items() if k not in POOL_FIELDS}


MJ_MAXVAL = 1e10  # mujoco.mjMAXVAL: dm_control's action_spec bound of an actuator without ctrlrange


def random_actions(spec, n: int, seed: int) -> np.ndarray:
    """n actions uniform in the action box (a box of +-1 where it is unbounded: +-mjMAXVAL, dm_control's bound)."""
    rng = np.random.default_rng(seed)
    lo = np.where(spec.minimum > -MJ_MAXVAL, spec.minimum, -1.0)
    hi = np.where(spec.maximum < MJ_MAXVAL, spec.maximum, 1.0)
    return rng.uniform(lo, hi, size=(n, *spec.shape))


def check_alignment(
    task_id: str,
    domain: str,
    task: str,
    *,
    steps: int = 100,
    seed: int = 0,
    tol: float = 1e-6,
    task_state: TaskState | None = None,
    extra_keys: tuple[str, ...] = (),
    **make_kwargs: Any,
) -> int:
    """Step our `task_id` and dm_control's (domain, task) side by side for `steps` steps (or to the episode's end);
    returns the number of steps taken."""
    env = pp.make(task_id, env_type="dm", num_envs=1, seed=seed, **make_kwargs)
    ref = dm_env(domain, task, seed)
    ts = env.reset()
    ref.reset()
    put_state(ref.physics, env.get_state(0), task_state)
    first = ref.task.get_observation(ref.physics)
    assert_obs_close(first_row(ts.observation), first, tol, f"{task_id} reset", extra_keys)
    actions = random_actions(ref.action_spec(), steps, seed)
    for t, action in enumerate(actions, 1):
        ts = env.step(action[None])
        r = ref.step(action)
        what = f"{task_id} step {t}"
        assert_obs_close(first_row(ts.observation), r.observation, tol, what, extra_keys)
        assert abs(float(ts.reward[0]) - float(r.reward)) <= tol, f"{what}: reward {ts.reward[0]} != {r.reward}"
        assert int(ts.step_type[0]) == int(r.step_type), f"{what}: step type {ts.step_type[0]} != {r.step_type}"
        if r.last():
            assert float(ts.discount[0]) == float(r.discount), f"{what}: discount {ts.discount[0]} != {r.discount}"
            return t
    return steps


def dm_reset_states(domain: str, task: str, n: int, seed: int = 0) -> np.ndarray:
    """n initial physics states of dm_control's task (successive resets of one seeded env)."""
    ref = dm_env(domain, task, seed)
    states = []
    for _ in range(n):
        ref.reset()
        states.append(ref.physics.get_state())
    return np.asarray(states)


def our_reset_states(task_id: str, n: int, size: int, seed: int = 0) -> np.ndarray:
    """The initial physics states (first `size` values of get_state) of n envs seeded seed, seed + 1, ..."""
    env = pp.make(task_id, num_envs=n, seed=seed)
    env.reset()
    return np.asarray([env.get_state(i)[:size] for i in range(n)])


def check_reset_distribution(task_id: str, domain: str, task: str, *, n: int = 300, alpha: float = 1e-3) -> None:
    from scipy import stats

    ref = dm_reset_states(domain, task, n)
    ours = our_reset_states(task_id, n, ref.shape[1])
    assert ours.shape == ref.shape
    dims = ref.shape[1]
    for i in range(dims):
        a, b = ours[:, i], ref[:, i]
        if np.ptp(a) == 0 and np.ptp(b) == 0:
            assert a[0] == b[0], f"{task_id}: state[{i}] is constant {a[0]} here, {b[0]} in dm_control"
            continue
        p = stats.ks_2samp(a, b).pvalue
        assert p > alpha / dims, (
            f"{task_id}: the reset distribution of state[{i}] differs from dm_control's (KS p = {p:.2g}; ours "
            f"mean {a.mean():.4g} range [{a.min():.4g}, {a.max():.4g}], dm_control mean {b.mean():.4g} range "
            f"[{b.min():.4g}, {b.max():.4g}])"
        )
