#!/usr/bin/env python3
"""Lists every builtin the <metal_stdlib> shims can emit, with its LLVM
signature, as clang 16 declares it.

Every declaration with an asm label "air...." in the preprocessed
<metal_stdlib> gets one call in a generated translation unit; the IR's
`declare` lines are the signatures. Run once as is and once with
-DMTLEMU_CONSTANT_IS_OPENCL_CONSTANT (extra constant-address-space loads).

Usage: list_builtins.py [--names]   (--names: names only, one a line)
The appendix of compiler/msl/BUILTINS.md is this script's output; check.sh
compares the two.
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SHIM = os.path.normpath(os.path.join(HERE, "..", "shim"))
CLANG = os.environ.get("CLANG", "/usr/bin/clang-16")
FLAGS = ["-x", "clcpp", "-cl-std=clc++2021", "-cl-no-stdinc", "-target", "spir64-unknown-unknown",
         "-cl-single-precision-constant", "-Xclang", "-cl-ext=-cl_khr_fp64,-__opencl_c_fp64",
         "-isystem", SHIM, "-include", "metal_prelude"]
SCALARS = {"float", "half", "int", "uint", "ushort", "short", "char", "uchar", "long", "ulong", "bool"}


def split_top(params):
    out, depth, cur = [], 0, ""
    for ch in params:
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def declarations(tmp, defines):
    src = os.path.join(tmp, "all.metal")
    with open(src, "w") as f:
        f.write("#include <metal_stdlib>\n")
    pre = subprocess.run([CLANG] + FLAGS + defines + ["-E", "-P", src], check=True,
                         capture_output=True, text=True).stdout
    lines = ["#include <metal_stdlib>", "template <class T> T __val();"]
    for k, m in enumerate(re.finditer(r"([^;{}]*?)__asm__\(([^)]*)\)\s*;", pre)):
        decl = " ".join(m.group(1).split())
        decl = re.sub(r"__attribute__\(\(.*?\)\)\s*$", "", decl).strip()
        ret, name, params = re.match(r"(.*?)\b(\w+)\s*\((.*)\)$", decl).groups()
        before = pre[:m.start()]
        ns = "__air" if before.rfind("namespace __air {") > before.rfind("namespace metal {") else "metal"
        args = []
        for p in split_top(params):
            toks = p.split()
            if (len(toks) > 1 and re.match(r"^\w+$", toks[-1]) and toks[-1] not in SCALARS
                    and not p.endswith(">")):
                p = " ".join(toks[:-1])  # drop the parameter's name
            args.append("__val<%s>()" % p)
        lines.append("void __use%d() { %s::%s(%s); }" % (k, ns, name, ", ".join(args)))
    use = os.path.join(tmp, "use.metal")
    with open(use, "w") as f:
        f.write("\n".join(lines) + "\n")
    ll = subprocess.run([CLANG] + FLAGS + defines + ["-O0", "-emit-llvm", "-S", use, "-o", "-"],
                        check=True, capture_output=True, text=True).stdout
    attrs = dict(re.findall(r"^attributes (#\d+) = \{ (.*) \}$", ll, re.M))
    out = {}
    for m in re.finditer(r"^declare (.*?)@(air\.[\w.]+)\((.*)\)[^()]*?(#\d+)?$", ll, re.M):
        ret, name, params, attr = m.groups()

        def clean(t):
            t = re.sub(r"\b(dso_local|spir_func|noundef|zeroext|signext)\b\s*", "", t)
            return re.sub(r"\s+,", ",", t).strip()

        mem = "readnone" if "memory(none)" in attrs.get(attr or "", "") else ""
        out[name] = (clean(ret), clean(params), mem)
    return out


def main():
    with tempfile.TemporaryDirectory() as tmp:
        decls = declarations(tmp, [])
        decls.update(declarations(tmp, ["-DMTLEMU_CONSTANT_IS_OPENCL_CONSTANT"]))
    for name in sorted(decls):
        ret, params, mem = decls[name]
        if "--names" in sys.argv:
            print(name)
        else:
            print(("%s @%s(%s)" % (ret, name, params)) + ("  ; readnone" if mem else ""))


if __name__ == "__main__":
    main()
