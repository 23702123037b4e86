#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""docs/api.md's tables against a running data plane and control plane; prints TAP.

usage: api_contract.py DOCS/api.md      (run in the client's network namespace)

Every table of the page under a `<!-- contract: KIND ARGS -->` comment is read and each row is
checked by doing what the row says and looking at the answer:

  routes                    each route answers, and its CORS preflight is whole
  fields STATUS ROUTE       the answer STATUS of ROUTE has every field the table names
  refusals ROUTE|parser     each row's status, {"error": text} and headers, by a scenario
  result-statuses ROUTE     each result status is what a poll shows in that situation

Every answer also gets the checks of "What every answer has in common": Cache-Control: no-store,
Connection: close, JSON (but 204), the configured origin's CORS lines, Retry-After >= 1 on 425,
429 and 503. A row this script cannot bring about is reported `ok N - ... # SKIP reason`; a row it
does not know at all (a row added to the page later) too, with the reason "no scenario": never a
silent pass. An unknown KIND is a failure (the page and this file disagree on the format).

The environment says where things are (tests/e2e/test_api_contract.sh sets it): FG_DP_ADDR, the
data plane; FG_ORIGIN, its admission.cors_origin; FG_CTL and FG_ADMIN, flashgatectl and the control
plane's admin socket; FG_AUTH_KEY (hex) and FG_AUTH_KID, the auth key set; FG_EV_OPEN, FG_EV_OTHER
(open, large stock), FG_EV_UP (upcoming), FG_EV_CLOSED (closed), FG_EV_SOLD (open, stock 1, sold
out here); FG_SRC_ADDRS, spare client addresses (space-separated) for the address's rules and
limits; FG_HOST_NETNS and FG_OW_CMD, the namespace and command line of the order writer, started
here (nsenter) once the scenarios that need no order are done; FG_LIMITS, the limits to restore.
"""

import json
import os
import re
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fgtest  # noqa: E402 (TAP; docs/tokens.md in Python)

HOST = os.environ.get("FG_DP_ADDR", "198.18.10.2")
ORIGIN = os.environ.get("FG_ORIGIN", "https://shop.example")
CTL = os.environ.get("FG_CTL", "")
ADMIN = os.environ.get("FG_ADMIN", "")
AUTH_KEY = bytes.fromhex(os.environ.get("FG_AUTH_KEY", "00" * 32))
AUTH_KID = int(os.environ.get("FG_AUTH_KID", "1"))
EV = {k: int(os.environ.get("FG_EV_" + k.upper(), "0"))
      for k in ("open", "other", "up", "closed", "sold")}
SRC = os.environ.get("FG_SRC_ADDRS", "").split()
LIMITS = os.environ.get("FG_LIMITS", "ip 1000/2000 user 10/20 device 10/20 forward 10000").split()

# ---- TAP ---------------------------------------------------------------------------------------

def tap(ok, what, skip=None):
    """One row's line (tests/lib/fgtest.py): a SKIP with its reason when skip is given."""
    if skip is not None:
        fgtest.skip(what, skip)
    else:
        fgtest.ok(ok, what)


diag = fgtest.diag


# ---- HTTP: one request per connection, sent with one send() (one segment) -----------------------

class Answer:
    def __init__(self, raw):
        self.raw = raw
        head, _, self.body = raw.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        m = re.match(r"HTTP/1\.1 (\d{3}) ", lines[0] + " ")
        self.status = int(m.group(1)) if m else 0
        self.headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            self.headers.setdefault(k.strip().lower(), []).append(v.strip())
        try:
            self.json = json.loads(self.body) if self.body else None
        except ValueError:
            self.json = None

    def header(self, name):
        v = self.headers.get(name.lower())
        return v[0] if v else None

    def __str__(self):
        return self.raw.decode("latin-1", "replace")


ANSWERS = []  # every answer, for the common checks at the end


def http(method, path, headers=None, src=None, origin=True, raw=None):
    """Sends one request (HEAD, GET, POST, OPTIONS) and returns its Answer."""
    if raw is None:
        lines = ["%s %s HTTP/1.1" % (method, path), "Host: " + HOST]
        if origin:
            lines.append("Origin: " + ORIGIN)
        for k, v in (headers or {}).items():
            lines.append("%s: %s" % (k, v))
        if method == "POST":
            lines.append("Content-Length: 0")
        raw = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(5)
    if src:
        s.bind((src, 0))
    s.connect((HOST, 80))
    s.sendall(raw)
    got = b""
    while True:
        try:
            chunk = s.recv(65536)
        except OSError:
            break
        if not chunk:
            break
        got += chunk
    s.close()
    a = Answer(got)
    a.method, a.path = method, path
    ANSWERS.append(a)
    return a


def common_problems(a):
    """What "What every answer has in common" promises that a lacks."""
    p = []
    if a.header("Cache-Control") != "no-store":
        p.append("Cache-Control is %r" % a.header("Cache-Control"))
    if a.header("Connection") != "close":
        p.append("Connection is %r" % a.header("Connection"))
    if a.status != 204 and a.header("Content-Type") != "application/json":
        p.append("Content-Type is %r" % a.header("Content-Type"))
    if a.status == 204 and a.header("Content-Length") is not None:
        p.append("a 204 with Content-Length")
    if a.header("Access-Control-Allow-Origin") != ORIGIN or a.header("Vary") != "Origin":
        p.append("CORS: Access-Control-Allow-Origin %r, Vary %r" %
                 (a.header("Access-Control-Allow-Origin"), a.header("Vary")))
    if a.status in (425, 429, 503):
        ra = a.header("Retry-After")
        if ra is None or not ra.isdigit() or int(ra) < 1:
            p.append("Retry-After is %r" % ra)
    return p


# ---- the control plane and tokens -------------------------------------------------------------

def ctl(*args):
    """flashgatectl --json ARGS; returns the JSON answer (None on failure)."""
    r = subprocess.run([CTL, "--socket", ADMIN, "--json"] + list(args), capture_output=True,
                       text=True, stdin=subprocess.DEVNULL, timeout=20)
    if r.returncode != 0:
        diag("flashgatectl %s: exit %d: %s" % (" ".join(args), r.returncode, r.stderr.strip()))
        return None
    try:
        return json.loads(r.stdout) if r.stdout.strip() else {}
    except ValueError:
        return {}


NEXT_USER = [7000]


def new_user():
    NEXT_USER[0] += 1
    return NEXT_USER[0]


def session(user, ttl_s=3600):
    return fgtest.session(AUTH_KEY, AUTH_KID, user, int(time.time()) + ttl_s)


def forge(token):
    """The token with the last character of its MAC changed."""
    return token[:-1] + ("A" if token[-1] != "A" else "B")


def get_token(ev, user):
    a = http("POST", "/api/v1/events/%d/token" % ev, {"Authorization": "Bearer " + session(user)})
    if a.status != 200 or a.json is None:
        return None, None, a
    return a.json.get("token"), a.json.get("reserve_path"), a


def reserve(path, tok, extra=None):
    h = {"X-Flash-Token": tok} if tok is not None else {}
    h.update(extra or {})
    return http("POST", path, h)


def poll(ev, tok):
    return http("GET", "/api/v1/events/%d/result" % ev, {"X-Flash-Token": tok})


def until(fn, timeout=10.0, step=0.1):
    """Calls fn until it returns a true value or timeout seconds passed; returns the last value."""
    end = time.time() + timeout
    while True:
        v = fn()
        if v or time.time() > end:
            return v
        time.sleep(step)


def until_status(fn, status, timeout=10.0):
    """Calls fn (which returns an Answer) until it answers status; returns the last answer."""
    last = [None]

    def once():
        last[0] = fn()
        return last[0].status == status
    until(once, timeout)
    return last[0]


def with_limits(spec, fn):
    """Runs fn with the limits changed by spec ("ip 1/1"), then restores FG_LIMITS."""
    ctl("limits", "set", *spec.split())
    try:
        return fn()
    finally:
        ctl("limits", "set", *LIMITS)
        time.sleep(0.3)  # the data plane has them again before the next row


def with_rule(kind, value, fn):
    ctl("rules", "add", kind, value)
    try:
        return fn()
    finally:
        ctl("rules", "del", kind, value)


def take_src():
    return SRC.pop(0) if SRC else None


# ---- scenarios: each returns the Answer that the row describes ----------------------------------

ROUTE_PATHS = {
    "token": "/api/v1/events/%d/token",
    "result": "/api/v1/events/%d/result",
    "event": "/api/v1/events/%d",
}


def do_route(route, ev, src=None, user=None):
    """The route's request for event ev, as a client with a valid token would send it."""
    user = user or new_user()
    if route == "token":
        return http("POST", ROUTE_PATHS["token"] % ev,
                    {"Authorization": "Bearer " + session(user)}, src=src)
    if route == "event":
        return http("GET", ROUTE_PATHS["event"] % ev, src=src)
    if route == "result":
        tok, _, _ = get_token(EV["open"], user)
        return http("GET", ROUTE_PATHS["result"] % ev, {"X-Flash-Token": tok or "x"}, src=src)
    # reserve: a real path and token of the open event, or a made-up path for other events
    tok, path, _ = get_token(EV["open"], user)
    if ev != EV["open"]:
        path = "/api/v1/events/%d/reserve/1-AAAAAAAAAAAAAAAA" % ev
    return http("POST", path or "/", {"X-Flash-Token": tok or "x"}, src=src)


def blocked_address(route):
    src = take_src()
    if src is None:
        return None, "no spare client address (FG_SRC_ADDRS)"
    return with_rule("ip", src, lambda: until_status(lambda: do_route(route, EV["open"], src),
                                                      403)), None


def limited_address(route):
    src = take_src()
    if src is None:
        return None, "no spare client address (FG_SRC_ADDRS)"
    tok, path, _ = get_token(EV["open"], new_user())  # before the limit: from our own address

    def once():
        if route == "token":
            return do_route("token", EV["open"], src)
        if route == "result":
            return http("GET", ROUTE_PATHS["result"] % EV["open"], {"X-Flash-Token": tok or "x"},
                        src=src)
        return http("POST", path or "/", {"X-Flash-Token": tok or "x"}, src=src)
    return with_limits("ip 1/1", lambda: until_status(once, 429)), None


def limited_user_token():
    user = new_user()
    return with_limits("user 1/1", lambda: until_status(
        lambda: do_route("token", EV["open"], user=user), 429)), None


def limited_user_reserve():
    def run():
        def once():
            user = new_user()
            tok, path, a = get_token(EV["open"], user)  # takes the user's only token
            return reserve(path, tok) if tok else a
        return until_status(once, 429)
    return with_limits("user 1/1", run), None


def blocked_user(route):
    user = new_user()
    if route == "token":
        return with_rule("user", str(user), lambda: until_status(
            lambda: do_route("token", EV["open"], user=user), 403)), None
    tok, path, a = get_token(EV["open"], user)
    if tok is None:
        return a, None
    return with_rule("user", str(user), lambda: until_status(lambda: reserve(path, tok), 403)), None


def blocked_device():
    tok, path, a = get_token(EV["open"], new_user())
    if tok is None:
        return a, None
    return with_rule("device", "contract-stolen", lambda: until_status(
        lambda: reserve(path, tok, {"X-Device-Id": "contract-stolen"}), 403)), None


def limited_device():
    def once():
        tok, path, a = get_token(EV["open"], new_user())
        if tok is None:
            return a
        return reserve(path, tok, {"X-Device-Id": "contract-phone"})
    return with_limits("device 1/1", lambda: until_status(once, 429)), None


def forward_budget():
    def once():
        got = None
        for _ in range(4):
            tok, path, a = get_token(EV["open"], new_user())
            got = reserve(path, tok) if tok else a
            if got.status == 429:
                break
        return got
    return with_limits("forward 1", lambda: until_status(once, 429)), None


def reserve_case(kind):
    user = new_user()
    tok, path, a = get_token(EV["open"], user)
    if tok is None:
        return a
    if kind == "path":
        return reserve("/api/v1/events/%d/reserve/1-AAAAAAAAAAAAAAAA" % EV["open"], tok)
    if kind == "no-token":
        return reserve(path, None)
    if kind == "other-event":
        other, _, _ = get_token(EV["other"], user)
        return reserve(path, other or "x")
    if kind == "invalid":
        return reserve(path, forge(tok))
    if kind == "bad-session":
        return reserve(path, tok, {"Authorization": "Bearer " + forge(session(user))})
    if kind == "other-user":
        return reserve(path, tok, {"Authorization": "Bearer " + session(new_user())})
    raise ValueError(kind)


def result_case(kind):
    user = new_user()
    tok, _, a = get_token(EV["open"], user)
    if tok is None:
        return a
    if kind == "no-token":
        return http("GET", ROUTE_PATHS["result"] % EV["open"])
    if kind == "other-event":
        other, _, _ = get_token(EV["other"], user)
        return poll(EV["open"], other or "x")
    if kind == "invalid":
        return poll(EV["open"], forge(tok))
    raise ValueError(kind)


# Rows no scenario here can bring about against a healthy sale, by a part of their error text
# (the first that matches).
UNREACHABLE = [
    ("no sale key", "needs a data plane with the control plane's state but no sale key "
                    "(tests/packet/test_admission.c checks it)"),
    ("not ready", "needs a data plane without the control plane's state "
                  "(tests/packet/test_admission.c checks it)"),
    ("busy", "needs the bridge's ring full (tests/packet/test_admission.c checks it)"),
    ("purchase token expired", "needs a purchase token past admission.purchase_token_ttl, "
                               "made with the sale key (tests/packet/test_admission.c checks it)"),
]

CRLF = "\r\n"


def raw_request(first, headers=(), extra=""):
    lines = [first, "Host: " + HOST, "Origin: " + ORIGIN] + list(headers)
    return (CRLF.join(lines) + CRLF + extra + CRLF).encode("latin-1")


# The parser's refusals (and the router's), by error text: the raw request that earns each.
PARSER = {
    "request must fit in one TCP segment": lambda: raw_request(
        "GET /api/v1/events/1 HTTP/1.1", ["X-Pad: " + "p" * 1800]),
    "duplicate Authorization": lambda: raw_request(
        "GET /healthz HTTP/1.1", ["Authorization: Bearer a", "Authorization: Bearer b"]),
    "request-target too long": lambda: raw_request("GET /" + "a" * 1100 + " HTTP/1.1"),
    "too many header fields": lambda: raw_request(
        "GET /healthz HTTP/1.1", ["X-F%d: v" % i for i in range(25)]),
    "method not implemented": lambda: raw_request("BREW /healthz HTTP/1.1"),
    "Transfer-Encoding is not supported": lambda: raw_request(
        "POST /api/v1/events/1/token HTTP/1.1", ["Transfer-Encoding: chunked"]),
    "HTTP version not supported": lambda: raw_request("GET /healthz HTTP/2.0"),
    "no such resource": lambda: raw_request("GET /no/such/thing HTTP/1.1"),
    "method not allowed on this resource": lambda: raw_request(
        "POST /healthz HTTP/1.1", ["Content-Length: 0"]),
}


def refusal_scenario(route, status, error, when):
    """(a function returning (Answer, skip reason), None) or (None, the reason to skip)."""
    for words, reason in UNREACHABLE:
        if words in error:
            return None, reason
    if route == "parser":
        if error in PARSER:
            req = PARSER[error]
            return (lambda: (http(None, "(raw)", raw=req()), None)), None
        return None, "no raw request for this row in tests/e2e/api_contract.py yet"
    when = when.lower()
    if route in ("token", "reserve", "result"):
        if status == 403 and error == "blocked" and "address" in when:
            return (lambda: blocked_address(route)), None
        if status == 429 and error == "too many requests from this address":
            return (lambda: limited_address(route)), None
    if error == "no such event":
        return (lambda: (do_route(route, 999999), None)), None
    if error == "the sale has not started":
        return (lambda: (do_route(route, EV["up"]), None)), None
    if error == "sold out":
        return (lambda: (until_status(lambda: do_route(route, EV["sold"]), 410), None)), None
    if error == "the sale is closed":
        return (lambda: (do_route(route, EV["closed"]), None)), None
    if route == "token":
        table = {
            "log in first: Authorization: Bearer <session token>":
                lambda: (http("POST", ROUTE_PATHS["token"] % EV["open"]), None),
            "too many requests for this user": limited_user_token,
            "session expired: log in again": lambda: (http(
                "POST", ROUTE_PATHS["token"] % EV["open"],
                {"Authorization": "Bearer " + session(new_user(), -10)}), None),
            "invalid session": lambda: (http(
                "POST", ROUTE_PATHS["token"] % EV["open"],
                {"Authorization": "Bearer " + forge(session(new_user()))}), None),
        }
        if error == "blocked" and "user" in when:
            return (lambda: blocked_user("token")), None
        if error in table:
            return table[error], None
    if route == "reserve":
        cases = {
            "no such reserve path": "path",
            "X-Flash-Token with the purchase token is required": "no-token",
            "the purchase token is for another event": "other-event",
            "invalid purchase token": "invalid",
            "the session does not prove the purchase token's user": "bad-session",
            "the purchase token belongs to another user": "other-user",
        }
        if error in cases:
            kind = cases[error]
            return (lambda: (reserve_case(kind), None)), None
        if error == "blocked" and "user" in when:
            return (lambda: blocked_user("reserve")), None
        if error == "too many requests for this user":
            return limited_user_reserve, None
        if error == "too many requests from this device":
            return limited_device, None
        if error == "too many buyers at once: retry":
            return forward_budget, None
    if route == "result":
        cases = {
            "X-Flash-Token with the receipt or the purchase token is required": "no-token",
            "the token is for another event": "other-event",
            "invalid token": "invalid",
        }
        if error in cases:
            kind = cases[error]
            return (lambda: (result_case(kind), None)), None
    return None, "no scenario for this row in tests/e2e/api_contract.py yet"


# ---- reading the page --------------------------------------------------------------------------

def cells(line):
    """The cells of a Markdown table row; "\\|" stays inside a cell."""
    parts = re.split(r"(?<!\\)\|", line.strip())
    return [c.strip().replace("\\|", "|") for c in parts[1:-1]]


def unquote(cell):
    m = re.fullmatch(r"`([^`]*)`", cell.strip())
    return m.group(1) if m else cell.strip()


def tables(path):
    """[(kind, args, header cells, [row cells])] of every table under a contract comment."""
    out = []
    lines = open(path, encoding="utf-8").read().splitlines()
    for i, line in enumerate(lines):
        m = re.fullmatch(r"<!-- contract: (\S+)(.*?) -->", line.strip())
        if not m:
            continue
        rows = []
        j = i + 1
        while j < len(lines) and lines[j].startswith("|"):
            rows.append(cells(lines[j]))
            j += 1
        out.append((m.group(1), m.group(2).split(), rows[0] if rows else [], rows[2:], i + 1))
    return out


def route_of(method, path):
    """token, reserve, result, event, healthz, or None, for a route as the page writes it."""
    for name, pat in (("healthz", r"/healthz"), ("event", r"/api/v1/events/\{id\}"),
                      ("token", r"/api/v1/events/\{id\}/token"),
                      ("reserve", r"/api/v1/events/\{id\}/reserve/.*"),
                      ("result", r"/api/v1/events/\{id\}/result")):
        if re.fullmatch(pat, path):
            return name
    return None


# ---- the kinds of table ------------------------------------------------------------------------

def check_answer(what, a, status, error=None, headers=""):
    """One row's verdict: status, the error body, the headers the row names, the common ones."""
    probs = common_problems(a)
    if a.status != status:
        probs.insert(0, "status %d, not %d" % (a.status, status))
    if error is not None and (a.json or {}).get("error") != error:
        probs.append("body %r" % a.body[:120])
    for h in filter(None, (x.strip() for x in headers.split(","))):
        name, _, value = h.partition(":")
        v = a.header(name.strip())
        if v is None:
            probs.append("no %s" % name.strip())
        elif value.strip() and not value.strip().startswith(("seconds", "<")) and \
                re.fullmatch(r"\d+", value.strip()) and v != value.strip():
            probs.append("%s is %s, not %s" % (name.strip(), v, value.strip()))
    tap(not probs, what + ("" if not probs else ": " + "; ".join(probs)))
    if probs:
        diag(a)


def check_refusals(args, rows):
    route = route_of(args[0], args[1]) if len(args) == 2 else None
    if args == ["parser"]:
        route, args = "parser", ["any", "request"]
    if route is None:
        tap(False, "refusals %s: a route this test knows" % " ".join(args))
        return
    seen = {}
    for r in rows:
        if len(r) < 3 or not r[0].isdigit():
            tap(True, "refusals %s: row %r" % (args[1], r), skip="not a row of status, error, ...")
            continue
        status, error = int(r[0]), unquote(r[1])
        headers = r[2] if len(r) >= 4 else ""
        when = r[-1]
        what = "%s %s: %d %s%s" % (args[0], args[1], status, json.dumps(error),
                                   " (%s)" % when if when else "")
        key = (status, error, when)
        if key in seen:
            tap(True, what, skip="the same row as above: checked once")
            continue
        seen[key] = True
        fn, reason = refusal_scenario(route, status, error, when)
        if fn is None:
            tap(True, what, skip=reason)
            continue
        a, reason = fn()
        if a is None:
            tap(True, what, skip=reason)
            continue
        check_answer(what, a, status, error, headers)


def check_fields(args, rows, ctx):
    status, method, path = int(args[0]), args[1], args[2]
    route = route_of(method, path)
    a = {
        "event": lambda: http("GET", "/api/v1/events/%d" % EV["open"]),
        "token": lambda: do_route("token", EV["open"]),
        "reserve": lambda: ctx["reserve"](),
        "result": lambda: poll(EV["open"], ctx["token"]()),
    }.get(route, lambda: None)()
    if a is None:
        tap(True, "fields of %s %s" % (method, path), skip="no scenario for this route")
        return
    for r in rows:
        names = re.findall(r"`([a-z_]+)`", r[0]) if r else []
        what = "%d %s %s has %s" % (status, method, path, ", ".join(names) or repr(r))
        if not names:
            tap(True, what, skip="no field name in backquotes")
            continue
        body = a.json if isinstance(a.json, dict) else {}
        missing = [n for n in names if n not in body]
        probs = (["status %d" % a.status] if a.status != status else []) + \
            (["missing %s" % ", ".join(missing)] if missing else []) + common_problems(a)
        tap(not probs, what + ("" if not probs else ": " + "; ".join(probs)))
        if probs:
            diag(a)


def check_routes(rows, ctx):
    for r in rows:
        m = re.fullmatch(r"`(GET|POST) (/\S*)`", r[0]) if r else None
        if not m:
            if r and r[0].startswith("`OPTIONS`"):
                tap(True, "routes: %s" % r[0], skip="checked with each route above")
            else:
                tap(True, "routes: %r" % r, skip="not a METHOD /path row")
            continue
        method, path = m.groups()
        route = route_of(method, path)
        if route is None:
            tap(True, "routes: %s %s" % (method, path), skip="no scenario for this route")
            continue
        real = {"healthz": "/healthz", "event": "/api/v1/events/%d" % EV["open"],
                "token": "/api/v1/events/%d/token" % EV["open"],
                "reserve": ctx["path"](), "result": "/api/v1/events/%d/result" % EV["open"]}[route]
        a = http("OPTIONS", real, {"Access-Control-Request-Method": method})
        want = "GET, HEAD, OPTIONS" if method == "GET" else "POST, OPTIONS"
        probs = common_problems(a)
        for h, v in (("Allow", want), ("Access-Control-Allow-Methods", want),
                     ("Access-Control-Max-Age", "600")):
            if a.header(h) != v:
                probs.append("%s is %r" % (h, a.header(h)))
        allow_h = a.header("Access-Control-Allow-Headers") or ""
        for h in ("Authorization", "X-Flash-Token", "X-Device-Id", "X-Flash-Solution"):
            if h not in allow_h:
                probs.append("Access-Control-Allow-Headers lacks " + h)
        if a.status != 204 or a.body:
            probs.insert(0, "status %d, %d bytes of body" % (a.status, len(a.body)))
        tap(not probs, "OPTIONS %s from the shop's origin: a whole preflight%s" %
            (path, "" if not probs else ": " + "; ".join(probs)))
        if probs:
            diag(a)
        if route == "healthz":
            a = http("GET", "/healthz")
            check_answer("GET /healthz: 200 {\"status\":\"ok\"}", a, 200)


def poll_until_not(ev, tok, statuses, timeout=10.0):
    """Polls ev's result with tok until its status is none of statuses or timeout seconds
    passed; returns the last answer. A 429 (the documented poll limit) is waited out for its
    Retry-After, not returned while a poll of the status may still come in time."""
    end = time.time() + timeout
    last = None
    while True:
        a = poll(ev, tok)
        if a.status == 429:
            ra = a.header("Retry-After")
            wait = int(ra) if ra and ra.isdigit() else 1
            if last is None:
                last = a
            if time.time() + wait > end:
                return last
            time.sleep(wait)
            continue
        last = a
        if (a.json or {}).get("status") not in statuses or time.time() >= end:
            return a
        time.sleep(0.2)


class Orders:
    """The order writer, started here once the results that need no order were checked."""

    def __init__(self):
        self.proc = None

    def start(self):
        cmd, ns = os.environ.get("FG_OW_CMD"), os.environ.get("FG_HOST_NETNS")
        if self.proc is None and cmd and ns:
            self.proc = subprocess.Popen(["nsenter", "--net=" + ns, "--", "sh", "-c",
                                          "exec " + cmd], stdin=subprocess.DEVNULL)
        return self.proc is not None

    def stop(self):
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Fail(str):
    """A scenario's finding that the API did not answer as documented: the row is not ok."""


class Skip(str):
    """Why a scenario's situation could not be brought about, although every answer on the way
    was as documented: the row is a SKIP."""


HOLDS = ("reserved", "ordered", "paid")


def check_result_statuses(rows, orders):
    held = {}

    def st(a):
        return (a.json or {}).get("status") if a is not None else None

    def queued():
        tok, _, a = get_token(EV["open"], new_user())
        return poll(EV["open"], tok) if tok else a

    def reserved():
        user = new_user()
        tok, path, a = get_token(EV["open"], user)
        if tok is None:
            return a
        r = reserve(path, tok)
        if r.status != 202:
            return r
        rc = r.json["receipt"]
        held["receipt"] = rc
        return poll_until_not(EV["open"], rc, ("queued",))

    def ordered():
        if "receipt" not in held:
            return Fail("no reserved buyer to follow: the row \"reserved\" got no receipt")
        if not orders.start():
            return Fail("the order writer could not be started (FG_OW_CMD, FG_HOST_NETNS)")
        a = poll_until_not(EV["open"], held["receipt"], ("queued", "reserved"), 20)
        held["order_id"] = (a.json or {}).get("order_id")
        return a

    def paid():
        if not held.get("order_id"):
            return Fail("no order to pay: no poll showed ordered with an order_id")
        if ctl("order", "pay", str(held["order_id"])) is None:
            return Fail("flashgatectl order pay %s failed" % held["order_id"])
        return poll_until_not(EV["open"], held["receipt"], ("queued", "reserved", "ordered"), 10)

    def sold_out():
        # Stock 1: several buyers at once are all admitted before the sell-out reaches the data
        # plane; the control plane gives the item to one and answers the others sold_out. Every
        # buyer is followed to its verdict: more holders than items is an oversell.
        show = ctl("event", "show", str(EV["sold"])) or {}
        stock = fgtest.find(show, "event", "stock")
        if not isinstance(stock, int):
            return Fail("flashgatectl event show %d gave no event.stock" % EV["sold"])
        receipts, refused = [], 0
        for _ in range(4):
            tok, path, a = get_token(EV["sold"], new_user())
            if tok is None:
                if a.status == 410:
                    refused += 1
                    continue
                return Fail("a purchase token answered %d %r" % (a.status, a.body[:160]))
            r = reserve(path, tok)
            if r.status == 202:
                receipts.append(r.json["receipt"])
            elif r.status == 410:
                refused += 1
            else:
                return Fail("a reserve answered %d %r" % (r.status, r.body[:160]))
        finals = [poll_until_not(EV["sold"], rc, ("queued",)) for rc in receipts]
        holders = sum(1 for a in finals if st(a) in HOLDS)
        diag("sold_out: stock %d, %d reserves accepted (202), %d refused sold out (410), "
             "%d told they hold the item" % (stock, len(receipts), refused, holders))
        if holders > stock:
            return Fail("oversold: %d buyers told they hold an item of a stock of %d"
                        % (holders, stock))
        other = [a for a in finals if st(a) not in HOLDS + ("sold_out",)]
        if other:
            return Fail("a poll after a 202 answered %d %r (neither a hold nor sold_out)"
                        % (other[0].status, other[0].body[:160]))
        for a in finals:
            if st(a) == "sold_out":
                return a
        return Skip("no buyer was admitted past the stock: the data plane knew of the sell-out "
                    "first (%d refused at the reserve, 410, as documented)" % refused)

    scen = {"queued": (queued, None), "reserved": (reserved, None),
            "ordered": (ordered, ("order_id", "pay_deadline")),
            "paid": (paid, ("order_id", "pay_deadline")), "sold_out": (sold_out, None)}
    reasons = {
        "duplicate": "shown only when the held result is not known to the data plane",
        "retry": "needs Redis away (tests/e2e/test_controlplane.sh stops it mid-sale)",
        "expired": "needs an order past its pay window: tests/e2e/test_results.sh has one",
        "cancelled": "not brought about here: tests/e2e/test_results.sh cancels an order",
        "waiting": "needs a drawn sale beyond its stock: tests/integration/test_draw.sh "
                   "(draw_cp) and tests/e2e/fair_start.py",
    }
    for r in rows:
        name = unquote(r[0]) if r else ""
        what = "result status %s" % json.dumps(name)
        if name not in scen:
            tap(True, what, skip=reasons.get(name, "no scenario for this row yet"))
            continue
        fn, fields = scen[name]
        a = fn()
        if isinstance(a, Skip):
            tap(True, what, skip=a)
            continue
        if isinstance(a, Fail) or a is None:
            tap(False, "%s: %s" % (what, a or "no answer"))
            continue
        probs = common_problems(a)
        if a.status != 200 or st(a) != name:
            probs.insert(0, "answered %d %r" % (a.status, a.body[:160]))
        for f in fields or ():
            if f not in (a.json or {}):
                probs.append("no " + f)
        tap(not probs, what + ("" if not probs else ": " + "; ".join(probs)))
        if probs:
            diag(a)


def main():
    if len(sys.argv) != 2:
        print("Bail out! usage: api_contract.py DOCS/api.md")
        return 1
    found = tables(sys.argv[1])
    print("# %d contract tables in %s" % (len(found), sys.argv[1]))
    cache = {}

    def token():
        if "token" not in cache:
            cache["token"], cache["path"], _ = get_token(EV["open"], new_user())
        return cache["token"]

    def path():
        token()
        return cache["path"] or "/api/v1/events/%d/reserve/x" % EV["open"]

    ctx = {"token": token, "path": path,
           "reserve": lambda: reserve(path(), token())}
    orders = Orders()
    try:
        # Sold out before anything else: the sale of stock 1 (the result-statuses table).
        order = sorted(found, key=lambda t: t[0] != "result-statuses")
        for kind, args, header, rows, line in order:
            print("# line %d: contract %s %s" % (line, kind, " ".join(args)))
            if not rows:
                tap(False, "contract table at line %d has rows" % line)
            elif kind == "routes":
                check_routes(rows, ctx)
            elif kind == "fields":
                check_fields(args, rows, ctx)
            elif kind == "refusals":
                check_refusals(args, rows)
            elif kind == "result-statuses":
                check_result_statuses(rows, orders)
            else:
                tap(False, "contract table at line %d: known kind %r" % (line, kind))
    finally:
        orders.stop()
    bad = [a for a in ANSWERS if common_problems(a)]
    tap(not bad, "all %d answers had what every answer has in common" % len(ANSWERS))
    for a in bad[:5]:
        diag("%s %s: %s" % (a.method, a.path, "; ".join(common_problems(a))))
    fgtest.done()


if __name__ == "__main__":
    sys.exit(main())
