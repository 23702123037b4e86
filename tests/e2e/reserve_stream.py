#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A stream of buyers, one after the other, for tests that stop a daemon in the middle of it.

usage: reserve_stream.py --base http://198.18.10.2 --event ID --sessions FILE --out FILE
                         [--first N] [--count N] [--stop-file FILE]

FILE holds one "USER SESSION_TOKEN" line per buyer; buyers --first .. --first+--count-1 (line
numbers from 0) each POST /api/v1/events/ID/token, then POST the reserve path once. Each
reserve's answer goes to --out as one line "USER STATUS" (written at once, so that a test can
watch it grow), a token that was refused as "USER token-STATUS". It stops after the last buyer,
when the server has not answered three requests in a row (it stopped), or once --stop-file
exists, and then prints how
many reserves got each status. Every request has a 3 s timeout.
"""

import argparse
import collections
import http.client
import json
import os
import sys
import urllib.parse


def request(host, port, method, path, headers):
    c = http.client.HTTPConnection(host, port, timeout=3)
    try:
        c.request(method, path, body=b"" if method == "POST" else None, headers=headers)
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--event", type=int, required=True)
    ap.add_argument("--sessions", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--count", type=int, default=1 << 30)
    ap.add_argument("--stop-file")
    a = ap.parse_args()
    u = urllib.parse.urlsplit(a.base)
    host, port = u.hostname, u.port or 80
    with open(a.sessions) as f:
        buyers = [line.split() for line in f if line.strip()]
    buyers = buyers[a.first:a.first + a.count]
    seen = collections.Counter()
    silent = 0
    with open(a.out, "a", buffering=1) as out:
        for user, session in buyers:
            if silent >= 3 or (a.stop_file and os.path.exists(a.stop_file)):
                break
            try:
                st, body = request(host, port, "POST", "/api/v1/events/%d/token" % a.event,
                                   {"Authorization": "Bearer " + session})
                if st != 200:
                    out.write("%s token-%d\n" % (user, st))
                    seen["token-%d" % st] += 1
                    silent = 0
                    continue
                t = json.loads(body)
                st, body = request(host, port, "POST", t["reserve_path"],
                                   {"X-Flash-Token": t["token"]})
                out.write("%s %d\n" % (user, st))
                seen[str(st)] += 1
                silent = 0
            except (OSError, http.client.HTTPException):
                silent += 1
    print(json.dumps(dict(seen), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
