#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Reservation ids are unique across data planes (issue 15 item 6), at the control plane:
# stand-in data planes (tests/peer/fg_feed --hello, which says HELLO as a data plane does) with
# the same dp id. A second live one is refused and told (DP_REFUSED), none of its reservations
# is decided (nothing of it in Redis), stats, metrics and the log say so; two started in the
# same second (one epoch) are both refused; once the holder is gone, a new data plane with the
# id is accepted. Real Redis and PostgreSQL from scripts/services.
#
# usage: test_dp_ids.sh CONTROLPLANE FLASHGATECTL FG_FEED
set -uo pipefail

CP=$1 CTL=$2 FEED=$3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
t_begin dpids
t_services_up "$TMP/svc"
T_CP=$CP T_CTL=$CTL
t_cp_up -s controlplane.dp_timeout=2s
tap_ok $? "the control plane is ready controlplane.dp_timeout=2s"

now=$(date +%s)
ctl event create 3 --name "one id, two data planes" --stock 1000 \
	--starts-at $((now - 60)) --ends-at $((now + 3600)) --pay-window 15m >/dev/null &&
	ctl event preheat 3 >/dev/null &&
	ctl event open 3 >/dev/null
tap_ok $? "event 3 created, preheated and opened"

feed() { # OUT DP EPOCH USERS [ARGS...]
	local out=$1 dp=$2 epoch=$3 users=$4
	shift 4
	"$FEED" --push "$T_PULL" --sub "$T_PUB" --event 3 \
		--users "$users" --dp "$dp" --epoch "$epoch" --hello --batch 10 "$@" \
		>"$TMP/$out" 2>&1
}
field() { t_field "$TMP/$1" "$2"; }
ids() { t_stat dp_ids "$1"; }
users_in_redis() { # FIRST LAST: how many of these users are buyers of event 3
	local n=0 u
	for u in $(seq "$1" "$2"); do
		[ "$(t_redis hexists 'fg:{3}:result' "$u")" = 1 ] && n=$((n + 1))
	done
	echo $n
}

# --- a second live data plane with dp id 5 ------------------------------------------------------
feed first 5 1000 1-50 --hold-ms 6000 --timeout-ms 10000 &
first=$!
for _ in $(seq 100); do [ "$(t_redis hlen 'fg:{3}:result')" -ge 50 ] && break; sleep 0.05; done
feed second 5 1001 51-100 --timeout-ms 2500
tap_diag "second: $(cat "$TMP/second")"
tap_is "$(field second refused)" 1 "the second data plane with dp id 5 is told it is refused"
tap_is "$(field second reserved)/$(field second missing)" 0/50 \
	"none of its 50 reservations is decided (no answer: the data plane answers 503 instead)"
tap_is "$(users_in_redis 51 100)" 0 "Redis holds none of its users"
wait $first
tap_ok $? "the first data plane's reservations were all answered"
tap_diag "first: $(cat "$TMP/first")"
tap_is "$(field first reserved)/$(field first refused)" 50/0 \
	"the first (the holder) got its 50 reserved, and was never refused"
tap_is "$(t_redis hlen 'fg:{3}:result')" 50 "Redis: 50 buyers, all the first's"
tap_is "$(ids refused_reservations)" 50 "flashgatectl stats: dp_ids.refused_reservations 50"
tap_ok "$([ "$(ids conflicts)" -ge 1 ]; echo $?)" "  and dp_ids.conflicts counts it"
grep -q 'dp_id 5 is in use by a live data plane (epoch 1000): a second one (epoch 1001) is refused' \
	"$TMP/cp.log"
tap_ok $? "the control plane logs the refusal, naming the id and both epochs"
m=$(curl -s "http://127.0.0.1:$T_METRICS_PORT/metrics")
tap_is "$(grep -c '^flashgate_cp_dp_refused_reservations_total 50$' <<<"$m")" 1 \
	"metric flashgate_cp_dp_refused_reservations_total 50"

# --- the holder is gone: a restarted data plane with dp id 5 is accepted -------------------------
sleep 2.5
feed third 5 1002 101-150 --timeout-ms 10000
tap_ok $? "once the holder is silent past dp_timeout, a new data plane with dp id 5 is heard"
tap_diag "third: $(cat "$TMP/third")"
tap_is "$(field third reserved)/$(field third refused)" 50/0 "  its 50 reservations are decided"
grep -q 'dp_id 5 is now held by the data plane of epoch 1002' "$TMP/cp.log"
tap_ok $? "  and the log says it took the id over"

# --- two data planes started in the same second (one epoch): both refused ------------------------
feed twin_a 6 2000 201-210 --hold-ms 4000 --timeout-ms 8000 &
ta=$!
for _ in $(seq 100); do [ "$(users_in_redis 201 210)" -ge 10 ] && break; sleep 0.05; done
feed twin_b 6 2000 211-260 --timeout-ms 2500
wait $ta
tap_diag "twin a: $(cat "$TMP/twin_a")"
tap_diag "twin b: $(cat "$TMP/twin_b")"
tap_is "$(field twin_a refused)/$(field twin_b refused)" 1/1 \
	"two data planes with dp id 6 and one epoch: both are told they are refused"
tap_is "$(users_in_redis 211 260)/$(field twin_b reserved)" 0/0 \
	"none of the second one's reservations is decided"
grep -q 'two live data planes with dp_id 6 started in the same second' "$TMP/cp.log"
tap_ok $? "the log says so"

fg_stop_pid "$CP_PID" 10
tap_ok $? "the control plane stops"
CP_PID=
tap_done
