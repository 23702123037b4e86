#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""scripts/demo-report.py: scripts/demo's page, an HTML page with PNG plots
(python3-matplotlib) beside the sales' own reports (flashgatectl report, one folder each): what
only the demo knows, linking to them.

usage: demo-report.py --out DIR --loadgen FILE --commits FILE --cap N --invariants FILE
                      --start T [--sale TEXT=SUBDIR]... [--browser FILE] [--shares FILE]
                      [--loadgen-label TEXT] [--title TEXT]

--loadgen: flashgate-loadgen's --report-json; --commits: "UNIX_SECOND COUNT" lines of orders
committed; --cap: the order writer's cap a second; --invariants: the demo's PASS/FAIL lines;
--start: the sale's start (Unix seconds); --sale: a sale's report written by flashgatectl
report in DIR/SUBDIR, linked as TEXT (its requests and items left shown here too);
--browser: scripts/demo-browser.py's JSON (its screenshots are shown); --shares:
scripts/demo-shares.py's JSON (the bots' share of the buyers and of the items, with the draw and
first come); --loadgen-label: what --loadgen's run was, before its figures. Writes
DIR/index.html, DIR/commits.png and DIR/latency.png, and prints the page's path.
"""

import argparse
import html
import json
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
from matplotlib import pyplot as plt  # noqa: E402

# The generator's outcomes that are not a result of the API's (docs/loadgen.md,
# tools/loadgen/lg_stats.h): a reader cannot guess them from their names.
OUTCOME_MEANS = {
    "other_result": "a last result the generator does not count as final: waiting (on a draw's "
                    "waiting list when it stopped polling)",
    "still_queued": "still queued when its polls ran out",
    "gave_up": "refused 425, 429 or 503 until its retries ran out",
    "conn_failed": "one of its connections was reset or timed out, so it never learnt its "
                   "result (the generator, the floods and the data plane share the machine's "
                   "cores); some may hold an item unknowing: the invariants count them",
}


def finish(fig, ax, path, heading, ylabel, grid_axis="both", **legend):
    """The parts every plot shares: labels, legend, grid, and the PNG written."""
    ax.set_title(heading)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8, **legend)
    ax.grid(alpha=0.3, axis=grid_axis)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_commits(commits, cap, t0, xlim, path):
    """Orders committed each second against the cap. The writer commits batch by batch, so one
    second may hold a whole batch; the 5-second average shows the pace it keeps."""
    fig, ax = plt.subplots(figsize=(9, 3.6))
    if xlim:
        ax.set_xlim(*xlim)
    ax.axvline(0, color="#000", linestyle=":", linewidth=1)
    ax.bar([s - t0 + 0.5 for s, _ in commits], [n for _, n in commits], width=0.8,
           color="#2b8a3e", label="orders committed in the second")
    if commits:
        per = dict(commits)
        first, last = commits[0][0], commits[-1][0]
        xs = list(range(first, last + 1))
        avg = [sum(per.get(s - k, 0) for k in range(5)) / min(5, s - first + 1) for s in xs]
        ax.plot([s - t0 + 1 for s in xs], avg, color="#1c7ed6", label="average of the last 5 s")
    ax.axhline(cap, color="#c92a2a", linestyle="--", label="cap %d/s" % cap)
    ax.set_xlabel("seconds since the sale's start")
    finish(fig, ax, path, "Orders committed to PostgreSQL a second, against the order writer's cap",
           "orders a second", "y")


def plot_latency(lg, path):
    fig, ax = plt.subplots(figsize=(9, 3.2))
    keys = ["p50", "p99", "p999", "max"]
    for i, (name, label) in enumerate((("latency_request_us", "one request"),
                                       ("latency_connection_us", "one connection"))):
        d = lg.get(name) or {}
        ax.bar([j + i * 0.4 for j in range(len(keys))], [float(d.get(k, 0)) for k in keys],
               width=0.4, label=label)
    ax.set_xticks([j + 0.2 for j in range(len(keys))], keys)
    ax.set_yscale("log")
    finish(fig, ax, path, "Latency percentiles seen by the generator", "µs (log scale)", "y")


def main():
    ap = argparse.ArgumentParser()
    for a in ("--out", "--loadgen", "--commits", "--invariants"):
        ap.add_argument(a, required=True)
    ap.add_argument("--cap", type=int, required=True)
    ap.add_argument("--start", type=float, required=True)
    ap.add_argument("--sale", action="append", default=[])
    ap.add_argument("--browser")
    ap.add_argument("--shares")
    ap.add_argument("--loadgen-label", default="")
    ap.add_argument("--title", default="flashgate demo: the sale report")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    with open(a.loadgen) as f:
        lg = json.load(f)
    commits = []
    with open(a.commits) as f:
        for line in f:
            w = line.split()
            if len(w) == 2:
                commits.append((int(w[0]), int(w[1])))
    with open(a.invariants) as f:
        inv = [line.rstrip("\n") for line in f if line.strip()]
    browser = None
    if a.browser and os.path.exists(a.browser):
        with open(a.browser) as f:
            browser = json.load(f)

    plot_commits(commits, a.cap, a.start, None, os.path.join(a.out, "commits.png"))
    plot_latency(lg, os.path.join(a.out, "latency.png"))

    e = html.escape
    ok = all(not line.lstrip().startswith("FAIL") for line in inv)
    out = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
           "<meta name='viewport' content='width=device-width, initial-scale=1'>",
           "<title>%s</title><style>" % e(a.title),
           "body{font:15px/1.5 system-ui,sans-serif;margin:2rem auto;max-width:60rem;"
           "padding:0 1rem;color:#1c1f24}img{max-width:100%}table{border-collapse:collapse}"
           "td,th{padding:.2rem .6rem;border-bottom:1px solid #ddd;text-align:left}"
           ".PASS{color:#2b8a3e;font-weight:700}.FAIL{color:#c92a2a;font-weight:700}"
           ".shots{display:flex;gap:1rem;flex-wrap:wrap}.shots figure{margin:0;width:14rem}"
           ".shots img{border:1px solid #ccc}</style></head><body>",
           "<h1>%s</h1>" % e(a.title),
           "<p><b>Verdict: <span class='%s'>%s</span></b></p>"
           % ("PASS" if ok else "FAIL", "every check passed" if ok else "a check failed")]
    users = lg.get("users", {})
    got = {k: v for k, v in (lg.get("outcomes") or {}).items() if v}
    outcomes = ", ".join("%s %s" % kv for kv in got.items())
    out.append("<p>%s%s buyers played by the generator in %s s; %s requests answered. "
               "Final results: %s.</p>" % (e(a.loadgen_label), e(str(users.get("done", "?"))),
                                           e(str(lg.get("elapsed_s", "?"))),
                                           e(str((lg.get("requests") or {}).get("answered", "?"))),
                                           e(outcomes or "none")))
    said = ["<li><b>%s</b>: %s</li>" % (k, e(OUTCOME_MEANS[k])) for k in got if k in OUTCOME_MEANS]
    if said:
        out.append("<ul>%s</ul>" % "".join(said))
    if a.shares and os.path.exists(a.shares):
        with open(a.shares) as f:
            sh = json.load(f)

        def pct(p, w):
            return "%.1f %%" % (100.0 * p / w) if w else "-"

        out.append("<h2>Bots and people: the draw against first come</h2>"
                   "<p>The same crowd in two sales at once: sale %s drew the order of everyone in "
                   "its line, sale %s served the first to come. A fair draw gives the bots about "
                   "their share of the entrants (between %s and %s items here); first come "
                   "gives them what their speed takes.</p><table><tr><th>sale</th>"
                   "<th>bots' share of the buyers (entrants)</th><th>bots' share of the items"
                   "</th></tr>" % (sh["draw"]["event"], sh["first"]["event"], sh["draw"]["lo"],
                                   sh["draw"]["hi"]))
        for key, name in (("draw", "with the draw"), ("first", "first come")):
            d = sh[key]
            out.append("<tr><td>%s %s</td><td>%s (%d of %d)</td><td><b>%s</b> (%d of %d)</td>"
                       "</tr>" % (d["event"], name, pct(d["bot_entrants"], d["entrants"]),
                                  d["bot_entrants"], d["entrants"], pct(d["bot_items"],
                                                                        d["items"]),
                                  d["bot_items"], d["items"]))
        out.append("</table>")
    if a.sale:
        # Each sale's own report, as any sale's (flashgatectl report): its figures from
        # PostgreSQL, its invariants, its plots and its admin commands (the audit log).
        out.append("<h2>The sales' reports (flashgatectl report)</h2><ul>")
        for s in a.sale:
            text, _, sub = s.partition("=")
            out.append("<li><a href='%s/index.html'>%s</a></li>" % (e(sub), e(text)))
        out.append("</ul>")
        text, _, sub = a.sale[0].partition("=")
        for png, cap in (("requests.png", "Requests a second by answer (all data planes)"),
                         ("stock.png", "Items left and orders: " + text)):
            out.append("<h2>%s</h2><a href='%s/index.html'><img src='%s/%s' alt='%s'></a>"
                       % (e(cap), e(sub), e(sub), png, e(cap)))
    for png, cap in (("commits.png", "Orders committed a second against the cap"),
                     ("latency.png", "Latency percentiles")):
        out.append("<h2>%s</h2><img src='%s' alt='%s'>" % (e(cap), png, e(cap)))
    out.append("<h2>Invariants</h2><table><tr><th></th><th>check</th><th>value</th></tr>")
    for line in inv:
        w = line.strip()
        verdict = w.split(None, 1)[0] if w else ""
        if verdict in ("PASS", "FAIL"):
            rest = w[len(verdict):].strip()
            m = re.match(r"(.*?)\s{2,}(\S.*)$", rest) or re.match(r"(.*)\s(\S+)$", rest)
            name, val = (m.group(1), m.group(2)) if m else (rest, "")
            out.append("<tr><td class='%s'>%s</td><td>%s</td><td>%s</td></tr>"
                       % (verdict, verdict, e(name.strip()), e(val.strip())))
        else:
            out.append("<tr><td></td><td colspan='2'>%s</td></tr>" % e(w))
    out.append("</table>")
    if browser:
        out.append("<h2>One buyer in a real browser</h2><p>States shown: %s.</p>"
                   "<div class='shots'>" % e(" → ".join(s for s, _ in browser["states"])))
        for p in browser["shots"]:
            rel = os.path.relpath(p, a.out)
            out.append("<figure><img src='%s' alt='%s'><figcaption>%s</figcaption></figure>"
                       % (e(rel), e(os.path.basename(p)), e(os.path.basename(p))))
        out.append("</div>")
    out.append("</body></html>")
    page = os.path.join(a.out, "index.html")
    with open(page, "w") as f:
        f.write("\n".join(out))
    print(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
