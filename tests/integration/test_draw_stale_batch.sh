#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A decided draw batch after a stale one is published (issue 27's review fix 35b6ccb): the
# deciding thread sends two draw batches at once; when another control plane's cursor is one
# batch ahead of this one's, the first is refused (-5: not its turn) and the second, at the
# cursor, is decided by Redis. Its decisions must reach the data planes all the same, and the
# control plane goes on from Redis's cursor. Built deterministically: the sale's window key
# says held, so the control plane's draw waits in its decisions without deciding any; this test
# then runs the first batch (ranks 1-3) at the cursor itself, as another control plane would
# (reserve.lua with an open window key of its own), and opens the window in the same
# transaction. Real Redis and PostgreSQL, a stand-in data plane (tests/peer/fg_feed).
#
# usage: test_draw_stale_batch.sh CONTROLPLANE FLASHGATECTL FG_FEED
set -uo pipefail

CP=$1 CTL=$2 T_FEED=$3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
t_begin drawstale
t_services_up "$TMP/svc"
T_CP=$CP T_CTL=$CTL T_CTL_OUT=quiet
N=12 STOCK=2
t_cp_up -s controlplane.draw_batch=3
tap_ok $? "the control plane is ready (draw_batch=3)"

t_draw_sale 62 "stale batch" $STOCK
tap_ok $? "event 62: $STOCK items, a pre-queue in 3 s, a draw window of 2 s"
t_sleep_until $T_DRAW_Q
# The feed waits for every entrant's decision (--final); ranks 1-3 are decided by the test,
# which publishes nothing: it ends at its timeout, with a line per result in its log.
t_feed f62 62 1-$N 72 --final --log "$TMP/log62" --timeout-ms 14000 &
feed=$!
for _ in $(seq 100); do
	[ "$(t_redis hlen 'fg:{62}:entrants')" = $N ] && break
	sleep 0.05
done
# The decisions wait until this test has played the other control plane (t_window_hold: the
# draw's own write to PostgreSQL makes the control plane set the window key from the event's row
# at its next heartbeat; a key set held once let the draw go on before a slow host's test was
# there).
t_window_hold 62
tap_is "$(t_redis hlen 'fg:{62}:entrants')/$(t_draw_key 62 next)" "$N/" \
	"$N entrants; the window held before the draw is due"

for _ in $(seq 300); do
	grep -q 'draw of event 62: the sale.s window in Redis says held' "$TMP/cp.log" && break
	sleep 0.05
done
tap_is "$(t_draw_key 62 state next n)" "frozen/0/$N" \
	"the draw of event 62 waits in its decisions (the window held): frozen, 0 of $N decided"

# The other control plane's first batch: ranks 1-3 at cursor 0.
mapfile -t U < <(t_sql "SELECT user_id FROM draw_entrants WHERE event_id = 62 ORDER BY rank LIMIT 3")
rids=()
for u in "${U[@]}"; do rids+=("$(t_redis hget 'fg:{62}:entrants' "$u")"); done
t_redis set 'fg:{62}:open' "0 $((T_DRAW_END * 1000))" >/dev/null
sha=$(t_redis script load "$(cat "$ROOT/lua/reserve.lua")")
t_window_release 62
# That batch and the window opened in one transaction (the window key stays held until then):
# this control plane's next pair is then surely ranks 1-3 (refused: not its turn) and 4-6 (at
# the cursor: decided), sent together. (A pair between the two would be refused and held.)
tx=$(printf '%s\n' MULTI \
	"EVALSHA $sha 7 fg:{62}:stock fg:{62}:result fg:{62}:outbox fg:{62}:open fg:{62}:draw \
fg:{62}:wait fg:{62}:wrank ${U[*]} ${rids[*]} $(date +%s%3N) 0" "HGET fg:{62}:draw next" \
	"SET fg:{62}:window \"$(((T_DRAW_Q + 1) * 1000)) $((T_DRAW_END * 1000))\"" EXEC | t_redis)
tap_is "$(grep -vx QUEUED <<<"$tx" | tail -n +2 | paste -sd, -)" "1,1,2,0,3,OK" \
	"another control plane decides ranks 1-3 (2 reserved, 1 waiting; cursor 3); window opened"
t_draw_done 62 30
tap_is "$?/$(t_draw_key 62 state next)" "0/done/$N" "this control plane finishes the draw"
tap_is "$(t_redis llen 'fg:{62}:wait')/$(t_redis hlen 'fg:{62}:result')" "$((N - STOCK))/$STOCK" \
	"  each entrant decided once: $STOCK reserved, $((N - STOCK)) on the waiting list"

wait $feed
# Every rank this control plane decided (4..N, ranks 4-6 in the batch after the refused one)
# was published once; ranks 1-3 were not its own.
tap_is "$(t_feed_ranks "$TMP/log62" | paste -sd, -)" "$(seq -s, 4 $N)" \
	"the data plane was told the decisions of ranks 4..$N, each once (4-6: decided after a refused batch)"

fg_stop_pid "$CP_PID" 10
tap_ok $? "the control plane stops"
CP_PID=
tap_done
