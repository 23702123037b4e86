#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The real control plane on Redis with replicas (docs/ha.md): scripts/services' Redis as the
# primary, two replicas and three redis-sentinel on free ports of 127.0.0.1, the control plane
# configured with [redis] sentinels and wait_replicas = 1, reservations from a stand-in data
# plane (tests/peer/fg_feed):
# - the control plane finds the primary through Sentinel and decides;
# - the primary SIGKILLed, Sentinel promotes a replica: the control plane follows it and decides
#   again; every reservation acknowledged before the loss is in the new primary, nobody twice;
# - the replica stopped: rounds decided on the primary are answered retry, none published before
#   its (pipelined) WAIT answered; back, the retry finds them kept.
#
# usage: test_cp_sentinel.sh CONTROLPLANE FLASHGATECTL FG_FEED
set -uo pipefail

CP=$1 CTL=$2 FEED=$3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
t_begin cpsent
command -v redis-sentinel >/dev/null || {
	tap_skip "redis-sentinel is not installed (Debian's redis-sentinel)" "Sentinel"
	tap_done
}
t_services_up "$TMP/svc"
T_CP=$CP T_CTL=$CTL T_CTL_OUT=$TMP/ctl.log
mapfile -t P < <(fg_free_ports 5)
R1=${P[0]} R2=${P[1]} S=("${P[2]}" "${P[3]}" "${P[4]}")

rcli() { redis-cli -h 127.0.0.1 -p "$@"; } # PORT ARGS...
rcli "$FG_REDIS_PORT" CONFIG SET min-replicas-to-write 1 >/dev/null &&
	rcli "$FG_REDIS_PORT" CONFIG SET min-replicas-max-lag 10 >/dev/null
tap_ok $? "the services' Redis is the primary (min-replicas-to-write 1)"
for port in "$R1" "$R2"; do
	mkdir -p "$TMP/r$port"
	redis-server --bind 127.0.0.1 --port "$port" --dir "$TMP/r$port" --save '' \
		--appendonly yes --appendfsync always --min-replicas-to-write 1 \
		--min-replicas-max-lag 10 --replicaof 127.0.0.1 "$FG_REDIS_PORT" \
		--logfile "$TMP/r$port/redis.log" --daemonize no &
	T_PIDS+=($!)
	RPID[port]=$!
done
for i in 0 1 2; do
	printf 'bind 127.0.0.1\nport %s\ndir %s\nlogfile %s/sentinel%s.log\n' \
		"${S[i]}" "$TMP" "$TMP" "$i" >"$TMP/sentinel$i.conf"
	printf 'sentinel monitor flashgate 127.0.0.1 %s 2\n' "$FG_REDIS_PORT" >>"$TMP/sentinel$i.conf"
	printf 'sentinel %s flashgate %s\n' down-after-milliseconds 1000 failover-timeout 10000 \
		>>"$TMP/sentinel$i.conf"
	redis-sentinel "$TMP/sentinel$i.conf" &
	T_PIDS+=($!)
done
# Each Sentinel knows the two replicas and the two other Sentinels: a failover can happen.
sentinels_ready() {
	local i m
	for i in 0 1 2; do
		m=$(rcli "${S[i]}" SENTINEL MASTER flashgate 2>/dev/null | tr '\n' ' ')
		[[ $m == *"num-slaves 2 "* && $m == *"num-other-sentinels 2 "* ]] || return 1
	done
	# and both replicas in sync with the primary (a replica still in its first full sync
	# acknowledges no WAIT: the event's preheat would wait in vain)
	[ "$(rcli "$FG_REDIS_PORT" INFO replication | grep -c 'state=online')" = 2 ]
}
t_wait_until 40 sentinels_ready
tap_ok $? "two replicas and three Sentinels are up and know each other"

SENTINELS=127.0.0.1:${S[0]},127.0.0.1:${S[1]},127.0.0.1:${S[2]}
# A loaded host's replicas (each fsyncs its append-only file) may take a while to answer WAIT.
t_cp_up -s "redis.sentinels=$SENTINELS" -s redis.wait_replicas=1 -s redis.wait_timeout=1500ms
tap_ok $? "the control plane starts with [redis] sentinels and wait_replicas = 1"
grep -q "connected to 127.0.0.1:$FG_REDIS_PORT" "$T_TMP/cp.log"
tap_ok $? "  it found the primary through Sentinel (127.0.0.1:$FG_REDIS_PORT)"
ctl event create 5 --name "ha" --stock 5000 --starts-at 2026-01-01T00:00:00Z \
	--ends-at 2036-01-01T00:00:00Z --pay-window 15m && ctl event preheat 5 && ctl event open 5
rc=$?
tap_ok $rc "event 5 created, preheated and opened"
[ $rc = 0 ] || tap_diag "$(tail -3 "$TMP/ctl.log"; grep -E 'warn|err' "$T_TMP/cp.log" | tail -5)"

feed() { # OUT USERS DP: each feed a data-plane id of its own (a second one of the same id within
	# the control plane's liveness window would be refused as a second live data plane)
	"$FEED" --push "$T_PULL" --sub "$T_PUB" --event 5 --users "$2" --dp "$3" \
		--timeout-ms 20000 --batch 50 >"$TMP/$1" 2>&1
}
feed before 1-300 11
tap_is "$(t_field "$TMP/before" reserved)" 300 "300 users reserve before the loss ($(cat "$TMP/before"))"

"$ROOT/scripts/services" redis-kill "$TMP/svc" >/dev/null
new_primary() {
	local p
	p=$(rcli "${S[1]}" SENTINEL get-master-addr-by-name flashgate 2>/dev/null | tail -1)
	[ -n "$p" ] && [ "$p" != "$FG_REDIS_PORT" ] && NEW=$p
}
t_wait_until 30 new_primary
tap_ok $? "the primary SIGKILLed: Sentinel promoted a replica (port ${NEW:-none})"
t_wait_until 30 grep -q "connected to 127.0.0.1:${NEW:-none} again" "$T_TMP/cp.log"
tap_ok $? "the control plane follows it (its log: connected to the new primary)"
# The other replica follows the new primary (a full sync) before a batch can reach it.
replica_online() { rcli "${NEW:-0}" INFO replication | grep -q 'state=online'; }
t_wait_until 30 replica_online
tap_ok $? "  the other replica is in sync with the new primary"
feed after 301-600 12
tap_is "$(t_field "$TMP/after" reserved)" 300 "  300 more users reserve ($(cat "$TMP/after"))"
tap_is "$(t_stat redis wait_timeouts)" 0 "  no batch waited in vain for a replica"

buyers=$(rcli "${NEW:-0}" HLEN 'fg:{5}:result')
stock=$(rcli "${NEW:-0}" GET 'fg:{5}:stock')
tap_is "$buyers" 600 "the new primary holds every acknowledged reservation, before and after"
tap_is "$((stock + buyers))" 5000 "  stock $stock + buyers $buyers == 5000: nobody twice"

# The WAIT pipelined (docs/ha.md): the remaining replica stopped (SIGSTOP), the control plane
# decides on the primary, publishes no verdict of those rounds (their WAIT is pending), and
# answers them retry, all of them, once the WAIT timed out; the replica back, the buyers' retry
# finds every reservation the primary kept (duplicate: nobody holds two, nothing lost).
for port in "$R1" "$R2"; do [ "$port" = "${NEW:-0}" ] || REP=${RPID[port]}; done
kill -STOP "$REP"
feed paused 601-700 13
kill -CONT "$REP"
tap_is "$(t_field "$TMP/paused" reserved)/$(t_field "$TMP/paused" retry)" 0/100 \
	"the replica stopped: no verdict published, the 100 answered retry ($(cat "$TMP/paused"))"
timeouts=$(t_stat redis wait_timeouts)
[ "$timeouts" -gt 0 ]
tap_ok $? "  their WAITs timed out ($timeouts)"
caught_up() { # the replica holds everything the primary wrote
	[ "$(printf 'PUBLISH fg:replicated x\nWAIT 1 500\n' | rcli "${NEW:-0}" | tail -1)" = 1 ]
}
t_wait_until 30 caught_up
feed again 601-700 14
tap_is "$(t_field "$TMP/again" reserved)/$(t_field "$TMP/again" duplicate)" 0/100 \
	"  the replica back: the retry finds all 100 kept by the primary ($(cat "$TMP/again"))"
buyers=$(rcli "${NEW:-0}" HLEN 'fg:{5}:result')
stock=$(rcli "${NEW:-0}" GET 'fg:{5}:stock')
tap_is "$buyers/$((stock + buyers))" 700/5000 "  700 buyers, stock + buyers == 5000"
tap_done
