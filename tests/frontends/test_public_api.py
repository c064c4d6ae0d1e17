"""The public modules' names: `__all__` lists exactly the documented API, `dir(parallel_pool)` shows nothing else,
and no module exports typing's helpers (Any, Callable, ...) beside its own names."""

from __future__ import annotations
import __future__

import importlib
import types

import pytest

import parallel_pool

PUBLIC = {
    "parallel_pool": {
        "__version__",
        "make",
        "make_gymnasium",
        "make_gym",
        "make_dm",
        "make_pettingzoo",
        "make_spec",
        "list_all_envs",
        "EnvSpec",
        "EnvError",
        "AutoresetMode",
        "ThreadPool",
        "Pool",
    },
    "parallel_pool.envpool": {
        "DMEnvPool",
        "EnvPool",
        "EnvSpec",
        "GymnasiumEnvPool",
        "list_all_envs",
        "make",
        "make_dm",
        "make_gym",
        "make_gymnasium",
        "make_spec",
    },
    "parallel_pool.distributed": {"make", "RayEngine"},
    "parallel_pool.multi_agent": {
        "VIEWS",
        "AgentGrid",
        "PettingZooPool",
        "ParallelEnvView",
        "AgentRowsEnv",
        "agent_grid",
    },
    "parallel_pool.gymnasium_registry": {"NAMESPACE", "SingleEnv", "gymnasium_id", "register_envs"},
    "parallel_pool.signing": {"KEY_FILE_ENV", "key_file", "snapshot_key", "sign", "verified"},
    "parallel_pool.integrations": set(),
    "parallel_pool.integrations.sb3": {"AgentRowsVecEnv", "ParallelPoolVecEnv", "make_vec_env"},
    "parallel_pool.integrations.tianshou": {"ParallelPoolVectorEnv"},
    "parallel_pool.integrations.acme": {"BatchedEnvironment", "BatchedEnvironmentLoop"},
    "parallel_pool.integrations.rl_games": {"ParallelPoolRLGamesEnv", "register", "VECENV_TYPE", "ENV_NAME"},
    "parallel_pool.integrations.cleanrl": {"EpisodeStatistics"},
    "parallel_pool.integrations.torchrl": {"ParallelPoolEnv"},
}
# the framework each adapter needs (the test of an adapter whose framework is missing is skipped)
FRAMEWORK = {
    "torchrl": "torchrl",
    "sb3": "stable_baselines3",
    "tianshou": "tianshou",
    "acme": "acme",
    "rl_games": "rl_games",
}

TYPING_NAMES = {"annotations", "Any", "Callable", "Literal", "Optional", "Union", "overload", "TYPE_CHECKING"}


def _typing_helper(name: str, value: object) -> bool:
    """A name that typing, collections.abc or a __future__ import put into a module's namespace."""
    return (
        name in TYPING_NAMES
        or isinstance(value, __future__._Feature)
        or getattr(value, "__module__", None) in ("typing", "typing_extensions", "collections.abc")
    )


def _load(name: str) -> types.ModuleType:
    framework = FRAMEWORK.get(name.rsplit(".", 1)[-1])
    if name.startswith("parallel_pool.integrations.") and framework is not None:
        pytest.importorskip(framework)
    return importlib.import_module(name)


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_all_lists_the_public_names(name):
    module = _load(name)
    assert set(module.__all__) == PUBLIC[name]
    assert len(module.__all__) == len(set(module.__all__)), "a name listed twice"
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names what the module lacks: {missing}"


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_no_typing_names_leak(name):
    module = _load(name)
    leaked = sorted(n for n, v in vars(module).items() if _typing_helper(n, v) and n not in module.__all__)
    assert not leaked, f"{name} exports typing helpers: {leaked}"


def test_dir_of_the_package_is_its_api():
    # submodules are attributes of any package once imported; every other name dir() shows is the API
    shown = {
        n
        for n in dir(parallel_pool)
        if not n.startswith("_") and not isinstance(getattr(parallel_pool, n), types.ModuleType)
    }
    assert shown == PUBLIC["parallel_pool"] - {"__version__"}


def test_star_import_gives_the_api():
    namespace: dict[str, object] = {}
    exec("from parallel_pool import *", namespace)
    assert set(namespace) - {"__builtins__"} == PUBLIC["parallel_pool"]
    assert namespace["make"] is parallel_pool.make
