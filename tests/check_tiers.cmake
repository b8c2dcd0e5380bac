# Fails, naming them, when test cases of TEST_BINARY carry none (or more than one) of the tier tags that tests/CMakeLists.txt
# turns into CTest labels (unit, formula, validation, cli): such a test would fall out of `make check`.
# Hidden test cases ([.]) run only as another test's child process and are left aside.
# Run by CTest as: cmake -DTEST_BINARY=... -P check_tiers.cmake
# Two listings in all (a test binary that links libtorch takes most of a second to start).
execute_process(COMMAND "${TEST_BINARY}" --list-test-names-only "~[unit]~[formula]~[validation]~[cli]~[.]"
                OUTPUT_VARIABLE untiered)
string(STRIP "${untiered}" untiered)
if(NOT untiered STREQUAL "")
  message(FATAL_ERROR "test cases without a tier tag ([unit], [formula], [validation] or [cli]):\n${untiered}")
endif()
# ... and each test case has one tier only: with two, CTest would register it twice. A comma in a
# Catch2 test spec is "or": every pair of tiers in one listing.
set(tiers unit formula validation cli)
set(pairs "")
foreach(first IN LISTS tiers)
  foreach(second IN LISTS tiers)
    if(first STRLESS second)
      list(APPEND pairs "[${first}][${second}]")
    endif()
  endforeach()
endforeach()
string(REPLACE ";" "," pair_spec "${pairs}")
execute_process(COMMAND "${TEST_BINARY}" --list-test-names-only "${pair_spec}" OUTPUT_VARIABLE both)
string(STRIP "${both}" both)
if(NOT both STREQUAL "")
  message(FATAL_ERROR "test cases with two tier tags (of unit, formula, validation, cli):\n${both}")
endif()
message(STATUS "every test case of ${TEST_BINARY} has exactly one tier tag")
