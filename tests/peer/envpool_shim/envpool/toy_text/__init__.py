"""Shim package (tests/peer/run_envpool_tests.sh)."""
