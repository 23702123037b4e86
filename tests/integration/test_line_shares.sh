#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The bots' share of a draw's line checked against their share of the crowd (issue 27 item 3),
# with scripts/demo-shares.py itself on what PostgreSQL holds after two draws, through the real
# control plane with stand-in data planes (tests/peer/fg_feed), real Redis and PostgreSQL. One
# crowd of 400 buyers, 8 of them bots (2 %, spread evenly as flashgate-loadgen's --bots: users
# 50, 100, ..., 400), in two sales with a draw:
#   - event 31, a fair line: every buyer enters before draw_at; the check passes;
#   - event 32, a line made unfair by a slowed generator: the bots enter before draw_at, but of
#     the people only users 1-25 do, the others' reservations are admitted and sent after
#     draw_at (told retry, not entrants): the bots are 8 of 33 entrants, far above their 2 %
#     of the crowd, and the check fails.
#
# usage: test_line_shares.sh CONTROLPLANE FLASHGATECTL FG_FEED
set -uo pipefail

CP=$1 CTL=$2 FEED=$3 T_FEED=$3 T_FEED_TIMEOUT_MS=20000
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
t_begin line_shares
t_services_up "$TMP/svc"
T_CP=$CP T_CTL=$CTL
t_cp_up
tap_ok $? "the control plane is ready"

T_CTL_OUT=$TMP/ctl.out
field() { t_field "$TMP/$1" "$2"; }
# demo-shares.py takes its psql command as words: a wrapper holds the connection string.
printf '#!/bin/sh\nexec psql "%s" -XAtq -v ON_ERROR_STOP=1 "$@"\n' "$FG_PG_CONNINFO" >"$TMP/psql"
chmod +x "$TMP/psql"
shares() { # EVENT: demo-shares.py on EVENT's draw -> "BOT_ENTRANTS ENTRANTS BOT_ENTRANTS_MAX"
	python3 "$ROOT/scripts/demo-shares.py" --psql "$TMP/psql" --user-base 1 --users 400 \
		--bots 8 --draw-users 400 --draw-bots 8 --draw-event "$1" --first-event "$1" \
		--out "$TMP/shares.$1" &&
		python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["draw"]
print(d["bot_entrants"], d["entrants"], d["bot_entrants_max"])' "$TMP/shares.$1"
}

now=$(date +%s)
q=$((now + 4))
draw_at=$((q + 7)) # starts_at + the draw window
ctl event create 31 --name "fair line" --stock 10 --queue-opens-at $q --starts-at $((q + 1)) \
	--draw-window 6s --ends-at $((now + 3600)) --pay-window 15m &&
	ctl event create 32 --name "unfair line" --stock 10 --queue-opens-at $q \
		--starts-at $((q + 1)) --draw-window 6s --ends-at $((now + 3600)) --pay-window 15m
tap_ok $? "events 31 and 32 created, each with a line and a draw (draw_at in 11 s)"
rc=0
for e in 31 32; do ctl event preheat $e && ctl event open $e || { rc=1; break; }; done
tap_ok $rc "preheated and opened"
t_sleep_until "$q"

# Event 31: the whole crowd in time.
t_feed fair 31 1-400 1
tap_is "$(field fair queued)" 400 "event 31: all 400 buyers (8 bots) entered before draw_at"

# Event 32: the bots, a hundred times faster, all in time; of the people only the first 25.
pids=()
for b in $(seq 50 50 400); do
	t_feed "bot.$b" 32 "$b-$b" $((10 + b / 50)) &
	pids+=($!)
done
t_feed early 32 1-25 2
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
tap_is "$rc/$(field early queued)/$(t_redis hlen 'fg:{32}:entrants')" 0/25/33 \
	"event 32: the 8 bots and people 1-25 entered before draw_at (33 entrants)"
late_ms=$(((draw_at + 1) * 1000))
t_feed late 32 26-400 3 --admitted-ms "$late_ms" --send-at-ms "$late_ms"
late_queued=$(field late queued)

t_draw_done 31 60 && t_draw_done 32 60
tap_ok $? "both draws done"
tap_is "$late_queued/$(t_sql "SELECT count(*) FROM draw_entrants WHERE event_id = 32")" \
	0/33 "  the slowed generator's people, admitted 1 s after draw_at: none an entrant"
read -r be e bmax <<<"$(shares 31)"
tap_ok "$([ -n "${bmax:-}" ] && [ "$e" -eq 400 ] && [ "$be" -le "$bmax" ]; echo $?)" \
	"fair line: the bots $be of $e entrants, at most $bmax: demo-shares.py's check passes"
read -r be e bmax <<<"$(shares 32)"
tap_ok "$([ -n "${bmax:-}" ] && [ "$e" -eq 33 ] && [ "$be" -gt "$bmax" ]; echo $?)" \
	"unfair line: the bots $be of $e entrants, above the $bmax a fair pick of the crowd gives: demo-shares.py's check fails"

# Event 31's waiting list (390 entrants beyond its 10 items) is final once every item held is
# paid (issue 27 item 1): the control plane's FAIR says so. The payments as the order writer
# stores them (store_results_paid(): the result P:, the draw key's count of the buyers paid).
"$FEED" --push "$T_PULL" --sub "$T_PUB" --watch-limits 15000 >"$TMP/watch" 2>&1 &
W_PID=$!
T_PIDS+=("$W_PID")
fg_wait_line "$TMP/watch" '^fair event=31 state=3 .* final=0$' "$W_PID" 10
tap_ok $? "event 31 drawn, 10 items held unpaid: FAIR says not final"
# scripts/demo's check of its browser buyer (fg_waiting_shown) agrees with the control plane:
# a waiting entrant's page ends on waiting while not final, on sold_out once final.
waiter=$(t_redis lindex 'fg:{31}:wait' 0)
waiter=${waiter%%:*}
tap_is "$(fg_waiting_shown "$FG_REDIS_SOCK" 31 "$waiter")" waiting \
	"  the demo's check wants user $waiter's page (first on the list) waiting"
for u in $(t_redis hgetall 'fg:{31}:result' | paste - - | awk '{ print $1 ":" $2 }'); do
	t_redis hset 'fg:{31}:result' "${u%%:*}" "P:${u#*:}:1:1" >/dev/null
done
t_redis hincrby 'fg:{31}:draw' paid 10 >/dev/null
fg_wait_line "$TMP/watch" '^fair event=31 state=3 .* final=1$' "$W_PID" 10
rc=$?
tap_ok $rc "  all 10 paid: FAIR says final within seconds (the waiting entrants' sold_out is final)"
[ "$rc" -eq 0 ] || tap_diag "event 31's last FAIR: $(grep '^fair event=31 ' "$TMP/watch" | tail -n 1); its draw key:" \
	"$(t_redis hgetall 'fg:{31}:draw' | tr '\n' ' '), stock $(t_redis get 'fg:{31}:stock'), results $(t_redis hlen 'fg:{31}:result'): $(t_redis hvals 'fg:{31}:result' | head -3 | tr '\n' ' '), released $(t_redis scard 'fg:{31}:released')"
tap_is "$(fg_waiting_shown "$FG_REDIS_SOCK" 31 "$waiter")/$(t_redis lindex 'fg:{31}:wait' 0 |
	cut -d: -f1)" "sold_out/$waiter" \
	"  the demo's check wants user $waiter's page sold_out, though still first on Redis's list"
fg_stop_pid "$W_PID" 10

fg_stop_pid "$CP_PID" 10
tap_ok $? "the control plane stops"
CP_PID=
tap_done
