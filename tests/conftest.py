"""Test-session setup shared by every test file."""

import os

# MuJoCo picks its OpenGL backend when it is first imported (by gymnasium's MuJoCo envs in many tests). Without a
# display its default (GLFW) cannot draw, so a headless test run uses EGL, as parallel_pool.render itself chooses
# when it is the first to import mujoco.
if not os.environ.get("DISPLAY"):
    os.environ.setdefault("MUJOCO_GL", "egl")
