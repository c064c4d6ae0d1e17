"""Test-session setup shared by every test file."""

import os
import signal

# The tests that press Ctrl-C (os.kill with SIGINT, here and in the interpreters they start) need Python's
# KeyboardInterrupt handler. A run started in the background of a non-interactive shell (`... &`, nohup) inherits
# SIGINT ignored, and Python then installs none; the handler set here also makes the interpreters the tests start
# begin with SIGINT at its default, so that they install theirs.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# MuJoCo picks its OpenGL backend when it is first imported (by gymnasium's MuJoCo envs in many tests). Without a
# display its default (GLFW) cannot draw, so a headless test run uses EGL, as parallel_pool.render itself chooses
# when it is the first to import mujoco.
if not os.environ.get("DISPLAY"):
    os.environ.setdefault("MUJOCO_GL", "egl")

# ---- CI: a skip is a failure ----------------------------------------------------------------------------------------
# In CI (the CI environment variable set, as .ci/run does) every test of the default set must run: a test that
# skips there because a family, a package or a tool is missing would let a green run prove nothing. Only the skips
# below are expected in CI, each for a stated reason; any other skip fails the run (listed at the end).
CI_ALLOWED_SKIPS = {
    # the stress run against sanitizer builds is `slow` (.ci/sanitize.sh; .ci/run runs its own ASan+UBSan job)
    "run .ci/sanitize.sh": "sanitizer builds are made by .ci/sanitize.sh, not by the test run",
    # no package ships minigrid's WFC pattern images (only its source tree has them):
    # tests/envs/minigrid/test_minigrid_wfc.py
    "minigrid's WFC pattern images are not installed": "no wheel or sdist of minigrid holds its WFC pattern images",
}

_ci_bad_skips: list[str] = []


def pytest_runtest_logreport(report):
    if not os.environ.get("CI") or not report.skipped or getattr(report, "wasxfail", None):
        return
    reason = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
    if not any(allowed in reason for allowed in CI_ALLOWED_SKIPS):
        _ci_bad_skips.append(f"{report.nodeid}: {reason}")


def pytest_sessionfinish(session, exitstatus):
    if _ci_bad_skips and exitstatus == 0:
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter):
    if _ci_bad_skips:
        terminalreporter.section("skipped in CI, where every test must run (tests/conftest.py)")
        for line in _ci_bad_skips:
            terminalreporter.write_line(line)


# ---- RLlib ------------------------------------------------------------------------------------------------------
# RLlib pins gymnasium 1.2.2, so its tests run in a venv of their own (.ci/rllib.sh sets PP_RLLIB_TESTS=1); every
# other run leaves that file out
collect_ignore = [] if os.environ.get("PP_RLLIB_TESTS") else ["adapters/test_rllib.py"]


# ---- snapshot key -------------------------------------------------------------------------------------------------
# Python-env snapshots are signed with the user's key file (parallel_pool.signing), made at first use: the tests (and
# the interpreters they start, which inherit the environment) use a key file of their own, not ~/.config's.
if not os.environ.get("PARALLEL_POOL_SNAPSHOT_KEY_FILE"):
    import atexit
    import shutil
    import tempfile

    _key_dir = tempfile.mkdtemp(prefix="parallel_pool-test-key-")
    atexit.register(shutil.rmtree, _key_dir, ignore_errors=True)
    os.environ["PARALLEL_POOL_SNAPSHOT_KEY_FILE"] = os.path.join(_key_dir, "snapshot.key")
