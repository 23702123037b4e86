#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
#
# Every product source is compiled exactly once (issue 24): the build's compile_commands.json,
# test programs included, holds each .c file of the repository outside tests/ once; a test
# program links the product's static libraries and never lists a product source of its own.
#
# usage: test_compiled_once.py SOURCE_ROOT BUILD_ROOT
import collections
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fgtest  # noqa: E402


src_root, build_root = (os.path.realpath(a) for a in sys.argv[1:3])

with open(os.path.join(build_root, "compile_commands.json"), encoding="utf-8") as f:
    commands = json.load(f)
compiled = collections.Counter()
for e in commands:
    path = os.path.realpath(os.path.join(e["directory"], e["file"]))
    if path.startswith(build_root + os.sep) or not path.startswith(src_root + os.sep):
        continue  # generated at build time (the embedded SQL), or outside the tree
    rel = os.path.relpath(path, src_root)
    if not rel.startswith("tests" + os.sep) and rel.endswith(".c"):
        compiled[rel] += 1

# The product's sources: git's list when the tree is a checkout, the files on disk otherwise.
try:
    listed = subprocess.run(["git", "-C", src_root, "ls-files", "*.c"], check=True,
                            capture_output=True, text=True).stdout.split()
except (OSError, subprocess.CalledProcessError):
    listed = [os.path.relpath(os.path.join(d, n), src_root)
              for d, _, names in os.walk(src_root) for n in names if n.endswith(".c")]
product = sorted(p for p in listed if not p.startswith("tests" + os.sep)
                 and not p.startswith(os.path.relpath(build_root, src_root) + os.sep))

fgtest.ok(len(product) > 0 and len(compiled) > 0, "the build compiles product sources (%d of %d)"
       % (len(compiled), len(product)))
twice = sorted("%s: %d times" % (p, n) for p, n in compiled.items() if n > 1)
fgtest.ok(not twice, "no product source is compiled more than once", "\n".join(twice))
never = [p for p in product if compiled[p] == 0]
fgtest.ok(not never, "every product source is compiled", "\n".join(never))
fgtest.done()
