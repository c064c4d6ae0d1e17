# DeepMind Control Suite family: the MuJoCo C library from the `mujoco` wheel (cmake/mujoco.cmake, shared with
# mujoco_gym); the models come from the installed dm_control package at make time (parallel_pool/dmc_models.py).
# Without the wheel the family is left out (PP_FAMILY_SKIP_REASON).
include(${CMAKE_SOURCE_DIR}/cmake/mujoco.cmake)
if(PP_MUJOCO_SKIP_REASON)
  set(PP_FAMILY_SKIP_REASON "${PP_MUJOCO_SKIP_REASON}")
  return()
endif()

file(GLOB _pp_dmc_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cc)
list(APPEND PP_ENV_SOURCES ${_pp_dmc_sources})
