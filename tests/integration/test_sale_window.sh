#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Stock is decided only inside the sale (issue 15 item 2), at the control plane: a stand-in
# data plane (tests/peer/fg_feed) whose clock says "open" sends reservations the control
# plane's clock puts before the start or after the end: none is decided (Redis stock, buyers
# and outbox unchanged), each is answered not_started / closed and counted in stats and
# metrics. Then `event close` races a stream of reserves: every reserve is decided before the
# close or refused after it, none reserved after the first refusal, and Redis refuses by itself
# (the window key). Real Redis and PostgreSQL from scripts/services.
#
# usage: test_sale_window.sh CONTROLPLANE FLASHGATECTL FG_FEED
set -uo pipefail

CP=$1 CTL=$2 FEED=$3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
t_begin window
t_services_up "$TMP/svc"
T_CP=$CP T_CTL=$CTL
t_cp_up
tap_ok $? "the control plane is ready"

T_CTL_OUT=$TMP/ctl.out
feed() { # OUT EVENT USERS [ARGS...]: each feed its own dp id (one in use is refused)
	local out=$1 ev=$2 users=$3
	shift 3
	"$FEED" --push "$T_PULL" --sub "$T_PUB" --event "$ev" \
		--users "$users" --dp "$((20 + ev))" --batch 10 --timeout-ms 20000 "$@" \
		>"$TMP/$out" 2>&1
}
field() { t_field "$TMP/$1" "$2"; }
stat() { t_stat decisions "$1"; }
now=$(date +%s)

# --- an event that starts in an hour, opened by the operator: a data plane whose clock runs an
# hour ahead admits reservations; the control plane's clock says not started. -------------------
ctl event create 11 --name "starts later" --stock 100 --starts-at $((now + 3600)) \
	--ends-at $((now + 7200)) --pay-window 15m && ctl event preheat 11 && ctl event open 11
tap_ok $? "event 11 (starts in an hour) created, preheated and opened"
tap_is "$(t_redis get 'fg:{11}:window')" "$(((now + 3600) * 1000)) $(((now + 7200) * 1000))" \
	"opening wrote the sale window into Redis"
feed early 11 1-50
tap_ok $? "every reservation for event 11 got an answer"
tap_diag "feed: $(cat "$TMP/early")"
tap_is "$(field early not_started)/$(field early reserved)" 50/0 \
	"all 50 answered not_started, none reserved"
tap_is "$(t_redis get 'fg:{11}:stock')/$(t_redis hlen 'fg:{11}:result')/$(t_redis xlen 'fg:{11}:outbox')" \
	100/0/0 "Redis: stock 100, no buyer, an empty outbox (never decided)"

# --- an event that ended a moment ago: still open for the operator, over by the clock ----------
# Its end counted from now, not from the test's start: a loaded host takes seconds above.
now=$(date +%s)
ctl event create 12 --name "ended" --stock 100 --starts-at $((now - 3600)) \
	--ends-at $((now + 2)) --pay-window 15m && ctl event preheat 12 && ctl event open 12
tap_ok $? "event 12 (ends in 2 s) created, preheated and opened"
sleep 3
feed late 12 1-50
tap_ok $? "every reservation for event 12 got an answer"
tap_diag "feed: $(cat "$TMP/late")"
tap_is "$(field late closed)/$(field late reserved)" 50/0 "all 50 answered closed, none reserved"
tap_is "$(t_redis get 'fg:{12}:stock')/$(t_redis hlen 'fg:{12}:result')" 100/0 \
	"Redis: stock 100, no buyer (never decided)"
tap_is "$(stat outside_sale)" 100 "flashgatectl stats counts the 100 under decisions.outside_sale"
tap_is "$(stat not_started)/$(stat closed)" 50/50 "  and by verdict: not_started 50, closed 50"
m=$(curl -s "http://127.0.0.1:$T_METRICS_PORT/metrics")
tap_is "$(grep -c '^flashgate_cp_outside_sale_total 100$' <<<"$m")" 1 \
	"the metric flashgate_cp_outside_sale_total is 100"

# --- event close racing a stream of reserves -----------------------------------------------------
ctl event create 13 --name "closed mid-sale" --stock 100000 --starts-at $((now - 60)) \
	--ends-at $((now + 3600)) --pay-window 15m && ctl event preheat 13 && ctl event open 13
tap_ok $? "event 13 created, preheated and opened with 100000 items"
feed race 13 1-3000 --pace-us 2000 &
f=$!
for _ in $(seq 200); do [ "$(t_redis hlen 'fg:{13}:result')" -ge 200 ] && break; sleep 0.02; done
ctl event close 13
tap_ok $? "event close 13 while reserves stream in"
buyers_at_close=$(t_redis hlen 'fg:{13}:result')
tap_is "$(t_redis get 'fg:{13}:window')" closed "the close set the window key to closed in Redis"
wait $f
tap_ok $? "every reservation of the stream got an answer"
tap_diag "feed: $(cat "$TMP/race")"
r=$(field race reserved) c=$(field race closed)
tap_ok "$([ "$r" -gt 0 ] && [ "$c" -gt 0 ] && [ $((r + c)) -eq 3000 ]; echo $?)" \
	"each was reserved before the close or refused closed ($r reserved, $c closed)"
tap_is "$(field race reserved_after_closed)" 0 "none was reserved after the first refusal"
tap_is "$buyers_at_close/$(t_redis hlen 'fg:{13}:result')" "$r/$r" \
	"Redis held every buyer when the close answered, and none came after"
tap_is "$(t_redis get 'fg:{13}:stock')" $((100000 - r)) "stock + buyers == preheated stock"
# Redis refuses by itself: a reservation straight into reserve.lua after the close.
sha=$(t_redis script load "$(sed -n '1,$p' "$ROOT/lua/reserve.lua")")
tap_is "$(t_redis evalsha "$sha" 5 'fg:{13}:stock' 'fg:{13}:result' 'fg:{13}:outbox' \
	'fg:{13}:window' 'fg:{13}:draw' 999999 777 "$(($(date +%s) * 1000))" - | head -1)" -2 \
	"reserve.lua run straight after the close refuses it itself (closed)"

fg_stop_pid "$CP_PID" 10
tap_ok $? "the control plane stops"
CP_PID=
tap_done
