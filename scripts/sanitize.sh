#!/usr/bin/env bash
# Sanitizer builds and runs (cmake/Sanitize.cmake):
#   address  ASan+UBSan build of everything in build-asan, the whole suite
#   thread   TSan build in build-tsan of the tests that run threadgroups on
#            TBB's host threads and atomics across them, and those tests
#   all      both (the default)
# Usage: scripts/sanitize.sh [address|thread|all]
# Run scripts/setup.sh first (scripts/test.sh does): this script installs no
# package (it fetches oneTBB's source, below). Any sanitizer report fails the
# test that made it.
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-all}"
case "$mode" in
  address | thread | all) ;;
  *)
    echo "usage: $0 [address|thread|all]" >&2
    exit 2
    ;;
esac
supp="$PWD/scripts/sanitizers"
# ccache keys on paths relative to the checkout (as in setup.sh), and not
# on the build folder that -g1's line tables would name: another clone
# reuses these objects, and its reports name sources relative to the tree.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
export CCACHE_NOHASHDIR=true

# Set for the builds too: they run instrumented programs (make_shim_pch,
# and each test executable to list its tests).
# detect_stack_use_after_return: use of a returned frame's locals.
# check_initialization_order/strict_init_order: globals that read other
# translation units' globals before those are constructed.
export ASAN_OPTIONS="detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.supp:print_suppressions=0"

# ThreadSanitizer sees only synchronization in instrumented code, and
# Debian's libtbb is not instrumented: without this, every handover of a task
# between TBB's threads (and so everything a dispatch's threadgroups touch)
# is reported as a race. So the TSan build links oneTBB built with TSan from
# the source of the very Debian package installed (its own headers and CMake
# package), fetched with apt into build-tsan/onetbb, once.
build_tsan_tbb() {
  local dir="$PWD/build-tsan/onetbb"
  [[ -f "$dir/install/lib/cmake/TBB/TBBConfig.cmake" ]] && return
  local package version upstream
  package="$(dpkg-query -W -f='${source:Package}' libtbb-dev)"
  version="$(dpkg-query -W -f='${source:Version}' libtbb-dev)"
  upstream="${version%%-*}"
  echo "sanitize: building $package $version with TSan (build-tsan/onetbb)"
  rm -rf "$dir"
  mkdir -p "$dir/apt/lists/partial" "$dir/apt/sources"
  # Debian's source index in a folder of our own: the machine's apt
  # configuration is left as it is.
  if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
      >"$dir/apt/sources/debian-src.sources"
  fi
  if [[ -f /etc/apt/sources.list ]]; then
    sed -n 's/^deb /deb-src /p' /etc/apt/sources.list \
      >"$dir/apt/sources/debian-src.list"
  fi
  local apt=(-o Dir::Etc::SourceList=/dev/null
    -o Dir::Etc::SourceParts="$dir/apt/sources"
    -o Dir::State::Lists="$dir/apt/lists")
  apt-get "${apt[@]}" update -qq
  (cd "$dir" && apt-get "${apt[@]}" source -qq --download-only \
    "$package=$version")
  # Debian's patches change only tests, build flags and other architectures:
  # the orig tarball is the library that is installed.
  mkdir "$dir/source"
  tar -xf "$dir/${package}_${upstream}".orig.tar.* -C "$dir/source" \
    --strip-components=1
  cmake -S "$dir/source" -B "$dir/build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DTBB_SANITIZE=thread -DTBB_TEST=OFF \
    -DTBB_EXAMPLES=OFF -DTBB_STRICT=OFF -DTBBMALLOC_BUILD=OFF \
    -DTBB_DISABLE_HWLOC_AUTOMATIC_SEARCH=ON \
    -DCMAKE_INSTALL_PREFIX="$dir/install" >/dev/null
  ninja -C "$dir/build" >/dev/null
  cmake --install "$dir/build" >/dev/null
}

# Release, as the suite normally runs (the emulator's speed keeps the
# suite's time bearable), with line tables for the reports' stacks.
configure() {  # DIR SANITIZERS [CMAKE ARGUMENTS]
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS=-g1 -DMTLEMU_SANITIZE="$2" -DMTLEMU_BUILD_BENCH=OFF \
    "${@:3}" >/dev/null
}

if [[ "$mode" == address || "$mode" == all ]]; then
  echo "sanitize: ASan+UBSan, the whole suite (build-asan)"
  configure build-asan address,undefined
  ninja -C build-asan
  ctest --test-dir build-asan --output-on-failure -j "$(nproc)"
fi

if [[ "$mode" == thread || "$mode" == all ]]; then
  # The suites that dispatch over several host threads (TBB's parallel_for
  # over threadgroups, the timed mode's model task beside them, timeouts
  # and interrupts that cancel the workers) with atomics, barriers and
  # faults whose report must not depend on the thread that found them; and
  # host threads committing command buffers on one device at once.
  # emu_atomics_test's spin lock (compare-exchange, plain loads and stores,
  # exchange, over thousands of threadgroups) is a data race to TSan unless
  # the emulator's atomics order the plain accesses across host threads.
  tsan_tests=(
    emu_atomics_test
    emu_barrier_test
    emu_concurrent_commands_test
    emu_control_flow_test
    emu_limits_test
    emu_memory_test
    emu_timing_test
  )
  echo "sanitize: TSan, ${tsan_tests[*]} (build-tsan)"
  build_tsan_tbb
  configure build-tsan thread \
    -DTBB_DIR="$PWD/build-tsan/onetbb/install/lib/cmake/TBB"
  ninja -C build-tsan "${tsan_tests[@]}"
  labels="$(IFS='|'; echo "${tsan_tests[*]}")"
  ctest --test-dir build-tsan --output-on-failure -j "$(nproc)" \
    -L "^($labels)\$"
fi
