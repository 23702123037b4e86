#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# docs/runbook.md run as printed: every fenced block marked "# runbook: PHASE" is extracted, its
# example values changed by the sed the page documents (the sale's times a few seconds ahead, a
# 6 s draw window, the test's auth key file, the commitment shown the day before), and run with
# bash -e against a real control plane, Redis, PostgreSQL and order writer, flashgatectl first
# in PATH and FLASHGATE_SOCKET set. Each block must exit 0, and the event must be in the state
# the page says after it (event show): draft/scheduled, open/scheduled, open/queueing,
# open/done (the draw checked against the commitment), closed, archived. Twenty entrants come
# in the pre-queue from tests/peer/fg_feed (a data plane's feed); their orders are paid before
# the day-after block, as the shop would.
#
# usage: test_runbook.sh CONTROLPLANE FLASHGATECTL FG_FEED ORDER_WRITER
set -uo pipefail

CP=$1 CTL=$2 FEED=$3 OW=$4
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DOC=$ROOT/docs/runbook.md
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
t_begin runbook
t_services_up "$TMP/svc"
T_CP=$CP T_CTL=$CTL
OW_PID=''
rb_stop() { [ -z "$OW_PID" ] || fg_stop_pid "$OW_PID" 10 || true; }
T_CLEANUP+=(rb_stop)
t_cp_up
tap_ok $? "the control plane is ready"
"$OW" -s "order_writer.push_endpoint=$T_PULL" -s order_writer.max_rate=0 \
	"${T_REDIS[@]}" -s "postgres.conninfo=$FG_PG_CONNINFO" \
	>"$TMP/ow.log" 2>&1 &
OW_PID=$!

mkdir -p "$TMP/bin"
ln -s "$(cd "$(dirname "$CTL")" && pwd)/$(basename "$CTL")" "$TMP/bin/flashgatectl"
export PATH="$TMP/bin:$PATH" FLASHGATE_SOCKET=$T_ADMIN
(umask 077 && printf '%s\n' 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f \
	>"$TMP/auth.key")

# the blocks, in the page's order
mapfile -t phases < <(sed -n 's/^# runbook: \([a-z-]*\)$/\1/p' "$DOC")
tap_is "${phases[*]}" "day-before hour-before queue start draw end after" \
	"docs/runbook.md has its seven blocks, in order"
# block PHASE: the commands of that block, as printed
block() {
	awk -v want="# runbook: $1" '/^```/ { inb = 0 } inb { print } $0 == want { inb = 1 }' "$DOC"
}
now=$(date +%s)
Q=$((now + 30)) S=$((now + 45)) E=$((now + 3600))
iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
COMMITMENT=none
# run PHASE: the block with the page's sed applied, run with bash -e; its output in TMP/PHASE.out
run() {
	block "$1" | sed -e "s/2026-12-12T09:50:00Z/$(iso $Q)/" -e "s/2026-12-12T10:00:00Z/$(iso $S)/" \
		-e "s/2026-12-12T12:00:00Z/$(iso $E)/" -e 's/--draw-window 10m/--draw-window 6s/' \
		-e "s|/etc/flashgate/auth.key|$TMP/auth.key|" -e "s/PUBLISHED_SEED_SHA256/$COMMITMENT/" \
		>"$TMP/$1.sh"
	timeout 120 bash -e "$TMP/$1.sh" >"$TMP/$1.out" 2>&1
	local rc=$?
	tap_ok $rc "runbook $1: $(grep -c '^flashgatectl ' "$TMP/$1.sh") command(s) exit 0"
	[ "$rc" = 0 ] || tap_diag "$(tail -5 "$TMP/$1.out")"
}
state() { ctlj event show 7 | jget event.state draw.state; }
wait_state() { # WANT SECONDS
	local i
	for i in $(seq $(($2 * 4))); do
		[ "$(state)" = "$1" ] && return 0
		sleep 0.25
	done
	return 1
}

run day-before
tap_is "$(state)" draft/scheduled "  event 7 is a draft, its draw scheduled"
COMMITMENT=$(ctlj event show 7 | jget event.seed_sha256)
grep -q "seed_sha256: *$COMMITMENT" "$TMP/day-before.out"
tap_ok $? "  event show printed the commitment to publish: $COMMITMENT"
tap_is "$(ctlj limits show | jget limits.forward_per_s limits.forward_burst)" 20000/5000 \
	"  the forward budget is 20000/5000"

run hour-before
tap_is "$(state)" open/scheduled "  event 7 is open, its draw scheduled"

while [ "$(date +%s)" -lt $((Q + 1)) ]; do sleep 0.2; done
"$FEED" --push "$T_PULL" --sub "$T_PUB" --event 7 \
	--users 501-520 --dp 5 --batch 4 --timeout-ms 20000 >"$TMP/feed.out" 2>&1
tap_ok $? "20 users reserve in the pre-queue, each answered"
run queue
tap_is "$(ctlj event show 7 | jget event.state draw.state draw.entrants)" open/queueing/20 \
	"  event 7 is open, queueing, 20 entrants"

while [ "$(date +%s)" -lt $((S + 1)) ]; do sleep 0.2; done
run start
tap_is "$(ctlj event show 7 | jget pow_bits_now event.pow_auto_max)" 13/16 \
	"  the challenge is 13 bits now, the automatic maximum 16"

wait_state open/done 60
tap_ok $? "the draw ran at start + 6 s: open/done"
for _ in $(seq 240); do
	[ "$(t_sql "SELECT count(*) FROM orders WHERE event_id = 7")" = 20 ] && break
	sleep 0.25
done
tap_is "$(t_sql "SELECT count(*) FROM orders WHERE event_id = 7")" 20 \
	"  the order writer wrote the 20 winners' orders"
run draw
grep -q "the draw checks out: 20 entrants" "$TMP/draw.out" &&
	grep -q "matches the commitment given" "$TMP/draw.out"
tap_ok $? "  verify-draw: the draw checks out against the commitment of the day before"

run end
tap_is "$(state)" closed/done "  event 7 is closed"
tap_ok "$(ctlj reconcile 7 | jget consistent | grep -qx true; echo $?)" \
	"  reconcile: consistent"

t_sql "SELECT count(flashgate_pay(id)) FROM orders WHERE event_id = 7" >/dev/null
tap_is "$(t_sql "SELECT count(*) FROM orders WHERE event_id = 7 AND status = 'paid'")" 20 \
	"the shop paid the 20 orders"
run after
tap_is "$(ctlj event show 7 | jget event.state)" archived "  event 7 is archived"
grep -q '^ *7 ' "$TMP/after.out" || grep -q 'Launch sale' "$TMP/after.out"
tap_ok $? "  event list --state archived shows it"
tap_done
