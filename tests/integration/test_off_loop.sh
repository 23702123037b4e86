#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Admin commands that wait on PostgreSQL run off the control plane's loop (issue 25 §6): a sale
# goes on being decided while `event verify-draw` of a draw of 10^5 entrants runs, and while an
# admin command waits on a table locked from psql (LOCK TABLE ... in a transaction that sleeps).
# A stand-in data plane (tests/peer/fg_feed) sends reservations of event 1 all along.
#
# The checks: during each locked-table command, while psql still holds the lock and the command
# has not answered, `stats` answers (it runs on the loop) and its decision rounds grow; then the
# command answers (verify-draw: the draw checks out, 10^5 entrants); every reservation of the
# feed is decided. Printed, never asserted (the host may be loaded): the loop's longest turn
# during each command (stats' loop.longest_turn_10s_us: decisions wait at most that long between
# two rounds, beside the batch wait) against the 10 ms target, and the most CPU time one turn
# took (longest_turn_cpu_10s_us: the loop's own work, without other processes' time slices).
#
# usage: test_off_loop.sh CONTROLPLANE FLASHGATECTL FG_FEED
set -uo pipefail

CP=$1 CTL=$2 FEED=$3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
t_begin offloop
t_services_up "$TMP/svc"
T_CP=$CP T_CTL=$CTL T_CTL_OUT=$TMP/ctl.out
t_cp_up
tap_ok $? "the control plane is ready"

N=100000
now=$(date +%s)
ctl event create 1 --name "sale" --stock 1000000 --starts-at $((now + 2)) \
	--ends-at $((now + 3600)) --pay-window 15m && ctl event preheat 1 && ctl event open 1
tap_ok $? "event 1 (first come, first served) is open"
ctl event create 2 --name "drawn" --stock 10 --starts-at $((now + 7200)) \
	--ends-at $((now + 9000)) --pay-window 15m --queue-opens-at $((now + 3600)) --draw-window 30s
tap_ok $? "event 2 (with a draw) created"

# Event 2's draw, as a control plane leaves it once done: N entrants ranked from the seed (the
# docs' own verifier, tests/integration/draw_order.py), the first 10 with orders.
seed=$(t_sql "SELECT encode(draw_seed, 'hex') FROM events WHERE id = 2")
seq 1 $N | python3 "$ROOT/tests/integration/draw_order.py" 2 "$seed" >"$TMP/order"
digest=$(head -n 1 "$TMP/order")
{
	echo "COPY draw_entrants (event_id, user_id, reservation_id, rank) FROM STDIN;"
	tail -n +2 "$TMP/order" | awk '{ print "2\t" $1 "\t" (1000000000 + $1) "\t" NR }'
	echo '\.'
	tail -n +2 "$TMP/order" | head -n 10 | awk '{ print "INSERT INTO orders (event_id, user_id, " \
		"reservation_id, pay_deadline) VALUES (2, " $1 ", " (1000000000 + $1) ", now() + " \
		"interval '\''1 hour'\'');" }'
	echo "UPDATE events SET draw_digest = decode('$digest', 'hex'), draw_entrants = $N," \
		"draw_done_at = now() WHERE id = 2;"
} | t_sql >/dev/null
tap_is "$(t_sql "SELECT count(*) FROM draw_entrants WHERE event_id = 2")" "$N" \
	"event 2's draw is done in PostgreSQL: $N entrants"

# The sale: batches of 10 reservations every 10 ms for the whole test (bounded: 30,000 users).
sale_open() { [ "$(date +%s)" -ge $((now + 2)) ]; }
rounds_over() { [ "$(t_stat decisions rounds)" -gt "$1" ]; }
t_wait_until 10 sale_open
"$FEED" --push "$T_PULL" --sub "$T_PUB" --event 1 --users 1-30000 --dp 7 --batch 10 \
	--pace-us 10000 --timeout-ms 120000 >"$TMP/feed.out" 2>&1 &
FEED_PID=$!
T_PIDS+=("$FEED_PID")
t_wait_until 30 rounds_over 10
tap_ok $? "the sale is being decided (rounds of decisions)"

locked() { # TABLE: whether a psql session holds TABLE locked
	[ "$(t_sql "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
		WHERE c.relname = '$1' AND l.mode = 'AccessExclusiveLock' AND l.granted")" -gt 0 ]
}
waiting() { # the control plane's admin session (docs/operations.md) waits for a lock
	[ "$(t_sql "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'
		AND application_name = 'flashgate-cp admin'")" -gt 0 ]
}
# during_lock TABLE NAME CMD...: CMD (an admin command) run while psql holds TABLE locked for
# 8 s; checks that stats answers and the rounds grow while the command waits on the lock, then
# that the command answers once the lock is gone (its answer in $TMP/NAME.out).
during_lock() {
	local table=$1 name=$2 lock_pid cmd_pid r1 r2 grew=1
	shift 2
	t_sql "BEGIN; LOCK TABLE $table IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(8); COMMIT;" \
		>/dev/null 2>&1 &
	lock_pid=$!
	T_PIDS+=("$lock_pid")
	t_wait_until 20 locked "$table"
	tap_ok $? "$name: psql holds $table locked"
	T_CTL_OUT=$TMP/$name.out ctl "$@" &
	cmd_pid=$!
	t_wait_until 20 waiting
	tap_ok $? "$name: the command waits on the lock"
	r1=$(t_stat decisions rounds)
	sleep 0.5
	r2=$(t_stat decisions rounds)
	# Both answers came while the lock was held and the command had not answered.
	kill -0 "$lock_pid" 2>/dev/null && kill -0 "$cmd_pid" 2>/dev/null && [ "$r2" -gt "$r1" ] &&
		grew=0
	tap_ok $grew "$name: while it waits on the locked $table, stats answers and decisions go on" \
		"($r1 -> $r2 rounds)"
	wait "$cmd_pid"
	tap_ok $? "$name: the command answers once the lock is gone"
	wait "$lock_pid"
	longest "$name (8 s locked, then run)"
}
longest() { # WHAT: the loop's longest turn of the last 10 s, printed
	tap_diag "$1: the loop's longest turn (the longest gap between two rounds of" \
		"decisions, beside the batch wait): $(t_stat loop longest_turn_10s_us) us" \
		"(target: under 10000 us); the most CPU time of one turn:" \
		"$(t_stat loop longest_turn_cpu_10s_us) us (the rest: other processes' time slices;" \
		"load $(cut -d' ' -f1-3 /proc/loadavg))"
}

during_lock orders verify-draw event verify-draw 2
grep -q "the draw checks out: $N entrants" "$TMP/verify-draw.out"
tap_ok $? "verify-draw: the draw of $N entrants checks out (read once the lock was gone)"
during_lock rules rules-add rules add ip 198.18.7.0/24
tap_is "$(t_sql "SELECT count(*) FROM rules")" 1 "rules add: the rule is in PostgreSQL"

# verify-draw with nothing locked, three times, while the sale goes on.
r1=$(t_stat decisions rounds)
for i in 1 2 3; do
	T_CTL_OUT=$TMP/verify.$i ctl event verify-draw 2
done
r2=$(t_stat decisions rounds)
grep -q "checks out: $N entrants" "$TMP/verify.3"
tap_ok $? "verify-draw of $N entrants three times more: checks out ($r1 -> $r2 rounds meanwhile)"
longest "verify-draw of $N entrants, three times"

wait "$FEED_PID"
tap_ok $? "every reservation of the sale was decided: $(head -n 1 "$TMP/feed.out")"
FEED_PID=
tap_diag "the loop's longest turn since the start (setup included): $(t_stat loop longest_turn_us) us," \
	"the most CPU time of one turn: $(t_stat loop longest_turn_cpu_us) us"
fg_stop_pid "$CP_PID" 10
tap_ok $? "the control plane stops"
CP_PID=
tap_done
