#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Two control planes on one Redis and PostgreSQL (docs/ha.md, "Several control planes"): a
# stand-in data plane (tests/peer/fg_feed) streams reservations to the first, which is
# SIGKILLed mid-stream; what it had not decided is lost with it, and the same buyers' tries go
# to the second (what a data plane that moved and the buyers' retries send): every buyer holds
# exactly one reservation, decided once (those the first decided are answered duplicate by the
# second), none twice in the outbox, the stock exact.
#
# usage: test_cp_failover.sh CONTROLPLANE FLASHGATECTL FG_FEED
set -uo pipefail

T_CP=$1 CTL=$2 FEED=$3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
STOCK=1000 USERS=600
t_begin cpfail
t_services_up "$TMP/svc"
mapfile -t P < <(fg_free_ports 4)

t_cp_n 1 "${P[0]}" "${P[1]}"
tap_ok $? "control plane 1 is ready"
t_cp_n 2 "${P[2]}" "${P[3]}"
tap_ok $? "control plane 2 is ready (the same Redis and PostgreSQL)"

T_CTL=$CTL T_ADMIN=$TMP/admin2.sock T_CTL_OUT=quiet
ctl event create 5 --name "failover" --stock $STOCK --starts-at 2026-01-01T00:00:00Z \
	--ends-at 2036-01-01T00:00:00Z --pay-window 15m &&
	ctl event preheat 5 && ctl event open 5
tap_ok $? "event 5 created, preheated and opened with $STOCK items"

# The stream to control plane 1: batches of 10 every 20 ms (about 1.2 s for all).
"$FEED" --push "tcp://127.0.0.1:${P[0]}" --sub "tcp://127.0.0.1:${P[1]}" --event 5 \
	--users "1-$USERS" --dp 11 --batch 10 --pace-us 20000 --timeout-ms 8000 \
	>"$TMP/feed1.out" 2>&1 &
f1=$!
decided() { [ "$(t_redis hlen 'fg:{5}:result')" -ge 100 ]; }
t_wait_until 30 decided
kill -KILL "${T_CP_PIDS[1]}"
tap_ok $? "control plane 1 SIGKILLed mid-stream ($(t_redis hlen 'fg:{5}:result') buyers decided)"
wait "$f1"
r1=$(t_field "$TMP/feed1.out" reserved)
echo "# feed to 1: $(cat "$TMP/feed1.out")"
[ "${r1:-0}" -gt 0 ] && [ "${r1:-0}" -lt $USERS ]
tap_ok $? "the first control plane decided part of the stream ($r1 of $USERS answered)"
h1=$(t_redis hlen 'fg:{5}:result')

# The same buyers again, to control plane 2.
"$FEED" --push "tcp://127.0.0.1:${P[2]}" --sub "tcp://127.0.0.1:${P[3]}" --event 5 \
	--users "1-$USERS" --dp 11 --batch 10 --timeout-ms 30000 >"$TMP/feed2.out" 2>&1
tap_ok $? "every try to the second control plane got a verdict: $(cat "$TMP/feed2.out")"
tap_is "$(t_field "$TMP/feed2.out" duplicate)" "$h1" \
	"what the first decided is answered duplicate by the second, not decided again"
tap_is "$(($(t_field "$TMP/feed2.out" reserved) + $(t_field "$TMP/feed2.out" duplicate)))" \
	$USERS "every buyer holds a reservation"
tap_is "$(t_redis hlen 'fg:{5}:result')" $USERS "$USERS buyers"
outbox_users() { t_redis xrange 'fg:{5}:outbox' - + | awk 'prev == "u" { print } { prev = $0 }'; }
tap_is "$(outbox_users | wc -l)" $USERS "one reservation in the outbox per buyer"
tap_is "$(outbox_users | sort | uniq -d | wc -l)" 0 "no buyer decided twice"
tap_is "$(t_redis get 'fg:{5}:stock')" $((STOCK - USERS)) "Redis stock exact"
kill "${T_CP_PIDS[2]}"
wait "${T_CP_PIDS[2]}"
tap_is $? 0 "control plane 2 exits with status 0 on SIGTERM"
T_PIDS=()
tap_done
