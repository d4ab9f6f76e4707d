# MTLEMU_FUZZ: the libFuzzer targets of tests/fuzz in a tree of their own,
# configured with Clang 16 (CC=clang-16 CXX=clang++-16; scripts/fuzz.sh
# does it in build-fuzz). Every library is compiled with libFuzzer's
# coverage instrumentation (fuzzer-no-link), AddressSanitizer and
# UndefinedBehaviorSanitizer; the targets link libFuzzer's main
# (tests/fuzz/CMakeLists.txt). Without it the same targets are built with
# tests/fuzz/replay_main.cpp and replay their inputs under CTest.
#
# Every UBSan finding stops the program (-fno-sanitize-recover), so libFuzzer
# sees it as a crash and saves the input.
option(MTLEMU_FUZZ "Build tests/fuzz with libFuzzer (Clang only)" OFF)
if(MTLEMU_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "MTLEMU_FUZZ needs Clang: configure a tree of its "
                        "own with CC=clang-16 CXX=clang++-16 (scripts/fuzz.sh)")
  endif()
  set(fuzz_sanitizers -fsanitize=address,undefined
      -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_compile_options(-fsanitize=fuzzer-no-link ${fuzz_sanitizers}
                      # The GCC-only -Wno-restrict above.
                      -Wno-unknown-warning-option)
  add_link_options(${fuzz_sanitizers})
  message(STATUS "mtlemu: libFuzzer build of tests/fuzz")
endif()
