#!/usr/bin/env bash
# Installs this build of mtlemu into a temporary prefix, then configures,
# builds and tests tests/package/outside_project against it from scratch,
# as a user's project would: find_package(mtlemu) + mtlemu_add_kernel_test.
# Usage: package_test.sh BUILD_DIR [GENERATOR [MAKE_PROGRAM]]
# GENERATOR and MAKE_PROGRAM default to the build's own (CMakeCache.txt), so
# that the outside project needs no build tool the set-up did not install.
set -euo pipefail
build="$1"
cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
generator="${2:-$(cache_value CMAKE_GENERATOR)}"
make_program="${3:-$(cache_value CMAKE_MAKE_PROGRAM)}"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cp -r "$here/outside_project" "$work/project"
cmake -S "$work/project" -B "$work/build" -G "$generator" \
  -DCMAKE_MAKE_PROGRAM="$make_program" -DCMAKE_PREFIX_PATH="$work/prefix" \
  >/dev/null
MTLEMU_CACHE_DIR=off ctest --test-dir "$work/build" --output-on-failure
