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

pp_family_sdist(box2d PP_BOX2D box2d-py 2.3.8 box2d-py CHECK Box2D/Common/b2Settings.h MARKER .pp_patched)
if(PP_FAMILY_SKIP_REASON)
  return()
endif()

set(_pp_box2d_settings "${PP_BOX2D_SRC}/Box2D/Common/b2Settings.h")
if(NOT EXISTS "${PP_BOX2D_SRC}/.pp_patched")  # a fresh copy (pp_family_sdist): patch it once
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
