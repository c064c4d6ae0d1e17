"""render: parallel_pool.render.render_frames(spec, core_pool, env_ids) -> uint8 (n, H, W, 3), compared with the
references frame for frame: ALE's getScreenRGB (Atari), gymnasium's own render of the same state (classic control,
toy text, MuJoCo with each task's default camera)."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from pyproc import run_python

import parallel_pool as pp
from parallel_pool.render import render_frames


def _frames(env, env_ids):
    return render_frames(env.spec, env.engine, np.asarray(env_ids))


def _stepped(task, num_envs, steps, seed):
    """A pool of `task` after `steps` seeded random steps (the envs are in different states)."""
    env = pp.make(task, num_envs=num_envs, seed=seed)
    env.reset()
    env.single_action_space.seed(seed)
    for _ in range(steps):
        env.step(np.stack([env.single_action_space.sample() for _ in range(num_envs)]))
    return env


# ---------------------------------------------------------------- Atari: ALE's screen, drawn in C++


def _ale(rom: str):
    ale_py = pytest.importorskip("ale_py")
    ale = ale_py.ALEInterface()
    ale.setLoggerMode(ale_py.LoggerMode.Error)
    ale.setFloat("repeat_action_probability", 0.0)
    ale.loadROM(os.path.join(os.path.dirname(ale_py.__file__), "roms", rom + ".bin"))
    return ale


@pytest.mark.parametrize("task,rom", [("Breakout-v5", "breakout"), ("MsPacman-v5", "ms_pacman")])
def test_atari_frames_are_ale_screens(task, rom):
    if task not in pp.list_all_envs():
        pytest.skip("the atari family is not built")
    # noop_max=1 and no fire reset: a reset is one NOOP frame, so raw ALE can replay the same frames
    env = pp.make(task, num_envs=2, noop_max=1, use_fire_reset=False, frame_skip=4)
    env.reset()
    refs = [_ale(rom) for _ in range(2)]
    action_set = refs[0].getMinimalActionSet()
    for r in refs:
        r.reset_game()
        r.act(action_set[0])
    rng = np.random.default_rng(0)
    checked = 0
    for t in range(60):
        frames = _frames(env, [1, 0])
        assert frames.shape == (2, 210, 160, 3) and frames.dtype == np.uint8
        np.testing.assert_array_equal(frames[0], refs[1].getScreenRGB(), err_msg=f"step {t}")
        np.testing.assert_array_equal(frames[1], refs[0].getScreenRGB(), err_msg=f"step {t}")
        checked += 1
        a = rng.integers(env.single_action_space.n, size=2)
        _, _, term, trunc, _ = env.step(a)
        if (term | trunc).any():
            break
        for r, ai in zip(refs, a):
            for _ in range(4):
                r.act(action_set[ai])
    assert checked >= 30


def test_atari_render_refuses_pending_env_and_bad_ids():
    if "Pong-v5" not in pp.list_all_envs():
        pytest.skip("the atari family is not built")
    env = pp.make("Pong-v5", num_envs=2, batch_size=1)
    env.async_reset()
    env.recv()  # one env received, the other still pending
    with pytest.raises(ValueError, match="pending"):
        _frames(env, [0, 1])
    with pytest.raises(ValueError, match="out of range"):
        _frames(env, [2])
    with pytest.raises(ValueError, match="out of range"):
        _frames(env, [-1])


# ---------------------------------------------------------------- gymnasium-drawn families


def _gymnasium_frame(gym_id, set_state, **kwargs):
    pytest.importorskip("pygame")
    import gymnasium as gym

    g = gym.make(gym_id, render_mode="rgb_array", **kwargs)
    g.reset(seed=123)
    set_state(g.unwrapped)
    return g.render()


@pytest.mark.parametrize(
    "task,gym_id",
    [
        ("CartPole-v1", "CartPole-v1"),
        ("MountainCar-v0", "MountainCar-v0"),
        ("MountainCarContinuous-v0", "MountainCarContinuous-v0"),
        ("Pendulum-v0", "Pendulum-v1"),
        ("Acrobot-v1", "Acrobot-v1"),
    ],
)
def test_classic_control_frames_are_gymnasiums(task, gym_id):
    pytest.importorskip("pygame")
    env = _stepped(task, 3, 5, seed=7)
    frames = _frames(env, [2, 0])
    assert frames.dtype == np.uint8 and frames.shape[0] == 2 and frames.shape[-1] == 3
    for row, i in enumerate([2, 0]):
        state = np.asarray(env.get_state(i))

        def put(u, state=state):
            u.state = state.copy()
            if hasattr(u, "last_u"):
                u.last_u = None  # the pool keeps no last torque

        np.testing.assert_array_equal(frames[row], _gymnasium_frame(gym_id, put))
    assert not np.array_equal(frames[0], frames[1])  # different states, different pictures


@pytest.mark.parametrize(
    "task,gym_id,kwargs",
    [
        ("FrozenLake-v1", "FrozenLake-v1", {"map_name": "4x4"}),
        ("FrozenLake8x8-v1", "FrozenLake-v1", {"map_name": "8x8"}),
        ("Taxi-v3", "Taxi-v4", {}),
        ("CliffWalking-v0", "CliffWalking-v1", {}),
    ],
)
def test_toy_text_frames_are_gymnasiums(task, gym_id, kwargs):
    pytest.importorskip("pygame")
    env = _stepped(task, 2, 3, seed=3)
    frames = _frames(env, [0, 1])
    for i in range(2):
        s = int(env.get_state(i)[0])

        def put(u, s=s):
            u.s, u.lastaction = s, None

        np.testing.assert_array_equal(frames[i], _gymnasium_frame(gym_id, put, **kwargs))


def test_missing_pygame_names_the_extra(monkeypatch):
    from parallel_pool import render

    monkeypatch.setitem(sys.modules, "pygame", None)  # `import pygame` now raises ImportError
    render._gymnasium_env.cache_clear()
    env = pp.make("CartPole-v1", num_envs=1)
    env.reset()
    try:
        with pytest.raises(ImportError, match=r"gymnasium\[classic-control\]"):
            _frames(env, [0])
    finally:
        render._gymnasium_env.cache_clear()


@pytest.mark.parametrize("task", ["Catch-v0", "NChain-v0", "Blackjack-v1"])
def test_toy_text_without_gymnasium_picture_says_so(task):
    env = pp.make(task, num_envs=1)
    env.reset()
    with pytest.raises(NotImplementedError, match=task):
        _frames(env, [0])


def _mujoco_works() -> bool:
    try:
        from parallel_pool.render import _mujoco_env

        _mujoco_env(
            "InvertedPendulum-v5",
            os.path.join(
                os.path.dirname(__import__("gymnasium").__file__), "envs", "mujoco", "assets", "inverted_pendulum.xml"
            ),
        )
        return True
    except Exception:  # noqa: BLE001 - no GL backend on this machine
        return False


@pytest.mark.parametrize("task", ["Hopper-v5", "Ant-v4", "Reacher-v5"])
def test_mujoco_frames_are_gymnasiums(task):
    if task not in pp.list_all_envs():
        pytest.skip("the mujoco_gym family is not built")
    if not _mujoco_works():
        pytest.skip("no OpenGL backend for mujoco.Renderer (MUJOCO_GL=egl needs libegl1, osmesa libosmesa6)")
    import gymnasium as gym

    env = _stepped(task, 2, 10, seed=1)
    frames = _frames(env, [1, 0])
    assert frames.shape == (2, 480, 480, 3) and frames.dtype == np.uint8
    g = gym.make(task, render_mode="rgb_array")
    g.reset(seed=0)
    nq = g.unwrapped.model.nq
    for row, i in enumerate([1, 0]):
        state = np.asarray(env.get_state(i))
        g.unwrapped.set_state(state[:nq], state[nq:])
        np.testing.assert_array_equal(frames[row], g.render())
    assert not np.array_equal(frames[0], frames[1])


def test_mujoco_frames_use_each_envs_model(tmp_path):
    """Envs given different model files (xml_file as one value per env) are each drawn with their own model, and
    an env given another one by set_config is drawn with it once its reset made it current."""
    if "Hopper-v5" not in pp.list_all_envs():
        pytest.skip("the mujoco_gym family is not built")
    if not _mujoco_works():
        pytest.skip("no OpenGL backend for mujoco.Renderer (MUJOCO_GL=egl needs libegl1, osmesa libosmesa6)")
    import gymnasium as gym

    own = os.path.join(os.path.dirname(gym.__file__), "envs", "mujoco", "assets", "hopper.xml")
    with open(own) as f:
        text = f.read()
    blue = tmp_path / "hopper_blue.xml"  # the same bodies, another colour
    blue.write_text(text.replace('rgba="0.8 0.6 .4 1"', 'rgba="0.1 0.2 0.9 1"', 1))
    env = pp.make("Hopper-v5", num_envs=3, xml_file=[own, str(blue), own], reset_noise_scale=0.0)
    env.reset()
    frames = _frames(env, [0, 1, 2])  # the same state (no reset noise), drawn with each env's model
    np.testing.assert_array_equal(frames[0], frames[2])
    assert not np.array_equal(frames[0], frames[1])
    g = gym.make("Hopper-v5", render_mode="rgb_array", xml_file=str(blue))
    g.reset(seed=0)
    state = np.asarray(env.get_state(1))
    nq = g.unwrapped.model.nq
    g.unwrapped.set_state(state[:nq], state[nq:])
    np.testing.assert_array_equal(frames[1], g.render())
    env.set_config(0, xml_file=str(blue))
    env.reset()
    np.testing.assert_array_equal(_frames(env, [0])[0], frames[1])


def test_mujoco_imported_without_gl_backend_gets_a_clear_error():
    """Headless, with mujoco imported before MUJOCO_GL was set: render says what to set instead of failing inside
    GLFW."""

    code = (
        "import mujoco, numpy as np, parallel_pool as pp\n"
        "env = pp.make('Hopper-v5', num_envs=1, render_mode='rgb_array'); env.reset()\n"
        "try:\n    env.render()\nexcept RuntimeError as e:\n    print('ERR', e)\n"
    )
    environ = {k: v for k, v in os.environ.items() if k not in ("MUJOCO_GL", "DISPLAY", "PYOPENGL_PLATFORM")}
    out = run_python(code, timeout=120, env=environ)
    assert "ERR" in out.stdout and "MUJOCO_GL=egl" in out.stdout, out.stdout + out.stderr
