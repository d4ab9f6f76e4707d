#!/usr/bin/env bash
# Real-world Metal: runs tests/realworld against a snapshot of MLX
# (github.com/ml-explore/mlx; its Metal kernels are under
# mlx/backend/metal/kernels). Nothing of MLX is copied into the project:
# the tests read the folder given here.
#
#   bash scripts/realworld.sh /path/to/mlx
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -ne 1 ] || [ ! -d "$1/mlx/backend/metal/kernels" ]; then
  echo "usage: bash scripts/realworld.sh MLX_DIR (a snapshot of" \
       "github.com/ml-explore/mlx, with mlx/backend/metal/kernels)" >&2
  exit 2
fi
mlx_dir="$(cd "$1" && pwd)"
bash scripts/setup.sh
ninja -C build realworld_mlx_test realworld_metal_constructs_test \
  realworld_generic_metal_code_test
export MTLEMU_MLX_DIR="$mlx_dir"
status=0
./build/tests/realworld_metal_constructs_test || status=1
./build/tests/realworld_generic_metal_code_test || status=1
./build/tests/realworld_mlx_test || status=1
exit $status
