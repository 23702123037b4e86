#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The control plane's and the order writer's wall clock stepped back one hour mid-sale (an NTP
# step, a VM resumed, date -s), their monotonic clock left alone: libfaketime (Debian's faketime)
# in both, its offset read from a file the test rewrites. The daemons' timers follow the
# monotonic clock (docs/operations.md, "Timers follow the monotonic clock"), so nothing waits for
# the hour to pass: the data plane keeps hearing heartbeats (/readyz stays 200 for 10 s, twice
# bridge.resync), and sees the control plane's clock an hour behind its own; a reservation made
# after the step is decided at once and becomes an order; a poll whose ORDERED push the data
# plane missed (the control plane's test hook FG_TEST_DROP_ORDERED_USER) is answered by the
# control plane's result queries.
#
# usage: test_clock_step.sh DATAPLANE CONTROLPLANE FLASHGATECTL ORDER_WRITER
set -euo pipefail
. "$(dirname "$0")/harness.sh"

EV=21
STEP_S=3600
OW_PID=

E2E_TOOLS=(redis-cli psql)
e2e_sale_begin cs 2 "$@" -s admission.receipt_young=2s
cs_stop() { [ -z "$OW_PID" ] || fg_stop_pid "$OW_PID" 10 || true; }
T_CLEANUP+=(cs_stop)

# faked EXE: EXE with its wall clock shifted by the offset in $OFFSET_FILE ("+0" at first).
OFFSET_FILE=$E2E_TMP/wall-offset
echo +0 >"$OFFSET_FILE"
faked() { t_faked "$1" "$OFFSET_FILE"; }
T_CP=$(faked "$CP_EXE") || tap_bail "libfaketime is installed (scripts/install-deps: faketime)"
# User 702's ORDERED, pushed by the order writer, never reaches the data plane: its poll asks
# the control plane (a result query).
FG_TEST_DROP_ORDERED_USER=702 t_cp_up || tap_bail "control plane ready (under libfaketime)"
"$(faked "$OW_EXE")" -s "order_writer.push_endpoint=tcp://127.0.0.1:$PULL_PORT" \
	-s order_writer.max_rate=0 "${T_REDIS[@]}" -s "postgres.conninfo=$FG_PG_CONNINFO" \
	>"$E2E_TMP/ow.log" 2>&1 &
OW_PID=$!
fg_wait_line "$E2E_TMP/ow.log" "\\[$OW_PID\\] [a-z]+: consumer " "$OW_PID" 20 ||
	tap_bail "order writer ready (under libfaketime)"

AUTH=00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff
tap_run "the sale is set up (event, keys, limits, preheat, open)" eval "
	ctl event create $EV --name 'clock step' --stock 50 --starts-at 2026-01-01T00:00:00Z \
		--ends-at 2036-01-01T00:00:00Z --pay-window 10m &&
	ctl keys auth-set 1 <<<$AUTH && ctl keys rotate &&
	ctl limits set ip 100000/4000 user 1000/2000 device 100/200 forward 100000 &&
	ctl event preheat $EV && ctl event open $EV"
open_here() {
	e2e_curl ev "$E2E_BASE/api/v1/events/$EV"
	grep -q '"state":"open"' "$E2E_TMP/ev.b"
}
tap_run "the data plane shows the sale open" t_wait_until 20 open_here
# Session tokens by the shop's clock (the test's), not the control plane's faked one.
t_sessions "$AUTH" 701 3 >"$E2E_TMP/sessions"

# buy U: a purchase token, the reserve (202); leaves the receipt in RC[U].
declare -A RC
buy() {
	local u=$1 s
	s=$(awk -v u="$u" '$1 == u { print $2 }' "$E2E_TMP/sessions")
	e2e_curl "tok$u" "$E2E_BASE/api/v1/events/$EV/token" -X POST -H "Authorization: Bearer $s"
	[ "$E2E_CODE" = 200 ] || return 1
	local tok path
	tok=$(jget token <"$E2E_TMP/tok$u.b")
	path=$(jget reserve_path <"$E2E_TMP/tok$u.b")
	e2e_curl "res$u" "$E2E_BASE$path" -X POST -H "X-Flash-Token: $tok"
	[ "$E2E_CODE" = 202 ] || return 1
	RC[$u]=$(jget receipt <"$E2E_TMP/res$u.b")
}
# shows U STATUS: U's poll says STATUS (its body in $E2E_TMP/pU.b).
shows() {
	e2e_curl "p$1" "$E2E_BASE/api/v1/events/$EV/result" -H "X-Flash-Token: ${RC[$1]}"
	grep -q "\"status\":\"$2\"" "$E2E_TMP/p$1.b"
}
ready() {
	e2e_curl rz "$E2E_BASE/readyz"
	[ "$E2E_CODE" = 200 ]
}
# readyz_for S: GET /readyz every 20 ms for S seconds from the client namespace; prints the
# answers by status ("200=480").
readyz_for() {
	fg_ns_exec python3 - "$FG_DP_ADDR" "$1" <<'PY'
import collections, http.client, sys, time
addr, secs = sys.argv[1], float(sys.argv[2])
codes, end = collections.Counter(), time.monotonic() + secs
while time.monotonic() < end:
    try:
        c = http.client.HTTPConnection(addr, 80, timeout=2)
        c.request("GET", "/readyz")
        codes[str(c.getresponse().status)] += 1
        c.close()
    except OSError:
        codes["none"] += 1
    time.sleep(0.02)
print(" ".join(f"{k}={v}" for k, v in sorted(codes.items())))
PY
}
cp_behind_ms() { # how far the control plane's clock is behind the data plane's, by its heartbeats
	ctlj stats | python3 -c 'import json,sys
d = json.load(sys.stdin).get("dp_counters", {})
print(max((v.get("clock_ahead_ms", 0) for v in d.values()), default=0))'
}
cp_an_hour_behind() { [ "$(cp_behind_ms)" -gt $(((STEP_S - 60) * 1000)) ]; }

buy 701 || tap_bail "user 701 reserves (202)"
tap_run "before the step: user 701's reservation is decided and ordered" t_wait_until 10 shows 701 ordered
tap_run "before the step: /readyz 200" ready

# --- the step --------------------------------------------------------------------------------
echo "-$STEP_S" >"$OFFSET_FILE"
sleep 1.5 # libfaketime reads the file again after at most a second
faked_now=$("$(faked date)" +%s)
off=$((faked_now - $(date +%s) + STEP_S))
tap_ok "$((off * off <= 4 ? 0 : 1))" \
	"libfaketime steps a program's wall clock back ${STEP_S} s (date under it: $faked_now)"
# A data plane that hears nothing for bridge.resync (5 s) answers /readyz 503 and asks for a
# snapshot (which brings it a heartbeat): neither may happen.
snaps0=$(t_stat links snapshot_requests)
answers=$(readyz_for 10)
tap_ok "$([[ $answers =~ ^200=[0-9]+$ ]]; echo $?)" \
	"/readyz answers 200 for 10 s after the control plane's clock stepped back an hour ($answers)"
tap_is "$(t_stat links snapshot_requests)" "$snaps0" \
	"  the data plane never found the control plane silent: no snapshot asked for"
tap_run "  the data plane hears the heartbeats of a control plane an hour behind it" \
	t_wait_until 5 cp_an_hour_behind
tap_diag "clock_ahead_ms of the data plane: $(cp_behind_ms)"

t0=$(date +%s%3N)
buy 703 || tap_bail "user 703 reserves (202) after the step"
tap_run "after the step: user 703's reservation is decided within 2 s" \
	t_wait_until 2 eval '! shows 703 queued'
tap_diag "user 703 decided ($(cat "$E2E_TMP/p703.b")) within $(($(date +%s%3N) - t0)) ms"
tap_run "  and ordered by the order writer" t_wait_until 10 shows 703 ordered

q0=$(t_stat decisions result_queries_found)
buy 702 || tap_bail "user 702 reserves (202) after the step"
dropped() { grep -q "ORDERED result of user 702 .* not relayed" "$E2E_TMP/cp.log"; }
tap_run "user 702's ORDERED was not relayed to the data plane (the test hook)" \
	t_wait_until 15 dropped
# Past receipt_young (2 s), a poll that finds reserved asks the control plane.
tap_run "user 702's poll shows ordered, answered by a result query" t_wait_until 10 shows 702 ordered
tap_ok "$(($(t_stat decisions result_queries_found) > q0 ? 0 : 1))" \
	"  the control plane answered result queries ($q0 before, $(t_stat decisions result_queries_found) now)"
tap_run "/readyz is still 200" ready

e2e_sale_end
