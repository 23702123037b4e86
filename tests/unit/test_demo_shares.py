#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
#
# scripts/demo-shares.py's bounds: against a stand-in psql that answers its three queries from
# a made-up sale, the bots' entrants and items are held to their share of the crowd, one-sided.
# Fair draws of a crowd pass; bots entering ten times their share, and a draw giving the
# bots twice their share of the items, are both caught (the old bounds, relative to the
# entrants, let the first pass); bots doing worse than their share is no alarm.
#
# usage: test_demo_shares.py DEMO_SHARES_PY
import json
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fgtest  # noqa: E402

SCRIPT = sys.argv[1]
BASE, CROWD, BOTS = 1000000, 2000, 40  # 2 % bots, as scripts/demo's default
DRAW_EV, FIRST_EV = 1, 2

# A stand-in psql: the answer to each of demo-shares.py's queries, from a JSON file.
FAKE_PSQL = r'''
import json, sys
sale = json.load(open(sys.argv[1]))
q = sys.argv[sys.argv.index("-c") + 1]
if "join draw_entrants" in q:
    users = sale["draw_items"]
elif "from draw_entrants" in q:
    users = sale["entrants"]
else:
    users = sale["first_items"]
print("\n".join(str(u) for u in users))
'''


def is_bot(u):
    i = u - BASE
    return (i + 1) * BOTS // CROWD > i * BOTS // CROWD


CROWD_USERS = list(range(BASE, BASE + CROWD))
BOT_USERS = [u for u in CROWD_USERS if is_bot(u)]
PEOPLE = [u for u in CROWD_USERS if not is_bot(u)]


def shares(tmp, entrants, draw_items, first_items):
    """Runs demo-shares.py on that sale; its JSON's "draw" object (None when it failed)."""
    sale = os.path.join(tmp, "sale.json")
    with open(sale, "w") as f:
        json.dump({"entrants": entrants, "draw_items": draw_items, "first_items": first_items}, f)
    psql = os.path.join(tmp, "psql.py")
    with open(psql, "w") as f:
        f.write(FAKE_PSQL)
    out = os.path.join(tmp, "shares.json")
    r = subprocess.run([sys.executable, SCRIPT, "--psql", "%s %s %s" % (sys.executable, psql, sale),
                        "--user-base", str(BASE), "--users", str(CROWD), "--bots", str(BOTS),
                        "--draw-users", str(CROWD), "--draw-bots", str(BOTS),
                        "--draw-event", str(DRAW_EV), "--first-event", str(FIRST_EV),
                        "--out", out], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        fgtest.diag(r.stderr)
        return None
    with open(out) as f:
        return json.load(f)["draw"]


def within(d):
    """The demo's two checks: (entrants ok, items ok)."""
    return (d["bot_entrants"] <= d["bot_entrants_max"], d["bot_items"] <= d["bot_items_max"])


with tempfile.TemporaryDirectory() as tmp:
    rng = random.Random(7)
    first = CROWD_USERS[:300]

    # A fair sale: everybody enters, 200 items drawn at random.
    d = shares(tmp, CROWD_USERS, rng.sample(CROWD_USERS, 200), first)
    fgtest.ok(d is not None and d["crowd"] == CROWD and d["crowd_bots"] == BOTS,
              "demo-shares.py reads the crowd: %d people, %d bots" % (CROWD, BOTS), d)
    fgtest.ok(d is not None and within(d) == (True, True),
              "a fair draw of the whole crowd passes both checks", d)

    # Fair draws of many seeds: none is flagged (the bound is a few standard deviations).
    flagged = 0
    for seed in range(5):
        r = random.Random(seed)
        entrants = r.sample(CROWD_USERS, 1500)
        d = shares(tmp, entrants, r.sample(entrants, 200), first)
        if d is None or within(d) != (True, True):
            flagged += 1
    fgtest.ok(flagged == 0,
              "5 more fair sales (1,500 entrants of the crowd, 200 items): none flagged")

    # Bots entering ten times their share (40 of 200 entrants), items drawn fairly from them.
    entrants = BOT_USERS + rng.sample(PEOPLE, 160)
    d = shares(tmp, entrants, rng.sample(entrants, 100), first)
    old_ok = d is not None and d["lo"] <= d["bot_items"] <= d["hi"]
    fgtest.ok(d is not None and not within(d)[0],
              "bots at ten times their share of the entrants are caught (%s of %s, at most %s)"
              % (d and d["bot_entrants"], d and d["entrants"], d and d["bot_entrants_max"]), d)
    fgtest.ok(d is not None and not within(d)[1],
              "  and so is their share of the items (%s of %s, at most %s; the bounds relative to "
              "the entrants, [%s, %s], %s)" % (d and d["bot_items"], d and d["items"],
                                               d and d["bot_items_max"], d and d["lo"],
                                               d and d["hi"], "pass" if old_ok else "fail"), d)

    # A draw giving the bots twice their share of 1,000 items (everybody entered).
    items = BOT_USERS + rng.sample(PEOPLE, 960)
    d = shares(tmp, CROWD_USERS, items, first)
    fgtest.ok(d is not None and within(d) == (True, False),
              "a draw giving the bots twice their share of the items is caught (%s of %s, at "
              "most %s)" % (d and d["bot_items"], d and d["items"], d and d["bot_items_max"]), d)

    # Bots doing worse than their share: no items at all, one-sided, no alarm.
    d = shares(tmp, CROWD_USERS, rng.sample(PEOPLE, 200), first)
    fgtest.ok(d is not None and within(d) == (True, True) and d["bot_items"] == 0,
              "bots with no item at all: no alarm (one-sided)", d)
fgtest.done()
