# mtlemu_add_kernel_test: a CTest test that runs one kernel with mtlemu and
# compares buffers with expected .npy files.
#
#   mtlemu_add_kernel_test(NAME test_name
#     SOURCE kernel.metal            # .metal, ISA text (.s) or .mtlb
#     KERNEL kernel_name
#     GRID x[,y[,z]] | GROUPS x[,y[,z]]
#     [THREADGROUP x[,y[,z]]] [CHIP m2]
#     [BUFFERS "0=float[1024]:random(1)" "1=input.npy" ...]
#     [BYTES "2=uint:1024" ...] [THREADGROUP_MEMORY "0=4096" ...]
#     EXPECT "1=expected.npy" ...
#     [RTOL 1e-5] [ATOL 1e-6]
#     [ARGS --oob fault --check race ...]  # more of `mtlemu run`'s options
#     [EXIT_CODE 4])
#
# Relative paths are taken from the directory of the CMakeLists.txt that
# calls it. The test fails on a compile error, a GPU fault, a timeout, or a
# buffer that differs from its expected file beyond the tolerance. With
# EXIT_CODE, it passes only when mtlemu exits with that code (README's exit
# codes: 4 for a buffer that must differ, 2 for a kernel that must fault,
# 5 for a --check finding), never on another failure or a crash. A write
# or read just outside a buffer is only a warning by default (as on a
# Mac); `ARGS --oob fault` makes it fail the test.
set(_mtlemu_kernel_tests_dir ${CMAKE_CURRENT_LIST_DIR})

function(mtlemu_add_kernel_test)
  cmake_parse_arguments(T ""
    "NAME;SOURCE;KERNEL;GRID;GROUPS;THREADGROUP;CHIP;RTOL;ATOL;EXIT_CODE"
    "BUFFERS;BYTES;THREADGROUP_MEMORY;EXPECT;ARGS" ${ARGN})
  if(NOT T_NAME OR NOT T_SOURCE OR NOT T_KERNEL)
    message(FATAL_ERROR "mtlemu_add_kernel_test needs NAME, SOURCE and KERNEL")
  endif()
  if(NOT T_GRID AND NOT T_GROUPS)
    message(FATAL_ERROR "mtlemu_add_kernel_test(${T_NAME}) needs GRID or GROUPS")
  endif()
  set(args run ${T_SOURCE} --kernel ${T_KERNEL} --quiet)
  if(T_GRID)
    list(APPEND args --grid ${T_GRID})
  else()
    list(APPEND args --groups ${T_GROUPS})
  endif()
  foreach(opt THREADGROUP CHIP RTOL ATOL)
    if(T_${opt})
      string(TOLOWER ${opt} flag)
      list(APPEND args --${flag} ${T_${opt}})
    endif()
  endforeach()
  foreach(b ${T_BUFFERS})
    list(APPEND args --buffer ${b})
  endforeach()
  foreach(b ${T_BYTES})
    list(APPEND args --bytes ${b})
  endforeach()
  foreach(b ${T_THREADGROUP_MEMORY})
    list(APPEND args --threadgroup-memory ${b})
  endforeach()
  foreach(e ${T_EXPECT})
    list(APPEND args --expect ${e})
  endforeach()
  list(APPEND args ${T_ARGS})
  if(DEFINED T_EXIT_CODE)
    add_test(NAME ${T_NAME}
             COMMAND ${CMAKE_COMMAND} -DMTLEMU_EXIT_CODE=${T_EXIT_CODE}
                     -P ${_mtlemu_kernel_tests_dir}/mtlemuExpectExit.cmake
                     $<TARGET_FILE:mtlemu::mtlemu> ${args}
             WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
  else()
    add_test(NAME ${T_NAME} COMMAND mtlemu::mtlemu ${args}
             WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
  endif()
endfunction()
