# Atari family: the ALE C++ library, compiled from the ale-py source distribution and linked statically.
#
# At configure time the sdist is fetched with pip (cmake/sdist.cmake) into ${CMAKE_BINARY_DIR}/_deps/ale and
# extracted there; at build time ALE's own CMake project builds a static
# libale.a (no Python bindings, no SDL, no vcpkg). Both steps are cached in the build dir, so incremental builds do
# neither again. Nothing from ALE lives in this repository; the ROMs are read at run time from the installed ale-py
# wheel. Offline builds: pass -DPP_ALE_SDIST=/path/to/ale_py-<version>.tar.gz (or an extracted source folder).
#
# Needs zlib headers (Debian: zlib1g-dev).
# Without zlib headers or the sdist, the family is left out (PP_FAMILY_SKIP_REASON, see CMakeLists.txt).

set(_pp_ale_rebuild "then reinstall parallel-pool (or re-run ./dev_build.sh)")

find_package(ZLIB)
if(NOT ZLIB_FOUND)
  string(CONCAT PP_FAMILY_SKIP_REASON "the ALE emulator needs the zlib headers, which were not found at build time: install "
                            "them (Debian/Ubuntu: apt-get install zlib1g-dev), ${_pp_ale_rebuild}")
  return()
endif()

pp_family_sdist(ale PP_ALE ale-py 0.12.1 ale_py CHECK src/ale/ale_interface.hpp)
if(PP_FAMILY_SKIP_REASON)
  return()
endif()

# ALE's CMake turns on IPO (LTO) for Release builds. LTO objects in a static archive would force LTO onto our
# extension's link (minutes per relink), so build RelWithDebInfo with Release's flags instead: same -O3 code,
# plain objects.
# keyed by the compiler and its version, so objects from another compiler are never reused
set(PP_ALE_BUILD "${PP_ALE_ROOT}/build-${CMAKE_CXX_COMPILER_ID}-${CMAKE_CXX_COMPILER_VERSION}")
set(PP_ALE_LIB "${PP_ALE_BUILD}/src/ale/${CMAKE_STATIC_LIBRARY_PREFIX}ale${CMAKE_STATIC_LIBRARY_SUFFIX}")
set(_pp_ale_args
  -DCMAKE_BUILD_TYPE=RelWithDebInfo
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O3 -DNDEBUG"
  -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON
  -DBUILD_PYTHON_LIB=OFF -DBUILD_CPP_LIB=ON -DSDL_SUPPORT=OFF -DBUILD_SHARED_LIBS=OFF
  -DBUILD_VECTOR_LIB=OFF -DBUILD_VECTOR_XLA_LIB=OFF)
if(CMAKE_CXX_COMPILER_LAUNCHER)
  list(APPEND _pp_ale_args -DCMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER})
endif()
include(ExternalProject)
ExternalProject_Add(pp_ale_build
  SOURCE_DIR "${PP_ALE_SRC}"
  BINARY_DIR "${PP_ALE_BUILD}"
  CMAKE_ARGS ${_pp_ale_args}
  BUILD_COMMAND ${CMAKE_COMMAND} --build <BINARY_DIR> --target ale-lib
  INSTALL_COMMAND ""
  BUILD_BYPRODUCTS "${PP_ALE_LIB}"
  LOG_CONFIGURE ON LOG_BUILD ON LOG_OUTPUT_ON_FAILURE ON)

add_library(pp_ale STATIC IMPORTED GLOBAL)
set_target_properties(pp_ale PROPERTIES IMPORTED_LOCATION "${PP_ALE_LIB}")
add_dependencies(pp_ale pp_ale_build)

file(GLOB _pp_atari_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cc)
# (the area resize reproduces OpenCV's float arithmetic: -ffp-contract=off is set for the whole extension target)
list(APPEND PP_ENV_SOURCES ${_pp_atari_sources})
list(APPEND PP_ENV_LIBS pp_ale ZLIB::ZLIB Threads::Threads)
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  # keep ALE's symbols private to our extension (ale-py's own extension carries another copy of ALE)
  list(APPEND PP_ENV_LIBS "-Wl,--exclude-libs,${CMAKE_STATIC_LIBRARY_PREFIX}ale${CMAKE_STATIC_LIBRARY_SUFFIX}")
endif()
list(APPEND PP_ENV_INCLUDES "${PP_ALE_SRC}/src" "${PP_ALE_BUILD}/src/ale")
