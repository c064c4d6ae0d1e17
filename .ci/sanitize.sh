#!/usr/bin/env bash
# Builds the extension with ASan+UBSan (build/asan) and with TSan (build/tsan), then runs tests/stress/stress.py
# against each build with the sanitizer runtime preloaded into Python. Exits non-zero on any sanitizer report or
# stress failure. Only the `testing` env family (Dummy-v0, TwoPlayer-v0: all the stress run uses) is built, and no
# XLA handlers, to keep the sanitizer builds quick; the other families add no engine code paths.
#   .ci/sanitize.sh            both builds
#   .ci/sanitize.sh asan|tsan  one of them
#   .ci/sanitize.sh tests      the job .ci/run runs on every CI: an ASan+UBSan build (build/asan-tests) of the
#                              engine and the cheap families (testing, classic control, toy text), running the
#                              lifecycle, fuzz, engine, engine-reliability, thread-pool, batched-step, per-call
#                              and snapshot-fuzz tests through it (the snapshot fuzz skips the families left out)
# Env: PYTHON (default: python3), JOBS (default: 2), PP_STRESS_ROUNDS (default: 5).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
JOBS=${JOBS:-2}
export PP_STRESS_ROUNDS=${PP_STRESS_ROUNDS:-5}
which=${1:-all}

build() {  # dir, sanitizer flags[, families to leave out]
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython_EXECUTABLE="$(command -v "$PYTHON")" \
    -DPP_SKIP_FAMILIES="${3:-atari;mujoco_gym;mujoco_dmc;vizdoom;classic_control;toy_text;examples}" -DPP_XLA=OFF -DPP_DEV_INPLACE=OFF \
    -DCMAKE_CXX_FLAGS="$2 -g -fno-omit-frame-pointer" -DCMAKE_SHARED_LINKER_FLAGS="$2" >/dev/null
  cmake --build "$1" -j"$JOBS"
}

# Runs a command with the sanitizer runtime preloaded, its output in `log`; fails on a non-zero exit or on any
# sanitizer report in the log.
sanitized() {  # name, log, runtime library, options variable assignment, command...
  local name=$1 log=$2 lib
  lib=$(${CXX:-c++} -print-file-name="$3")
  local opts=$4
  shift 4
  echo "== $name: $* (log: $log)"
  # the sanitizer runtime must be loaded first; libstdc++ with it so its interceptors see every allocation
  if ! env LD_PRELOAD="$lib $(${CXX:-c++} -print-file-name=libstdc++.so)" $opts "$@" >"$log" 2>&1; then
    tail -60 "$log"
    echo "== $name: FAILED (exited non-zero)"
    return 1
  fi
  if grep -qE "ERROR: AddressSanitizer|runtime error:|WARNING: ThreadSanitizer|ERROR: LeakSanitizer" "$log"; then
    grep -nE -A30 "ERROR: AddressSanitizer|runtime error:|WARNING: ThreadSanitizer" "$log" | head -120
    echo "== $name: FAILED (sanitizer report)"
    return 1
  fi
  tail -1 "$log"
  echo "== $name: clean"
}

run() {  # name, build dir, runtime library, options variable assignment: the stress run
  sanitized "$1 stress" "$2/stress.log" "$3" "$4 PP_CORE_DIR=$2/extension" "$PYTHON" tests/stress/stress.py
}

# pytest on the sanitizer build: the package's Python files with the sanitizer build's _core beside them, in a
# folder of their own that comes first on the path (-P: not the working directory, whose source folder -- a clone's
# root has no compiled extension -- would shadow it). CI unset: tests of the families this build leaves out skip
# here (the main test run covers them).
run_tests() {  # name, build dir, runtime library, options variable assignment, test files...
  local name=$1 dir=$2 rt=$3 opts=$4 pkg="$2/pkg"
  shift 4
  rm -rf "$pkg" && mkdir -p "$pkg"
  cp -r parallel_pool "$pkg/"
  rm -f "$pkg"/parallel_pool/_core*.so "$pkg/parallel_pool/_build_info.py"
  cp "$dir"/extension/_core*.so "$dir/parallel_pool/_build_info.py" "$pkg/parallel_pool/"
  sanitized "$name pytest" "$dir/pytest.log" "$rt" "$opts PYTHONPATH=$pkg" \
    env -u CI "$PYTHON" -P -m pytest -q -p no:cacheprovider "$@"
}

status=0
if [ "$which" = tests ]; then
  build build/asan-tests "-fsanitize=address,undefined -fno-sanitize-recover=undefined" \
    "atari;box2d;minigrid;mujoco_gym;mujoco_dmc;vizdoom;examples"
  run_tests "asan+ubsan" build/asan-tests libasan.so \
    "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1" \
    tests/engine/test_lifecycle.py tests/engine/test_fuzz_api.py tests/engine/test_engine.py tests/engine/test_reliability_engine.py \
    tests/engine/test_thread_pool.py tests/engine/test_step_batch.py tests/engine/test_percall.py tests/engine/test_snapshot_fuzz.py \
    || status=1
  exit $status
fi
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
