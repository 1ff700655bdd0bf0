#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Each part of include/cgstats.h compiles on its own, in C and in C++.

    header_parts.py HEADER CC [CXX]

HEADER is the umbrella header; its parts are cgstats/*.h beside it. Each
part, and the umbrella, is included alone (twice: its include guard) in a
translation unit compiled with -Wall -Wextra -Werror, as gnu11 and as
c99 -pedantic-errors, and as C++11 when CXX is given (or c++ is found).
The umbrella must include every part and name it in its overview, so a
new part cannot be left out of <cgstats.h>.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

hdr, cc = os.path.abspath(sys.argv[1]), sys.argv[2]
cxx = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] else shutil.which("c++")
inc = os.path.dirname(hdr)
parts = sorted(os.path.basename(p) for p in
               glob.glob(os.path.join(inc, "cgstats", "*.h")))
if not parts:
    print("FAIL: no parts in %s/cgstats" % inc)
    sys.exit(1)
fails = []
umbrella = open(hdr).read()
included = re.findall(r'^#include "cgstats/([\w.]+)"', umbrella, re.M)
for p in parts:
    if p not in included:
        fails.append("%s does not include cgstats/%s" % (hdr, p))
    if "<cgstats/%s>" % p not in umbrella:
        fails.append("%s's overview does not name <cgstats/%s>" % (hdr, p))
for p in included:
    if p not in parts:
        fails.append("%s includes cgstats/%s, which does not exist" % (hdr, p))

compilers = [("C gnu11", [cc, "-x", "c", "-std=gnu11"]),
             ("C c99", [cc, "-x", "c", "-std=c99", "-pedantic-errors"])]
if cxx:
    compilers.append(("C++11", [cxx, "-x", "c++", "-std=c++11"]))
else:
    print("C++: skipped, no C++ compiler")
flags = ["-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-I", inc]
n = 0
with tempfile.TemporaryDirectory() as d:
    for name in ["cgstats.h"] + ["cgstats/" + p for p in parts]:
        src = os.path.join(d, "tu.c")
        with open(src, "w") as f:
            f.write("#include <%s>\n#include <%s>\n" % (name, name))
            f.write("int cgs_parts_tu(void);\n"
                    "int cgs_parts_tu(void) { return 0; }\n")
        for label, cmd in compilers:
            r = subprocess.run(cmd + flags + [src], capture_output=True,
                               text=True)
            n += 1
            if r.returncode:
                fails.append("<%s> alone, %s:\n%s" % (name, label, r.stderr))
            else:
                print("compiled alone: <%s> (%s)" % (name, label))
for f in fails:
    print("FAIL: " + f)
print("%d passed, %d failed" % (n + 1 - len(fails), len(fails)))
sys.exit(1 if fails else 0)
