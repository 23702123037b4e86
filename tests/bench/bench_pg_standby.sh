#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The order writer's orders per second with its commits synchronous to a streaming standby
# against the same without (docs/benchmarks.md, "Orders with a synchronous standby"): the
# services' PostgreSQL as the primary, a standby made with pg_basebackup -R (tests/lib/
# pg_standby.sh) streaming in both runs, synchronous_standby_names set or emptied. Each run: N
# reservations (default 100,000; FG_BENCH_QUICK=1: 5,000) of a new event decided by the control
# plane (tests/peer/fg_feed), then the order writer, cap off, until all are orders; the rate is
# taken between its first and last COMMIT. Runs alternate (sync, async, three times) so that the
# host's load falls on both. Prints figures; asserts only that every reservation became one order.
# FG_BENCH_OW_CONNECTIONS=K runs the order writer with K PostgreSQL connections (1..4; default
# its own, 2): K batches in flight, one inserting while the others' COMMITs wait for the standby.
#
# usage: bench_pg_standby.sh CONTROLPLANE FLASHGATECTL FG_FEED ORDER_WRITER
set -uo pipefail

CP=$1 CTL=$2 FEED=$3 OW=$4
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
N=100000
[ -z "${FG_BENCH_QUICK:-}" ] || N=5000
t_begin pgbench
t_services_up "$TMP/svc"
# shellcheck source=tests/lib/pg_standby.sh
. "$ROOT/tests/lib/pg_standby.sh"
sb_up
T_CP=$CP T_CTL=$CTL T_CTL_OUT=quiet
t_cp_up -s "postgres.conninfo=$SB_HA"
tap_ok $? "the control plane is ready"

run() { # EVENT SYNC(on|off)
	local ev=$1 pid span n
	sb_sync "$2"
	tap_ok $? "synchronous standby $2 ($(sb_state))"
	ctl event create "$ev" --name "bench $ev" --stock $N --starts-at 2026-01-01T00:00:00Z \
		--ends-at 2036-01-01T00:00:00Z --pay-window 15m &&
		ctl event preheat "$ev" && ctl event open "$ev"
	"$FEED" --push "$T_PULL" --sub "$T_PUB" --event "$ev" --users "1-$N" --dp $((10 + ev)) \
		--batch 500 --timeout-ms 120000 >"$TMP/feed$ev.out" 2>&1
	tap_is "$(t_field "$TMP/feed$ev.out" reserved)" $N "event $ev: $N reserved"
	"$OW" -s "order_writer.push_endpoint=$T_PULL" -s order_writer.max_rate=0 \
		-s order_writer.batch_size=2048 -s order_writer.poll_interval=1ms \
		-s order_writer.log_level=warn "${T_REDIS[@]}" \
		${FG_BENCH_OW_CONNECTIONS:+-s "order_writer.connections=$FG_BENCH_OW_CONNECTIONS"} \
		-s "postgres.conninfo=$SB_HA" >"$TMP/ow$ev.log" 2>&1 &
	pid=$!
	written() { [ "$(t_sql "SELECT available FROM stock WHERE event_id = $ev")" = 0 ]; }
	t_wait_until 300 written
	fg_stop_pid "$pid" 10
	n=$(t_sql "SELECT count(*) FROM orders WHERE event_id = $ev")
	tap_is "$n" $N "event $ev: every reservation one order"
	span=$(t_sql "SELECT extract(epoch FROM max(created_at) - min(created_at)) * 1e6
		FROM orders WHERE event_id = $ev")
	# The last COMMIT's orders share its timestamp: the span covers the others.
	last=$(t_sql "SELECT count(*) FROM orders WHERE event_id = $ev AND created_at =
		(SELECT max(created_at) FROM orders WHERE event_id = $ev)")
	RATE=$(awk -v n="$n" -v l="$last" -v s="$span" \
		'BEGIN { printf "%.0f", (s > 0 ? (n - l) * 1e6 / s : 0) }')
	tap_diag "synchronous standby $2: $n orders, $RATE orders/s between the first and last COMMIT"
}
declare -A sum=([on]=0 [off]=0)
ev=5
for _ in 1 2 3; do
	for s in on off; do
		run $ev $s
		sum[$s]=$((sum[$s] + RATE))
		ev=$((ev + 1))
	done
done
tap_diag "mean of 3 runs: synchronous standby $((sum[on] / 3)) orders/s, asynchronous" \
	"$((sum[off] / 3)) orders/s, ratio $(awk -v a="${sum[on]}" -v b="${sum[off]}" \
	'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')"
tap_done
