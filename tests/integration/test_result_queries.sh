#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Result queries against the real control plane (Redis and PostgreSQL from scripts/services),
# played by stand-in data planes (tests/peer/fg_feed):
# - a round of 300 duplicates gets every duplicate's stored result republished (not 64);
# - a storm of result queries (4,096 per message, before every batch of reservations) does not
#   keep a reservation from being decided, and every queried user with a stored result gets it
#   (none past the first 256 of a message dropped). The longest wait of a reservation is printed,
#   never checked.
#
# usage: test_result_queries.sh CONTROLPLANE FLASHGATECTL FG_FEED
set -uo pipefail

CP=$1 CTL=$2 FEED=$3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$ROOT/scripts/lib.sh"
n=0 failed=0
ok() { # RC DESCRIPTION
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else
		echo "not ok $n - $2"
		failed=$((failed + 1))
	fi
}
is() { [ "$1" = "$2" ]; ok $? "$3 (got $1, want $2)"; }
field() { grep -o "$1=[0-9]*" "$2" | cut -d= -f2; }

if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root (PostgreSQL runs as the postgres user)"
	exit 0
fi
TMP=$(mktemp -d /tmp/fg-rq.XXXXXX)
chmod o+x "$TMP"
CP_PID=
cleanup() {
	[ -z "$CP_PID" ] || fg_stop_pid "$CP_PID" 10 >/dev/null 2>&1
	"$ROOT/scripts/services" down "$TMP/svc" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT

fg_test_services_up "$TMP/svc"
mapfile -t P < <(fg_free_ports 2)
"$CP" -s "controlplane.pull_endpoint=tcp://127.0.0.1:${P[0]}" \
	-s "controlplane.pub_endpoint=tcp://127.0.0.1:${P[1]}" \
	-s "controlplane.admin_socket=$TMP/admin.sock" -s controlplane.metrics_port=0 \
	-s "redis.socket=$FG_REDIS_SOCK" -s "postgres.conninfo=$FG_PG_CONNINFO" \
	>"$TMP/cp.log" 2>&1 &
CP_PID=$!
fg_wait_line "$TMP/cp.log" 'ready:' "$CP_PID" 20
ok $? "the control plane is ready"
ctl() { "$CTL" --socket "$TMP/admin.sock" "$@" >/dev/null; }
ctl event create 5 --name "queries" --stock 5000 --starts-at 2026-01-01T00:00:00Z \
	--ends-at 2036-01-01T00:00:00Z --pay-window 15m && ctl event preheat 5 && ctl event open 5
ok $? "event 5 created, preheated and opened"

feed() { # OUT DP USERS [ARGS...]
	local out=$1 dp=$2 users=$3
	shift 3
	"$FEED" --push "tcp://127.0.0.1:${P[0]}" --sub "tcp://127.0.0.1:${P[1]}" --event 5 \
		--users "$users" --dp "$dp" --timeout-ms 20000 "$@" >"$TMP/$out" 2>&1
}
feed first 11 1-300 --batch 300
ok $? "300 users reserve ($(cat "$TMP/first"))"
is "$(field reserved "$TMP/first")" 300 "  all reserved"

# The same 300 again from another data plane, in one message and so one round.
feed again 12 1-300 --batch 300 --others
ok $? "the same 300 again: every one decided and every stored result sent ($(cat "$TMP/again"))"
is "$(field duplicate "$TMP/again")" 300 "  all 300 duplicate"
is "$(field others "$TMP/again")" 300 "  each duplicate's stored result republished, all 300 of one round"

# A storm: before every batch of 50 reservations (users 1001-1500), 4,096 result queries: 3,796
# of users nobody reserved, then users 1-300, whose results are stored.
feed storm 13 1001-1500 --batch 50 --query 1-300 --storm 4096
ok $? "a storm of 40,960 result queries with 500 reservations ($(cat "$TMP/storm"))"
is "$(field reserved "$TMP/storm")" 500 "  every reservation was decided (reserved)"
is "$(field queried "$TMP/storm")" 300 "  every queried user with a stored result got it (none dropped)"
echo "# the longest a reservation waited for its result during the storm: $(field max_ms "$TMP/storm") ms (not checked)"
# The feed is done once it has its results; the control plane may still be answering the rest.
handled() {
	"$CTL" --socket "$TMP/admin.sock" --json stats | python3 -c 'import json,sys
d = json.load(sys.stdin)["decisions"]
print(d["result_queries"] + d["result_queries_shed"], d["result_queries"], d["result_queries_shed"])'
}
for _ in $(seq 100); do
	read -r total answered shed < <(handled)
	[ "$total" -ge 40960 ] && break
	sleep 0.1
done
is "$total" 40960 "every query received was answered or counted as shed (answered $answered, shed $shed)"
fg_stop_pid "$CP_PID" 10
is "$FG_STOP_RC" 0 "control plane exits with status 0 on SIGTERM"
CP_PID=
echo "1..$n"
[ "$failed" -eq 0 ]
