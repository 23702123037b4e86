#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A sale across scripts/cluster's hosts (docs/ha.md, "A multi-host sale on one machine"): the
# cluster up in namespaces of its own (an HAProxy edge, two real data planes, two real control
# planes, three Redis with Sentinels, a PostgreSQL primary and its synchronous standby, the order
# writer, every ZeroMQ link CURVE), buyers on the client host through the edge, and mid-sale
# cp1's host lost (every process SIGKILLed, its disk gone). The data planes move to cp2 and the
# sale goes on: decisions after the loss, every item sold once, every buyer's receipt answered
# with a final result, the invariants hold (scripts/check-invariants against the cluster's
# Redis and PostgreSQL primaries). Then down leaves nothing behind.
#
# usage: test_cluster.sh DATAPLANE CONTROLPLANE FLASHGATECTL ORDER_WRITER
set -euo pipefail
. "$(dirname "$0")/../lib/testlib.sh"
t_begin clu

EV=7 STOCK=200 USERS=400
DP_EXE=${1:-} CP_EXE=${2:-} CTL_EXE=${3:-} OW_EXE=${4:-}
for x in "$DP_EXE" "$CP_EXE" "$CTL_EXE" "$OW_EXE"; do
	[ -x "$x" ] || tap_bail "the four programs given ('$x')"
done
for t in ip ethtool haproxy redis-sentinel redis-server curl psql; do
	command -v "$t" >/dev/null || tap_bail "tool '$t' is installed (scripts/install-deps)"
done
# The build directory the programs are in (build/dataplane/flashgate-dataplane).
export FG_BUILD_DIR
FG_BUILD_DIR=$(cd "$(dirname "$DP_EXE")/.." && pwd)
CLUSTER=$FG_ROOT/scripts/cluster
# A cluster of its own: namespaces named after this test's pid, state in its directory.
export FGC_PREFIX=ft$$ FGC_DIR=$T_TMP/c
# Clusters of earlier runs killed before their cleanup carry the dead test's pid in their names.
for ns in $(ip netns list 2>/dev/null | awk '{ print $1 }' | grep -E '^ft[0-9]+-br$' || true); do
	stale=${ns%-br}
	kill -0 "${stale#ft}" 2>/dev/null ||
		FGC_PREFIX=$stale FGC_DIR=/nonexistent "$CLUSTER" down >/dev/null 2>&1 || true
done
# shellcheck disable=SC2317 # run by t_cleanup
clu_down() {
	if [ -n "${FG_KEEP_TMP:-}" ] && [ -d "$FGC_DIR/logs" ]; then cp -r "$FGC_DIR/logs" "$T_TMP/logs"; fi
	"$CLUSTER" down
}
T_CLEANUP+=(clu_down)
clu_diag_logs() { # NAME...: the last lines of these hosts' logs, as TAP comments
	local h
	for h in "$@"; do
		tap_diag "--- $h:"
		tail -n 12 "$FGC_DIR/logs/$h.log" 2>/dev/null | sed 's/^/#   /'
	done
}

t0=$SECONDS
if ! "$CLUSTER" up >"$T_TMP/up.log" 2>&1; then
	tap_diag "$(tail -n 20 "$T_TMP/up.log")"
	tap_bail "scripts/cluster up"
fi
tap_ok 0 "scripts/cluster up ($((SECONDS - t0)) s)"
rc=0
"$CLUSTER" status >"$T_TMP/status" || rc=$?
tap_is "$rc" 0 "status: every host runs, its links up" || tap_diag "$(cat "$T_TMP/status")"
tap_is "$(grep -c ' primary$' "$T_TMP/status")/$(grep -c ' replica$' "$T_TMP/status")/$(grep -c ' standby$' "$T_TMP/status")" \
	2/2/1 "a Redis primary and two replicas; a PostgreSQL primary and one standby"
# The control plane names each client by its CURVE key in its allow-list (keys/clients).
n=$(grep -cE 'links: CURVE on both sockets|links: (dataplane:dp1|dataplane:dp2|order-writer:ow) connected from .* \(PULL\)' \
	"$FGC_DIR/logs/cp1.log" || true)
tap_ok $((n >= 4 ? 0 : 1)) "every ZeroMQ link is CURVE: cp1 binds with CURVE; dp1, dp2 and ow connect with their keys" ||
	tap_diag "$(grep 'links:' "$FGC_DIR/logs/cp1.log" | head -n 8)"
tap_is "$("$CLUSTER" exec client ip route get 8.8.8.8 >/dev/null 2>&1 && echo route || echo none)" \
	none "no route out of the cluster's network"

# shellcheck source=scripts/cluster.d/sale.sh
. "$FG_ROOT/scripts/cluster.d/sale.sh"
fgc_sale_env || tap_bail "scripts/cluster env"
tap_is "$FGC_ADMIN" "$FGC_DIR/cp1/admin.sock" "cp1 is the control plane the admin commands go to"
(umask 077 && python3 -c 'import os; print(os.urandom(32).hex())' >"$T_TMP/auth.key")
tap_run "the sale is set up on cp1 and shown open through the edge: $STOCK items, $USERS buyers" \
	fgc_sale_open "$EV" "$STOCK" "$T_TMP/auth.key"
fgc_sale_sessions "$T_TMP/auth.key" 7001 "$USERS" >"$T_TMP/sessions"
fgc_sale_shop "$EV" "$T_TMP/sessions" "$T_TMP/shop.json" "$T_TMP/shop.log" 6 60
T_PIDS+=("$FGC_SHOP_PID")

# Mid-sale: some buyers decided, most not yet. What was decided by the time cp1 is gone (read
# after the kill: the sale goes on while it runs) is the mark for "after the loss".
mid() { [ "$(fgc_sale_decided "$EV")" -ge 10 ] || ! kill -0 "$FGC_SHOP_PID" 2>/dev/null; }
t_wait_until 90 mid || true
rc=0
"$CLUSTER" kill cp1 >"$T_TMP/kill.out" 2>&1 || rc=$?
before=$(fgc_sale_decided "$EV")
tap_is "$rc" 0 "cp1's host lost mid-sale, $before of $STOCK items decided ($(cat "$T_TMP/kill.out"))"
tap_ok $((before < STOCK / 2 ? 0 : 1)) "the loss came mid-sale (fewer than half decided)"
tap_is "$("$CLUSTER" pids cp1 | wc -l)/$([ -d "$FGC_DIR/cp1" ] && echo disk || echo gone)" 0/gone \
	"no process left on cp1, its data directory gone"
fgc_sale_env
tap_is "$FGC_ADMIN" "$FGC_DIR/cp2/admin.sock" "the admin commands go to cp2 now"

rc=0
wait "$FGC_SHOP_PID" || rc=$?
T_PIDS=()
tap_is "$rc" 0 "the buyers finished" || tap_diag "$(tail -n 5 "$T_TMP/shop.log")"
after=$(fgc_sale_decided "$EV")
tap_ok $((after > before ? 0 : 1)) "decisions after the loss: $before before, $after at the end"
# Each data plane talks to cp2 now: its last move (its log) went there.
for h in dp1 dp2; do
	last=$(grep -o 'moving to tcp://[0-9.]*:[0-9]*' "$FGC_DIR/logs/$h.log" | tail -n 1 || true)
	tap_is "$last" "moving to tcp://198.19.0.42:5601" "$h moved to cp2" || clu_diag_logs "$h"
done
outcomes=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["outcomes"])' \
	"$T_TMP/shop.json" 2>/dev/null || echo none)
tap_diag "buyers' outcomes: $outcomes; answers: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["answers"])' "$T_TMP/shop.json" 2>/dev/null)"
holding=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["holding"])' \
	"$T_TMP/shop.json" 2>/dev/null || echo 0)
tap_is "$holding" "$STOCK" "every item found a buyer despite the loss"
# Every buyer's receipt was answered: no buyer left queued at the end, nor without an answer
# to a request. "retry" is an answer (reserve again: a batch its replicas did not confirm in
# [redis] wait_timeout on a loaded host, or a reservation lost with cp1); the shopper stops
# after three of them, and every item found a buyer above.
unfinished=$(python3 - "$T_TMP/shop.json" <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))["outcomes"]
final = ("reserved", "ordered", "paid", "sold_out", "sold_out (410)", "retry")
print(sum(n for k, n in o.items() if k not in final))
PY
) || unfinished=unknown
tap_is "$unfinished" 0 "every buyer's receipt answered after the move (none left queued or unanswered)"
tap_is "$(redis-cli -s "$FG_REDIS_SOCK" HLEN "fg:{$EV}:result")/$(redis-cli -s "$FG_REDIS_SOCK" GET "fg:{$EV}:stock")" \
	"$STOCK/0" "the Redis primary: $STOCK buyers decided reserved, stock 0 (nothing decided twice)"

fgc_sale_ctl event close "$EV" >/dev/null || true
rc=0
fgc_sale_invariants "$EV" "$T_TMP/sessions" "$T_TMP/shop.json" >"$T_TMP/inv.out" 2>&1 || rc=$?
while IFS= read -r line; do
	case $line in
	PASS*) tap_ok 0 "invariant: $(sed -E 's/^PASS +//; s/  +/: /' <<<"$line")" ;;
	FAIL*) tap_ok 1 "invariant: $(sed -E 's/^FAIL +//; s/  +/: /' <<<"$line")" ;;
	esac
done <"$T_TMP/inv.out"
tap_ok $((rc == 0 && $(grep -c '^PASS' "$T_TMP/inv.out") >= 10 ? 0 : 1)) \
	"scripts/check-invariants on the cluster's primaries: all hold (status $rc)" ||
	tap_diag "$(tail -n 5 "$T_TMP/inv.out")"

T_CLEANUP=()
pids=$(for ns in $(ip netns list | awk '{ print $1 }' | grep "^$FGC_PREFIX-"); do ip netns pids "$ns"; done)
rc=0
"$CLUSTER" down >"$T_TMP/down.log" 2>&1 || rc=$?
tap_is "$rc" 0 "scripts/cluster down" || tap_diag "$(tail -n 5 "$T_TMP/down.log")"
tap_is "$(ip netns list | awk '{ print $1 }' | grep -c "^$FGC_PREFIX-" || true)" 0 \
	"down: no namespace of the cluster left (and with them no veth, no bridge)"
left=0
# A zombie is not left: the test's own finished background jobs (the buyers) wait to be reaped.
for pid in $pids; do
	st=$(sed -n 's/^[0-9]* (.*) \([A-Za-z]\) .*/\1/p' "/proc/$pid/stat" 2>/dev/null) || st=
	[ -z "$st" ] || [ "$st" = Z ] || left=$((left + 1))
done
tap_is "$left" 0 "down: none of the $(wc -w <<<"$pids") processes of the cluster left"
tap_is "$(ls -d "$(fg_dpdk_runtime_dir "$FGC_PREFIX")"-* 2>/dev/null | wc -l)/$([ -e "$FGC_DIR" ] && echo there || echo gone)" \
	0/gone "down: no DPDK runtime files, the state directory removed"
tap_done
