#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The code examples of include/cgstats.h and its parts compile against it.

    header_examples.py HEADER CC

HEADER is the umbrella header; its parts (cgstats/*.h beside it) are read
too.

An example is a run of comment lines indented by a tab (" *<TAB>...")
each ending in ';' (prose lines end otherwise). Each becomes the body of
a function of its own, with the handles the examples name declared, and
the lot is compiled with -Wall -Werror against the header. Files the
header points to (examples/<name>.c) must exist: they are built and run
by the tests (collector_e2e_agent_defaults runs examples/agent-defaults).
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

hdr, cc = os.path.abspath(sys.argv[1]), sys.argv[2]
top = os.path.dirname(os.path.dirname(hdr))
parts = os.path.join(os.path.dirname(hdr), "cgstats")
headers = [hdr] + sorted(glob.glob(os.path.join(parts, "*.h")))
blocks, cur = [], []
for h in headers:
    with open(h) as f:
        for line in f:
            m = re.match(r"^ \*\t(.*;)\s*$", line)
            if m:
                cur.append(m.group(1))
            elif cur:
                blocks.append(cur)
                cur = []
    if cur:
        blocks.append(cur)
        cur = []
if len(blocks) < 2:
    print("FAIL: found %d examples in %s" % (len(blocks), " ".join(headers)))
    sys.exit(1)
src = ["#include <cgstats.h>", ""]
for i, b in enumerate(blocks):
    src += ["void example_%d(void);" % i, "void example_%d(void)" % i, "{",
            "\tstruct cgs_listener *l = NULL;",
            "\tstruct cgs_rollup *r = NULL;",
            "\t(void)l;", "\t(void)r;"]
    src += ["\t" + s for s in b]
    src += ["}", ""]
text = "\n".join(src)
with tempfile.TemporaryDirectory() as d:
    c = os.path.join(d, "examples.c")
    with open(c, "w") as f:
        f.write(text)
    r = subprocess.run([cc, "-std=gnu11", "-Wall", "-Wno-unused-variable",
                        "-Wno-unused-result", "-Werror", "-c",
                        "-I", os.path.dirname(hdr), c, "-o",
                        os.path.join(d, "examples.o")],
                       capture_output=True, text=True)
    if r.returncode:
        print(text)
        print("FAIL: the header's examples do not compile:\n" + r.stderr)
        sys.exit(1)
alltext = "".join(open(h).read() for h in headers)
missing = [p for p in set(re.findall(r"examples/[\w-]+\.c", alltext))
           if not os.path.exists(os.path.join(top, p))]
if missing:
    print("FAIL: the header points to missing files: %s" % missing)
    sys.exit(1)
for b in blocks:
    print("compiled: " + " ".join(b))
print("1 passed, 0 failed")
