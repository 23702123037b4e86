#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""scripts/demo-shares.py: the bots' share of the buyers and of the items in scripts/demo's two
sales, the one with a draw and the one first come, from what PostgreSQL holds.

usage: demo-shares.py --psql CMD --user-base U --users N --bots NB
                      --draw-users N1 --draw-bots NB1 --draw-event E1 --first-event E2
                      --out FILE

The bots are flashgate-loadgen's (--bots, docs/loadgen.md): of the N users from U on, user
U + i is a bot when floor((i + 1) * NB / N) > floor(i * NB / N), NB of them spread evenly; in
the sale with a draw, whose crowd is its own run of the generator, the same with N1 and NB1. For
the sale with a draw the entrants are PostgreSQL's draw_entrants; for the first-come sale, which
has no line, every user of the crowd is one. The items are the users with an order of the
event (with the draw: an order made of the user's entrant reservation, the items the draw
gave). Of k items given to k entrants drawn at random from n of whom b are bots, the bots'
count has mean k b / n and variance k (b/n) (1 - b/n) (n - k) / (n - 1) (hypergeometric); "lo"
and "hi" are that mean -/+ 4.5 standard deviations and one item, the bounds a fair draw stays
in (it leaves them about once in 150,000 sales): what the draw gave, for the report. They say
nothing of the bots' advantage (the draw's own order, flashgatectl event verify-draw, keeps
them), so the check is against the crowd: a fair sale lets the bots in and gives them items at
their share of the crowd (c people, cb bots), the entrants and the items each a pick of the
crowd at random; "bot_entrants_max" and "bot_items_max" are the most bots such a pick of that
many gives, one-sided (the bots may do worse, never better): the mean + 4 standard deviations
and one (a fair sale goes above it about once in 30,000). Writes one JSON object to FILE:
{"draw": {...}, "first": {...}}, each with crowd, crowd_bots, entrants, bot_entrants, items,
bot_items, lo, hi, bot_entrants_max, bot_items_max.
"""

import argparse
import json
import math
import subprocess
import sys


def is_bot(i, n, nb):
    return 0 <= i < n and nb > 0 and (i + 1) * nb // n > i * nb // n


def users_of(psql, query):
    out = subprocess.run(psql + ["-c", query], capture_output=True, text=True, timeout=60,
                         check=True).stdout
    return [int(w) for w in out.split()]


def chance(n, b, k):
    """The bounds a fair draw of k of n entrants (b bots) keeps the bots' items in."""
    if n <= 0 or k <= 0:
        return 0, 0
    k = min(k, n)
    p = b / n
    mean = k * p
    sd = math.sqrt(k * p * (1 - p) * ((n - k) / (n - 1) if n > 1 else 0))
    return max(0, math.floor(mean - 4.5 * sd - 1)), min(k, b, math.ceil(mean + 4.5 * sd + 1))


def at_most(c, cb, k, z=4.0):
    """The most bots a fair pick of k of c people (cb of them bots) gives, one-sided: the
    hypergeometric mean + z standard deviations and one, at most min(k, cb)."""
    if c <= 0 or k <= 0:
        return 0
    k = min(k, c)
    p = cb / c
    sd = math.sqrt(k * p * (1 - p) * ((c - k) / (c - 1) if c > 1 else 0))
    return min(k, cb, math.ceil(k * p + z * sd + 1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--psql", required=True)
    for a in ("--user-base", "--users", "--bots", "--draw-users", "--draw-bots", "--draw-event",
              "--first-event"):
        ap.add_argument(a, type=int, required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    psql = a.psql.split()

    def bots(users, n=a.users, nb=a.bots):
        return sum(1 for u in users if is_bot(u - a.user_base, n, nb))

    out = {}
    crowd_bots = bots(range(a.user_base, a.user_base + a.users))
    for name, ev in (("draw", a.draw_event), ("first", a.first_event)):
        items = users_of(psql, "select distinct user_id from orders where event_id = %d" % ev)
        if name == "draw":
            # The items the draw gave: orders made of an entrant's reservation (the draw's
            # and the waiting list's, which gives items that came back by rank).
            items = users_of(psql, "select distinct o.user_id from orders o join draw_entrants d"
                             " on d.event_id = o.event_id and d.user_id = o.user_id and"
                             " d.reservation_id = o.reservation_id where o.event_id = %d" % ev)
            entrants = users_of(psql, "select user_id from draw_entrants where event_id = %d"
                                % ev)
            n, b = len(entrants), bots(entrants, a.draw_users, a.draw_bots)
            bot_items = bots(items, a.draw_users, a.draw_bots)
            c = a.draw_users
            cb = bots(range(a.user_base, a.user_base + c), a.draw_users, a.draw_bots)
        else:
            n, b = a.users, crowd_bots
            bot_items = bots(items)
            c, cb = a.users, crowd_bots
        lo, hi = chance(n, b, len(items))
        out[name] = {"event": ev, "crowd": c, "crowd_bots": cb, "entrants": n,
                     "bot_entrants": b, "items": len(items), "bot_items": bot_items, "lo": lo,
                     "hi": hi, "bot_entrants_max": at_most(c, cb, n),
                     "bot_items_max": at_most(c, cb, len(items))}
    with open(a.out, "w") as f:
        json.dump(out, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
