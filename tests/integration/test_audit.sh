#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The audit log (docs/operations.md "The audit log"), against the real control plane with Redis
# and PostgreSQL from scripts/services: every admin command that changes something is written
# to admin_audit and to the log, with the admin socket peer's user (SO_PEERCRED: root, and
# nobody on a socket opened to it), its pid, the request (never the secret of keys auth-set), the
# sale it touched (order pay: the order's) and the answer, also when it was refused; commands
# that only read are not; `flashgatectl audit [EVENT] [--limit N]` shows them newest first.
#
# usage: test_audit.sh CONTROLPLANE FLASHGATECTL
set -uo pipefail

CP=$1 CTL=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
t_begin audit
t_services_up "$TMP/svc"
T_CP=$CP T_CTL=$CTL
t_cp_up
tap_ok $? "the control plane is ready"

SECRET=00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff
now=$(date +%s)
ctl event create 41 --name "audited" --stock 10 --starts-at $((now + 3600)) \
	--ends-at $((now + 7200)) --pay-window 15m >/dev/null
tap_ok $? "event create 41"
ctl event preheat 41 >/dev/null
ctl keys auth-set 1 <<<"$SECRET" >/dev/null
tap_ok $? "keys auth-set 1 (from standard input)"
ctl limits set user 5/10 >/dev/null
ctl event open 42 >/dev/null 2>&1
tap_is $? 1 "event open 42 (no such event) is refused"
# Reads: not audited.
ctl event show 41 >/dev/null && ctl stats >/dev/null && ctl limits show >/dev/null &&
	ctl session-token 7 >/dev/null
tap_ok $? "event show, stats, limits show, session-token (reads)"
# An order of event 41, paid through flashgatectl: the entry names the order's event.
oid=$(t_sql "INSERT INTO orders (event_id, user_id, reservation_id, pay_deadline)
	VALUES (41, 7, 77, now() + interval '10 min') RETURNING id")
tap_is "$(ctlj order pay "$oid" | jget result)" paid "order pay $oid"
# Another user on a socket opened to everyone.
chmod 0666 "$T_ADMIN"
setpriv --reuid=65534 --regid=65534 --clear-groups "$CTL" --socket "$T_ADMIN" rules add user 99 \
	>/dev/null
tap_ok $? "rules add user 99, by uid 65534"
chmod 0600 "$T_ADMIN"

# --- what was written --------------------------------------------------------------------------
rows=$(t_sql "SELECT uid, coalesce(user_name, '?'), pid IS NOT NULL, request,
	coalesce(event_id::text, '-'), ok FROM admin_audit ORDER BY id")
tap_diag "$rows"
want="0|root|t|event create 41 --name audited --stock 10 --starts-at $((now + 3600)) --ends-at $((now + 7200)) --pay-window 15m|41|t
0|root|t|event preheat 41|41|t
0|root|t|keys auth-set 1|-|t
0|root|t|limits set user 5/10|-|t
0|root|t|event open 42|42|f
0|root|t|order pay $oid|41|t
65534|nobody|t|rules add user 99|-|t"
tap_is "$rows" "$want" "admin_audit holds every change, in order: who, what, the sale, the answer's verdict"
tap_is "$(t_sql "SELECT count(*) FROM admin_audit WHERE request LIKE '%$SECRET%'
	OR answer LIKE '%$SECRET%'")" 0 "  never the secret of keys auth-set"
tap_is "$(t_sql "SELECT count(*) FILTER (WHERE ok AND answer LIKE '{\"ok\":true%'),
	count(*) FILTER (WHERE NOT ok AND answer LIKE '{\"ok\":false,\"error\":\"%event 42%')
	FROM admin_audit")" "6|1" "  with each answer (the refusal's message)"
tap_is "$(t_sql "SELECT count(*) FROM admin_audit WHERE at > now() - interval '5 min'")" 7 \
	"  each with its time"
tap_is "$(grep -c ' audit: uid ' "$TMP/cp.log")" 7 "the log has one audit line per change"
tap_ok "$(grep -q 'audit: uid 65534 (nobody) pid [0-9]*: rules add user 99: done' "$TMP/cp.log" &&
	echo 0 || echo 1)" "  naming the user, the pid, the request and the verdict"

# --- flashgatectl audit ------------------------------------------------------------------------
all=$(ctlj audit)
tap_is "$(jget audit.0.request audit.0.user audit.0.uid <<<"$all")" "rules add user 99/nobody/65534" \
	"flashgatectl audit: newest first, with user and uid"
tap_is "$(jget audit.6.event audit.6.ok audit.7.request <<<"$all")" "41/true/" \
	"  the oldest (event create 41) last"
ev41=$(ctlj audit 41)
tap_is "$(jget audit.0.request audit.1.request audit.2.request audit.3.request <<<"$ev41")" \
	"order pay $oid/event preheat 41/event create 41 --name audited --stock 10 --starts-at $((now + 3600)) --ends-at $((now + 7200)) --pay-window 15m/" \
	"flashgatectl audit 41: the sale's changes only"
tap_is "$(ctlj audit --limit 2 | jget audit.1.request audit.2.request)" "order pay $oid/" \
	"flashgatectl audit --limit 2: two"
txt=$(ctl audit 41)
tap_ok "$(grep -q 'event preheat 41' <<<"$txt" && grep -q root <<<"$txt" && echo 0 || echo 1)" \
	"the plain output shows them"
ctl audit --limit 0 >/dev/null 2>&1
tap_is $? 2 "audit --limit 0 is a usage error"
tap_is "$(t_sql "SELECT count(*) FROM admin_audit")" 7 "audit itself (a read) is not audited"
tap_done
