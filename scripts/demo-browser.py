#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""scripts/demo-browser.py: one buyer of scripts/demo's sale in a real browser (headless
Chromium, scripts/fg_browser.py), beside the generator's crowd. Run it in the client namespace.

usage: demo-browser.py --base URL --event ID --session-file FILE --spki-file FILE --shots DIR
                       --out FILE [--stop-file FILE] [--timeout S] [--hold-redis SOCK]
                       [--hold-s S]

Opens the sale page with the session token of FILE (the shop's login cookie), takes a
screenshot of each state it shows (the countdown; with a draw, the open line, queued waiting for
the draw and the draw; queued with its place in line when the API gives one; the result), clicks
the button once as soon as it is enabled ("Buy now", or "Join the line" while a draw's line is
open), and follows the page until its state is final, --stop-file appears or --timeout seconds
pass. Writes to --out a JSON object: "states" (each state shown, in order, with the seconds since
the page was opened; "queued-draw" is queued before the draw, "queued-position" queued with a
place in line), "shots" (the screenshots' paths), "final", "positions" (the places in line
shown, in order), "solve_ms" (the challenge's time in the browser, null without one) and
"held" (seconds the draw was held, see below; null when it was not).

A draw decides its entrants fast (about 180,000 a second here, docs/fairness.md): the places in
line of a few thousand entrants are gone before a page polls again. With --hold-redis (Redis's
Unix socket), once the buyer waits for the draw (watched from a second before draw_at) and the
draw has ordered its entrants, Redis's writes are paused (tests/lib/fgtest.py hold_draw, CLIENT
PAUSE WRITE) until the page has shown its place in line, at most --hold-s seconds (default 3),
as a draw of a million entrants shows them for half a minute: the ranks, the positions and the
decisions are the draw's own, only later. The programs using Redis need a redis.timeout longer
than that.
"""

import argparse
import json
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "lib"))
from fgtest import hold_draw  # noqa: E402
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
    ap.add_argument("--hold-redis")
    ap.add_argument("--hold-s", type=float, default=3)
    a = ap.parse_args()
    result = {"states": [], "shots": [], "final": None, "positions": [], "solve_ms": None,
              "held": None}
    # The draw's hold (see above): started a little before draw_at, it ends when the page has
    # shown a place in line (position_shown) or after --hold-s.
    position_shown = threading.Event()
    holder = None

    def hold(draw_at_ms):
        t = []

        # From a second before draw_at by the clock (the draw orders its entrants a second
        # after it), whenever the page's loop comes round.
        time.sleep(max(0.0, draw_at_ms / 1000 - 1 - time.time()))

        def on_hold(_):
            t.append(time.monotonic())
            position_shown.wait(a.hold_s)
            t.append(time.monotonic())

        hold_draw(a.hold_redis, a.event, 30, on_hold=on_hold, pause_s=a.hold_s + 1)
        if len(t) == 2:
            result["held"] = round(t[1] - t[0], 2)

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
            # Click first, as a person waiting for the button does; the screenshot after (the
            # open line photographed first: "Join the line" enabled).
            if not clicked and st in ("open", "queueing") and b.button_enabled():
                if st == "queueing" and last_label != st:
                    result["states"].append([st, round(time.monotonic() - t0, 2)])
                    result["shots"].append(b.shot(st))
                    last_label = st
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
                    # Started at the first sight of the line, the hold waits for its time by
                    # itself: on a loaded host the page's loop (a screenshot, a poll) may come
                    # round only after the draw has ordered and decided its few thousand.
                    if a.hold_redis and holder is None:
                        holder = threading.Thread(target=hold, args=(rec["draw_at"],),
                                                  daemon=True)
                        holder.start()
            if label != last_label and st not in (None, "loading"):
                result["states"].append([label, round(time.monotonic() - t0, 2)])
                result["shots"].append(b.shot(label))
                if label == "queued-position":
                    position_shown.set()
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
        if holder is not None:
            position_shown.set()
            holder.join(a.hold_s + 2)
        write()
    finally:
        b.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())
