"""parallel_pool.distributed: pools on Ray actors, checked against a local pool given the same seed and actions.

One local Ray cluster (2 CPUs) for the whole module: Ray takes tens of seconds to start on a loaded machine."""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

ray = pytest.importorskip("ray")

from pyproc import IMPORT_ROOT  # noqa: E402

import parallel_pool  # noqa: E402
from parallel_pool import EnvError, distributed  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def cluster():
    # Ray's workers start in the driver's working directory and import from it first: from a clone's root that is
    # the source tree (no compiled _core in CI), so start the cluster where the imported parallel_pool lives.
    here = os.getcwd()
    os.chdir(IMPORT_ROOT)
    try:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        yield
    finally:
        ray.shutdown()
        os.chdir(here)


def assert_same(got, want):
    """Two gymnasium step results (or reset results) are equal, info included (masks, final_obs)."""
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(w, dict):
            assert sorted(g) == sorted(w)
            for k in w:
                assert_same((g[k],), (w[k],))
        elif isinstance(w, np.ndarray) and w.dtype == object:
            assert [None if x is None else x.tolist() for x in g] == [None if x is None else x.tolist() for x in w]
        else:
            np.testing.assert_array_equal(g, w)


def step_alike(env, ref, steps: int, seed: int) -> int:
    """Step both pools with the same random CartPole actions, asserting equal results; the episodes that ended."""
    rng = np.random.default_rng(seed)
    ended = 0
    for _ in range(steps):
        a = rng.integers(0, 2, ref.num_envs)
        want = ref.step(a)
        assert_same(env.step(a), want)
        ended += int((want[2] | want[3]).sum())
    return ended


@pytest.mark.parametrize("autoreset_mode", ["next_step", "same_step"])
def test_sync_trajectory_equals_a_local_pool(autoreset_mode):
    """Given seed and actions, 2 actors reproduce one local pool exactly, across episode ends, and env i is
    seeded with seed + i (the actors' ranges are seeded from their first env id)."""
    kw = dict(num_envs=5, seed=11, autoreset_mode=autoreset_mode, max_episode_steps=40)
    env = distributed.make("CartPole-v1", num_workers=2, **kw)
    ref = parallel_pool.make("CartPole-v1", **kw)
    assert_same(env.reset(), ref.reset())
    assert step_alike(env, ref, 120, seed=0) > 5  # the run crossed episode ends (terminations and truncations)
    assert_same(env.reset(seed=7), ref.reset(seed=7))
    env.close()
    ref.close()


@pytest.mark.parametrize("autoreset_mode", ["next_step", "same_step"])
def test_python_envs_on_ray_equal_a_local_python_pool(autoreset_mode):
    """Envs written in Python (backend="python"): each actor runs a ProcessEngine of its range of envs."""
    kw = dict(num_envs=4, seed=5, autoreset_mode=autoreset_mode, max_episode_steps=30, backend="python")
    env = distributed.make("CartPole-v1", num_workers=2, num_threads=1, **kw)
    ref = parallel_pool.make("CartPole-v1", **kw)
    try:
        assert env.spec.backend == "python"
        assert_same(env.reset(), ref.reset())
        assert step_alike(env, ref, 80, seed=1) > 2
    finally:
        env.close()
        ref.close()


def test_dm_front_end_runs_on_ray():
    env = distributed.make("CartPole-v1", env_type="dm", num_workers=2, num_envs=4, seed=3)
    ref = parallel_pool.make("CartPole-v1", env_type="dm", num_envs=4, seed=3)
    env.reset(), ref.reset()
    for _ in range(30):
        got, want = env.step(np.ones(4, dtype=np.int64)), ref.step(np.ones(4, dtype=np.int64))
        np.testing.assert_array_equal(got.observation.obs, want.observation.obs)
        np.testing.assert_array_equal(got.discount, want.discount)
    env.close()


def test_env_id_subsets_are_routed_to_their_actor_and_returned_in_the_order_given():
    env = distributed.make("CartPole-v1", num_workers=2, num_envs=6, seed=5)
    ref = parallel_pool.make("CartPole-v1", num_envs=6, seed=5)
    env.reset(), ref.reset()
    for ids in ([4, 0, 5], [2], [5, 3, 1, 0], [1, 4]):
        ids = np.asarray(ids)
        a = (ids % 2).astype(np.int64)
        got, want = env.step(a, ids), ref.step(a, ids)
        np.testing.assert_array_equal(got[4]["env_id"], ids)
        assert_same(got, want)
    env.close()


def per_env_trajectories(env, rounds: int) -> dict[int, list]:
    """An async loop whose action depends only on (env_id, the env's step count): each env's observations."""
    seen: dict[int, list] = {i: [] for i in range(env.num_envs)}
    env.async_reset()
    for _ in range(rounds):
        obs, _, _, _, info = env.recv()
        ids = info["env_id"]
        for i, o in zip(ids, obs):
            seen[int(i)].append(o.copy())
        env.send(np.array([(i + len(seen[int(i)])) % 2 for i in ids]), ids)
    return seen


def test_async_trajectories_do_not_depend_on_the_number_of_actors():
    kw = dict(num_envs=6, batch_size=2, seed=9)
    ref = per_env_trajectories(parallel_pool.make("CartPole-v1", **kw), 60)
    for k in (3,):  # (K=1 is the local pool)
        env = distributed.make("CartPole-v1", num_workers=k, actor_options={"num_cpus": 2 / k}, **kw)
        got = per_env_trajectories(env, 60)
        assert env.engine.pids and len(set(env.engine.pids)) == k  # k actor processes
        env.close()
        for i in range(6):
            n = min(len(got[i]), len(ref[i]))
            assert n > 5, ([len(got[j]) for j in range(6)], [len(ref[j]) for j in range(6)])
            np.testing.assert_array_equal(np.stack(got[i][:n]), np.stack(ref[i][:n]))


def test_async_batches_come_from_whichever_actor_finishes_first():
    """Actor 0 holds envs 0..2 and env 2 takes 3 s a step; actor 1 (envs 3, 4) answers first, and the rows of a
    call that one batch does not take are returned by the next recv()s, in order."""
    env = distributed.make(
        "Dummy-v0", num_workers=2, num_envs=5, batch_size=1, slow_env=2, slow_env_cost_us=3e6, episode_len=1000
    )
    env.async_reset()
    assert sorted(int(env.recv()[4]["env_id"][0]) for _ in range(5)) == [0, 1, 2, 3, 4]
    env.send(np.zeros(5, dtype=np.int32), np.arange(5))
    assert [int(env.recv()[4]["env_id"][0]) for _ in range(5)] == [3, 4, 0, 1, 2]
    env.close()


def test_bad_input_raises_and_loses_nothing():
    env = distributed.make("CartPole-v1", num_workers=2, num_envs=4, batch_size=2, seed=1)
    env.async_reset()
    assert sorted(np.concatenate([env.recv()[4]["env_id"] for _ in range(2)]).tolist()) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="appears more than once"):
        env.send(np.zeros(2, dtype=np.int64), np.array([1, 1]))
    with pytest.raises(ValueError, match="out of range"):
        env.send(np.zeros(2, dtype=np.int64), np.array([0, 9]))
    with pytest.raises(ValueError, match="expected 2 rows"):
        env.send(np.zeros(3, dtype=np.int64), np.array([0, 1]))
    env.send(np.zeros(2, dtype=np.int64), np.array([0, 1]))
    with pytest.raises(ValueError, match="already has an action pending"):
        env.send(np.zeros(1, dtype=np.int64), np.array([1]))
    assert sorted(env.recv()[4]["env_id"].tolist()) == [0, 1]
    with pytest.raises(RuntimeError, match="wait forever"):
        env.recv()
    # a value the actor's pool rejects (env 2's action 5) is reported by the recv that collects it
    env.send(np.array([0, 5]), np.array([0, 2]))
    with pytest.raises(ValueError, match="outside the valid range"):
        env.recv()
    env.send(np.zeros(2, dtype=np.int64), np.array([1, 2]))  # env 2 was not stepped and is free again
    assert set(env.recv()[4]["env_id"].tolist()) <= {0, 1, 2}
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.step(np.zeros(2, dtype=np.int64))


def test_num_workers_and_multi_player_are_checked():
    with pytest.raises(ValueError, match="num_workers"):
        distributed.make("CartPole-v1", num_envs=2, num_workers=3)
    with pytest.raises(ValueError, match="multi-player"):
        distributed.make("TwoPlayer-v0", num_envs=2, max_num_players=2)


def test_a_dead_actor_raises_env_error_naming_its_envs():
    env = distributed.make("CartPole-v1", num_workers=2, num_envs=5, batch_size=2, seed=2)
    env.async_reset()
    os.kill(env.engine.pids[1], signal.SIGKILL)  # a crash, not a polite ray.kill
    with pytest.raises(EnvError) as e:
        for _ in range(3):  # actor 0's rows may come first; the dead actor's call fails the recv that reaches it
            env.recv()
    assert e.value.env_ids == [3, 4] and e.value.batch_kept is False
    with pytest.raises(EnvError, match="lost"):
        env.send(np.zeros(1, dtype=np.int64), np.array([3]))
    env.close()


def test_restart_replaces_a_dead_actor_and_resets_its_envs():
    kw = dict(num_envs=4, seed=4)
    env = distributed.make("CartPole-v1", num_workers=2, restart=True, **kw)
    env.reset()
    for _ in range(5):
        env.step(np.ones(4, dtype=np.int64))
    old = env.actors[0]
    os.kill(env.engine.pids[0], signal.SIGKILL)
    assert pids_gone([env.engine.pids[0]])
    with pytest.raises(EnvError) as e:
        env.step(np.ones(4, dtype=np.int64))
    assert e.value.env_ids == [0, 1] and e.value.batch_kept is True
    assert env.actors[0] is not old
    # envs 0, 1 start over from their initial seeds: their next step returns the new actor's reset rows (not thrown
    # away: the action is ignored, as in an autoreset), then they follow a fresh local pool
    fresh = parallel_pool.make("CartPole-v1", **kw)
    fresh_obs, _ = fresh.reset()
    obs, reward, terminated, truncated, info = env.step(np.ones(4, dtype=np.int64))
    np.testing.assert_array_equal(obs[:2], fresh_obs[:2])
    np.testing.assert_array_equal(info["elapsed_step"][:2], [0, 0])
    assert not reward[:2].any() and not terminated[:2].any() and not truncated[:2].any()
    assert (info["elapsed_step"][2:] == 7).all()  # envs 2, 3 were stepped as before
    obs, *_ = env.step(np.zeros(2, dtype=np.int64), np.array([0, 1]))
    want, *_ = fresh.step(np.zeros(2, dtype=np.int64), np.array([0, 1]))
    np.testing.assert_array_equal(obs, want)
    env.close()


def test_a_runtime_error_in_an_actor_leaves_its_envs_usable(monkeypatch):
    """An actor whose pool raises a RuntimeError (or whose run() raises anything else) reports it from the recv, and
    the envs of that call are free again: no "action pending" forever, no lost actor."""

    class Faulty(distributed.PoolActor):  # defined here, so Ray ships it by value
        fail = 0

        def run(self, actions, env_id, reset, seeds):
            if self.offset == 2 and not reset and Faulty.fail < 2:
                Faulty.fail += 1
                if Faulty.fail == 2:
                    raise KeyError("injected in run()")
                pool = self.pool

                class Refusing:
                    def step(self, *args):
                        raise RuntimeError("injected in the pool")

                self.pool = Refusing()
                try:
                    return super().run(actions, env_id, reset, seeds)
                finally:
                    self.pool = pool
            return super().run(actions, env_id, reset, seeds)

    monkeypatch.setattr(distributed, "_remote_actor_class", lambda: ray.remote(Faulty))
    env = distributed.make("CartPole-v1", num_workers=2, num_envs=4, seed=5)
    env.reset()
    with pytest.raises(RuntimeError, match="injected in the pool"):
        env.step(np.ones(4, dtype=np.int64))
    with pytest.raises(KeyError, match="injected in run"):
        env.step(np.ones(4, dtype=np.int64))
    _, _, _, _, info = env.step(np.ones(4, dtype=np.int64))  # both actors serve their envs again
    np.testing.assert_array_equal(info["env_id"], [0, 1, 2, 3])
    np.testing.assert_array_equal(info["elapsed_step"], [3, 3, 1, 1])  # actor 1's envs were not stepped
    env.close()


def test_actors_run_only_the_per_env_calls():
    """The actor's per-env call runs num_players, get_state, set_state, not any name of the pool's."""
    env = distributed.make("CartPole-v1", num_workers=2, num_envs=4, seed=5)
    env.reset()
    state = env.engine.get_state(3)
    with pytest.raises(ValueError, match="runs only the per-env calls"):
        ray.get(env.actors[1].call.remote("reset", 3))
    with pytest.raises(ValueError, match="runs only the per-env calls"):
        ray.get(env.actors[1].call.remote("__class__", 3))
    assert env.engine.get_state(3) == state  # env 3 was not reset
    assert env.engine.num_players(3) == 1
    env.close()


def test_actors_resolve_their_config_on_their_own_node(tmp_path, monkeypatch):
    """The driver's package folders and DMC model cache are not the actor's (another node, another install): the
    actor gets the config keys as given and resolves them itself, with its own PARALLEL_POOL_CACHE. Here the
    driver's folders are removed once its spec is made, so an actor given the driver's paths could not make its envs."""
    import shutil

    from parallel_pool import dmc_models, registry

    pytest.importorskip("dm_control")
    pytest.importorskip("ale_py")
    ale = registry._package_dir("ale_py")
    actor_cache = tmp_path / "actor_cache"
    options = {"runtime_env": {"env_vars": {"PARALLEL_POOL_CACHE": str(actor_cache)}}}
    for task_id in ("Pong-v5", "CartpoleSwingup-v1"):
        kw = dict(num_envs=2, seed=3, max_episode_steps=50)
        with monkeypatch.context() as m:  # the driver's own ale-py install and model cache
            driver_ale = tmp_path / "driver_site" / "ale_py"
            (driver_ale / "roms").mkdir(parents=True)
            shutil.copy(os.path.join(ale, "roms", "pong.bin"), driver_ale / "roms")
            m.setattr(registry, "_package_dir", lambda p: str(driver_ale) if p == "ale_py" else ale)
            m.setenv("PARALLEL_POOL_CACHE", str(tmp_path / "driver_cache"))
            dmc_models.model_path.cache_clear()
            real_spec = parallel_pool.make_spec  # what distributed.make resolves the driver's spec with

            def spec_then_drop_the_drivers_folders(*args, **kwargs):
                spec = real_spec(*args, **kwargs)
                shutil.rmtree(tmp_path / "driver_site")
                shutil.rmtree(tmp_path / "driver_cache", ignore_errors=True)
                return spec

            m.setattr(parallel_pool, "make_spec", spec_then_drop_the_drivers_folders)
            env = distributed.make(task_id, num_workers=2, actor_options=options, **kw)
        dmc_models.model_path.cache_clear()
        ref = parallel_pool.make(task_id, **kw)  # a local pool, resolved here as the actors resolved theirs
        assert_same(env.reset(), ref.reset())
        for _ in range(5):
            a = ref.action_space.sample()
            assert_same(env.step(a), ref.step(a))
        env.close()
        ref.close()
    models = [n for n in os.listdir(actor_cache / "dmc-models") if not n.startswith(".")]
    assert len(models) == 1 and dmc_models._complete(str(actor_cache / "dmc-models" / models[0]))


def pids_gone(pids: list[int], tries: int = 100) -> bool:
    psutil = pytest.importorskip("psutil")
    for _ in range(tries):
        if not any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in pids):
            return True
        time.sleep(0.1)
    return False


def test_close_ends_every_actor():
    env = distributed.make("CartPole-v1", num_workers=2, num_envs=4)
    pids = list(env.engine.pids)
    env.close()
    env.close()  # idempotent
    assert env.closed
    assert pids_gone(pids)


def test_one_per_node_on_a_single_node_cluster_is_an_error_not_a_hang():
    with pytest.raises(RuntimeError, match="one_per_node"):
        distributed.make("CartPole-v1", num_workers=2, num_envs=4, one_per_node=True, start_timeout_s=3)


@pytest.mark.slow
def test_sb3_and_cleanrl_adapters_run_unchanged_on_ray():
    pytest.importorskip("stable_baselines3")
    from parallel_pool.integrations.cleanrl import EpisodeStatistics
    from parallel_pool.integrations.sb3 import ParallelPoolVecEnv

    kw = dict(num_envs=4, seed=6, autoreset_mode="same_step")
    venv = ParallelPoolVecEnv(distributed.make("CartPole-v1", num_workers=2, **kw))
    ref = ParallelPoolVecEnv(parallel_pool.make("CartPole-v1", **kw))
    np.testing.assert_array_equal(venv.reset(), ref.reset())
    for t in range(60):
        a = np.full(4, t % 2)
        got, want = venv.step(a), ref.step(a)
        for g, w in zip(got[:3], want[:3]):
            np.testing.assert_array_equal(g, w)
        for gi, wi in zip(got[3], want[3]):
            assert sorted(gi) == sorted(wi)
            if "terminal_observation" in wi:
                np.testing.assert_array_equal(gi["terminal_observation"], wi["terminal_observation"])
    venv.close()
    stats = EpisodeStatistics(distributed.make("CartPole-v1", num_workers=2, **kw))
    stats.reset()
    for _ in range(100):
        stats.step(np.zeros(4, dtype=np.int64))
    assert stats.episode_count > 0
    stats.close()


@pytest.mark.slow
def test_no_actor_outlives_its_driver():
    """A driver that exits without close(): Ray ends the actors of its job."""
    address = ray.get_runtime_context().gcs_address
    code = (
        "import ray, parallel_pool.distributed as d\n"
        f"ray.init(address={address!r}, log_to_driver=False)\n"
        "env = d.make('CartPole-v1', num_workers=2, num_envs=4)\n"
        "print(*env.engine.pids, flush=True)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    pids = [int(p) for p in out.stdout.split()]
    assert len(pids) == 2 and pids_gone(pids, tries=300)


def test_per_env_config_set_config_and_snapshots_on_ray():
    """Per-env values reach each actor's envs; set_config and snapshots route by env id."""
    kwargs = dict(num_envs=4, seed=5, max_episode_steps=6, g=[9.0, 10.0, 11.0, 12.0])
    env = distributed.make("Pendulum-v1", num_workers=2, **kwargs)
    local = parallel_pool.make("Pendulum-v1", **kwargs)
    assert [env.get_config(i)["g"] for i in range(4)] == [9.0, 10.0, 11.0, 12.0]
    env.set_config([1, 2], g=[5.0, 6.0])
    local.set_config([1, 2], g=[5.0, 6.0])
    assert [env.get_config(i)["g"] for i in range(4)] == [9.0, 5.0, 6.0, 12.0]
    assert_same(env.reset(), local.reset())
    actions = [np.random.default_rng(t).uniform(-2, 2, (4, 1)).astype(np.float32) for t in range(14)]
    for a in actions[:3]:
        assert_same(env.step(a), local.step(a))
    snap = env.get_state([3, 0, 1, 2])
    first = [env.step(a) for a in actions[3:]]
    env.set_state([3, 0, 1, 2], snap)
    for a, want in zip(actions[3:], first):
        assert_same(env.step(a), want)
    env.close()
    local.close()


def test_python_env_set_config_on_ray_is_all_or_nothing():
    """Python envs on Ray: per-env kwargs reach each actor's envs, set_config routes by env id, and a value one
    actor refuses (LunarLander's gravity must be in (-12, 0)) changes no env on any actor."""
    pytest.importorskip("Box2D")
    kwargs = dict(num_envs=4, seed=5, max_episode_steps=30, backend="python", gravity=[-9.0, -8.0, -7.0, -6.0])
    env = distributed.make("LunarLander-v3", num_workers=2, num_threads=1, **kwargs)
    local = parallel_pool.make("LunarLander-v3", num_threads=1, **kwargs)
    try:
        assert [env.get_config(i)["gravity"] for i in range(4)] == [-9.0, -8.0, -7.0, -6.0]
        with pytest.raises(AssertionError, match="gravity"):
            env.set_config([0, 3], gravity=[-5.0, 1.0])  # env 0's actor accepts, env 3's refuses
        assert [env.get_config(i)["gravity"] for i in range(4)] == [-9.0, -8.0, -7.0, -6.0]
        env.set_config([1, 2], gravity=[-3.0, -11.0])
        local.set_config([1, 2], gravity=[-3.0, -11.0])
        assert [env.get_config(i)["gravity"] for i in range(4)] == [-9.0, -3.0, -11.0, -6.0]
        assert_same(env.reset(), local.reset())
        for t in range(40):  # across episode ends: the new gravities from the first reset on
            a = np.random.default_rng(t).integers(0, 4, 4)
            assert_same(env.step(a), local.step(a))
    finally:
        env.close()
        local.close()


def test_python_env_snapshots_on_ray_route_by_env_id():
    kw = dict(num_envs=4, seed=5, max_episode_steps=30, backend="python")
    env = distributed.make("CartPole-v1", num_workers=2, num_threads=1, **kw)
    try:
        env.reset()
        actions = [np.random.default_rng(t).integers(0, 2, 4) for t in range(40)]
        for a in actions[:5]:
            env.step(a)
        snap = env.get_state([3, 0, 1, 2])
        assert snap["values"].dtype == np.uint8
        first = [env.step(a) for a in actions[5:]]
        env.set_state([3, 0, 1, 2], snap)
        for a, want in zip(actions[5:], first):
            assert_same(env.step(a), want)
    finally:
        env.close()


@pytest.mark.parametrize("backend", ["python", "cpp"])
def test_set_state_is_all_or_nothing_across_actors(backend):
    """A snapshot whose env 3 (the second actor's) is refused there: the first actor's envs, whose rows are valid,
    are not restored either (Python envs: each actor prepares, then all commit; C++ envs: the first actor's
    restore is undone). Compared with an untouched twin stepped alike."""
    from parallel_pool import signing

    kw = dict(num_envs=4, seed=5, max_episode_steps=30)
    if backend == "python":
        kw.update(backend="python", num_threads=1)
    env = distributed.make("CartPole-v1", num_workers=2, **kw)
    twin = parallel_pool.make("CartPole-v1", **kw)
    actions = [np.random.default_rng(t).integers(0, 2, 4) for t in range(30)]
    try:
        assert_same(env.reset(), twin.reset())
        for a in actions[:3]:
            assert_same(env.step(a), twin.step(a))
        snap = env.get_state([0, 1, 2, 3])
        for a in actions[3:8]:
            assert_same(env.step(a), twin.step(a))
        bad = {k: np.array(v) for k, v in snap.items()}
        if backend == "python":  # a signed row whose env is a str: only its worker, on the second actor, sees it
            row = bad["values"][3, : bad["lengths"][3]].tobytes()
            fields = list(pickle.loads(row[len(signing._TAG) + signing._MAC_BYTES :]))
            fields[5] = pickle.dumps("not an env")
            new = np.frombuffer(signing.sign(signing.snapshot_key(), pickle.dumps(tuple(fields))), dtype=np.uint8)
            width = max(bad["values"].shape[1], len(new))
            bad["values"] = np.pad(bad["values"], ((0, 0), (0, width - bad["values"].shape[1])))
            bad["values"][3, : len(new)], bad["lengths"][3] = new, len(new)
            match = "builtins.str"
        else:
            bad["values"][3, 0] = np.nan
            match = "not finite"
        with pytest.raises(ValueError, match=match):
            env.set_state([0, 1, 2, 3], bad)
        for a in actions[8:]:
            assert_same(env.step(a), twin.step(a))
    finally:
        env.close()
        twin.close()


def test_python_env_infos_on_ray_equal_sync_vector_env():
    """Every info entry (strings, keys seen late, nested dicts) crosses the actors as SyncVectorEnv carries it; the
    actors keep one layout (keys seen late travel as objects), so their batches join."""
    import gymnasium as gym

    class Notes(gym.Env):  # (defined here: Ray pickles it by value)
        observation_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
        action_space = gym.spaces.Discrete(2)

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            self.t, self.length = 0, int(self.np_random.integers(2, 5))
            return np.zeros(1, np.float32), {"note": "start"}

        def step(self, action):
            self.t += 1
            info = {"note": f"t={self.t}"}
            if self.t >= 2:
                info["late"] = self.t
            done = self.t >= self.length
            if done:
                info["nested"] = {"s": "end"}
            return np.zeros(1, np.float32), 1.0, done, False, info

    ref = gym.vector.SyncVectorEnv([Notes] * 4, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)
    env = distributed.make(env_fn=Notes, num_workers=2, num_threads=1, num_envs=4, seed=5, autoreset_mode="same_step")
    try:
        _, info = env.reset()
        _, rinfo = ref.reset(seed=5)
        assert info["note"].tolist() == list(rinfo["note"])
        finals = 0
        for t in range(8):
            *_, info = env.step(np.ones(4, np.int64))
            *_, rinfo = ref.step(np.ones(4, np.int64))
            for key in ("note", "late"):
                rows = rinfo.get(f"_{key}", np.zeros(4, bool))
                np.testing.assert_array_equal(info.get(f"_{key}", np.zeros(4, bool)), rows, err_msg=f"{key}, {t}")
                if rows.any():
                    assert info[key][rows].tolist() == rinfo[key][rows].tolist(), f"{key} at step {t}"
            if "final_info" in rinfo:
                rows = rinfo["final_info"]["_nested"]
                assert info["final_info"]["nested"]["s"][rows].tolist() == ["end"] * int(rows.sum())
                finals += 1
        assert finals
    finally:
        env.close()
        ref.close()
