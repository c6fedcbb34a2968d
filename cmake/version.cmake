# Writes OUT (a header defining KVPOLICY_VERSION) from `git describe` of SRC, or FALLBACK outside
# a git checkout; rewritten only when the version changes, so a build recompiles one file.
execute_process(
  COMMAND git -C "${SRC}" describe --tags --always --dirty
  OUTPUT_VARIABLE describe
  OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE failed
  ERROR_QUIET)
if(failed OR describe STREQUAL "")
  set(version "${FALLBACK}")
else()
  set(version "${FALLBACK}+g${describe}")
endif()
set(content "#pragma once\n#define KVPOLICY_VERSION \"${version}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL content)
  file(WRITE "${OUT}" "${content}")
endif()
