# MuJoCo (gymnasium suite) family. Builds against the `mujoco` Python wheel (pinned in pyproject.toml's
# build-system requires and project dependencies): its headers (mujoco/include) and libmujoco.so.<version>.
# At run time the extension finds libmujoco through its rpath: $ORIGIN/../mujoco (both packages installed in
# the same site-packages), plus the absolute wheel directory in development builds (PP_DEV_INPLACE).
set(PP_MUJOCO_VERSION "3.17.0")

execute_process(
  COMMAND "${Python_EXECUTABLE}" -c
          "import importlib.util as u; s = u.find_spec('mujoco'); print(list(s.submodule_search_locations)[0] if s else '')"
  OUTPUT_VARIABLE PP_MUJOCO_DIR OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _pp_mj_rc)
set(_pp_mj_lib "${PP_MUJOCO_DIR}/libmujoco.so.${PP_MUJOCO_VERSION}")
if(NOT _pp_mj_rc EQUAL 0 OR PP_MUJOCO_DIR STREQUAL "" OR NOT EXISTS "${PP_MUJOCO_DIR}/include/mujoco/mujoco.h"
   OR NOT EXISTS "${_pp_mj_lib}")
  message(FATAL_ERROR
    "parallel_pool: the mujoco_gym env family needs the `mujoco==${PP_MUJOCO_VERSION}` Python package "
    "(it ships the MuJoCo headers and libmujoco.so.${PP_MUJOCO_VERSION}), but ${Python_EXECUTABLE} "
    "did not find it (looked in '${PP_MUJOCO_DIR}'). Install it with `pip install mujoco==${PP_MUJOCO_VERSION}` "
    "(pip install . does this through pyproject.toml's build requirements), or leave the family out with "
    "-DPP_SKIP_FAMILIES=mujoco_gym.")
endif()
message(STATUS "parallel_pool: mujoco_gym uses MuJoCo ${PP_MUJOCO_VERSION} from ${PP_MUJOCO_DIR}")

file(GLOB _pp_mj_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cc)
list(APPEND PP_ENV_SOURCES ${_pp_mj_sources})
list(APPEND PP_ENV_INCLUDES "${PP_MUJOCO_DIR}/include")
list(APPEND PP_ENV_LIBS "${_pp_mj_lib}")
# CMAKE_{INSTALL,BUILD}_RPATH initialise the rpath of targets created later, i.e. the extension module.
list(APPEND CMAKE_INSTALL_RPATH "$ORIGIN/../mujoco")
list(APPEND CMAKE_BUILD_RPATH "$ORIGIN/../mujoco")
if(PP_DEV_INPLACE)
  list(APPEND CMAKE_BUILD_RPATH "${PP_MUJOCO_DIR}")
endif()
