"""Packaging and the build: builds whose prerequisites are missing (families left out with a warning, a working
module whose left-out ids say what to install); the release wheel (.ci/build_wheel.sh builds it, repairs it to a
manylinux tag with libmujoco left external, installs it with the [sb3] extra into a fresh venv without a compiler
and smoke-tests it outside the clone). The builds take minutes: `slow`, except the configure-only check."""

from __future__ import annotations

import glob
import importlib.util
import os
import runpy
import shutil
import subprocess
import sys
import textwrap
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, ".ci", "build_wheel.sh")
needs_toolchain = pytest.mark.skipif(
    shutil.which("cmake") is None
    or shutil.which("c++") is None
    or shutil.which("ninja") is None
    or importlib.util.find_spec("pybind11") is None,
    reason="needs a compiler, cmake, ninja and pybind11 (a development setup, not an installed package)",
)
# a build without the ALE sources (a path that does not exist) and without jaxlib's headers
MISSING = ["-DPP_ALE_SDIST=/nonexistent/ale_py.tar.gz", "-DPP_XLA_INCLUDE_DIR=/nonexistent"]


def _configure(build_dir, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            "cmake",
            "-S",
            ROOT,
            "-B",
            str(build_dir),
            "-G",
            "Ninja",
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DPython_EXECUTABLE={sys.executable}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )


@needs_toolchain
def test_configure_leaves_out_families_with_missing_prerequisites(tmp_path):
    p = _configure(tmp_path / "b", *MISSING)
    assert p.returncode == 0, p.stderr[-3000:]
    warnings = " ".join(p.stderr.split())  # CMake wraps warning text
    assert "leaving out env family atari: PP_ALE_SDIST=/nonexistent/ale_py.tar.gz does not exist" in warnings
    assert "building without env.xla(): jaxlib's XLA FFI headers" in warnings
    info = runpy.run_path(str(tmp_path / "b" / "parallel_pool" / "_build_info.py"))
    reason, ids = info["FAMILIES"]["atari"]
    assert "PP_ALE_SDIST" in reason and "reinstall parallel-pool" in reason and "Pong-v5" in ids
    assert info["FAMILIES"]["classic_control"][0] is None and "pip install jaxlib" in info["XLA_SKIP_REASON"]
    p = _configure(tmp_path / "c", *MISSING, "-DPP_REQUIRE_ALL_FAMILIES=ON")
    assert p.returncode != 0 and "env family atari: PP_ALE_SDIST" in " ".join(p.stderr.split())


@pytest.mark.slow
@needs_toolchain
def test_build_without_a_prerequisite_makes_a_working_module(tmp_path):
    """Build the module without ALE (and without MuJoCo, to keep it short); ids of the left-out families say why."""
    build = tmp_path / "b"
    p = _configure(build, *MISSING, "-DPP_SKIP_FAMILIES=mujoco_gym")
    assert p.returncode == 0, p.stderr[-3000:]
    p = subprocess.run(["cmake", "--build", str(build), "-j2"], capture_output=True, text=True, timeout=3000)
    assert p.returncode == 0, p.stdout[-3000:]
    pkg = tmp_path / "pkg" / "parallel_pool"
    shutil.copytree(
        os.path.join(ROOT, "parallel_pool"), pkg, ignore=shutil.ignore_patterns("*.so", "__pycache__", "_build_info.py")
    )
    (core,) = glob.glob(str(build / "extension" / "_core*.so"))
    shutil.copy(core, pkg)
    shutil.copy(build / "parallel_pool" / "_build_info.py", pkg)
    code = textwrap.dedent("""
        import parallel_pool
        env = parallel_pool.make("CartPole-v1", num_envs=2)
        env.reset()
        assert "Pong-v5" not in parallel_pool.list_all_envs()
        for task, words in (("Pong-v5", "atari env family, which this build of parallel_pool left out: PP_ALE_SDIST"),
                            ("Ant-v5", "mujoco_gym env family, which this build of parallel_pool left out: left out "
                                       "of this build with -DPP_SKIP_FAMILIES")):
            try:
                parallel_pool.make(task)
            except ValueError as e:
                assert words in str(e), str(e)
            else:
                raise AssertionError(task)
        print("OK")
    """)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path / "pkg", capture_output=True, text=True, env=env)
    assert p.stdout.strip() == "OK", p.stderr[-3000:]


@pytest.mark.slow
@needs_toolchain
def test_build_wheel_script(tmp_path):
    env = dict(os.environ, PP_WHEEL_WORK=str(tmp_path / "work"))
    env.pop("PYTHONPATH", None)
    p = subprocess.run(["bash", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600)
    assert p.returncode == 0, (p.stdout[-4000:], p.stderr[-4000:])
    for task in ("CartPole-v1", "Pong-v5", "Ant-v5"):
        assert f"{task}: obs" in p.stdout
    assert "rpath of _core" in p.stdout and "$ORIGIN/../mujoco" in p.stdout
    (whl,) = glob.glob(os.path.join(ROOT, "dist", "parallel_pool-*.whl"))
    assert "manylinux" in os.path.basename(whl)
    names = zipfile.ZipFile(whl).namelist()
    assert "parallel_pool/py.typed" in names and "parallel_pool/_build_info.py" in names
    assert any(n.startswith("parallel_pool/_core") and n.endswith(".so") for n in names)
    assert not [n for n in names if "libmujoco" in n]
    assert any(n.endswith("LICENSE") for n in names)


def _xla_header_copy(build_dir) -> str:
    """The xla-ffi-headers-<hash> folder the compile commands of this build name."""
    import re

    found = set(re.findall(r"_deps/(xla-ffi-headers-[0-9a-f]+)", (build_dir / "build.ninja").read_text()))
    assert len(found) == 1, found
    return found.pop()


@needs_toolchain
@pytest.mark.skipif(importlib.util.find_spec("jaxlib") is None, reason="needs jaxlib's headers")
def test_changed_dependency_headers_get_a_new_path(tmp_path):
    """Headers from Python packages are compiled against from a copy keyed by their content: the same content keeps
    the path (a second `pip install` compiles nothing), changed content gets a new one (so every command that uses
    them changes and ninja rebuilds: a stale build dir cannot reuse objects built against other headers)."""
    import jaxlib

    headers = tmp_path / "include"
    shutil.copytree(os.path.join(os.path.dirname(jaxlib.__file__), "include", "xla"), headers / "xla")
    build = tmp_path / "b"
    args = [f"-DPP_XLA_INCLUDE_DIR={headers}", "-DPP_SKIP_FAMILIES=atari;mujoco_gym"]
    assert _configure(build, *args).returncode == 0
    first = _xla_header_copy(build)
    assert _configure(build, *args).returncode == 0
    assert _xla_header_copy(build) == first
    with open(headers / "xla" / "ffi" / "api" / "ffi.h", "a") as f:
        f.write("\n// a different version\n")
    assert _configure(build, *args).returncode == 0
    assert _xla_header_copy(build) != first
