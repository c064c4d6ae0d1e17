"""The Python front-ends' contract: one result schema (xla == recv), reset_mask returning the whole batch as
gymnasium's SyncVectorEnv does, seeds, EnvPool's action forms and config keys, gymnasium `_key` masks, what each
front-end claims to be, render glue, multi-player subsets and lifecycle (the module
layering: tests/test_layering.py)."""

from __future__ import annotations

import copy
import sys
import types
from pathlib import Path

import dm_env
import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import SyncVectorEnv
from pyproc import run_python
from test_gymnasium_vector import _MODES, EPISODE_LEN, N, _strip, lockstep, make_pair

import parallel_pool as pp
from parallel_pool.frontends import GymnasiumPool

PKG = Path(pp.__file__).parent


# ---- A: env.xla() results equal recv()'s, for every front-end --------------------------------------------------

CASES = [
    ("CartPole-v1", {}),
    ("Dummy-v0", {"episode_len": 3}),
    ("Breakout-v5", {"zero_discount_on_life_loss": True, "episodic_life": False}),
]


def _leaves_equal(want, got, ctx):
    import jax

    ws, gs = jax.tree_util.tree_flatten(want), jax.tree_util.tree_flatten(got)
    assert str(ws[1]) == str(gs[1]), ctx
    for w, g in zip(ws[0], gs[0]):
        np.testing.assert_array_equal(np.asarray(w), np.asarray(g), err_msg=ctx)


def _dense_final(result, n):
    """A numpy same-step result in the XLA path's dense form (final keys always present, zeros elsewhere)."""
    obs, rew, term, trunc, info = result
    info = dict(info)
    done = term | trunc
    if "final_obs" not in info:
        zeros = {k: np.zeros_like(v) for k, v in info.items() if not k.startswith("_") and k not in ("players",)}
        info["final_info"] = {
            "env_id": zeros["env_id"],
            "_env_id": done,
            "elapsed_step": zeros["elapsed_step"],
            "_elapsed_step": done,
        }
        for k in zeros:
            if k not in ("env_id", "elapsed_step"):
                info["final_info"][k], info["final_info"]["_" + k] = zeros[k], done
        info["final_obs"] = np.zeros_like(obs)
        info["_final_obs"] = info["_final_info"] = done
    else:
        dense = np.zeros_like(obs)
        for i in np.flatnonzero(done):
            dense[i] = info["final_obs"][i]
        info["final_obs"] = dense
    return obs, rew, term, trunc, info


@pytest.mark.parametrize("task,kw", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize(
    "env_type,mode",
    [
        ("gymnasium", "next_step"),
        ("gymnasium", "same_step"),
        ("gym", "next_step"),
        ("gym", "same_step"),
        ("dm", "next_step"),
    ],
)
def test_xla_equals_recv(task, kw, env_type, mode):
    jax = pytest.importorskip("jax")
    if not pp._core.has_xla:
        pytest.skip("built without XLA")
    import jax.numpy as jnp

    n, steps = 2, 40
    kw = dict(kw, num_envs=n, seed=3, autoreset_mode=mode)
    ref = pp.make(task, env_type=env_type, **kw)
    env = pp.make(task, env_type=env_type, **kw)
    space = ref.spec.action_space
    space.seed(0)
    acts = np.stack([np.stack([space.sample() for _ in range(n)]) for _ in range(steps)])
    ref.reset()
    want = [ref.step(a) for a in acts]
    handle, _, _, step = env.xla()
    env.reset()
    _, got = jax.jit(lambda h, a: jax.lax.scan(lambda h, x: step(h, x), h, a))(handle, jnp.asarray(acts))
    life_lost = False
    for t, w in enumerate(want):
        g = jax.tree_util.tree_map(lambda x: np.asarray(x[t]), got)
        if mode == "same_step":
            w = _dense_final(w, n)
        _leaves_equal(w, g, f"{task} {env_type} {mode} t={t}")
        if env_type == "dm":
            life_lost |= bool(((w.discount == 0) & (w.step_type != 2)).any())
    if task == "Breakout-v5" and env_type == "dm":
        assert life_lost, "the run must cover a life loss (discount 0 without an episode end)"


# ---- E: reset_mask returns the whole batch, as gymnasium's SyncVectorEnv -----------------------------------------


@pytest.mark.parametrize("mode", ["next_step", "same_step", "disabled"])
def test_reset_mask_matches_sync_vector_env(mode):
    ours, ref = make_pair(mode)
    # before any reset (gymnasium's SyncVectorEnv cannot; ours returns zero rows for the envs not reset)
    first = np.array([True, False, True])
    oa, ia = ours.reset(options={"reset_mask": first.copy()})
    assert oa.shape == (N, 4) and not oa[1].any() and (oa[[0, 2], 0] == [0, 2]).all()
    ours.reset(seed=0)
    ref.reset(seed=0)
    rng = np.random.default_rng(5)
    resets = 0
    for t, a, b in lockstep(ours, ref, rng, 3 * EPISODE_LEN):
        np.testing.assert_array_equal(_strip(a[0]), _strip(b[0]), err_msg=f"t={t}")
        mask = rng.random(N) < 0.4
        if mode == "disabled":
            mask |= b[2] | b[3]  # finished envs must be reset before their next step
        if not mask.any():
            continue
        resets += 1
        oa, ia = ours.reset(options={"reset_mask": mask.copy()})
        ob, ib = ref.reset(options={"reset_mask": mask.copy()})
        assert oa.shape == ob.shape == (N, 4)
        np.testing.assert_array_equal(_strip(oa), _strip(ob), err_msg=f"t={t} mask={mask}")
        for key in ib:
            np.testing.assert_array_equal(ia[key], ib[key], err_msg=f"info[{key}] t={t}")
        for key in ("env_id", "elapsed_step", "score"):
            np.testing.assert_array_equal(ia["_" + key], mask)
            assert not ia[key][~mask].any()
    assert resets >= 5
    ours.close()
    ref.close()


@pytest.mark.parametrize("mode", ["next_step", "same_step", "disabled"])
def test_reset_mask_cartpole_against_gymnasium(mode):
    """gymnasium's CartPole in a SyncVectorEnv: same shapes, masks and unchanged rows; the reset rows equal a twin
    pool's reset of those envs with the same per-env seeds (gymnasium's form: one seed per env)."""
    n = 4
    ours = pp.make("CartPole-v1", num_envs=n, autoreset_mode=mode, seed=1)
    ref = SyncVectorEnv([lambda: gym.make("CartPole-v1") for _ in range(n)], autoreset_mode=_MODES[mode])
    before, _ = ours.reset(seed=1)
    ref.reset(seed=1)
    before = before.copy()
    mask = np.array([False, True, False, True])
    seeds = [10, 11, 12, 13]
    oa, ia = ours.reset(seed=seeds, options={"reset_mask": mask.copy()})
    ob, ib = ref.reset(seed=seeds, options={"reset_mask": mask.copy()})
    assert oa.shape == ob.shape and oa.dtype == ob.dtype
    np.testing.assert_array_equal(oa[~mask], before[~mask])  # unmasked rows unchanged
    twin = pp.make("CartPole-v1", num_envs=n, autoreset_mode=mode, seed=1)
    twin.reset()
    tw, _ = twin.reset(env_id=np.flatnonzero(mask), seed=[11, 13])
    np.testing.assert_array_equal(oa[mask], tw)
    assert set(ib) <= set(ia)  # gymnasium's CartPole has no info; ours has only masked keys besides ids
    for key, value in ia.items():
        if not key.startswith("_") and key != "players":
            np.testing.assert_array_equal(ia["_" + key], mask)


@pytest.mark.parametrize("via", ["step", "step_arrays", "python", "saved"])
def test_reset_mask_after_set_state_returns_the_restored_rows(via, tmp_path):
    """After set_state(ids, snapshot), a masked reset returns for the envs it leaves alone the observations of the
    restored state (those the envs had returned when the snapshot was taken, which the next step continues from),
    not the rows of the states they left: whether the pool's rows were kept by the engine (step) or by the
    front-end (step_arrays, Python envs), and through np.savez; a one-env snapshot restores into several envs."""
    n = 3
    if via == "python":
        env = pp.make(env_fn=lambda: gym.make("CartPole-v1"), num_envs=n, seed=0)
    else:
        env = pp.make("CartPole-v1", num_envs=n, seed=0)
    step = env.step_arrays if via == "step_arrays" else env.step
    env.reset()
    for _ in range(3):
        step(np.ones(n, dtype=np.int64))
    at_snapshot = env.step(np.zeros(n, dtype=np.int64))[0].copy()
    snap = env.get_state(np.arange(n))
    if via == "saved":
        np.savez(tmp_path / "snap.npz", **snap)
        snap = dict(np.load(tmp_path / "snap.npz"))
    for _ in range(4):  # away from the snapshot
        step(np.ones(n, dtype=np.int64))
    env.set_state(np.arange(n), snap)
    obs, _ = env.reset(options={"reset_mask": np.array([True, False, False])})
    np.testing.assert_array_equal(obs[1:], at_snapshot[1:])
    # the next step continues from exactly those rows: as stepping on right after the snapshot
    twin = pp.make("CartPole-v1", num_envs=n, seed=0) if via != "python" else None
    if twin is not None:
        twin.reset()
        twin.set_state(np.arange(n), snap)
        ones = np.ones(n, dtype=np.int64)
        np.testing.assert_array_equal(env.step(ones)[0][1:], twin.step(ones)[0][1:])
    env.set_state([1, 2], env.get_state([0]))  # one env's snapshot into two: its row into both
    row0 = env.reset(options={"reset_mask": np.array([True, False, False])})[0][0].copy()
    env.set_state([1, 2], env.get_state([0]))
    obs, _ = env.reset(options={"reset_mask": np.array([True, False, False])})
    np.testing.assert_array_equal(obs[1], row0)
    np.testing.assert_array_equal(obs[2], row0)
    env.close()


def test_reset_mask_after_a_restore_without_observation_rows_raises():
    """A restore that brings no observation (a snapshot of a dm pool, or the one-env set_state(env_id, values)):
    a masked reset that would return such an env's row raises, changing nothing, until the env is stepped or reset;
    a snapshot's rows of the wrong dtype or shape are refused before anything changes."""
    env = pp.make("CartPole-v1", num_envs=2, seed=0)
    env.reset()
    foreign = pp.make_dm("CartPole-v1", num_envs=2, seed=3)
    foreign.reset()
    env.set_state([0, 1], foreign.get_state([0, 1]))
    before = env.get_state([0, 1])
    with pytest.raises(ValueError, match=r"leaves envs \[1\] as they are"):
        env.reset(options={"reset_mask": np.array([True, False])})
    after = env.get_state([0, 1])
    np.testing.assert_array_equal(after["values"], before["values"])  # the masked env was not reset either
    env.reset(options={"reset_mask": np.array([True, True])})  # both reset: fine
    env.set_state(1, [0.0, 0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"leaves envs \[1\]"):
        env.reset(options={"reset_mask": np.array([True, False])})
    env.step(np.zeros(2, dtype=np.int64))  # a step of env 1 gives its row again
    env.reset(options={"reset_mask": np.array([True, False])})
    snap = env.get_state([0, 1])
    for bad in (snap["obs"].astype(np.float64), snap["obs"][:1], snap["obs"][:, :2]):
        with pytest.raises(ValueError, match="snapshot's 'obs' must be float32 of shape"):
            env.set_state([0, 1], dict(snap, obs=bad))


def test_reset_mask_refused_on_async_pool():
    env = pp.make("Dummy-v0", num_envs=4, batch_size=2)
    env.reset()
    with pytest.raises(ValueError, match="reset_mask needs a sync pool"):
        env.reset(options={"reset_mask": np.array([True, False, False, False])})


# ---- F: seeds ---------------------------------------------------------------------------------------------------


def test_seed_none_draws_a_random_seed():
    a, b = pp.make("CartPole-v1", num_envs=2, seed=None), pp.make("CartPole-v1", num_envs=2, seed=None)
    assert a.config["seed"] >= 0 and a.config["seed"] != b.config["seed"]
    assert not np.array_equal(a.reset()[0], b.reset()[0])


def test_negative_seeds_raise():
    with pytest.raises(ValueError, match="seed must be >= 0, got -1"):
        pp.make("CartPole-v1", seed=-1)
    env = pp.make("CartPole-v1", num_envs=2)
    with pytest.raises(ValueError, match="seed must be >= 0, got -3"):
        env.reset(seed=-3)
    with pytest.raises(ValueError, match="seed must be >= 0"):
        env.reset(seed=[1, -2])
    with pytest.raises(ValueError, match="seed must be >= 0"):
        pp.make_dm("CartPole-v1", num_envs=2).reset(seed=-1)
    env.reset(seed=2**40)  # large seeds pass unmangled
    np.testing.assert_array_equal(env.reset(seed=2**40)[0], pp.make("CartPole-v1", num_envs=2, seed=2**40).reset()[0])


# ---- G: gymnasium's loop on an async pool ---------------------------------------------------------------------


def test_async_pool_runs_the_plain_gymnasium_loop():
    env = pp.make("Dummy-v0", num_envs=6, batch_size=2, num_threads=2, seed=0)
    obs, info = env.reset()
    sent = {}
    seen = set()
    for _ in range(60):
        ids = info["env_id"]
        act = (ids % 9 + 1).astype(np.int32)  # a policy of the observation rows' env
        sent.update(zip(ids.tolist(), act.tolist()))
        obs, rew, term, trunc, info = env.step(act)
        assert obs.shape[0] == 2
        for e, r, el in zip(info["env_id"].tolist(), rew.tolist(), info["elapsed_step"].tolist()):
            seen.add(e)
            if el > 0:
                assert r == sent[e]  # Dummy's reward is the action this env was sent
    assert seen == set(range(6))


# ---- H: gymnasium's info masks and same-step final keys -------------------------------------------------------


def test_info_masks_for_every_key():
    env = pp.make("Dummy-v0", num_envs=3)
    _, info = env.reset()
    for key in ("env_id", "elapsed_step", "score", "players"):
        assert info["_" + key].dtype == np.bool_ and info["_" + key].all() and len(info["_" + key]) == 3
    *_, info = env.step(np.array([1, 2, 3]))
    assert info["_score"].all() and "final_obs" not in info


def test_observations_lie_in_the_observation_space_of_every_env_type():
    """One id of every env type of this build: `single_observation_space.contains(row)` holds for every row from
    the first reset through 200 random steps (TorchRL's spec check and gymnasium's own checks rely on it)."""
    from parallel_pool.registry import env_class_of

    by_type: dict[str, list[str]] = {}
    for task in pp.list_all_envs():
        by_type.setdefault(env_class_of(task), []).append(task)
    outside = []
    for tasks in by_type.values():
        for task in tasks:  # the first id that makes here (some need files the user gives: WFC patterns, a .cfg)
            try:
                env = pp.make(task, num_envs=2, seed=1)
                break
            except ValueError:
                continue
        else:
            continue
        space = env.single_observation_space
        env.action_space.seed(0)
        obs, _ = env.reset()
        for step in range(201):
            rows = [obs[r] if not isinstance(obs, dict) else {k: v[r] for k, v in obs.items()} for r in range(2)]
            if not all(space.contains(row) for row in rows):
                outside.append((task, step))
                break
            obs = env.step(_own_range(env, env.action_space.sample()))[0]
        env.close()
    assert not outside


def _own_range(env, actions):
    """Random discrete actions brought into each player's own range where the env's players differ (its spec's
    player table: a row past its player's own n is refused), else as sampled."""
    players = env.spec.engine_spec.get("players")
    if not players or not isinstance(env.single_action_space, gym.spaces.Discrete):
        return actions
    return actions % np.tile([p["action_size"] for p in players], len(actions) // len(players))


def _arrays_in(tree):
    """Every numpy array in a result (tuples, dicts, gymnasium's object arrays of final observations)."""
    if isinstance(tree, dict):
        return [a for v in tree.values() for a in _arrays_in(v)]
    if isinstance(tree, tuple):
        return [a for v in tree for a in _arrays_in(v)]
    if isinstance(tree, np.ndarray) and tree.dtype == object:
        return [a for v in tree if v is not None for a in _arrays_in(v)]
    return [tree] if isinstance(tree, np.ndarray) else []


@pytest.mark.parametrize("kw", [{}, {"autoreset_mode": "same_step"}, {"batch_size": 2}, {"env_type": "gym"}], ids=str)
def test_held_results_never_change(kw):
    """A result the user holds (all of it, its info, one `_key` mask) never changes at later calls, not even when
    the user writes into every array of a later result that numpy lets them write into (the `_key` masks that
    every step's info shares are read-only for good: their WRITEABLE flag cannot be set back)."""
    env = pp.make("Dummy-v0", num_envs=4, max_episode_steps=3, **kw)
    env.reset()
    held = []
    for step in range(18):
        result = env.step(np.arange(env.batch_size) + 1)
        if step % 2 == 0:  # held: all of it, its info, or one mask
            part = (result, result[4], result[4].get("_env_id", result[4]["env_id"]))[step // 2 % 3]
            held.append((part, copy.deepcopy(part)))
        else:  # written into, where numpy allows
            for a in _arrays_in(result):
                try:
                    a.flags.writeable = True
                except ValueError:
                    continue  # read-only for good
                a[...] = 0
        del result
        for part, was in held:
            assert all(np.array_equal(x, y) for x, y in zip(_arrays_in(part), _arrays_in(was)))


@pytest.mark.parametrize("max_steps", [1000, 3])
def test_same_step_final_keys_structure_matches_sync_vector_env(max_steps):
    ours, ref = make_pair("same_step", max_steps)
    ours.reset(seed=0)
    ref.reset(seed=0)
    rng = np.random.default_rng(3)
    ended = 0
    for t, (*_, ia), (*_, ib) in lockstep(ours, ref, rng, 3 * EPISODE_LEN):
        assert ("final_obs" in ia) == ("final_obs" in ib) and ("_final_info" in ia) == ("_final_info" in ib), t
        if "final_info" in ib:
            ended += ib["_final_obs"].sum()
            np.testing.assert_array_equal(ia["_final_obs"], ib["_final_obs"])
            assert ia["final_obs"].dtype == object and ia["final_obs"][~ib["_final_obs"]].tolist() == [None] * int(
                (~ib["_final_obs"]).sum()
            )
            np.testing.assert_allclose(ia["final_info"]["score"], ib["final_info"]["score"])  # zeros elsewhere
            np.testing.assert_array_equal(ia["final_info"]["_score"], ib["final_info"]["_score"])
    assert ended >= N


# ---- I: what each front-end claims ------------------------------------------------------------------------------


def test_dm_front_end_is_a_dm_env_with_matching_observation_spec():
    env = pp.make_dm("Dummy-v0", num_envs=2)
    assert isinstance(env, dm_env.Environment)
    spec, ts = env.observation_spec(), env.reset()
    assert type(spec).__name__ == type(ts.observation).__name__ == "State"
    assert spec._fields == ts.observation._fields
    assert spec.players._fields == ts.observation.players._fields
    for name in spec._fields:
        if name != "players":
            assert getattr(spec, name).shape == getattr(ts.observation, name).shape[1:], name
    atari = pp.make_dm("Pong-v5", num_envs=1)
    assert atari.observation_spec().obs.shape == (4, 84, 84)


def test_gym_front_end_is_a_gymnasium_env_with_is_vector_env():
    env = pp.make_gym("CartPole-v1", num_envs=2)
    assert isinstance(env, gym.Env) and env.is_vector_env
    assert env.spec.id == "CartPole-v1" and pp.make("CartPole-v1").spec.id == "CartPole-v1"


def test_spec_array_specs_match_envpool():
    envpool = pytest.importorskip("envpool")
    for task in ("CartPole-v1", "Pong-v5"):
        ours, theirs = pp.make_spec(task), envpool.make_spec(task)
        assert set(ours.action_array_spec) == set(theirs.action_array_spec)
        if task == "CartPole-v1":  # (Atari's info keys are the envs' own)
            assert set(theirs.state_array_spec) <= set(ours.state_array_spec)
        for key, s in theirs.action_array_spec.items():
            assert ours.action_array_spec[key].dtype == s.dtype and ours.action_array_spec[key].shape == s.shape, key
        # shapes are lists, as EnvPool's (its Atari test compares info:ram's with [128]); which arrays EnvPool marks
        # per player (-1) differs from family to family and is not compared
        assert all(type(a.shape) is list for a in (*ours.state_array_spec.values(), *ours.action_array_spec.values()))
        if task == "Pong-v5":
            assert ours.state_array_spec["info:ram"].shape == list(theirs.state_array_spec["info:ram"].shape) == [128]


def test_deprecated_seed_warns_and_seeds_the_next_reset():
    """EnvPool's `env.seed(s); env.reset()` ports unchanged: seed() warns (a UserWarning too, as EnvPool's) and
    the next reset uses the seed, once; seed() itself resets nothing."""
    a, b = pp.make("CartPole-v1", num_envs=2), pp.make("CartPole-v1", num_envs=2)
    with pytest.warns(DeprecationWarning):
        a.seed(9)
    with pytest.warns(UserWarning):
        a.seed(9)
    np.testing.assert_array_equal(a.reset()[0], b.reset(seed=9)[0])
    np.testing.assert_array_equal(a.reset()[0], b.reset()[0])  # used once: both go on from their generators
    with pytest.raises(ValueError, match="seed"):
        a.seed(-1)


def test_deprecated_seed_on_an_async_pool_leaves_nothing_pending():
    a = pp.make("CartPole-v1", num_envs=4, batch_size=2)
    b = pp.make("CartPole-v1", num_envs=4)
    with pytest.warns(DeprecationWarning):
        a.seed(5)
    a.async_reset()  # would fail ("action pending") had seed() sent resets itself
    want = b.reset(seed=5)[0]
    for _ in range(2):
        obs, *_, info = a.recv()
        np.testing.assert_array_equal(obs, want[info["env_id"]])


def test_gymnasium_attr_api():
    env = pp.make("CartPole-v1", num_envs=3, max_episode_steps=77)
    assert env.get_attr("max_episode_steps") == (77, 77, 77)
    assert env.get_attr("observation_space")[0] == env.single_observation_space
    states = env.call("get_state")
    assert len(states) == 3 and all(len(s) == 4 for s in states)
    with pytest.raises(AttributeError, match="gravity"):
        env.get_attr("gravity")
    with pytest.raises(AttributeError, match="cannot set 'max_episode_steps'"):
        env.set_attr("max_episode_steps", 10)


# ---- J: EnvPool's action forms ----------------------------------------------------------------------------------


@pytest.mark.parametrize("env_type", ["gymnasium", "gym", "dm"])
def test_envpool_action_dicts(env_type):
    a, b = pp.make("Dummy-v0", env_type=env_type, num_envs=3), pp.make("Dummy-v0", env_type=env_type, num_envs=3)
    a.reset()
    b.reset()
    act = np.array([1, 2, 3], np.int32)
    ra, rb = a.step({"action": act}), b.step(act)
    np.testing.assert_array_equal(ra[1] if env_type != "dm" else ra.reward, rb[1] if env_type != "dm" else rb.reward)
    ids = np.array([2, 0], np.int32)
    full = {"env_id": ids, "players.env_id": ids, "action": np.array([5, 6], np.int32)}
    out = a.step(full)
    rew, info_ids = (out.reward, out.observation.env_id) if env_type == "dm" else (out[1], out[4]["env_id"])
    np.testing.assert_array_equal(info_ids, ids)
    np.testing.assert_array_equal(rew, [5, 6])
    a.send(full)
    out = a.recv()
    np.testing.assert_array_equal(out.observation.env_id if env_type == "dm" else out[4]["env_id"], ids)
    with pytest.raises(ValueError, match="unexpected"):
        a.step({"action": act, "bogus": act})


def test_scalar_action_is_a_type_error():
    env = pp.make("CartPole-v1", num_envs=1)
    env.reset()
    for scalar in (1, np.int64(1), np.array(1)):
        with pytest.raises(TypeError, match="scalar"):
            env.step(scalar)
    env.step(np.array([1]))  # still usable


# ---- K: EnvPool's common keys and reward_threshold ---------------------------------------------------------------


def test_envpool_common_keys():
    pp.make("CartPole-v1", gym_reset_return_info=True)
    with pytest.raises(ValueError, match="gym_reset_return_info"):
        pp.make("CartPole-v1", gym_reset_return_info=False)
    with pytest.raises(ValueError, match="'base_path'.*installed packages"):
        pp.make("CartPole-v1", base_path="/tmp")
    with pytest.raises(ValueError, match="'env_seed'.*reset\\(seed="):
        pp.make("CartPole-v1", env_seed=[1, 2])


@pytest.mark.parametrize("task", ["CartPole-v1", "Ant-v4", "Pong-v5"])
def test_every_envpool_common_key_is_accepted_or_explained(task):
    envpool = pytest.importorskip("envpool")
    common = set(envpool.make_spec("CartPole-v1").config._fields) & set(envpool.make_spec("Pong-v5").config._fields)
    ours = set(pp.make_spec(task).config._fields)
    for key in sorted(common - ours):
        default = getattr(envpool.make_spec(task).config, key)
        if key == "gym_reset_return_info":
            pp.make_spec(task, **{key: True})
            continue
        with pytest.raises(ValueError, match=f"'{key}'.* instead|'{key}'.*: "):
            pp.make_spec(task, **{key: default})


@pytest.mark.parametrize("task", ["CartPole-v1", "Pendulum-v1", "MountainCar-v0", "Acrobot-v1"])
def test_reward_threshold_as_gymnasium(task):
    assert pp.make_spec(task).reward_threshold == gym.spec(task).reward_threshold


# ---- L: render glue -----------------------------------------------------------------------------------------------


def test_render_glue(monkeypatch):
    calls = []
    fake = types.ModuleType("parallel_pool.render")
    fake.render_frames = lambda spec, core, ids: (
        calls.append((spec, core, ids)) or np.zeros((len(ids), 2, 2, 3), np.uint8)
    )
    monkeypatch.setitem(sys.modules, "parallel_pool.render", fake)
    for env_type in ("gymnasium", "gym", "dm"):
        env = pp.make("CartPole-v1", env_type=env_type, num_envs=3, render_mode="rgb_array")
        assert env.render_mode == "rgb_array"
        if env_type != "dm":
            assert env.metadata["render_modes"] == ["rgb_array"]
        frames = env.render()
        assert frames.shape == (3, 2, 2, 3)
        np.testing.assert_array_equal(calls[-1][2], [0, 1, 2])
        assert calls[-1][0] is env.spec and calls[-1][1] is env.engine
        env.render(env_ids=[1])
        np.testing.assert_array_equal(calls[-1][2], [1])
    with pytest.raises(ValueError, match="render_mode"):
        pp.make("CartPole-v1", render_mode="human")
    with pytest.raises(ValueError, match="render_mode='rgb_array'"):
        pp.make("CartPole-v1").render()


def test_render_real_frames():
    pytest.importorskip("parallel_pool.render")
    env = pp.make("CartPole-v1", num_envs=2, render_mode="rgb_array")
    env.reset()
    frames = env.render()
    assert frames.dtype == np.uint8 and frames.ndim == 4 and frames.shape[0] == 2 and frames.shape[-1] == 3


# ---- M: multi-player, disabled autoreset, env_id subsets ---------------------------------------------------------


def test_two_player_disabled_subsets_and_reset_mask():
    env = pp.make("TwoPlayer-v0", num_envs=3, autoreset_mode="disabled", episode_len=5)
    obs, info = env.reset()
    latest = {e: obs[info["players"]["env_id"] == e].copy() for e in range(3)}
    rng = np.random.default_rng(0)
    for t in range(12):
        ids = np.sort(rng.choice(3, size=rng.integers(1, 4), replace=False)).astype(np.int32)
        obs, rew, term, trunc, info = env.step(np.ones(2 * len(ids), np.int32), env_id=ids)
        for e in ids:
            latest[int(e)] = obs[info["players"]["env_id"] == e].copy()
        mask = np.zeros(3, bool)
        mask[info["env_id"][term | trunc]] = True
        if mask.any():
            full, finfo = env.reset(options={"reset_mask": mask})
            assert full.shape == (6, 3)
            np.testing.assert_array_equal(finfo["players"]["env_id"], [0, 0, 1, 1, 2, 2])
            for e in range(3):
                rows = full[finfo["players"]["env_id"] == e]
                if mask[e]:
                    latest[e] = rows.copy()
                else:
                    np.testing.assert_array_equal(rows, latest[e], err_msg=f"t={t} env {e}")
            assert (finfo["elapsed_step"][mask] == 0).all()


# ---- N: lifecycle -------------------------------------------------------------------------------------------------


def test_del_never_raises_on_a_half_constructed_pool():
    obj = GymnasiumPool.__new__(GymnasiumPool)
    obj.__del__()
    assert obj.closed
    obj.close()
    with pytest.raises(ValueError):
        pp.make("CartPole-v1", num_envs=0)


@pytest.mark.parametrize("env_type", ["gymnasium", "gym", "dm"])
def test_every_method_after_close_raises(env_type):
    env = pp.make("CartPole-v1", env_type=env_type, num_envs=2, render_mode="rgb_array")
    env.reset()
    env.close()
    env.close()
    assert env.closed
    act = np.array([0, 1])
    for call in (
        lambda: env.step(act),
        lambda: env.reset(),
        lambda: env.send(act),
        env.recv,
        lambda: env.step_arrays(act),
        env.recv_arrays,
        env.async_reset,
        lambda: env.get_state(0),
        lambda: env.render(),
        env.xla,
    ):
        with pytest.raises(RuntimeError, match="closed"):
            call()


def test_interpreter_exit_with_open_pools():
    code = (
        "import parallel_pool as pp, numpy as np\n"
        "a = pp.make('CartPole-v1', num_envs=4, batch_size=2); a.async_reset()\n"
        "b = pp.make_dm('Dummy-v0', num_envs=2); b.reset()\n"
        "c = pp.make_gym('CartPole-v1', num_envs=2); c.close()\n"
    )
    r = run_python(code, timeout=120)
    assert r.returncode == 0 and "Exception" not in r.stderr, r.stderr
