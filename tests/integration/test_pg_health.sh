#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# PostgreSQL's health gauge (docs/metrics.md "PostgreSQL's health"): the control plane and the
# order writer each probe PostgreSQL every second and serve flashgate_{cp,ow}_postgres_up, the
# probe's time and the seconds since its last answer; flashgatectl stats and top show the
# control plane's. With PostgreSQL killed (scripts/services pg-kill) both gauges go 0 and the
# time since the last answer grows, top says DOWN; started again, both go back to 1.
#
# usage: test_pg_health.sh CONTROLPLANE FLASHGATECTL ORDER_WRITER
set -uo pipefail

CP=$1 CTL=$2 OW=$3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
t_begin pgh
t_services_up "$TMP/svc"
T_CP=$CP T_CTL=$CTL
OW_PID=
ow_stop() { [ -z "$OW_PID" ] || fg_stop_pid "$OW_PID" 10 || true; }
T_CLEANUP+=(ow_stop)
t_cp_up
tap_ok $? "the control plane is ready (metrics on 127.0.0.1:$T_METRICS_PORT)"
OW_MPORT=$(fg_free_ports 1)
"$OW" -s "order_writer.push_endpoint=$T_PULL" -s "order_writer.metrics_port=$OW_MPORT" \
	"${T_REDIS[@]}" -s "postgres.conninfo=$FG_PG_CONNINFO" >"$TMP/ow.log" 2>&1 &
OW_PID=$!

# gauge PORT NAME: the value of NAME in the metrics served on PORT (empty when absent).
gauge() {
	curl -s -m 5 "http://127.0.0.1:$1/metrics" | awk -v n="$2" '$1 == n { print $2 }'
}
is() { [ "$(gauge "$1" "$2")" = "$3" ]; }
# over PORT NAME LIMIT: NAME's value is above LIMIT.
over() { awk -v v="$(gauge "$1" "$2")" -v l="$3" 'BEGIN { exit !(v != "" && v > l) }'; }
CPM=$T_METRICS_PORT
tap_run "the control plane: flashgate_cp_postgres_up 1" t_wait_until 15 is "$CPM" \
	flashgate_cp_postgres_up 1
tap_run "the order writer: flashgate_ow_postgres_up 1" t_wait_until 20 is "$OW_MPORT" \
	flashgate_ow_postgres_up 1
tap_ok "$(over "$CPM" flashgate_cp_postgres_since_success_seconds 3 && echo 1 || echo 0)" \
	"  the control plane's last answer under 3 s ago"
tap_ok "$(over "$CPM" flashgate_cp_postgres_query_seconds 1 && echo 1 || echo 0)" \
	"  its probe's time under 1 s ($(gauge "$CPM" flashgate_cp_postgres_query_seconds) s)"
tap_is "$(ctlj stats | jget postgres.up)" true "flashgatectl stats: postgres.up true"
top_links() { "$CTL" --socket "$T_ADMIN" top --count 1 2>&1 | grep '^links'; }
tap_ok "$(top_links | grep -q 'redis up  postgres up [0-9]* ms' && echo 0 || echo 1)" \
	"flashgatectl top: postgres up ($(top_links))"

"$ROOT/scripts/services" pg-kill "$TMP/svc" >/dev/null 2>&1
tap_ok $? "PostgreSQL killed"
tap_run "the control plane: flashgate_cp_postgres_up 0" t_wait_until 15 is "$CPM" \
	flashgate_cp_postgres_up 0
tap_run "the order writer: flashgate_ow_postgres_up 0" t_wait_until 15 is "$OW_MPORT" \
	flashgate_ow_postgres_up 0
tap_run "  the time since the last answer grows past 5 s" t_wait_until 15 over "$CPM" \
	flashgate_cp_postgres_since_success_seconds 5
tap_ok "$(top_links | grep -q 'redis up  postgres DOWN [0-9]* s' && echo 0 || echo 1)" \
	"flashgatectl top: postgres DOWN ($(top_links))"

"$ROOT/scripts/services" pg-start "$TMP/svc" >/dev/null 2>&1
tap_ok $? "PostgreSQL started again"
tap_run "the control plane: flashgate_cp_postgres_up 1 again" t_wait_until 30 is "$CPM" \
	flashgate_cp_postgres_up 1
tap_run "the order writer: flashgate_ow_postgres_up 1 again" t_wait_until 30 is "$OW_MPORT" \
	flashgate_ow_postgres_up 1
kill -0 "$OW_PID" 2>/dev/null && kill -0 "$CP_PID" 2>/dev/null
tap_ok $? "both daemons ran on throughout"
tap_done
