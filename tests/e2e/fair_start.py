#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The fair start (docs/fairness.md) seen by its buyers, for tests/e2e/test_fair_start.sh, which
starts the real programs, creates the sale and passes everything in FS_* variables. Runs in the
client namespace; speaks HTTP to the data plane, one request per connection, like a browser
behind an edge. Prints one line per check: "ok DESC", "not ok DESC", and "# ..." comments.

The sale FS_EV has a line that opens at FS_QUEUE_OPENS (ms), a draw at FS_DRAW_AT (ms), FS_STOCK
items and a challenge of FS_BITS bits. In turn:
- before the line opens: the commitment (seed_sha256) is in GET /api/v1/events/{id} and
  flashgatectl's event show, the seed is not; a purchase token is refused (425);
- while the line is open: the challenge in the token answer (p2, the token's MAC as prefix);
  a reserve without a solution, with a wrong one and with another token's (replayed) is refused
  403 and makes no entrant; FS_BUYERS buyers solve it and reserve (202, queued), some twice
  (one place per user); a difficulty change (flashgatectl event pow) applies to the tokens
  minted after it, a token minted before keeps its own; a queued poll says when the draw is;
- each buyer polls through the draw, which the control plane decides one entrant a batch
  (draw_batch 1) and which is held for a moment (Redis pauses writes) once the ranks are out
  and every few entrants, as a large draw takes its time: the buyers see a position, and it
  never increases;
- after the draw: the seed is revealed and its SHA-256 is the commitment; the entrants' digest
  and every rank recomputed here from docs/fairness.md's formulas match; the first
  min(stock, n) entrants by rank hold an item, every other entrant is told waiting (the
  waiting list) with the entrants ahead of it;
  flashgatectl event verify-draw passes, and fails on a swapped pair of ranks.
Writes the users told they hold an item to FS_TOLD (for check-invariants --told).
"""

import hashlib
import json
import os
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fgtest  # noqa: E402 (TAP, docs/tokens.md and docs/fairness.md in Python)
from fgtest import (diag, draw_order, entrants_digest, find, hold_draw, solve,  # noqa: E402
                    solves, until)

E = os.environ
HOST = E["FS_DP_ADDR"]
EV = int(E["FS_EV"])
AUTH = bytes.fromhex(E["FS_AUTH_HEX"])
CTL = [E["FS_CTL"], "--socket", E["FS_ADMIN"]]
PSQL = E["FS_PSQL"].split()
REDIS = ["redis-cli", "-s", E["FS_REDIS_SOCK"]]
QUEUE_OPENS = int(E["FS_QUEUE_OPENS"])  # ms
DRAW_AT = int(E["FS_DRAW_AT"])  # ms
STOCK = int(E["FS_STOCK"])
BITS = int(E["FS_BITS"])
BUYERS = int(E["FS_BUYERS"])
TOLD = E["FS_TOLD"]
HOLDS = {"reserved", "ordered", "paid", "duplicate"}

# ---- TAP --------------------------------------------------------------------------------------


check = fgtest.ok


# ---- HTTP: one request per connection ---------------------------------------------------------


class Answer:
    def __init__(self, raw):
        head, _, body = raw.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        self.status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
        self.headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            self.headers[k.strip().lower()] = v.strip()
        try:
            self.json = json.loads(body) if body else {}
        except ValueError:
            self.json = {}
        if not isinstance(self.json, dict):
            self.json = {}
        self.body = body.decode("latin-1", "replace")

    def __repr__(self):
        return "%d %s" % (self.status, self.body)


def http(method, path, headers=None):
    lines = ["%s %s HTTP/1.1" % (method, path), "Host: " + HOST, "Connection: close"]
    for k, v in (headers or {}).items():
        lines.append("%s: %s" % (k, v))
    if method == "POST":
        lines.append("Content-Length: 0")
    raw = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    for attempt in range(3):
        got = b""
        try:
            with socket.create_connection((HOST, 80), timeout=5) as s:
                s.sendall(raw)
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    got += chunk
        except OSError:
            if got:
                break
            time.sleep(0.2)
            continue
        break
    return Answer(got)


def event():
    return http("GET", "/api/v1/events/%d" % EV).json


def session(user):
    return fgtest.session(AUTH, 1, user, int(time.time()) + 3600)


def token(user):
    """POST .../token: (answer, token, reserve path, challenge or None)."""
    a = http("POST", "/api/v1/events/%d/token" % EV, {"Authorization": "Bearer " + session(user)})
    j = a.json
    return a, j.get("token"), j.get("reserve_path"), j.get("challenge")


def reserve(path, tok, solution=None):
    h = {"X-Flash-Token": tok}
    if solution is not None:
        h["X-Flash-Solution"] = solution
    return http("POST", path, h)


def poll(proof):
    return http("GET", "/api/v1/events/%d/result" % EV, {"X-Flash-Token": proof})


def ctl(*args, json_out=True):
    r = subprocess.run(CTL + (["--json"] if json_out else []) + list(args), capture_output=True,
                       text=True, stdin=subprocess.DEVNULL, timeout=30)
    out = r.stdout
    if json_out and r.returncode == 0:
        try:
            out = json.loads(r.stdout)
        except ValueError:
            out = {}
    return r.returncode, out, r.stderr


def sql(q):
    return subprocess.run(PSQL + ["-c", q], capture_output=True, text=True,
                          timeout=20).stdout.strip()


def redis(*args):
    return subprocess.run(REDIS + list(args), capture_output=True, text=True,
                          timeout=10).stdout.strip()


# ---- the steps --------------------------------------------------------------------------------


def before_the_line():
    """Returns the commitment seen before the line opens (hex), or None."""
    ev = event()
    now = time.time() * 1000
    check(now < QUEUE_OPENS and ev.get("state") == "upcoming",
          "before the line opens the sale is upcoming (%s, %.1f s before)"
          % (ev.get("state"), (QUEUE_OPENS - now) / 1000), ev)
    commit = ev.get("seed_sha256") or find(ev, "draw", "seed_sha256")
    check(isinstance(commit, str) and len(commit) == 64,
          "the commitment (seed_sha256) is in GET /api/v1/events/%d before the line opens" % EV,
          ev)
    check(ev.get("queue_opens_at") == QUEUE_OPENS and ev.get("draw_at") == DRAW_AT,
          "the event answers queue_opens_at and draw_at (%s, %s)"
          % (ev.get("queue_opens_at"), ev.get("draw_at")), ev)
    check(not find(ev, "draw", "seed"), "... and not the seed (%r)" % find(ev, "draw", "seed"))
    rc, show, err = ctl("event", "show", str(EV))
    shown = show.get("seed_sha256") if isinstance(show, dict) else None
    if shown is None and isinstance(show, dict):
        shown = find(show, "event", "seed_sha256") or find(show, "draw", "seed_sha256")
    check(rc == 0 and shown == commit, "flashgatectl event show gives the same commitment",
          "rc %d, %r %s" % (rc, show, err))
    a, tok, _, _ = token(100)
    check(a.status == 425, "a purchase token before the line opens: 425 (%d)" % a.status, a)
    return commit


class Buyer:
    def __init__(self, user, receipt=None):
        self.user = user
        self.receipt = receipt
        self.seen = []  # (status, position) of each poll
        self.final = None


def challenge_checks():
    """The challenge: p2 tokens, 403 without a solution, with a wrong or a replayed one. Returns
    the users refused (never entrants) and the Buyer who entered here (a list)."""
    a, tok, path, ch = token(9001)
    if not check(a.status == 200 and isinstance(ch, dict),
                 "while the line is open a purchase token comes with a challenge", a):
        return [], []
    check(tok.startswith("p2.") and ch.get("bits") == BITS and ch.get("prefix") ==
          tok.rsplit(".", 1)[1], "... a p2 token, its MAC as prefix, %d bits (%s)" % (BITS, ch))
    a = reserve(path, tok)
    check(a.status == 403 and "solution" in a.body.lower(),
          "a reserve without X-Flash-Solution: 403 (%s)" % a)
    good = solve(ch)
    wrong = int(good) + 1
    while solves(ch["prefix"], wrong, BITS):
        wrong += 1
    a = reserve(path, tok, str(wrong))
    check(a.status == 403, "a reserve with a wrong solution: 403 (%s)" % a)
    a = reserve(path, tok, "12x4")
    check(a.status in (400, 403), "a reserve with a malformed solution: 400 or 403 (%s)" % a)
    # Replayed: user 9002 sends user 9001's good solution with its own token.
    a2, tok2, path2, ch2 = token(9002)
    replay = good
    if ch2 and solves(ch2["prefix"], replay, BITS):
        diag("9001's solution happens to solve 9002's challenge too: 9003 instead")
        a2, tok2, path2, ch2 = token(9003)
    a = reserve(path2, tok2, replay)
    check(a.status == 403, "another token's solution (replayed): 403 (%s)" % a)
    # 9001 then solves its own: an entrant.
    a = reserve(path, tok, good)
    check(a.status == 202 and a.json.get("status") == "queued",
          "the same token with its own solution: 202 queued (%s)" % a)
    return [9002, 9003], ([Buyer(9001, a.json.get("receipt"))] if a.status == 202 else [])


def difficulty_change():
    """flashgatectl event pow: the next tokens get the new bits; an older token keeps its own.
    Returns the Buyers who entered here."""
    a, old_tok, old_path, old_ch = token(9101)
    rc, out, err = ctl("event", "pow", str(EV), str(BITS + 2), json_out=False)
    check(rc == 0, "flashgatectl event pow %d %d" % (EV, BITS + 2), err or out)
    seen = until(lambda: event().get("challenge_bits") == BITS + 2, 10)
    check(seen, "the event's challenge_bits becomes %d" % (BITS + 2), event())
    a, tok, path, ch = token(9102)
    check(a.status == 200 and (ch or {}).get("bits") == BITS + 2 and
          tok.split(".")[4] == str(BITS + 2),
          "a token minted after the change carries %d bits (%s)" % (BITS + 2, ch))
    entered = []
    a = reserve(old_path, old_tok, solve(old_ch))
    if check(a.status == 202, "a token minted before it is still accepted with its %d bits (%s)"
             % (old_ch["bits"], a)):
        entered.append(Buyer(9101, a.json.get("receipt")))
    # The old difficulty's solution does not pass for the new token (unless it happens to).
    n = 0
    while not solves(ch["prefix"], n, BITS) or solves(ch["prefix"], n, BITS + 2):
        n += 1
    a = reserve(path, tok, str(n))
    check(a.status == 403, "a solution of only %d bits for a %d-bit token: 403 (%s)"
          % (BITS, BITS + 2, a))
    a = reserve(path, tok, solve(ch))
    if check(a.status == 202, "... and one of %d bits: 202 (%s)" % (BITS + 2, a)):
        entered.append(Buyer(9102, a.json.get("receipt")))
    rc, out, err = ctl("event", "pow", str(EV), str(BITS), json_out=False)
    check(rc == 0 and until(lambda: event().get("challenge_bits") == BITS, 10),
          "the difficulty set back to %d" % BITS, err)
    return entered


def enter(b, twice):
    a, tok, path, ch = token(b.user)
    if a.status != 200 or not tok:
        return "token %s" % a
    sol = solve(ch) if ch else None
    r = reserve(path, tok, sol)
    if r.status != 202 or not r.json.get("receipt"):
        return "reserve %s" % r
    b.receipt = r.json["receipt"]
    if twice == 1:  # the same token again
        r = reserve(path, tok, sol)
    elif twice == 2:  # a new token
        a, tok, path, ch = token(b.user)
        r = reserve(path, tok, solve(ch) if ch else None)
    if twice and r.status not in (200, 202):
        return "second reserve %s" % r
    return None


def follow(b, stop):
    """Polls b's result until it is final (or stop is set); keeps what each poll said."""
    while not stop.is_set():
        a = poll(b.receipt)
        if a.status == 200:
            st = a.json.get("status")
            b.seen.append((st, a.json.get("position") if st == "queued" else a.json.get("ahead"),
                           a.json.get("wait_ms"), a.json.get("draw_at")))
            if st in HOLDS or st in ("sold_out", "expired", "cancelled", "waiting"):
                b.final = st
                return
        time.sleep(0.15 if time.time() * 1000 > DRAW_AT - 2000 else 0.5)


def main():
    commit = before_the_line()
    if not until(lambda: event().get("state") == "queueing",
                 (QUEUE_OPENS - time.time() * 1000) / 1000 + 10):
        check(False, "the sale shows queueing once the line opens", event())
        return 1
    check(True, "the sale shows queueing once the line opens")
    refused, entered = challenge_checks()
    entered += difficulty_change()

    buyers = [Buyer(1001 + i) for i in range(BUYERS)]
    errors = []
    for i, b in enumerate(buyers):
        e = enter(b, (0, 1, 0, 2)[i % 4])
        if e:
            errors.append("%d: %s" % (b.user, e))
    check(not errors, "%d buyers solve the challenge and join the line (202), every other one "
          "twice" % BUYERS, "\n".join(errors))
    users = sorted([b.user for b in entered] + [b.user for b in buyers if b.receipt])
    q = until(lambda: (lambda a: a if a.json.get("draw_at") else None)(poll(buyers[0].receipt)),
              3) or poll(buyers[0].receipt)
    check(q.status == 200 and q.json.get("status") == "queued" and
          q.json.get("draw_at") == DRAW_AT and q.json.get("position") is None and
          isinstance(q.json.get("wait_ms"), int) and 0 < q.json["wait_ms"] <= DRAW_AT - QUEUE_OPENS,
          "a queued poll before the draw: draw_at, wait_ms until it, no position (%s)" % q)
    n = until(lambda: find(event(), "draw", "entrants") == len(users), 5)
    check(n, "the event counts %d entrants: one place per user (%s)"
          % (len(users), find(event(), "draw", "entrants")), event())
    hl = redis("hlen", "fg:{%d}:entrants" % EV)
    check(hl == str(len(users)), "Redis holds %d entrants (%s)" % (len(users), hl))
    ev = event()
    check(ev.get("state") == "queueing" and not find(ev, "draw", "seed"),
          "before the draw: still queueing, no seed", ev)

    stop = threading.Event()
    threads = [threading.Thread(target=follow, args=(b, stop), daemon=True) for b in buyers]
    for t in threads:
        t.start()
    # The draw, held for 0.6 s as soon as it decides its first entrant and again every 5.
    stops = hold_draw(E["FS_REDIS_SOCK"], EV, (DRAW_AT - time.time() * 1000) / 1000 + 30,
                      every=5, hold_s=0.8)
    check(stops and stops[0] < 5, "the draw was held while deciding (cursor at each hold: %s)"
          % stops)
    diag("the draw held with these many entrants decided: %s" % stops)
    done = until(lambda: find(event(), "draw", "state") == "done", 30, step=0.2)
    check(done, "the draw is done (%s)" % json.dumps(event().get("draw")))
    for t in threads:
        t.join(timeout=30)
    stop.set()

    ev = event()
    seed_hex = find(ev, "draw", "seed") or ""
    check(len(seed_hex) == 64 and hashlib.sha256(bytes.fromhex(seed_hex)).hexdigest() == commit,
          "after the draw the seed is revealed, and its SHA-256 is the commitment", ev)
    digest = entrants_digest(EV, users).hex()
    check(find(ev, "draw", "entrants_digest") == digest,
          "the entrants' digest is the one of the %d users who entered" % len(users),
          "published %s, computed %s" % (find(ev, "draw", "entrants_digest"), digest))
    if len(seed_hex) != 64:
        return 1
    order = draw_order(bytes.fromhex(seed_hex), EV, users)
    ranks = sql("select user_id || ' ' || rank from draw_entrants where event_id = %d "
                "order by rank" % EV).split("\n")
    stored = [int(r.split()[0]) for r in ranks if r.strip()]
    check(stored == order, "every rank recomputed from the seed matches PostgreSQL's draw_entrants",
          "stored %s\ncomputed %s" % (stored[:12], order[:12]))
    check(not set(refused) & set(stored), "the buyers refused for their solution are not entrants")
    winners = set(order[:min(STOCK, len(order))])

    # What each buyer was told.
    wrong, rises, positions = [], [], 0
    for b in buyers:
        if b.final is None:  # one last look
            a = poll(b.receipt)
            b.final = a.json.get("status")
        want = "hold" if b.user in winners else "waiting"
        got = "hold" if b.final in HOLDS else b.final
        if got != want:
            wrong.append("%d (rank %d): %s, want %s" % (b.user, order.index(b.user) + 1, b.final,
                                                        want))
        ps = [p for st, p, _, _ in b.seen if st == "queued" and p is not None]
        positions += len(ps)
        if any(later > earlier for earlier, later in zip(ps, ps[1:])):
            rises.append("%d: %s" % (b.user, ps))
    check(not wrong, "the first %d entrants by rank hold an item, every other one is told "
          "waiting (the waiting list)" % len(winners), "\n".join(wrong))
    # Nothing came back yet: a waiting entrant has everyone between the stock and itself ahead.
    bad_ahead = []
    for b in buyers:
        if b.final == "waiting":
            a = poll(b.receipt).json
            if a.get("ahead") != order.index(b.user) - len(winners) or \
                    a.get("rank") != order.index(b.user) + 1:
                bad_ahead.append("%d (rank %d): %s" % (b.user, order.index(b.user) + 1, a))
    check(not bad_ahead, "each waiting entrant is told how many are ahead of it on the list "
          "(rank - 1 - stock)", "\n".join(bad_ahead))
    saw = sum(1 for b in buyers if any(p is not None for st, p, _, _ in b.seen if st == "queued"))
    check(saw >= len(buyers) // 2, "during the draw the waiting buyers poll their position "
          "(%d of %d saw one, %d positions in all)" % (saw, len(buyers), positions))
    check(not rises, "a waiting buyer's position never increases", "\n".join(rises))
    late = [b.user for b in buyers if b.user not in winners and
            [st for st, _, _, _ in b.seen if st != "queued"][:1] not in ([], ["waiting"])]
    check(not late, "an entrant beyond the stock learns waiting as the first result after queued",
          late)
    # The told file holds what the buyers were told, not the test's own winners: every entrant
    # whose last poll says it holds an item (check-invariants compares it with the orders).
    for b in entered:
        if b.receipt:
            b.final = poll(b.receipt).json.get("status")
    told = sorted(b.user for b in buyers + entered if b.final in HOLDS)
    diag("told they hold an item: %d users" % len(told))
    with open(TOLD, "w") as f:
        for u in told:
            f.write("%d\n" % u)

    # verify-draw, once every winner's order is written.
    until(lambda: sql("select count(*) from orders where event_id = %d" % EV) == str(len(winners)),
          30)
    rc, out, err = ctl("event", "verify-draw", str(EV), json_out=False)
    check(rc == 0, "flashgatectl event verify-draw %d passes" % EV, out + err)
    diag("verify-draw: " + " ".join(out.split())[:300])
    a, b = order[0], order[-1]
    # rank >= 1 and unique: the first one goes out of the way above the others first.
    swap = ("begin; update draw_entrants set rank = {n} + 1 where event_id = {e} and user_id = {a};"
            " update draw_entrants set rank = {ra} where event_id = {e} and user_id = {b};"
            " update draw_entrants set rank = {rb} where event_id = {e} and user_id = {a};"
            " commit;")
    sql(swap.format(e=EV, a=a, b=b, ra=1, rb=len(order), n=len(order)))
    rc, out, err = ctl("event", "verify-draw", str(EV), json_out=False)
    check(rc == 1, "verify-draw fails once two ranks are swapped in PostgreSQL (exit %d)" % rc,
          out + err)
    diag("verify-draw on the tampered draw: " + " ".join((out + err).split())[:300])
    sql(swap.format(e=EV, a=b, b=a, ra=1, rb=len(order), n=len(order)))
    rc, out, err = ctl("event", "verify-draw", str(EV), json_out=False)
    check(rc == 0, "... and passes again once they are put back", out + err)

    # After the draw, first come: nothing left for a newcomer.
    a, tok, path, ch = token(9201)
    r = reserve(path, tok, solve(ch) if ch else None) if tok else a
    check(r.status == 410 or (a.status == 410), "after the draw a newcomer is told sold out "
          "(token %d, reserve %d)" % (a.status, r.status))
    return 0


if __name__ == "__main__":
    sys.exit(main())
