#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""scripts/demo-browser.py: one buyer of scripts/demo's sale in a real browser (headless
Chromium, scripts/fg_browser.py), beside the generator's crowd. Run it in the client namespace.

usage: demo-browser.py --base URL --event ID --session-file FILE --spki-file FILE --shots DIR
                       --out FILE [--stop-file FILE] [--timeout S]

Opens the sale page with the session token of FILE (the shop's login cookie), takes a
screenshot of each state it shows (the countdown; with a draw, the open line, queued waiting for
the draw and the draw; queued with its place in line when the API gives one; the result), clicks
the button once as soon as it is enabled ("Buy now", or "Join the line" while a draw's line is
open), and follows the page until its state is final, --stop-file appears or --timeout seconds
pass. Writes to --out a JSON object: "states" (each state shown, in order, with the seconds since
the page was opened; "queued-draw" is queued before the draw, "queued-position" queued with a
place in line), "shots" (the screenshots' paths), "final", "positions" (the places in line
shown, in order) and "solve_ms" (the challenge's time in the browser, null without one).
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fg_browser import Browser  # noqa: E402

FINAL = {"paid", "sold_out", "expired", "cancelled", "closed", "no_event", "blocked",
         "session_bad", "error"}


def main():
    ap = argparse.ArgumentParser()
    for a in ("--base", "--session-file", "--spki-file", "--shots", "--out"):
        ap.add_argument(a, required=True)
    ap.add_argument("--event", type=int, required=True)
    ap.add_argument("--stop-file")
    ap.add_argument("--timeout", type=float, default=120)
    a = ap.parse_args()
    result = {"states": [], "shots": [], "final": None, "positions": [], "solve_ms": None}

    def write():
        with open(a.out + ".tmp", "w") as f:
            json.dump(result, f, indent=1)
        os.replace(a.out + ".tmp", a.out)

    b = Browser("buyer", a.shots, spki=open(a.spki_file).read())
    try:
        t0 = time.monotonic()
        b.open("%s/?event=%d" % (a.base, a.event), session=open(a.session_file).read().strip())
        last, last_label, clicked = None, None, False
        while time.monotonic() - t0 < a.timeout:
            st = b.state()
            # Click first, as a person waiting for the button does; the screenshot after.
            if not clicked and st in ("open", "queueing") and b.button_enabled():
                b.click_buy()
                clicked = True
                st = b.state()
            label = st
            if st == "queued":
                rec = b.record() or {}
                if rec.get("position") is not None:
                    label = "queued-position"
                    if not result["positions"] or result["positions"][-1] != rec["position"]:
                        result["positions"].append(rec["position"])
                elif rec.get("draw_at"):
                    label = "queued-draw"
            if label != last_label and st not in (None, "loading"):
                result["states"].append([label, round(time.monotonic() - t0, 2)])
                result["shots"].append(b.shot(label))
                rec = b.record() or {}
                result["solve_ms"] = rec.get("solve_ms")
                write()
                last_label = label
            if st not in (None, "loading"):
                last = st
            if st in FINAL or (a.stop_file and os.path.exists(a.stop_file)):
                break
            time.sleep(0.05 if st == "upcoming" else 0.2)
        result["final"] = last
        result["shots"].append(b.shot("last"))
        write()
    finally:
        b.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())
