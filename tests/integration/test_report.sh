#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The report of a sale (docs/operations.md "The report of a sale"), against the real control
# plane with Redis and PostgreSQL from scripts/services: while an event is open the control plane
# writes a sample of it every second (sale_samples), also after it was restarted;
# `flashgatectl report EVENT --out DIR` writes the report (index.html and four plots) from
# PostgreSQL alone, during the sale and after it, with the sale's figures, its samples, the
# admin commands that touched it and the invariants as they stand (exit 1 and FAIL when one does
# not hold); a sale that was never open gets a report too.
#
# usage: test_report.sh CONTROLPLANE FLASHGATECTL
set -uo pipefail

CP=$1 CTL=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
t_begin report
t_services_up "$TMP/svc"
T_CP=$CP T_CTL=$CTL
export FLASHGATE_REPORT_SCRIPT=$ROOT/flashgatectl/sale_report.py
/usr/bin/python3 -c 'import psycopg2, matplotlib' 2>/dev/null ||
	tap_bail "python3-psycopg2 and python3-matplotlib are installed (scripts/install-deps)"
t_cp_up
tap_ok $? "the control plane is ready"

now=$(date +%s)
ctl event create 51 --name "reported" --stock 20 --starts-at $((now - 60)) \
	--ends-at $((now + 3600)) --pay-window 15m >/dev/null && ctl event preheat 51 >/dev/null &&
	ctl event open 51 >/dev/null
tap_ok $? "event 51 (stock 20) created, preheated, open"
ctl event create 52 --name "never open" --stock 5 --starts-at $((now + 3600)) \
	--ends-at $((now + 7200)) --pay-window 15m >/dev/null
tap_ok $? "event 52 created (never opened)"

# buy FIRST N: N orders written as the order writer writes them (the stock taken with them).
buy() {
	t_sql "WITH o AS (INSERT INTO orders (event_id, user_id, reservation_id, pay_deadline)
		SELECT 51, u, u, now() + interval '15 min' FROM generate_series($1, $1 + $2 - 1) u
		RETURNING 1) UPDATE stock SET available = available - (SELECT count(*) FROM o)
		WHERE event_id = 51" >/dev/null
}
for i in 0 1 2; do
	buy $((100 + 3 * i)) 3
	sleep 1.2
done
samples() { t_sql "SELECT count(*) FROM sale_samples WHERE event_id = $1"; }
tap_run "the control plane samples the open sale every second" t_wait_until 10 \
	eval '[ "$(samples 51)" -ge 3 ]'
tap_is "$(samples 52)" 0 "  and not the event that is not open"
tap_ok "$(t_sql "SELECT max(orders) = 9 AND min(orders) < 9 AND max(decisions->>'received') IS NOT NULL
	AND bool_and(answers ? '202') FROM sale_samples WHERE event_id = 51" | grep -qx t &&
	echo 0 || echo 1)" "  each sample with the orders so far, the decisions and the answers"

# During the sale.
"$CTL" report 51 --out "$TMP/during" >"$TMP/during.out" 2>&1
tap_is $? 0 "flashgatectl report 51 during the sale: exit 0"

# The control plane restarts; the sale goes on and ends.
fg_stop_pid "$CP_PID" 10
tap_is "$FG_STOP_RC" 0 "the control plane stops"
restarted=$(t_sql "SELECT now()")
n_before=$(samples 51)
t_cp_up
tap_ok $? "the control plane is started again"
buy 110 3
tap_is "$(ctlj order pay "$(t_sql "SELECT id FROM orders WHERE event_id = 51 AND user_id = 100")" |
	jget result)" paid "order pay (user 100's)"
ctl order pay "$(t_sql "SELECT id FROM orders WHERE event_id = 51 AND user_id = 101")" >/dev/null
tap_is "$(t_sql "SELECT flashgate_cancel(id) FROM orders WHERE event_id = 51 AND user_id = 102")" \
	cancelled "flashgate_cancel() (user 102's)"
after() { t_sql "SELECT count(*) FROM sale_samples WHERE event_id = 51 AND at > '$restarted'"; }
tap_run "the restarted control plane samples it again" t_wait_until 10 eval '[ "$(after)" -ge 2 ]'
ctl event close 51 >/dev/null
tap_ok $? "event close 51"
sleep 1.5
closed=$(samples 51)
sleep 1.5
tap_is "$(samples 51)" "$closed" "no sample once the sale is closed"

# --- the report after the sale ------------------------------------------------------------------
"$CTL" report 51 --out "$TMP/rep" >"$TMP/rep.out" 2>&1
tap_is $? 0 "flashgatectl report 51 --out DIR after the sale: exit 0"
tap_is "$(cat "$TMP/rep.out")" "$TMP/rep/index.html" "  it prints the page's path"
for f in requests decisions stock orders; do
	tap_ok "$( [ "$(stat -c %s "$TMP/rep/$f.png" 2>/dev/null || echo 0)" -gt 5000 ] && echo 0 ||
		echo 1)" "  $f.png is a plot ($(stat -c %s "$TMP/rep/$f.png" 2>/dev/null || echo 0) bytes)"
done
page=$TMP/rep/index.html
has() { grep -q -- "$1" "$page"; }
tap_ok "$(has 'Invariants now: <b class=pass>PASS' && echo 0 || echo 1)" "  the invariants: PASS"
tap_ok "$(has 'orders 12: paid 2, pending 9, expired' && has 'cancelled 1; items left 9' &&
	echo 0 || echo 1)" "  the sale's figures (12 orders: 2 paid, 1 cancelled; 9 left)"
tap_ok "$(has "samples: $(samples 51)," && echo 0 || echo 1)" \
	"  its $(samples 51) samples, $n_before of them before the restart"
for c in "event create 51" "event preheat 51" "event open 51" "order pay" "event close 51"; do
	tap_ok "$(has "<code>$c" && echo 0 || echo 1)" "  the admin command '$c' in its table"
done
tap_ok "$(has 'event create 52' && echo 1 || echo 0)" "  not another sale's"

# --- an invariant that does not hold -------------------------------------------------------------
t_sql "UPDATE stock SET available = available - 1 WHERE event_id = 51" >/dev/null
"$CTL" report 51 --out "$TMP/bad" >/dev/null 2>&1
tap_is $? 1 "an item lost from the stock: report exits 1"
tap_ok "$(grep -q 'the stock adds up: left + pending + paid = stock</td><td class=fail>FAIL' \
	"$TMP/bad/index.html" && echo 0 || echo 1)" "  and its page says which invariant FAILs"
t_sql "UPDATE stock SET available = available + 1 WHERE event_id = 51" >/dev/null

# --- a sale that was never open, and mistakes ---------------------------------------------------
"$CTL" report 52 --out "$TMP/never" >/dev/null 2>&1
tap_is $? 0 "a sale that was never open: a report all the same"
tap_ok "$(grep -q 'never open while a control plane sampled it' "$TMP/never/index.html" && echo 0 ||
	echo 1)" "  saying it has no samples"
"$CTL" report 53 --out "$TMP/none" >/dev/null 2>"$TMP/none.err"
tap_is $? 2 "no such event: exit 2"
tap_ok "$(grep -q 'there is no event 53' "$TMP/none.err" && echo 0 || echo 1)" "  saying so"
"$CTL" report 51 >/dev/null 2>"$TMP/noout.err"
tap_is $? 2 "no --out: a usage error"
tap_done
