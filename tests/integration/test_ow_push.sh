#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# An order writer pushing to several control planes (docs/ha.md, "Several control planes"):
# two real control planes on one Redis and PostgreSQL, two order writers whose
# [order_writer] push_endpoint lists both, a stand-in data plane's SUB on each control plane's
# PUB (tests/peer/fg_results). Orders written while both live reach both sides; cp1 SIGKILLed:
# cp2 still gets every later order id, the writers' commits go on at the same rate (nothing
# waits for the lost one), and what cp1 could not take is dropped and counted for cp1 alone.
#
# usage: test_ow_push.sh CONTROLPLANE FLASHGATECTL FG_FEED ORDER_WRITER FG_RESULTS
set -uo pipefail

T_CP=$1 CTL=$2 FEED=$3 OW=$4 SUBX=$5
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
STOCK=1000 USERS=600 RATE=50 # per writer: the two commit about 100 orders a second
t_begin owpush
t_services_up "$TMP/svc"
mapfile -t P < <(fg_free_ports 6)
CP1_PULL=tcp://127.0.0.1:${P[0]} CP1_PUB=tcp://127.0.0.1:${P[1]}
CP2_PULL=tcp://127.0.0.1:${P[2]} CP2_PUB=tcp://127.0.0.1:${P[3]}

t_cp_n 1 "${P[0]}" "${P[1]}" -s controlplane.batch_max=20
tap_ok $? "control plane 1 is ready"
T_CTL=$CTL T_ADMIN=$TMP/admin1.sock T_CTL_OUT=quiet
ctl event create 5 --name "owpush" --stock $STOCK --starts-at 2026-01-01T00:00:00Z \
	--ends-at 2036-01-01T00:00:00Z --pay-window 15m &&
	ctl event preheat 5 && ctl event open 5
tap_ok $? "event 5 created, preheated and opened with $STOCK items"
t_cp_n 2 "${P[2]}" "${P[3]}" -s controlplane.batch_max=20
tap_ok $? "control plane 2 is ready (the same Redis and PostgreSQL)"

# A stand-in data plane on each control plane: the order ids each one relays.
"$SUBX" --sub "$CP1_PUB" --event 5 --ms 120000 >"$TMP/sub1.out" 2>&1 &
T_PIDS+=($!)
"$SUBX" --sub "$CP2_PUB" --event 5 --ms 120000 >"$TMP/sub2.out" 2>&1 &
T_PIDS+=($!)
ready() { grep -q '^ready' "$TMP/sub1.out" && grep -q '^ready' "$TMP/sub2.out"; }
t_wait_until 20 ready
tap_ok $? "a subscriber on each control plane's PUB"

"$FEED" --push "$CP1_PULL" --sub "$CP1_PUB" --event 5 --users "1-$USERS" --dp 11 --batch 20 \
	--timeout-ms 30000 >"$TMP/feed.out" 2>&1
tap_is "$(t_field "$TMP/feed.out" reserved)" $USERS "$USERS reserved through control plane 1"

# Two writers, each listing both control planes; 4 messages kept per control plane (ZeroMQ's
# high-water mark, then the writer's queue), so that what the lost one cannot take overflows
# within the test.
OW_PIDS=() OW_PORTS=("${P[4]}" "${P[5]}")
for i in 0 1; do
	"$OW" -s "order_writer.id=$((300 + i))" \
		-s "order_writer.push_endpoint=$CP1_PULL,$CP2_PULL" -s order_writer.push_queue=4 \
		-s order_writer.max_rate=$RATE -s order_writer.batch_size=10 \
		-s order_writer.events_refresh=200ms -s "order_writer.metrics_port=${OW_PORTS[i]}" \
		"${T_REDIS[@]}" -s "postgres.conninfo=$FG_PG_CONNINFO" >"$TMP/ow$i.log" 2>&1 &
	OW_PIDS+=($!)
	T_PIDS+=($!)
done
orders() { t_sql "SELECT count(*) FROM orders WHERE event_id = 5" 2>/dev/null || echo 0; }
now() { date +%s.%N; }
at_least() { [ "$(orders)" -ge "$1" ]; }
t_wait_until 30 at_least 50
t0=$(now) n0=$(orders)
# Both live: what is written reaches both control planes' data-plane sides.
sub_has() { [ "$(grep -c '^ordered' "$1")" -ge "$2" ]; }
t_wait_until 30 sub_has "$TMP/sub1.out" 200
tap_ok $? "control plane 1 relayed 200 order ids while both live"
tk=$(now) nk=$(orders)
kill -KILL "${T_CP_PIDS[1]}"
tap_ok $? "control plane 1 SIGKILLed ($nk orders of $USERS written)"
for i in "${!T_PIDS[@]}"; do [ "${T_PIDS[i]}" != "${T_CP_PIDS[1]}" ] || unset 'T_PIDS[i]'; done
T_PIDS=("${T_PIDS[@]}")

# The rate after: over the next 200 orders (not the tail, where one writer may have finished
# its share of the backlog before the other).
t_wait_until 30 at_least $((nk + 200))
tap_ok $? "orders written after the loss too ($(orders) of $USERS)"
td=$(now)
rate_before=$(echo "($nk - $n0) / ($tk - $t0)" | bc -l)
rate_after=$(echo "200 / ($td - $tk)" | bc -l)
t_wait_until 60 at_least $USERS
tap_ok $? "every order written ($(orders) of $USERS)"
tap_diag "commits: $(printf %.0f "$rate_before")/s with both, $(printf %.0f "$rate_after")/s after cp1 lost"
# At least 0.6 of the rate before (both windows capped at about 100/s; the margin is for a loaded
# host): writers that waited for the lost control plane fell to 7/s.
[ "$(echo "$rate_after >= 0.6 * $rate_before" | bc)" = 1 ]
tap_ok $? "the writers commit at the same rate after the loss (nothing waits for cp1)"

# What cp1 relayed was relayed by cp2 too, with the same order ids; cp2 relayed every order.
t_sql "SELECT 'ordered', user_id, id FROM orders WHERE event_id = 5 ORDER BY user_id" |
	tr '|' ' ' >"$TMP/pg.txt"
sub_all() { [ "$(grep -c '^ordered' "$TMP/sub2.out")" -ge $USERS ]; }
t_wait_until 20 sub_all
grep '^ordered' "$TMP/sub2.out" | sort -n -k2 >"$TMP/sub2.txt"
tap_is "$(diff "$TMP/pg.txt" "$TMP/sub2.txt" >/dev/null && echo same)" same \
	"cp2's side got every order id, each once, as PostgreSQL holds it"
grep '^ordered' "$TMP/sub1.out" | sort -n -k2 >"$TMP/sub1.txt"
tap_is "$(comm -23 "$TMP/sub1.txt" "$TMP/sub2.txt" | wc -l)" 0 \
	"every order id cp1's side got ($(wc -l <"$TMP/sub1.txt")) cp2's side got too"
tap_is "$(sort -u -k2,2 "$TMP/sub1.txt" | wc -l)" "$(wc -l <"$TMP/sub1.txt")" \
	"cp1's side got each order id once"

# The counters per control plane, each writer's (docs/metrics.md).
metric() { # PORT NAME ENDPOINT
	curl -s -m 5 "http://127.0.0.1:$1/metrics" |
		awk -v n="$2{endpoint=\"$3\"}" '$1 == n { print $2 }'
}
d1=0 d2=0 r2=0
sleep 1.5 # the loop publishes its counters every second
for i in 0 1; do
	d1=$((d1 + $(metric "${OW_PORTS[i]}" flashgate_ow_link_peer_dropped_total "$CP1_PULL")))
	d2=$((d2 + $(metric "${OW_PORTS[i]}" flashgate_ow_link_peer_dropped_total "$CP2_PULL")))
	r2=$((r2 + $(metric "${OW_PORTS[i]}" flashgate_ow_link_peer_records_total "$CP2_PULL")))
done
[ "$d1" -gt 0 ]
tap_ok $? "records dropped for cp1 counted ($d1)"
tap_is "$d2" 0 "none dropped for cp2"
[ "$r2" -ge $USERS ]
tap_ok $? "records sent to cp2 counted ($r2)"
grep -q "control plane at $CP1_PULL takes no" "$TMP/ow0.log" "$TMP/ow1.log"
tap_ok $? "the drop is logged, naming cp1"
for i in 0 1; do
	kill "${OW_PIDS[i]}"
	wait "${OW_PIDS[i]}"
	tap_is $? 0 "order writer $i exits with status 0 on SIGTERM (cp1 still gone)"
done
tap_done
