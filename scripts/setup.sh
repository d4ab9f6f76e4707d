#!/usr/bin/env bash
# Installs what is missing (Debian 12 packages, as root or with sudo), then
# configures and builds mtlemu in ./build. Safe to run again: it installs
# nothing that is present and rebuilds only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  cmake ninja-build g++ ccache
  libtbb-dev libhwy-dev libfmt-dev libcli11-dev nlohmann-json3-dev libgtest-dev
  libboost-dev libboost-iostreams-dev
  llvm-16-dev libclang-16-dev libclang-cpp16-dev clang-16
  # The triton_metal Python package (python/) and its tests.
  python3-dev pybind11-dev python3-numpy python3-pytest python3-torch
  # bench/triton_test_suite.py: Triton's own tests across processes.
  python3-pytest-xdist python3-pytest-timeout
  # bench/peer_bench.cpp: PoCL through the OpenCL ICD loader.
  ocl-icd-opencl-dev pocl-opencl-icd
)
bash scripts/install-packages.sh setup "${packages[@]}"

# ccache (CMakeLists.txt) keys on paths relative to the checkout, so that
# another clone of the tree (CI's) reuses what this one compiled.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
build_type="${MTLEMU_BUILD_TYPE:-Release}"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="$build_type" >/dev/null
ninja -C build
