#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A result query of an entrant on the waiting list after the draw is done (issue 27 item 1):
# what a data plane asks when a poll finds no result in its table (a data plane restarted, a
# result evicted, a data plane moved to another control plane). A drawn sale of 3 items and 10
# entrants through control plane 1 (tests/peer/fg_feed); once the draw is done, a result query
# of all 10 is answered: the 3 buyers with their results, the 7 beyond the stock WAITING with
# the rank the draw gave them (reserve.lua's fg:{ev}:wrank). Then the same through control
# plane 2, started after the draw (it never held the order).
#
# usage: test_draw_waiting_query.sh CONTROLPLANE FLASHGATECTL FG_FEED
set -uo pipefail

T_CP=$1 CTL=$2 T_FEED=$3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
t_begin drawq
t_services_up "$TMP/svc"
mapfile -t P < <(fg_free_ports 4)
t_cp_n 1 "${P[0]}" "${P[1]}"
tap_ok $? "control plane 1 is ready"

T_CTL=$CTL T_ADMIN=$TMP/admin1.sock T_CTL_OUT=quiet
t_draw_sale 43 "waiting query" 3
tap_ok $? "event 43: 3 items, a pre-queue in 3 s, the draw 3 s later"
t_sleep_until $T_DRAW_Q
T_PULL=tcp://127.0.0.1:${P[0]} T_PUB=tcp://127.0.0.1:${P[1]} t_feed entrants 43 1-10 51 --final
tap_ok $? "10 entrants, each decided ($(cat "$TMP/entrants"))"
t_draw_done 43 60
tap_ok $? "the draw is done"
# The waiting list: "<user>:<rid>:<rank>" in rank order; what a query must answer.
t_redis lrange 'fg:{43}:wait' 0 -1 | awk -F: '{ print "result " $1 " waiting " $3 }' |
	sort >"$TMP/want"
tap_is "$(wc -l <"$TMP/want")" 7 "  7 entrants beyond the stock on the waiting list"

# query OUT PULL PUB DP: user 900 reserves (sold out) after a result query of users 1-10.
query() {
	T_PULL=tcp://127.0.0.1:$2 T_PUB=tcp://127.0.0.1:$3 T_FEED_TIMEOUT_MS=15000 \
		t_feed "$1" 43 900-900 "$4" --query 1-10 --storm 10 --log "$TMP/$1.log"
}
check() { # OUT WHO
	tap_is "$(t_field "$TMP/$1" queried)" 10 "$2: a result query of the 10 entrants, all answered ($(cat "$TMP/$1"))"
	grep ' waiting ' "$TMP/$1.log" | grep -vE '^result 900 ' | cut -d' ' -f1-4 | sort -u >"$TMP/$1.got"
	tap_ok "$(cmp -s "$TMP/want" "$TMP/$1.got"; echo $?)" \
		"  the 7 on the waiting list answered waiting with their ranks ($(tr '\n' ',' <"$TMP/$1.got"))"
	tap_is "$(grep -cE '^result ([1-9]|10) reserved ' "$TMP/$1.log")" 3 "  the 3 buyers their results"
}
query q1 "${P[0]}" "${P[1]}" 52
check q1 "control plane 1 (it ran the draw)"

t_cp_n 2 "${P[2]}" "${P[3]}"
tap_ok $? "control plane 2 is ready (started after the draw: it never held the order)"
query q2 "${P[2]}" "${P[3]}" 53
check q2 "control plane 2"

for n in 1 2; do
	kill "${T_CP_PIDS[n]}"
	wait "${T_CP_PIDS[n]}"
	tap_is $? 0 "control plane $n exits with status 0 on SIGTERM"
done
T_PIDS=()
tap_done
