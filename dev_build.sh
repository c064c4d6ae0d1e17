#!/usr/bin/env bash
# Incremental development build: compiles the extension into build/dev and copies it into parallel_pool/,
# so `PYTHONPATH=. pytest` runs against the working tree. Extra args go to cmake configure
# (e.g. -DPP_SKIP_FAMILIES="atari").
#
# The python that configures the build decides which families are built (the MuJoCo families need the mujoco
# wheel's headers, env.xla() needs jaxlib's FFI headers): a family that python cannot serve is left out. So the
# build uses one python on purpose, named to cmake with -DPython_EXECUTABLE: $PP_PYTHON if set, else the active
# virtual environment's ($VIRTUAL_ENV), else ./.venv's, else python3 on PATH. It refuses to configure with a
# python that lacks mujoco or jaxlib unless PP_ALLOW_MISSING=1 (then it says loudly what will be left out).
set -euo pipefail
cd "$(dirname "$0")"
if [ -n "${PP_PYTHON:-}" ]; then
  py="$PP_PYTHON"
elif [ -n "${VIRTUAL_ENV:-}" ] && [ -x "$VIRTUAL_ENV/bin/python" ]; then
  py="$VIRTUAL_ENV/bin/python"
elif [ -x .venv/bin/python ]; then
  py="$PWD/.venv/bin/python"
else
  py="$(command -v python3)"
fi
if [ ! -f build/dev/CMakeCache.txt ] || [ $# -gt 0 ]; then
  missing="$("$py" - <<'PY'
import importlib.util

wanted = {"mujoco": "the mujoco_gym and mujoco_dmc families", "jaxlib": "env.xla() (the XLA FFI handlers)"}
print("; ".join(f"{m} (needed by {what})" for m, what in wanted.items() if importlib.util.find_spec(m) is None))
PY
)"
  if [ -n "$missing" ]; then
    echo "dev_build.sh: $py lacks $missing." >&2
    if [ "${PP_ALLOW_MISSING:-0}" != 1 ]; then
      echo "dev_build.sh: refusing to configure a build that would silently leave them out. Activate the venv" \
        "that has the dependencies (or set PP_PYTHON=/path/to/python), or set PP_ALLOW_MISSING=1 to build without" \
        "them." >&2
      exit 2
    fi
    echo "dev_build.sh: WARNING: PP_ALLOW_MISSING=1: building WITHOUT them." >&2
  fi
  echo "dev_build.sh: configuring with $py" >&2
  cmake -S . -B build/dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DPP_DEV_INPLACE=ON -DPython_EXECUTABLE="$py" "$@"
fi
cmake --build build/dev -j"$(nproc)"
# Say which families this build left out, and why (e.g. -DPP_SKIP_FAMILIES, or a dependency the configuring python
# lacks: activate the venv that has the dependencies, then pass any -D option to reconfigure).
"$py" - <<'PY'
import runpy

families = runpy.run_path("parallel_pool/_build_info.py")["FAMILIES"]
for name, (why, _ids) in sorted(families.items()):
    if why is not None:
        print(f"dev_build.sh: family {name!r} left out of this build: {why}")
PY
