# A test name with ';' is cut in two by catch_discover_tests (a CMake list separator), and one with '\' reaches
# Catch escaped: either way the CTest entry runs no test and passes. Fail the build's tests instead.
# (Catch v2 exits with the number of tests listed, so the output, not the status, says it ran)
execute_process(COMMAND "${TESTS_EXE}" --list-test-names-only OUTPUT_VARIABLE names)
string(LENGTH "${names}" length)
if(length LESS 1000)
  message(FATAL_ERROR "${TESTS_EXE} --list-test-names-only listed no tests")
endif()
string(FIND "${names}" ";" semicolon)
string(FIND "${names}" "\\" backslash)
if(NOT semicolon EQUAL -1 OR NOT backslash EQUAL -1)
  message(FATAL_ERROR "a TEST_CASE name holds ';' or a backslash: CTest would run nothing under it; rename it")
endif()
# a name that starts with '-' reaches Catch as an option ("Unrecognised token") and its CTest entry fails
string(REGEX MATCH "(^|\n)-[^\n]*" dash "${names}")
if(dash)
  message(FATAL_ERROR "a TEST_CASE name starts with '-' (${dash}): Catch reads it as an option; rename it")
endif()
