#!/usr/bin/env bash
# Compiles every MSL kernel in this folder with clang-16 in C++ for OpenCL
# mode against the <metal_stdlib> shims and checks the LLVM IR:
#   (a) the file compiles without errors;
#   (b) every call in the IR is to an air.* builtin or an llvm.* intrinsic.
#       Anything else is listed: "declared, not defined" (a library call
#       clang made up, a shim function without a definition: IR_CLEAN NO)
#       or "not inlined" (a function of the module the inliner kept:
#       IR_CLEAN inl). The ISA has no calls, so the front end's pipeline
#       must inline everything; -inline-threshold=100000 stands in for that.
#   (c) every builtin named on a `// EXPECT: air.x.y ...` line of the file
#       is called, no `// REJECT: NAME` callee appears, and the text of each
#       `// EXPECT-IR: TEXT` line occurs in the IR;
#   (d) no program-scope variable needs a dynamic initializer (a global
#       constructor, checked on the unoptimized IR the front end produces
#       with -disable-llvm-passes);
# and, once per run, that the appendix of ../BUILTINS.md is the list
# list_builtins.py prints (every builtin the shims can emit).
# A `// FLAGS: ...` line adds clang flags for that file.
#
# Usage: check.sh [-v] [-k DIR] [FILE.metal...]
#   -v      also print clang's warnings
#   -k DIR  keep the .ll files in DIR
# Exit status: 0 when every file passes.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
shim="$(cd "$here/../shim" && pwd)"
clang="${CLANG:-/usr/bin/clang-16}"
verbose=0
keep=""
while getopts "vk:" opt; do
  case "$opt" in
    v) verbose=1 ;;
    k) keep="$OPTARG"; mkdir -p "$keep" ;;
    *) echo "usage: $0 [-v] [-k DIR] [FILE.metal...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [ $# -eq 0 ]; then set -- "$here"/*.metal; fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# The flags the in-process front end is meant to use, plus the shim
# directory as a system include path (its warnings are not the kernel's).
flags=(-x clcpp -cl-std=clc++2021 -cl-no-stdinc -target spir64-unknown-unknown
       -cl-single-precision-constant -Xclang -cl-ext=-cl_khr_fp64,-__opencl_c_fp64
       -O2 -emit-llvm -S -Wno-unknown-attributes
       -mllvm -inline-threshold=100000
       -isystem "$shim" -include metal_prelude)

fails=0
total=0
printf '%-34s %-9s %-9s %s\n' FILE COMPILES IR_CLEAN 'EXPECTED BUILTINS'
for f in "$@"; do
  total=$((total + 1))
  name="$(basename "$f" .metal)"
  ll="$tmp/$name.ll"
  extra=()
  while IFS= read -r line; do
    # shellcheck disable=SC2206
    extra+=(${line#*FLAGS:})
  done < <(grep -h '// FLAGS:' "$f" || true)
  if ! "$clang" "${flags[@]}" "${extra[@]}" "$f" -o "$ll" 2> "$tmp/$name.err"; then
    printf '%-34s %-9s %-9s %s\n' "$name" NO - -
    sed 's/^/    /' "$tmp/$name.err" | grep -E 'error' | head -20
    fails=$((fails + 1))
    continue
  fi
  # (d) dynamic initialization, before any optimization.
  dyninit=""
  if "$clang" "${flags[@]}" "${extra[@]}" -Xclang -disable-llvm-passes "$f" -o "$tmp/$name.raw.ll" \
      2> /dev/null && grep -qE '^define .*@(__cxx_global_var_init|_GLOBAL__sub_I)' "$tmp/$name.raw.ll"; then
    dyninit=" DYNAMIC-INIT"
  fi
  if [ "$verbose" = 1 ] && [ -s "$tmp/$name.err" ]; then
    sed 's/^/    /' "$tmp/$name.err"
  fi
  [ -n "$keep" ] && cp "$ll" "$keep/"

  # (b) callees of every call/invoke.
  grep -oE '(call|invoke) [^@]*@[-A-Za-z0-9_.$]+' "$ll" | sed 's/.*@//' | sort -u > "$tmp/$name.callees"
  grep -vE '^(air|llvm)\.' "$tmp/$name.callees" > "$tmp/$name.bad" || true
  # Callees defined in the module are user functions the inliner kept.
  : > "$tmp/$name.kept"
  : > "$tmp/$name.unresolved"
  while IFS= read -r callee; do
    if grep -qE "^define .*@$callee\(" "$ll"; then
      echo "$callee" >> "$tmp/$name.kept"
    else
      echo "$callee" >> "$tmp/$name.unresolved"
    fi
  done < "$tmp/$name.bad"
  clean=yes
  if [ -s "$tmp/$name.kept" ]; then clean=inl; fi
  if [ -s "$tmp/$name.unresolved" ]; then clean=NO; fi

  # (c) expected builtins.
  missing=()
  while IFS= read -r want; do
    [ -z "$want" ] && continue
    grep -qxF "$want" "$tmp/$name.callees" || missing+=("$want")
  done < <(grep -h '// EXPECT:' "$f" | sed 's/.*EXPECT://' | tr ' ' '\n' | grep -v '^$')
  rejected=()
  while IFS= read -r bad; do
    [ -z "$bad" ] && continue
    grep -qxF "$bad" "$tmp/$name.callees" && rejected+=("$bad")
  done < <(grep -h '// REJECT:' "$f" | sed 's/.*REJECT://' | tr ' ' '\n' | grep -v '^$')
  while IFS= read -r text; do
    [ -z "$text" ] && continue
    grep -qF -- "$text" "$ll" || missing+=("IR:'$text'")
  done < <(grep -h '// EXPECT-IR:' "$f" | sed 's/.*EXPECT-IR: *//')
  nexp=$(grep -h '// EXPECT:' "$f" | sed 's/.*EXPECT://' | wc -w)
  if [ ${#missing[@]} -eq 0 ] && [ ${#rejected[@]} -eq 0 ]; then
    exp="all $nexp$dyninit"
  else
    exp="MISSING ${missing[*]:-} ${rejected[*]:+REJECTED ${rejected[*]}}$dyninit"
  fi
  printf '%-34s %-9s %-9s %s\n' "$name" yes "$clean" "$exp"
  sed "s/^/    unexpected callee (declared, not defined): /" "$tmp/$name.unresolved"
  sed "s/^/    user function not inlined: /" "$tmp/$name.kept"
  if [ "$clean" != yes ] || [ ${#missing[@]} -ne 0 ] || [ ${#rejected[@]} -ne 0 ] || [ -n "$dyninit" ]; then
    fails=$((fails + 1))
  fi
done
echo "$((total - fails)) of $total files pass"

# The contract: BUILTINS.md's appendix against the headers.
contract=0
if command -v python3 > /dev/null; then
  sed -n '/^## Appendix/,$p' "$here/../BUILTINS.md" | sed -n '/^```$/,/^```$/p' | sed '1d;$d' \
    > "$tmp/documented.txt"
  if ! CLANG="$clang" python3 "$here/list_builtins.py" > "$tmp/actual.txt"; then
    echo "BUILTINS.md: list_builtins.py failed"
    contract=1
  elif ! diff -u "$tmp/documented.txt" "$tmp/actual.txt" > "$tmp/contract.diff"; then
    echo "BUILTINS.md appendix differs from the headers' builtins (- documented, + headers):"
    grep -E '^[-+][^-+]' "$tmp/contract.diff" | sed 's/^/    /'
    contract=1
  else
    echo "BUILTINS.md lists all $(wc -l < "$tmp/actual.txt") builtins"
  fi
fi
[ "$fails" -eq 0 ] && [ "$contract" -eq 0 ]
