#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A draw run by two control planes at once (issue 27 §6), one of them killed (SIGKILL) in the
# middle of the decisions; real Redis and PostgreSQL, stand-in data planes (tests/peer/fg_feed).
# Both freeze (draw_freeze.lua: the same entrants), both write or compare draw_entrants (one
# transaction wins, the other compares digests), both run draw batches at the cursor (a batch
# runs only at its turn): the survivor finishes; each entrant is decided exactly once, the
# buyers are exactly the first min(stock, n) by rank, the waiting list the rest in rank order.
#
# usage: test_draw_two_cps.sh CONTROLPLANE FLASHGATECTL FG_FEED
set -uo pipefail

T_CP=$1 CTL=$2 T_FEED=$3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
t_begin draw2cp
t_services_up "$TMP/svc"
mapfile -t P < <(fg_free_ports 4)
t_cp_n 1 "${P[0]}" "${P[1]}" -s controlplane.draw_batch=3
tap_ok $? "control plane 1 is ready"

T_CTL=$CTL T_ADMIN=$TMP/admin1.sock T_CTL_OUT=quiet
# A stock well below where control plane 1 is killed: an entrant decided twice shows on the
# waiting list (a reserved one decided again is refused as a duplicate and leaves no trace).
STOCK=200 N=12000
t_draw_sale 41 "two drawers" $STOCK 4 7
tap_ok $? "event 41: $STOCK items, a pre-queue in 4 s, draw_at in 12 s"
# The second control plane reads the event at its start (the same Redis and PostgreSQL).
t_cp_n 2 "${P[2]}" "${P[3]}" -s controlplane.draw_batch=3
tap_ok $? "control plane 2 is ready (the same Redis and PostgreSQL)"
t_sleep_until $T_DRAW_Q
# Half the entrants through each control plane.
T_PULL=tcp://127.0.0.1:${P[0]} T_PUB=tcp://127.0.0.1:${P[1]} t_feed f1.out 41 1-6000 51 &
f1=$!
T_PULL=tcp://127.0.0.1:${P[2]} T_PUB=tcp://127.0.0.1:${P[3]} t_feed f2.out 41 6001-12000 52
wait $f1
tap_is "$(t_field "$TMP/f1.out" queued)/$(t_field "$TMP/f2.out" queued)/$(t_redis hlen 'fg:{41}:entrants')" \
	6000/6000/$N "$N entrants, half through each control plane"

# Both draw; kill control plane 1 once the decisions are under way.
t_draw_next_wait 41 1 30 >/dev/null
kill -9 "${T_CP_PIDS[1]}"
wait "${T_CP_PIDS[1]}" 2>/dev/null
nx=$(t_draw_key 41 next)
tap_ok "$([ "${nx:-0}" -gt 0 ] && [ "$nx" -lt $N ]; echo $?)" \
	"control plane 1 killed during the decisions ($nx of $N decided)"
t_draw_done 41 60
tap_is "$(t_sql "SELECT draw_done_at IS NOT NULL FROM events WHERE id = 41")/$(t_draw_key 41 state)" \
	t/done "control plane 2 finished the draw"
grep -q 'draw of event 41' "$TMP/cp1.log" && grep -q 'draw of event 41' "$TMP/cp2.log"
tap_ok $? "  both control planes ran it"

t_sql "SELECT user_id FROM draw_entrants WHERE event_id = 41" |
	python3 "$ROOT/tests/integration/draw_order.py" 41 \
		"$(t_sql "SELECT encode(draw_seed, 'hex') FROM events WHERE id = 41")" >"$TMP/order"
t_sql "SELECT user_id FROM draw_entrants WHERE event_id = 41 ORDER BY rank" >"$TMP/pg"
tap_ok "$(tail -n +2 "$TMP/order" | cmp -s - "$TMP/pg"; echo $?)" \
	"draw_entrants: written once, $(wc -l <"$TMP/pg") ranks, the order recomputed from the seed"
tap_is "$(t_sql "SELECT encode(draw_digest, 'hex') FROM events WHERE id = 41")" \
	"$(head -1 "$TMP/order")" "  events.draw_digest is the entrants' digest"
t_redis xrange 'fg:{41}:outbox' - + | awk 'prev == "u" { print } { prev = $0 }' >"$TMP/ob"
tap_is "$(wc -l <"$TMP/ob")/$(sort -u "$TMP/ob" | wc -l)/$(t_redis hlen 'fg:{41}:result')/$(t_redis get 'fg:{41}:stock')" \
	"$STOCK/$STOCK/$STOCK/0" "each entrant decided once: $STOCK reservations, $STOCK distinct buyers, stock 0"
tap_ok "$(head -n $STOCK "$TMP/pg" | sort | cmp -s - <(sort "$TMP/ob"); echo $?)" \
	"  the buyers are exactly the first $STOCK by rank"
t_redis lrange 'fg:{41}:wait' 0 -1 | cut -d: -f1 >"$TMP/wait"
tap_ok "$(tail -n +$((STOCK + 1)) "$TMP/pg" | cmp -s - "$TMP/wait"; echo $?)" \
	"  the waiting list is the other $((N - STOCK)) in rank order, each once"
T_ADMIN=$TMP/admin2.sock
tap_is "$(ctlj event show 41 | jget draw.state draw.decided)" done/$N \
	"control plane 2's event show: the draw done, $N decided"

kill "${T_CP_PIDS[2]}"
wait "${T_CP_PIDS[2]}"
tap_is $? 0 "control plane 2 exits with status 0 on SIGTERM"
T_PIDS=()
tap_done
