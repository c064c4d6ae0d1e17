"""The release wheel: .ci/build_wheel.sh builds it, repairs it to a manylinux tag with libmujoco left external,
installs it with the [sb3] extra into a fresh venv without a compiler and smoke-tests it outside the clone.
Minutes (a build, a venv with torch): `slow`."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, ".ci", "build_wheel.sh")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("c++") is None, reason="needs a compiler and cmake")
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
