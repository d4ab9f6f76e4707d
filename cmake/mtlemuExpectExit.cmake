# Runs a command and succeeds only when it exits with MTLEMU_EXIT_CODE
# (mtlemu_add_kernel_test's EXIT_CODE):
#   cmake -DMTLEMU_EXIT_CODE=4 -P mtlemuExpectExit.cmake COMMAND [ARGS...]
# Its output passes through; a crash or any other exit status fails.
set(command "")
set(after_script FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE ${last})
  if(after_script)
    list(APPEND command "${CMAKE_ARGV${i}}")
  elseif(CMAKE_ARGV${i} STREQUAL "-P")
    math(EXPR script "${i} + 1")
    set(skip ${script})
  endif()
  if(DEFINED skip AND i EQUAL skip)
    set(after_script TRUE)
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
