# Run at every build (common/CMakeLists.txt): writes OUTPUT, a header defining TILESIM_REVISION as the
# checkout's `git describe --always --dirty` ("unknown" outside a git checkout of SOURCE_DIR), and
# rewrites it only when the revision changed, so an unchanged checkout recompiles nothing.
execute_process(COMMAND git rev-parse --show-toplevel WORKING_DIRECTORY "${SOURCE_DIR}"
                OUTPUT_VARIABLE top OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE top_rc)
set(revision "unknown")
# Only this checkout's own history: a source tree unpacked inside another repository is not a checkout.
if(top_rc EQUAL 0 AND EXISTS "${top}")
  file(REAL_PATH "${top}" top)
  file(REAL_PATH "${SOURCE_DIR}" source)
  if(top STREQUAL source)
    execute_process(COMMAND git describe --always --dirty WORKING_DIRECTORY "${SOURCE_DIR}"
                    OUTPUT_VARIABLE described OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
    if(rc EQUAL 0 AND NOT described STREQUAL "")
      set(revision "${described}")
    endif()
  endif()
endif()
set(text "#pragma once\n// Written by common/git_revision.cmake at build time.\n#define TILESIM_REVISION \"${revision}\"\n")
set(old "")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUTPUT}" "${text}")
endif()
