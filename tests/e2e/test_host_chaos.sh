#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Chaos that takes whole hosts away (docs/ha.md, "Chaos"): a sale across scripts/cluster's hosts
# through the HAProxy edge while a seeded random schedule, one event at a time, loses a host
# (scripts/cluster kill: every process SIGKILLed, its data directory removed) and recovers it as
# documented, or cuts one off (its links down, its processes alive) and heals it:
#
#   redis-kill  the Redis primary lost; Sentinel promotes a replica; `replace` (a new replica)
#   pg-kill     the PostgreSQL primary lost; `promote-pg`; `replace` (a new standby)
#   cp-kill     a control plane lost (the data planes move to the other); `replace`
#   dp-kill     a data plane lost (the edge takes it out); `replace`
#   ow-kill     the order writer lost; `replace`
#   redis-cut   the Redis primary cut off; Sentinel promotes a replica; `heal` (it rejoins as a
#               replica)
#   cp-cut      a control plane cut off; `heal`
#
# Each round: a wave of buyers (scripts/demo-shopper.py on the client host) starts, some are
# decided, the event comes after a random pause; the seconds until the next decision (the Redis
# primary's result hash grows) are printed and bounded; the recovery follows. At the end:
# scripts/check-invariants on the cluster's primaries (nothing sold twice, stock exact, one order
# per buyer holding an item), every buyer told it holds an item (reserved, ordered) holds one in
# Redis and has its order, and every host runs again.
#
# FG_CHAOS_SEED (default: random, printed) replays a schedule; FG_CHAOS_ROUNDS (default 7: each
# event once, in the seed's order; more: further events drawn at random) lengthens it;
# FG_CHAOS_KINDS (default: all seven) draws from the kinds it lists only, comma-separated (to
# repeat one kind: FG_CHAOS_KINDS=redis-cut FG_CHAOS_ROUNDS=5).
#
# usage: test_host_chaos.sh DATAPLANE CONTROLPLANE FLASHGATECTL ORDER_WRITER
set -uo pipefail
. "$(dirname "$0")/../lib/testlib.sh"
t_begin chaos

EV=9 STOCK=100000
DP_EXE=${1:-} CP_EXE=${2:-} CTL_EXE=${3:-} OW_EXE=${4:-}
for x in "$DP_EXE" "$CP_EXE" "$CTL_EXE" "$OW_EXE"; do
	[ -x "$x" ] || tap_bail "the four programs given ('$x')"
done
for t in ip ethtool haproxy redis-sentinel redis-server curl psql; do
	command -v "$t" >/dev/null || tap_bail "tool '$t' is installed (scripts/install-deps)"
done
SEED=${FG_CHAOS_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
ROUNDS=${FG_CHAOS_ROUNDS:-7}
# The seven kinds, the one list: the default schedule and the check of FG_CHAOS_KINDS.
ALL_KINDS=redis-kill,pg-kill,cp-kill,dp-kill,ow-kill,redis-cut,cp-cut
KINDS=${FG_CHAOS_KINDS:-$ALL_KINDS}
[[ $SEED =~ ^[0-9]{1,10}$ && $ROUNDS =~ ^[1-9][0-9]{0,2}$ ]] ||
	tap_bail "FG_CHAOS_SEED (digits) and FG_CHAOS_ROUNDS (1..999)"
[[ ,$KINDS, =~ ^(,(${ALL_KINDS//,/|}))+,$ ]] ||
	tap_bail "FG_CHAOS_KINDS: a comma-separated list of ${ALL_KINDS//,/, } (got '$KINDS')"
tap_diag "FG_CHAOS_SEED=$SEED FG_CHAOS_ROUNDS=$ROUNDS${FG_CHAOS_KINDS:+ FG_CHAOS_KINDS=$KINDS}" \
	"(give them to replay this schedule)"
export FG_BUILD_DIR
FG_BUILD_DIR=$(cd "$(dirname "$DP_EXE")/.." && pwd)
CLUSTER=$FG_ROOT/scripts/cluster
export FGC_PREFIX=fx$$ FGC_DIR=$T_TMP/c
# shellcheck disable=SC2317 # run by t_cleanup
hc_down() {
	[ -z "${FG_KEEP_TMP:-}" ] || [ ! -d "$FGC_DIR/logs" ] || cp -r "$FGC_DIR/logs" "$T_TMP/logs"
	"$CLUSTER" down
}
T_CLEANUP+=(hc_down)

# The schedule: "KIND HOST_PICK PAUSE_MS" a line, from the seed alone.
python3 - "$SEED" "$ROUNDS" "$KINDS" >"$T_TMP/schedule" <<'PY'
import random, sys
rng = random.Random(int(sys.argv[1]))
kinds = sys.argv[3].split(",")
order = kinds[:]
rng.shuffle(order)
n = int(sys.argv[2])
sched = (order + [rng.choice(kinds) for _ in range(max(0, n - len(kinds)))])[:n]
for k in sched:
    print(k, rng.choice([1, 2]), rng.randrange(200, 2500))
PY
tap_diag "schedule: $(awk '{ printf "%s%s", (NR > 1 ? ", " : ""), $1 }' "$T_TMP/schedule")"

t0=$SECONDS
if ! "$CLUSTER" up >"$T_TMP/up.log" 2>&1; then
	tap_diag "$(tail -n 20 "$T_TMP/up.log")"
	tap_bail "scripts/cluster up"
fi
tap_ok 0 "scripts/cluster up ($((SECONDS - t0)) s)"
# shellcheck source=scripts/cluster.d/sale.sh
. "$FG_ROOT/scripts/cluster.d/sale.sh"
fgc_sale_env || tap_bail "scripts/cluster env"
(umask 077 && python3 -c 'import os; print(os.urandom(32).hex())' >"$T_TMP/auth.key")
tap_run "the sale is set up and shown open through the edge ($STOCK items)" \
	fgc_sale_open "$EV" "$STOCK" "$T_TMP/auth.key"

# decided: the buyers decided so far, in the Redis primary (0 while there is none); the cluster
# asked again which one it is when REFRESH is set (a Redis round) or the last one does not answer.
REFRESH=
decided() {
	local n
	if [ -z "$REFRESH" ] && [ -n "${FG_REDIS_SOCK:-}" ] &&
		n=$(timeout 5 redis-cli -s "$FG_REDIS_SOCK" HLEN "fg:{$EV}:result" 2>/dev/null) &&
		[[ $n =~ ^[0-9]+$ ]]; then
		echo "$n"
		return
	fi
	fgc_sale_env >/dev/null 2>&1 || true
	if [ -n "${FG_REDIS_SOCK:-}" ]; then fgc_sale_decided "$EV"; else echo 0; fi
}
WAVE_N=0 SHOP_PIDS=()
wave_start() { # N DEADLINE_S: a wave of N new buyers in the background, 4 at a time
	WAVE_N=$((WAVE_N + 1))
	fgc_sale_sessions "$T_TMP/auth.key" $((WAVE_N * 1000 + 1)) "$1" >"$T_TMP/sessions$WAVE_N"
	fgc_sale_shop "$EV" "$T_TMP/sessions$WAVE_N" "$T_TMP/shop$WAVE_N.json" \
		"$T_TMP/shop$WAVE_N.log" 4 "$2"
	SHOP_PIDS+=("$FGC_SHOP_PID")
	T_PIDS+=("$FGC_SHOP_PID")
}
waves_end() { # every wave started has ended (each is bounded by its deadline)
	local p
	for p in "${SHOP_PIDS[@]}"; do wait "$p" || true; done
	SHOP_PIDS=() T_PIDS=()
}
grew() { [ "$(decided)" -gt "$1" ]; } # N
redis_replica() { # HOST: a replica in sync with a primary
	local i
	i=$(redis-cli -s "$FGC_DIR/$1/redis.sock" INFO replication 2>/dev/null)
	[[ $i == *role:slave* && $i == *master_link_status:up* ]]
}
other_primary() { # KIND OLD: the cluster names another primary of KIND than OLD
	local p
	p=$("$CLUSTER" primary "$1" 2>/dev/null) && [ "$p" != "$2" ]
}
cl() { "$CLUSTER" "$@" >>"$T_TMP/events.log" 2>&1; } # a cluster command, its output logged

round=0 worst=0
while read -r kind pick pause_ms; do
	round=$((round + 1))
	REFRESH=
	wave_start 150 40 # buyers during the event (about 25 s of them)
	d0=$(decided)
	t_wait_until 60 grew $((d0 + 3))
	sleep "$(printf '%d.%03d' $((pause_ms / 1000)) $((pause_ms % 1000)))"
	[ "${kind#redis-}" = "$kind" ] || REFRESH=1
	before=$(decided) # a killed primary's count is read from the one promoted: at least this
	rc=0
	case $kind in
	redis-*) h=$("$CLUSTER" primary redis) || h=none ;;
	pg-*) h=$("$CLUSTER" primary postgres) || h=none ;;
	cp-* | dp-*) h=${kind%-*}$pick ;;
	ow-*) h=ow ;;
	esac
	cl "${kind#*-}" "$h" || rc=1 # kill or cut
	# From here the host is gone (every process killed) or cut off: decisions after this moment.
	t_ev=$(date +%s%N)
	at=$(decided)
	((at >= before)) || at=$before
	tap_is "$rc" 0 "round $round: $kind of $h, $at buyers decided"
	wave_start 60 30 # and new buyers after it
	t_wait_until 60 grew "$at"
	rc=$?
	took=$((($(date +%s%N) - t_ev) / 100000000)) # tenths of a second
	((took <= worst)) || worst=$took
	echo "$kind $took" >>"$T_TMP/costs"
	tap_ok $rc "  decisions resume $((took / 10)).$((took % 10)) s after it"
	# The documented recovery.
	rc=0
	case $kind in
	redis-*) t_wait_until 30 other_primary redis "$h" || rc=1 ;;
	pg-*) cl promote-pg || rc=1 ;;
	esac
	case $kind in
	*-cut)
		cl heal "$h" || rc=1
		[ "$kind" != redis-cut ] || t_wait_until 60 redis_replica "$h" || rc=1
		;;
	*) cl replace "$h" || rc=1 ;;
	esac
	how=replaced
	[ "${kind#*-}" != cut ] || how=healed
	rec=$((($(date +%s%N) - t_ev) / 1000000000))
	tap_ok $rc "  $h recovered ($how, $rec s after the event)"
	waves_end
done <"$T_TMP/schedule"
tap_diag "the longest time without decisions: $((worst / 10)).$((worst % 10)) s; by event (s):"
tap_diag "$(awk '{ n[$1]++; t = $2 / 10; s[$1] = s[$1] " " t; if (t > m[$1]) m[$1] = t }
	END { for (k in n) printf "  %-9s max %4.1f of%s\n", k, m[k], s[k] }' "$T_TMP/costs" |
	sort)"

rc=0
"$CLUSTER" status >"$T_TMP/status" || rc=$?
tap_is "$rc" 0 "every host runs again, its links up" || tap_diag "$(cat "$T_TMP/status")"

# The buyers told they hold an item, from every wave.
cat "$T_TMP"/shop*.json | python3 -c '
import json, sys
dec = json.JSONDecoder()
text, pos = sys.stdin.read(), 0
while pos < len(text):
    while pos < len(text) and text[pos].isspace():
        pos += 1
    if pos == len(text):
        break
    o, pos = dec.raw_decode(text, pos)
    for u in o["reserved_users"]:
        print(u)' | sort -u >"$T_TMP/told"
cat "$T_TMP"/sessions* >"$T_TMP/users"
fgc_sale_env
tap_diag "$(wc -l <"$T_TMP/told") buyers told they hold an item in $WAVE_N waves"
"$FG_ROOT/scripts/check-invariants" --event $EV \
	--users-file "$T_TMP/users" --admin-socket "$FGC_ADMIN" \
	--ctl "$FG_BUILD_DIR/flashgatectl/flashgatectl" --wait 90 >"$T_TMP/inv.out" 2>&1
rc=$?
sed 's/^/# /' "$T_TMP/inv.out"
tap_ok $rc "scripts/check-invariants on the cluster's primaries: every invariant holds"
redis-cli -s "$FG_REDIS_SOCK" HKEYS "fg:{$EV}:result" | sort -u >"$T_TMP/holders"
psql -XAtq -h "$FG_PG_HOST" -p "$FG_PG_PORT" -U postgres flashgate \
	-c "select user_id from orders where event_id = $EV" | sort -u >"$T_TMP/ordered"
tap_is "$(comm -23 "$T_TMP/told" "$T_TMP/holders" | wc -l)" 0 \
	"every buyer told it holds an item holds one in the Redis primary (none lost)"
tap_is "$(comm -23 "$T_TMP/told" "$T_TMP/ordered" | wc -l)" 0 \
	"  and has its order in the PostgreSQL primary"
tap_done
