#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The fair start from the operator's side (docs/fairness.md), against the real control plane
# with Redis and PostgreSQL from scripts/services, through its admin socket:
#   - event create with and without a draw; bad inputs refused with their message and nothing
#     written (through flashgatectl, and as raw lines on the socket, which the control plane
#     checks itself);
#   - the commitment (seed_sha256 = SHA-256 of events.draw_seed) shown from create, the seed not
#     before draw_done_at and shown after;
#   - event verify-draw: refused without a draw or before it is done; passes on a correct draw
#     (its rows written as the draw writes them, with the ranks of docs/fairness.md's own
#     Python verifier, through tests/lib/fgtest.py); catches two ranks swapped, an entrant changed, an
#     order given to a loser, a winner without an order, and a wrong commitment;
#   - event pow: what is published to a data plane (FAIR records seen by tests/peer/fg_feed),
#     shown in event show and the metrics; refusals;
#   - the automatic difficulty: up by one a second while a data plane reports forward-budget
#     refusals growing, down again once they stop, never below the operator's, never above the
#     maximum; only for the busy event (its reservations forwarded), not a quiet one;
#   - a real draw (the control plane's draw runner, entrants from fg_feed in the pre-queue,
#     orders from the order writer): event show follows it, the seed appears once it is done,
#     verify-draw passes, and catches two of its ranks swapped.
#
# usage: test_fair_admin.sh CONTROLPLANE FLASHGATECTL FG_FEED ORDER_WRITER
set -uo pipefail

CP=$1 CTL=$2 FEED=$3 OW=$4
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
t_begin fairadm
t_services_up "$TMP/svc"
T_CP=$CP T_CTL=$CTL
W1_PID='' W2_PID='' OW_PID=''
fair_stop() { for p in $W1_PID $W2_PID $OW_PID; do fg_stop_pid "$p" 10 || true; done; }
T_CLEANUP+=(fair_stop)
t_cp_up
tap_ok $? "the control plane is ready"

# raw LINE: one request straight on the admin socket, the answer on stdout
raw() {
	python3 -c 'import socket,sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1]); s.sendall(sys.argv[2].encode() + b"\n")
print(s.makefile().readline().strip())' "$TMP/admin.sock" "$1"
}
now=$(date +%s)
S=$((now + 3600)) E=$((now + 7200)) Q=$((now + 1800))

# --- event create -------------------------------------------------------------------------
out=$(ctlj event create 31 --name "with a draw" --stock 100 --starts-at $S --ends-at $E \
	--pay-window 15m --queue-opens-at $Q --draw-window 30s --pow-bits 4 --pow-auto-max 6)
tap_ok $? "event create with a pre-queue, a 30 s draw window and a challenge"
show31=$(ctlj event show 31)
c31=$(jget event.seed_sha256 <<<"$show31")
tap_is "$c31" "$(t_sql "SELECT encode(sha256(draw_seed), 'hex') FROM events WHERE id = 31")" \
	"event show: seed_sha256 is SHA-256 of events.draw_seed, from create on"
tap_is "$(jget event.seed_sha256 <<<"$out")" "$c31" "  and event create's answer shows it too"
tap_is "$(jget event.draw_window_s event.draw_at <<<"$show31")" \
	"30/$(date -u -d @$((S + 30)) +%Y-%m-%dT%H:%M:%SZ)" "  draw window 30 s, draw at start + 30 s"
tap_is "$(jget event.queue_opens_at <<<"$show31")" "$(date -u -d @$Q +%Y-%m-%dT%H:%M:%SZ)" \
	"  queue_opens_at as given"
tap_is "$(jget event.pow_bits pow_bits_now event.pow_auto_max <<<"$show31")" "4/4/6" \
	"  pow_bits 4, pow_bits_now 4, pow_auto_max 6"
tap_is "$(jget draw.state <<<"$show31")" scheduled \
	"  draw.state scheduled (the pre-queue opens later)"
seed31=$(t_sql "SELECT encode(draw_seed, 'hex') FROM events WHERE id = 31")
[[ $seed31 =~ ^[0-9a-f]{64}$ ]] && [[ $show31 != *"$seed31"* ]] && [[ $out != *"$seed31"* ]]
tap_ok $? "  the seed (32 bytes in PostgreSQL) is in no answer"
ctl event show 31 >"$TMP/show31.txt"
grep -q "seed_sha256: *$c31" "$TMP/show31.txt" && grep -q "state: *scheduled" "$TMP/show31.txt" &&
	! grep -q "$seed31" "$TMP/show31.txt"
tap_ok $? "  and the human rendering shows the commitment and the draw's state, not the seed"
out=$(ctlj event create 32 --name "first come" --stock 10 --starts-at $S --ends-at $E \
	--pay-window 15m)
tap_ok $? "event create without a draw"
tap_is "$(jget event.draw_window_s event.pow_bits <<<"$out")/$(ctlj event show 32 | jget draw)" \
	"0/0/" "  draw window 0, no challenge, no draw object"
[[ $(jget event.seed_sha256 <<<"$out") =~ ^[0-9a-f]{64}$ ]]
tap_ok $? "  it has a seed's commitment too"

before=$(t_sql "SELECT count(*) FROM events")
bad() { # WANT_MESSAGE ARGS...: flashgatectl refuses, and so does the control plane itself
	local want=$1 o
	shift
	o=$(ctl event create 40 --name bad --stock 1 --starts-at $S --ends-at $E --pay-window 1m \
		"$@" 2>&1)
	local rc=$?
	[ "$rc" -ne 0 ] && [[ $o == *"$want"* ]]
	tap_ok $? "refused: $* ($rc: $o)"
	o=$(raw "event create 40 --name bad --stock 1 --starts-at $S --ends-at $E --pay-window 1m $*")
	[[ $o == '{"ok":false,'*"$want"* ]]
	tap_ok $? "  and by the control plane as a raw line: $o"
}
bad "--queue-opens-at needs a draw" --queue-opens-at $Q
bad "must be at or before --starts-at" --draw-window 30s --queue-opens-at $((S + 1))
bad "the draw must happen inside the sale" --draw-window 1d
bad "--pow-bits must be 0..30" --pow-bits 31
bad "--pow-auto-max (3) must be at least --pow-bits (8)" --pow-bits 8 --pow-auto-max 3
bad "--draw-window must be 0..1d" --draw-window 2d
bad "is in the past: the seed's commitment must be published before the pre-queue opens" \
	--draw-window 30s --queue-opens-at $((now - 60))
tap_is "$(t_sql "SELECT count(*) FROM events")" "$before" "nothing was written by the refusals"

# --- a finished draw, written as the draw writes it --------------------------------------------
ctl event create 33 --name "drawn" --stock 3 --starts-at $S --ends-at $E --pay-window 15m \
	--queue-opens-at $Q --draw-window 1m >/dev/null
seed33=$(t_sql "SELECT encode(draw_seed, 'hex') FROM events WHERE id = 33")
c33=$(jget event.seed_sha256 <<<"$(ctlj event show 33)")
# users and reservations of the six entrants; the ranks from docs/fairness.md's verifier
python3 - "$seed33" >"$TMP/draw33.sql" <<'PY'
import sys
sys.path.insert(0, "tests/lib")
import fgtest
ns = fgtest.fairness()
seed = bytes.fromhex(sys.argv[1])
users = [5, 17, 42, 99, 1000, 23]
order = ns["draw"](seed, 33, users)
digest = ns["entrants_digest"](33, users).hex()
for rank, u in enumerate(order, 1):
    print("INSERT INTO draw_entrants VALUES (33, %d, %d, %d);" % (u, 5000 + u, rank))
print("UPDATE events SET draw_digest = decode('%s', 'hex'), draw_entrants = 6 WHERE id = 33;"
      % digest)
for u in order[:3]:
    print("INSERT INTO orders (event_id, user_id, reservation_id, pay_deadline) "
          "VALUES (33, %d, %d, now() + interval '15 minutes');" % (u, 5000 + u))
print("-- order: %s" % " ".join(map(str, order)))
PY
tap_ok $? "the draw of six entrants computed with docs/fairness.md's Python"
read -ra order < <(sed -n 's/^-- order: //p' "$TMP/draw33.sql")
t_sql "$(cat "$TMP/draw33.sql")"
tap_ok $? "  its rows written: draw_entrants, the digest, orders for the first 3 (stock 3)"
show=$(ctlj event show 33)
tap_is "$(jget draw.state draw.entrants draw.seed <<<"$show")" \
	"drawing/6/" "before draw_done_at: drawing, 6 entrants, no seed"
out=$(ctl event verify-draw 33 2>&1)
rc=$?
[ "$rc" = 1 ] && [[ $out == *"draw is not done yet (drawing)"* ]]
tap_ok $? "verify-draw refuses a draw not done yet: $out"
out=$(ctl event verify-draw 32 2>&1)
rc=$?
[ "$rc" = 1 ] && [[ $out == *"has no draw"* ]]
tap_ok $? "verify-draw refuses an event without a draw: $out"
t_sql "UPDATE events SET draw_done_at = now() WHERE id = 33"
show=$(ctlj event show 33)
tap_is "$(jget draw.state draw.decided draw.seed <<<"$show")" \
	"done/6/$seed33" "after draw_done_at: done, 6 decided, the seed shown"
sha256hex() {
	python3 -c 'import hashlib,sys; print(hashlib.sha256(bytes.fromhex(sys.argv[1])).hexdigest())' \
		"$1"
}
tap_is "$(sha256hex "$(jget draw.seed <<<"$show")")" "$c33" \
	"  and its SHA-256 is the commitment shown before"

verify() { # RC WANT DESCRIPTION [ARGS]: verify-draw 33's exit status and message
	local want_rc=$1 want=$2 what=$3 o
	shift 3
	o=$(ctl event verify-draw 33 "$@" 2>&1)
	local rc=$?
	[ "$rc" = "$want_rc" ] && [[ $o == *"$want"* ]]
	tap_ok $? "$what ($rc): ${o%%$'\n'*}"
}
verify 0 "the draw checks out: 6 entrants" "verify-draw passes on the draw"
out=$(ctlj event verify-draw 33)
tap_is "$(jget entrants winners ordered ranks_checked <<<"$out")" "6/3/3/6" \
	"  counts: 6 entrants, 3 winners, 3 orders, 6 ranks checked"
verify 0 "matches the commitment given" "  with the commitment published at create" \
	--commitment "$c33"
verify 1 "not the commitment given" "a wrong commitment is caught" --commitment "$c31"
r1=${order[0]} r2=${order[1]}
t_sql "UPDATE draw_entrants SET rank = 100 WHERE event_id = 33 AND user_id = $r1;
	UPDATE draw_entrants SET rank = 1 WHERE event_id = 33 AND user_id = $r2;
	UPDATE draw_entrants SET rank = 2 WHERE event_id = 33 AND user_id = $r1"
verify 1 "rank 1 is user $r2 in draw_entrants, the draw gives user $r1" \
	"two ranks swapped in draw_entrants are caught"
t_sql "UPDATE draw_entrants SET rank = 100 WHERE event_id = 33 AND user_id = $r2;
	UPDATE draw_entrants SET rank = 1 WHERE event_id = 33 AND user_id = $r1;
	UPDATE draw_entrants SET rank = 2 WHERE event_id = 33 AND user_id = $r2"
verify 0 "the draw checks out" "  swapped back, it passes"
loser=${order[4]}
t_sql "INSERT INTO orders (event_id, user_id, reservation_id, pay_deadline)
	VALUES (33, $loser, $((5000 + loser)), now())"
verify 1 "user $loser (rank 5) has an order of reservation $((5000 + loser)), but rank 4 (user ${order[3]}) before it has none" \
	"an order given to rank 5 of stock 3 while rank 4 waits: not the waiting list's order, caught"
t_sql "INSERT INTO orders (event_id, user_id, reservation_id, pay_deadline)
	VALUES (33, ${order[3]}, $((5000 + order[3])), now())"
verify 0 "and the next 2 by rank the items returned to the waiting list" \
	"  ranks 4 and 5 both served from the waiting list (items returned), in rank order: passes"
out=$(ctlj event verify-draw 33)
tap_is "$(jget winners ordered returned_to_list <<<"$out")" "3/5/2" \
	"  counts: 3 winners, 5 orders, 2 items returned to the list"
t_sql "DELETE FROM orders WHERE event_id = 33 AND user_id IN ($loser, ${order[3]})"
t_sql "UPDATE orders SET status = 'expired' WHERE event_id = 33 AND user_id = ${order[2]}"
verify 0 "the draw checks out" "  an expired order of a winner still counts as its order"
t_sql "DELETE FROM orders WHERE event_id = 33 AND user_id = ${order[2]}"
verify 1 "user ${order[2]} (rank 3, one of the first 3) has no order" \
	"a winner without an order is caught"
t_sql "INSERT INTO orders (event_id, user_id, reservation_id, pay_deadline)
	VALUES (33, ${order[2]}, $((5000 + order[2])), now())"
t_sql "UPDATE draw_entrants SET user_id = 7 WHERE event_id = 33 AND user_id = ${order[5]}"
verify 1 "the digest of the entrants' users is" "an entrant replaced after the draw is caught"

# --- event pow: published, shown, refused ------------------------------------------------------
"$FEED" --push "$T_PULL" --sub "$T_PUB" --dp 1 \
	--watch-limits 120000 >"$TMP/w1.out" 2>&1 &
W1_PID=$!
fg_wait_line "$TMP/w1.out" '^fair event=31 state=1 pow_bits=4 ' "$W1_PID" 20
tap_ok $? "a data plane's snapshot has event 31's FAIR record: queueing, 4 bits"
out=$(ctlj event pow 31 5)
tap_is "$(jget pow_bits_now <<<"$out")/$(jget event.pow_auto_max <<<"$out")" 5/6 \
	"event pow 31 5: 5 bits now, the automatic maximum 6 kept"
fg_wait_line "$TMP/w1.out" '^fair event=31 state=1 pow_bits=5 ' "$W1_PID" 20
tap_ok $? "  the data plane is told: FAIR event 31 pow_bits=5"
tap_is "$(ctlj event show 31 | jget event.pow_bits pow_bits_now)" 5/5 \
	"  event show: pow_bits 5, pow_bits_now 5"
out=$(ctl event pow 31 9 2>&1)
rc=$?
[ "$rc" = 1 ] && [[ $out == *"up to 6 bits, below 9: give --auto-max 9 or more"* ]]
tap_ok $? "event pow 31 9 with a maximum of 6 is refused: $out"
out=$(ctl event pow 31 31 2>&1)
rc=$?
[ "$rc" = 2 ] && [[ $out == *"BITS must be 0..30"* ]]
tap_ok $? "event pow 31 31 is refused: $out"
tap_is "$(t_sql "SELECT pow_bits || '/' || pow_auto_max FROM events WHERE id = 31")" 5/6 \
	"  nothing changed in PostgreSQL"
ctl event pow 31 9 --auto-max 0 >/dev/null
fg_wait_line "$TMP/w1.out" '^fair event=31 state=1 pow_bits=9 ' "$W1_PID" 20
tap_ok $? "event pow 31 9 --auto-max 0: published, pow_bits=9"
ctl event pow 32 3 >/dev/null
fg_wait_line "$TMP/w1.out" '^fair event=32 state=0 pow_bits=3 ' "$W1_PID" 20
tap_ok $? "event pow 32 3 (no draw): FAIR event 32 without a draw, pow_bits=3"
ctl event pow 32 0 >/dev/null
fg_wait_line "$TMP/w1.out" '^fair event=32 state=0 pow_bits=0 ' "$W1_PID" 20
tap_ok $? "event pow 32 0: the challenge is off again, and the data plane is told"
ctl event close 32 >/dev/null
out=$(ctl event pow 32 4 2>&1)
rc=$?
[ "$rc" = 1 ] && [[ $out == *"event 32 is closed: no more tokens"* ]]
tap_ok $? "event pow on a closed event is refused: $out"
# wait_metric EVENT LINE: until /metrics has flashgate_pow_bits{event="EVENT"} as LINE (10 s)
wait_metric() {
	local _
	for _ in $(seq 40); do
		[ "$(curl -s "http://127.0.0.1:$T_METRICS_PORT/metrics" |
			grep -E "^flashgate_pow_bits\{event=\"$1\"\} ")" = "$2" ] && return 0
		sleep 0.25
	done
	return 1
}
wait_metric 31 'flashgate_pow_bits{event="31"} 9'
tap_ok $? "metrics: flashgate_pow_bits{event=\"31\"} 9"

# --- automatic difficulty ------------------------------------------------------------------------
ctl event create 34 --name auto --stock 10 --starts-at $((now - 60)) --ends-at $E \
	--pay-window 15m --pow-bits 2 --pow-auto-max 4 >/dev/null && ctl event preheat 34 >/dev/null &&
	ctl event open 34 >/dev/null
tap_ok $? "event 34 open with 2 bits, automatic up to 4"
sleep 3
tap_is "$(jget pow_bits_now <<<"$(ctlj event show 34)")" 2 "  no refusals: it stays at 2"
# Event 36: a quiet sale with an automatic maximum too; the refusals are event 34's.
ctl event create 36 --name quiet --stock 10 --starts-at $((now - 60)) --ends-at $E \
	--pay-window 15m --pow-bits 2 --pow-auto-max 4 >/dev/null && ctl event preheat 36 >/dev/null &&
	ctl event open 36 >/dev/null
tap_ok $? "event 36 open with 2 bits, automatic up to 4 (a quiet sale)"
# A second data plane whose counters report refusals over the forward budget for 4 s, while
# event 34's reservations come through (the busy sale).
"$FEED" --push "$T_PULL" --sub "$T_PUB" --dp 2 --event 34 \
	--watch-limits 60000 --refuse-ms 4000 >"$TMP/w2.out" 2>&1 &
W2_PID=$!
fg_wait_line "$TMP/w2.out" '^fair event=34 state=0 pow_bits=4 ' "$W2_PID" 30
tap_ok $? "refusals growing: raised to 4 bits and published"
tap_is "$(grep -c '^fair event=34 state=0 pow_bits=3 ' "$TMP/w2.out")" 1 \
	"  through 3, one bit at a time"
tap_is "$(grep -c '^fair event=34 state=0 pow_bits=5 ' "$TMP/w2.out")" 0 \
	"  never above the maximum 4"
fg_wait_line "$TMP/cp.log" 'event 34: challenge 3 -> 4 bits' "$CP_PID" 5
tap_ok $? "  logged: event 34: challenge 3 -> 4 bits"
tap_is "$(ctlj event show 34 | jget pow_bits_now event.pow_bits)" 4/2 \
	"  event show: pow_bits_now 4, pow_bits still 2"
tap_is "$(grep '^fair event=31 ' "$TMP/w2.out" | grep -vc 'pow_bits=9 ')" 0 \
	"  event 31 (a draft without an automatic maximum now) did not move"
tap_is "$(grep '^fair event=36 ' "$TMP/w2.out" | grep -vc 'pow_bits=2 ')/$(ctlj event show 36 | jget pow_bits_now)" \
	0/2 "  event 36 (quiet: none of its reservations refused) did not move: the refusals are counted per event"
# moves: the values published for event 34 so far, each run of the same value once
moves() {
	awk '/^fair event=34 /{sub(/.*pow_bits=/, ""); sub(/ .*/, ""); if ($0 != last)
		printf "%s ", $0; last = $0}' "$TMP/w2.out"
}
for _ in $(seq 160); do [[ $(moves) == *"4 3 2 "* ]] && break; sleep 0.25; done
[[ $(moves) == *"4 3 2 "* ]]
tap_ok $? "refusals stopped: lowered back to 2, one bit at a time"
[[ $(moves) == "2 3 4 3 2 " ]]
tap_ok $? "  the difficulty went 2 3 4 3 2: $(moves)"
sleep 2
tap_is "$(jget pow_bits_now <<<"$(ctlj event show 34)")" 2 "  never below the operator's 2"
wait_metric 34 'flashgate_pow_bits{event="34"} 2'
tap_ok $? "  metrics: flashgate_pow_bits{event=\"34\"} 2"

# --- a real draw: 20 entrants in the pre-queue, 5 items -----------------------------------------
t0=$(date +%s)
ctl event create 35 --name "real draw" --stock 5 --starts-at $((t0 + 8)) --ends-at $E \
	--pay-window 15m --queue-opens-at $((t0 + 2)) --draw-window 3s >/dev/null &&
	ctl event preheat 35 >/dev/null && ctl event open 35 >/dev/null
tap_ok $? "event 35: pre-queue in 2 s, start in 8 s, a 3 s draw window, 5 items; open"
c35=$(ctlj event show 35 | jget event.seed_sha256)
while [ "$(date +%s)" -lt $((t0 + 3)) ]; do sleep 0.2; done
"$FEED" --push "$T_PULL" --sub "$T_PUB" --event 35 \
	--users 501-520 --dp 5 --batch 4 --timeout-ms 20000 >"$TMP/f35.out" 2>&1
tap_ok $? "20 users reserve in the pre-queue, each answered: $(head -c 120 "$TMP/f35.out")"
show=$(ctlj event show 35)
tap_is "$(jget draw.state draw.entrants draw.seed <<<"$show")" "queueing/20/" \
	"event show: queueing, 20 entrants so far, no seed"
for _ in $(seq 120); do
	[ "$(ctlj event show 35 | jget draw.state)" = "done" ] && break
	sleep 0.25
done
show=$(ctlj event show 35)
tap_is "$(jget draw.state draw.entrants draw.decided <<<"$show")" "done/20/20" \
	"the draw runs at start + 3 s: done, 20 entrants, 20 decided"
tap_is "$(sha256hex "$(jget draw.seed <<<"$show")")" "$c35" \
	"  the seed is shown now, and its SHA-256 is the commitment shown from create"
"$OW" -s "order_writer.push_endpoint=$T_PULL" -s order_writer.max_rate=0 \
	"${T_REDIS[@]}" -s "postgres.conninfo=$FG_PG_CONNINFO" \
	>"$TMP/ow.log" 2>&1 &
OW_PID=$!
for _ in $(seq 80); do
	[ "$(t_sql "SELECT count(*) FROM orders WHERE event_id = 35")" = 5 ] && break
	sleep 0.25
done
tap_is "$(t_sql "SELECT count(*) FROM orders WHERE event_id = 35")" 5 \
	"the order writer wrote the 5 winners' orders"
out=$(ctl event verify-draw 35 --commitment "$c35" 2>&1)
rc=$?
[ "$rc" = 0 ] && [[ $out == *"the draw checks out: 20 entrants"*"the first 5 by rank (stock 5)"* ]]
tap_ok $? "verify-draw passes on the real draw: ${out%%$'\n'*}"
read -r u1 u2 < <(t_sql "SELECT string_agg(user_id::text, ' ' ORDER BY rank) FROM draw_entrants
	WHERE event_id = 35 AND rank IN (4, 9)")
t_sql "UPDATE draw_entrants SET rank = 1000 WHERE event_id = 35 AND user_id = $u1;
	UPDATE draw_entrants SET rank = 4 WHERE event_id = 35 AND user_id = $u2;
	UPDATE draw_entrants SET rank = 9 WHERE event_id = 35 AND user_id = $u1"
out=$(ctl event verify-draw 35 2>&1)
rc=$?
[ "$rc" = 1 ] && [[ $out == *"rank 4 is user $u2 in draw_entrants, the draw gives user $u1"* ]]
tap_ok $? "  ranks 4 and 9 swapped afterwards are caught: $out"
tap_done
