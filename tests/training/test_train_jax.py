"""examples/train/ppo_jax.py, the JAX PPO of the headline runs (docs/training.md): it trains CartPole-v1 through
env.xla() to the target on fresh envs; every backend hands the same update a (num_steps, num_envs) rollout of the
MuJoCo and Atari tasks and gets finite losses back; the run log, the time budget, the target and the checkpoint
resume behave as the torch scripts'. The long runs are recorded in docs/training/, not run here."""

from __future__ import annotations

import importlib.util
import math
import re
import warnings

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("optax")
pytest.importorskip("torch")  # common.py's checkpoints and run log
pytest.importorskip("psutil")

from test_train_scripts import load  # examples/train modules, loaded as the scripts load their siblings

import parallel_pool  # noqa: E402
from parallel_pool import _core  # noqa: E402

P = load("ppo_jax")
common = load("common")
needs_xla = pytest.mark.skipif(not _core.has_xla, reason="built without XLA support")


def missing(backend: str, task: str) -> str | None:
    """Why `backend` cannot run `task` here (None: it can)."""
    if task not in parallel_pool.list_all_envs():
        return f"this build has no {task}"
    if backend == "pp-xla" and not _core.has_xla:
        return "built without XLA support"
    if backend.startswith("envpool") and importlib.util.find_spec("envpool") is None:
        return "envpool is not installed"
    if backend == "gymnasium":
        from parallel_pool.bench import peers

        need = "ale_py" if task == "Pong-v5" else "mujoco"
        if importlib.util.find_spec(need) is None:
            return f"{need} is not installed"
        peer, why = peers.gymnasium_peer(task)
        if peer is None:
            return why
    return None


@pytest.mark.training
@needs_xla
def test_jax_ppo_through_env_xla_reaches_475_on_fresh_cartpole_envs():
    """Budget 150k env steps (the preset's total; the run stops at the first 20-episode evaluation of 500, around
    100k steps, a few seconds of training on 2 cores). The bar is a deterministic evaluation on 20 fresh envs of a
    separately seeded pool."""
    budget = 150_000
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = P.train(
            P.Args(
                env_id="CartPole-v1",
                backend="pp-xla",
                seed=1,
                total_timesteps=budget,
                eval_every=16_384,
                eval_episodes=20,
                target=500.0,
                quiet=True,
            )
        )
    assert out["steps"] <= budget
    score = P.evaluate(out["ppo"], out["state"], 20, seed=123_456)
    print(f"CartPole-v1 JAX PPO (pp-xla): {out['reason']} at {out['steps']} steps, fresh evaluation {score:.1f}")
    assert score >= 475, (score, out["reason"], out["steps"])


# (task, backends): each family's smoke on every backend; EnvPool's xla() refuses MuJoCo (float64 actions)
SMOKE = [
    ("Ant-v5", ("pp-xla", "pp", "pp-async", "envpool", "gymnasium")),
    ("HalfCheetah-v5", ("pp-xla",)),
    ("Pong-v5", ("pp-xla", "envpool-xla", "pp", "pp-async", "envpool", "gymnasium")),
]


@pytest.mark.parametrize("task,backend", [(t, b) for t, bs in SMOKE for b in bs])
def test_every_backend_gives_the_update_a_rollout_of_the_same_shape(task, backend):
    if why := missing(backend, task):
        pytest.skip(why)
    N, T = 4, 6
    a = P.resolve(P.Args(env_id=task, backend=backend, num_envs=N, num_steps=T, minibatch_size=12, update_epochs=1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ppo, roll = P.make_rollout(lambda o, s: P.PPO(a, o, s), a, 1)
        try:
            state = ppo.init(jax.random.PRNGKey(0))
            act_shape = (ppo.net.n_out,) if ppo.continuous else ()
            for _ in range(2):
                ro, info = roll.rollout(state)
                assert np.shape(ro["obs"]) == (T, N, *ppo.obs_shape)
                assert np.shape(ro["action"]) == (T, N, *act_shape)
                for k in ("logp", "value", "reward", "term", "done", "valid"):
                    assert np.shape(ro[k]) == (T, N), k
                assert np.shape(ro["last_value"]) == (N,)
                assert np.isfinite(np.asarray(ro["value"])).all() and np.isfinite(np.asarray(ro["logp"])).all()
                state, stats = roll.learn(state, ro)
                stats = jax.device_get(stats)
                for k in ("pg_loss", "v_loss", "entropy", "approx_kl", "lr"):
                    assert math.isfinite(float(stats[k])), (k, stats)
                assert info["env_s"] > 0 and len(info["returns"]) == len(info["lengths"])
            leaves = jax.tree_util.tree_leaves(state["params"])
            assert all(np.isfinite(np.asarray(x)).all() for x in leaves)
        finally:
            roll.close()


def test_envpool_xla_refuses_float64_actions_with_a_clear_error():
    if why := missing("envpool-xla", "Ant-v5"):
        pytest.skip(why)
    a = P.resolve(P.Args(env_id="Ant-v5", backend="envpool-xla", num_envs=2, num_steps=4, minibatch_size=8))
    with pytest.raises(ValueError, match="envpool-xla cannot step Ant-v5.*float64"):
        P.make_rollout(lambda o, s: P.PPO(a, o, s), a, 1)


def test_async_rows_are_filed_per_env_whatever_order_they_arrive_in():
    """pp-async hands out batches of 2 of 4 envs in completion order; the rollout still has num_steps rows per env,
    and an env's rows follow on from each other: a row that did not end an episode is followed by the observation
    the env returned for it (CartPole's observation is its state, so a reset shows as an episode end)."""
    N, T = 4, 16
    a = P.resolve(
        P.Args(env_id="CartPole-v1", backend="pp-async", num_envs=N, num_steps=T, minibatch_size=16, batch_size=2)
    )
    ppo, roll = P.make_rollout(lambda o, s: P.PPO(a, o, s), a, 3)
    try:
        state = ppo.init(jax.random.PRNGKey(0))
        ends = 0
        for _ in range(4):
            ro, info = roll.rollout(state)
            obs, done, valid = (np.asarray(ro[k]) for k in ("obs", "done", "valid"))
            assert obs.shape == (T, N, 4)
            # a row is valid unless the env's previous row ended its episode (the reset row's action is ignored)
            np.testing.assert_array_equal(valid[1:], ~done[:-1])
            # consecutive rows of one env: the pole's angle moves by at most one step's worth, but from a final
            # observation (the row after an episode end, invalid) to the reset
            step = np.abs(obs[1:, :, 2] - obs[:-1, :, 2])
            assert (step[valid[:-1]] < 0.1).all()
            ends += int(done.sum())
            assert info["steps"] > 0
        assert ends > 0  # episodes ended (random CartPole episodes last ~20 steps)
    finally:
        roll.close()


def test_log_time_budget_target_and_checkpoint_resume(tmp_path):
    log, ckpt = tmp_path / "run.jsonl", tmp_path / "run.ckpt"
    base = dict(env_id="CartPole-v1", backend="pp", num_envs=4, num_steps=32, minibatch_size=64, quiet=True)
    base.update(total_timesteps=512, log=str(log), checkpoint=str(ckpt), checkpoint_every=1)
    first = P.train(P.Args(**base, time_budget=1e-9))
    assert first["reason"] == "time_budget" and first["updates"] == 1 and ckpt.exists()
    second = P.train(P.Args(**base, eval_every=256, eval_episodes=3))
    assert second["reason"] == "total_timesteps" and second["steps"] == 512
    records = common.read_log(log)
    starts = [r for r in records if r["kind"] == "start"]
    assert [s["resumed"] for s in starts] == [False, True] and "env_id" in starts[0]["args"]
    ups = [r for r in records if r["kind"] == "update"]
    assert [u["update"] for u in ups] == [1, 2, 3, 4] and [u["steps"] for u in ups] == [128, 256, 384, 512]
    walls = [u["wall"] for u in ups]
    assert walls == sorted(walls)  # the resumed segment's clock continues the first one's
    for u in ups:
        assert 0 < u["env_s"] < u["update_s"] and 0 < u["learn_s"] < u["update_s"], u
        assert u["rss_mb"] > 50 and "load1" in u and len(u["returns"]) == len(u["lengths"])
        for k in ("pg_loss", "v_loss", "entropy", "approx_kl", "lr"):
            assert math.isfinite(u[k]), u
    assert [u["steps"] for u in ups if "eval_return" in u] == [256, 512]
    # a target already met stops the run at the first evaluation
    hit = P.train(P.Args(**dict(base, log="", checkpoint=""), eval_every=128, eval_episodes=2, target=0.0))
    assert hit["reason"] == "target" and hit["steps"] == 128


@pytest.mark.parametrize(
    "field,value,message",
    [
        ("backend", "ray", "--backend 'ray': choose one of pp-xla"),
        ("minibatch_size", 100, "--minibatch-size 100 must divide"),
        ("overlap", True, "--overlap needs a backend whose send does not wait"),
        ("lr_schedule", "cosine", "--lr-schedule 'cosine': choose one of linear"),
        ("target", 100.0, "--target needs --eval-every"),
        ("preset", "Walker", "no preset for 'Walker'"),
        ("hidden", (), "--hidden needs at least one layer width"),
    ],
)
def test_bad_arguments_are_clear_errors(field, value, message):
    with pytest.raises(ValueError, match=message):
        P.resolve(P.Args(**{"env_id": "CartPole-v1", "backend": "pp", field: value}))


def test_report_times_jax_runs_by_their_evaluations(tmp_path):
    """A run that logged deterministic evaluations is timed to the score by them; a fused update (no env/learner
    split) shows '—' for the split; --section picks the doc's marked section."""
    report = load("report")
    import json

    records = [{"kind": "start", "task": "T-v0", "backend": "pp-xla", "seed": 1, "command": "c", "resumed": False}]
    for u in range(1, 5):
        rec = {"kind": "update", "update": u, "steps": 100 * u, "wall": 2.0 * u, "update_s": 2.0, "env_s": None}
        rec.update(infer_s=None, learn_s=None, returns=[10.0 * u], lengths=[5], rss_mb=100.0, rss_children_mb=0.0)
        rec["load1"] = 1.0
        if u % 2 == 0:
            rec["eval_return"] = 15.0 * u  # 30 at update 2, 60 at update 4
        records.append(rec)
    (tmp_path / "r.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    doc = tmp_path / "doc.md"
    doc.write_text(
        "<!-- training-report:start -->\nkeep\n<!-- training-report:end -->\n<!-- jax:start -->\n<!-- jax:end -->\n"
    )
    report.main([str(tmp_path), "--score", "T-v0=50", "--window", "1", "--doc", str(doc), "--section", "jax"])
    body = doc.read_text()
    assert "\nkeep\n" in body and body.index("| T-v0 | pp-xla |") > body.index("<!-- jax:start -->")
    row = next(line for line in (tmp_path / "report.md").read_text().splitlines() if line.startswith("| T-v0"))
    cells = row.split(" | ")
    # training returns reach 50 nowhere before update 5, the evaluations at update 4 (wall 8, 400 steps)
    assert cells[4:6] == ["8", "400"]
    assert cells[11:13] == ["—%", "—%"] and cells[-1] == "60 / 60 |"


def _hlo_computations(hlo: str) -> dict[str, str]:
    """name -> body of each computation of an optimized HLO module's text."""
    found = re.finditer(r"^(?:ENTRY )?%?([\w.\-]+) \(.*?\) -> .*?\{\n(.*?)^\}", hlo, re.S | re.M)
    return {m.group(1): m.group(2) for m in found}


def _reachable(comps: dict[str, str], roots: set[str]) -> set[str]:
    """The computations `roots` run, and the ones those call (fusions, nested loops, reductions)."""
    seen, todo = set(), list(roots)
    while todo:
        name = todo.pop()
        if name in seen or name not in comps:
            continue
        seen.add(name)
        todo += re.findall(r"(?:calls|to_apply|body|condition|branch_computations)=\{?%?([\w.\-]+)", comps[name])
    return seen


def test_the_cnn_update_runs_no_convolution_inside_a_loop_and_the_policy_runs_channels_last():
    """XLA on CPU runs convolutions inside a loop body several times slower than outside one (jax-ml/jax#12868):
    channels-first ones in any loop, every gradient's in any layout. The Nature-CNN learner is built so that neither
    happens: its epochs and minibatches are unrolled (the only loop left, GAE's, has no convolution) and the torso
    is channels last, so the policy inside the xla rollout's scan is fast too. Checked on the compiled HLO."""
    from gymnasium import spaces

    T, N = 4, 2
    a = P.resolve(P.Args(env_id="Pong-v5", backend="pp", num_envs=N, num_steps=T, minibatch_size=4, update_epochs=2))
    ppo = P.PPO(a, spaces.Box(0, 255, (4, 84, 84), np.uint8), spaces.Discrete(6))
    state = ppo.init(jax.random.PRNGKey(0))
    ro = {"obs": np.zeros((T, N, 4, 84, 84), np.uint8), "action": np.zeros((T, N), np.int32)}
    ro.update({k: np.zeros((T, N), np.float32) for k in ("logp", "value", "reward")})
    ro.update({k: np.zeros((T, N), bool) for k in ("term", "done", "valid")})
    ro["last_value"] = np.zeros((N,), np.float32)

    learn = jax.jit(ppo.learn).lower(state, ro).compile().as_text()
    comps = _hlo_computations(learn)
    assert sum("convolution(" in c for c in comps.values()) >= 2 * 4 * 3  # the update does run the CNN
    in_loops = _reachable(comps, set(re.findall(r"body=%?([\w.\-]+)", learn)))
    assert in_loops, "the update has no loop at all: GAE's scan is expected to stay one"
    assert not [n for n in in_loops if "convolution(" in comps[n]]

    policy = jax.jit(ppo.policy).lower(state, ro["obs"][0], jax.random.PRNGKey(1)).compile().as_text()
    labels = re.findall(r"convolution\(.*?dim_labels=([\w>\-]+)", policy)
    assert len(labels) == 3 and set(labels) == {"b01f_01io->b01f"}, labels
