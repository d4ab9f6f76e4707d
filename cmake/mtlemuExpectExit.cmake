# Runs a command and succeeds only when it exits with MTLEMU_EXIT_CODE
# (mtlemu_add_kernel_test's EXIT_CODE):
#   cmake -DMTLEMU_EXIT_CODE=4 -P mtlemuExpectExit.cmake COMMAND [ARGS...]
# Its output passes through; a crash or any other exit status fails.
set(command "")
set(first -1)  # the command's index: after "-P" and the script
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE ${last})
  if(first EQUAL -1 AND CMAKE_ARGV${i} STREQUAL "-P")
    math(EXPR first "${i} + 2")
  elseif(NOT first EQUAL -1 AND i GREATER_EQUAL first)
    list(APPEND command "${CMAKE_ARGV${i}}")
  endif()
endforeach()
if(NOT command)
  message(FATAL_ERROR "mtlemuExpectExit.cmake: no command to run")
endif()
execute_process(COMMAND ${command} RESULT_VARIABLE status)
if(NOT status STREQUAL "${MTLEMU_EXIT_CODE}")
  message(FATAL_ERROR
          "expected exit code ${MTLEMU_EXIT_CODE}, got '${status}'")
endif()
