#!/usr/bin/env bash
# Builds the extension with ASan+UBSan (build/asan) and with TSan (build/tsan), then runs tests/stress/stress.py
# against each build with the sanitizer runtime preloaded into Python. Exits non-zero on any sanitizer report or
# stress failure. Only the `testing` env family (Dummy-v0, TwoPlayer-v0: all the stress run uses) is built, and no
# XLA handlers, to keep the sanitizer builds quick; the other families add no engine code paths.
#   .ci/sanitize.sh            both builds
#   .ci/sanitize.sh asan|tsan  one of them
# Env: PYTHON (default: python3), JOBS (default: 2), PP_STRESS_ROUNDS (default: 5).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
JOBS=${JOBS:-2}
export PP_STRESS_ROUNDS=${PP_STRESS_ROUNDS:-5}
which=${1:-all}

build() {  # dir, sanitizer flags
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython_EXECUTABLE="$(command -v "$PYTHON")" \
    -DPP_SKIP_FAMILIES="atari;mujoco_gym;classic_control;toy_text;examples" -DPP_XLA=OFF -DPP_DEV_INPLACE=OFF \
    -DCMAKE_CXX_FLAGS="$2 -g -fno-omit-frame-pointer" -DCMAKE_SHARED_LINKER_FLAGS="$2" >/dev/null
  cmake --build "$1" -j"$JOBS"
}

run() {  # name, build dir, runtime library, options variable assignment
  local log="$2/stress.log" lib
  lib=$(${CXX:-c++} -print-file-name="$3")
  echo "== $1: stress run (log: $log)"
  # the sanitizer runtime must be loaded first; libstdc++ with it so its interceptors see every allocation
  if ! env PP_CORE_DIR="$2/extension" LD_PRELOAD="$lib $(${CXX:-c++} -print-file-name=libstdc++.so)" $4 \
      "$PYTHON" tests/stress/stress.py >"$log" 2>&1; then
    tail -50 "$log"
    echo "== $1: FAILED (stress run exited non-zero)"
    return 1
  fi
  if grep -qE "ERROR: AddressSanitizer|runtime error:|WARNING: ThreadSanitizer|ERROR: LeakSanitizer" "$log"; then
    grep -nE -A30 "ERROR: AddressSanitizer|runtime error:|WARNING: ThreadSanitizer" "$log" | head -120
    echo "== $1: FAILED (sanitizer report)"
    return 1
  fi
  tail -1 "$log"
  echo "== $1: clean"
}

status=0
if [ "$which" = all ] || [ "$which" = asan ]; then
  build build/asan "-fsanitize=address,undefined -fno-sanitize-recover=undefined"
  # Python itself is not instrumented and keeps memory until exit: no leak checking
  run asan build/asan libasan.so "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1" \
    || status=1
fi
if [ "$which" = all ] || [ "$which" = tsan ]; then
  build build/tsan "-fsanitize=thread"
  run tsan build/tsan libtsan.so "TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1" || status=1
fi
exit $status
