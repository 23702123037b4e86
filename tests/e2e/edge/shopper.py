#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
#
# A shopper behind a TLS edge, as a browser's sale page would be: https only, the edge's
# certificate checked against the test's CA, from a source address of its own (so that the edge
# sees several clients). Prints one JSON line per command.
#
#   shopper.py get   BASE CA SRC PATH [HEADER:VALUE...]   -> {"status": N, "body": {...}}
#   shopper.py post  BASE CA SRC PATH [HEADER:VALUE...]
#   shopper.py sale  BASE CA SRC EVENT SESSION_TOKEN [ROUNDS]
#       token, reserve, then result polls until the answer is not "queued" (at most ROUNDS
#       polls, 20 by default, 0.25 s apart) -> {"token": N, "reserve": N, "receipt": "...",
#       "purchase_token": "...", "reserve_path": "...", "result": "...", "result_body": {...}}
#   shopper.py again BASE CA SRC EVENT PURCHASE_TOKEN RESERVE_PATH [ROUNDS]
#       the same reserve sent once more (a buyer's second click, or a retry after an outage),
#       then polls -> {"reserve": N, "receipt": "...", "result": "..."}
#   shopper.py many  BASE CA SRC N PATH [HEADER:VALUE...]
#       N GETs one after another -> {"statuses": {"200": n, "429": m, ...}}
import http.client
import json
import os
import ssl
import sys
import time
import urllib.parse


def connect(base, ca, src):
    u = urllib.parse.urlsplit(base)
    ctx = ssl.create_default_context(cafile=ca)
    return http.client.HTTPSConnection(u.hostname, u.port or 443, context=ctx, timeout=10,
                                       source_address=(src, 0))


# FG_SHOP_KEEP=1: every request of this run on one connection to the edge (as a browser keeps
# its connection), opened again only when the edge closed it; otherwise one connection each.
KEEP = os.environ.get("FG_SHOP_KEEP") == "1"
kept = None


def request(base, ca, src, method, path, headers):
    """One request: (status, parsed JSON body or text); status 0 when the edge could not be
    reached."""
    global kept
    try:
        c = kept if kept is not None else connect(base, ca, src)
        c.request(method, path, body=b"" if method == "POST" else None, headers=headers)
        r = c.getresponse()
        raw = r.read()
        if KEEP:
            kept = c
        else:
            c.close()
    except (OSError, http.client.HTTPException) as e:
        kept = None
        return 0, {"error": str(e)}
    try:
        body = json.loads(raw) if raw else {}
    except ValueError:
        body = {"text": raw.decode("utf-8", "replace")}
    return r.status, body


def headers_of(args):
    h = {}
    for a in args:
        k, _, v = a.partition(":")
        h[k] = v
    return h


def poll(base, ca, src, event, credential, rounds):
    status, body = 0, {}
    for _ in range(rounds):
        status, body = request(base, ca, src, "GET", "/api/v1/events/%s/result" % event,
                               {"X-Flash-Token": credential})
        if status != 200 or body.get("status") != "queued":
            break
        time.sleep(0.25)
    return status, body


def main(argv):
    cmd, base, ca, src = argv[1:5]
    rest = argv[5:]
    if cmd in ("get", "post"):
        status, body = request(base, ca, src, cmd.upper(), rest[0], headers_of(rest[1:]))
        print(json.dumps({"status": status, "body": body}))
    elif cmd == "many":
        counts = {}
        for _ in range(int(rest[0])):
            status, _ = request(base, ca, src, "GET", rest[1], headers_of(rest[2:]))
            counts[str(status)] = counts.get(str(status), 0) + 1
        print(json.dumps({"statuses": counts}))
    elif cmd == "sale":
        event, session = rest[0], rest[1]
        rounds = int(rest[2]) if len(rest) > 2 else 20
        out = {}
        status, body = request(base, ca, src, "POST", "/api/v1/events/%s/token" % event,
                               {"Authorization": "Bearer " + session})
        out["token"] = status
        if status == 200:
            out["purchase_token"] = body["token"]
            out["reserve_path"] = body["reserve_path"]
            status, body = request(base, ca, src, "POST", body["reserve_path"],
                                   {"X-Flash-Token": out["purchase_token"]})
            out["reserve"] = status
            if status == 202:
                out["receipt"] = body["receipt"]
                status, body = poll(base, ca, src, event, out["receipt"], rounds)
                out["result"] = body.get("status", "http %d" % status)
                out["result_body"] = body
        print(json.dumps(out))
    elif cmd == "again":
        event, token, path = rest[0], rest[1], rest[2]
        rounds = int(rest[3]) if len(rest) > 3 else 20
        status, body = request(base, ca, src, "POST", path, {"X-Flash-Token": token})
        out = {"reserve": status, "body": body}
        if status == 202:
            out["receipt"] = body["receipt"]
            status, body = poll(base, ca, src, event, out["receipt"], rounds)
            out["result"] = body.get("status", "http %d" % status)
        print(json.dumps(out))
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main(sys.argv)
