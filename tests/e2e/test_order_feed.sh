#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Orders announced to the shop (docs/operations.md "Orders announced to the shop"): the listener
# docs/operations.md prints, run as printed, during a whole sale through every real component,
# sees every change of every order of the sale exactly once and in seq order: orders created,
# paid (flashgate_pay() and flashgatectl order pay), cancelled, expired by the sweeper; also
# when it is stopped (SIGTERM) in the middle of the sale and started again, and for a change
# whose transaction stays open while later changes commit. A NOTIFY wakes it (a change is
# printed well before its 10 s fallback read).
#
# usage: test_order_feed.sh DATAPLANE CONTROLPLANE FLASHGATECTL ORDER_WRITER
set -euo pipefail
. "$(dirname "$0")/harness.sh"

OW_PID=
LS_PID=
HOLD_PID=
EV=15
# Debian's python3, which has python3-psycopg2 (scripts/install-deps).
PY=/usr/bin/python3

E2E_TOOLS=(redis-cli psql)
e2e_sale_begin ofd 2 "$@"
"$PY" -c 'import psycopg2' 2>/dev/null || tap_bail "python3-psycopg2 is installed (scripts/install-deps)"
feed_stop() {
	local p
	for p in "$LS_PID" "$HOLD_PID" "$OW_PID"; do [ -z "$p" ] || fg_stop_pid "$p" 10 || true; done
}
T_CLEANUP+=(feed_stop)
t_cp_up || tap_bail "control plane ready"
tap_ok 0 "Redis, PostgreSQL and the control plane are up"

# --- the listener, as docs/operations.md prints it ---------------------------------------------
LISTENER=$E2E_TMP/order-listener
awk '/<!-- order-listener end -->/ { f = 0 } f && !/^```/ { print }
	/<!-- order-listener begin -->/ { f = 1 }' "$FG_ROOT/docs/operations.md" >"$LISTENER"
chmod +x "$LISTENER"
tap_ok "$(grep -q 'LISTEN flashgate_orders' "$LISTENER" && "$PY" -m py_compile "$LISTENER" &&
	echo 0 || echo 1)" "docs/operations.md holds the listener between its markers"
FEED=$E2E_TMP/feed.out
# listener_start: the listener "shop-1" in the background, its lines appended to FEED.
listener_start() {
	FG_PG_CONNINFO=$FG_PG_CONNINFO "$PY" "$LISTENER" shop-1 >>"$FEED" 2>>"$E2E_TMP/listener.err" &
	LS_PID=$!
}
listener_start

tap_run "the sale is set up (event, keys, limits, preheat, open)" e2e_open_sale $EV "order feed" 60 \
	00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff
tap_run "the data plane shows the sale open" t_wait_until 20 e2e_sale_open $EV
"$OW_EXE" -s "order_writer.push_endpoint=tcp://127.0.0.1:$PULL_PORT" -s order_writer.max_rate=0 \
	-s order_writer.sweep_interval=200ms \
	"${T_REDIS[@]}" -s "postgres.conninfo=$FG_PG_CONNINFO" \
	>"$E2E_TMP/ow.log" 2>&1 &
OW_PID=$!

buy() { e2e_buy $EV "$@"; }
n_orders() { t_sql "select count(*) from orders where event_id = $EV"; }
order_of() { t_sql "select id from orders where event_id = $EV and user_id = $1"; }
# feed_has ORDER_ID STATUS: the listener printed the change of ORDER_ID to STATUS.
feed_has() { awk -v o="$1" -v s="$2" '$2 == o && $6 == s { f = 1 } END { exit !f }' "$FEED"; }
lines() { wc -l <"$FEED"; }

buy $(seq 601 620) || tap_bail "users 601-620 reserve (202)"
tap_run "the order writer wrote the 20 orders" t_wait_until 30 eval '[ "$(n_orders)" = 20 ]'
tap_run "the listener printed the 20 orders" t_wait_until 15 eval '[ "$(lines)" -ge 20 ]'

# --- a NOTIFY wakes it: a payment is printed well before the 10 s fallback read ----------------
o=$(order_of 601)
t0=$(date +%s%3N)
tap_is "$(t_sql "select flashgate_pay($o)")" paid "flashgate_pay() pays user 601's order"
t_wait_until 8 feed_has "$o" paid && rc=0 || rc=1
tap_ok $rc "the listener printed the payment within 8 s (woken by NOTIFY flashgate_orders)"
tap_diag "printed $(($(date +%s%3N) - t0)) ms after flashgate_pay() returned"

# --- stopped in the middle of the sale: changes meanwhile; started again -----------------------
fg_stop_pid "$LS_PID" 15
tap_is "$FG_STOP_RC" 0 "the listener exits with status 0 on SIGTERM"
LS_PID=
seen_at_stop=$(lines)
buy $(seq 621 640) || tap_bail "users 621-640 reserve (202) while the listener is stopped"
for u in 602 603; do t_sql "select flashgate_pay($(order_of $u))" >/dev/null; done
tap_is "$(ctlj order pay "$(order_of 604)" | jget result)" paid "flashgatectl order pay pays user 604's"
for u in 605 606; do t_sql "select flashgate_cancel($(order_of $u))" >/dev/null; done
tap_is "$(ctlj order cancel "$(order_of 607)" | jget result)" cancelled \
	"flashgatectl order cancel cancels user 607's"
t_sql "update orders set pay_deadline = now() - interval '1 s'
	where event_id = $EV and user_id in (608, 609, 610)" >/dev/null
expired() { [ "$(t_sql "select count(*) from orders where event_id = $EV and status = 'expired'")" = 3 ]; }
tap_run "the sweeper expired users 608-610's orders" t_wait_until 20 expired
tap_run "the order writer wrote the 40 orders" t_wait_until 30 eval '[ "$(n_orders)" = 40 ]'
tap_is "$(lines)" "$seen_at_stop" "nothing was printed while the listener was stopped"
listener_start

# --- a change whose transaction stays open while later ones commit ------------------------------
# User 611's payment holds its transaction open for 3 s; the orders of users 641-650 are written
# meanwhile (their feed rows wait for the payment's COMMIT: the feed is in commit order, so the
# listener cannot read past the payment and miss it).
o611=$(order_of 611)
psql "$FG_PG_CONNINFO" -XAtq -v ON_ERROR_STOP=1 \
	-c "begin; select flashgate_pay($o611); select pg_sleep(3); commit;" \
	>"$E2E_TMP/hold.out" 2>&1 &
HOLD_PID=$!
sleep 0.5
buy $(seq 641 650) || tap_bail "users 641-650 reserve (202) while a payment is open"
for u in 612 613; do t_sql "select flashgate_pay($(order_of $u))" >/dev/null; done
wait "$HOLD_PID" && rc=0 || rc=$?
HOLD_PID=
tap_ok $rc "the payment held open committed ($(tr '\n' ' ' <"$E2E_TMP/hold.out"))"
tap_run "the order writer wrote the 50 orders" t_wait_until 30 eval '[ "$(n_orders)" = 50 ]'

# --- every change of the sale, exactly once ------------------------------------------------------
# What must have been printed: per order its creation, and how it ended if it did.
t_sql "select id, '-', 'pending' from orders where event_id = $EV
	union all select id, 'pending', status from orders where event_id = $EV and status <> 'pending'
	order by 1, 3" | tr '|' ' ' | sort >"$E2E_TMP/want"
want=$(wc -l <"$E2E_TMP/want")
tap_run "the listener printed $want changes" t_wait_until 20 eval '[ "$(lines)" -ge "$want" ]'
sleep 1 # anything printed twice would show now
fg_stop_pid "$LS_PID" 15
tap_is "$FG_STOP_RC" 0 "the listener exits with status 0 on SIGTERM, again"
LS_PID=
awk '{ print $2, $5, $6 }' "$FEED" | sort >"$E2E_TMP/got"
tap_is "$(wc -l <"$FEED")" "$want" "it printed $want lines: 50 orders created, 13 ended (7 paid, 3 cancelled, 3 expired)"
dups=$(uniq -d "$E2E_TMP/got" | wc -l)
tap_is "$dups" 0 "no change was printed twice"
tap_ok "$(cmp -s "$E2E_TMP/want" "$E2E_TMP/got" && echo 0 || echo 1)" \
	"every change of every order of the sale was printed: $(diff "$E2E_TMP/want" "$E2E_TMP/got" |
		grep -c '^[<>]' || true) differences"
tap_ok "$(awk 'NR > 1 && $1 <= p { bad = 1 } { p = $1 } END { exit bad }' "$FEED" && echo 0 ||
	echo 1)" "in increasing seq order"
tap_ok "$(awk -v e=$EV '$3 != e { bad = 1 } END { exit bad }' "$FEED" && echo 0 || echo 1)" \
	"each line names the sale ($EV)"
tap_is "$(t_sql "select seq from order_feed_cursors where listener = 'shop-1'")" \
	"$(tail -n 1 "$FEED" | cut -d' ' -f1)" "its cursor is at the last change it printed"
[ ! -s "$E2E_TMP/listener.err" ] || tap_diag "listener: $(tail -5 "$E2E_TMP/listener.err")"

e2e_sale_end
