#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Two control planes on one Redis and PostgreSQL: what an admin command changes on the first
# (an event created and opened, its challenge, the sale keys rotated, the limits, a rule)
# reaches the second's data planes within seconds, without a restart: every change NOTIFYs
# flashgate_config and each control plane LISTENs (controlplane/cp_follow.h, docs/ha.md). A
# change made while the second's listening connection is cut still arrives (read again on its
# reconnection), and so does one made without a notification (config_version, read every 2 s).
# A stand-in data plane on the second (tests/peer/fg_feed --watch-limits) prints what it is told.
#
# usage: test_cp_follow.sh CONTROLPLANE FLASHGATECTL FG_FEED
set -uo pipefail

T_CP=$1 CTL=$2 FEED=$3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
t_begin cpfollow
t_services_up "$TMP/svc"
mapfile -t P < <(fg_free_ports 4)

t_cp_n 1 "${P[0]}" "${P[1]}"
tap_ok $? "control plane 1 is ready"
t_cp_n 2 "${P[2]}" "${P[3]}"
tap_ok $? "control plane 2 is ready (the same Redis and PostgreSQL)"
T_CTL=$CTL T_CTL_OUT=quiet
on() { # N ARGS...: flashgatectl on control plane N
	local n=$1
	shift
	T_ADMIN=$TMP/admin$n.sock ctl "$@"
}
onj() { # N ARGS...: flashgatectl --json on control plane N, the answer on stdout
	local n=$1
	shift
	T_ADMIN=$TMP/admin$n.sock ctlj "$@"
}
follow() { onj 2 stats | jget "follow.$1"; } # FIELD: control plane 2's follow counter

# A data plane on control plane 2 (dp 1), told everything for 50 s.
"$FEED" --push "tcp://127.0.0.1:${P[2]}" --sub "tcp://127.0.0.1:${P[3]}" --dp 1 \
	--watch-limits 50000 >"$TMP/w.out" 2>&1 &
W=$!
fg_wait_line "$TMP/w.out" '^limits ' "$W" 20
tap_ok $? "the data plane on control plane 2 has its snapshot"
seen() { # REGEX [SECONDS]: the data plane on control plane 2 is told a line matching REGEX
	fg_wait_line "$TMP/w.out" "$1" "$W" "${2:-10}"
}

# --- an event created, preheated and opened on 1 --------------------------------------------
on 1 event create 7 --name "set up on one" --stock 100 --starts-at 2026-01-01T00:00:00Z \
	--ends-at 2036-01-01T00:00:00Z --pay-window 15m &&
	on 1 event preheat 7 && on 1 event open 7
tap_ok $? "on control plane 1: event 7 created, preheated and opened"
seen '^event id=7 held=0 closed=0$'
tap_ok $? "  control plane 2 publishes event 7 open (no restart)"
tap_is "$(onj 2 event show 7 | jget sold_out)" false "  control plane 2 holds event 7"

# --- the challenge, the keys, the limits, a rule ----------------------------------------------
on 1 event pow 7 6
tap_ok $? "on control plane 1: event pow 7 6"
seen '^fair event=7 state=0 pow_bits=6 '
tap_ok $? "  control plane 2 publishes event 7's FAIR record with 6 bits"
kid0=$(t_sql "SELECT kid FROM keys WHERE kind = 'sale' AND current")
on 1 keys rotate
rc=$?
kid=$(t_sql "SELECT kid FROM keys WHERE kind = 'sale' AND current")
[ "$rc" = 0 ] && [ "$kid" != "$kid0" ]
tap_ok $? "on control plane 1: keys rotate (the current sale key was $kid0, is $kid)"
seen "^keys n=[0-9]+ sale_current=$kid\$"
tap_ok $? "  control plane 2 publishes the keys with sale key $kid current"
on 1 limits set forward 4321
tap_ok $? "on control plane 1: limits set forward 4321"
seen '^limits forward=4321/'
tap_ok $? "  control plane 2 publishes the forward budget 4321"
on 1 rules add ip 198.18.7.7
tap_ok $? "on control plane 1: rules add ip 198.18.7.7"
seen '^rules n=1$'
tap_ok $? "  control plane 2 publishes one rule"
n=$(follow reloads_notify)
[ "${n:-0}" -ge 5 ]
tap_ok $? "  control plane 2 read its state again on notifications: $n"

# --- a change while control plane 2's listening connection is cut ----------------------------
pid=$(follow backend_pid)
c0=$(follow connects)
# One statement after the other in one session: the change commits while the listener's
# server process is being ended.
t_sql "SELECT pg_terminate_backend($pid); UPDATE limits SET forward_per_s = 4322;" >/dev/null
tap_ok $? "its listening connection (server process $pid) ended, then forward 4322 set"
seen '^limits forward=4322/'
tap_ok $? "  control plane 2 publishes the forward budget 4322"
t_wait_until 10 test "$(follow connects)" -gt "${c0:-0}"
tap_ok $? "  control plane 2 listens again on a new connection ($(follow backend_pid))"

# --- a change without a notification: config_version alone tells it --------------------------
k0=$(follow reloads_check)
t_sql "BEGIN; ALTER TABLE limits DISABLE TRIGGER limits_config_changed;
	UPDATE limits SET forward_per_s = 4323;
	ALTER TABLE limits ENABLE TRIGGER limits_config_changed;
	UPDATE config_version SET version = version + 1; COMMIT;" >/dev/null
tap_ok $? "forward 4323 set with no notification, config_version moved"
seen '^limits forward=4323/'
tap_ok $? "  control plane 2 publishes the forward budget 4323 (read every 2 s)"
k1=$(follow reloads_check)
test "${k1:-0}" -gt "${k0:-0}"
tap_ok $? "  counted as a reload by check ($k0 before, $k1 after)"

kill "$W" 2>/dev/null
wait "$W" 2>/dev/null
for i in 1 2; do
	kill "${T_PIDS[$((i - 1))]}"
	wait "${T_PIDS[$((i - 1))]}"
	tap_is $? 0 "control plane $i exits with status 0 on SIGTERM"
done
T_PIDS=()
tap_done
