#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# More events than a data plane holds (64), created over time, with the real control plane,
# Redis and PostgreSQL (docs/operations.md "More than 64 events"):
#   1. events 1-100 sell now: 64 are preheated and opened, the 65th preheat is refused, the
#      create of the 65th says it is on no data plane; the data plane answers 1-64, not 65;
#   2. once they have ended, events 101-200 are created for later: the 64 that start first take
#      the slots (the newest, 200, is on none yet and its create says so), the ended ones leave;
#   3. an ended event is archived (its Redis keys are deleted, its row kept), one not over and
#      one whose buyer is not an order yet are refused;
#   4. events 101-140 are closed: the newest sale, 200, now answers;
#   5. event list pages through all 200 (--limit/--after) and filters by --state.
# The data plane's events_rejected is shown as a diagnostic.
#
# usage: test_many_events.sh DATAPLANE CONTROLPLANE FLASHGATECTL
set -euo pipefail
. "$(dirname "$0")/harness.sh"

CP_EXE=${2:-} CTL_EXE=${3:-}
mapfile -t PORTS < <(fg_free_ports 2)
PULL=tcp://127.0.0.1:${PORTS[0]} PUB=tcp://127.0.0.1:${PORTS[1]}
E2E_DP_ARGS=(-s "bridge.push_endpoint=$PULL" -s "bridge.sub_endpoint=$PUB"
	-s admission.limit_table_log2=12)
E2E_TOOLS=(redis-cli psql)
e2e_begin me "$1"
[ -x "$CP_EXE" ] && [ -x "$CTL_EXE" ] || tap_bail "control plane and flashgatectl given"

t_services_up "$E2E_TMP/svc"
SVC=$T_SVC
T_CP=$CP_EXE T_CTL=$CTL_EXE T_PULL=$PULL T_PUB=$PUB
t_cp_up || tap_bail "control plane ready"
ADMIN=$T_ADMIN
AUTH=$(python3 -c 'import os; print(os.urandom(32).hex())')
ctl keys auth-set 1 <<<"$AUTH" >/dev/null && ctl keys rotate >/dev/null &&
	ctl limits set ip 100000/4000 user 20/20 device 20/20 forward 100000 >/dev/null ||
	tap_bail "keys and limits set"

# create ID STARTS_S ENDS_S: one event of 3 items; its JSON answer in $E2E_TMP/create.ID.
create() {
	ctlj event create "$1" --name "sale $1" --stock 3 --starts-at "$2" --ends-at "$3" \
		--pay-window 15m >"$E2E_TMP/create.$1"
}
# dp_has ID: the data plane knows event ID (GET answers 200, not 404).
dp_has() {
	e2e_curl ev "$E2E_BASE/api/v1/events/$1"
	[ "$E2E_CODE" = 200 ]
}
dp_lacks() {
	e2e_curl ev "$E2E_BASE/api/v1/events/$1"
	[ "$E2E_CODE" = 404 ]
}
rejected() { e2e_telemetry_field /flashgate/bridge events_rejected || echo none; }
# refused TEXT CMD...: 0 when flashgatectl CMD fails with a message containing TEXT; the
# message in $out.
refused() {
	local want=$1 rc=0
	shift
	out=$(ctl "$@" 2>&1) || rc=$?
	[ $rc -ne 0 ] && [[ $out == *"$want"* ]]
}
# warned ID: the create of event ID answered that it is on no data plane yet.
warned() { jget warning <"$E2E_TMP/create.$1" | grep -q "event $1 is on no data plane yet"; }
# ids JSON: the ids of an event list answer, on one line.
ids_of() {
	python3 -c 'import json,sys
print(" ".join(str(e["id"]) for e in json.loads(sys.argv[1])["events"]))' "$1"
}

# ---- 1. 100 sales now, 64 of them selling ---------------------------------------------------
now=$(date +%s)
END1=$((now + 60))
bad=0
for id in $(seq 1 100); do create $id $((now - 3600)) $END1 || bad=$((bad + 1)); done
tap_is "$bad" 0 "events 1-100 created (selling now, ending in 60 s)"
bad=0
for id in $(seq 1 64); do
	{ ctl event preheat $id && ctl event open $id; } >/dev/null || bad=$((bad + 1))
done
tap_is "$bad" 0 "events 1-64 preheated and opened"
refused "64 events are preheated or open already" event preheat 65 && r=0 || r=$?
tap_ok $r "the 65th preheat is refused: $out"
tap_run "the create of event 65 warned that it is on no data plane" warned 65
tap_is "$(jget warning <"$E2E_TMP/create.64")" "" "the create of event 64 did not"
tap_run "the data plane answers event 64" t_wait_until 20 dp_has 64
tap_run "  and 404 to event 65 (64 better claims)" dp_lacks 65
# A buyer of event 1 whose order is not written (no order writer here): archive must wait.
s=$(ctlj session-token 4242 | jget token)
e2e_curl tok "$E2E_BASE/api/v1/events/1/token" -X POST -H "Authorization: Bearer $s"
tok=$(jget token <"$E2E_TMP/tok.b") path=$(jget reserve_path <"$E2E_TMP/tok.b")
e2e_curl res "$E2E_BASE$path" -X POST -H "X-Flash-Token: $tok"
tap_is "$E2E_CODE" 202 "a buyer reserves on event 1"
bought() { [ "$(t_redis hlen "fg:{1}:result")" = 1 ]; }
tap_run "  and Redis holds the buyer" t_wait_until 20 bought

# ---- 2. they end; 100 later sales are created --------------------------------------------------
ended() { [ "$(date +%s)" -gt $END1 ]; }
t_wait_until 90 ended || true
now=$(date +%s)
bad=0
for id in $(seq 101 200); do
	create $id $((now + 3600 + id)) $((now + 86400)) || bad=$((bad + 1))
done
tap_is "$bad" 0 "events 101-200 created after the first 100 ended (starting in an hour)"
tap_is "$(jget warning <"$E2E_TMP/create.164")" "" \
	"event 164 got a slot (64 upcoming sales start before the rest)"
tap_run "the create of event 200 warned that it is on no data plane yet" warned 200
tap_run "the data plane answers event 164 (upcoming)" t_wait_until 20 dp_has 164
tap_run "  and no longer event 64 (ended: its slot went to an upcoming sale)" \
	t_wait_until 20 dp_lacks 64
tap_run "  nor event 165" dp_lacks 165

# ---- 3. archive ---------------------------------------------------------------------------------
tap_is "$(t_redis exists "fg:{2}:stock")" 1 "event 2 has its stock key in Redis (preheated)"
out=$(ctlj event archive 2)
tap_is "$(jget event.state <<<"$out")" archived "event archive 2 (ended, no buyer): archived"
tap_is "$(t_redis exists "fg:{2}:stock" "fg:{2}:result" "fg:{2}:outbox" "fg:{2}:released")" 0 \
	"  its Redis keys are deleted"
tap_is "$(ctlj event show 2 | jget event.state)" archived "  its PostgreSQL row is kept"
tap_is "$(ctlj event archive 2 | jget note)" \
	"it was archived already; its Redis keys are deleted" "  archiving it again says so"
refused "event 150 is draft and its sale has not ended" event archive 150 && r=0 || r=$?
tap_ok $r "archive of an event not over is refused: $out"
refused "the order writer has not written them all yet" event archive 1 && r=0 || r=$?
tap_ok $r "archive of an event whose buyer is no order yet is refused: $out"
tap_is "$(t_redis hlen "fg:{1}:result")" 1 "  and changes nothing in Redis"
refused "event 2 is archived" event preheat 2 && r=0 || r=$?
tap_ok $r "an archived event cannot be preheated again: $out"

# ---- 4. sales end: the newest gets its slot -----------------------------------------------------
bad=0
for id in $(seq 101 140); do ctl event close $id >/dev/null || bad=$((bad + 1)); done
tap_is "$bad" 0 "events 101-140 closed"
tap_run "the newest sale, event 200, now answers on the data plane" t_wait_until 20 dp_has 200
tap_run "  and a closed one no longer does" t_wait_until 20 dp_lacks 101
# Diagnostic only: one EVENT refused as past 64 was seen once under a storm of snapshots
# (one per close, 40 in a row); the sets the data plane answers from are checked above.
tap_diag "events the data plane refused for want of room: $(rejected)"

# ---- 5. event list --------------------------------------------------------------------------
after=0 pages=0 ids=
while :; do
	page=$(ctlj event list --limit 50 --after $after)
	ids="$ids $(ids_of "$page")"
	pages=$((pages + 1))
	after=$(jget next_after <<<"$page")
	[ -n "$after" ] && [ $pages -lt 10 ] || break
done
tap_is "$pages" 4 "event list --limit 50 --after: 4 pages"
tap_is "$(echo $ids | tr ' ' '\n' | sort -n | uniq | wc -l)/$(echo $ids | wc -w)" 200/200 \
	"  with all 200 events, each once"
count() { ids_of "$(ctlj event list --state "$1" --limit 500)" | wc -w; }
tap_is "$(count archived)/$(count closed)/$(count open)/$(count draft)" 1/40/63/96 \
	"event list --state: 1 archived, 40 closed, 63 open (ended, never closed), 96 drafts"
tap_ok "$(grep -q 'upcoming or selling events: data planes hold 64' "$E2E_TMP/cp.log"; echo $?)" \
	"the control plane logged that more sales are live than data planes hold"

fg_stop_pid "$CP_PID" 10
CP_PID=
e2e_stop_dataplane
tap_done
