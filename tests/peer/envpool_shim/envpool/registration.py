"""Test shim: EnvPool's import paths mapped onto parallel_pool, to run EnvPool's own unit tests against our pool."""

from parallel_pool import list_all_envs, make, make_dm, make_gym, make_gymnasium, make_spec  # noqa: F401
