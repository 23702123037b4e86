#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# reconcile --repair while orders change (docs/operations.md, "Repairing Redis"): Redis lost three
# buyers' result fields; the repair reads PostgreSQL (three orders awaiting payment) and is held
# there by the test hook FG_TEST_RECONCILE_HOLD_MS, before it writes a field. Meanwhile one order
# is paid and one expires, and the order writer handles both while the buyers have no field:
# the payment stores nothing (store_results_paid() changes only a buyer's field), the release
# returns no stock (release.lua: not a buyer). Once the repair has written, each field says what
# PostgreSQL says: paid, expired (with its item back in Redis's stock, once) and the untouched one
# ordered; a result query (what a shopper's poll asks when the data plane has nothing) answers
# the same, and reconcile finds Redis and PostgreSQL agreeing with no backlog. A repair that fails
# between its write and its second look (PostgreSQL's stock_releases renamed away) leaves a field
# behind PostgreSQL: the next reconcile reports it and the next repair converges. Last, on an
# open sale, buyers whose orders expired or were cancelled before the reading, their items long
# back, lost from Redis with their releases: reconcile reports them, the repair writes them X:
# and C: with their released members and leaves the stock alone, and they cannot reserve again;
# one whose release the order writer (stopped) has not applied yet is restored ordered, and its
# release, applied once the writer runs again, returns its item. Users lost who reserved again
# before any repair hold reservations that can never become orders: reconcile reports them and
# the repair writes their orders' fields in their place, an ended order's item back. Fields left
# bare (an order's reservation) for orders paid or cancelled since are behind PostgreSQL: the
# repair makes them paid or hands the release back.
#
# usage: test_reconcile_race.sh CONTROLPLANE FLASHGATECTL FG_FEED ORDER_WRITER
set -uo pipefail

T_CP=$1 CTL=$2 T_FEED=$3 OW=$4
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
EV=9 STOCK=10 HOLD_MS=6000
t_begin recrace
t_services_up "$TMP/svc"
T_CTL=$CTL T_CTL_OUT=quiet
FG_TEST_RECONCILE_HOLD_MS=$HOLD_MS t_cp_up
tap_ok $? "the control plane is ready (reconcile --repair held $HOLD_MS ms by the test hook)"
ctl event create $EV --name "repair race" --stock $STOCK --starts-at 2026-01-01T00:00:00Z \
	--ends-at 2036-01-01T00:00:00Z --pay-window 15m && ctl event preheat $EV && ctl event open $EV
tap_ok $? "event $EV created, preheated and opened with $STOCK items"
t_feed buy $EV 1-4 21
tap_is "$(t_field "$TMP/buy" reserved)" 4 "4 users reserve ($(cat "$TMP/buy"))"

"$OW" -s "order_writer.push_endpoint=$T_PULL" -s order_writer.max_rate=0 \
	-s order_writer.sweep_interval=100ms -s order_writer.results_interval=50ms \
	"${T_REDIS[@]}" -s "postgres.conninfo=$FG_PG_CONNINFO" >"$TMP/ow.log" 2>&1 &
OW_PID=$!
T_PIDS+=($OW_PID)
ordered() { # USER: its order's result hash value, as PostgreSQL's row has it now
	t_sql "select case status when 'paid' then 'P:' when 'expired' then 'X:'
		when 'cancelled' then 'C:' else 'O:' end ||
		(reservation_id::numeric + case when reservation_id < 0 then 18446744073709551616
		else 0 end) || ':' || id || ':' || floor(extract(epoch from pay_deadline) * 1000)::bigint
		from orders where event_id = $EV and user_id = $1"
}
field() { t_redis hget "fg:{$EV}:result" "$1"; }
all_ordered() {
	for u in 1 2 3 4; do [ "$(field "$u")" = "$(ordered "$u")" ] || return 1; done
}
t_wait_until 20 all_ordered
tap_ok $? "the order writer made the 4 orders and wrote them in Redis (O:...)"
ctl event close $EV
tap_ok $? "event close"
tap_is "$(ctlj reconcile $EV | jget consistent)" true "reconcile: Redis agrees with PostgreSQL"

# Redis loses users 1, 2 and 3 (a failover to a replica that was behind).
t_redis hdel "fg:{$EV}:result" 1 2 3 >/dev/null
order_of() { t_sql "select id from orders where event_id = $EV and user_id = $1"; }
o1=$(order_of 1) o2=$(order_of 2)
ctlj reconcile $EV --repair >"$TMP/repair.json" 2>&1 &
REPAIR_PID=$!
T_PIDS+=($REPAIR_PID)
held() { # N: the repair was held N times
	[ "$(grep -c "FG_TEST_RECONCILE_HOLD_MS: reconcile --repair of event $EV held" \
		"$TMP/cp.log")" -ge "$1" ]
}
t_wait_until 10 held 1
tap_ok $? "reconcile --repair has read PostgreSQL and is held before its write"

# While it is held: user 1 pays, user 2's order expires; the order writer handles both.
tap_is "$(t_sql "select flashgate_pay($o1)")" paid "  user 1's order paid (flashgate_pay)"
t_sql "update orders set pay_deadline = now() - interval '1 second' where id = $o2"
pay_handled() { [ "$(t_sql "select count(*) from result_changes where order_id = $o1")" = 0 ]; }
release_handled() { # ORDER
	[ "$(t_sql "select count(*) from stock_releases where order_id = $1
		and applied_at is not null")" = 1 ]
}
t_wait_until 4 pay_handled
tap_ok $? "  the order writer handled the payment"
t_wait_until 4 release_handled "$o2"
tap_ok $? "  the sweeper expired user 2's order and handled its release"
tap_ok "$(kill -0 $REPAIR_PID 2>/dev/null && [ ! -s "$TMP/repair.json" ]; echo $?)" \
	"  both while the repair was still held (nothing answered yet)"
tap_is "$(field 1)/$(field 2)" / "  the buyers had no field meanwhile: nothing was written for them"

wait $REPAIR_PID
tap_is "$(jget repaired <"$TMP/repair.json")" true "reconcile --repair repaired ($(head -c 300 "$TMP/repair.json"))"
T_PIDS=("${T_PIDS[@]/$REPAIR_PID/}")
now_is() { [ "$(field "$1")" = "$(ordered "$1")" ]; }
t_wait_until 5 now_is 1
tap_ok $? "user 1 (paid while the repair was held) is paid in Redis: $(field 1) (PostgreSQL: $(ordered 1))"
t_wait_until 5 now_is 2
tap_ok $? "user 2 (expired while the repair was held) is expired in Redis: $(field 2) (PostgreSQL: $(ordered 2))"
tap_is "$(field 3)" "$(ordered 3)" "user 3 (untouched) is ordered again: $(field 3)"
available=$(t_sql "select available from stock where event_id = $EV")
stock_is() { [ "$(t_redis get "fg:{$EV}:stock")" = "$1" ]; }
t_wait_until 5 stock_is "$available"
tap_ok $? "Redis's stock is PostgreSQL's available $available: user 2's item came back, once ($(t_redis get "fg:{$EV}:stock"))"
tap_is "$(t_redis sismember "fg:{$EV}:released" "$(field 2 | cut -d: -f2):2")" 1 \
	"  its release is in Redis's released set"
ctlj reconcile $EV >"$TMP/after.json"
tap_is "$(jget consistent backlog releases_in_flight <"$TMP/after.json")" true/0/0 \
	"reconcile: Redis agrees with PostgreSQL, no backlog ($(head -c 300 "$TMP/after.json"))"

# What a shopper's poll gets when the data plane asks the control plane (a result query).
T_FEED_TIMEOUT_MS=10000 t_feed ask $EV 900-900 22 --query 1-3 --storm 3 --log "$TMP/ask.log"
tap_is "$(t_field "$TMP/ask" queried)" 3 "a result query of users 1-3, all answered ($(cat "$TMP/ask"))"
tap_is "$(awk '$1 == "result" && $2 != 900 { print $2 ":" $3 }' "$TMP/ask.log" | sort -u |
	paste -sd' ' -)" "1:paid 2:expired 3:ordered" "  paid, expired and ordered, as PostgreSQL says"

# repair_again N OUT ORDER: Redis loses user 3 again; reconcile --repair (its answer in OUT) is
# held (its Nth hold) while ORDER expires and the order writer handles its release. Leaves
# REPAIR_PID running.
repair_again() {
	t_redis hdel "fg:{$EV}:result" 3 >/dev/null
	ctlj reconcile $EV --repair >"$2" 2>&1 &
	REPAIR_PID=$!
	T_PIDS+=($REPAIR_PID)
	t_wait_until 10 held "$1"
	tap_ok $? "reconcile --repair again (user 3 lost again), held before its write"
	t_sql "update orders set pay_deadline = now() - interval '1 second' where id = $3"
	t_wait_until 4 release_handled "$3"
}
# repair_end: waits for REPAIR_PID; its exit status in rc.
repair_end() {
	wait $REPAIR_PID
	rc=$?
	T_PIDS=("${T_PIDS[@]/$REPAIR_PID/}")
}

# An item that comes back to Redis's stock while the repair is held (user 4, a buyer Redis kept,
# expires): the stock the repair computed from its reading would overwrite it, so it sets
# nothing and says so; run again, it repairs.
repair_again 2 "$TMP/repair2.json" "$(order_of 4)"
tap_ok $? "  meanwhile user 4's order expires and its item goes back to Redis's stock"
repair_end
tap_ok "$([ $rc -ne 0 ] && grep -q "stock moved between the reading and the repair" \
	"$TMP/repair2.json"; echo $?)" "  the repair refuses: the stock moved (exit $rc: $(head -c 300 "$TMP/repair2.json"))"
available=$(t_sql "select available from stock where event_id = $EV")
tap_is "$(field 3)/$(t_redis get "fg:{$EV}:stock")" "/$available" \
	"  nothing written: user 3 still missing, the stock PostgreSQL's $available with user 4's item"
ctlj reconcile $EV --repair >"$TMP/repair3.json" 2>&1
tap_is "$(jget repaired <"$TMP/repair3.json")" true "run again, it repairs"
ctlj reconcile $EV >"$TMP/after3.json"
tap_is "$(field 3)/$(t_redis get "fg:{$EV}:stock")/$(jget consistent backlog <"$TMP/after3.json")" \
	"$(ordered 3)/$available/true/0" "  user 3 ordered, the stock $available, Redis agrees with PostgreSQL"

# A repair that fails between its write and its second look (PostgreSQL failing there: its
# stock_releases table renamed away) leaves a field that says ordered for an order that expired
# while the buyer had none, its release spent on nothing: the next reconcile sees that field
# behind PostgreSQL, and the next repair hands the release back.
repair_again 3 "$TMP/repair4.json" "$(order_of 3)"
tap_ok $? "  meanwhile user 3's order expires; its release finds no field and returns nothing"
t_sql "alter table stock_releases rename to stock_releases_away"
repair_end
t_sql "alter table stock_releases_away rename to stock_releases"
x3=$(ordered 3 | cut -d: -f2,3) # rid:order id (the deadline the repair read was later)
tap_ok "$([ $rc -ne 0 ] && [ "$(field 3 | cut -d: -f1-3)" = "O:$x3" ]; echo $?)" \
	"  the repair fails at its second look, after writing user 3 ordered (exit $rc, field $(field 3): $(head -c 200 "$TMP/repair4.json"))"
ctlj reconcile $EV >"$TMP/after4.json"
tap_is "$(jget consistent redis.fields_behind <"$TMP/after4.json")" false/1 \
	"reconcile: user 3's field is behind PostgreSQL ($(head -c 400 "$TMP/after4.json"))"
ctlj reconcile $EV --repair >"$TMP/repair5.json" 2>&1
tap_is "$(jget repaired <"$TMP/repair5.json")" true "run again, it repairs"
available=$(t_sql "select available from stock where event_id = $EV")
t_wait_until 5 now_is 3
tap_ok $? "  user 3 is expired in Redis: $(field 3) (PostgreSQL: $(ordered 3))"
t_wait_until 5 stock_is "$available"
tap_ok $? "  its item came back: Redis's stock is PostgreSQL's available $available ($(t_redis get "fg:{$EV}:stock"))"
ctlj reconcile $EV >"$TMP/after5.json"
tap_is "$(jget consistent backlog redis.fields_behind <"$TMP/after5.json")" true/0/0 \
	"  reconcile: Redis agrees with PostgreSQL, no backlog"

# Buyers whose orders ended before the reading, lost from Redis. On event 10, open: user 31's
# order expires and user 32's is cancelled, the order writer applies both releases (X:, C:, the
# items back); then Redis loses both fields with their released members (a failover to a replica
# that was behind: the reservation and the release went, together, so the stock is as it was).
EV=10
ctl event create $EV --name "repair of ended orders" --stock 5 \
	--starts-at 2026-01-01T00:00:00Z --ends-at 2036-01-01T00:00:00Z --pay-window 15m &&
	ctl event preheat $EV && ctl event open $EV
tap_ok $? "event $EV created, preheated and opened with 5 items"
t_feed buy2 $EV 31-33 23
tap_is "$(t_field "$TMP/buy2" reserved)" 3 "  users 31-33 reserve ($(cat "$TMP/buy2"))"
ended_ordered() { for u in 31 32 33; do now_is $u || return 1; done; }
t_wait_until 20 ended_ordered
tap_ok $? "  the order writer made their orders (O:...)"
o31=$(order_of 31) o32=$(order_of 32)
t_sql "update orders set pay_deadline = now() - interval '1 second' where id = $o31"
tap_is "$(t_sql "select flashgate_cancel($o32)")" cancelled "  user 32's order cancelled"
t_wait_until 5 release_handled "$o31" && t_wait_until 5 release_handled "$o32" &&
	t_wait_until 5 now_is 31 && t_wait_until 5 now_is 32
tap_ok $? "  user 31's order expired, both releases applied: $(field 31), $(field 32)"
stock=$(t_redis get "fg:{$EV}:stock")
tap_is "$stock" "$(t_sql "select available from stock where event_id = $EV")" \
	"  Redis's stock $stock is PostgreSQL's available, with both items back"
member() { echo "$(field "$1" | cut -d: -f2):$1"; } # USER: its released set member
m31=$(member 31) m32=$(member 32)
t_redis hdel "fg:{$EV}:result" 31 32 >/dev/null
t_redis srem "fg:{$EV}:released" "$m31" "$m32" >/dev/null
ctlj reconcile $EV >"$TMP/ended.json"
tap_is "$(jget consistent redis.buyers_missing <"$TMP/ended.json")" false/2 \
	"reconcile: users 31 and 32 lost from Redis are reported ($(head -c 600 "$TMP/ended.json"))"
tap_ok "$(grep -q "user 31's order $o31 is expired in PostgreSQL, its item returned, but" \
	"$TMP/ended.json" && grep -q "user 32's order $o32 is cancelled" "$TMP/ended.json"; echo $?)" \
	"  each difference names the user, the order and its state"
ctlj reconcile $EV --repair --force >"$TMP/ended_repair.json" 2>&1
tap_is "$(jget repaired <"$TMP/ended_repair.json")" true \
	"reconcile --repair --force repaired ($(head -c 300 "$TMP/ended_repair.json"))"
tap_is "$(field 31)/$(field 32)" "$(ordered 31)/$(ordered 32)" \
	"  user 31 is expired, user 32 cancelled in Redis, as PostgreSQL says"
tap_is "$(t_redis sismember "fg:{$EV}:released" "$m31")/$(t_redis sismember \
	"fg:{$EV}:released" "$m32")" 1/1 "  their releases are in Redis's released set again"
tap_is "$(t_redis get "fg:{$EV}:stock")" "$stock" "  the stock is still $stock: no item taken or returned"
ctlj reconcile $EV >"$TMP/ended_after.json"
tap_is "$(jget consistent backlog redis.buyers_missing <"$TMP/ended_after.json")" true/0/0 \
	"reconcile: Redis agrees with PostgreSQL ($(head -c 300 "$TMP/ended_after.json"))"
t_feed buy3 $EV 31-32 24
tap_is "$(t_field "$TMP/buy3" reserved)/$(t_field "$TMP/buy3" duplicate)" 0/2 \
	"users 31 and 32 cannot reserve again: duplicates ($(cat "$TMP/buy3"))"
tap_is "$(t_redis get "fg:{$EV}:stock")" "$stock" "  the stock is still $stock"
# A release of user 31's order applied again (handed back as a repair's second look does) finds
# its member in the released set: it returns nothing.
t_sql "update stock_releases set id = nextval('stock_releases_id_seq'), applied_at = null
	where order_id = $o31"
t_wait_until 5 release_handled "$o31"
tap_ok $? "user 31's release applied again by the order writer"
tap_is "$(t_redis get "fg:{$EV}:stock")/$(field 31)" "$stock/$(ordered 31)" \
	"  nothing returned: the stock still $stock, user 31 still expired"
T_FEED_TIMEOUT_MS=10000 t_feed ask2 $EV 900-900 25 --query 31-32 --storm 3 --log "$TMP/ask2.log"
tap_is "$(awk '$1 == "result" && $2 != 900 { print $2 ":" $3 }' "$TMP/ask2.log" | sort -u |
	paste -sd' ' -)" "31:expired 32:cancelled" "a result query of users 31, 32: expired and cancelled"

# User 33's order is cancelled while the order writer is stopped (SIGSTOP), and Redis loses user
# 33: its release is still to be applied, its item not back in Redis. The repair restores the
# field the buyer had, O:, and hands the release back; the order writer, running again, applies
# it: C:, the item back once.
kill -STOP $OW_PID
o33=$(order_of 33)
tap_is "$(t_sql "select flashgate_cancel($o33)")" cancelled \
	"user 33's order cancelled while the order writer is stopped"
t_redis hdel "fg:{$EV}:result" 33 >/dev/null
stock=$(t_redis get "fg:{$EV}:stock") # user 900 of the result query above holds one item
ctlj reconcile $EV >"$TMP/pending.json"
tap_is "$(jget consistent redis.buyers_missing postgres.releases_unapplied <"$TMP/pending.json")" \
	false/1/1 "  reconcile: user 33 lost from Redis, its release unapplied ($(head -c 400 "$TMP/pending.json"))"
ctlj reconcile $EV --repair --force >"$TMP/pending_repair.json" 2>&1
x33=$(ordered 33 | cut -d: -f2-)
tap_is "$(jget repaired <"$TMP/pending_repair.json")/$(field 33)/$(t_redis get "fg:{$EV}:stock")" \
	"true/O:$x33/$stock" "  repaired: user 33 ordered again (the field before its release), the stock still $stock"
kill -CONT $OW_PID
t_wait_until 5 release_handled "$o33" && t_wait_until 5 now_is 33
tap_ok $? "  the order writer, running again, applied the release: $(field 33)"
available=$(t_sql "select available from stock where event_id = $EV")
t_wait_until 5 stock_is "$available"
tap_ok $? "  user 33's item came back: Redis's stock is PostgreSQL's available $available ($(t_redis get "fg:{$EV}:stock"))"
ctlj reconcile $EV >"$TMP/pending_after.json"
tap_is "$(jget consistent backlog redis.buyers_missing <"$TMP/pending_after.json")" true/0/0 \
	"  reconcile: Redis agrees with PostgreSQL"
t_feed buy4 $EV 33-33 26
tap_is "$(t_field "$TMP/buy4" reserved)/$(t_field "$TMP/buy4" duplicate)" 0/1 \
	"  user 33 cannot reserve again: duplicate ($(cat "$TMP/buy4"))"
tap_is "$(grep -c "have no order" "$TMP/ow.log")" 0 \
	"the order writer met no reservation of a user holding an order"

# Users lost by Redis who reserved again before any repair (the gap of builds before this one):
# user 31 (expired) with its released member, user 900 (ordered) with its reservation's
# decrement. Each reserves again: reserve.lua takes an item, the order writer makes no order
# (one per user and event) and warns. Those reservations can never become orders: reconcile
# reports them, and the repair writes each user's order's field in their place, 31's with its
# released member and its item back (its order's item went back when it expired), 900's
# without (this reservation's item is the one its order holds).
m31=$(member 31)
t_redis hdel "fg:{$EV}:result" 31 900 >/dev/null
t_redis srem "fg:{$EV}:released" "$m31" >/dev/null
t_redis incr "fg:{$EV}:stock" >/dev/null
stock=$(t_redis get "fg:{$EV}:stock")
t_feed buy5 $EV 31-31 27 && t_feed buy6 $EV 900-900 28
tap_is "$(t_field "$TMP/buy5" reserved)/$(t_field "$TMP/buy6" reserved)" 1/1 \
	"users 31 and 900, lost, reserve again ($(cat "$TMP/buy5"))"
warned() { [ "$(grep -c "have no order" "$TMP/ow.log")" -ge 1 ]; }
t_wait_until 10 warned
tap_ok $? "  the order writer makes them no order: $(grep -m1 "have no order" "$TMP/ow.log")"
bare() { [[ $(field "$1") =~ ^[0-9]+$ ]] && echo bare; } # USER: "bare" for a bare reservation
tap_is "$(t_redis get "fg:{$EV}:stock")/$(bare 31)/$(bare 900)" "$((stock - 2))/bare/bare" \
	"  two items taken, their fields bare reservations: $(field 31), $(field 900)"
ctlj reconcile $EV >"$TMP/orphan.json"
tap_is "$(jget consistent redis.orphan_reservations <"$TMP/orphan.json")" false/2 \
	"reconcile: two reservations that can never become orders ($(head -c 700 "$TMP/orphan.json"))"
tap_ok "$(grep -q "user 31 holds reservation $(field 31) in Redis, which can never become an order" \
	"$TMP/orphan.json"; echo $?)" "  named with the user and the reservation"
ctlj reconcile $EV --repair --force >"$TMP/orphan_repair.json" 2>&1
tap_is "$(jget repaired <"$TMP/orphan_repair.json")" true "reconcile --repair --force repaired"
tap_is "$(field 31)/$(field 900)/$(t_redis sismember "fg:{$EV}:released" "$m31")" \
	"$(ordered 31)/$(ordered 900)/1" "  user 31 expired with its released member, user 900 ordered"
available=$(t_sql "select available from stock where event_id = $EV")
tap_is "$(t_redis get "fg:{$EV}:stock")" "$((stock - 1))" \
	"  the stock $((stock - 1)): user 31's item back, user 900's kept (PostgreSQL's available $available)"
ctlj reconcile $EV >"$TMP/orphan_after.json"
tap_is "$(jget consistent backlog redis.orphan_reservations <"$TMP/orphan_after.json")" \
	true/0/0 "reconcile: Redis agrees with PostgreSQL ($(head -c 300 "$TMP/orphan_after.json"))"
t_feed buy7 $EV 31-31 29
tap_is "$(t_field "$TMP/buy7" reserved)/$(t_field "$TMP/buy7" duplicate)" 0/1 \
	"  user 31 cannot reserve again: duplicate"
# Fields left bare by a failover that lost the order writer's last writes: user 900's order
# paid (its O: and its P: lost), user 33's cancelled (its C:, its released member and its item
# lost with them). Both are behind PostgreSQL: reconcile reports them, and the repair makes 900
# paid and hands 33's release back, which returns its item once.
o900=$(order_of 900)
tap_is "$(t_sql "select flashgate_pay($o900)")" paid "user 900's order paid (flashgate_pay)"
t_wait_until 5 now_is 900
tap_ok $? "  the order writer wrote it paid: $(field 900)"
rid() { ordered "$1" | cut -d: -f2; } # USER: its order's reservation id
m33=$(member 33)
t_redis hset "fg:{$EV}:result" 900 "$(rid 900)" 33 "$(rid 33)" >/dev/null
t_redis srem "fg:{$EV}:released" "$m33" >/dev/null
t_redis decr "fg:{$EV}:stock" >/dev/null
stock=$(t_redis get "fg:{$EV}:stock")
tap_is "$(bare 900)/$(bare 33)" bare/bare "Redis lost them: $(field 900), $(field 33), stock $stock"
ctlj reconcile $EV >"$TMP/bare.json"
tap_is "$(jget consistent redis.fields_behind <"$TMP/bare.json")" false/2 \
	"reconcile: two bare fields behind PostgreSQL ($(head -c 700 "$TMP/bare.json"))"
ctlj reconcile $EV --repair --force >"$TMP/bare_repair.json" 2>&1
tap_is "$(jget repaired <"$TMP/bare_repair.json")" true "reconcile --repair --force repaired"
t_wait_until 5 now_is 900
tap_ok $? "  user 900 is paid in Redis: $(field 900) (PostgreSQL: $(ordered 900))"
t_wait_until 5 now_is 33
tap_ok $? "  user 33 is cancelled in Redis: $(field 33) (PostgreSQL: $(ordered 33))"
t_wait_until 5 stock_is "$((stock + 1))"
tap_ok $? "  user 33's item came back, once: stock $(t_redis get "fg:{$EV}:stock"), PostgreSQL's available $(t_sql "select available from stock where event_id = $EV")"
ctlj reconcile $EV >"$TMP/bare_after.json"
tap_is "$(jget consistent backlog redis.fields_behind <"$TMP/bare_after.json")" true/0/0 \
	"reconcile: Redis agrees with PostgreSQL ($(head -c 300 "$TMP/bare_after.json"))"

# More users lost than the answer lists (20 of a kind) and a reservation that can never become an
# order: each kind's lines are followed by its own "... N in all", not another kind's lines.
EV=11
ctl event create $EV --name "many lost" --stock 30 --starts-at 2026-01-01T00:00:00Z \
	--ends-at 2036-01-01T00:00:00Z --pay-window 15m && ctl event preheat $EV && ctl event open $EV
tap_ok $? "event $EV created, preheated and opened with 30 items"
t_feed buy8 $EV 41-62 30
many_ordered() { for u in $(seq 41 62); do now_is "$u" || return 1; done; }
t_wait_until 20 many_ordered
tap_ok $? "  users 41-62 reserve, the order writer makes their orders ($(cat "$TMP/buy8"))"
t_redis hdel "fg:{$EV}:result" $(seq 41 62) >/dev/null
t_feed buy9 $EV 62-62 31
tap_is "$(t_field "$TMP/buy9" reserved)" 1 "  users 41-62 lost from Redis; user 62 reserves again"
ctlj reconcile $EV >"$TMP/many.json"
tap_is "$(python3 -c 'import json, sys
d = json.load(sys.stdin)["differences"]
i = [k for k, x in enumerate(d) if x.startswith("... 21 users in all")]
at = lambda k: d[k][:24] if 0 <= k < len(d) else "(none)"
print(i and at(i[0] - 1) + "/" + at(i[0] + 1))' <"$TMP/many.json")" \
	"user 60 has an order but/user 62 holds reservatio" \
	"reconcile: 20 users lost listed, then \"... 21 users in all\", then the orphan reservation"
tap_done
