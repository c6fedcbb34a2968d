# Imported targets for the libraries kvpolicy uses that ship no usable CMake target on Debian:
# kvpolicy::xgboost, kvpolicy::fasttext, kvpolicy::hiredis and kvpolicy::zstd (found by
# pkg-config when it is there, else by its library and header), and kvpolicy::zlib (CMake's
# FindZLIB), the decompressors of `trace import` and the JSONL readers. The build includes this file, and
# so does the installed package (kvpolicyConfig.cmake), so both find them the same way.
#
# kvpolicy_import(NAME [REQUIRED]) defines kvpolicy::NAME from its library and the directory of
# its header (below), and sets kvpolicy_NAME_FOUND.
set(KVPOLICY_IMPORT_xgboost xgboost xgboost/c_api.h)
set(KVPOLICY_IMPORT_fasttext fasttext fasttext/fasttext.h)
set(KVPOLICY_IMPORT_hiredis hiredis hiredis/hiredis.h)
set(KVPOLICY_IMPORT_zstd zstd zstd.h)

function(kvpolicy_import name)
  set(target kvpolicy::${name})
  if(TARGET ${target})
    set(kvpolicy_${name}_FOUND TRUE PARENT_SCOPE)
    return()
  endif()
  if(name STREQUAL "zlib")
    find_package(ZLIB QUIET)
    if(ZLIB_FOUND)
      add_library(${target} INTERFACE IMPORTED)
      set_target_properties(${target} PROPERTIES INTERFACE_LINK_LIBRARIES ZLIB::ZLIB)
    elseif(ARGN STREQUAL "REQUIRED")
      message(FATAL_ERROR "kvpolicy: zlib not found; install it (tools/install-deps.sh)")
    endif()
    set(kvpolicy_${name}_FOUND ${ZLIB_FOUND} PARENT_SCOPE)
    return()
  endif()
  if(name STREQUAL "zstd")
    find_package(PkgConfig QUIET)
    if(PKG_CONFIG_FOUND)
      pkg_check_modules(KVPOLICY_PC_ZSTD QUIET libzstd)
    endif()
    if(KVPOLICY_PC_ZSTD_FOUND)
      find_library(KVPOLICY_zstd_LIBRARY zstd HINTS ${KVPOLICY_PC_ZSTD_LIBRARY_DIRS})
      find_path(KVPOLICY_zstd_INCLUDE_DIR zstd.h HINTS ${KVPOLICY_PC_ZSTD_INCLUDE_DIRS})
    endif()
  endif()
  list(GET KVPOLICY_IMPORT_${name} 0 library)
  list(GET KVPOLICY_IMPORT_${name} 1 header)
  find_library(KVPOLICY_${name}_LIBRARY ${library})
  find_path(KVPOLICY_${name}_INCLUDE_DIR ${header})
  if(NOT KVPOLICY_${name}_LIBRARY OR NOT KVPOLICY_${name}_INCLUDE_DIR)
    set(kvpolicy_${name}_FOUND FALSE PARENT_SCOPE)
    if(ARGN STREQUAL "REQUIRED")
      message(FATAL_ERROR "kvpolicy: ${library} (${header}) not found; "
                          "install it (tools/install-deps.sh) or turn its option off")
    endif()
    return()
  endif()
  add_library(${target} UNKNOWN IMPORTED)
  set_target_properties(${target} PROPERTIES
    IMPORTED_LOCATION "${KVPOLICY_${name}_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${KVPOLICY_${name}_INCLUDE_DIR}")
  set(kvpolicy_${name}_FOUND TRUE PARENT_SCOPE)
endfunction()
