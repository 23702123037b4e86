#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A draw finished elsewhere while this control plane decides it (issue 27's review fixes): when
# the event's draw_done_at is set by someone else (another control plane, or the NOTIFY reload
# racing this one's own finish) while its job is in the deciding phase, the deciding thread
# stops after the round in flight, the rounds it decided in Redis are published all the same
# (each decided entrant's result reaches the data planes once), the thread is joined, and stats
# shows the draw done. Real Redis and PostgreSQL, a stand-in data plane (tests/peer/fg_feed);
# FG_TEST_DRAW_ROUND_HOLD_MS (test-only) holds each pair of rounds, decided in Redis, before the
# loop is handed them, so that the decisions are surely under way and a pair is in flight when
# draw_done_at is set.
#
# usage: test_draw_wind_down.sh CONTROLPLANE FLASHGATECTL FG_FEED
set -uo pipefail

CP=$1 CTL=$2 T_FEED=$3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
t_begin drawwd
t_services_up "$TMP/svc"
T_CP=$CP T_CTL=$CTL T_CTL_OUT=quiet
HOLD=400 N=300 STOCK=200
FG_TEST_DRAW_ROUND_HOLD_MS=$HOLD t_cp_up -s controlplane.draw_batch=3
tap_ok $? "the control plane is ready (draw_batch=3, each pair of rounds held $HOLD ms)"
tap_ok "$(grep -q 'FG_TEST_DRAW_ROUND_HOLD_MS (for tests only' "$TMP/cp.log"; echo $?)" \
	"  it said the hold is the test-only variable's"

t_draw_sale 61 "wound down" $STOCK
tap_ok $? "event 61: $STOCK items, a pre-queue in 3 s, a draw window of 2 s"
t_sleep_until $T_DRAW_Q
# The feed waits for every entrant's decision (--final), which never all come: it ends at its
# timeout, with a line per result in its log.
t_feed f61 61 1-$N 71 --final --log "$TMP/log61" --timeout-ms 14000 &
feed=$!

# The decisions under way: the cursor in Redis moved, stats shows the job deciding.
nx=$(t_draw_next_wait 61 1 15)
st=$(t_draw_stats 61 phase decided)
tap_ok "$([ "${nx:-0}" -gt 0 ] && [ "$nx" -lt $N ] && [ "${st%%/*}" = deciding ]; echo $?)" \
	"the draw of event 61 is deciding ($nx of $N decided in Redis; stats $st)"

# Another control plane's finish, as PostgreSQL's row shows it.
t_sql "UPDATE events SET draw_done_at = now() WHERE id = 61"
for _ in $(seq 50); do
	st=$(t_draw_stats 61 phase decided)
	[ "${st%%/*}" = "done" ] && break
	sleep 0.1
done
tap_is "${st%%/*}" "done" "stats shows the draw of event 61 done within 5 s of draw_done_at ($st)"
tap_ok "$(grep -q 'draw of event 61: done by PostgreSQL.s row' "$TMP/cp.log"; echo $?)" \
	"  the control plane said its part stopped"
x=$(t_draw_key 61 next)
sleep $((3 * HOLD / 1000 + 1))
tap_is "$(t_draw_key 61 next)" "$x" "the deciding thread stopped: the cursor stays at $x of $N"
tap_ok "$([ "$x" -lt $N ]; echo $?)" "  ($x < $N: the draw was stopped part way)"

wait $feed
# Every entrant decided in Redis (ranks 1..x) got its decision published once; none beyond.
t_feed_ranks "$TMP/log61" >"$TMP/ranks"
tap_is "$(wc -l <"$TMP/ranks")/$(sort -un "$TMP/ranks" | wc -l)/$(tail -n 1 "$TMP/ranks")" \
	"$x/$x/$x" "the data plane was told the decisions of ranks 1..$x, each once (the rounds in flight too)"
tap_is "$(awk '$1 == "result" && $3 == "reserved"' "$TMP/log61" | wc -l)/$(t_redis hlen 'fg:{61}:result')" \
	"$x/$x" "  all of them reserved, as Redis holds"

fg_stop_pid "$CP_PID" 10
tap_ok $? "the control plane stops"
CP_PID=
tap_done
