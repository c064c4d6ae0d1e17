# MuJoCo (gymnasium suite) family: the MuJoCo C library from the `mujoco` wheel (cmake/mujoco.cmake); the XML
# assets come from the gymnasium package at run time. Without the wheel the family is left out
# (PP_FAMILY_SKIP_REASON).
include(${CMAKE_SOURCE_DIR}/cmake/mujoco.cmake)
if(PP_MUJOCO_SKIP_REASON)
  set(PP_FAMILY_SKIP_REASON "${PP_MUJOCO_SKIP_REASON}")
  return()
endif()

file(GLOB _pp_mj_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cc)
list(APPEND PP_ENV_SOURCES ${_pp_mj_sources})
