#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A decided draw batch after a failed one is published (controlplane/draw_runner.c,
# step_decide()): the deciding thread sends two draw batches at once and hands both over. When
# the first comes back failed although Redis ran it (its reply not read: the cursor in Redis
# moved all the same), the second, at that cursor, is decided. The control plane then starts
# again from the freeze (Redis's cursor, past both), so the second batch's decisions reach the
# data planes only if it publishes them before: each entrant it decided is told its decision
# once, and FAIR's "served" (the highest rank holding an item: a waiting entrant's place) counts
# its reserved ones. FG_TEST_DRAW_ROUND_FAIL_RANK=1 (test-only) hands the first round (ranks
# 1-3, decided in Redis) over as failed; draw_batch=3 makes ranks 4-6 the second of its pair.
# STOCK=5: ranks 1-5 reserved, 4-5 among them. Event 65, drawn after it, has 2 items: its
# buyers, ranks 1-2, are in the failed round, whose decisions this control plane never read;
# FAIR's "served" after the retry is Redis's draw key's (2), not only what this control plane
# decided (0 from there on). Real Redis and PostgreSQL, a stand-in data plane
# (tests/peer/fg_feed) and a watching one for the FAIR records.
#
# usage: test_draw_failed_batch.sh CONTROLPLANE FLASHGATECTL FG_FEED
set -uo pipefail

CP=$1 CTL=$2 T_FEED=$3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
t_begin drawfail
t_services_up "$TMP/svc"
T_CP=$CP T_CTL=$CTL T_CTL_OUT=quiet
N=12 STOCK=5
FG_TEST_DRAW_ROUND_FAIL_RANK=1 t_cp_up -s controlplane.draw_batch=3
tap_ok $? "the control plane is ready (draw_batch=3, the round of ranks 1-3 to be handed over failed)"
tap_ok "$(grep -q 'FG_TEST_DRAW_ROUND_FAIL_RANK (for tests only' "$TMP/cp.log"; echo $?)" \
	"  it said the failure is the test-only variable's"

# A data plane that prints each FAIR record (served among them), from before the draw.
"$T_FEED" --push "$T_PULL" --sub "$T_PUB" --watch-limits 90000 >"$TMP/watch" 2>&1 &
W_PID=$!
T_PIDS+=("$W_PID")

t_draw_sale 64 "failed batch" $STOCK
tap_ok $? "event 64: $STOCK items, a pre-queue in 3 s, a draw window of 2 s"
t_sleep_until $T_DRAW_Q
# The feed waits for every entrant's decision (--final); ranks 1-3's never come (the control
# plane never read them): it ends at its timeout, with a line per result in its log.
t_feed f64 64 1-$N 74 --final --log "$TMP/log64" --timeout-ms 14000 &
feed=$!

t_draw_done 64 30
tap_is "$?/$(t_draw_key 64 state next)" "0/done/$N" "the control plane finishes the draw"
tap_is "$(t_draw_stats 64 phase decided failures)" "done/$N/1" \
	"  stats: done, $N decided, after one failure"
grep -q 'draw of event 64: the round of ranks 1-3, decided in Redis, handed over as failed' \
	"$TMP/cp.log"
tap_ok $? "  the round of ranks 1-3 was decided in Redis and handed over as failed"
grep -q 'draw of event 64: deciding a draw batch failed (Input/output error)' "$TMP/cp.log"
tap_ok $? "  the control plane logged the failure and started again"
tap_is "$(t_redis llen 'fg:{64}:wait')/$(t_redis hlen 'fg:{64}:result')" "$((N - STOCK))/$STOCK" \
	"  each entrant decided once: $STOCK reserved, $((N - STOCK)) on the waiting list"
t_sql "SELECT user_id FROM draw_entrants WHERE event_id = 64 ORDER BY rank" >"$TMP/pg"
tap_is "$(t_redis hkeys 'fg:{64}:result' | sort -n | paste -sd, -)" \
	"$(head -n $STOCK "$TMP/pg" | sort -n | paste -sd, -)" "  the buyers are ranks 1-$STOCK"

wait $feed
# Every rank this control plane read the decision of (4..N, ranks 4-6 in the round after the
# failed one) was published once, with Redis's verdict; ranks 1-3's reply was never read.
tap_is "$(t_feed_ranks "$TMP/log64" | paste -sd, -)" "$(seq -s, 4 $N)" \
	"the data plane was told the decisions of ranks 4..$N, each once (4-6: decided after a failed round)"
want=$(for k in $(seq 4 $N); do
	[ "$k" -le $STOCK ] && echo "$k reserved" || echo "$k waiting"
done | paste -sd, -)
tap_is "$(awk '$1 == "result" && $3 != "queued" { print $4, $3 }' "$TMP/log64" | sort -n |
	paste -sd, -)" "$want" "  ranks 4-$STOCK reserved, $((STOCK + 1))-$N waiting, as Redis decided"

# FAIR while drawing: once ranks 4-6 were decided, served is rank $STOCK (the last item's).
grep '^fair event=64 state=2 ' "$TMP/watch" |
	awk '{ sub(/decided=/, "", $6); sub(/served=/, "", $7); if ($6 >= 6) print $7 }' |
	sort -u >"$TMP/served"
tap_is "$(paste -sd, - <"$TMP/served")" "$STOCK" \
	"FAIR while drawing: served $STOCK in every record from 6 decided on (ranks 4-5 counted)"

# Event 65 (its draw's failure logged apart from event 64's: job_fail() logs once in 10 s): ranks
# 1-2, its buyers, in the failed round; the retry (from the freeze) decides the rest, all
# waiting. Redis's draw key says served 2, and so does FAIR once the retry froze again.
t_draw_sale 65 "failed batch, its buyers" 2
tap_ok $? "event 65: 2 items, a pre-queue in 3 s, a draw window of 2 s"
t_sleep_until $T_DRAW_Q
t_feed f65 65 1-$N 75
tap_is "$(t_field "$TMP/f65" queued)" $N "  $N entrants"
t_draw_done 65 30
tap_is "$?/$(t_draw_key 65 state next served)" "0/done/$N/2" \
	"  the draw done; Redis's draw key: served 2 (ranks 1-2, in the failed round)"
grep -q 'draw of event 65: the round of ranks 1-3, decided in Redis, handed over as failed' \
	"$TMP/cp.log"
tap_ok $? "  its round of ranks 1-3 was handed over as failed"
t_wait_until 5 grep -q '^fair event=65 state=3 ' "$TMP/watch" # every drawing record came before
tap_is "$(grep '^fair event=65 state=2 ' "$TMP/watch" | tail -n 1 | awk '{ print $7 }')" \
	served=2 "  FAIR's last record while drawing, after the retry: served 2 (Redis's)"
fg_stop_pid "$W_PID" 10

fg_stop_pid "$CP_PID" 10
tap_ok $? "the control plane stops"
CP_PID=
tap_done
