#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# flashgatectl top (docs/operations.md "The live view"), against the real control plane with
# Redis and PostgreSQL from scripts/services, during a sale whose orders are written meanwhile:
# in a terminal (tmux: new-session, capture-pane) it redraws one screen every second with the
# sale's figures as they change (orders, items left), and ends on C-c; when its output is not a
# terminal it prints plain blocks of lines, one a second, without escape sequences.
#
# usage: test_top.sh CONTROLPLANE FLASHGATECTL
set -uo pipefail

CP=$1 CTL=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
t_begin top
command -v tmux >/dev/null || tap_bail "tmux is installed (scripts/install-deps)"
t_services_up "$TMP/svc"
T_CP=$CP T_CTL=$CTL
SESSION=fg-top-$$
top_stop() { tmux kill-session -t "$SESSION" 2>/dev/null || true; }
T_CLEANUP+=(top_stop)
t_cp_up
tap_ok $? "the control plane is ready"

now=$(date +%s)
ctl event create 61 --name "live view" --stock 30 --starts-at $((now - 60)) \
	--ends-at $((now + 3600)) --pay-window 15m >/dev/null && ctl event preheat 61 >/dev/null &&
	ctl event open 61 >/dev/null
tap_ok $? "event 61 (stock 30) open"
buy() { # buy FIRST N: N orders as the order writer writes them
	t_sql "WITH o AS (INSERT INTO orders (event_id, user_id, reservation_id, pay_deadline)
		SELECT 61, u, u, now() + interval '15 min' FROM generate_series($1, $1 + $2 - 1) u
		RETURNING 1) UPDATE stock SET available = available - (SELECT count(*) FROM o)
		WHERE event_id = 61" >/dev/null
}

# --- in a terminal ----------------------------------------------------------------------------
tmux new-session -d -s "$SESSION" -x 132 -y 30 \
	"$CTL --socket $T_ADMIN top; echo top-exited-\$?; sleep 30"
screen() { tmux capture-pane -p -t "$SESSION"; }
shows() { screen | grep -q -- "$1"; }
tap_run "top in tmux shows the open sale (followed without naming it)" t_wait_until 15 \
	shows 'event 61 "live view" open'
tap_ok "$(shows 'orders        0 ' && shows 'left 30 of 30' && echo 0 || echo 1)" \
	"  no order yet, 30 items left"
first=$(screen | head -1)
buy 100 7
tap_run "  a second later: 7 orders, 23 left" t_wait_until 10 eval \
	"shows 'orders        7 ' && shows 'left 23 of 30'"
tap_ok "$([ "$(screen | grep -c 'flashgate top')" = 1 ] && echo 0 || echo 1)" \
	"  one screen redrawn in place (its heading once)"
sleep 1.2
tap_ok "$([ "$(screen | head -1)" != "$first" ] && echo 0 || echo 1)" \
	"  refreshed every second (its clock moved)"
tap_ok "$(shows '^decisions/s   reserved 0' && shows 'links         redis up' && echo 0 ||
	echo 1)" "  decisions per second, links"
screen | grep -v '^$' | sed 's/^/# /'
tmux send-keys -t "$SESSION" C-c
tap_run "C-c ends it with status 0" t_wait_until 10 shows 'top-exited-0'

# --- not a terminal -----------------------------------------------------------------------------
"$CTL" --socket "$T_ADMIN" top 61 --count 3 >"$TMP/plain.out" 2>&1
tap_is $? 0 "top 61 --count 3 into a file: exit 0"
tap_is "$(grep -c '^flashgate top' "$TMP/plain.out")" 3 "  three frames of plain lines"
tap_ok "$(grep -q $'\033' "$TMP/plain.out" && echo 1 || echo 0)" "  without escape sequences"
tap_ok "$(grep -q 'orders        7 ' "$TMP/plain.out" && echo 0 || echo 1)" "  with the sale's figures"
"$CTL" --socket "$T_ADMIN" top 61 --count 0 >/dev/null 2>&1
tap_is $? 2 "top --count 0: a usage error"
tap_done
