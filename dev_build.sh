#!/usr/bin/env bash
# Incremental development build: compiles the extension into build/dev and copies it into parallel_pool/,
# so `PYTHONPATH=. pytest` runs against the working tree. Extra args go to cmake configure
# (e.g. -DPP_SKIP_FAMILIES="atari").
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -f build/dev/CMakeCache.txt ] || [ $# -gt 0 ]; then
  cmake -S . -B build/dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DPP_DEV_INPLACE=ON "$@"
fi
cmake --build build/dev -j"$(nproc)"
# Say which families this build left out, and why (e.g. a python without the mujoco wheel configured the build:
# activate the venv that has the dependencies, then pass any -D option to reconfigure).
python3 - <<'PY'
import runpy

families = runpy.run_path("parallel_pool/_build_info.py")["FAMILIES"]
for name, (why, _ids) in sorted(families.items()):
    if why is not None:
        print(f"dev_build.sh: family {name!r} left out of this build: {why}")
PY
