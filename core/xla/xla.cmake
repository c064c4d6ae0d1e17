# XLA FFI handlers for env.xla(), compiled into _core when jaxlib's FFI headers are found (jaxlib is a build
# requirement in pyproject.toml, pinned to the version of the `jax` extra). Without them the module builds
# without XLA support and env.xla() raises an error saying how to get it.
# Sets PP_XLA_SOURCES, PP_XLA_INCLUDES, PP_XLA_DEFINES, PP_XLA_LIBS.
option(PP_XLA "build the XLA FFI handlers (env.xla()) when jaxlib's headers are found" ON)
option(PP_XLA_CUDA "also build the CUDA variants of the XLA handlers when the CUDA toolkit is found" ON)
set(PP_XLA_INCLUDE_DIR "" CACHE PATH "directory holding xla/ffi/api/ffi.h (default: jaxlib's include dir)")
set(PP_XLA_SOURCES "")
set(PP_XLA_INCLUDES "")
set(PP_XLA_DEFINES "")
set(PP_XLA_LIBS "")
if(PP_XLA)
  if(NOT PP_XLA_INCLUDE_DIR)
    # jaxlib's package dir + /include, found without importing jaxlib (what jax.ffi.include_dir() returns)
    execute_process(
      COMMAND "${Python_EXECUTABLE}" -c
              "import importlib.util, os; s = importlib.util.find_spec('jaxlib'); print(os.path.join(list(s.submodule_search_locations)[0], 'include') if s else '')"
      OUTPUT_VARIABLE _pp_jaxlib_inc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    set(PP_XLA_INCLUDE_DIR "${_pp_jaxlib_inc}")
  endif()
  if(PP_XLA_INCLUDE_DIR AND EXISTS "${PP_XLA_INCLUDE_DIR}/xla/ffi/api/ffi.h")
    message(STATUS "parallel_pool: XLA FFI handlers enabled (headers: ${PP_XLA_INCLUDE_DIR})")
    list(APPEND PP_XLA_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/core/xla/handlers.cc)
    list(APPEND PP_XLA_INCLUDES ${PP_XLA_INCLUDE_DIR})
    list(APPEND PP_XLA_DEFINES PP_WITH_XLA)
    if(PP_XLA_CUDA)
      find_package(CUDAToolkit QUIET)
      if(CUDAToolkit_FOUND)
        message(STATUS "parallel_pool: CUDA XLA handlers enabled (CUDA ${CUDAToolkit_VERSION})")
        list(APPEND PP_XLA_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/core/xla/handlers_cuda.cc)
        list(APPEND PP_XLA_DEFINES PP_WITH_XLA_CUDA)
        # static runtime: it loads the driver (libcuda) lazily, so the module still imports without a GPU
        list(APPEND PP_XLA_LIBS CUDA::cudart_static)
      else()
        message(STATUS "parallel_pool: CUDA toolkit not found: CPU XLA handlers only")
      endif()
    endif()
  else()
    message(STATUS "parallel_pool: jaxlib's XLA FFI headers not found: building without env.xla() "
                   "(install jaxlib to enable it)")
  endif()
endif()
