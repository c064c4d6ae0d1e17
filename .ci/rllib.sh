#!/usr/bin/env bash
# The RLlib tests in a venv of their own: ray[rllib]==2.60.0 pins gymnasium==1.2.2, which must not decide the
# gymnasium of the main test venv (1.4). Installs the package with the [rllib] extra (the build in build/<wheel tag>/
# is reused, nothing recompiles) plus pytest, then runs tests/adapters/test_rllib.py (PP_RLLIB_TESTS lets
# tests/conftest.py collect it).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${RLLIB_VENV:-/tmp/parallel-pool-rllib}
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q ".[rllib]" "pytest>=7"
"$venv/bin/python" -c 'import gymnasium; print("gymnasium", gymnasium.__version__, "in the RLlib venv")'
cd "$venv" && PP_RLLIB_TESTS=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider --rootdir "$OLDPWD" \
  -c "$OLDPWD/pyproject.toml" "$OLDPWD/tests/adapters/test_rllib.py"
