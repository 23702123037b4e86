#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# `flashgatectl --json` prints the shapes docs/operations.md documents: every command that
# `flashgatectl help` lists is run against the real control plane (Redis and PostgreSQL from
# scripts/services), and its answer is read by the documented member names (the event object's
# names are taken from the doc's own example). A command added to `help` and not covered here
# fails the test, and so does an answer whose shape moved (as `event show` once nested the
# event at .event.event).
#
# usage: test_ctl_json.sh CONTROLPLANE FLASHGATECTL
set -uo pipefail

CP=$1 CTL=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
t_begin ctljson
t_services_up "$TMP/svc"
T_CP=$CP
t_cp_up || { echo "Bail out! no control plane"; t_end 1; }
SOCK=$T_ADMIN
export FLASHGATE_REPORT_SCRIPT=$ROOT/flashgatectl/sale_report.py

python3 - "$CTL" "$SOCK" "$FG_PG_CONNINFO" "$ROOT/docs/operations.md" "$ROOT/tests/lib" \
	"$FG_REDIS_SOCK" <<'EOF'
import json, os, re, shutil, socket, subprocess, sys, tempfile, threading, time

CTL, SOCK, PG, DOC, LIB, REDIS = sys.argv[1:]
sys.path.insert(0, LIB)
import fgtest  # tests/lib/fgtest.py

ran = set()


def ctl(*args, sock=True, stdin=None):
    """Runs flashgatectl --json ARGS; returns (status, parsed answer or None, raw output)."""
    cmd = [CTL] + (["--socket", SOCK, "--timeout", "30s"] if sock else []) + ["--json"]
    p = subprocess.run(cmd + list(args), capture_output=True, text=True, timeout=60,
                       input=stdin)
    words = [a for a in args if not a.startswith("-")]
    name = " ".join(words[:2]) if words[0] in ("event", "keys", "rules", "limits", "order") \
        else words[0]
    ran.add(name)
    try:
        a = json.loads(p.stdout)
    except ValueError:
        a = None
    return p.returncode, a, p.stdout + p.stderr


def has(obj, names):
    return isinstance(obj, dict) and all(k in obj for k in names)


def psql(sql):
    return subprocess.run(["psql", PG, "-XAtq", "-v", "ON_ERROR_STOP=1", "-c", sql],
                          capture_output=True, text=True, timeout=60, check=True).stdout.strip()


# The documented names: the event object from docs/operations.md's own example.
doc = open(DOC).read()
m = re.search(r"An event object:\s*```json\n(.*?)```", doc, re.S)
# queue_opens_at and draw_at are there only for an event with a draw (the example has one).
EVENT = [k for k in (json.loads(m.group(1)).keys() if m else [])
         if k not in ("queue_opens_at", "draw_at")]
fgtest.ok("id" in EVENT and "state" in EVENT and "available" in EVENT,
    "docs/operations.md has the event object example: " + ",".join(EVENT))
KEY = ["kid", "kind", "current", "created_at"]
RULE = ["kind", "value", "created_at"]
BUCKET = ["rate", "burst"]
REDIS_EV = ["preheated", "stock", "buyers", "outbox", "released"]
ORDERS = ["pending", "paid", "expired", "cancelled", "releases_pending"]


def event_ok(a, ev_id, state):
    e = a.get("event") if isinstance(a, dict) else None
    return has(e, EVENT) and e["id"] == ev_id and e["state"] == state and "event" not in e


def full_event_ok(a, ev_id, state):
    """event show / preheat / open / close: the event object, redis and orders beside it."""
    return (event_ok(a, ev_id, state) and (has(a.get("redis"), REDIS_EV) or
            a.get("redis") == "unreachable") and has(a.get("orders"), ORDERS))


# The commands flashgatectl knows, from its own help.
p = subprocess.run([CTL, "help"], capture_output=True, text=True, timeout=30)
fgtest.ok(p.returncode == 0 and "Commands:" in p.stdout, "flashgatectl help lists the commands")
ran.add("help")
listed = set()
for line in p.stdout.split("Commands:\n", 1)[-1].splitlines():
    if not line.strip():
        break  # the command list ends at its first blank line; prose follows
    if line.startswith("TIME:"):
        continue
    words = []
    for w in line.split():
        if not re.fullmatch(r"[a-z][a-z-]*", w) or len(words) == 2:
            break
        words.append(w)
    if words and words[0] not in ("event", "keys", "rules", "limits", "order"):
        words = words[:1]
    listed.add(" ".join(words))

T = ["--starts-at", "2026-01-01T00:00:00Z", "--ends-at", "2036-01-01T00:00:00Z",
     "--pay-window", "15m"]
rc, a, raw = ctl("event", "create", "1", "--name", "json shapes", "--stock", "10", *T)
fgtest.ok(rc == 0 and event_ok(a, 1, "draft") and a["event"]["stock"] == 10,
    "event create: .event is the event object", raw)
rc, a, raw = ctl("event", "show", "1")
fgtest.ok(rc == 0 and full_event_ok(a, 1, "draft"),
    "event show: .event.id, .event.state; .redis and .orders beside it", raw)
rc, a, raw = ctl("event", "preheat", "1")
fgtest.ok(rc == 0 and full_event_ok(a, 1, "preheated") and a["redis"]["preheated"] is True and
    a["redis"]["stock"] == 10, "event preheat: .event.state preheated, .redis.stock 10", raw)
rc, a, raw = ctl("event", "open", "1")
fgtest.ok(rc == 0 and full_event_ok(a, 1, "open") and a["orders"]["pending"] == 0,
    "event open: .event.state open, .orders.pending 0", raw)
rc, a, raw = ctl("event", "list")
fgtest.ok(rc == 0 and isinstance(a.get("events"), list) and len(a["events"]) == 1 and
    has(a["events"][0], EVENT) and a["events"][0]["id"] == 1, "event list: .events[].id", raw)

rc, a, raw = ctl("stats")
fgtest.ok(rc == 0 and isinstance(a.get("uptime_s"), int) and
    has(a.get("decisions"), ["received", "decided", "reserved", "duplicate", "sold_out", "retry",
                             "rounds", "batches", "sold_out_published", "result_queries",
                             "bad_records"]) and
    has(a.get("redis"), ["connected", "outages", "connects", "errors", "retry"]) and
    has(a.get("links"), ["reservations_in", "snapshot_requests", "result_queries_in",
                         "results_out", "snapshots_out", "send_errors", "wrong_direction"]) and
    has(a.get("admin"), ["requests", "refused", "open", "timed_out", "too_long", "busy",
                         "client_gone"]) and
    isinstance(a.get("data_planes"), list) and isinstance(a.get("dp_totals"), dict) and
    isinstance(a.get("dp_counters"), dict), "stats: every documented group and counter", raw)

# keys: only the members they have today (their commands are being changed elsewhere).
rc, a, raw = ctl("keys", "rotate")
kid = a.get("kid") if isinstance(a, dict) else None
fgtest.ok(rc == 0 and isinstance(kid, int) and isinstance(a.get("message"), str),
    "keys rotate: .kid, .message", raw)
rc, a, raw = ctl("keys", "auth-set", "3", stdin="000102030405060708090a0b0c0d0e0f\n")
fgtest.ok(rc == 0 and a.get("kid") == 3, "keys auth-set: .kid", raw)
rc, a, raw = ctl("keys", "list")
keys = a.get("keys") if isinstance(a, dict) else None
fgtest.ok(rc == 0 and isinstance(keys, list) and all(has(k, KEY) for k in keys) and
    any(k["kid"] == kid and k["kind"] == "sale" and k["current"] for k in keys) and
    any(k["kid"] == 3 and k["kind"] == "auth" and k["current"] for k in keys) and
    "secret" not in raw, "keys list: .keys[].kid/kind/current/created_at, no secret", raw)

rc, a, raw = ctl("rules", "add", "ip", "198.18.0.0/24")
fgtest.ok(rc == 0 and a == {"ok": True}, "rules add: {\"ok\":true}", raw)
rc, a, raw = ctl("rules", "list")
fgtest.ok(rc == 0 and isinstance(a.get("rules"), list) and
    [(r["kind"], r["value"]) for r in a["rules"] if has(r, RULE)] == [("ip", "198.18.0.0/24")],
    "rules list: .rules[].kind/value/created_at", raw)
rc, a, raw = ctl("rules", "del", "ip", "198.18.0.0/24")
fgtest.ok(rc == 0 and a == {"ok": True}, "rules del: {\"ok\":true}", raw)
rc, a, raw = ctl("rules", "list")
fgtest.ok(rc == 0 and a.get("rules") == [], "rules list after the del: .rules empty", raw)

# IPv6 address rules (docs/limits.md): stored in their canonical text (RFC 5952), so that one
# network written two ways is one rule; bad ones refused with the reason and nothing stored.
def rule_rows():
    return psql("SELECT kind || ' ' || value FROM rules ORDER BY id").split("\n")


rc, a, raw = ctl("rules", "add", "ip", "2001:DB8:0::/32")
fgtest.ok(rc == 0 and a == {"ok": True}, "rules add ip 2001:DB8:0::/32 (IPv6)", raw)
rc, a, raw = ctl("rules", "add", "ip", "2001:db8:0:0:0:0:0:7")
fgtest.ok(rc == 0 and a == {"ok": True}, "rules add ip 2001:db8:0:0:0:0:0:7 (one IPv6 address)", raw)
fgtest.ok(rule_rows() == ["ip 2001:db8::/32", "ip 2001:db8::7"],
    "PostgreSQL holds them in canonical text: 'ip 2001:db8::/32', 'ip 2001:db8::7'",
    repr(rule_rows()))
for value, want in [
        ("2001:db8::/32", "rule ip 2001:db8::/32 exists already"),
        ("2001:db8::7/128", "rule ip 2001:db8::7 exists already"),
        ("2001:db8::1/32", "has host bits set: the network is 2001:db8::/32 (use /128"),
        ("2001:db8::/129", "the prefix length must be 0..128, got '129'"),
        ("2001:db8:::1", "is not an IPv6 address or network"),
        ("[2001:db8::1]", "is not an IPv6 address or network"),
        ("::ffff:198.18.0.0/120", "is an IPv4-mapped network: block ip 198.18.0.0/24 instead")]:
    # A rule that does not parse is flashgatectl's usage error (status 2); the control plane
    # refuses the same line itself when it comes straight to its socket.
    rc, a, raw = ctl("rules", "add", "ip", value)
    fgtest.ok(rc == (1 if "exists" in want else 2) and want in raw,
           "rules add ip %s is refused: %s" % (value, want), raw)
    sk = socket.socket(socket.AF_UNIX)
    sk.settimeout(30)
    sk.connect(SOCK)
    sk.sendall(("rules add ip %s\n" % value).encode())
    line = sk.makefile().readline()
    sk.close()
    try:
        a = json.loads(line)
    except ValueError:
        a = None
    fgtest.ok(isinstance(a, dict) and a.get("ok") is False and want in (a.get("error") or ""),
           "  and by the control plane on its admin socket", line)
fgtest.ok(rule_rows() == ["ip 2001:db8::/32", "ip 2001:db8::7"],
    "  and nothing changed in PostgreSQL", repr(rule_rows()))
rc, a, raw = ctl("rules", "list")
fgtest.ok(rc == 0 and [(r["kind"], r["value"]) for r in a.get("rules", []) if has(r, RULE)] ==
    [("ip", "2001:db8::/32"), ("ip", "2001:db8::7")], "rules list shows the IPv6 rules", raw)
rc, a, raw = ctl("rules", "del", "ip", "2001:0db8::/32")
fgtest.ok(rc == 0 and a == {"ok": True}, "rules del ip 2001:0db8::/32 (another spelling)", raw)
rc, a, raw = ctl("rules", "del", "ip", "2001:db8::7")
fgtest.ok(rc == 0 and a == {"ok": True}, "rules del ip 2001:db8::7", raw)
rc, a, raw = ctl("rules", "del", "ip", "2001:db8::7")
fgtest.ok(rc == 1 and "no rule ip 2001:db8::7" in (a or {}).get("error", ""),
    "rules del of a rule that is not there: refused", raw)
fgtest.ok(psql("SELECT count(*) FROM rules") == "0", "  PostgreSQL's rules table is empty again")

rc, a, raw = ctl("limits", "set", "ip", "20/40", "forward", "20000")
lim = a.get("limits") if isinstance(a, dict) else None
fgtest.ok(rc == 0 and all(has(lim.get(b), BUCKET) for b in ("ip", "user", "device")) and
    lim["ip"] == {"rate": 20, "burst": 40} and lim["forward_per_s"] == 20000,
    "limits set: .limits.ip.rate/burst, .limits.forward_per_s", raw)
rc, a, raw = ctl("limits", "show")
fgtest.ok(rc == 0 and a.get("limits") == lim, "limits show: the same .limits", raw)

rc, a, raw = ctl("session-token", "42", "--ttl", "2h")
fgtest.ok(rc == 0 and isinstance(a.get("token"), str) and a.get("user") == 42 and
    isinstance(a.get("expires_at"), str), "session-token: .token, .user, .expires_at", raw)
rc, a, raw = ctl("session-token", "42", "--ttl", "2h", "--auth-key-file", "-", "--kid", "3",
                 sock=False, stdin="000102030405060708090a0b0c0d0e0f\n")
fgtest.ok(rc == 0 and isinstance(a.get("token"), str) and a.get("user") == 42 and
    isinstance(a.get("expires_at"), str), "session-token offline: .token, .user, .expires_at",
    raw)

# An order of its own event (2), so that event 1 stays consistent for reconcile.
ctl("event", "create", "2", "--name", "orders", "--stock", "5", *T)
oid = int(psql("INSERT INTO orders (event_id, user_id, reservation_id, pay_deadline) "
               "VALUES (2, 42, 4242, now() + interval '15 minutes') RETURNING id"))
rc, a, raw = ctl("order", "pay", str(oid))
fgtest.ok(rc == 0 and a.get("order_id") == oid and a.get("result") == "paid",
    "order pay: .order_id, .result paid", raw)
rc, a, raw = ctl("order", "pay", str(oid))
fgtest.ok(rc == 0 and a.get("result") == "already_paid", "order pay again: .result already_paid", raw)
rc, a, raw = ctl("order", "pay", "987654321")
fgtest.ok(rc == 0 and a.get("result") == "no_such_order", "order pay of none: .result no_such_order",
    raw)
# An order takes its item from the stock, as the order writer's do; cancelling gives it back.
oid2 = int(psql("WITH o AS (INSERT INTO orders (event_id, user_id, reservation_id, pay_deadline) "
                "VALUES (2, 43, 4243, now() + interval '15 minutes') RETURNING id), "
                "s AS (UPDATE stock SET available = available - 1 WHERE event_id = 2) "
                "SELECT id FROM o"))
rc, a, raw = ctl("order", "cancel", str(oid2))
fgtest.ok(rc == 0 and a.get("order_id") == oid2 and a.get("result") == "cancelled",
    "order cancel: .order_id, .result cancelled", raw)
rc, a, raw = ctl("order", "cancel", str(oid))
fgtest.ok(rc == 0 and a.get("result") == "paid", "order cancel of a paid one: .result paid", raw)

rc, a, raw = ctl("reconcile", "1")
fgtest.ok(rc == 0 and a.get("event_id") == 1 and a.get("consistent") is True and
    a.get("settled") is True and a.get("repaired") is False and
    has(a.get("postgres"), ["initial", "available", "pending", "paid", "expired", "cancelled",
                            "releases_unapplied"]) and
    has(a.get("redis"), ["preheated", "stock", "buyers", "released", "outbox"]) and
    isinstance(a.get("backlog"), int) and a.get("expected_stock") == 10 and
    a.get("differences") == [] and "event" not in a,
    "reconcile: .event_id, .consistent, .postgres, .redis, .expected_stock, .differences", raw)

# Reconcile during a live sale: expiries and releases in flight between its reads must not be
# called a difference. Event 3 holds N buyers with pending orders on both sides (as after the
# order writer); then a release at a time goes as the order writer's does, in three steps each
# a true state: the order expires in PostgreSQL (a release row, the item back), Redis takes the
# release (stock + 1, released), PostgreSQL marks it applied. Reconcile runs meanwhile: each
# answer is either a settled reading that agrees, or says it could not get one; never
# "consistent": false. Once the releases are done it agrees, settled.


def redis(*words):
    """One Redis command over the Unix socket (RESP); returns the reply's first line."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(REDIS)
    msg = "*%d\r\n" % len(words) + "".join("$%d\r\n%s\r\n" % (len(str(w)), w) for w in words)
    s.sendall(msg.encode())
    reply = s.makefile("rb").readline().decode().strip()
    s.close()
    return reply


N = 15
ctl("event", "create", "3", "--name", "live", "--stock", "1000", *T)
ctl("event", "preheat", "3")
psql("WITH o AS (INSERT INTO orders (event_id, user_id, reservation_id, pay_deadline) "
     "SELECT 3, u, 70000 + u, now() + interval '15 minutes' FROM generate_series(1, %d) u "
     "RETURNING 1) UPDATE stock SET available = available - (SELECT count(*) FROM o) "
     "WHERE event_id = 3" % N)
redis("DECRBY", "fg:{3}:stock", N)
for u in range(1, N + 1):
    redis("HSET", "fg:{3}:result", u, 70000 + u)
rc, a, raw = ctl("reconcile", "3")
fgtest.ok(rc == 0 and a.get("consistent") is True and a.get("settled") is True and
    a.get("readings") == 2 and a.get("expected_stock") == 1000 - N,
    "reconcile of a quiet sale: settled at the second reading, consistent", raw)

done = threading.Event()


errors = []


def releases():
    try:
        release_all()
    except Exception as e:  # noqa: BLE001 (reported below)
        errors.append(repr(e))
    done.set()


def release_all():
    for u in range(1, N + 1):
        psql("WITH e AS (UPDATE orders SET status = 'expired' WHERE event_id = 3 AND "
             "user_id = %d RETURNING id, reservation_id), r AS (INSERT INTO stock_releases "
             "(event_id, order_id, reservation_id, user_id) SELECT 3, id, reservation_id, %d "
             "FROM e) UPDATE stock SET available = available + 1 WHERE event_id = 3" % (u, u))
        # One script, as release.lua takes a release: stock, released set and the buyer's field
        # move together (two commands apart, a stalled thread between them left a state no order
        # writer makes; a field left bare is one behind PostgreSQL's expired order).
        redis("EVAL", "redis.call('INCR', KEYS[1]) redis.call('HSET', KEYS[3], ARGV[2], "
              "'X:' .. ARGV[3]) return redis.call('SADD', KEYS[2], ARGV[1])",
              3, "fg:{3}:stock", "fg:{3}:released", "fg:{3}:result", "%d:%d" % (70000 + u, u),
              u, 70000 + u)
        psql("UPDATE stock_releases SET applied_at = now() WHERE event_id = 3 AND user_id = %d"
             % u)


t = threading.Thread(target=releases)
t.start()
answers, wrong = 0, []
deadline = time.monotonic() + 90
while not done.is_set() and time.monotonic() < deadline:
    rc, a, raw = ctl("reconcile", "3")
    answers += 1
    if rc != 0 or a.get("consistent") is False or \
            (a.get("settled") is False) != ("consistent" not in a):
        wrong.append(raw)
    time.sleep(0.01)  # room for the releases on a small host
done.wait(max(0, deadline - time.monotonic()))
fgtest.ok(answers >= 20 and not wrong and not errors,
    "reconcile during %d releases in flight: %d answers, none says inconsistent" % (N, answers),
    "".join(errors + wrong[:2]))
rc, a, raw = ctl("reconcile", "3")
fgtest.ok(rc == 0 and a.get("consistent") is True and a.get("settled") is True and
    a.get("postgres", {}).get("releases_unapplied") == 0 and
    a.get("redis", {}).get("released") == N and a.get("expected_stock") == 1000,
    "after the releases: settled and consistent, every item back", raw)
# scripts/check-invariants waits for the releases to reach Redis and asks reconcile until it
# could judge: every invariant of the drained sale holds.
pg_env = dict(re.findall(r"(host|port)=(\S+)", PG))
p = subprocess.run([os.path.join(os.path.dirname(LIB), "..", "scripts", "check-invariants"),
                    "--event", "3", "--admin-socket", SOCK, "--ctl", CTL, "--wait", "20"],
                   capture_output=True, text=True, timeout=120,
                   env=dict(os.environ, FG_REDIS_SOCK=REDIS, FG_PG_HOST=pg_env.get("host", ""),
                            FG_PG_PORT=pg_env.get("port", "")))
fgtest.ok(p.returncode == 0 and re.search(r"^PASS +3 reconcile", p.stdout, re.M) is not None,
    "check-invariants after the releases: every invariant PASS, reconcile's included",
    p.stdout + p.stderr)

rc, a, raw = ctl("event", "pow", "1", "3", "--auto-max", "5")
fgtest.ok(rc == 0 and event_ok(a, 1, "open") and a["event"]["pow_bits"] == 3 and
    a["event"]["pow_auto_max"] == 5 and a.get("pow_bits_now") == 3,
    "event pow: .event.pow_bits, .event.pow_auto_max, .pow_bits_now", raw)
rc, a, raw = ctl("event", "verify-draw", "1")
fgtest.ok(rc == 1 and a is not None and a.get("ok") is False and "has no draw" in a.get("error", ""),
    "event verify-draw of an event without a draw: a refusal, status 1", raw)
rc, a, raw = ctl("event", "close", "1")
fgtest.ok(rc == 0 and full_event_ok(a, 1, "closed"), "event close: .event.state closed", raw)

rc, a, raw = ctl("event", "open", "1")
fgtest.ok(rc == 1 and a is not None and a.get("ok") is False and isinstance(a.get("error"), str),
    "a refusal: {\"ok\":false,\"error\":...}, status 1", raw)

rc, a, raw = ctl("event", "archive", "1")
fgtest.ok(rc == 0 and event_ok(a, 1, "archived"), "event archive: .event.state archived", raw)
rc, a, raw = ctl("event", "list", "--limit", "1")
fgtest.ok(rc == 0 and [e["id"] for e in a.get("events", [])] == [1] and a.get("next_after") == 1,
    "event list --limit 1: .events, .next_after (the id to list --after)", raw)
rc, a, raw = ctl("event", "list", "--after", "1", "--state", "draft")
fgtest.ok(rc == 0 and [e["id"] for e in a.get("events", [])] == [2] and "next_after" not in a,
    "event list --after 1 --state draft: the rest, no .next_after", raw)

p = subprocess.run([CTL, "--socket", SOCK, "event", "show", "1"], capture_output=True,
                   text=True, timeout=60)
fgtest.ok(p.returncode == 0 and re.search(r"^event:\n  id: +1\n", p.stdout, re.M) is not None and
    "\nredis:\n" in p.stdout,
    "without --json: event show is printed for people", p.stdout + p.stderr)

kdir = tempfile.mkdtemp()
rc, a, raw = ctl("curve", "keygen", "dp1", "--dir", kdir, "--role", "dataplane", sock=False)
fgtest.ok(rc == 0 and a is not None and a.get("ok") is True and
    a.get("secret_key_file") == kdir + "/dp1.key" and a.get("public_key_file") == kdir + "/dp1.pub"
    and len(a.get("public_key", "")) == 40 and a.get("role") == "dataplane" and
    os.stat(kdir + "/dp1.key").st_mode & 0o777 == 0o600,
    "curve keygen (offline): .secret_key_file (mode 0600), .public_key_file, .public_key, .role",
    raw)
shutil.rmtree(kdir)

rc, a, raw = ctl("audit", "1", "--limit", "2")
fgtest.ok(rc == 0 and isinstance(a.get("audit"), list) and len(a["audit"]) == 2 and
    all(has(e, ["id", "at", "uid", "user", "pid", "request", "ok", "answer", "event"])
        for e in a["audit"]) and a["audit"][0]["request"] == "event archive 1",
    "audit 1 --limit 2: .audit[] with id, at, uid, user, pid, request, ok, answer, event", raw)
rdir = tempfile.mkdtemp()
rc, a, raw = ctl("report", "1", "--out", rdir)
fgtest.ok(rc == 0 and raw.strip() == rdir + "/index.html" and os.path.exists(rdir + "/index.html"),
    "report (PostgreSQL, no JSON): the page's path", raw)
shutil.rmtree(rdir)
rc, a, raw = ctl("top", "--count", "1")
fgtest.ok(rc == 0 and raw.startswith("flashgate top") and "decisions/s" in raw,
    "top --count 1 (plain lines, no JSON): one frame", raw)

missing = sorted(listed - ran)
fgtest.ok(len(listed) >= 19 and not missing,
    "every command of flashgatectl help was run (%d): %s" % (len(listed), sorted(listed)),
    "not covered: %s" % missing)
fgtest.done()
EOF
t_end $?
