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
