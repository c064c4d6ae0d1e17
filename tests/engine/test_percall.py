"""The per-call fast path of the gym-style front-ends (sync pool, every env, one action array) gives exactly what
the general path gives: the same 5-tuple, the same info keys and masks, and the same rows kept for reset_mask.
The arrays-only calls (step_arrays / recv_arrays) give the arrays the front-ends' results are made of."""

import numpy as np
import pytest

import parallel_pool


def _same(a, b):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _same(a[k], b[k])
    else:
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("env_type", ["gymnasium", "gym"])
@pytest.mark.parametrize("task", ["CartPole-v1", "Dummy-v0"])
def test_fast_path_matches_the_general_path(env_type, task):
    n = 3
    fast = parallel_pool.make(task, env_type=env_type, num_envs=n, seed=5)
    general = parallel_pool.make(task, env_type=env_type, num_envs=n, seed=5)
    fast.reset()
    general.reset()
    rng = np.random.default_rng(0)
    space = fast.single_action_space if env_type == "gymnasium" else fast.action_space
    for _ in range(30):
        act = np.array([space.sample() for _ in range(n)])
        a = fast.step(act)  # the fast path
        b = general.step(act, env_id=np.arange(n))  # the general path (explicit env ids)
        for x, y in zip(a, b):
            _same(x, y)
        assert list(a[4]) == list(b[4])  # same info keys in the same order
    mask = rng.random(n) < 0.5
    mask[0] = True
    _same(fast.reset(options={"reset_mask": mask})[0], general.reset(options={"reset_mask": mask})[0])
    fast.close()
    general.close()


def test_fast_path_on_a_closed_pool_names_the_front_end():
    env = parallel_pool.make("CartPole-v1", num_envs=2)
    env.reset()
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.step(np.zeros(2, np.int32))


def _named(env, arrays):
    return dict(zip((f.name for f in env.schema.fields), arrays))


_SAME_STEP = {"autoreset_mode": "same_step"}


@pytest.mark.parametrize(
    ("env_type", "task", "kw"),
    [(t, "CartPole-v1", {}) for t in ("gymnasium", "gym", "dm")]
    + [("dm", "Dummy-v0", {}), ("gymnasium", "Dummy-v0", _SAME_STEP), ("gym", "Dummy-v0", _SAME_STEP)],
)
def test_step_arrays_are_the_front_end_result(env_type, task, kw):
    """Twin pools, same actions: step_arrays' arrays equal the values of step()'s result, through episode ends
    (Dummy ends every few steps; same_step fills the final rows)."""
    n = 3
    raw = parallel_pool.make(task, env_type=env_type, num_envs=n, seed=5, **kw)
    ref = parallel_pool.make(task, env_type=env_type, num_envs=n, seed=5, **kw)
    raw.reset()
    ref.reset()
    rng = np.random.default_rng(0)
    ends = 0
    for t in range(40):
        act = rng.integers(0, 2, n).astype(np.int32)
        got = _named(raw, raw.step_arrays(act) if t % 2 else raw.step_arrays(act, env_id=np.arange(n)))
        want = ref.step(act)
        if env_type == "dm":
            np.testing.assert_array_equal(got["reward"], want.reward)
            np.testing.assert_array_equal(got["obs"], want.observation.obs)
            np.testing.assert_array_equal(got["env_id"], want.observation.env_id)
            np.testing.assert_array_equal(got["terminated"] | got["truncated"], want.step_type == 2)
            continue
        obs, reward, term, trunc, info = want
        for name, value in [("obs", obs), ("reward", reward), ("terminated", term), ("truncated", trunc)]:
            np.testing.assert_array_equal(got[name], value, err_msg=f"{name} t={t}")
        np.testing.assert_array_equal(got["env_id"], info["env_id"])
        np.testing.assert_array_equal(got["elapsed_step"], info["elapsed_step"])
        if "final_obs" in info:
            ends += 1
            for i in np.flatnonzero(info["_final_obs"]):
                np.testing.assert_array_equal(got["final:obs"][i], info["final_obs"][i])
    if kw:
        assert ends > 0, "the run must cover same-step episode ends"


@pytest.mark.parametrize("env_type", ["gymnasium", "gym"])
def test_reset_mask_after_step_arrays_keeps_the_latest_rows(env_type):
    """reset_mask's unchanged rows are the observations the last step_arrays() returned, as after step()."""
    n = 4
    env = parallel_pool.make("CartPole-v1", env_type=env_type, num_envs=n, seed=3)
    env.reset()
    for _ in range(3):
        arrays = env.step_arrays(np.ones(n, np.int32))
    latest = arrays[env.schema.index["obs"]].copy()
    mask = np.array([True, False, False, True])
    obs, _ = env.reset(options={"reset_mask": mask})
    np.testing.assert_array_equal(obs[~mask], latest[~mask])
    # a subset step through step_arrays is merged into the kept rows
    sub = env.step_arrays(np.zeros(1, np.int32), env_id=[2])
    mask = np.array([True, False, False, False])
    obs, _ = env.reset(options={"reset_mask": mask})
    np.testing.assert_array_equal(obs[2], sub[env.schema.index["obs"]][0])
    np.testing.assert_array_equal(obs[1], latest[1])


def test_arrays_calls_on_an_async_pool():
    env = parallel_pool.make("CartPole-v1", num_envs=4, batch_size=2, seed=0)
    env.async_reset()
    arrays = env.recv_arrays()
    ids = arrays[env.schema.index["env_id"]]
    assert arrays[env.schema.index["obs"]].shape == (2, 4) and len(set(ids.tolist())) == 2
    arrays = env.step_arrays(np.zeros(2, np.int32))  # no env_id: the envs of the last batch, as step()
    assert arrays[env.schema.index["obs"]].shape == (2, 4)
    env.send(np.zeros(2, np.int32), arrays[env.schema.index["env_id"]])
    assert env.recv_arrays()[env.schema.index["obs"]].shape == (2, 4)
    with pytest.raises(ValueError, match="action"):
        env.step_arrays(np.zeros(3, np.int32))  # bad input: a clear error, nothing lost
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.step_arrays(np.zeros(2, np.int32))


@pytest.mark.parametrize("env_type", ["gymnasium", "gym"])
@pytest.mark.parametrize("call", ["step", "step_env_id", "step_arrays", "reset", "send_recv", "recv_arrays"])
def test_reset_mask_rows_are_the_pools_own_copy(env_type, call):
    """Whatever call last returned an env's observation (the fast path, the general path, reset, a sync pool's
    send/recv), a masked reset returns that env's row as it was returned, even after the user edited their array
    in place; a twin pool driven only by step() gives the same rows."""
    n = 3
    env = parallel_pool.make("Dummy-v0", env_type=env_type, num_envs=n, seed=5)
    twin = parallel_pool.make("Dummy-v0", env_type=env_type, num_envs=n, seed=5)
    env.reset()
    twin.reset()
    act = np.array([1, 2, 3])
    for _ in range(2):
        twin.step(act)
    env.step(act)
    if call == "step":
        obs = env.step(act)[0]
    elif call == "step_env_id":
        obs = env.step(act, np.arange(n))[0]
    elif call == "step_arrays":
        obs = env.step_arrays(act)[env.schema.index["obs"]]
    elif call == "reset":  # the twin resets as well
        obs, _ = env.reset()
        twin.reset()
    else:
        env.send(act)
        obs = env.recv()[0] if call == "send_recv" else env.recv_arrays()[env.schema.index["obs"]]
    want = obs.copy()
    obs += 100  # the user's own array, edited in place
    mask = np.array([True, False, False])
    got, _ = env.reset(options={"reset_mask": mask})
    ref, _ = twin.reset(options={"reset_mask": mask})
    np.testing.assert_array_equal(got[1:], want[1:])
    np.testing.assert_array_equal(got, ref)
    got[1:] += 100  # the masked reset's result is the user's too
    np.testing.assert_array_equal(env.reset(options={"reset_mask": mask})[0][1:], want[1:])
    env.close()
    twin.close()


# ---- result arrays that no caller holds are refilled (docs/decisions.md, "Engine: result arrays") -------------


def _cartpole(n=1, **kw):
    env = parallel_pool.make("CartPole-v1", num_envs=n, seed=3, **kw)
    env.reset()
    return env


@pytest.mark.parametrize("hold", ["tuple", "array", "view", "memoryview", "front_end"])
def test_held_arrays_never_change(hold):
    """Hold (some of) the arrays of step k in each way Python can reach them, step many more times: what is held
    keeps step k's values; a twin pool stepped alike says what those values were."""
    env, twin = _cartpole(2), _cartpole(2)
    act = np.array([1, 0], np.int32)
    for _ in range(3):
        env.step_arrays(act)
        twin.step_arrays(act)
    if hold == "front_end":
        obs, reward, term, trunc, info = env.step(act)
        held = (obs, reward, info["env_id"], info["elapsed_step"])
        want = twin.step(act)
        want = (want[0], want[1], want[4]["env_id"], want[4]["elapsed_step"])
    else:
        arrays = env.step_arrays(act)
        want = twin.step_arrays(act)
        held = {
            "tuple": arrays,
            "array": (arrays[0], arrays[1]),
            "view": (arrays[0][:1], arrays[env.schema.index["elapsed_step"]][1:]),
            "memoryview": (memoryview(arrays[0]),),
        }[hold]
        at = env.schema.index["elapsed_step"]
        want = {"tuple": want, "array": want[:2], "view": (want[0][:1], want[at][1:]), "memoryview": want[:1]}[hold]
        del arrays
    want = [np.array(w, copy=True) for w in want]
    for _ in range(20):
        env.step_arrays(act)
        env.step(act)
    for h, w in zip(held, want):
        np.testing.assert_array_equal(np.asarray(h), w)
    env.close()
    twin.close()


def test_unheld_results_are_refilled_not_remade():
    """The per-call saving itself: a result nobody holds comes back as the same objects, refilled with the new
    batch's values (equal to a twin pool's fresh arrays); a held one is never handed out again."""
    env, twin = _cartpole(), _cartpole()
    act = np.array([1], np.int32)
    ids = set()
    for _ in range(30):
        got = env.step_arrays(act)
        ids.add(id(got))
        want = twin.step_arrays(act)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
        del got
    assert len(ids) <= 2  # the two cached results, refilled
    held = env.step_arrays(act)
    other = env.step_arrays(act)
    assert held is not other
    assert env.step_arrays(act) is not held and env.step_arrays(act) is not held
    env.close()
    twin.close()


def test_large_sync_batches_are_written_into_kept_results():
    """A sync step writes straight into the block of a kept result nobody holds, whatever the batch's size (256
    CartPoles: more than the 8 KiB up to which other batches are copied into one): the same arrays come back with a
    twin pool's values, and arrays a caller holds keep theirs."""
    n = 256
    env, twin = _cartpole(n), _cartpole(n)
    rng = np.random.default_rng(1)
    ids = set()
    for _ in range(20):
        act = rng.integers(0, 2, n).astype(np.int32)
        got, want = env.step_arrays(act), twin.step_arrays(act, env_id=np.arange(n))
        ids.add(id(got))
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
        del got
    assert len(ids) <= 2
    held = env.step_arrays(np.ones(n, np.int32))
    want = [a.copy() for a in twin.step_arrays(np.ones(n, np.int32))]
    before = env.engine._results_reused
    for _ in range(10):
        act = rng.integers(0, 2, n).astype(np.int32)
        env.step(act)
        env.step_arrays(act)
    assert env.engine._results_reused > before  # step()'s kept result came back too
    for h, w in zip(held, want):
        np.testing.assert_array_equal(h, w)
    env.close()
    twin.close()


@pytest.mark.parametrize("env_type", ["gymnasium", "gym"])
def test_reset_mask_rows_from_the_engine_and_the_front_end_in_turn(env_type):
    """The fast paths leave reset_mask's rows to the C++ engine, other calls give them to the front-end: in any
    order, reset_mask returns the latest rows, as a twin pool whose every step names its env ids."""
    n = 5
    fast = parallel_pool.make("CartPole-v1", env_type=env_type, num_envs=n, seed=7)
    twin = parallel_pool.make("CartPole-v1", env_type=env_type, num_envs=n, seed=7)
    fast.reset()
    twin.reset()
    rng = np.random.default_rng(2)
    every = np.arange(n)
    for t in range(30):
        act = rng.integers(0, 2, n).astype(np.int32)
        kind = t % 5
        if kind == 0:
            fast.step(act)
            twin.step(act, env_id=every)
        elif kind == 1:
            fast.step_arrays(act)
            twin.step_arrays(act, env_id=every)
        elif kind == 2:  # a subset, merged by the front-end
            sub = rng.permutation(n)[:2]
            fast.step(act[:2], env_id=sub)
            twin.step(act[:2], env_id=sub)
        elif kind == 3:
            fast.reset()
            twin.reset()
        mask = rng.random(n) < 0.4
        mask[t % n] = True
        np.testing.assert_array_equal(
            fast.reset(options={"reset_mask": mask})[0], twin.reset(options={"reset_mask": mask})[0]
        )
    fast.close()
    twin.close()


def test_an_array_changed_in_place_is_not_refilled():
    """A result array whose shape (or dtype) a caller changed in place before dropping it is never reused: the next
    results have the engine's shapes."""
    env = _cartpole(2)
    act = np.array([1, 0], np.int32)
    for _ in range(4):
        arrays = env.step_arrays(act)
        arrays[0].shape = (8,)
        arrays[1].dtype = np.int32
        del arrays
    for _ in range(4):
        arrays = env.step_arrays(act)
        assert arrays[0].shape == (2, 4) and arrays[1].dtype == np.float32
    env.close()


# ---- step()'s result that no caller holds is returned again, refilled (docs/decisions.md, "Per call") -----------


def _copy_tree(x):
    """A deep copy of a gym-style result's values (arrays copied, dicts and tuples rebuilt)."""
    if isinstance(x, dict):
        return {k: _copy_tree(v) for k, v in x.items()}
    if isinstance(x, tuple):
        return tuple(_copy_tree(v) for v in x)
    return np.array(x, copy=True)


def _same_tree(got, want):
    """Equal values, keys in the same order, the same structure."""
    assert type(got) is type(want)
    if isinstance(got, dict):
        assert list(got) == list(want)
        for k in got:
            _same_tree(got[k], want[k])
    elif isinstance(got, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same_tree(g, w)
    else:
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype and got.shape == want.shape


_PARTS = {
    "tuple": lambda r: r,
    "obs": lambda r: r[0],
    "reward": lambda r: r[1],
    "terminated": lambda r: r[2],
    "truncated": lambda r: r[3],
    "info": lambda r: r[4],
    "players": lambda r: r[4]["players"],
    "env_id": lambda r: r[4]["env_id"],
    "elapsed_step": lambda r: r[4]["elapsed_step"],
}


@pytest.mark.parametrize("env_type", ["gymnasium", "gym"])
@pytest.mark.parametrize("hold", sorted(_PARTS))
def test_held_step_results_never_change(env_type, hold):
    """Hold one part of a step() result (the tuple, one of its arrays, the info dict, info["players"]) and step
    on, through step() and step_arrays(): what is held keeps its values, keys and structure (a twin pool stepped
    alike says what they were), while the engine goes on returning results it can reuse."""
    env = parallel_pool.make("Dummy-v0", env_type=env_type, num_envs=2, seed=3)
    twin = parallel_pool.make("Dummy-v0", env_type=env_type, num_envs=2, seed=3)
    env.reset()
    twin.reset()
    act = np.array([1, 2])
    for _ in range(3):
        env.step(act)
        twin.step(act)
    held = _PARTS[hold](env.step(act))
    want = _copy_tree(_PARTS[hold](twin.step(act)))
    before = env.engine._results_reused
    for _ in range(20):
        env.step(act)
        env.step_arrays(act)
    _same_tree(held, want)
    assert env.engine._results_reused > before  # the loop reused results all along
    env.close()
    twin.close()


@pytest.mark.parametrize("env_type", ["gymnasium", "gym"])
def test_unheld_step_results_are_returned_again(env_type):
    """A loop that drops each step() result gets the kept results back, refilled: equal, value for value and key
    for key, to a twin pool's fresh results (its general path: explicit env ids), through episode ends (Dummy's
    episodes last a few steps)."""
    n = 2
    env = parallel_pool.make("Dummy-v0", env_type=env_type, num_envs=n, seed=5, episode_len=4)
    twin = parallel_pool.make("Dummy-v0", env_type=env_type, num_envs=n, seed=5, episode_len=4)
    env.reset()
    twin.reset()
    rng = np.random.default_rng(0)
    before = env.engine._results_reused
    for _ in range(40):
        act = rng.integers(0, 4, n)
        _same_tree(env.step(act), twin.step(act, env_id=np.arange(n)))
    assert env.engine._results_reused - before >= 35
    env.close()
    twin.close()


@pytest.mark.parametrize(
    "change",
    ["add_key", "delete_key", "replace_array", "replace_mask", "replace_players", "players_key", "reorder"],
)
def test_a_result_changed_in_place_is_not_returned_again(change):
    """A caller that changes a result's info dict (or info["players"]) in place and then drops it never gets that
    dict back: the next results have gymnasium's keys and values (a twin pool's)."""
    env, twin = _cartpole(), _cartpole()
    act = np.array([1], np.int32)
    for _ in range(3):
        env.step(act)
        twin.step(act)
    for _ in range(3):
        info = env.step(act)[4]
        twin.step(act)
        if change == "add_key":
            info["episode"] = 1
        elif change == "delete_key":
            del info["_elapsed_step"]
        elif change == "replace_array":
            info["env_id"] = np.zeros(1, np.int32)
        elif change == "replace_mask":
            info["_env_id"] = np.zeros(1, bool)
        elif change == "replace_players":
            info["players"] = {"env_id": np.zeros(1, np.int32)}
        elif change == "players_key":
            info["players"]["extra"] = 1
        else:
            info["env_id"] = info.pop("env_id")
        del info
    for _ in range(6):
        _same_tree(env.step(act), twin.step(act, env_id=np.arange(1)))
    env.close()
    twin.close()


def test_same_step_results_are_not_kept():
    """With same-step autoreset the result's keys depend on whether an episode ended, so step() builds each result
    (final keys exactly on the steps where an episode ended, as the general path)."""
    env = parallel_pool.make("Dummy-v0", num_envs=2, seed=5, episode_len=3, autoreset_mode="same_step")
    twin = parallel_pool.make("Dummy-v0", num_envs=2, seed=5, episode_len=3, autoreset_mode="same_step")
    env.reset()
    twin.reset()
    act = np.array([1, 2])
    ends = 0
    for _ in range(12):
        got, want = env.step(act), twin.step(act, env_id=np.arange(2))
        assert list(got[4]) == list(want[4])
        ends += "final_obs" in got[4]
    assert ends > 0 and env.engine._results_reused == 0
    env.close()
    twin.close()


def test_engine_calls_take_arguments_by_position_or_name():
    """The engine's per-call methods (METH_FASTCALL, without pybind11's dispatcher) take their arguments as the
    pybind11 methods did, and refuse the others with Python's own TypeError, changing nothing."""
    env = _cartpole(2)
    engine, act = env.engine, np.array([1, 0], np.int32)
    by_position = engine.step(act, None)
    by_name = engine.step(actions=act, env_id=np.arange(2))
    assert len(by_position) == len(by_name) == len(env.schema.fields)
    engine.send(act, env_id=None, reset=False, seeds=None)
    assert engine.recv()[env.schema.index["obs"]].shape == (2, 4)
    for call, match in [
        (lambda: engine.step(), "missing required argument 'actions'"),
        (lambda: engine.step(act, None, None), "at most 2 arguments"),
        (lambda: engine.step(act, action=act), "unexpected keyword argument 'action'"),
        (lambda: engine.step(act, actions=act), "multiple values for argument 'actions'"),
        (lambda: engine.send(act), "missing required argument 'env_id'"),
        (lambda: engine.recv(1), "at most 0 arguments"),
    ]:
        with pytest.raises(TypeError, match=match):
            call()
    with pytest.raises(RuntimeError, match="no actions were sent"):
        engine.recv()  # nothing was sent by the refused calls
    with pytest.raises(ValueError, match="action"):
        engine.step(np.zeros(3, np.int32))  # the engine's own checks, translated as before
    env.close()


def test_a_step_after_a_pending_send_returns_the_oldest_batch():
    """step() = send + recv: with an earlier send pending (sync pool), step returns that send's batch and the step's
    own batch comes with the next recv (its item, kept off the queue for the caller, runs there)."""
    env = _cartpole(2)
    twin = _cartpole(2)
    engine, env_id = env.engine, env.schema.index["env_id"]
    act = np.array([1], np.int32)
    engine.send(act, np.array([0]))
    first = engine.step(act, np.array([1]))
    assert first[env_id].tolist() == [0]
    second = engine.recv()
    assert second[env_id].tolist() == [1]
    want = twin.engine.step(np.array([1, 1], np.int32), None)
    obs = env.schema.index["obs"]
    np.testing.assert_array_equal(np.concatenate([first[obs], second[obs]]), want[obs])
    env.close()
    twin.close()


def _async_dummy(env_type):
    return parallel_pool.make(
        "Dummy-v0", env_type=env_type, num_envs=6, batch_size=3, num_threads=1, seed=5, episode_len=4
    )


@pytest.mark.parametrize("env_type", ["gymnasium", "gym"])
def test_async_recv_results_are_returned_again_refilled(env_type):
    """An async loop that drops each recv() result gets kept results back (_recv_kept), refilled with each batch:
    Dummy's observation names its env, its step in the episode and the action it last got, so every result says
    whether its rows, info and masks belong together and to this batch."""
    env = _async_dummy(env_type)
    env.async_reset()
    rng = np.random.default_rng(1)
    sent: dict[int, int] = {}
    before = env.engine._results_reused
    for _ in range(60):
        obs, _, _, _, info = env.recv()
        ids = info["env_id"]
        np.testing.assert_array_equal(obs[:, 0], ids)
        np.testing.assert_array_equal(obs[:, 1], info["elapsed_step"])
        for row, e in enumerate(ids):
            if obs[row, 1] > 0:  # a step (not a reset): the action this env was sent last
                assert obs[row, 2] == sent[int(e)]
        if env_type == "gymnasium":
            assert info["_env_id"].all() and info["_elapsed_step"].all()
        act = rng.integers(0, 4, len(ids))
        sent.update(zip(ids.tolist(), act.tolist()))
        env.send(act, ids)
    assert env.engine._results_reused - before >= 50
    env.close()


@pytest.mark.parametrize("env_type", ["gymnasium", "gym"])
@pytest.mark.parametrize("hold", sorted(_PARTS))
def test_held_recv_results_never_change(env_type, hold):
    """Hold one part of an async recv() result and go on: it keeps the values, keys and structure it had."""
    env = _async_dummy(env_type)
    env.async_reset()
    for _ in range(3):
        info = env.recv()[4]
        env.send(np.ones(3, np.int64), info["env_id"])
    result = env.recv()
    held = _PARTS[hold](result)
    want = _copy_tree(held)
    env.send(np.full(3, 2), result[4]["env_id"])
    del result
    before = env.engine._results_reused
    for _ in range(20):
        info = env.recv()[4]
        env.send(np.full(3, 3), info["env_id"])
    _same_tree(held, want)
    assert env.engine._results_reused > before
    env.close()
