#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# After a failure a control plane's draw starts again from the freeze, but never from a cursor
# in Redis behind the decisions it published (controlplane/draw_runner.c, step_freeze()): a
# Redis failover both loses replies (a failed round) and may come back with an older copy of the
# draw key. Here the first pair of rounds is decided in Redis (ranks 1-3 and 4-6); the second
# round of the pair is handed over as failed (FG_TEST_DRAW_ROUND_FAIL_RANK=4, test-only: its
# reply "lost"), and while the pair is held (FG_TEST_DRAW_ROUND_HOLD_MS, test-only) the test sets
# Redis's cursor back to 0, as an older copy would. The control plane publishes ranks 1-3, starts
# again from the freeze a second later, and must then wait (its log says why; no failure counted
# per look) instead of deciding ranks 1-3 a second time from Redis's cursor (the data planes told
# twice, the waiting list appended twice); once the test puts Redis's cursor back at 6 (the
# decisions Redis holds) the draw goes on and finishes. Real Redis and PostgreSQL, a stand-in data
# plane (tests/peer/fg_feed).
#
# usage: test_draw_freeze_behind.sh CONTROLPLANE FLASHGATECTL FG_FEED
set -uo pipefail

CP=$1 CTL=$2 T_FEED=$3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
t_begin drawfreeze
t_services_up "$TMP/svc"
T_CP=$CP T_CTL=$CTL T_CTL_OUT=quiet
HOLD=3000 N=12 STOCK=2
FG_TEST_DRAW_ROUND_HOLD_MS=$HOLD FG_TEST_DRAW_ROUND_FAIL_RANK=4 \
	t_cp_up -s controlplane.draw_batch=3
tap_ok $? "the control plane is ready (draw_batch=3, pairs held $HOLD ms, ranks 4-6 to fail)"

t_draw_sale 66 "freeze behind" $STOCK
tap_ok $? "event 66: $STOCK items, a pre-queue in 3 s, a draw window of 2 s"
t_sleep_until $T_DRAW_Q
# The feed waits for every entrant's decision (--final); ranks 4-6's never come (their reply was
# "lost"): it ends at its timeout, with a line per result in its log.
t_feed f66 66 1-$N 76 --final --log "$TMP/log66" --timeout-ms 20000 &
feed=$!

# The first pair decided in Redis (ranks 1-6), held before the loop gets it.
nx=$(t_draw_next_wait 66 6 20)
t_redis hset 'fg:{66}:draw' next 0 >/dev/null
tap_is "$nx/$(t_draw_key 66 state next)" "6/frozen/0" \
	"ranks 1-6 decided in Redis; the test sets its cursor back to 0"

# The pair taken (ranks 1-3 published, 4-6 failed), the freeze a second later finds Redis's
# cursor behind the 3 published.
want="draw of event 66: the draw's cursor in Redis (0) is behind this control plane's (3)"
t_wait_until $((HOLD / 1000 + 10)) grep -q "$want" "$TMP/cp.log"
tap_ok $? "the control plane says in its log that Redis's cursor is behind its own"
grep -q 'draw of event 66: deciding a draw batch failed' "$TMP/cp.log"
tap_ok $? "  after the failed round (ranks 4-6)"
tap_is "$(t_draw_stats 66 phase decided failures)" "freezing/3/1" \
	"  stats: the draw waits at the freeze, 3 decided, one failure"
sleep 3
tap_is "$(t_draw_stats 66 phase decided failures)/$(t_draw_key 66 next)" "freezing/3/1/0" \
	"  3 s later it still waits (no failure counted per look), Redis's cursor untouched"
tap_is "$(t_feed_ranks "$TMP/log66" | paste -sd, -)" "1,2,3" \
	"  the data plane was told ranks 1-3's decisions, each once"

# Redis's cursor back where its decisions end: the draw goes on from it.
t_redis hset 'fg:{66}:draw' next 6 >/dev/null
t_draw_done 66 30
tap_is "$?/$(t_draw_key 66 state next)" "0/done/$N" "the control plane finishes the draw"
tap_is "$(t_draw_stats 66 phase decided failures)" "done/$N/1" "  stats: done, $N decided"
tap_is "$(t_redis llen 'fg:{66}:wait')/$(t_redis hlen 'fg:{66}:result')" "$((N - STOCK))/$STOCK" \
	"  each entrant decided once: $STOCK reserved, $((N - STOCK)) on the waiting list"

wait $feed
tap_is "$(t_feed_ranks "$TMP/log66" | paste -sd, -)" "1,2,3,$(seq -s, 7 $N)" \
	"the data plane was told the decisions of ranks 1-3 and 7..$N, each once (4-6: reply lost)"

fg_stop_pid "$CP_PID" 10
tap_ok $? "the control plane stops"
CP_PID=
tap_done
