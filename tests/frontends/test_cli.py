"""The `parallel-pool` command (parallel_pool.cli), run in-process with main(argv) and, where installed, as the
console script; the build's family list; the error for a source tree without the extension."""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys

import pytest

import parallel_pool
from parallel_pool import families
from parallel_pool.bench.peers import gymnasium_peer, make_atari_env
from parallel_pool.cli import main

PKG_DIR = os.path.dirname(os.path.abspath(parallel_pool.__file__))
ROW = re.compile(r"^  (?P<name>.+?)\s+(?P<rate>[\d,]+|-)\s+(?P<ratio>[\d.]+x|-)  (?P<note>.*)$")
needs_build_info = pytest.mark.skipif(not families.families(), reason="this extension build has no _build_info.py")


def _run(capsys, *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def _has(module: str) -> bool:
    try:
        __import__(module)
        return True
    except Exception:
        return False


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"parallel-pool {parallel_pool.__version__}"
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", parallel_pool.__version__)


@pytest.mark.parametrize(
    "argv, usage", [(["--help"], "usage: parallel-pool "), (["bench", "--help"], "usage: parallel-pool bench ")]
)
def test_program_name_in_help(capsys, argv, usage):
    with pytest.raises(SystemExit):
        main(argv)
    assert capsys.readouterr().out.startswith(usage)


def test_program_name_with_python_m():
    out = subprocess.run(
        [sys.executable, "-m", "parallel_pool", "--help"],
        capture_output=True,
        text=True,
        cwd=os.path.dirname(PKG_DIR),
        check=True,
    ).stdout
    assert out.startswith("usage: parallel-pool ")
    for cmd in ("list", "info", "demo", "bench"):
        assert cmd in out


def test_output_into_a_closed_pipe_is_quiet(monkeypatch):
    """`parallel-pool list | head -1`: the reader goes away; no BrokenPipeError traceback, exit status 1."""
    r, w = os.pipe()
    os.close(r)
    with open(w, "w") as pipe:  # block-buffered, as stdout into a pipe is
        monkeypatch.setattr(sys, "stdout", pipe)
        assert main(["list"]) == 1
        monkeypatch.undo()


def test_list_all(capsys):
    assert _run(capsys, "list").split() == parallel_pool.list_all_envs()


@needs_build_info
def test_build_info_ids_are_the_registered_ids():
    """The ids CMake read from each built family's sources are exactly the ids the extension registers."""
    listed = {i for reason, ids in families.families().values() if reason is None for i in ids}
    assert listed == set(parallel_pool.list_all_envs(include_unlisted=True))
    assert "Pong-v5" in families.families()["atari"][1]


@needs_build_info
def test_list_family(capsys):
    out = _run(capsys, "list", "--family", "toy_text").split()
    assert "Taxi-v3" in out and "CartPole-v1" not in out
    assert out == [i for i in parallel_pool.list_all_envs() if families.family_of(i) == "toy_text"]
    with pytest.raises(SystemExit, match="unknown family 'nope'.*toy_text"):
        main(["list", "--family", "nope"])


def test_info(capsys):
    out = _run(capsys, "info", "CartPole-v1")
    spec = parallel_pool.make_spec("CartPole-v1")
    assert out.startswith("CartPole-v1: env class CartPole")
    assert repr(spec.action_space) in out
    for key, value in spec.config._asdict().items():
        if key in ("batch_size",):  # resolved (0 -> num_envs) in the spec; info shows the registered default
            continue
        assert re.search(rf"^    {key} += {re.escape(repr(value))} ", out, re.M), key
    with pytest.raises(SystemExit, match="CartPol-v1.*CartPole-v1"):
        main(["info", "CartPol-v1"])


def test_ids_of_a_left_out_family_name_the_missing_prerequisite(monkeypatch):
    """A build without the Atari family: make("Pong-v5") says why and what to install, not just 'unknown id'."""
    import parallel_pool.registry as registry

    reason = "the ALE emulator needs the zlib headers (apt-get install zlib1g-dev), then reinstall parallel-pool"
    monkeypatch.setattr(families, "families", lambda: {"atari": (reason, ["Pong-v5"]), "toy_text": (None, ["Taxi-v3"])})
    monkeypatch.setattr(registry, "_TASKS", {k: v for k, v in registry._TASKS.items() if k != "Pong-v5"})
    with pytest.raises(ValueError, match=r"'Pong-v5' belongs to the atari env family, which this build .*zlib1g-dev"):
        parallel_pool.make("Pong-v5")
    with pytest.raises(ValueError, match="unknown task id 'Taxi-v9'"):
        parallel_pool.make("Taxi-v9")
    with pytest.raises(SystemExit, match="atari family is not in this build: the ALE"):
        main(["list", "--family", "atari"])


def test_list_notes_left_out_families_on_stderr(capsys, monkeypatch):
    reason = "the ALE emulator needs the zlib headers (apt-get install zlib1g-dev)"
    monkeypatch.setattr(families, "families", lambda: {"atari": (reason, ["Pong-v5"]), "toy_text": (None, ["Taxi-v3"])})
    assert main(["list"]) == 0
    out, err = capsys.readouterr()
    assert out.split() == parallel_pool.list_all_envs()
    assert err.strip() == f"note: the atari family is not in this build: {reason}"


def test_peers():
    taxi, _ = gymnasium_peer("Taxi-v3")
    assert (taxi.gym_id, taxi.atari) == ("Taxi-v4", False) and "Taxi-v4" in taxi.note
    assert gymnasium_peer("CartPole-v1")[0].gym_id == "CartPole-v1"
    assert gymnasium_peer("Ant-v5")[0].gym_id == "Ant-v5"
    peer, why = gymnasium_peer("Dummy-v0")
    assert peer is None and "Dummy-v0" in why


@pytest.mark.skipif(not _has("ale_py"), reason="ale-py not installed")
def test_atari_peer_has_our_spaces():
    peer, _ = gymnasium_peer("Pong-v5")
    assert (peer.gym_id, peer.atari) == ("ALE/Pong-v5", True)
    env = make_atari_env(peer.gym_id)
    ours = parallel_pool.make_spec("Pong-v5")
    obs, _ = env.reset(seed=0)
    assert obs.shape == ours.observation_space.shape and obs.dtype == ours.observation_space.dtype
    assert env.action_space == ours.action_space
    env.close()


@pytest.mark.parametrize(
    "task, peer_note",
    [
        ("CartPole-v1", "CartPole-v1"),
        ("Taxi-v3", "compared with Taxi-v4"),
        ("Pong-v5", "ALE/Pong-v5 with EnvPool's preprocessing"),
        ("Ant-v5", "Ant-v5"),
        ("Catch-v0", "skipped: gymnasium has no Catch-v0"),
    ],
)
def test_demo_any_task(capsys, task, peer_note):
    if task == "Pong-v5" and not _has("ale_py"):
        pytest.skip("ale-py not installed")
    out = _run(capsys, "demo", "--task", task, "--num-envs", "2", "--seconds", "0.05")
    rows = {m["name"]: m for m in map(ROW.match, out.splitlines()) if m}
    ours = rows["parallel_pool (sync)"]
    assert ours["rate"] != "-" and int(ours["rate"].replace(",", "")) > 0
    gym_row = rows["gymnasium SyncVectorEnv"]
    assert peer_note in gym_row["note"]
    assert (gym_row["rate"] == "-") == peer_note.startswith("skipped")
    if _has("envpool"):
        assert rows["envpool (sync)"]["rate"] != "-", out


def test_demo_bad_task_is_a_clear_error():
    with pytest.raises(SystemExit, match="unknown task id 'Pongg-v5'.*Pong-v5"):
        main(["demo", "--task", "Pongg-v5", "--seconds", "0.05"])


def test_import_from_a_source_tree_without_the_extension(tmp_path):
    """`import parallel_pool` in a clone root without a built _core names the situation and the ways out."""
    pkg = tmp_path / "parallel_pool"
    shutil.copytree(PKG_DIR, pkg, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    code = "import parallel_pool"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert out.returncode != 0 and "installation is broken" in out.stderr
    for marker in ("pyproject.toml", "CMakeLists.txt", "core"):
        (tmp_path / marker).touch()
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert "you are importing parallel_pool from its source tree" in out.stderr, out.stderr
    assert "parallel-pool demo" in out.stderr and "ModuleNotFoundError" not in out.stderr


def _installed_script() -> str | None:
    """The console script of the installed parallel-pool, if the parallel_pool under test is that installation
    (not a source tree on PYTHONPATH, whose code the installed script would not run)."""
    try:
        dist = importlib.metadata.distribution("parallel-pool")
    except importlib.metadata.PackageNotFoundError:
        return None
    if os.path.realpath(dist.locate_file("parallel_pool")) != os.path.realpath(PKG_DIR):
        return None
    script = os.path.join(os.path.dirname(sys.executable), "parallel-pool")
    return script if os.path.exists(script) else None


@pytest.mark.skipif(_installed_script() is None, reason="the parallel_pool under test is not an installed one")
def test_console_script(tmp_path):
    script = _installed_script()
    out = subprocess.run([script, "--version"], capture_output=True, text=True, cwd=tmp_path, check=True).stdout
    assert out.strip() == f"parallel-pool {importlib.metadata.version('parallel-pool')}"
    assert importlib.metadata.version("parallel-pool") == parallel_pool.__version__
    out = subprocess.run(
        [script, "list", "--family", "classic_control"], capture_output=True, text=True, cwd=tmp_path, check=True
    ).stdout
    assert "CartPole-v1" in out.split() and "Pong-v5" not in out.split()


def test_demo_peer_with_a_missing_optional_dependency(capsys, monkeypatch):
    """gymnasium's MuJoCo envs need imageio: without it the gymnasium row is skipped and says so, no crash."""
    import parallel_pool.bench.peers as peers

    def make_env(peer):
        raise ModuleNotFoundError("No module named 'imageio'", name="imageio")

    monkeypatch.setattr(peers, "make_env", make_env)
    out = _run(capsys, "demo", "--task", "CartPole-v1", "--num-envs", "2", "--seconds", "0.05")
    rows = {m["name"]: m for m in map(ROW.match, out.splitlines()) if m}
    assert rows["gymnasium SyncVectorEnv"]["rate"] == "-"
    assert "skipped: gymnasium's CartPole-v1 needs imageio" in rows["gymnasium SyncVectorEnv"]["note"]


def test_info_of_gymnasium_ids_run_as_python_envs(capsys):
    """An id only gymnasium registers (Taxi-v4), one a package registers ('minigrid:Id'), a C++ id with
    --backend python: gymnasium's entry point, the spaces, the pool's keys and the env's registered kwargs."""
    out = _run(capsys, "info", "Taxi-v4")
    assert out.startswith("Taxi-v4: a Python env (backend python") and "toy_text.taxi:TaxiEnv" in out
    assert "observation space (one env): Discrete(500)" in out
    assert re.search(r"^    max_episode_steps += 200$", out, re.M), out
    out = _run(capsys, "info", "CartPole-v1", "--backend", "python")
    assert out.startswith("CartPole-v1: a Python env") and "cartpole:CartPoleEnv" in out
    if _has("minigrid"):
        out = _run(capsys, "info", "minigrid:MiniGrid-MultiRoom-N4-S5-v1")
        assert "entry point minigrid.envs:MultiRoomEnv" in out and "    maxNumRooms = 4" in out


def test_an_id_no_registry_has_says_what_runs_it():
    """Another version than gymnasium registers: the registered one named (gymnasium's own version lookup); an id
    no registry has: 'package:Id' and env_fn=."""
    with pytest.raises(
        SystemExit, match=r"unknown gymnasium id 'Taxi-v3'; gymnasium registers Taxi at version v4: use 'Taxi-v4'"
    ):
        main(["info", "Taxi-v3", "--backend", "python"])
    with pytest.raises(ValueError, match="use 'Taxi-v4'"):
        parallel_pool.make("Taxi-v3", backend="python")
    with pytest.raises(SystemExit, match=r"unknown task id 'MyEnv-v0'.*'package:Id'.*env_fn=<a callable"):
        main(["info", "MyEnv-v0"])
    with pytest.raises(SystemExit, match=r"demo: unknown gymnasium id 'CartPol-v1'; did you mean 'CartPole-v1'"):
        main(["demo", "--task", "CartPol-v1", "--backend", "python", "--seconds", "0.05"])


def test_demo_of_a_gymnasium_id(capsys):
    """demo of an id only gymnasium registers: our pool runs gymnasium's env in worker processes, beside
    SyncVectorEnv of the same id."""
    out = _run(capsys, "demo", "--task", "Taxi-v4", "--num-envs", "2", "--seconds", "0.05")
    rows = {m["name"]: m for m in map(ROW.match, out.splitlines()) if m}
    ours = rows["parallel_pool (sync)"]
    assert int(ours["rate"].replace(",", "")) > 0 and "worker processes" in ours["note"]
    assert rows["gymnasium SyncVectorEnv"]["note"] == "Taxi-v4" and rows["gymnasium SyncVectorEnv"]["rate"] != "-"
