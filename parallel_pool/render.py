"""RGB frames of a pool's envs: `render_frames(spec, engine, env_ids)` -> uint8 (n, H, W, 3).

Envs that draw themselves in C++ (Atari: ALE's full screen) declare a render size in their spec and are drawn by
`_core.Engine.render` on the calling thread; envs written in Python draw themselves in their worker process. The
others are drawn exactly as gymnasium draws them: each env's state
(`get_state`) is put into a gymnasium env made with render_mode="rgb_array", whose render() draws it, so the
pictures (and, for MuJoCo, the default camera of each task) are gymnasium's own.

Headless machines: classic control and toy text need pygame (`pip install "gymnasium[classic-control]"`);
MuJoCo needs an OpenGL backend for `mujoco.Renderer`. When MUJOCO_GL is unset and mujoco is not imported yet,
this module picks "egl" (Debian: libegl1 + libegl-mesa0; "osmesa" needs libosmesa6 instead).
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import Any

import numpy as np


def _set_array_state(env, state: np.ndarray) -> None:
    env.state = np.array(state, dtype=np.float64)


def _set_pendulum_state(env, state: np.ndarray) -> None:
    env.state = np.array(state, dtype=np.float64)
    env.last_u = None  # the pool keeps no last torque: gymnasium's torque arrow is not drawn


def _set_discrete_state(env, state: np.ndarray) -> None:
    env.s = int(state[0])
    env.lastaction = None  # the pool keeps no last action: the agent sprite faces gymnasium's default way


# env type -> (the gymnasium id that draws it, how to put the pool's state into that gymnasium env)
_GYMNASIUM_DRAWN: dict[str, tuple[str, Callable[[Any, np.ndarray], None]]] = {
    "CartPole": ("CartPole-v1", _set_array_state),
    "MountainCar": ("MountainCar-v0", _set_array_state),
    "MountainCarContinuous": ("MountainCarContinuous-v0", _set_array_state),
    "Pendulum": ("Pendulum-v1", _set_pendulum_state),
    "Acrobot": ("Acrobot-v1", _set_array_state),
    "CliffWalking": ("CliffWalking-v1", _set_discrete_state),
    "Taxi": ("Taxi-v4", _set_discrete_state),
    "FrozenLake": ("FrozenLake-v1", _set_discrete_state),
}

# Why the remaining env types have no frames.
_NOT_DRAWN = {
    "Blackjack": "gymnasium draws the dealer's card with a suit it deals at reset, which the pool does not deal",
    "Catch": "gymnasium has no Catch env to draw it",
    "NChain": "gymnasium has no NChain env to draw it",
}


def render_frames(spec, engine, env_ids: np.ndarray) -> np.ndarray:
    """uint8 (len(env_ids), H, W, 3) frames of the given envs (none may have a result pending)."""
    env_ids = np.asarray(env_ids, dtype=np.int64).reshape(-1)
    if spec.renders_itself:  # the envs draw themselves (Python envs: in their worker, with their own render())
        return engine.render(env_ids)
    frames = []
    for i in env_ids:
        # each env with its own config (its model file: xml_file may differ per env, and set_config changes it)
        draw = _drawer(spec, engine.get_config(int(i)))
        frames.append(draw(np.asarray(engine.get_state(int(i)), dtype=np.float64)))
    if not frames:
        return np.zeros((0, 0, 0, 3), dtype=np.uint8)
    return np.stack(frames).astype(np.uint8, copy=False)


def _drawer(spec, cfg: dict[str, Any]) -> Callable[[np.ndarray], np.ndarray]:
    """A function from the state of an env with config `cfg` (the engine's get_config: its values of per-env keys)
    to its frame. Cheap: the gymnasium envs that draw are made once per (id, model) and shared. (get_config gives a
    set_config change before the env's next reset makes it current: render after that reset.)"""
    if "xml_file" in cfg:
        # EnvPool's gymnasium_v5_render_camera: the camera of gymnasium's -v5 task, else of its -v4 task
        camera_id = spec.task_id.rsplit("-", 1)[0] + ("-v5" if cfg["gymnasium_v5_render_camera"] else "-v4")
        return _mujoco_drawer(camera_id, _model_path(cfg["xml_file"], cfg["base_path"]))
    if spec.env_class in _GYMNASIUM_DRAWN:
        gym_id, set_state = _GYMNASIUM_DRAWN[spec.env_class]
        kwargs = {"map_name": f"{cfg['size']}x{cfg['size']}"} if spec.env_class == "FrozenLake" else {}
        env = _gymnasium_env(gym_id, tuple(sorted(kwargs.items())))

        def draw(state: np.ndarray) -> np.ndarray:
            set_state(env.unwrapped, state)
            return env.render()

        return draw
    reason = _NOT_DRAWN.get(spec.env_class, "this env type has no renderer")
    raise NotImplementedError(f"render is not available for {spec.task_id}: {reason}")


@functools.lru_cache(maxsize=32)
def _gymnasium_env(gym_id: str, kwargs: tuple):
    """One rgb_array gymnasium env per (id, options), shared by every pool: render only reads the state it is
    given, so sharing is safe and saves building a pygame surface per call."""
    try:
        import pygame  # noqa: F401
    except ImportError as e:
        raise ImportError(f'rendering {gym_id} needs pygame: pip install "gymnasium[classic-control]"') from e
    import gymnasium as gym

    env = gym.make(gym_id, render_mode="rgb_array", **dict(kwargs))
    env.reset(seed=0)  # gymnasium asserts a reset before render
    return env


def _model_path(xml_file: str, base_path: str) -> str:
    """The model file the C++ env loaded (its ModelPath rule, which is gymnasium's)."""
    if xml_file.startswith((".", "/")):
        return xml_file
    if xml_file.startswith("~"):
        return os.path.expanduser(xml_file)
    return os.path.join(base_path, xml_file)


def _mujoco_drawer(gym_id: str, model_path: str) -> Callable[[np.ndarray], np.ndarray]:
    env = _mujoco_env(gym_id, model_path)
    nq = env.unwrapped.model.nq

    def draw(state: np.ndarray) -> np.ndarray:
        env.unwrapped.set_state(state[:nq], state[nq:])
        # each model's env has its own GL context, and gymnasium makes it current only when it makes it (at the
        # first render): another model's env drawn (or freed) since then left another context (or none) current
        viewer = env.unwrapped.mujoco_renderer.viewer
        if viewer is not None:
            viewer.make_context_current()
        return env.render()

    return draw


@functools.lru_cache(maxsize=32)
def _mujoco_env(gym_id: str, model_path: str):
    """gymnasium's env `gym_id` on the model file the pool loaded: its MujocoRenderer (mujoco.Renderer) and the
    task's default camera draw the frame."""
    if "MUJOCO_GL" not in os.environ and not os.environ.get("DISPLAY"):
        if "mujoco" in sys.modules:  # mujoco chose its GL backend (GLFW, which needs a display) when imported
            raise RuntimeError(
                "render: this machine has no display and mujoco was imported before MUJOCO_GL was "
                "set, so it uses GLFW, which cannot draw here; set MUJOCO_GL=egl (libegl1) or "
                "MUJOCO_GL=osmesa (libosmesa6) in the environment before importing mujoco"
            )
        os.environ["MUJOCO_GL"] = "egl"  # headless: GLFW (mujoco's default) needs a display
    import gymnasium as gym

    try:
        env = gym.make(gym_id, render_mode="rgb_array", xml_file=model_path)
    except TypeError:  # some -v4 envs take no xml_file: they always load gymnasium's own model
        env = gym.make(gym_id, render_mode="rgb_array")
        if os.path.realpath(env.unwrapped.fullpath) != os.path.realpath(model_path):  # type: ignore[attr-defined]
            raise NotImplementedError(
                f"render: gymnasium's {gym_id} cannot load {model_path}; "
                f"pass gymnasium_v5_render_camera=True for a custom xml_file"
            ) from None
    env.reset(seed=0)
    return env
