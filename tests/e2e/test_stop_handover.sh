#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A data plane stopped (SIGTERM) in the middle of a stream of reservations hands over every one
# it answered 202 to (docs/dataplane.md "Stopping without dropping a reservation"), with
# the real control plane, Redis and PostgreSQL:
#   1. the control plane is down (SIGKILL) while the data plane keeps admitting, the data plane
#      gets SIGTERM, and the control plane comes back after longer than the old 2-second flush:
#      the data plane answers 503 to new reserves, waits, hands everything over, and every user
#      it answered 202 has a result in Redis; nothing is counted lost;
#   2. the same, but the control plane does not come back: after bridge.resync of silence the
#      data plane gives up, and exactly the reservations no control plane received are counted
#      (unsent at stop + unconfirmed at stop), none of them in Redis.
#
# usage: test_stop_handover.sh DATAPLANE CONTROLPLANE FLASHGATECTL
set -euo pipefail
. "$(dirname "$0")/harness.sh"

CP_EXE=${2:-} CTL_EXE=${3:-}
EV=5 STOCK=100000 USERS=30000
mapfile -t PORTS < <(fg_free_ports 2)
PULL=tcp://127.0.0.1:${PORTS[0]} PUB=tcp://127.0.0.1:${PORTS[1]}
# The control plane counts as gone after 15 s of silence: longer than the test keeps it down
# in part 1.
E2E_DP_ARGS=(-s "bridge.push_endpoint=$PULL" -s "bridge.sub_endpoint=$PUB"
	-s admission.limit_table_log2=12 -s bridge.resync=15s -s bridge.stop_timeout=60s)
E2E_TOOLS=(redis-cli psql)
e2e_begin sh "$1"
[ -x "$CP_EXE" ] && [ -x "$CTL_EXE" ] || tap_bail "control plane and flashgatectl given"

STREAM_PID=
sh_stop() { [ -z "$STREAM_PID" ] || stream_end; }
T_CLEANUP+=(sh_stop)
t_services_up "$E2E_TMP/svc"
SVC=$T_SVC
T_CP=$CP_EXE T_CTL=$CTL_EXE T_PULL=$PULL T_PUB=$PUB
ADMIN=$E2E_TMP/admin.sock
start_cp() { t_cp_up; }
kill_cp() {
	kill -KILL "$CP_PID"
	wait "$CP_PID" 2>/dev/null || true
	CP_PID=
}
start_dp() {
	: >"$E2E_TMP/dataplane.log"
	fg_dp_start "$1" "$E2E_PREFIX" "$E2E_TMP/dataplane.log" -c "$E2E_TMP/flashgate.conf" \
		"${E2E_DP_ARGS[@]}"
	E2E_DP_PID=$FG_DP_PID
	fg_wait_line "$E2E_TMP/dataplane.log" 'ready:' "$E2E_DP_PID" 30
}

start_cp || tap_bail "control plane ready"
AUTH=$(python3 -c 'import os; print(os.urandom(32).hex())')
tap_run "the sale is set up: $STOCK items" e2e_open_sale $EV "stop test" $STOCK "$AUTH"
tap_run "the data plane shows the sale open" t_wait_until 20 e2e_sale_open $EV
t_sessions "$AUTH" 1001 $USERS >"$E2E_TMP/sessions"

# stream FIRST COUNT OUT: buyers FIRST.. in the client namespace, in the foreground.
stream() {
	fg_ns_exec python3 "$E2E_DIR/reserve_stream.py" --base "$E2E_BASE" --event $EV \
		--sessions "$E2E_TMP/sessions" --first "$1" --count "$2" --out "$3"
}
# stream_bg FIRST OUT: buyers FIRST.. in the background, until stream_end or the data plane
# stops answering.
stream_bg() {
	rm -f "$E2E_TMP/stream.stop"
	fg_ns_exec python3 "$E2E_DIR/reserve_stream.py" --base "$E2E_BASE" --event $EV \
		--sessions "$E2E_TMP/sessions" --first "$1" --out "$2" \
		--stop-file "$E2E_TMP/stream.stop" >"$2.summary" 2>&1 &
	STREAM_PID=$!
}
stream_end() {
	touch "$E2E_TMP/stream.stop"
	wait "$STREAM_PID" 2>/dev/null || true
	STREAM_PID=
}
count() { awk -v s="$2" '$2 == s' "$1" | wc -l; } # FILE STATUS
at_least() { [ "$(count "$1" "$2")" -ge "$3" ]; }  # FILE STATUS N
# in_redis FILE: how many of FILE's 202 users have no result in Redis (prints the number).
missing_in_redis() {
	local n=0 u
	for u in $(awk '$2 == 202 { print $1 }' "$1"); do
		[ "$(t_redis hexists "fg:{$EV}:result" "$u")" = 1 ] || n=$((n + 1))
	done
	echo $n
}
# final FIELD: the figure before FIELD ("unsent at stop", ...) on the data plane's bridge line.
final() {
	grep '  bridge: ' "$E2E_TMP/dataplane.log" | tail -1 | tr ',' '\n' |
		awk -v f="$1" 'index($0, f) { print $1 }'
}
wait_dp() { # TIMEOUT_S: waits for the data plane to exit; sets DP_RC
	local i
	for ((i = 0; i < $1 * 10; i++)); do
		kill -0 "$E2E_DP_PID" 2>/dev/null || break
		sleep 0.1
	done
	DP_RC=0
	if kill -0 "$E2E_DP_PID" 2>/dev/null; then
		DP_RC=timeout
		kill -KILL "$E2E_DP_PID"
	fi
	wait "$E2E_DP_PID" 2>/dev/null || DP_RC=$?
	E2E_DP_PID=
}

# ---- 1. the control plane comes back --------------------------------------------------------
stream 0 200 "$E2E_TMP/s1" >"$E2E_TMP/s1.summary" 2>&1 || true
tap_diag "answers: $(cat "$E2E_TMP/s1.summary")"
tap_is "$(count "$E2E_TMP/s1" 202)" 200 "200 buyers reserved with the control plane up (202)"
decided1() { [ "$(t_redis hlen "fg:{$EV}:result")" -ge 200 ]; }
tap_run "the control plane decided them all in Redis" t_wait_until 20 decided1
sleep 1 # their results reach the data plane
kill_cp
sleep 0.5
stream_bg 200 "$E2E_TMP/s2"
tap_run "with the control plane down the data plane still admits (50 x 202)" \
	t_wait_until 30 at_least "$E2E_TMP/s2" 202 50
kill -TERM "$E2E_DP_PID"
tap_run "after SIGTERM new reserves are answered 503" \
	t_wait_until 20 at_least "$E2E_TMP/s2" 503 5
# Longer than the 2-second flush the data plane used to give its reservations.
sleep 3
tap_ok "$(kill -0 "$E2E_DP_PID" 2>/dev/null; echo $?)" \
	"the data plane still waits for the control plane 3 s later"
n202=$(count "$E2E_TMP/s2" 202)
start_cp || tap_bail "control plane ready again"
wait_dp 60
stream_end
tap_is "$DP_RC" 0 "the data plane exits with status 0 once the control plane came back"
tap_ok "$(grep -q 'stopping: every accepted reservation is with the control plane' \
	"$E2E_TMP/dataplane.log"; echo $?)" "  its log says it handed everything over"
tap_is "$(awk '$2 == 503 { s = 1 } s && $2 == 202 { n++ } END { print n + 0 }' "$E2E_TMP/s2")" 0 \
	"no 202 after the first 503 of the stop"
tap_is "$(missing_in_redis "$E2E_TMP/s1")/$(missing_in_redis "$E2E_TMP/s2")" 0/0 \
	"every user answered 202 ($((200 + n202))) has a decision in Redis"
tap_is "$(final 'unsent at stop')/$(final 'unconfirmed at stop')" 0/0 \
	"the final counters: 0 unsent at stop, 0 unconfirmed at stop"
tap_ok "$(grep -Eq 'rejects +stopping +[1-9]' "$E2E_TMP/dataplane.log"; echo $?)" \
	"the 503s are counted as rejects stopping"

# ---- 2. the control plane stays gone --------------------------------------------------------
start_dp "$1" || tap_bail "the data plane starts again"
tap_run "the data plane shows the sale open again" t_wait_until 20 e2e_sale_open $EV
used=$((200 + $(wc -l <"$E2E_TMP/s2") + 10))
[ $((used + 2000)) -lt $USERS ] || tap_bail "enough buyers left for part 2 (used $used of $USERS)"
before=$(t_redis hlen "fg:{$EV}:result")
stream $used 100 "$E2E_TMP/s3" >"$E2E_TMP/s3.summary" 2>&1 || true
tap_diag "answers: $(cat "$E2E_TMP/s3.summary")"
tap_is "$(count "$E2E_TMP/s3" 202)" 100 "100 more buyers reserved (202)"
decided3() { [ "$(t_redis hlen "fg:{$EV}:result")" -ge $((before + 100)) ]; }
tap_run "the control plane decided them in Redis" t_wait_until 20 decided3
sleep 1
kill_cp
sleep 0.5
stream_bg $((used + 100)) "$E2E_TMP/s4"
tap_run "with the control plane down the data plane admits (30 x 202)" \
	t_wait_until 30 at_least "$E2E_TMP/s4" 202 30
kill -TERM "$E2E_DP_PID"
t_wait_until 20 at_least "$E2E_TMP/s4" 503 1 || true
n4=$(count "$E2E_TMP/s4" 202)
tap_diag "answers before the stop ended: $(cut -d' ' -f2 "$E2E_TMP/s4" | sort | uniq -c |
	tr '\n' ' ')"
wait_dp 60
stream_end
tap_is "$DP_RC" 0 "the data plane exits with status 0 when the control plane stays gone"
tap_ok "$(grep -q 'the control plane is gone' "$E2E_TMP/dataplane.log"; echo $?)" \
	"  its log says the control plane is gone"
tap_diag "$(grep -E '  bridge:' "$E2E_TMP/dataplane.log")"
lost=$(($(final 'unsent at stop') + $(final 'unconfirmed at stop')))
tap_is "$lost" "$n4" "unsent + unconfirmed at stop count exactly the $n4 admitted after the kill"
tap_is "$(missing_in_redis "$E2E_TMP/s4")" "$n4" "  and none of them reached Redis"
tap_is "$(missing_in_redis "$E2E_TMP/s3")" 0 "the 100 decided before the kill are all in Redis"
tap_done
