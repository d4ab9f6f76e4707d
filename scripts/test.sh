#!/usr/bin/env bash
# Set-up (scripts/setup.sh), then the whole test suite through CTest.
# With --sanitize, MTLEMU_SANITIZE_TESTS=1 or CI=true (CI's own run), then
# also the sanitizer builds and their runs (scripts/sanitize.sh all:
# ASan+UBSan over the whole suite, TSan over the dispatch and atomics
# tests), which take far longer than the plain run.
set -euo pipefail
cd "$(dirname "$0")/.."
sanitize="${MTLEMU_SANITIZE_TESTS:-0}"
[[ "${CI:-}" == true ]] && sanitize=1
for arg in "$@"; do
  case "$arg" in
    --sanitize) sanitize=1 ;;
    *)
      echo "usage: $0 [--sanitize]" >&2
      exit 2
      ;;
  esac
done
bash scripts/setup.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
if [[ "$sanitize" == 1 ]]; then
  echo
  echo "=== test.sh: the sanitizer builds (scripts/sanitize.sh all) ==="
  bash scripts/sanitize.sh all
fi
