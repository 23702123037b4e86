#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A whole sale driven by the packet generator: Redis and PostgreSQL (scripts/services), the
# control plane, the order writer, and the data plane with two ports, the kernel test network
# (net_af_packet, for curl from the client namespace) and a memif server for flashgate-loadgen.
# USERS buyers, each with a session token of the shop's auth key, rush STOCK items: token,
# reserve, result polls, each on its own connection. Afterwards scripts/check-invariants checks
# every invariant of the design, and the data plane's counters agree with the generator's.
#
# usage: test_sale_loadgen.sh DATAPLANE CONTROLPLANE FLASHGATECTL ORDER_WRITER LOADGEN
set -euo pipefail
. "$(dirname "$0")/harness.sh"

CP_EXE=${2:-} CTL_EXE=${3:-} OW_EXE=${4:-} LG_EXE=${5:-}
STOCK=1000 USERS=20000 EV=4 USER_BASE=20001
mapfile -t PORTS < <(fg_free_ports 2)
PULL=tcp://127.0.0.1:${PORTS[0]} PUB=tcp://127.0.0.1:${PORTS[1]}
MEMIF_SOCK=/tmp/fg-e2e-sl-$$.sock LG_PREFIX=fg-e2e-sllg-$$
E2E_DP_ARGS=(-s "bridge.push_endpoint=$PULL" -s "bridge.sub_endpoint=$PUB")
FG_DP_EAL_EXTRA=(--vdev "net_memif0,role=server,socket=$MEMIF_SOCK")
E2E_TOOLS=(redis-cli psql)
e2e_begin sl "$1"
[ -x "$CP_EXE" ] && [ -x "$CTL_EXE" ] && [ -x "$OW_EXE" ] && [ -x "$LG_EXE" ] ||
	tap_bail "control plane, flashgatectl, order writer and loadgen given"

OW_PID= LG_PID=
# The data plane stops before the loadgen (docs/loadgen.md: memif); e2e_cleanup stops it when it
# still runs, after the hooks, so stop it here first.
sl_stop() {
	if [ -n "$E2E_DP_PID" ] && kill -0 "$E2E_DP_PID" 2>/dev/null; then
		fg_stop_pid "$E2E_DP_PID" 10 >/dev/null 2>&1 || true
	fi
	for p in $LG_PID $OW_PID; do fg_stop_pid "$p" 10 || true; done
	rm -rf "$(fg_dpdk_runtime_dir "$LG_PREFIX")" "$MEMIF_SOCK"
}
T_CLEANUP+=(sl_stop)
t_services_up "$E2E_TMP/svc"
SVC=$T_SVC
T_CP=$CP_EXE T_CTL=$CTL_EXE T_PULL=$PULL T_PUB=$PUB
t_cp_up || tap_bail "control plane ready"
ADMIN=$T_ADMIN
"$OW_EXE" -s "order_writer.push_endpoint=$PULL" -s order_writer.max_rate=5000 \
	"${T_REDIS[@]}" -s "postgres.conninfo=$FG_PG_CONNINFO" \
	>"$E2E_TMP/ow.log" 2>&1 &
OW_PID=$!

AUTH=$(python3 -c 'import os; print(os.urandom(32).hex())')
# The generator reads the key from a file of mode 0600, not from its command line.
(umask 077 && printf '%s\n' "$AUTH" >"$E2E_TMP/auth.key")
tap_run "the sale is set up: $STOCK items, $USERS buyers" \
	e2e_open_sale $EV "generator sale" $STOCK "$AUTH"
open_now() {
	e2e_curl ev "$E2E_BASE/api/v1/events/$EV"
	grep -q '"state":"open"' "$E2E_TMP/ev.b"
}
tap_run "the data plane shows the sale open (curl from the client namespace)" \
	t_wait_until 20 open_now

# The generator on the data plane's memif port; it shares the data plane's first core.
LG_LCORES=0
[[ $(fg_lcores) != *@* ]] || LG_LCORES=2@0
timeout 150 "$LG_EXE" --lcores "$LG_LCORES" --no-huge -m 256 --no-pci \
	--file-prefix "$LG_PREFIX" --vdev "net_memif0,role=client,socket=$MEMIF_SOCK" \
	--log-level=error -- --dst "$FG_DP_ADDR" --mode sale --users $USERS \
	--user-base $USER_BASE --event $EV --concurrency 256 --poll-ms 200 --max-polls 100 \
	--double-click 10 \
	--duration-s 90 --auth-key-file "$E2E_TMP/auth.key" --kid 1 --linger-s 60 \
	--report-json "$E2E_TMP/lg.json" >"$E2E_TMP/lg.out" 2>&1 &
LG_PID=$!
rc=0
fg_wait_line "$E2E_TMP/lg.out" '^lingering:' "$LG_PID" 120 || rc=$?
tap_is "$rc" 0 "the generator finished its run"
tap_diag "loadgen:" "$(cat "$E2E_TMP/lg.out")"
# Sold out now, as the data plane tells a browser.
e2e_curl ev "$E2E_BASE/api/v1/events/$EV"
tap_run "after the sale the data plane shows it sold out" grep -q '"state":"sold_out"' \
	"$E2E_TMP/ev.b"
e2e_stop_dataplane
rc=0
wait "$LG_PID" || rc=$?
LG_PID=
tap_is "$rc" 0 "the generator exits 0: every answer well-formed and expected"

field() { fg_lg_field "$E2E_TMP/lg.json" "$1" "$2"; } # field KEY WORD, of the loadgen's report
tap_is "$(field users "done")" $USERS "all $USERS buyers finished"
outcome() { field outcomes "$1"; } # outcome NAME: users with that final outcome
tap_is "$(($(outcome reserved) + $(outcome ordered) + $(outcome paid)))" $STOCK \
	"buyers told they hold an item (reserved, ordered or paid) == stock"
tap_is "$(outcome sold_out)" $((USERS - STOCK)) "every other buyer told sold out"
tap_is "$(field malformed tcp)/$(field malformed http)" 0/0 "no malformed answer"
dc=$(field users double_clicked)
tap_run "every 10th buyer clicked twice (${dc:-?} second reserves sent)" test "${dc:-0}" -gt 0
dup=$(ctl --json stats 2>/dev/null | python3 -c 'import json, sys
print(json.load(sys.stdin).get("decisions", {}).get("duplicate", 0))' 2>/dev/null || echo 0)
tap_run "the control plane decided second clicks duplicate (${dup:-0})" test "${dup:-0}" -gt 0
# Never a second item: of the buyers who clicked twice (offset from USER_BASE 0..9 mod 100),
# those holding an item (some must) have one reservation each in the outbox, not two. The
# outbox holds each reservation's user as the value after a "u" field.
read -r dc_held dc_twice < <(t_redis --raw xrange "fg:{$EV}:outbox" - + |
	awk -v b=$USER_BASE 'u { if (($0 - b) % 100 < 10) n[$0]++; u = 0; next } $0 == "u" { u = 1 }
		END { for (k in n) { h++; t += n[k] > 1 } print h + 0, t + 0 }')
tap_run "buyers who clicked twice hold items (${dc_held:-?})" test "${dc_held:-0}" -gt 0
tap_is "${dc_twice:-?}" 0 "never a second item: no buyer who clicked twice has two reservations"

# Every invariant, once the order writer has drained the outbox.
e2e_invariants --event $EV --users "$USER_BASE-$((USER_BASE + USERS - 1))" \
	--admin-socket "$ADMIN" --ctl "$CTL_EXE" --services "$SVC" --wait 60

# The checker sees drift: one item taken in Redis behind everybody's back, one buyer removed
# (a buyer is a field of the result hash).
t_redis decr "fg:{$EV}:stock" >/dev/null
gone=$(t_redis hrandfield "fg:{$EV}:result")
gone_state=$(t_redis hget "fg:{$EV}:result" "$gone")
t_redis hdel "fg:{$EV}:result" "$gone" >/dev/null
rc=0
"$FG_ROOT/scripts/check-invariants" --event $EV --admin-socket "$ADMIN" --ctl "$CTL_EXE" \
	--services "$SVC" --wait 0 >"$E2E_TMP/drift.out" 2>&1 || rc=$?
tap_is "$rc" 1 "check-invariants exits 1 on drift injected in Redis"
broken='^FAIL +(1 Redis stock >= 0|3 Redis: stock|4 orders without a Redis buyer|3 reconcile)'
tap_is "$(grep -c '^FAIL' "$E2E_TMP/drift.out")/$(grep -Ec "$broken" "$E2E_TMP/drift.out")" 4/4 \
	"it names the four invariants the drift breaks"
tap_diag "$(grep '^FAIL' "$E2E_TMP/drift.out")"
t_redis incr "fg:{$EV}:stock" >/dev/null
t_redis hset "fg:{$EV}:result" "$gone" "$gone_state" >/dev/null

for p in OW_PID CP_PID; do
	fg_stop_pid "${!p}" 10
	tap_is "$FG_STOP_RC" 0 "${p%_PID} exits with status 0 on SIGTERM after the sale"
	printf -v "$p" ''
done
tap_done
