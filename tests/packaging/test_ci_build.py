"""What CI must have built: every env family and env.xla(). A family left out for a missing prerequisite (zlib
headers, Boost, the mujoco wheel, jaxlib) must fail CI, not skip its tests (.ci/run also configures with
PP_REQUIRE_ALL_FAMILIES=ON)."""

from __future__ import annotations

import os

import pytest

import parallel_pool
from parallel_pool import _core, families

EVERY_FAMILY = {
    "classic_control",
    "toy_text",
    "mujoco_gym",
    "mujoco_dmc",
    "atari",
    "vizdoom",
    "mpe",
    "testing",
    "examples",
}

in_ci = pytest.mark.skipif(not os.environ.get("CI"), reason="checks the CI build (the CI environment variable)")


@in_ci
def test_ci_build_has_every_env_family():
    built = families.families()
    assert set(built) >= EVERY_FAMILY, f"families this build does not know: {EVERY_FAMILY - set(built)}"
    left_out = {name: why for name, (why, _) in built.items() if why is not None}
    assert not left_out, f"families left out of the CI build: {left_out}"


@in_ci
def test_ci_build_has_xla():
    from parallel_pool import _build_info

    assert _build_info.XLA_SKIP_REASON is None and _core.has_xla


def test_listed_ids_are_exactly_the_built_families_ids():
    # list_all_envs() lists what can be made: ids of a family this build left out are not listed (`parallel-pool
    # list` names such families on stderr with the reason)
    fams = families.families()
    if not fams:
        pytest.skip("this extension build has no _build_info.py")
    listed = set(parallel_pool.list_all_envs(include_unlisted=True))
    built_ids = {i for why, ids in fams.values() if why is None for i in ids}
    left_out_ids = {i for why, ids in fams.values() if why is not None for i in ids}
    assert listed == built_ids
    assert not listed & left_out_ids
