#!/usr/bin/python3
"""Runs a test file of Triton's own suite (python/test/unit/language/
test_core.py by default) on triton_metal, unchanged, and prints passed,
failed and skipped per test function, the slowest functions, and the
totals.

    MTLEMU_TRITON_DIR=/path/to/triton python3 bench/triton_test_suite.py \
        [--file python/test/unit/language/test_core.py] [--every N] \
        [--workers N] [--timeout S] [--json OUT.json] [-k EXPR]

MTLEMU_TRITON_DIR is a Triton checkout (triton-lang/triton, or
triton-lang/Triton-to-tile-IR at 50ec1da: Triton 3.6); nothing of it is
kept here. Tests run with pytest-xdist (python3-pytest-xdist) across
--workers processes (default: the cores), each test under --timeout
seconds (python3-pytest-timeout), with `-p triton_metal.pytest_plugin`
(`import triton` is triton_metal; what Apple GPUs lack is skipped with its
reason) and `--device cpu`. --every N runs every Nth test of the
collection, a sample spread over every function. Needs the build's
package: PYTHONPATH=build/python."""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def outcomes(junit_path):
    """[(test id, outcome, seconds, message)] from pytest's JUnit XML."""
    rows = []
    for case in ElementTree.parse(junit_path).getroot().iter("testcase"):
        name = case.get("name")
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome, message = "failed", child.get("message") or ""
                break
            if child.tag == "skipped":
                outcome, message = "skipped", child.get("message") or ""
        rows.append((name, outcome, float(case.get("time") or 0), message))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", default="python/test/unit/language/test_core.py")
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--workers", default="auto")
    parser.add_argument("--timeout", type=int, default=300)
    parser.add_argument("--json")
    parser.add_argument("-k", dest="keyword")
    args = parser.parse_args()
    triton = os.environ.get("MTLEMU_TRITON_DIR")
    if not triton or not os.path.isfile(os.path.join(triton, args.file)):
        sys.exit("triton_test_suite: set MTLEMU_TRITON_DIR to a Triton checkout "
                 f"(it must hold {args.file})")
    test_file = os.path.join(triton, args.file)
    cwd = os.path.dirname(test_file)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(REPO, "build", "python")] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    base = [sys.executable, "-m", "pytest", "-p", "triton_metal.pytest_plugin",
            "-p", "no:cacheprovider", "--device", "cpu", os.path.basename(test_file)]
    if args.keyword:
        base += ["-k", args.keyword]
    with tempfile.TemporaryDirectory() as tmp:
        junit = os.path.join(tmp, "junit.xml")
        start = time.time()
        subprocess.run(base + ["-q", "-n", str(args.workers), f"--timeout={args.timeout}",
                               f"--triton-metal-every={args.every}", f"--junitxml={junit}",
                               "-o", "junit_family=xunit1"],
                       cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        seconds = time.time() - start
        rows = outcomes(junit) if os.path.exists(junit) else []
    per_function = collections.OrderedDict()
    for name, outcome, t, message in rows:
        f = per_function.setdefault(name.split("[", 1)[0], collections.Counter())
        f[outcome] += 1
        f["seconds"] += t
    totals = collections.Counter(outcome for _, outcome, _, _ in rows)
    print(f"{'test function':40} {'passed':>7} {'failed':>7} {'skipped':>7} {'seconds':>8}")
    for name, c in sorted(per_function.items()):
        print(f"{name:40} {c['passed']:7} {c['failed']:7} {c['skipped']:7} {c['seconds']:8.1f}")
    print()
    print("slowest functions (seconds):",
          ", ".join(f"{n} {c['seconds']:.0f}" for n, c in
                    sorted(per_function.items(), key=lambda kv: -kv[1]["seconds"])[:10]))
    print(f"{len(rows)} tests run (every {args.every}), {seconds:.0f} s on "
          f"{args.workers} workers: {totals['passed']} passed, {totals['failed']} failed, "
          f"{totals['skipped']} skipped")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"every": args.every, "seconds": seconds,
                       "totals": dict(totals),
                       "tests": [{"id": n, "outcome": o, "seconds": t, "message": m[:500]}
                                 for n, o, t, m in rows]}, f, indent=1)


if __name__ == "__main__":
    main()
