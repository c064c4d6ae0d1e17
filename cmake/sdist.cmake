# Fetching a Python package's source distribution for a family that compiles C++ from it (atari: ale-py's ALE,
# vizdoom: ViZDoom's C++ API). Nothing of those sources lives in this repository.

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
