#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Two control planes decide the same event at once, each fed by two stand-in data planes
# (tests/peer/fg_feed) whose users overlap: no oversell, no user reserved twice, the outbox
# holds one entry per buyer. Real Redis and PostgreSQL from scripts/services.
#
# usage: test_two_controlplanes.sh CONTROLPLANE FLASHGATECTL FG_FEED
set -uo pipefail

T_CP=$1 CTL=$2 FEED=$3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
STOCK=500
t_begin twocp
t_services_up "$TMP/svc"
mapfile -t P < <(fg_free_ports 4)

t_cp_n 1 "${P[0]}" "${P[1]}"
tap_ok $? "control plane 1 is ready"
t_cp_n 2 "${P[2]}" "${P[3]}"
tap_ok $? "control plane 2 is ready (the same Redis and PostgreSQL)"

T_CTL=$CTL T_ADMIN=$TMP/admin1.sock T_CTL_OUT=quiet
ctl event create 5 --name "two deciders" --stock $STOCK --starts-at 2026-01-01T00:00:00Z \
	--ends-at 2036-01-01T00:00:00Z --pay-window 15m &&
	ctl event preheat 5 && ctl event open 5
tap_ok $? "event 5 created, preheated and opened with $STOCK items"

# Four feeds, two per control plane; users 1-400 and 201-600 overlap in 201-400.
feed() { # N CP_PULL CP_PUB USERS
	"$FEED" --push "tcp://127.0.0.1:$2" --sub "tcp://127.0.0.1:$3" --event 5 --users "$4" \
		--dp "$1" --batch 50 --timeout-ms 20000 >"$TMP/feed$1.out" 2>&1
}
feed 11 "${P[0]}" "${P[1]}" 1-400 &
f1=$!
feed 12 "${P[2]}" "${P[3]}" 201-600 &
f2=$!
feed 13 "${P[0]}" "${P[1]}" 201-600 &
f3=$!
feed 14 "${P[2]}" "${P[3]}" 1-400 &
f4=$!
rcs=0
for f in $f1 $f2 $f3 $f4; do wait "$f" || rcs=$((rcs + 1)); done
for i in 11 12 13 14; do echo "# feed $i: $(cat "$TMP/feed$i.out")"; done
tap_is "$rcs" 0 "every reservation of the four feeds got a verdict"

sum() { # FIELD
	local t=0 v
	for i in 11 12 13 14; do
		v=$(grep -o "$1=[0-9]*" "$TMP/feed$i.out" | cut -d= -f2)
		t=$((t + ${v:-0}))
	done
	echo $t
}
tap_is "$(sum reserved)" $STOCK "exactly $STOCK reservations won over 1,600 tries of 600 users"
tap_is "$(($(sum reserved) + $(sum duplicate) + $(sum sold_out)))" 1600 "every try was decided"
tap_is "$(sum retry)" 0 "no try was answered retry"
tap_is "$(t_redis get 'fg:{5}:stock')" 0 "Redis stock is 0, never negative"
# Buyers are the fields of the result hash; an outbox entry holds a batch's reservations,
# u r t repeated: the value after each "u" is one reservation's user.
tap_is "$(t_redis hlen 'fg:{5}:result')" $STOCK "$STOCK distinct buyers"
outbox_users() { t_redis xrange 'fg:{5}:outbox' - + | awk 'prev == "u" { print } { prev = $0 }'; }
tap_is "$(outbox_users | wc -l)" $STOCK "one reservation in the outbox per buyer"
tap_is "$(outbox_users | sort | uniq -d | wc -l)" 0 "no user appears twice in the outbox"
for i in 1 2; do
	kill "${T_PIDS[$((i - 1))]}"
	wait "${T_PIDS[$((i - 1))]}"
	tap_is $? 0 "control plane $i exits with status 0 on SIGTERM"
done
T_PIDS=()
tap_done
