#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The Redis primary cut off mid-sale (a network partition, docs/ha.md "Chaos"): its processes
# alive, its link down, then back. Five network namespaces joined by veths to a bridge
# (198.19.1.0/24), one Redis and one Sentinel on each of h1, h2, h3 (the primary on h1):
#
#   h1: redis r1 (primary), sentinel s1, control plane cp1 and its buyers (fg_feed)
#   h2: redis r2, sentinel s2        h3: redis r3, sentinel s3
#   h4: control plane cp2 and its buyers, the order writer (PostgreSQL from scripts/services,
#       on its Unix socket)
#
# cp1 sits with the old primary on the minority side of the cut: it keeps sending it batches,
# which the primary runs for min-replicas-max-lag seconds and then refuses (NOREPLICAS); none
# reaches a replica, so cp1 must answer each one retry (WAIT). Sentinels s2 and s3 promote r2 or
# r3; cp2 follows and the buyers' tries go on there. The cut healed, Sentinel makes r1 a replica
# of the new primary (its own writes thrown away). Then:
# - no buyer was told reserved by cp1 after the cut;
# - every buyer told reserved or duplicate (by either control plane) holds an item in the new
#   primary and has exactly one order (scripts/check-invariants --told), nobody two;
# - cp1 decides again after the heal.
#
# To see it fail: FG_PARTITION_WAIT=0 (the daemons' [redis] wait_replicas, 1 here) and
# FG_PARTITION_MINREP=0 (every node's min-replicas-to-write, 1 here).
#
# usage: test_partition_redis.sh CONTROLPLANE FLASHGATECTL ORDER_WRITER FG_FEED
set -uo pipefail

CP=$1 CTL=$2 OW=$3 FEED=$4
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
t_begin part
for tool in redis-server redis-sentinel redis-cli psql; do
	command -v $tool >/dev/null || {
		tap_skip "the Redis partition" "$tool is not installed"
		tap_done
	}
done
EV=7 STOCK=5000 NET=198.19.1
NS=fgpr$$ # namespaces fgpr<pid>-sw (the bridge), -h1 .. -h4
SW=$NS-sw
HOSTS=(h1 h2 h3 h4)
pr_net_down() {
	local h
	for h in "${HOSTS[@]}" sw; do ip netns del "$NS-$h" 2>/dev/null || true; done
}
T_CLEANUP+=(pr_net_down)
pr_net_up() {
	local i h
	ip netns add "$SW" && ip -n "$SW" link add br0 type bridge &&
		ip -n "$SW" link set br0 up && ip -n "$SW" link set lo up || return 1
	for i in 1 2 3 4; do
		h=$NS-h$i
		ip netns add "$h" &&
			ip -n "$SW" link add "v$i" type veth peer name eth0 netns "$h" &&
			ip -n "$SW" link set "v$i" master br0 up &&
			ip -n "$h" addr add "$NET.$i/24" dev eth0 &&
			ip -n "$h" link set eth0 up && ip -n "$h" link set lo up || return 1
	done
}
pr_net_up
tap_ok $? "four hosts in namespaces on a bridge ($NET.0/24)"

t_services_up "$TMP/svc" # PostgreSQL (its Unix socket reaches every namespace)
export STATE_DIRECTORY=${STATE_DIRECTORY:-$TMP/state}
# HOST CMD...: CMD on that host (the daemons are started with ip netns exec itself, not with
# this function: $! is then the daemon's own pid)
inns() { local h=$1; shift; ip netns exec "$NS-$h" "$@"; }
rsock() { local n=$1; shift; redis-cli -s "$TMP/r$n/redis.sock" "$@"; } # NODE ARGS...

# Every node as docs/ha.md says (any can become the primary); a Unix socket for the test's own
# looks from outside the namespaces.
MINREP=${FG_PARTITION_MINREP:-1}
for n in 1 2 3; do
	mkdir -p "$TMP/r$n"
	args=(--bind "$NET.$n" --port 6379 --protected-mode no --dir "$TMP/r$n" --save ''
		--unixsocket "$TMP/r$n/redis.sock" --unixsocketperm 700
		--appendonly yes --appendfsync always --maxmemory-policy noeviction
		--min-replicas-to-write "$MINREP" --min-replicas-max-lag 3
		--logfile "$TMP/r$n/redis.log" --daemonize no)
	[ $n = 1 ] || args+=(--replicaof "$NET.1" 6379)
	ip netns exec "$NS-h$n" redis-server "${args[@]}" &
	T_PIDS+=($!)
	printf 'bind %s\nport 26379\ndir %s\nlogfile %s/sentinel.log\n' "$NET.$n" "$TMP/r$n" \
		"$TMP/r$n" >"$TMP/r$n/sentinel.conf"
	printf 'sentinel monitor flashgate %s 6379 2\n' "$NET.1" >>"$TMP/r$n/sentinel.conf"
	printf 'sentinel %s flashgate %s\n' down-after-milliseconds 1000 failover-timeout 10000 \
		>>"$TMP/r$n/sentinel.conf"
	ip netns exec "$NS-h$n" redis-sentinel "$TMP/r$n/sentinel.conf" &
	T_PIDS+=($!)
done
sentinels_ready() {
	local n m
	for n in 1 2 3; do
		m=$(inns h$n redis-cli -h "$NET.$n" -p 26379 SENTINEL MASTER flashgate 2>/dev/null |
			tr '\n' ' ')
		[[ $m == *"num-slaves 2 "* && $m == *"num-other-sentinels 2 "* ]] || return 1
	done
	[ "$(rsock 1 INFO replication | grep -c 'state=online')" = 2 ]
}
t_wait_until 40 sentinels_ready
tap_ok $? "r1 primary, r2 and r3 replicas in sync, three Sentinels that know each other"

# cp1 on h1 lists its own Sentinel first, cp2 on h4 the others first (each its nearest).
WAITR=${FG_PARTITION_WAIT:-1}
cp_start() { # N HOST SENTINELS
	local n=$1 h=$2 log=$TMP/cp$1.log
	ip netns exec "$NS-$h" "$CP" -s controlplane.pull_endpoint=tcp://127.0.0.1:5601 \
		-s controlplane.pub_endpoint=tcp://127.0.0.1:5602 \
		-s "controlplane.admin_socket=$TMP/admin$n.sock" -s controlplane.metrics_port=0 \
		-s "redis.sentinels=$3" -s redis.wait_replicas="$WAITR" -s redis.wait_timeout=1s \
		-s redis.timeout=2s -s "postgres.conninfo=$FG_PG_CONNINFO" >>"$log" 2>&1 &
	T_PIDS+=($!)
	fg_wait_line "$log" "\\[$!\\] [a-z-]+: ready:" $! 30
}
cp_start 1 h1 "$NET.1:26379,$NET.2:26379,$NET.3:26379"
tap_ok $? "control plane 1 (h1, with the primary) finds the primary through Sentinel"
cp_start 2 h4 "$NET.3:26379,$NET.2:26379,$NET.1:26379"
tap_ok $? "control plane 2 (h4) too"
ip netns exec "$NS-h4" "$OW" -s order_writer.push_endpoint=tcp://127.0.0.1:5601 \
	-s order_writer.claim_idle=1s \
	-s order_writer.claim_interval=500ms -s "redis.sentinels=$NET.3:26379,$NET.2:26379" \
	-s redis.wait_replicas="$WAITR" -s redis.wait_timeout=1s \
	-s "postgres.conninfo=$FG_PG_CONNINFO" >>"$TMP/ow.log" 2>&1 &
T_PIDS+=($!)
fg_wait_line "$TMP/ow.log" "\\[$!\\] [a-z-]+: consumer " $! 30
tap_ok $? "the order writer (h4) finds the primary through Sentinel"

T_CTL=$CTL T_ADMIN=$TMP/admin1.sock T_CTL_OUT=$TMP/ctl.log
ctl event create $EV --name partition --stock $STOCK --starts-at 2026-01-01T00:00:00Z \
	--ends-at 2036-01-01T00:00:00Z --pay-window 15m && ctl event preheat $EV &&
	ctl event open $EV
tap_ok $? "event $EV created, preheated and opened ($STOCK items)"

feed() { # NAME HOST USERS DP [ARGS...]: fg_feed on that host's control plane; each name's
	# answers in NAME.out, one line per user in NAME.log
	local name=$1 h=$2 users=$3 dp=$4
	shift 4
	inns "$h" "$FEED" --push tcp://127.0.0.1:5601 --sub tcp://127.0.0.1:5602 --event $EV \
		--users "$users" --dp "$dp" --batch 10 --log "$TMP/$name.log" "$@" \
		>"$TMP/$name.out" 2>&1
}
feed a h1 1-300 11 --timeout-ms 20000
tap_is "$(t_field "$TMP/a.out" reserved)" 300 "300 buyers reserve through cp1 ($(cat "$TMP/a.out"))"

# A stream through cp1 (10 buyers every 100 ms, 7 s), the primary's link cut 1.5 s into it.
feed b h1 301-1000 12 --pace-us 100000 --timeout-ms 25000 &
fb=$!
sleep 1.5
ip -n "$SW" link set v1 down
CUT=$SECONDS
tap_ok $? "h1 cut off (its link down, r1, s1 and cp1 alive) mid-stream"
held_r1=$(rsock 1 HLEN "fg:{$EV}:result")
new_primary() {
	local p
	p=$(inns h2 redis-cli -h "$NET.2" -p 26379 SENTINEL get-master-addr-by-name flashgate \
		2>/dev/null | head -1)
	[ -n "$p" ] && [ "$p" != "$NET.1" ] && NEWP=${p##*.}
}
NEWP=
t_wait_until 30 new_primary
tap_ok $? "Sentinels s2 and s3 promote a replica: r${NEWP:-?} ($((SECONDS - CUT)) s after the cut)"
wait $fb
echo "# the stream through cp1: $(cat "$TMP/b.out")"
# After min-replicas-max-lag the old primary refuses writes; cp1 answers retry either way.
feed d h1 1001-1200 13 --timeout-ms 15000
tap_is "$(t_field "$TMP/d.out" reserved)" 0 \
	"cp1 on the cut-off side tells no buyer reserved ($(cat "$TMP/d.out"))"
echo "# r1 held $held_r1 buyers at the cut, $(rsock 1 HLEN "fg:{$EV}:result") now (cut off)"

# The buyers' tries go on through cp2: the stream's and the cut-off side's, and new ones.
# cp2 may answer retry until it has followed the failover: the tries are repeated until every
# buyer has a verdict (each try of a buyer that holds an item is answered duplicate).
t_feed_c() {
	C=$((C + 1))
	feed c$C h4 301-1400 $((20 + C)) --timeout-ms 20000
	[ "$(t_field "$TMP/c$C.out" retry)" = 0 ] && [ "$(t_field "$TMP/c$C.out" missing)" = 0 ]
}
C=0
t_wait_until 40 t_feed_c
rc=$?
resumed=$((SECONDS - CUT))
tap_ok $rc "the sale goes on through cp2: every try answered ($C rounds, $resumed s after the cut)"
tap_diag "the last round: $(cat "$TMP/c$C.out")"

ip -n "$SW" link set v1 up
HEAL=$SECONDS
r1_replica() {
	local i
	i=$(rsock 1 INFO replication)
	[[ $i == *role:slave* && $i == *"master_host:$NET.$NEWP"* &&
		$i == *master_link_status:up* ]]
}
t_wait_until 40 r1_replica
tap_ok $? "healed: Sentinel made r1 a replica of r$NEWP ($((SECONDS - HEAL)) s)"
same() { [ "$(rsock 1 HLEN "fg:{$EV}:result")" = "$(rsock "$NEWP" HLEN "fg:{$EV}:result")" ]; }
t_wait_until 20 same
tap_ok $? "  its own writes of the cut thrown away: it holds the new primary's buyers"
t_feed_f() {
	F=$((F + 1))
	feed f$F h1 1401-1500 $((40 + F)) --timeout-ms 20000
	[ "$(t_field "$TMP/f$F.out" retry)" = 0 ] && [ "$(t_field "$TMP/f$F.out" missing)" = 0 ]
}
F=0
t_wait_until 40 t_feed_f
tap_ok $? "cp1 decides again after the heal ($F rounds: $(cat "$TMP/f$F.out"))"

# A last try of everyone through cp2: each buyer that holds an item is told so (duplicate).
feed z h4 1-1500 60 --timeout-ms 20000 --others
tap_is "$(t_field "$TMP/z.out" retry)" 0 \
	"a last try of every buyer is answered ($(cat "$TMP/z.out"))"
cat "$TMP"/[abcdfz]*.log |
	awk '$1 == "result" && ($3 == "reserved" || $3 == "duplicate") { print $2 }' |
	sort -u >"$TMP/told"
buyers=$(rsock "$NEWP" HLEN "fg:{$EV}:result")
tap_is "$(wc -l <"$TMP/told")" "$buyers" "every buyer told it holds an item is in the new primary"
# Each reservation a buyer was told it holds (reserved: the dp id in its reservation id) is the
# one it holds now, as the last try shows it (a duplicate comes with the stored result, ordered
# by then, republished): none of them lost and taken again afresh.
pairs() { # VERDICT_RE LOG...: "USER DP" of each result of those verdicts
	local re=$1
	shift
	cat "$@" | awk -v re="$re" '$1 == "result" && $3 ~ re { print $2, $5 }' | sort -u
}
pairs '^reserved$' "$TMP"/[abcdf]*.log >"$TMP/told_pairs"
pairs '^(reserved|ordered)$' "$TMP/z.log" >"$TMP/held_pairs"
lost=$(comm -23 "$TMP/told_pairs" "$TMP/held_pairs" | wc -l)
tap_is "$lost" 0 \
	"  none of the $(wc -l <"$TMP/told_pairs") reservations told is lost (and taken again)"
told_cp1=$(cat "$TMP"/a.log "$TMP"/b.log "$TMP"/d.log | grep -c ' reserved ')
tap_diag "$told_cp1 of them told reserved by cp1 (before the cut and on its side of it)"
FG_REDIS_SOCK=$TMP/r$NEWP/redis.sock "$ROOT/scripts/check-invariants" --event $EV \
	--users 1-1500 --told "$TMP/told" --ctl "$CTL" --admin-socket "$TMP/admin2.sock" \
	--wait 60 >"$TMP/inv.out" 2>&1
rc=$?
sed 's/^/# /' "$TMP/inv.out"
tap_ok $rc "every invariant holds: one order per buyer told it holds an item, nobody two"
tap_done
