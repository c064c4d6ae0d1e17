# Fetching a Python package's source distribution for a family that compiles C++ from it (atari: ale-py's ALE,
# vizdoom: ViZDoom's C++ API, box2d: box2d-py's Box2D). Nothing of those sources lives in this repository. A family
# calls pp_family_sdist; pp_sdist_archive is its download step.

# pp_sdist_archive(<dist> <version> <stem> <root> <given> <out>)
# Sets <out> to the sdist archive to extract: <given> (a local .tar.gz the user passed), or <root>/<stem>-<version>
# .tar.gz, downloaded with pip (by package name, from whatever index pip is configured to use) unless already there.
# When the download fails, <out> is "" and PP_FAMILY_SKIP_REASON is set in the caller's scope (the family is left
# out, see CMakeLists.txt). pip must be importable by the build's Python (it is in [build-system].requires);
# --no-build-isolation: pip reads the sdist's metadata with the build environment's own backends (pyproject.toml's
# build requirements) instead of installing the package's build requirements (jax for ale-py, cmake from source
# for vizdoom) just for that.
function(pp_sdist_archive dist version stem root given out)
  if(given)
    set(${out} "${given}" PARENT_SCOPE)
    return()
  endif()
  set(archive "${root}/${stem}-${version}.tar.gz")
  if(NOT EXISTS "${archive}")
    file(MAKE_DIRECTORY "${root}")
    message(STATUS "${dist}: fetching the ${dist} ${version} source distribution with pip")
    execute_process(
      COMMAND "${Python_EXECUTABLE}" -m pip download --no-deps --no-binary ${dist} --no-build-isolation
              --disable-pip-version-check -d "${root}" "${dist}==${version}"
      RESULT_VARIABLE rc OUTPUT_VARIABLE pip_out ERROR_VARIABLE pip_err)
    if(NOT rc EQUAL 0 OR NOT EXISTS "${archive}")
      string(STRIP "${pip_err}" pip_err)
      string(CONCAT reason
        "could not fetch the ${dist} ${version} source distribution with pip (exit ${rc}: ${pip_err}). Fix the "
        "network/pip or pass the sdist with -DPP_*_SDIST=/path/to/${stem}-${version}.tar.gz (see the family's "
        "family.cmake), then reinstall parallel-pool (or re-run ./dev_build.sh)")
      set(PP_FAMILY_SKIP_REASON "${reason}" PARENT_SCOPE)
      set(${out} "" PARENT_SCOPE)
      return()
    endif()
  endif()
  set(${out} "${archive}" PARENT_SCOPE)
endfunction()

# pp_family_sdist(<name> <prefix> <dist> <version> <stem> CHECK <file>... [PARTS <path>...] [MARKER <file>])
# Puts the sources of the <dist> sdist (pip's name; its archive and top folder are named <stem>-<version>) into
# ${<prefix>_SRC} = ${<prefix>_ROOT}/<stem>-<version>, where ${<prefix>_ROOT} = ${CMAKE_BINARY_DIR}/_deps/<name>;
# both are set in the caller's scope. Cache variables: <prefix>_VERSION (default <version>) and <prefix>_SDIST (a
# local .tar.gz or an extracted source folder: no download). The folder is the build dir's cache: it is kept while it
# holds every CHECK file and the MARKER file (which the caller writes once it has changed the sources; without it the
# folder is removed and made again, so a change is never applied twice). Otherwise it is copied from <prefix>_SDIST,
# or the archive is fetched (pp_sdist_archive) and extracted; PARTS: only these paths of the sdist. When anything is
# missing, PP_FAMILY_SKIP_REASON is set in the caller's scope and the caller returns (the family is left out).
function(pp_family_sdist name prefix dist version stem)
  cmake_parse_arguments(PARSE_ARGV 5 arg "" "MARKER" "CHECK;PARTS")
  set(${prefix}_VERSION "${version}" CACHE STRING "${dist} source distribution version the family is built against")
  set(${prefix}_SDIST "" CACHE PATH "local ${dist} sdist (.tar.gz) or extracted source folder (skips the download)")
  set(version "${${prefix}_VERSION}")
  set(sdist "${${prefix}_SDIST}")
  set(root "${CMAKE_BINARY_DIR}/_deps/${name}")
  set(src "${root}/${stem}-${version}")
  set(${prefix}_ROOT "${root}" PARENT_SCOPE)
  set(${prefix}_SRC "${src}" PARENT_SCOPE)
  set(rebuild "then reinstall parallel-pool (or re-run ./dev_build.sh)")

  if(sdist AND NOT EXISTS "${sdist}")
    string(CONCAT reason "${prefix}_SDIST=${sdist} does not exist: pass the ${stem}-${version} sdist (.tar.gz) or its "
                         "extracted folder, or leave ${prefix}_SDIST empty to download it with pip; ${rebuild}")
    set(PP_FAMILY_SKIP_REASON "${reason}" PARENT_SCOPE)
    return()
  endif()
  set(complete TRUE)
  foreach(file IN LISTS arg_CHECK arg_MARKER)
    if(NOT EXISTS "${src}/${file}")
      set(complete FALSE)
    endif()
  endforeach()
  if(complete)
    return()
  endif()

  if(arg_MARKER)
    file(REMOVE_RECURSE "${src}")
  endif()
  file(MAKE_DIRECTORY "${root}")
  if(sdist AND IS_DIRECTORY "${sdist}")
    if(NOT arg_PARTS)
      file(COPY "${sdist}/" DESTINATION "${src}")
    endif()
    foreach(part IN LISTS arg_PARTS)
      get_filename_component(dest "${src}/${part}" DIRECTORY)
      file(COPY "${sdist}/${part}" DESTINATION "${dest}")
    endforeach()
  else()
    pp_sdist_archive(${dist} "${version}" ${stem} "${root}" "${sdist}" archive)
    if(NOT archive)
      set(PP_FAMILY_SKIP_REASON "${PP_FAMILY_SKIP_REASON}" PARENT_SCOPE)
      return()
    endif()
    # a pattern naming a folder extracts all of it; without PARTS, the sdist's whole top folder
    set(patterns "${stem}-${version}")
    if(arg_PARTS)
      list(TRANSFORM arg_PARTS PREPEND "${stem}-${version}/" OUTPUT_VARIABLE patterns)
    endif()
    message(STATUS "${name}: extracting ${archive}")
    file(ARCHIVE_EXTRACT INPUT "${archive}" DESTINATION "${root}" PATTERNS ${patterns})
  endif()
  foreach(file IN LISTS arg_CHECK)
    if(NOT EXISTS "${src}/${file}")
      set(PP_FAMILY_SKIP_REASON "${src} does not hold ${file} (is it the ${dist} ${version} sdist?); ${rebuild}"
          PARENT_SCOPE)
      return()
    endif()
  endforeach()
endfunction()
