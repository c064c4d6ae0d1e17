# Box2D family: Box2D 2.3's C++ source, compiled from the box2d-py source distribution into a static library.
#
# gymnasium 1.4 runs its Box2D envs on pybox2d (the `box2d` 2.3.10 wheel; `box2d-py` 2.3.8 on Python >= 3.14).
# The box2d-py 2.3.8 sdist carries the same Box2D C++ files as pybox2d's releases (docs/box2d.md), so the same
# float32 physics runs here, bit for bit. At configure time the sdist is fetched with pip (cmake/sdist.cmake) into
# ${CMAKE_BINARY_DIR}/_deps/box2d and extracted there; nothing of Box2D lives in this repository. Offline builds:
# -DPP_BOX2D_SDIST=/path/to/box2d-py-2.3.8.tar.gz (or an extracted source folder).
#
# One change is made to the extracted copy: pybox2d's b2Settings.h turns a failed b2Assert into a Python exception
# (it includes Python.h and calls PyErr_SetString); here it throws a C++ exception instead, which the engine
# reports as parallel_pool.EnvError. The physics is untouched.

set(PP_BOX2D_VERSION "2.3.8" CACHE STRING "box2d-py source distribution version the Box2D family is built against")
set(PP_BOX2D_SDIST "" CACHE PATH "local box2d-py sdist (.tar.gz) or extracted source folder (skips the download)")
set(PP_BOX2D_ROOT "${CMAKE_BINARY_DIR}/_deps/box2d")
set(PP_BOX2D_SRC "${PP_BOX2D_ROOT}/box2d-py-${PP_BOX2D_VERSION}")
set(_pp_box2d_settings "${PP_BOX2D_SRC}/Box2D/Common/b2Settings.h")

if(PP_BOX2D_SDIST AND NOT EXISTS "${PP_BOX2D_SDIST}")
  string(CONCAT PP_FAMILY_SKIP_REASON "PP_BOX2D_SDIST=${PP_BOX2D_SDIST} does not exist: pass a box2d-py-"
                            "${PP_BOX2D_VERSION} sdist (.tar.gz) or its extracted folder, or leave PP_BOX2D_SDIST "
                            "empty to download it with pip; then reinstall parallel-pool (or re-run ./dev_build.sh)")
  return()
endif()

if(NOT EXISTS "${PP_BOX2D_SRC}/.pp_patched")
  file(REMOVE_RECURSE "${PP_BOX2D_SRC}")
  file(MAKE_DIRECTORY "${PP_BOX2D_ROOT}")
  set(_pp_box2d_archive "")
  if(PP_BOX2D_SDIST AND IS_DIRECTORY "${PP_BOX2D_SDIST}")
    file(COPY "${PP_BOX2D_SDIST}/" DESTINATION "${PP_BOX2D_SRC}")
  else()
    pp_sdist_archive(box2d-py "${PP_BOX2D_VERSION}" box2d-py "${PP_BOX2D_ROOT}" "${PP_BOX2D_SDIST}" _pp_box2d_archive)
    if(NOT _pp_box2d_archive)
      return()
    endif()
    message(STATUS "box2d: extracting ${_pp_box2d_archive}")
    file(ARCHIVE_EXTRACT INPUT "${_pp_box2d_archive}" DESTINATION "${PP_BOX2D_ROOT}")
  endif()
  if(NOT EXISTS "${_pp_box2d_settings}")
    string(CONCAT PP_FAMILY_SKIP_REASON "${PP_BOX2D_SRC} does not hold the Box2D sources (is it the box2d-py "
                              "${PP_BOX2D_VERSION} sdist?); then reinstall parallel-pool (or re-run ./dev_build.sh)")
    return()
  endif()
  file(READ "${_pp_box2d_settings}" _pp_settings)
  set(_pp_py_assert [=[#include <Python.h>
class b2AssertException {};
#define b2Assert(A) if (!(A)) { PyErr_SetString(PyExc_AssertionError, #A); throw b2AssertException(); }]=])
  string(FIND "${_pp_settings}" "${_pp_py_assert}" _pp_at)
  if(_pp_at EQUAL -1)
    set(PP_FAMILY_SKIP_REASON "${_pp_box2d_settings} is not pybox2d's (its Python b2Assert was not found)")
    return()
  endif()
  # b2Assert's Python exception -> a C++ exception (see the top of this file)
  string(REPLACE "${_pp_py_assert}" [=[#include <stdexcept>
#define b2Assert(A) if (!(A)) { throw std::runtime_error("Box2D assertion failed: " #A); }]=]
         _pp_settings "${_pp_settings}")
  file(WRITE "${_pp_box2d_settings}" "${_pp_settings}")
  file(TOUCH "${PP_BOX2D_SRC}/.pp_patched")
endif()

file(GLOB_RECURSE _pp_box2d_lib_sources "${PP_BOX2D_SRC}/Box2D/*.cpp")
add_library(pp_box2d STATIC ${_pp_box2d_lib_sources})
target_include_directories(pp_box2d PUBLIC "${PP_BOX2D_SRC}")
set_target_properties(pp_box2d PROPERTIES POSITION_INDEPENDENT_CODE ON CXX_VISIBILITY_PRESET hidden)
# no fused multiply-add: pybox2d's wheel is built for baseline x86-64 (no FMA), so every float op rounds alone
target_compile_options(pp_box2d PRIVATE -ffp-contract=off -w)

file(GLOB _pp_box2d_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cc)
list(APPEND PP_ENV_SOURCES ${_pp_box2d_sources})
list(APPEND PP_ENV_LIBS pp_box2d)
