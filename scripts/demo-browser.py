#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""scripts/demo-browser.py: one buyer of scripts/demo's sale in a real browser (headless
Chromium, scripts/fg_browser.py), beside the generator's crowd. Run it in the client namespace.

usage: demo-browser.py --base URL --event ID --session-file FILE --spki-file FILE --shots DIR
                       --out FILE [--stop-file FILE] [--timeout S]

Opens the sale page with the session token of FILE (the shop's login cookie), takes a
screenshot of each state it shows (the countdown, queued with its place in line when the API
gives one, the result), clicks "buy" once as soon as the button is enabled, and follows the page
until its state is final, --stop-file appears or --timeout seconds pass. Writes to --out a JSON
object: "states" (each state shown, in order, with the seconds since the page was opened),
"shots" (the screenshots' paths) and "final".
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
    result = {"states": [], "shots": [], "final": None}

    def write():
        with open(a.out + ".tmp", "w") as f:
            json.dump(result, f, indent=1)
        os.replace(a.out + ".tmp", a.out)

    b = Browser("buyer", a.shots, spki=open(a.spki_file).read())
    try:
        t0 = time.monotonic()
        b.open("%s/?event=%d" % (a.base, a.event), session=open(a.session_file).read().strip())
        last, clicked = None, False
        while time.monotonic() - t0 < a.timeout:
            st = b.state()
            # Click first, as a person waiting for the button does; the screenshot after.
            if not clicked and st == "open" and b.button_enabled():
                b.click_buy()
                clicked = True
                st = b.state()
            if st != last and st not in (None, "loading"):
                result["states"].append([st, round(time.monotonic() - t0, 2)])
                label = st
                if st == "queued" and b.shown("position"):
                    label = "queued-position"
                result["shots"].append(b.shot(label))
                write()
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
