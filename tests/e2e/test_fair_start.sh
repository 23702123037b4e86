#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The fair start end to end (docs/fairness.md), through the real data plane, control plane,
# order writer, Redis and PostgreSQL: a sale with a line that opens before its start, a draw
# window and a proof-of-work challenge, created with flashgatectl. Its buyers, played by
# tests/e2e/fair_start.py in the client namespace, check the commitment before the line opens
# and the seed after the draw, the challenge (missing, wrong, replayed, a difficulty change),
# one place per user, positions that never increase, the items going to the first min(stock, n)
# by rank and sold_out to the others, flashgatectl event verify-draw (and its failure on a
# tampered rank); scripts/check-invariants afterwards.
#
# usage: test_fair_start.sh DATAPLANE CONTROLPLANE FLASHGATECTL ORDER_WRITER
set -euo pipefail
. "$(dirname "$0")/harness.sh"

CP_EXE=${2:-} CTL_EXE=${3:-} OW_EXE=${4:-}
EV=41 STOCK=10 BUYERS=40 BITS=8 QUEUE_IN=10 START_AFTER=5 WINDOW=8
mapfile -t PORTS < <(fg_free_ports 2)
PULL=tcp://127.0.0.1:${PORTS[0]} PUB=tcp://127.0.0.1:${PORTS[1]}
# Every buyer polls through the draw, a few times a second.
E2E_DP_ARGS=(-s "bridge.push_endpoint=$PULL" -s "bridge.sub_endpoint=$PUB"
	-s admission.poll_rate=20 -s admission.poll_burst=40)
E2E_TOOLS=(redis-cli psql)
e2e_begin fair "$1"
[ -x "$CP_EXE" ] && [ -x "$CTL_EXE" ] && [ -x "$OW_EXE" ] ||
	tap_bail "control plane, flashgatectl and order writer given"

OW_PID= PY_PID=
fs_cleanup() {
	[ -z "$PY_PID" ] || fg_stop_pid "$PY_PID" 10 || true
	[ -z "$OW_PID" ] || fg_stop_pid "$OW_PID" 10 || true
}
trap 'fs_cleanup; e2e_cleanup' EXIT
# The draw decides one entrant a batch, so that the buyers' script can hold it between them
# (Redis paused for up to a second: a longer reply timeout).
t_services_up "$E2E_TMP/svc"
T_CP=$CP_EXE T_CTL=$CTL_EXE T_PULL=$PULL T_PUB=$PUB T_CTL_OUT=$E2E_TMP/ctl.log
t_cp_up -s controlplane.draw_batch=1 -s redis.timeout=10s || tap_bail "control plane ready"
ADMIN=$T_ADMIN
"$OW_EXE" -s "order_writer.push_endpoint=$PULL" -s order_writer.max_rate=0 \
	"${T_REDIS[@]}" -s "postgres.conninfo=$FG_PG_CONNINFO" \
	>"$E2E_TMP/ow.log" 2>&1 &
OW_PID=$!

AUTH=$(python3 -c 'import os; print(os.urandom(32).hex())')
now=$(date +%s)
opens=$((now + QUEUE_IN)) starts=$((now + QUEUE_IN + START_AFTER))
draw_at=$((starts + WINDOW))
utc() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
setup() {
	ctl keys auth-set 1 <<<"$AUTH" && ctl keys rotate &&
		ctl limits set ip 100000/4000 user 20/20 device 20/20 forward 100000 &&
		ctl event create $EV --name "fair start" --stock $STOCK --starts-at "$(utc $starts)" \
			--ends-at 2036-01-01T00:00:00Z --pay-window 15m --queue-opens-at "$(utc $opens)" \
			--draw-window ${WINDOW}s --pow-bits $BITS &&
		ctl event preheat $EV && ctl event open $EV
}
setup || { tap_diag "$(tail -20 "$E2E_TMP/ctl.log")"; tap_bail "the sale set up with flashgatectl"; }
tap_ok 0 "a sale of $STOCK items: line opens in ${QUEUE_IN}s, starts ${START_AFTER}s later, draw" \
	"window ${WINDOW}s, challenge of $BITS bits"
upcoming() {
	e2e_curl ev "$E2E_BASE/api/v1/events/$EV"
	grep -q '"state":"upcoming"' "$E2E_TMP/ev.b"
}
tap_run "the data plane shows it upcoming" t_wait_until 8 upcoming

set +e
FS_DP_ADDR=$FG_DP_ADDR FS_EV=$EV FS_AUTH_HEX=$AUTH FS_CTL=$CTL_EXE FS_ADMIN=$ADMIN \
	FS_PSQL="psql -qtAX -h $FG_PG_HOST -p $FG_PG_PORT -U postgres flashgate" \
	FS_REDIS_SOCK=$FG_REDIS_SOCK FS_QUEUE_OPENS=$((opens * 1000)) FS_DRAW_AT=$((draw_at * 1000)) \
	FS_STOCK=$STOCK FS_BITS=$BITS FS_BUYERS=$BUYERS FS_TOLD=$E2E_TMP/told \
	fg_ns_exec python3 "$E2E_DIR/fair_start.py" >"$E2E_TMP/fair.out" 2>"$E2E_TMP/fair.err" &
PY_PID=$!
set -e
# Its lines as they come: each "ok" or "not ok" one check here.
e2e_relay "$PY_PID" "$E2E_TMP/fair.out" "$E2E_TMP/fair.err" "the buyers' script"
PY_PID=

[ -s "$E2E_TMP/told" ] || : >"$E2E_TMP/told"
e2e_invariants --event $EV --told "$E2E_TMP/told" --admin-socket "$ADMIN" --ctl "$CTL_EXE" \
	--services "$T_SVC" --wait 30
fg_stop_pid "$OW_PID" 10
OW_PID=
fg_stop_pid "$CP_PID" 10
tap_is "$FG_STOP_RC" 0 "the control plane exits with status 0 on SIGTERM"
CP_PID=
e2e_stop_dataplane
tap_done
