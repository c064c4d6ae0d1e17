"""Atari: ids, spec, and step-by-step alignment with ale_py (raw ALE + a numpy reference of the preprocessing),
gymnasium's AtariPreprocessing + FrameStackObservation, and EnvPool; one test per preprocessing option."""

from __future__ import annotations

import os

import numpy as np
import pytest

import parallel_pool as pp

if "Pong-v5" not in pp.list_all_envs():
    pytest.skip("the atari family is not built", allow_module_level=True)
ale_py = pytest.importorskip("ale_py")

from atari_reference import ReferenceAtari, area_resize  # noqa: E402

try:
    import cv2
except ImportError:  # pragma: no cover - opencv is optional
    cv2 = None
try:
    import envpool
except ImportError:  # pragma: no cover
    envpool = None

ROM_DIR = os.path.join(os.path.dirname(ale_py.__file__), "roms")


def _supported_roms():
    roms = []
    for f in sorted(os.listdir(ROM_DIR)):
        if f.endswith(".bin") and ale_py.ALEInterface.isSupportedROM(os.path.join(ROM_DIR, f)) is not None:
            roms.append(f[:-4])
    return roms


def _task_id(rom: str) -> str:
    return "".join(w.capitalize() for w in rom.split("_")) + "-v5"


# ---------------------------------------------------------------- ids and spec


def test_every_supported_rom_is_a_task():
    roms = _supported_roms()
    assert len(roms) >= 100
    ours = {e for e in pp.list_all_envs() if pp.registry.env_class_of(e) == "Atari"}
    assert ours == {_task_id(r) for r in roms}
    for r in roms:
        assert pp.make_spec(_task_id(r)).config.task == r
    if envpool is not None:
        from envpool.registration import registry

        theirs = {e for e, (module, _, _) in registry.specs.items() if module == "envpool.atari"}
        assert ours == theirs


@pytest.mark.skipif(envpool is None, reason="envpool not installed")
def test_config_keys_and_defaults_match_envpool():
    ours = pp.make_spec("Pong-v5").config._asdict()
    theirs = envpool.make_spec("Pong-v5").config._asdict()
    keys = [
        "stack_num",
        "frame_skip",
        "noop_max",
        "zero_discount_on_life_loss",
        "episodic_life",
        "reward_clip",
        "use_fire_reset",
        "img_height",
        "img_width",
        "task",
        "mode",
        "difficulty",
        "full_action_space",
        "repeat_action_probability",
        "use_inter_area_resize",
        "gray_scale",
        "max_episode_steps",
        "seed",
        "num_envs",
        "num_threads",
        "thread_affinity_offset",
        "max_num_players",
    ]
    for k in keys:
        assert ours[k] == theirs[k], k
    for task in ["Pong-v5", "Breakout-v5", "MsPacman-v5", "Freeway-v5"]:
        for full in (False, True):
            a = pp.make_spec(task, full_action_space=full)
            b = envpool.make_spec(task, full_action_space=full)
            assert a.action_space.n == b.action_space.n
            assert a.observation_space.shape == b.observation_space.shape
            assert a.observation_space.dtype == b.observation_space.dtype


def test_spec_shapes_and_action_sets():
    s = pp.make_spec("Breakout-v5")
    assert s.observation_space.shape == (4, 84, 84) and s.observation_space.dtype == np.uint8
    s = pp.make_spec("Breakout-v5", gray_scale=False, stack_num=2, img_height=64, img_width=48)
    assert s.observation_space.shape == (6, 64, 48)  # EnvPool's colour layout: 3 planes per stacked frame
    for rom in ["pong", "breakout", "ms_pacman", "freeway", "space_invaders"]:
        ale = ale_py.ALEInterface()
        ale.setLoggerMode(ale_py.LoggerMode.Error)
        ale.loadROM(os.path.join(ROM_DIR, rom + ".bin"))
        assert pp.make_spec(_task_id(rom)).action_space.n == len(ale.getMinimalActionSet())
        assert pp.make_spec(_task_id(rom), full_action_space=True).action_space.n == len(ale.getLegalActionSet()) == 18


def test_bad_config_raises():
    # an id in neither registry (gymnasium's own "Pong-v4" runs through the Python backend once ale_py registered it)
    with pytest.raises(ValueError, match="Pong-v5"):
        pp.make("Pong-v9")
    with pytest.raises(ValueError, match="not found"):
        pp.make("Pong-v5", rom_dir="/nonexistent")
    with pytest.raises(ValueError, match="mode"):
        pp.make("Pong-v5", mode=7)
    with pytest.raises(ValueError, match="stack_num"):
        pp.make("Pong-v5", stack_num=0)
    with pytest.raises(ValueError, match="repeat_action_probability"):
        pp.make("Pong-v5", repeat_action_probability=1.5)
    # size keys are range-checked as int64, before narrowing could wrap them into valid sizes
    with pytest.raises(ValueError, match=r"'img_height' must be in \[1, 1024\], got 4294967380"):
        pp.make_spec("Pong-v5", img_height=2**32 + 84)
    with pytest.raises(ValueError, match=r"'stack_num' must be in \[1, 256\], got 1000"):
        pp.make_spec("Pong-v5", stack_num=1000)
    with pytest.raises(ValueError, match=r"'noop_max' must be in \[0, 1000000\], got -1"):
        pp.make_spec("Pong-v5", noop_max=-1)


# ---------------------------------------------------------------- the resize kernel's reference


@pytest.mark.skipif(cv2 is None, reason="opencv not installed")
def test_numpy_area_reference_is_cv2_inter_area():
    rng = np.random.default_rng(0)
    imgs = [rng.integers(0, 256, (210, 160), dtype=np.uint8), rng.integers(0, 256, (210, 160, 3), dtype=np.uint8)]
    ale = ale_py.ALEInterface()
    ale.setLoggerMode(ale_py.LoggerMode.Error)
    ale.loadROM(os.path.join(ROM_DIR, "space_invaders.bin"))
    for _ in range(100):
        ale.act(ale.getMinimalActionSet()[1])
    imgs += [ale.getScreenGrayscale(), ale.getScreenRGB()]
    for img in imgs:
        for h, w in [(84, 84), (64, 64), (100, 80), (84, 120)]:
            np.testing.assert_array_equal(area_resize(img, h, w), cv2.resize(img, (w, h), interpolation=cv2.INTER_AREA))


# ---------------------------------------------------------------- step-by-step alignment with the reference


def _align(task, rom, steps, *, seed=0, gray=True, resize=None, **kw):
    """Our env (noop_max=1: one reset frame) against ReferenceAtari on raw ale_py, random actions."""
    env = pp.make(task, num_envs=1, noop_max=1, gray_scale=gray, **kw)
    ref = ReferenceAtari(
        rom,
        gray=gray,
        fire_reset=kw.get("use_fire_reset", True),
        resize=resize,
        episodic_life=kw.get("episodic_life", False),
        reward_clip=kw.get("reward_clip", False),
        frame_skip=kw.get("frame_skip", 4),
        stack_num=kw.get("stack_num", 4),
    )
    obs, info = env.reset()
    np.testing.assert_array_equal(obs[0], ref.reset(1))
    np.testing.assert_array_equal(info["ram"][0], ref.ale.getRAM())
    rng = np.random.default_rng(seed)
    done, ends, rewards, life_losses = False, 0, 0.0, 0
    for t in range(steps):
        a = int(rng.integers(env.single_action_space.n))
        obs, r, term, trunc, info = env.step(np.array([a]))
        if done:
            robs, rr, rterm = ref.reset(1), 0.0, False
            rinfo = {"lives": ref.lives, "reward": 0.0, "terminated": 0, "ram": ref.ale.getRAM()}
        else:
            lives_before = ref.lives
            robs, rr, rterm, rinfo = ref.step(a)
            life_losses += rinfo["lives"] < lives_before
        assert np.array_equal(obs[0], robs), f"step {t}: {(obs[0] != robs).sum()} pixels differ"
        assert (r[0], bool(term[0])) == (rr, rterm), f"step {t}"
        assert int(info["lives"][0]) == rinfo["lives"]
        assert float(info["reward"][0]) == rinfo["reward"]
        assert int(info["terminated"][0]) == rinfo["terminated"]
        np.testing.assert_array_equal(info["ram"][0], rinfo["ram"], err_msg=f"step {t}")
        assert not trunc[0]
        done = bool(term[0])
        ends += done
        rewards += abs(rinfo["reward"])
    return ends, rewards, life_losses


def test_pong_aligns_with_ale_reference():
    ends, rewards, _ = _align("Pong-v5", "pong", 600)
    assert rewards >= 5  # points were scored: rewards were compared, not just zeros


def test_breakout_aligns_with_ale_reference():
    ends, rewards, life_losses = _align("Breakout-v5", "breakout", 600, seed=1)
    assert ends >= 1 and rewards >= 1 and life_losses >= 3


def test_color_frames_align_with_ale_reference():
    _align("Breakout-v5", "breakout", 200, gray=False)


@pytest.mark.skipif(cv2 is None, reason="opencv not installed")
def test_bilinear_resize_aligns_with_cv2():
    def linear(img, h, w):
        return cv2.resize(img, (w, h), interpolation=cv2.INTER_LINEAR)

    _align("MsPacman-v5", "ms_pacman", 150, use_inter_area_resize=False, resize=linear)
    _align("Breakout-v5", "breakout", 100, gray=False, use_inter_area_resize=False, resize=linear)


def test_frame_skip_and_stack_options_align():
    _align("Pong-v5", "pong", 150, frame_skip=3, stack_num=2)
    _align("Pong-v5", "pong", 100, frame_skip=1)


@pytest.mark.skipif(cv2 is None, reason="gymnasium's AtariPreprocessing needs opencv")
@pytest.mark.parametrize("task", ["Pong-v5", "Breakout-v5"])
def test_aligns_with_gymnasium_atari_preprocessing(task):
    import gymnasium as gym
    from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation

    gym.register_envs(ale_py)
    g = gym.make(f"ALE/{task}", frameskip=1, repeat_action_probability=0.0)
    g = FrameStackObservation(AtariPreprocessing(g, noop_max=1, frame_skip=4, screen_size=84), 4)
    env = pp.make(task, num_envs=1, noop_max=1, use_fire_reset=False)  # gymnasium: one no-op, no FIRE
    obs, _ = env.reset()
    gobs, _ = g.reset(seed=0)
    np.testing.assert_array_equal(obs[0], gobs)
    rng = np.random.default_rng(2)
    steps = 0
    for t in range(500):
        a = int(rng.integers(env.single_action_space.n))
        obs, r, term, trunc, info = env.step(np.array([a]))
        gobs, gr, gterm, gtrunc, ginfo = g.step(a)
        assert bool(term[0]) == gterm
        if gterm:  # gymnasium keeps a stale frame when the game ends inside a skip; ours shows the last frame
            break
        np.testing.assert_array_equal(obs[0], gobs, err_msg=f"step {t}")
        assert r[0] == gr and info["lives"][0] == ginfo["lives"]
        steps += 1
    assert steps >= 150


@pytest.mark.skipif(envpool is None, reason="envpool not installed")
@pytest.mark.parametrize(
    "task,kw",
    [
        ("Pong-v5", {}),
        ("Breakout-v5", {}),
        ("Breakout-v5", {"episodic_life": True, "reward_clip": True}),
        ("SpaceInvaders-v5", {"gray_scale": False}),
    ],
)
def test_aligns_with_envpool_defaults(task, kw):
    """Default settings (noop_max=30, fire reset): same seed, same no-op draws, same frames as EnvPool."""
    n = 3
    e = envpool.make(task, env_type="gymnasium", num_envs=n, seed=11, **kw)
    p = pp.make(task, num_envs=n, seed=11, **kw)
    eo, ei = e.reset()
    po, pi = p.reset()
    np.testing.assert_array_equal(po, eo)
    np.testing.assert_array_equal(pi["ram"], ei["ram"])
    rng = np.random.default_rng(3)
    final_steps = 0
    for t in range(400):
        a = rng.integers(p.single_action_space.n, size=n)
        eo, er, ete, etr, ei = e.step(a)
        po, pr, pte, ptr, pi = p.step(a)
        np.testing.assert_array_equal(pr, er)
        np.testing.assert_array_equal(pte, ete)
        np.testing.assert_array_equal(ptr, etr)
        for k in ("lives", "reward", "terminated", "ram"):
            np.testing.assert_array_equal(pi[k], ei[k])
        ended = pte | ptr
        final_steps += ended.sum()
        # EnvPool shows a stale frame when the game ends inside a frame skip; everything else is identical
        np.testing.assert_array_equal(po[~ended], eo[~ended], err_msg=f"step {t}")


# ---------------------------------------------------------------- one test per option


def test_noop_max():
    """Freeway's screen differs on each of its first 31 frames: the reset frame says how many no-ops ran."""
    frames = {}
    for k in range(0, 31):
        frames.setdefault(ReferenceAtari("freeway").reset(k)[-1].tobytes(), k)
    assert len(frames) == 31
    counts = {}
    for noop_max, n in ((0, 3), (1, 3), (30, 16)):
        obs, _ = pp.make("Freeway-v5", num_envs=n, noop_max=noop_max, seed=5).reset()
        counts[noop_max] = [frames[o[-1].tobytes()] for o in obs]
    assert counts[0] == [0] * 3 and counts[1] == [1] * 3
    assert all(1 <= k <= 30 for k in counts[30]) and len(set(counts[30])) >= 8


def test_fire_reset():
    """Breakout needs FIRE to launch the ball: with fire reset the ball is in play without ever pressing FIRE."""

    def run(**kw):
        env = pp.make("Breakout-v5", num_envs=1, noop_max=1, **kw)
        frames = [env.reset()[0][0]]
        for _ in range(60):
            frames.append(env.step(np.array([0]))[0][0])  # NOOP
        return np.stack(frames)

    def ref(fire):
        r = ReferenceAtari("breakout", fire_reset=fire)
        return np.stack([r.reset(1)] + [r.step(0)[0] for _ in range(60)])

    with_fire, without = run(), run(use_fire_reset=False)
    np.testing.assert_array_equal(with_fire, ref(True))
    np.testing.assert_array_equal(without, ref(False))
    assert not np.array_equal(with_fire, without)
    # a game without FIRE in its action set is unaffected by use_fire_reset
    a = pp.make("Freeway-v5", num_envs=1, noop_max=1).reset()[0]
    b = pp.make("Freeway-v5", num_envs=1, noop_max=1, use_fire_reset=False).reset()[0]
    np.testing.assert_array_equal(a, b)


def test_episodic_life():
    env = pp.make("Breakout-v5", num_envs=1, episodic_life=True, seed=3)
    obs, info = env.reset()
    assert info["lives"][0] == 5
    rng = np.random.default_rng(0)
    life_ends, game_overs, lives, game_over = 0, 0, 5, False
    for t in range(2500):
        obs, r, term, trunc, info = env.step(rng.integers(4, size=1))
        if info["elapsed_step"][0] == 0:  # the reset step after an episode end
            assert r[0] == 0 and not term[0]
            assert info["lives"][0] == (5 if game_over else lives)  # a life loss continues the same game
            if not game_over:  # the stack keeps the frames from before the life loss
                assert not all(np.array_equal(obs[0][0], obs[0][i]) for i in range(1, 4))
            lives = info["lives"][0]
            continue
        game_over = bool(info["terminated"][0])
        if term[0] and not game_over:
            life_ends += 1
            assert info["lives"][0] == lives - 1 > 0
        elif term[0]:
            game_overs += 1
        else:
            assert info["lives"][0] == lives
        lives = info["lives"][0]
        if game_overs == 2:
            break
    assert life_ends >= 8 and game_overs == 2
    # without episodic_life a life loss does not end the episode
    env = pp.make("Breakout-v5", num_envs=1, seed=3)
    env.reset()
    losses = 0
    for t in range(600):
        obs, r, term, trunc, info = env.step(rng.integers(4, size=1))
        if info["lives"][0] < lives and info["elapsed_step"][0] > 0 and not info["terminated"][0]:
            losses += 1
            assert not term[0]
        lives = info["lives"][0]
    assert losses >= 2
    # frame by frame against the reference, across life losses
    _align("Breakout-v5", "breakout", 400, seed=4, episodic_life=True)


def test_reward_clip():
    clipped = pp.make("SpaceInvaders-v5", num_envs=2, reward_clip=True, seed=1)
    raw = pp.make("SpaceInvaders-v5", num_envs=2, seed=1)
    clipped.reset()
    raw.reset()
    rng = np.random.default_rng(0)
    big = 0
    for _ in range(400):
        a = rng.integers(clipped.single_action_space.n, size=2)
        _, rc, _, _, ic = clipped.step(a)
        _, rr, _, _, ir = raw.step(a)
        np.testing.assert_array_equal(ic["reward"], rr)  # info reward: the raw reward
        np.testing.assert_array_equal(rc, np.sign(rr))
        big += (np.abs(rr) > 1).sum()
    assert big >= 3  # Space Invaders pays 5..30 points: clipping was exercised


def test_max_episode_steps():
    env = pp.make("Pong-v5", num_envs=1, max_episode_steps=50)
    env.reset()
    for t in range(1, 51):
        _, _, term, trunc, info = env.step(np.array([0]))
        assert info["elapsed_step"][0] == t
        assert bool(trunc[0]) == (t == 50) and not term[0]
    _, r, term, trunc, info = env.step(np.array([0]))
    assert info["elapsed_step"][0] == 0 and r[0] == 0
    # under episodic_life the limit counts the steps of the whole game, across life losses
    env = pp.make("Breakout-v5", num_envs=1, episodic_life=True, max_episode_steps=80, seed=2)
    env.reset()
    rng = np.random.default_rng(1)
    game_steps, life_ends, checked = 0, 0, 0
    for _ in range(2000):
        _, _, term, trunc, info = env.step(rng.integers(4, size=1))
        if info["elapsed_step"][0] == 0:  # a reset step
            continue
        game_steps += 1
        assert bool(trunc[0]) == (game_steps == 80)
        if trunc[0] or (term[0] and info["terminated"][0]):  # the game ended: truncated or game over
            checked += bool(trunc[0]) and life_ends >= 1
            game_steps, life_ends = 0, 0
        elif term[0]:
            life_ends += 1
        if checked >= 2:
            break
    assert checked >= 2  # truncations that came after life losses inside the same game


def test_zero_discount_on_life_loss():
    env = pp.make(
        "Breakout-v5", env_type="dm", num_envs=1, zero_discount_on_life_loss=True, seed=3, max_episode_steps=100
    )
    ts = env.reset()
    rng = np.random.default_rng(0)
    lives, zero, trunc_seen = 5, 0, False
    for _ in range(600):
        ts = env.step(rng.integers(4, size=1))
        if ts.observation.elapsed_step[0] == 0:
            lives = ts.observation.lives[0]
            continue
        lost = ts.observation.lives[0] < lives
        game_over = ts.observation.terminated[0] == 1
        assert ts.discount[0] == (0.0 if (lost or game_over) else 1.0)
        zero += lost
        if ts.step_type[0] == 2 and not game_over:
            trunc_seen = True  # truncation keeps discount 1 unless a life was lost on that step
        lives = ts.observation.lives[0]
    assert zero >= 2 and trunc_seen
    plain = pp.make("Breakout-v5", env_type="dm", num_envs=1)
    assert "discount" not in plain.reset().observation._fields


def test_sticky_actions_are_seeded():
    def run(seed, p, reseed=None):
        env = pp.make("Pong-v5", num_envs=2, repeat_action_probability=p, seed=seed, noop_max=1)
        env.reset() if reseed is None else env.reset(seed=reseed)
        rng = np.random.default_rng(0)
        return np.stack([env.step(rng.integers(6, size=2))[0] for _ in range(150)])

    a, b = run(0, 0.25), run(0, 0.25)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, run(1, 0.25))
    assert not np.array_equal(a, run(0, 0.0))
    np.testing.assert_array_equal(run(0, 0.25, reseed=9), run(5, 0.25, reseed=9))


def test_async_pool_runs_and_does_not_depend_on_threads():
    def collect(**kw):
        env = pp.make("Breakout-v5", num_envs=6, seed=4, **kw)
        env.async_reset()
        per_env = {i: [] for i in range(6)}
        for _ in range(60):
            obs, r, term, trunc, info = env.recv()
            for i, e in enumerate(info["env_id"]):
                per_env[int(e)].append(obs[i].copy())
            env.send(np.full(len(info["env_id"]), 1, dtype=np.int32), info["env_id"])
        return per_env

    a = collect(batch_size=3, num_threads=2)
    b = collect(batch_size=2, num_threads=1)
    for i in range(6):
        n = min(len(a[i]), len(b[i]))
        assert n >= 10
        np.testing.assert_array_equal(np.stack(a[i][:n]), np.stack(b[i][:n]))


@pytest.mark.slow
def test_every_task_aligns_with_ale_reference():
    """All 104 games, 60 steps each, frame by frame (about 2 minutes)."""
    for task in sorted(e for e in pp.list_all_envs() if pp.registry.env_class_of(e) == "Atari"):
        rom = pp.make_spec(task).config.task
        _align(task, rom, 60, seed=len(rom))


def test_max_episode_steps_against_envpool():
    """The time limit as EnvPool 1.2.5 has it (its Atari envs are the reference for the config keys): truncated at
    exactly max_episode_steps agent steps, not terminated, and the next step starts the next episode."""
    envpool = pytest.importorskip("envpool")
    theirs = envpool.make_gymnasium("Pong-v5", num_envs=2, max_episode_steps=30)
    ours = pp.make("Pong-v5", num_envs=2, max_episode_steps=30)
    theirs.reset()
    ours.reset()
    for t in range(1, 66):
        a = np.array([t % 3, (t + 1) % 3])
        _, _, t_term, t_trunc, t_info = theirs.step(a)
        _, _, o_term, o_trunc, o_info = ours.step(a)
        np.testing.assert_array_equal(o_trunc, t_trunc, err_msg=f"truncated at step {t}")
        np.testing.assert_array_equal(o_term, t_term, err_msg=f"terminated at step {t}")
        np.testing.assert_array_equal(o_info["elapsed_step"], t_info["elapsed_step"], err_msg=f"step {t}")
        assert o_trunc.all() == (t in (30, 61))
    theirs.close()
    ours.close()
