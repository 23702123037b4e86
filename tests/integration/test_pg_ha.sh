#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# PostgreSQL with a streaming standby (docs/ha.md, "PostgreSQL"): the services' PostgreSQL is
# the primary, a standby is made of it with pg_basebackup -R on a free loopback port, and the
# orders' commits are synchronous to it (synchronous_standby_names). The control plane and the
# order writer list both hosts with target_session_attrs=read-write. Orders are written from a
# stream of reservations; the primary is SIGKILLed (the postmaster and every process of it)
# while the order writer writes, the standby is promoted with pg_ctl promote, and the order
# writer goes on: every reservation of Redis's outbox is exactly one order in the new primary,
# none lost, none twice, and every order id the buyers were told is that order.
#
# usage: test_pg_ha.sh CONTROLPLANE FLASHGATECTL FG_FEED ORDER_WRITER
set -uo pipefail

CP=$1 CTL=$2 FEED=$3 OW=$4
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
USERS=600
t_begin pgha
t_services_up "$TMP/svc"
OW_PID=''
ow_stop() { [ -z "$OW_PID" ] || fg_stop_pid "$OW_PID" 10 || true; }
T_CLEANUP+=(ow_stop)

# shellcheck source=tests/lib/pg_standby.sh
. "$ROOT/tests/lib/pg_standby.sh"
sb_up
HA=$SB_HA

T_CP=$CP T_CTL=$CTL T_CTL_OUT=quiet
t_cp_up -s "postgres.conninfo=$HA" -s controlplane.batch_max=20
tap_ok $? "the control plane is ready on both hosts' conninfo"
ctl event create 5 --name "standby" --stock $USERS --starts-at 2026-01-01T00:00:00Z \
	--ends-at 2036-01-01T00:00:00Z --pay-window 15m &&
	ctl event preheat 5 && ctl event open 5
tap_ok $? "event 5 created, preheated and opened with $USERS items"

"$FEED" --push "$T_PULL" --sub "$T_PUB" --event 5 --users "1-$USERS" --dp 11 --batch 20 \
	--timeout-ms 30000 >"$TMP/feed.out" 2>&1
tap_ok $? "every reservation got a verdict: $(cat "$TMP/feed.out")"
tap_is "$(t_field "$TMP/feed.out" reserved)" $USERS "$USERS reserved"
# Entries of at most 20 reservations (the control plane's batch_max), as the order writer's
# batches: each batch completes and acknowledges entries, so that an order acknowledged is
# never written again (with larger entries a lost order would be redelivered and hidden).
xl=$(t_redis xlen 'fg:{5}:outbox')
[ "$xl" -ge $((USERS / 20)) ]
tap_ok $? "the outbox holds $xl entries"

# The order writer from here: 100 orders a second in batches of 20, the stream of orders lasts
# about 6 s.
"$OW" -s "order_writer.push_endpoint=$T_PULL" -s order_writer.max_rate=100 \
	-s order_writer.batch_size=20 -s order_writer.claim_idle=1s \
	-s order_writer.claim_interval=200ms -s order_writer.events_refresh=200ms \
	"${T_REDIS[@]}" -s "postgres.conninfo=$HA" >"$TMP/ow.log" 2>&1 &
OW_PID=$!
orders() { t_sql "SELECT count(*) FROM orders WHERE event_id = 5" 2>/dev/null; }
some_orders() { [ "$(orders)" -ge 100 ]; }
t_wait_until 30 some_orders
n=$(orders)
[ "$n" -ge 100 ] && [ "$n" -lt $USERS ]
tap_ok $? "the order writer is under way on the primary ($n orders of $USERS)"

# The standby falls behind: the primary's WAL sender stopped for a second (what it has not sent
# is lost with the primary). Commits that wait for the standby (synchronous) are not
# acknowledged meanwhile, so nothing the order writer acknowledges in Redis is missing from the
# standby when the primary goes.
ws=$(t_sql "SELECT pid FROM pg_stat_replication WHERE application_name = 'fgstandby'")
kill -STOP "$ws"
tap_ok $? "the primary's WAL sender ($ws) stopped"
sleep 1
# The primary's host is lost: every process of the cluster SIGKILLed at once.
mapfile -t kids < <(ps -o pid= --ppid "$FG_PG_PID")
kill -KILL "$FG_PG_PID" "${kids[@]}" 2>/dev/null
tap_ok $? "primary SIGKILLed mid-stream (postmaster $FG_PG_PID and ${#kids[@]} processes)"
sleep 1
sb_as_pg "$PGBIN/pg_ctl" -D "$SB/data" -w -t 60 promote >/dev/null
tap_ok $? "standby promoted (pg_ctl promote)"
tap_is "$(sb_sql 'SELECT pg_is_in_recovery()')" f "the standby is the primary now"
# It inherited synchronous_standby_names (pg_basebackup copies postgresql.auto.conf) and has no
# standby of its own yet: every commit would wait for one forever. The runbook's next step
# (docs/ha.md): commits asynchronous until a new standby is attached.
sb_sql "ALTER SYSTEM SET synchronous_standby_names = ''" &&
	sb_sql "SELECT pg_reload_conf()" >/dev/null
tap_ok $? "new primary: synchronous_standby_names emptied until a new standby is attached"

pending() { t_redis xpending 'fg:{5}:outbox' order-writer | head -n 1; }
done_() { [ "$(sb_sql 'SELECT count(*) FROM orders WHERE event_id = 5')" = $USERS ] &&
	[ "$(pending)" = 0 ]; }
t_wait_until 60 done_
tap_ok $? "the order writer went on: $USERS orders on the new primary, nothing pending" ||
	tap_diag "$(tail -20 "$TMP/ow.log")"
kill -0 "$OW_PID" 2>/dev/null
tap_ok $? "the order writer did not exit"
grep -qE "connection lost|unreachable" "$TMP/ow.log"
tap_ok $? "the order writer saw the primary go ($(grep -cE 'connection lost|unreachable' \
	"$TMP/ow.log") lines)"

# Every reservation of the outbox, "user rid", against the orders of the new primary.
t_redis xrange 'fg:{5}:outbox' - + | awk 'prev == "u" { u = $0 } prev == "r" { print u, $0 }
	{ prev = $0 }' | sort >"$TMP/outbox.txt"
sb_sql "SELECT user_id, reservation_id FROM orders WHERE event_id = 5" | tr '|' ' ' | sort \
	>"$TMP/orders.txt"
tap_is "$(wc -l <"$TMP/outbox.txt")" $USERS "$USERS reservations in the outbox"
tap_is "$(sort -u "$TMP/orders.txt" | wc -l)" "$(wc -l <"$TMP/orders.txt")" "no order twice"
diff "$TMP/outbox.txt" "$TMP/orders.txt" >"$TMP/diff.txt"
tap_ok $? "every reservation is exactly one order, none lost, none twice" ||
	tap_diag "$(head -20 "$TMP/diff.txt")"
# What the buyers were told ("O:<rid>:<order id>:<deadline>") is the order they hold.
t_redis hgetall 'fg:{5}:result' | paste - - | awk -F'[\t:]' '$2 == "O" { print $1, $3, $4 }' |
	sort >"$TMP/told.txt"
sb_sql "SELECT user_id, reservation_id, id FROM orders WHERE event_id = 5" | tr '|' ' ' |
	sort >"$TMP/orders_ids.txt"
tap_is "$(wc -l <"$TMP/told.txt")" $USERS "every buyer was told an order id"
diff "$TMP/told.txt" "$TMP/orders_ids.txt" >"$TMP/diff2.txt"
tap_ok $? "every order id a buyer was told is that buyer's order on the new primary" ||
	tap_diag "$(head -20 "$TMP/diff2.txt")"
tap_diag "$(grep -E 'orders|redeliver' "$TMP/ow.log" | tail -3)"
ow_stop
OW_PID=''
tap_done
