#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Every result docs/api.md promises reaches the buyer's poll, through every real component: an
# order paid with flashgate_pay() (the shop's backend) and with flashgatectl order pay shows
# "paid", one cancelled with flashgate_cancel() shows "cancelled" (its item back on sale), one not
# paid in time shows "expired"; each with its order id and pay deadline, also after the data
# plane restarted and got them back from Redis. A buyer who holds a result is answered from the
# data plane's result table when reserving again (nothing forwarded), and a storm of polls meets
# the per-user poll limit (429) while every reservation is still decided. A buyer whose ORDERED
# push the data plane missed (the control plane's test hook FG_TEST_DROP_ORDERED_USER drops it)
# is shown ordered, with its order, by a poll once the receipt is past admission.receipt_young:
# the poll that finds reserved asks the control plane again.
#
# usage: test_results.sh DATAPLANE CONTROLPLANE FLASHGATECTL ORDER_WRITER
set -euo pipefail
. "$(dirname "$0")/harness.sh"

OW_PID=
CP_PID=
EV=11

E2E_TOOLS=(redis-cli psql)
e2e_sale_begin rsl 2 "$@" -s admission.poll_rate=4 -s admission.poll_burst=8 \
	-s admission.receipt_young=3s
res_stop() { [ -z "$OW_PID" ] || fg_stop_pid "$OW_PID" 10 || true; }
T_CLEANUP+=(res_stop)
# User 305's ORDERED, pushed by the order writer, never reaches the data plane.
FG_TEST_DROP_ORDERED_USER=305 t_cp_up || tap_bail "control plane ready"
ADMIN=$T_ADMIN
tap_ok 0 "Redis, PostgreSQL and the control plane are up"

tap_run "the sale is set up (event, keys, limits, preheat, open)" eval "
	ctl event create $EV --name 'results' --stock 50 --starts-at 2026-01-01T00:00:00Z \
		--ends-at 2036-01-01T00:00:00Z --pay-window 10m &&
	ctl keys auth-set 1 <<<00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff &&
	ctl keys rotate && ctl limits set ip 100000/4000 user 1000/2000 device 100/200 forward 100000 &&
	ctl event preheat $EV && ctl event open $EV"
open_here() {
	e2e_curl ev "$E2E_BASE/api/v1/events/$EV"
	grep -q '"state":"open"' "$E2E_TMP/ev.b"
}
tap_run "the data plane shows the sale open" t_wait_until 20 open_here

# buy U: a purchase token, the reserve; leaves TOK_U, PATH_U and RC_U (the receipt).
declare -A TOK PATHS RC
buy() {
	local u=$1 s
	s=$(ctlj session-token "$u" | jget token)
	e2e_curl tok$u "$E2E_BASE/api/v1/events/$EV/token" -X POST -H "Authorization: Bearer $s"
	[ "$E2E_CODE" = 200 ] || return 1
	TOK[$u]=$(jget token <"$E2E_TMP/tok$u.b")
	PATHS[$u]=$(jget reserve_path <"$E2E_TMP/tok$u.b")
	e2e_curl res$u "$E2E_BASE${PATHS[$u]}" -X POST -H "X-Flash-Token: ${TOK[$u]}"
	[ "$E2E_CODE" = 202 ] || return 1
	RC[$u]=$(jget receipt <"$E2E_TMP/res$u.b")
}
# shows U STATUS [TOKEN]: the poll of U (with the receipt, or TOKEN) says STATUS; its body is in
# $E2E_TMP/p$U.b
shows() {
	e2e_curl p$1 "$E2E_BASE/api/v1/events/$EV/result" -H "X-Flash-Token: ${3:-${RC[$1]}}"
	grep -q "\"status\":\"$2\"" "$E2E_TMP/p$1.b"
}
# has_order U: U's last poll names its order (PostgreSQL's id) and its pay deadline (ms, rounded
# down from PostgreSQL's microseconds, as every program reads a time).
has_order() {
	local oid dl want_dl
	oid=$(jget order_id <"$E2E_TMP/p$1.b" 2>/dev/null) || return 1
	dl=$(jget pay_deadline <"$E2E_TMP/p$1.b" 2>/dev/null) || return 1
	want_dl=$(t_sql "select (extract(epoch from pay_deadline) * 1000000)::bigint / 1000 from orders
		where event_id = $EV and user_id = $1")
	[ "$oid" = "$(order_of "$1")" ] && [ "$dl" = "$want_dl" ]
}
order_of() { t_sql "select id from orders where event_id = $EV and user_id = $1"; }
# until_shows U STATUS [TOKEN]: waits (at most 10 s) for it and prints how long it took in ms.
until_shows() {
	local t0 t1
	t0=$(date +%s%3N)
	t_wait_until 10 shows "$@" || return 1
	t1=$(date +%s%3N)
	WAITED_MS=$((t1 - t0))
}

for u in 301 302 303 304 305; do buy $u || tap_bail "user $u reserves (202)"; done
tap_ok 0 "five buyers reserved (202)"
"$OW_EXE" -s "order_writer.push_endpoint=tcp://127.0.0.1:$PULL_PORT" -s order_writer.max_rate=0 \
	-s order_writer.sweep_interval=200ms \
	"${T_REDIS[@]}" -s "postgres.conninfo=$FG_PG_CONNINFO" \
	>"$E2E_TMP/ow.log" 2>&1 &
OW_PID=$!
# One buyer not shown ordered in time fails the check (a bare "break" would leave the loop's
# status 0).
rc=0
for u in 301 302 303 304; do
	t_wait_until 15 shows $u ordered || { tap_diag "$u: $(cat "$E2E_TMP/p$u.b")"; rc=1; break; }
done
tap_ok $rc "their polls show ordered"

# --- an ORDERED push the data plane missed -----------------------------------------------------
dropped() { grep -q "ORDERED result of user 305 .* not relayed" "$E2E_TMP/cp.log"; }
tap_run "user 305's ORDERED was not relayed to the data plane (the test hook)" \
	t_wait_until 15 dropped
# Its receipt is past receipt_young (3 s) by now or soon: a poll that finds reserved asks the
# control plane, which answers from Redis (the order writer wrote the order there).
until_shows 305 ordered && rc=0 || { tap_diag "305: $(cat "$E2E_TMP/p305.b")"; rc=1; }
tap_ok $rc "user 305's poll shows ordered all the same"
tap_diag "ordered reached the poll ${WAITED_MS:-?} ms after the push was dropped"
tap_run "  with its order id and pay deadline" has_order 305

# --- paid, by the shop's backend and by flashgatectl ------------------------------------------
tap_is "$(t_sql "select flashgate_pay($(order_of 301))")" paid "flashgate_pay() pays user 301's order"
until_shows 301 paid && rc=0 || rc=$?
tap_ok $rc "user 301's poll shows paid"
tap_diag "paid reached the poll ${WAITED_MS:-?} ms after flashgate_pay() returned (results_interval 200 ms)"
tap_run "  with its order id and pay deadline" has_order 301
tap_is "$(ctlj order pay "$(order_of 302)" | jget result)" paid "flashgatectl order pay pays user 302's"
tap_run "user 302's poll shows paid, with its order" eval 'until_shows 302 paid && has_order 302'
tap_diag "paid reached the poll ${WAITED_MS:-?} ms after flashgatectl order pay returned"

# --- cancelled ---------------------------------------------------------------------------------
stock0=$(t_redis get "fg:{$EV}:stock")
tap_is "$(t_sql "select flashgate_cancel($(order_of 303))")" cancelled "flashgate_cancel() cancels user 303's order"
tap_is "$(ctlj order cancel "$(order_of 303)" | jget result)" already_cancelled \
	"  a second cancel (flashgatectl order cancel) changes nothing"
tap_is "$(t_sql "select flashgate_cancel($(order_of 301))")" paid "  a paid order is not cancelled"
tap_is "$(t_sql "select flashgate_cancel(987654321)")" no_such_order "  nor one that does not exist"
until_shows 303 cancelled && rc=0 || rc=$?
tap_ok $rc "user 303's poll shows cancelled"
tap_diag "cancelled reached the poll ${WAITED_MS:-?} ms after flashgate_cancel() returned"
tap_run "  with its order id and pay deadline" has_order 303
tap_is "$(t_redis get "fg:{$EV}:stock")" $((stock0 + 1)) "  and its item is back on sale in Redis"
tap_is "$(t_sql "select flashgate_pay($(order_of 303))")" expired_refund_needed \
	"paying a cancelled order: refund"

# --- expired: user 304's deadline is moved into the past ----------------------------------------
t_sql "update orders set pay_deadline = now() - interval '1 s' where event_id = $EV and user_id = 304" >/dev/null
tap_run "user 304's poll shows expired once the sweeper took the order" \
	eval 'until_shows 304 expired && has_order 304'
tap_ok "$(grep -q '"status":"expired","order_id":' "$E2E_TMP/p304.b"; echo $?)" \
	"  an expired result carries its order id and pay deadline ($(cat "$E2E_TMP/p304.b"))"

# --- the data plane restarts: the results come back from Redis ---------------------------------
fg_stop_pid "$E2E_DP_PID" 20
E2E_DP_PID=
fg_dp_start "$1" "$E2E_PREFIX" "$E2E_TMP/dataplane.log" -c "$E2E_TMP/flashgate.conf" "${E2E_DP_ARGS[@]}"
E2E_DP_PID=$FG_DP_PID
fg_wait_line "$E2E_TMP/dataplane.log" 'ready:' "$E2E_DP_PID" 60 || tap_bail "data plane restarted"
tap_run "the restarted data plane has the sale again" t_wait_until 20 open_here
for u in 301 303 304; do
	want=$(case $u in 301) echo paid ;; 303) echo cancelled ;; *) echo expired ;; esac)
	# The purchase token: a poll without a result here asks the control plane (Redis).
	tap_run "after the restart user $u's poll shows $want from Redis, with its order" \
		eval "t_wait_until 10 shows $u $want '${TOK[$u]}' && has_order $u"
done

# --- a known buyer reserving again is answered here --------------------------------------------
fwd0=$(t_redis xlen "fg:{$EV}:outbox")
e2e_curl again "$E2E_BASE${PATHS[301]}" -X POST -H "X-Flash-Token: ${TOK[301]}"
tap_is "$E2E_CODE" 200 "user 301 (paid) reserving again is answered 200 from the result table"
tap_ok "$(grep -q '"status":"paid"' "$E2E_TMP/again.b"; echo $?)" "  with the user's result: paid"
dup0=$(ctlj stats | jget decisions.duplicate)
sleep 0.5
tap_is "$(ctlj stats | jget decisions.duplicate)" "$dup0" "  nothing reached the control plane (no duplicate decided)"
tap_is "$(t_redis xlen "fg:{$EV}:outbox")" "$fwd0" "  nor Redis"

# --- a poll storm while reservations flow -------------------------------------------------------
# Users 401-430 reserve while 1,600 polls of users without a result (purchase tokens of users
# 501-540, 40 each back to back) go to the same data plane: every reservation is decided, every
# poll is answered 200 or 429 (the per-user poll limit: poll_burst 8, poll_rate 4/s).
declare -A STOK
for u in $(seq 501 540); do
	s=$(ctlj session-token "$u" | jget token)
	e2e_curl st$u "$E2E_BASE/api/v1/events/$EV/token" -X POST -H "Authorization: Bearer $s"
	STOK[$u]=$(jget token <"$E2E_TMP/st$u.b")
done
python3 - "$FG_NS" "$FG_DP_ADDR" "$EV" "$E2E_TMP/storm.out" "${STOK[@]}" <<'PY' &
import collections, subprocess, sys
ns, addr, ev, out, toks = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
# Each user polls 40 times back to back (one curl, --next), from the client namespace.
codes = collections.Counter()
one = ["-s", "-o", "/dev/null", "-w", "%{http_code}\n", "--max-time", "5"]
for t in toks:
    args = ["ip", "netns", "exec", ns, "curl"]
    for i in range(40):
        args += (["--next"] if i else []) + one + ["-H", "X-Flash-Token: " + t,
                                                   f"http://{addr}/api/v1/events/{ev}/result"]
    r = subprocess.run(args, capture_output=True, text=True)
    codes.update(r.stdout.split())
open(out, "w").write(" ".join(f"{k}={v}" for k, v in sorted(codes.items())) + "\n")
PY
STORM=$!
t0=$(date +%s%3N)
decided=0
for u in $(seq 401 430); do
	buy $u || { tap_diag "user $u: $E2E_CODE $(cat "$E2E_TMP/res$u.b")"; continue; }
done
for u in $(seq 401 430); do
	[ -n "${RC[$u]:-}" ] || continue
	t_wait_until 10 eval "! shows $u queued" && decided=$((decided + 1))
done
t1=$(date +%s%3N)
wait $STORM
tap_is "$decided" 30 "every reservation made during the poll storm was decided"
tap_diag "30 reservations decided within $((t1 - t0)) ms of the first, during the storm (not checked)"
storm=$(cat "$E2E_TMP/storm.out")
tap_diag "storm polls by answer: $storm"
tap_ok "$(python3 -c 'import sys
c = dict(kv.split("=") for kv in sys.argv[1].split())
ok = set(c) <= {"200", "429"} and sum(map(int, c.values())) == 1600 and int(c.get("429", 0)) > 0
sys.exit(0 if ok else 1)' "$storm"; echo $?)" "every storm poll was answered 200 or 429, some 429 (the per-user limit)"

e2e_sale_end
