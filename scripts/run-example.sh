#!/usr/bin/env bash
# Set-up (scripts/setup.sh), then the main job on a bundled example: vector
# add of 1,000,000 floats on an emulated M1, output written to
# build/vector_add_out.npy.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
./build/cli/mtlemu run examples/vector_add.s --kernel vector_add \
  --chip m1 --grid 1000000 --threadgroup 256 \
  --buffer 0=float[1000000]:random\(1\) \
  --buffer 1=float[1000000]:random\(2\) \
  --buffer 2=float[1000000]:zeros \
  --bytes 3=uint:1000000 \
  --out 2=build/vector_add_out.npy
echo "wrote build/vector_add_out.npy"
