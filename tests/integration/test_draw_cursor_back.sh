#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A control plane's draw cursor only moves forward (controlplane/draw_runner.c, step_decide()):
# after a refused (stale) round it goes on from Redis's cursor only when that is ahead of its
# own. Here Redis's cursor is behind it, as a Redis that came back with an older copy of the
# draw key would show: the control plane decided ranks 1-6 and published them; the test then
# sets the cursor in Redis back to 3. The control plane's next rounds (ranks 7-12) are refused
# (not their turn); it must keep its own cursor at 6 (stats), not decide ranks 4-6 a second time
# (the data planes told twice, the waiting list appended twice), say so in its log and look again
# a second later (not a new deciding thread each turn), and go on once Redis's cursor is at 6
# again. FG_TEST_DRAW_ROUND_HOLD_MS (test-only) holds each pair of rounds that decided
# in Redis for HOLD ms before the loop is handed them (a refused pair is not held), so that the test moves the cursor back
# between the first pair (ranks 1-6, decided) and the second (ranks 7-12, refused). Real Redis
# and PostgreSQL, a stand-in data plane (tests/peer/fg_feed).
#
# usage: test_draw_cursor_back.sh CONTROLPLANE FLASHGATECTL FG_FEED
set -uo pipefail

CP=$1 CTL=$2 T_FEED=$3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
t_begin drawback
t_services_up "$TMP/svc"
T_CP=$CP T_CTL=$CTL T_CTL_OUT=quiet
HOLD=2000 N=12 STOCK=2
FG_TEST_DRAW_ROUND_HOLD_MS=$HOLD t_cp_up -s controlplane.draw_batch=3
tap_ok $? "the control plane is ready (draw_batch=3, each pair of rounds held $HOLD ms)"

t_draw_sale 63 "cursor back" $STOCK
tap_ok $? "event 63: $STOCK items, a pre-queue in 3 s, a draw window of 2 s"
t_sleep_until $T_DRAW_Q
# The feed waits for every entrant's decision (--final); it ends when all came, or at its
# timeout, with a line per result in its log.
t_feed f63 63 1-$N 73 --final --log "$TMP/log63" --timeout-ms 40000 &
feed=$!

# The first pair of rounds decided in Redis (ranks 1-6), held before the loop gets them.
nx=$(t_draw_next_wait 63 6 20)
t_redis hset 'fg:{63}:draw' next 3 >/dev/null
tap_is "$nx/$(t_draw_key 63 state next)" "6/frozen/3" \
	"ranks 1-6 decided in Redis; the test sets its cursor back to 3"

# Rounds: the first pair (2: the control plane's cursor at 6), the second refused (4: the loop
# reads Redis's cursor after it), the pair the control plane sends next from its own cursor (6).
# Stats sampled from the first pair's taking on: from the first sample with 6 decided (the
# rounds count a pair once the deciding thread hands it over, a turn of the loop before it is
# taken: a sample between the two shows 2 rounds and 0 decided).
low=$N st=- seen=0
for _ in $(seq 200); do
	st=$(t_draw_stats 63 decided rounds)
	d=${st%%/*} r=${st##*/}
	if [ "$st" != - ]; then
		[ "$d" -ge 6 ] && seen=1
		if [ "$seen" = 1 ]; then
			[ "$d" -lt "$low" ] && low=$d
			[ "$r" -ge 6 ] && break
		fi
	fi
	sleep 0.1
done
tap_is "$st/$(t_draw_key 63 next)" "6/6/3" \
	"after a refused pair and the next one the control plane's cursor is 6 (stats), Redis's 3"
tap_is "$seen/$low" 1/6 "  stats never showed fewer than 6 decided once the first pair was taken"
grep -q "draw of event 63: the draw's cursor in Redis (3) is behind this control plane's (6)" \
	"$TMP/cp.log"
tap_ok $? "  the control plane says in its log that Redis's cursor is behind its own"
# While Redis's cursor stays behind, each refused pair comes back at once (the hold is only for
# pairs that decided): the control plane looks again a second later, not at once with a new
# deciding thread each turn (which made hundreds of refused rounds a second).
r1=$(t_draw_stats 63 rounds)
sleep 3
r2=$(t_draw_stats 63 rounds)
tap_ok "$([ "$r1" != - ] && [ "$r2" != - ] && [ $((r2 - r1)) -le 12 ]; echo $?)" \
	"  and looks again about once a second: $((r2 - r1)) refused rounds in 3 s (at most 12)"

# Redis's cursor where the control plane's is: the draw goes on.
t_redis hset 'fg:{63}:draw' next 6 >/dev/null
t_draw_done 63 30
tap_is "$?/$(t_draw_key 63 state next)" "0/done/$N" "the control plane finishes the draw"
tap_is "$(t_redis llen 'fg:{63}:wait')/$(t_redis hlen 'fg:{63}:result')" "$((N - STOCK))/$STOCK" \
	"  each entrant decided once: $STOCK reserved, $((N - STOCK)) on the waiting list"

wait $feed
tap_is "$(t_feed_ranks "$TMP/log63" | paste -sd, -)" "$(seq -s, 1 $N)" \
	"the data plane was told the decisions of ranks 1..$N, each once (4-6 not decided again)"

fg_stop_pid "$CP_PID" 10
tap_ok $? "the control plane stops"
CP_PID=
tap_done
