# The MuJoCo C library for the MuJoCo families (mujoco_gym, mujoco_dmc), included by their family.cmake. Builds
# against the `mujoco` Python wheel (pinned in pyproject.toml's build-system requires and project dependencies): its
# headers (mujoco/include) and libmujoco.so.<version>, copied to a stable path in the build dir (pp_stable_copy, see
# CMakeLists.txt). At run time the extension finds libmujoco through its rpath: $ORIGIN/../mujoco (both packages
# installed in the same site-packages), plus the absolute wheel directory in development builds (PP_DEV_INPLACE).
# Sets PP_MUJOCO_SKIP_REASON (what is missing, how to get it) when the wheel is not there; otherwise adds the
# headers and library to PP_ENV_INCLUDES / PP_ENV_LIBS and the rpath, once however many families include it.
include_guard(GLOBAL)
set(PP_MUJOCO_VERSION "3.17.0")
set(PP_MUJOCO_SKIP_REASON "")

pp_python_package_dir(mujoco PP_MUJOCO_DIR)
pp_python_package_version(mujoco _pp_mj_found_version)
set(_pp_mj_lib_name "libmujoco.so.${PP_MUJOCO_VERSION}")
if(NOT _pp_mj_found_version STREQUAL PP_MUJOCO_VERSION OR NOT EXISTS "${PP_MUJOCO_DIR}/include/mujoco/mujoco.h"
   OR NOT EXISTS "${PP_MUJOCO_DIR}/${_pp_mj_lib_name}")
  string(CONCAT PP_MUJOCO_SKIP_REASON
    "needs the `mujoco==${PP_MUJOCO_VERSION}` Python package at build time (its headers and ${_pp_mj_lib_name}), "
    "which ${Python_EXECUTABLE} does not have (found version '${_pp_mj_found_version}'): pip install "
    "mujoco==${PP_MUJOCO_VERSION} (`pip install .` does this through pyproject.toml's build requirements), then "
    "reinstall parallel-pool (or re-run ./dev_build.sh)")
  return()
endif()
message(STATUS "parallel_pool: MuJoCo ${PP_MUJOCO_VERSION} from ${PP_MUJOCO_DIR}")

file(GLOB_RECURSE _pp_mj_files RELATIVE "${PP_MUJOCO_DIR}" "${PP_MUJOCO_DIR}/include/*")
list(APPEND _pp_mj_files "${_pp_mj_lib_name}")
pp_stable_copy("mujoco-${PP_MUJOCO_VERSION}" "${PP_MUJOCO_DIR}" "${_pp_mj_files}" _pp_mj_copy)

list(APPEND PP_ENV_INCLUDES "${_pp_mj_copy}/include")
list(APPEND PP_ENV_LIBS "${_pp_mj_copy}/${_pp_mj_lib_name}")
# CMAKE_{INSTALL,BUILD}_RPATH initialise the rpath of targets created later, i.e. the extension module.
list(APPEND CMAKE_INSTALL_RPATH "$ORIGIN/../mujoco")
list(APPEND CMAKE_BUILD_RPATH "$ORIGIN/../mujoco")
if(PP_DEV_INPLACE)
  list(APPEND CMAKE_BUILD_RPATH "${PP_MUJOCO_DIR}")
endif()
