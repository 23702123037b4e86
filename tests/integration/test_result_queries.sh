#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Result queries against the real control plane (Redis and PostgreSQL from scripts/services),
# played by stand-in data planes (tests/peer/fg_feed):
# - a round of 300 duplicates gets every duplicate's stored result republished (not 64);
# - a storm of result queries (4,096 per message, before every batch of reservations) does not
#   keep a reservation from being decided, and every queried user with a stored result gets it
#   (none past the first 256 of a message dropped). The longest wait of a reservation is printed,
#   never checked;
# - while Redis cannot confirm a read (wait_replicas 1 and no replica: every WAIT times out, as
#   after a failover whose replicas are behind), queries that keep coming do not cost every turn
#   of the loop a WAIT timeout: their lookups back off, and the reservations are decided; the
#   back-off grows to 4 s and no further, and the lookups go on being tried while they fail.
#
# usage: test_result_queries.sh CONTROLPLANE FLASHGATECTL FG_FEED
set -uo pipefail

CP=$1 CTL=$2 FEED=$3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
t_begin rq
t_services_up "$TMP/svc"
T_CP=$CP T_CTL=$CTL T_CTL_OUT=quiet
t_cp_up
tap_ok $? "the control plane is ready"
field() { t_field "$2" "$1"; } # KEY FILE
ctl event create 5 --name "queries" --stock 5000 --starts-at 2026-01-01T00:00:00Z \
	--ends-at 2036-01-01T00:00:00Z --pay-window 15m && ctl event preheat 5 && ctl event open 5
tap_ok $? "event 5 created, preheated and opened"

feed() { # OUT DP USERS [ARGS...]
	local out=$1 dp=$2 users=$3
	shift 3
	"$FEED" --push "$T_PULL" --sub "$T_PUB" --event 5 \
		--users "$users" --dp "$dp" --timeout-ms 20000 "$@" >"$TMP/$out" 2>&1
}
feed first 11 1-300 --batch 300
tap_ok $? "300 users reserve ($(cat "$TMP/first"))"
tap_is "$(field reserved "$TMP/first")" 300 "  all reserved"

# The same 300 again from another data plane, in one message and so one round.
feed again 12 1-300 --batch 300 --others
tap_ok $? "the same 300 again: every one decided and every stored result sent ($(cat "$TMP/again"))"
tap_is "$(field duplicate "$TMP/again")" 300 "  all 300 duplicate"
tap_is "$(field others "$TMP/again")" 300 "  each duplicate's stored result republished, all 300 of one round"

# A storm: before every batch of 50 reservations (users 1001-1500), 4,096 result queries: 3,796
# of users nobody reserved, then users 1-300, whose results are stored.
feed storm 13 1001-1500 --batch 50 --query 1-300 --storm 4096
tap_ok $? "a storm of 40,960 result queries with 500 reservations ($(cat "$TMP/storm"))"
tap_is "$(field reserved "$TMP/storm")" 500 "  every reservation was decided (reserved)"
tap_is "$(field queried "$TMP/storm")" 300 "  every queried user with a stored result got it (none dropped)"
echo "# the longest a reservation waited for its result during the storm: $(field max_ms "$TMP/storm") ms (not checked)"
# The feed is done once it has its results; the control plane may still be answering the rest.
handled() {
	ctlj stats | python3 -c 'import json,sys
d = json.load(sys.stdin)["decisions"]
print(d["result_queries"] + d["result_queries_shed"], d["result_queries"], d["result_queries_shed"])'
}
for _ in $(seq 100); do
	read -r total answered shed < <(handled)
	[ "$total" -ge 40960 ] && break
	sleep 0.1
done
tap_is "$total" 40960 "every query received was answered or counted as shed (answered $answered, shed $shed)"
fg_stop_pid "$CP_PID" 10
tap_is "$FG_STOP_RC" 0 "control plane exits with status 0 on SIGTERM"
CP_PID=

# Reads never confirmed: one WAIT for a replica that is not there, 100 ms, per lookup. 30
# reservations, one every 100 ms, each after 300 queries of stored results: without the back-off
# each turn of the loop would spend 100 ms on the queries' WAIT (about 30 failed lookups).
t_cp_up -s redis.wait_replicas=1 -s redis.wait_timeout=100ms
tap_ok $? "the control plane is ready again, with wait_replicas 1 and no replica"
# The feed waits for the queried users' results until its timeout (5 s): none can come.
feed unconfirmed 14 2001-2030 --batch 1 --pace-us 100000 --query 1-300 --storm 300 \
	--timeout-ms 5000
tap_is "$(field retry "$TMP/unconfirmed")/$(field missing "$TMP/unconfirmed")" 30/0 \
	"30 reservations, each after 300 queries, while no read is confirmed: every one decided (retry: its WAIT timed out too) ($(cat "$TMP/unconfirmed"))"
read -r failed answered < <(ctlj stats | python3 -c 'import json,sys
d = json.load(sys.stdin)["decisions"]
print(d["result_query_failures"], d["result_queries"])')
[ "$failed" -ge 1 ] && [ "$failed" -le 8 ]
tap_ok $? "  the queries' lookups failed $failed time(s) in 5 s (1..8: they backed off), $answered answered"
# The back-off neither ends the tries nor grows past 4 s: the queries still wait (nothing
# confirms a read), and once six lookups failed (250 ms doubling to 4 s) each next one comes
# 4 s (and a WAIT) after the last. Two more within 11 s: a back-off that stopped the tries, or
# kept doubling (8 s, then 16 s), has at most one.
failures() {
	ctlj stats | python3 -c 'import json,sys; print(json.load(sys.stdin)["decisions"]["result_query_failures"])'
}
failed_at_least() { [ "$(failures)" -ge "$1" ]; }
t_wait_until 20 failed_at_least 6
tap_ok $? "  the lookups are tried again while they fail: 6 failed ($(failures))"
f0=$(failures)
t0=$SECONDS
t_wait_until 11 failed_at_least $((f0 + 2))
tap_ok $? "  then every 4 s: from $f0, $(failures) failed lookups after $((SECONDS - t0)) s (2 more within 11 s)"
fg_stop_pid "$CP_PID" 10
tap_is "$FG_STOP_RC" 0 "control plane exits with status 0 on SIGTERM"
CP_PID=
tap_done
