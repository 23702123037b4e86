#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The sale report's plot of answers a second (flashgatectl/sale_report.py, which
flashgatectl report and the demo run): every HTTP status a sale sees gets its own colour,
clearly apart from every other line's (issue 19: 202 and 401 were both blue, 401 taking
matplotlib's default first colour). Prints TAP.

usage: test_report_colors.py flashgatectl/sale_report.py
"""

import datetime
import importlib.util
import itertools
import sys

import matplotlib

matplotlib.use("Agg")
from matplotlib import colors as mcolors  # noqa: E402

n = 0
failed = 0


def ok(cond, desc):
    global n, failed
    n += 1
    if not cond:
        failed += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", n, desc))


def main():
    spec = importlib.util.spec_from_file_location("sale_report", sys.argv[1])
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    caught = {}

    close = mod.plt.close

    def keep(fig=None):  # the plot's axes, kept when its figure is closed
        if getattr(fig, "axes", None):
            caught["ax"] = fig.axes[0]
        close(fig)

    mod.plt.close = keep

    def plot(statuses):  # the colour of each status's line, the answers growing over 3 samples
        t0 = datetime.datetime(2026, 12, 1, 10, 0, 0)
        rows = [{"at": t0 + datetime.timedelta(seconds=i), "cp_id": 1,
                 "answers": {s: (i * (k + 3)) for k, s in enumerate(statuses)}}
                for i in range(3)]
        mod.plot_requests("/dev/null", rows)
        return {ln.get_label(): mcolors.to_rgb(ln.get_color())
                for ln in caught["ax"].get_lines() if ln.get_label() in statuses}

    def dist(a, b):  # in 0..255 per channel, Euclidean
        return sum(((x - y) * 255) ** 2 for x, y in zip(a, b)) ** 0.5

    # The answers of scripts/demo's sale: 401 the only one without a colour of its own before.
    demo = plot(["200", "202", "401", "403", "410", "429"])
    ok("202" in demo and "401" in demo and dist(demo["202"], demo["401"]) >= 120,
       "in the demo's plot 202 and 401 are clearly different (%s, %s)"
       % (mcolors.to_hex(demo.get("202", (0, 0, 0))), mcolors.to_hex(demo.get("401", (0, 0, 0)))))
    near = min((dist(demo["401"], c), s) for s, c in demo.items() if s != "401") \
        if "401" in demo else (0, "?")
    ok(near[0] >= 100, "401 is clearly apart from every other line of the demo's plot (nearest %s, "
       "distance %d)" % (near[1], near[0]))
    # Every status a sale may see.
    statuses = ["200", "202", "400", "401", "403", "404", "410", "425", "429", "503", "413",
                "431"]
    got = plot(statuses)
    ok(sorted(got) == sorted(statuses), "one line per status (%s)" % " ".join(sorted(got)))

    close = [(a, b, round(dist(got[a], got[b]))) for a, b in itertools.combinations(sorted(got), 2)
             if dist(got[a], got[b]) < 60]
    ok(not close, "every two statuses' colours are far apart (distance >= 60 of 441)%s"
       % ("" if not close else ": too close " + ", ".join("%s/%s %d" % c for c in close)))
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
