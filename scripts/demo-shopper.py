#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""scripts/demo-shopper.py: the buyers of scripts/demo's sale, as a sale page would act.

usage: demo-shopper.py --base http://198.18.0.2 --event ID --sessions FILE
                       [--parallel 16] [--deadline 30] [--double-every 10] --out FILE

FILE holds one "USER SESSION_TOKEN" line per buyer. Each buyer, concurrently with the others:
POST /api/v1/events/ID/token with the session, POST the reserve path with the purchase token,
then GET the result with the receipt until it is no longer "queued". 429, 425 and 503 are
retried after Retry-After (plus jitter), a "retry" result reserves again; every request has a
timeout and nothing runs past --deadline seconds. Every --double-every-th buyer clicks "buy"
twice, to show that a second reservation of a user is never a second item.

Writes a JSON summary to --out: answers by request and status, each buyer's final outcome, the
users whose result is "reserved", and the wall time. Run it in the client namespace.
"""

import argparse
import collections
import concurrent.futures
import http.client
import json
import random
import sys
import threading
import time
import urllib.parse

REQUEST_TIMEOUT_S = 5.0
POLL_INTERVAL_S = 0.2  # a real page polls every 1-2 s; the demo is in a hurry
MAX_TRIES = 20  # per step, for answers that say "try again"


class Sale:
    def __init__(self, base, event, deadline_s):
        u = urllib.parse.urlsplit(base)
        self.host = u.hostname
        self.port = u.port or 80
        self.event = event
        self.deadline = time.monotonic() + deadline_s
        self.lock = threading.Lock()
        self.answers = collections.defaultdict(collections.Counter)  # kind -> status -> n

    def late(self):
        return time.monotonic() >= self.deadline

    def request(self, kind, method, path, headers):
        """One request on its own connection (the data plane closes each one). Returns
        (status, headers, parsed body); status 0 when there was no answer."""
        status, hdrs, body = 0, {}, {}
        conn = http.client.HTTPConnection(self.host, self.port, timeout=REQUEST_TIMEOUT_S)
        try:
            conn.request(method, path, body=b"" if method == "POST" else None, headers=headers)
            resp = conn.getresponse()
            raw = resp.read()
            status, hdrs = resp.status, {k.lower(): v for k, v in resp.getheaders()}
            try:
                body = json.loads(raw) if raw else {}
            except ValueError:
                body = {"error": "not JSON: %r" % raw[:80]}
        except (OSError, http.client.HTTPException) as e:
            body = {"error": "%s: %s" % (type(e).__name__, e)}
        finally:
            conn.close()
        with self.lock:
            self.answers[kind][str(status) if status else "no answer"] += 1
        return status, hdrs, body

    def wait_retry_after(self, hdrs):
        try:
            ra = max(1.0, float(hdrs.get("retry-after", "1")))
        except ValueError:
            ra = 1.0
        # Jitter, so that the refused do not all come back in the same millisecond.
        pause = min(ra + random.uniform(0, 0.5), max(0.0, self.deadline - time.monotonic()))
        time.sleep(pause)

    def buy(self, user, session, double):
        """One buyer; returns its outcome: reserved, sold_out, duplicate, retry, ... or
        "<step> <status>" for an answer the page cannot do anything about."""
        ev = self.event
        if self.late():
            return "not started (deadline)"
        # 1. The purchase token and the hidden reserve path.
        for _ in range(MAX_TRIES):
            st, hdrs, body = self.request("token", "POST", "/api/v1/events/%d/token" % ev,
                                          {"Authorization": "Bearer " + session})
            if st == 200:
                break
            if st == 410:
                return "sold_out (410)"
            if st not in (425, 429, 503) or self.late():
                return "token %s" % (st or "no answer")
            self.wait_retry_after(hdrs)
        else:
            return "token gave up"
        token, rpath = body["token"], body["reserve_path"]

        result = "retry"
        for _ in range(3):  # a "retry" result means: reserve again
            # 2. Reserve.
            for _ in range(MAX_TRIES):
                st, hdrs, body = self.request("reserve", "POST", rpath, {"X-Flash-Token": token})
                if st == 202:
                    break
                if st == 200 and isinstance(body, dict) and body.get("status"):
                    # A returning buyer: the data plane already holds this user's result and
                    # answers with it (docs/api.md); nothing was forwarded.
                    return body["status"]
                if st == 410:
                    return "sold_out (410)"
                if st not in (425, 429, 503) or self.late():
                    return "reserve %s" % (st or "no answer")
                self.wait_retry_after(hdrs)
            else:
                return "reserve gave up"
            receipt = body["receipt"]
            if double:
                # The impatient buyer's second click: admitted too, decided "duplicate".
                self.request("reserve", "POST", rpath, {"X-Flash-Token": token})
            # 3. Poll the result with the receipt until it is decided.
            result = "queued"
            while result == "queued" and not self.late():
                time.sleep(POLL_INTERVAL_S)
                st, hdrs, body = self.request("result", "GET", "/api/v1/events/%d/result" % ev,
                                              {"X-Flash-Token": receipt})
                if st == 200:
                    result = body.get("status", "?")
                elif st in (429, 503):
                    self.wait_retry_after(hdrs)
                else:
                    return "result %s" % (st or "no answer")
            if result != "retry" or self.late():
                break
        return result


HOLDING = ("reserved", "ordered", "paid")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", required=True)
    ap.add_argument("--event", type=int, required=True)
    ap.add_argument("--sessions", required=True)
    ap.add_argument("--parallel", type=int, default=16)
    ap.add_argument("--deadline", type=float, default=30.0)
    ap.add_argument("--double-every", type=int, default=10)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    buyers = []
    with open(a.sessions) as f:
        for line in f:
            user, session = line.split()
            buyers.append((int(user), session))
    sale = Sale(a.base, a.event, a.deadline)
    outcome = {}
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.parallel) as pool:
        futs = {pool.submit(sale.buy, u, s, a.double_every > 0 and i % a.double_every == 0): u
                for i, (u, s) in enumerate(buyers, 1)}
        for fut in concurrent.futures.as_completed(futs):
            try:
                outcome[futs[fut]] = fut.result()
            except Exception as e:  # a bug here must not hide the others' outcomes
                outcome[futs[fut]] = "error %s" % type(e).__name__
    wall = time.monotonic() - t0
    summary = {
        "buyers": len(buyers),
        "wall_s": round(wall, 2),
        "answers": {k: dict(sorted(v.items())) for k, v in sorted(sale.answers.items())},
        "outcomes": dict(collections.Counter(outcome.values()).most_common()),
        # Reserved, or already an order (the order writer may be quicker than the poll).
        "holding": sum(1 for o in outcome.values() if o in HOLDING),
        "reserved_users": sorted(u for u, o in outcome.items() if o in HOLDING),
        "double_clickers": sum(1 for i in range(1, len(buyers) + 1)
                               if a.double_every > 0 and i % a.double_every == 0),
    }
    with open(a.out, "w") as f:
        json.dump(summary, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
