# MTLEMU_SANITIZE: build every target of the project with the sanitizers
# named, as GCC's -fsanitize takes them ("address,undefined", "thread").
# Give such a build its own tree (scripts/sanitize.sh uses build-asan and
# build-tsan): the instrumented objects cannot be mixed with plain ones.
#
# UBSan's checks are GCC's -fsanitize=undefined set, vptr included (Debian's
# LLVM 16 is built with RTTI, and so is our code), plus float-cast-overflow:
# the emulator converts floats to integers with Metal's saturating rules, and
# a C++ cast of an out-of-range float is undefined, not saturating, on x86.
# Every UBSan finding stops the program (-fno-sanitize-recover), so a test
# fails on it instead of printing and passing.
set(MTLEMU_SANITIZE "" CACHE STRING
    "Sanitizers for all targets, as -fsanitize takes them: address,undefined or thread")
if(MTLEMU_SANITIZE)
  set(sanitize_flags -fsanitize=${MTLEMU_SANITIZE} -fno-omit-frame-pointer)
  if(MTLEMU_SANITIZE MATCHES "undefined")
    list(APPEND sanitize_flags -fsanitize=float-cast-overflow
         -fno-sanitize-recover=undefined,float-cast-overflow)
  endif()
  if(MTLEMU_SANITIZE MATCHES "address")
    # What a program that is not instrumented but loads our code (Python,
    # tests/CMakeLists.txt) needs in LD_PRELOAD: ASan's runtime first, and
    # libstdc++ with it, or ASan finds no __cxa_throw to intercept when the
    # program itself does not link libstdc++ ("CHECK failed: ...
    # real___cxa_throw").
    set(MTLEMU_ASAN_PRELOAD "")
    foreach(library libasan.so libstdc++.so.6)
      execute_process(
        COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${library}
        OUTPUT_VARIABLE path OUTPUT_STRIP_TRAILING_WHITESPACE)
      string(APPEND MTLEMU_ASAN_PRELOAD ":${path}")
    endforeach()
    string(SUBSTRING "${MTLEMU_ASAN_PRELOAD}" 1 -1 MTLEMU_ASAN_PRELOAD)
  endif()
  # GCC's manual: "sanitizers tend to increase the rate of false positive
  # warnings, most notably those around -Wmaybe-uninitialized" (here: on
  # std::optional returns); the plain build keeps that warning.
  add_compile_options(${sanitize_flags} -Wno-maybe-uninitialized)
  add_link_options(${sanitize_flags})
  message(STATUS "mtlemu: sanitizers ${MTLEMU_SANITIZE}")
endif()
