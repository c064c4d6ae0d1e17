#!/usr/bin/env bash
# Run EnvPool's own unit tests against ParallelPool (a peer suite, not part of CI): EnvPool's test files import
# `envpool.*`; the shim in envpool_shim/ maps those imports onto parallel_pool. EnvPool's tests are not copied into
# this repository: point this script at a checkout of EnvPool's source (tag v1.2.4 is the one read for
# docs/peer-tests.md) and it runs the test files named below from there.
#   tests/peer/run_envpool_tests.sh /path/to/envpool-checkout [pytest args]
set -euo pipefail
src=${1:?usage: run_envpool_tests.sh /path/to/envpool-checkout [pytest args]}
shift
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
files=(envpool/classic_control/classic_control_test.py envpool/toy_text/toy_text_test.py envpool/atari/api_test.py
       envpool/mujoco/gym/mujoco_gym_deterministic_test.py)
work=$(mktemp -d)
for f in "${files[@]}"; do cp "$src/$f" "$work/"; done
cd "$work"
# the shim first (it is `envpool`), then the package under test (an installed one, or a source tree with a build)
PYTHONPATH="$here/envpool_shim:${PYTHONPATH:-$root}" python -m pytest -q -p no:cacheprovider "$@" ./*.py
