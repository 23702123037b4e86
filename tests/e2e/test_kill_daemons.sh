#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A sale during which each daemon is killed with SIGKILL once, at a random moment, and started
# again: the order writer, the control plane, the data plane. Buyers keep buying
# (scripts/demo-shopper.py, retrying what a dead daemon left unanswered). Afterwards every
# invariant of the design holds: orders <= stock, one order per user, stock conservation in
# PostgreSQL, every reservation Redis accepted is an order, Redis agrees with PostgreSQL.
#
# usage: test_kill_daemons.sh DATAPLANE CONTROLPLANE FLASHGATECTL ORDER_WRITER
set -euo pipefail
. "$(dirname "$0")/harness.sh"

CP_EXE=${2:-} CTL_EXE=${3:-} OW_EXE=${4:-}
STOCK=300 USERS=900 EV=3
mapfile -t PORTS < <(fg_free_ports 2)
PULL=tcp://127.0.0.1:${PORTS[0]} PUB=tcp://127.0.0.1:${PORTS[1]}
# Lost reservations (a control plane killed with them in its buffers) turn into "retry" fast.
E2E_DP_ARGS=(-s "bridge.push_endpoint=$PULL" -s "bridge.sub_endpoint=$PUB"
	-s admission.limit_table_log2=12 -s admission.receipt_young=1s
	-s admission.receipt_retry=3s -s bridge.resync=2s)
E2E_TOOLS=(redis-cli psql)
e2e_begin kd "$1"
[ -x "$CP_EXE" ] && [ -x "$CTL_EXE" ] && [ -x "$OW_EXE" ] || tap_bail "daemons given"

OW_PID= SHOP_PID=
kd_stop() { for p in $SHOP_PID $OW_PID; do fg_stop_pid "$p" 10 || true; done; }
T_CLEANUP+=(kd_stop)
t_services_up "$E2E_TMP/svc"
SVC=$T_SVC
T_CP=$CP_EXE T_CTL=$CTL_EXE T_PULL=$PULL T_PUB=$PUB
ADMIN=$E2E_TMP/admin.sock

# Each start waits for the ready line of its own pid (the logs are appended across restarts).
start_cp() { t_cp_up; }
start_ow() {
	"$OW_EXE" -s "order_writer.push_endpoint=$PULL" -s order_writer.claim_idle=1s \
		-s order_writer.claim_interval=500ms -s order_writer.max_rate=2000 \
		"${T_REDIS[@]}" -s "postgres.conninfo=$FG_PG_CONNINFO" \
		>>"$E2E_TMP/ow.log" 2>&1 &
	OW_PID=$!
	fg_wait_line "$E2E_TMP/ow.log" "\\[$OW_PID\\] [a-z]+: consumer " "$OW_PID" 20
}
start_dp() {
	fg_dp_start "$1" "$E2E_PREFIX" "$E2E_TMP/dataplane.log" -c "$E2E_TMP/flashgate.conf" \
		"${E2E_DP_ARGS[@]}"
	E2E_DP_PID=$FG_DP_PID
	fg_wait_line "$E2E_TMP/dataplane.log" 'ready:' "$E2E_DP_PID" 30
}
start_cp || tap_bail "control plane ready"
start_ow || tap_bail "order writer ready"
AUTH=$(python3 -c 'import os; print(os.urandom(32).hex())')
tap_run "the sale is set up: $STOCK items, $USERS buyers" \
	e2e_open_sale $EV "kill test" $STOCK "$AUTH"
tap_run "the data plane shows the sale open" t_wait_until 20 e2e_sale_open $EV

# The shop's login service mints the session tokens (docs/tokens.md, in Python).
t_sessions "$AUTH" 5001 $USERS >"$E2E_TMP/sessions"
fg_ns_exec python3 "$FG_ROOT/scripts/demo-shopper.py" --base "$E2E_BASE" --event $EV \
	--sessions "$E2E_TMP/sessions" --parallel 8 --deadline 60 --double-every 0 \
	--out "$E2E_TMP/shop.json" >"$E2E_TMP/shop.log" 2>&1 &
SHOP_PID=$!

# One SIGKILL each, at a random moment while the buyers buy, then a restart.
pause() { sleep "$(python3 -c 'import random; print(round(random.uniform(0.3, 1.2), 2))')"; }
# kill_and_start NAME PID START...: one check: PID died of the SIGKILL (status 137, not before)
# and START, which waits for the new process's ready line, succeeded.
kill_and_start() {
	local name=$1 pid=$2 died=0 rc=0
	shift 2
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null || died=$?
	"$@" || rc=$?
	tap_is "$died/$rc" 137/0 "$name killed with SIGKILL (137) and started again (0)"
}
pause
kill_and_start "order writer" "$OW_PID" start_ow
pause
kill_and_start "control plane" "$CP_PID" start_cp
pause
kill_and_start "data plane" "$E2E_DP_PID" start_dp "$1"

wait "$SHOP_PID" || true
SHOP_PID=
outcomes=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["outcomes"])' \
	"$E2E_TMP/shop.json" 2>/dev/null || echo none)
tap_diag "buyers' outcomes: $outcomes"
[ "$outcomes" != none ] || tap_diag "shopper: $(tail -5 "$E2E_TMP/shop.log" | tr '\n' '|')"
holding=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["holding"])' \
	"$E2E_TMP/shop.json" 2>/dev/null || echo 0)
tap_is "$holding" $STOCK "every item found a buyer despite the kills"

tap_is "$(t_redis hlen "fg:{$EV}:result")" $STOCK "Redis: $STOCK buyers (result fields), no more"
tap_is "$(t_redis get "fg:{$EV}:stock")" 0 "Redis stock is 0, never below"
# Every invariant (scripts/check-invariants waits for the order writer to drain the outbox);
# the users the buyers were told hold an item are exactly the users with an order.
python3 -c 'import json,sys; print("\n".join(map(str, json.load(open(sys.argv[1]))["reserved_users"])))' \
	"$E2E_TMP/shop.json" >"$E2E_TMP/told"
ctl event close $EV >/dev/null
e2e_invariants --event $EV --users-file "$E2E_TMP/sessions" --told "$E2E_TMP/told" \
	--admin-socket "$ADMIN" --ctl "$CTL_EXE" --services "$SVC" --wait 30

for p in OW_PID CP_PID; do
	fg_stop_pid "${!p}" 10
	tap_is "$FG_STOP_RC" 0 "${p%_PID} exits with status 0 on SIGTERM after the sale"
	printf -v "$p" ''
done
e2e_stop_dataplane
tap_done
