#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""scripts/demo-report.py, the demo's page, on a made-up run: the generator's outcomes that are
not a result of the API's (other_result, still_queued, gave_up, conn_failed) are said in words
when not 0, and only then (a newcomer read "other_result 11072, conn_failed 8358" with nothing
to tell what they were). Prints TAP.

usage: test_demo_report.py scripts/demo-report.py
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from fgtest import done, ok  # noqa: E402


def page(tmp, outcomes):
    """The report's HTML for a run with these outcomes."""
    lg = os.path.join(tmp, "lg.json")
    with open(lg, "w") as f:
        json.dump({"users": {"done": 100}, "elapsed_s": "1.0", "requests": {"answered": 300},
                   "outcomes": outcomes}, f)
    for name, text in (("commits", "1000 5\n1001 7\n"), ("inv", "  PASS  a check  1\n")):
        with open(os.path.join(tmp, name), "w") as f:
            f.write(text)
    out = os.path.join(tmp, "out")
    r = subprocess.run(["/usr/bin/python3", sys.argv[1], "--out", out, "--loadgen", lg,
                        "--commits", os.path.join(tmp, "commits"), "--cap", "500",
                        "--invariants", os.path.join(tmp, "inv"), "--start", "1000"],
                       capture_output=True, text=True, timeout=120)
    if not ok(r.returncode == 0, "demo-report.py writes the page"):
        print("# " + r.stderr.strip()[-400:].replace("\n", "\n# "))
    with open(os.path.join(out, "index.html")) as f:
        return f.read()


def main():
    tmp = tempfile.mkdtemp(prefix="fg-demo_report.")
    try:
        html = page(tmp, {"reserved": 40, "sold_out": 0, "other_result": 30, "still_queued": 0,
                          "gave_up": 5, "conn_failed": 25})
        for k, word in (("other_result", "waiting"), ("gave_up", "retries"),
                        ("conn_failed", "reset or timed out")):
            said = re.search(r"<li><b>%s</b>: [^<]*%s" % (k, word), html)
            ok(bool(said), "%s (not 0) is said in words (%s)" % (k, word))
        ok("<b>still_queued</b>" not in html, "still_queued, 0, is not")
        ok("<b>reserved</b>" not in html, "reserved, a result of the API's, needs no words")
        html = page(tmp, {"reserved": 60, "sold_out": 40})
        ok("<ul><li><b>" not in html, "a run with results only: no list of words")
    finally:
        shutil.rmtree(tmp)
    done()


if __name__ == "__main__":
    sys.exit(main())
