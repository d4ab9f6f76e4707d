#!/usr/bin/env bash
# Fuzzes mtlemu's readers and parsers with libFuzzer (tests/fuzz/README.md):
#
#   bash scripts/fuzz.sh [TARGET|all] [SECONDS]
#
# TARGET is a target's name (asm, binary_module, npy, buffer_spec, msl,
# ttir, triton_python: tests/fuzz/fuzz_NAME.cpp); all, the default, runs
# each in turn. Each runs SECONDS (default 60) on one core.
#
# Installs what is missing (Debian 12 packages, as scripts/setup.sh does),
# configures build-fuzz with clang-16 and MTLEMU_FUZZ=ON (ASan, UBSan and
# libFuzzer's coverage) and builds the targets. A target runs on a copy of
# its seed corpus in build-fuzz/corpus/NAME, so the committed corpus never
# grows by itself; the inputs it crashes on land in build-fuzz/crashes/NAME
# (to keep one, fix the bug and copy the input to tests/fuzz/crashes/NAME).
# Prints each target's executions; exits 1 if any target crashed.
set -euo pipefail
cd "$(dirname "$0")/.."

all_targets=(asm binary_module npy buffer_spec msl ttir triton_python)
target="${1:-all}"
seconds="${2:-60}"
if [ "$target" = all ]; then
  targets=("${all_targets[@]}")
elif [[ " ${all_targets[*]} " == *" $target "* ]]; then
  targets=("$target")
else
  echo "fuzz: unknown target '$target' (expected all or one of: ${all_targets[*]})" >&2
  exit 2
fi
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -eq 0 ]; then
  echo "fuzz: SECONDS must be a positive integer, not '$seconds'" >&2
  exit 2
fi

# The project's build dependencies (scripts/setup.sh) and clang-16 with its
# sanitizer and libFuzzer runtimes.
packages=(
  cmake ninja-build ccache
  libtbb-dev libhwy-dev libfmt-dev libcli11-dev nlohmann-json3-dev libgtest-dev
  libboost-dev libboost-iostreams-dev
  llvm-16-dev libclang-16-dev libclang-cpp16-dev clang-16 libclang-rt-16-dev
)
bash scripts/install-packages.sh fuzz "${packages[@]}"

# -O1 and line tables: fast enough to build on a small machine, stack
# traces with lines. Without NDEBUG, so that assertions are checked too.
build=build-fuzz
CC=clang-16 CXX=clang++-16 cmake -S . -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DMTLEMU_FUZZ=ON -DMTLEMU_BUILD_BENCH=OFF >/dev/null
# The build runs make_shim_pch, an instrumented Clang whose leaks (Clang
# frees nothing on exit, by design) would fail the build.
ASAN_OPTIONS=detect_leaks=0 ninja -C "$build" "${targets[@]/#/fuzz_}"

# Per input: the time and memory past which an input counts as a hang or a
# memory blow-up (a finding, like a crash). The MSL compiler runs Clang on
# each input, so it gets longer.
declare -A timeout=([msl]=60)
summary=()
crashed=0
for t in "${targets[@]}"; do
  corpus="$build/corpus/$t"
  crashes="$build/crashes/$t"
  mkdir -p "$corpus" "$crashes"
  # The target's own seeds, and those it takes from the tree (seeds.txt,
  # named by their path so that two kernel.ttir stay two).
  for f in tests/fuzz/corpus/"$t"/*; do
    if [ -f "$f" ]; then cp -n "$f" "$corpus"/; fi
  done
  while read -r target glob; do
    [ "$target" = "$t" ] || continue
    for f in $glob; do
      if [ -f "$f" ]; then cp -n "$f" "$corpus/${f//\//_}"; fi
    done
  done < <(grep -v '^#' tests/fuzz/seeds.txt)
  log="$build/fuzz-$t.log"
  echo "fuzz: $t for ${seconds}s (log: $log)"
  status=0
  # Clang, inside the MSL target, frees nothing at exit by design: no leak
  # checks there.
  leaks=1
  [ "$t" = msl ] && leaks=0
  ASAN_OPTIONS="detect_leaks=$leaks" "$build/tests/fuzz/fuzz_$t" \
    -max_total_time="$seconds" -timeout="${timeout[$t]:-10}" \
    -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$crashes/" "$corpus" >"$log" 2>&1 || status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  found=$(find "$crashes" -type f | wc -l)
  summary+=("$t: ${execs:-?} executions in ${seconds}s, $found inputs in $crashes")
  if [ "$status" -ne 0 ]; then
    crashed=1
    echo "fuzz: $t stopped (exit $status); see $log" >&2
    grep -m1 -E "ERROR:|SUMMARY:|fuzz check failed" "$log" >&2 || true
  fi
done
printf 'fuzz: %s\n' "${summary[@]}"
exit "$crashed"
