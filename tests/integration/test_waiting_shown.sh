#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# What scripts/demo's check wants the browser buyer's page to end on when it holds no item
# (scripts/lib.sh fg_waiting_shown), on a Redis of its own, case by case (issue 27 item 1,
# docs/api.md): "waiting" while the buyer is on the draw's waiting list and an item may come
# back to it; "sold_out" once none can (the stock 0 and every item held paid, as the control
# plane's store_draw_waiting() decides; the sale closed or ended) or when it is not on the list.
# A large demo's page ended on sold_out after every item was paid, the buyer still on the list
# (Redis keeps the list): the check wanted waiting and failed a page that was right.
#
# usage: test_waiting_shown.sh
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
t_begin waiting_shown
command -v redis-server >/dev/null || tap_bail "redis-server is not installed"

SOCK=$TMP/redis.sock
redis-server --port 0 --unixsocket "$SOCK" --unixsocketperm 700 --dir "$TMP" --save '' \
	--appendonly no >"$TMP/redis.log" 2>&1 &
T_PIDS+=($!)
t_wait_until 10 redis-cli -s "$SOCK" ping >/dev/null 2>&1
tap_ok $? "a Redis of the test's own is up"
R=(redis-cli -s "$SOCK")

now=$(date +%s%3N)
# One case a line: what it is, then the keys of event 5 (stock, buyers holding an item with
# their results, released buyers, the draw key's paid, the window), the user asked about, and
# what the page must end on. Users 1-3 are buyers; 11-13 on the waiting list (ranks 4-6).
#   NAME|STOCK|RESULTS|RELEASED|PAID|WINDOW|USER|WANT
cases=(
	"3 items held, 2 paid: one may come back|0|1=P:1:1:1 2=P:2:2:1 3=101|-|2|open|12|waiting"
	"every item held paid: final|0|1=P:1:1:1 2=P:2:2:1 3=P:3:3:1|-|3|open|12|sold_out"
	"the expired one's item to the list's head, paid: final|0|1=P:1:1:1 2=X:2:2:1 3=P:3:3:1 11=P:4:4:1|2|3|open|12|sold_out"
	"paid but one order still pending from the list|0|1=P:1:1:1 2=X:2:2:1 3=P:3:3:1 11=104|2|2|open|12|waiting"
	"an item on sale (stock 1): not final|1|1=P:1:1:1 2=P:2:2:1|-|2|open|13|waiting"
	"not on the list|0|1=101 2=102 3=103|-|0|open|7|sold_out"
	"a user whose id begins another's (1 of 11): not on the list|0|1=101 2=102 3=103|-|0|open|1|sold_out"
	"the sale closed (window closed)|0|1=101 2=102 3=103|-|0|closed|12|sold_out"
	"the sale ended (now at its end)|0|1=101 2=102 3=103|-|0|ended|12|sold_out"
	"the sale open until later, items unpaid|0|1=101 2=102 3=103|-|0|open|13|waiting"
	"no draw key (paid 0), items unpaid|0|1=101 2=102 3=103|-|-|open|11|waiting"
)
for c in "${cases[@]}"; do
	IFS='|' read -r name stock results released paid window user want <<<"$c"
	"${R[@]}" flushall >/dev/null
	"${R[@]}" set 'fg:{5}:stock' "$stock" >/dev/null
	for r in $results; do "${R[@]}" hset 'fg:{5}:result' "${r%%=*}" "${r#*=}" >/dev/null; done
	[ "$released" = - ] || "${R[@]}" sadd 'fg:{5}:released' "$released" >/dev/null
	[ "$paid" = - ] || "${R[@]}" hset 'fg:{5}:draw' state 'done' served 3 paid "$paid" >/dev/null
	case $window in
	open) "${R[@]}" set 'fg:{5}:window' "$((now - 60000)) $((now + 60000))" >/dev/null ;;
	ended) "${R[@]}" set 'fg:{5}:window' "$((now - 60000)) $now" >/dev/null ;;
	closed) "${R[@]}" set 'fg:{5}:window' closed >/dev/null ;;
	esac
	# The list as reserve.lua writes it, less those release.lua handed an item (11 above when
	# it is a buyer).
	for w in 11:201:4 12:202:5 13:203:6; do
		[ "$("${R[@]}" hexists 'fg:{5}:result' "${w%%:*}")" = 1 ] ||
			"${R[@]}" rpush 'fg:{5}:wait' "$w" >/dev/null
	done
	tap_is "$(fg_waiting_shown "$SOCK" 5 "$user" "$now")" "$want" "$name: user $user $want"
done

"${R[@]}" flushall >/dev/null
"${R[@]}" set 'fg:{5}:window' nonsense >/dev/null
"${R[@]}" rpush 'fg:{5}:wait' 12:202:5 >/dev/null
"${R[@]}" set 'fg:{5}:stock' 0 >/dev/null
"${R[@]}" hset 'fg:{5}:result' 1 101 >/dev/null
tap_is "$(fg_waiting_shown "$SOCK" 5 12 "$now")" waiting \
	"a window key of another form: the stock and payments decide (waiting, 1 held, 0 paid)"
rc=0
said=$(fg_waiting_shown "$TMP/none.sock" 5 12 "$now" 2>/dev/null) || rc=$?
tap_ok "$([ "$rc" -ne 0 ] && [ -z "$said" ]; echo $?)" "no Redis there: nothing said, non-zero"
tap_done
