#!/usr/bin/env bash
# Real-world Metal: runs tests/realworld against snapshots of MLX
# (github.com/ml-explore/mlx; its Metal kernels are under
# mlx/backend/metal/kernels) and, where given, of ggml
# (github.com/ggml-org/ggml, or llama.cpp, whose ggml/ folder is the same:
# src/ggml-metal/ggml-metal.metal). Nothing of either is copied into the
# project: the tests read the folders given here.
#
#   bash scripts/realworld.sh MLX_DIR [GGML_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ] || [ $# -gt 2 ] || [ ! -d "$1/mlx/backend/metal/kernels" ]; then
  echo "usage: bash scripts/realworld.sh MLX_DIR [GGML_DIR] (snapshots of" \
       "github.com/ml-explore/mlx, with mlx/backend/metal/kernels, and of" \
       "github.com/ggml-org/ggml or llama.cpp)" >&2
  exit 2
fi
mlx_dir="$(cd "$1" && pwd)"
ggml_dir=""
if [ $# -eq 2 ]; then
  if [ ! -f "$2/src/ggml-metal/ggml-metal.metal" ] &&
     [ ! -f "$2/ggml/src/ggml-metal/ggml-metal.metal" ]; then
    echo "realworld.sh: $2 has no src/ggml-metal/ggml-metal.metal" \
         "(nor ggml/src/ggml-metal/...)" >&2
    exit 2
  fi
  ggml_dir="$(cd "$2" && pwd)"
fi
bash scripts/setup.sh
ninja -C build realworld_mlx_test realworld_metal_constructs_test \
  realworld_generic_metal_code_test realworld_ggml_test
export MTLEMU_MLX_DIR="$mlx_dir"
export MTLEMU_GGML_DIR="$ggml_dir"
status=0
./build/tests/realworld_metal_constructs_test || status=1
./build/tests/realworld_generic_metal_code_test || status=1
./build/tests/realworld_mlx_test || status=1
if [ -n "$ggml_dir" ]; then
  ./build/tests/realworld_ggml_test || status=1
fi
exit $status
