# ViZDoom family: ViZDoom's C++ API (DoomGame, which starts the engine binary and drives it through shared memory
# and message queues), compiled from the vizdoom source distribution into our extension.
#
# At configure time the sdist is fetched with pip (cmake/sdist.cmake) into ${CMAKE_BINARY_DIR}/_deps/vizdoom and
# extracted there, as the Atari family does with ale-py. Only the C++ API
# (src/lib/*.cpp, about 4000 lines) is compiled; the engine binary, vizdoom.pk3, the freedoom WADs and the scenarios
# are read at run time from the installed vizdoom wheel (the same version). Offline builds: pass
# -DPP_VIZDOOM_SDIST=/path/to/vizdoom-<version>.tar.gz (or an extracted source folder).
#
# One change is made to the extracted sources (checked, so a different sdist fails loudly instead of silently):
# the engine process is started with PR_SET_PDEATHSIG=SIGKILL, so it dies with the process that started it even
# when that process is SIGKILLed (ViZDoom's engine has no parent watch of its own).
#
# Needs the Boost headers and the filesystem, thread, system and chrono libraries (Debian: apt-get install
# libboost-filesystem-dev libboost-thread-dev libboost-system-dev libboost-chrono-dev). Without them, or without
# the sdist, the family is left out (PP_FAMILY_SKIP_REASON, see CMakeLists.txt).

set(PP_VIZDOOM_VERSION "1.3.2" CACHE STRING "vizdoom source distribution version the ViZDoom family is built against")
set(PP_VIZDOOM_SDIST "" CACHE PATH "local vizdoom sdist (.tar.gz) or extracted source folder (skips the download)")
set(PP_VIZDOOM_ROOT "${CMAKE_BINARY_DIR}/_deps/vizdoom")
set(PP_VIZDOOM_SRC "${PP_VIZDOOM_ROOT}/vizdoom-${PP_VIZDOOM_VERSION}")
set(_pp_vzd_rebuild "then reinstall parallel-pool (or re-run ./dev_build.sh)")
set(_pp_vzd_boost_pkgs "libboost-filesystem-dev libboost-thread-dev libboost-system-dev libboost-chrono-dev")

if(NOT CMAKE_SYSTEM_NAME STREQUAL "Linux")
  set(PP_FAMILY_SKIP_REASON "the ViZDoom family is built on Linux only")
  return()
endif()

# Shared Boost: Debian's static Boost archives are not position-independent, so they cannot go into an extension
# module. The extension then needs the Boost runtime libraries (Debian: pulled in by the -dev packages).
set(Boost_USE_STATIC_LIBS OFF)
find_package(Boost 1.66 QUIET COMPONENTS filesystem thread system chrono)
if(NOT Boost_FOUND)
  string(CONCAT PP_FAMILY_SKIP_REASON "ViZDoom's C++ API needs Boost (filesystem, thread, system, chrono), which was "
                            "not found at build time: install it (Debian/Ubuntu: apt-get install "
                            "${_pp_vzd_boost_pkgs}), ${_pp_vzd_rebuild}")
  return()
endif()

if(PP_VIZDOOM_SDIST AND NOT EXISTS "${PP_VIZDOOM_SDIST}")
  string(CONCAT PP_FAMILY_SKIP_REASON "PP_VIZDOOM_SDIST=${PP_VIZDOOM_SDIST} does not exist: pass a vizdoom-"
                            "${PP_VIZDOOM_VERSION} sdist (.tar.gz) or its extracted folder, or leave it empty to "
                            "download it with pip; ${_pp_vzd_rebuild}")
  return()
endif()

if(NOT EXISTS "${PP_VIZDOOM_SRC}/src/vizdoom/src/viz_doom_classes.h")
  file(MAKE_DIRECTORY "${PP_VIZDOOM_ROOT}")
  set(_pp_vzd_archive "")
  if(PP_VIZDOOM_SDIST AND IS_DIRECTORY "${PP_VIZDOOM_SDIST}")
    file(COPY "${PP_VIZDOOM_SDIST}/include" DESTINATION "${PP_VIZDOOM_SRC}")
    file(COPY "${PP_VIZDOOM_SDIST}/src/lib" DESTINATION "${PP_VIZDOOM_SRC}/src")
    file(COPY "${PP_VIZDOOM_SDIST}/src/vizdoom/src/viz_doom_classes.h" DESTINATION "${PP_VIZDOOM_SRC}/src/vizdoom/src")
  else()
    pp_sdist_archive(vizdoom "${PP_VIZDOOM_VERSION}" vizdoom "${PP_VIZDOOM_ROOT}" "${PP_VIZDOOM_SDIST}" _pp_vzd_archive)
    if(NOT _pp_vzd_archive)
      return()
    endif()
  endif()
  if(_pp_vzd_archive)
    message(STATUS "vizdoom: extracting the C++ API from ${_pp_vzd_archive}")
    file(ARCHIVE_EXTRACT INPUT "${_pp_vzd_archive}" DESTINATION "${PP_VIZDOOM_ROOT}"
         PATTERNS "vizdoom-${PP_VIZDOOM_VERSION}/include" "vizdoom-${PP_VIZDOOM_VERSION}/src/lib"
                  "vizdoom-${PP_VIZDOOM_VERSION}/src/vizdoom/src/viz_doom_classes.h")
  endif()
  if(NOT EXISTS "${PP_VIZDOOM_SRC}/src/lib/ViZDoomController.cpp")
    string(CONCAT PP_FAMILY_SKIP_REASON "${PP_VIZDOOM_SRC} does not hold ViZDoom's C++ API sources (is it the "
                              "vizdoom ${PP_VIZDOOM_VERSION} sdist?); ${_pp_vzd_rebuild}")
    return()
  endif()
endif()

# The patched controller and the version header are generated next to the sources (configure_file keeps an unchanged
# file's timestamp, so incremental builds recompile nothing).
set(PP_VIZDOOM_GEN "${PP_VIZDOOM_ROOT}/gen-${PP_VIZDOOM_VERSION}")
file(READ "${PP_VIZDOOM_SRC}/src/lib/ViZDoomController.cpp" _pp_vzd_controller)
# Applies one patch to the controller's text, or leaves the family out naming the patch where the text differs.
macro(pp_vzd_patch from to what)
  string(FIND "${_pp_vzd_controller}" "${from}" _pp_vzd_at)
  if(_pp_vzd_at EQUAL -1)
    string(CONCAT PP_FAMILY_SKIP_REASON "ViZDoomController.cpp of ${PP_VIZDOOM_SRC} differs from vizdoom "
                              "${PP_VIZDOOM_VERSION}'s (the ${what} patch does not apply); ${_pp_vzd_rebuild}")
    return()
  endif()
  string(REPLACE "${from}" "${to}" _pp_vzd_controller "${_pp_vzd_controller}")
endmacro()
# In the forked child, before exec: die with the parent; if the parent is already gone, exit at once.
pp_vzd_patch("bpr::execute(bpri::set_args(this->doomArgs), bpri::inherit_env())"
  "bpr::execute(bpri::set_args(this->doomArgs), bpri::inherit_env(), bpri::on_exec_setup([ppid = getpid()](auto&) { prctl(PR_SET_PDEATHSIG, SIGKILL); if (getppid() != ppid) _exit(1); }))"
  "PR_SET_PDEATHSIG")
# An engine that exits while starting (e.g. a map without a single-player start) makes close() read the game state
# before the shared memory is mapped (a null pointer: the process crashes instead of raising): check it first.
pp_vzd_patch("if (this->gameState->DEMO_RECORDING){" "if (this->gameState && this->gameState->DEMO_RECORDING){"
  "null game-state")
string(PREPEND _pp_vzd_controller "// Generated by parallel_pool's core/envs/vizdoom/family.cmake from vizdoom ${PP_VIZDOOM_VERSION}'s "
  "src/lib/ViZDoomController.cpp: the engine gets PR_SET_PDEATHSIG; close() checks the game state.\n#include <signal.h>\n#include <sys/prctl.h>\n"
  "#include <unistd.h>\n")
file(WRITE "${PP_VIZDOOM_GEN}/ViZDoomController.cpp.in" "${_pp_vzd_controller}")
configure_file("${PP_VIZDOOM_GEN}/ViZDoomController.cpp.in" "${PP_VIZDOOM_GEN}/ViZDoomController.cpp" COPYONLY)
string(REPLACE "." ";" _pp_vzd_parts "${PP_VIZDOOM_VERSION}")
list(JOIN _pp_vzd_parts "" ViZDoom_VERSION_ID)  # ViZDoom's own rule: major, minor, patch digits joined
set(ViZDoom_VERSION_STR "${PP_VIZDOOM_VERSION}")
configure_file("${PP_VIZDOOM_SRC}/src/lib/ViZDoomVersion.h.in" "${PP_VIZDOOM_GEN}/ViZDoomVersion.h" @ONLY)

file(GLOB _pp_vzd_lib_sources "${PP_VIZDOOM_SRC}/src/lib/*.cpp")
list(REMOVE_ITEM _pp_vzd_lib_sources "${PP_VIZDOOM_SRC}/src/lib/ViZDoomController.cpp")
list(APPEND _pp_vzd_lib_sources "${PP_VIZDOOM_GEN}/ViZDoomController.cpp")
# ViZDoom's code is not ours to lint: its warnings are silenced, as ViZDoom's own CMake partly does.
set_source_files_properties(${_pp_vzd_lib_sources} PROPERTIES COMPILE_OPTIONS "-w")
# The env's area resize (core/envs/common/frame_resize.h, shared with Atari) reproduces OpenCV's float arithmetic
# step by step: no fused multiply-add contraction.
set_source_files_properties("${CMAKE_CURRENT_LIST_DIR}/vizdoom_env.cc" PROPERTIES COMPILE_OPTIONS
                            "-ffp-contract=off;-Wall;-Wextra;-Wno-unused-parameter")

# A static library with the C++ API and the env (source properties apply to targets of the directory that sets
# them, so the per-file flags above need the target defined here); register.cc, compiled into the extension, pulls
# the env in. Hidden visibility: vizdoom's own Python module carries another copy of the API.
add_library(pp_vizdoom STATIC ${_pp_vzd_lib_sources} "${CMAKE_CURRENT_LIST_DIR}/vizdoom_env.cc")
set_target_properties(pp_vizdoom PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
                      POSITION_INDEPENDENT_CODE ON)
# the generated folder first: its ViZDoomVersion.h is the one the sources include; src/vizdoom/src holds a header
# the API includes by a relative path
target_include_directories(pp_vizdoom PUBLIC "${PP_VIZDOOM_GEN}" "${PP_VIZDOOM_SRC}/include" "${PP_VIZDOOM_SRC}/src/lib"
                           "${PROJECT_SOURCE_DIR}")
target_link_libraries(pp_vizdoom PUBLIC Boost::filesystem Boost::thread Boost::system Boost::chrono Threads::Threads
                      rt)
target_compile_options(pp_vizdoom PRIVATE -O3)

list(APPEND PP_ENV_SOURCES "${CMAKE_CURRENT_LIST_DIR}/register.cc")
list(APPEND PP_ENV_LIBS pp_vizdoom)
