#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The shop's own Redis and PostgreSQL as docs/install.md sets them up (issue 28 item 4):
#   Redis: the daemons refuse one without appendfsync always, and connect to one that wants a
#   password (an ACL user, the default user off) with [redis] user and password_file; tls = yes
#   is refused with the reason.
#   PostgreSQL: TLS only (ssl on with a certificate made here, hostnossl rejected, scram over
#   hostssl), the database and its four roles made by scripts/flashgate-db-setup, the passwords
#   only in passfiles. The daemons run as their own roles over TLS and a small sale passes: orders
#   written by the order writer's role, one paid by the shop's role through flashgate_pay() and
#   its result in Redis, the others expired by the order writer. The shop's role cannot UPDATE
#   orders; the order writer's cannot change events.
#
# usage: test_db_roles.sh CONTROLPLANE ORDER-WRITER FLASHGATECTL FG_FEED
set -uo pipefail

CP=$1 OW=$2 CTL=$3 FEED=$4
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SETUP=$ROOT/scripts/flashgate-db-setup
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
t_begin dbroles
t_services_up "$TMP/svc"
T_CP=$CP T_CTL=$CTL T_CTL_OUT=$TMP/ctl.out
OW_PID=''
ow_stop() { [ -z "$OW_PID" ] || fg_stop_pid "$OW_PID" 10 || true; }
T_CLEANUP+=(ow_stop)
EV=41 STOCK=10

# flashgate-db-setup --help, what an operator reads first: the whole text, on stdout, exit 0.
"$SETUP" --help >"$TMP/setup-help.out" 2>"$TMP/setup-help.err"
tap_is "$?:$(tail -n 1 "$TMP/setup-help.out"):$(wc -c <"$TMP/setup-help.err")" \
	"0:standard input, and the daemons read theirs from the passfile (passfile= in conninfo).:0" \
	"flashgate-db-setup --help prints its whole text on stdout and exits 0"
"$SETUP" rolse >/dev/null 2>"$TMP/setup-typo.err"
tap_is "$?:$(cat "$TMP/setup-typo.err")" \
	"1:flashgate-db-setup: unknown action 'rolse' (expected all, roles, migrate, grants or upgrade; see --help)" \
	"flashgate-db-setup with a misspelled action names the actions, changes nothing"

# --- Redis ------------------------------------------------------------------------------------
"$CP" -s redis.tls=yes --check-config >"$TMP/tls.out" 2>&1
tap_ok $((! $?)) "redis.tls = yes stops the control plane at start"
grep -q "has no TLS.*stunnel or spiped" "$TMP/tls.out"
tap_ok $? "  saying why and what to do: $(cat "$TMP/tls.out")"

# The tests' Redis runs with appendfsync no: with the check on, the daemons refuse it.
t_cp_up -s redis.unsafe_settings=no
tap_ok $((! $?)) "the control plane refuses a Redis with appendfsync no"
grep -q "appendfsync no, flashgate needs appendfsync always" "$TMP/cp.log"
tap_ok $? "  naming the setting, its value and the value it needs"
fg_stop_pid "$CP_PID" 10 # (when it did not refuse)
timeout 30 "$OW" "${T_REDIS[@]}" -s redis.unsafe_settings=no \
	-s "order_writer.push_endpoint=$T_PULL" \
	>"$TMP/ow-refused.log" 2>&1
tap_ok $((! $?)) "so does the order writer"
grep -q "appendfsync no, flashgate needs appendfsync always" "$TMP/ow-refused.log"
tap_ok $? "  with the same message"

# Redis as the shop runs it: durable, and only for a user with a password.
redis_pw=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
(umask 077 && printf '%s\n' "$redis_pw" >"$TMP/redis.pw")
t_redis config set appendfsync always >/dev/null
t_redis acl setuser flashgate on ">$redis_pw" '~*' '&*' +@all >/dev/null
t_redis acl setuser default off >/dev/null
export REDISCLI_AUTH=$redis_pw
r() { redis-cli --user flashgate -s "$FG_REDIS_SOCK" "$@"; } # as the ACL user
tap_is "$(env -u REDISCLI_AUTH redis-cli -s "$FG_REDIS_SOCK" ping 2>&1 | grep -c NOAUTH)" 1 \
	"Redis now refuses a client without a password"
REDIS_AUTH=(-s redis.unsafe_settings=no -s redis.user=flashgate
	-s "redis.password_file=$TMP/redis.pw")

# --- PostgreSQL: TLS only for the database of this test ---------------------------------------
PGDATA_DIR=$FG_PG_HOST/pg
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
	-subj /CN=127.0.0.1 -keyout "$PGDATA_DIR/server.key" -out "$PGDATA_DIR/server.crt" \
	>"$TMP/openssl.log" 2>&1
tap_ok $? "a self-signed certificate for PostgreSQL (openssl)"
chmod 600 "$PGDATA_DIR/server.key"
[ "$(id -u)" -ne 0 ] || chown postgres: "$PGDATA_DIR/server.key" "$PGDATA_DIR/server.crt"
{
	printf 'hostnossl fgroles all 127.0.0.1/32 reject\n'
	printf 'hostssl fgroles all 127.0.0.1/32 scram-sha-256\n'
	cat "$PGDATA_DIR/pg_hba.conf"
} >"$TMP/hba" && cat "$TMP/hba" >"$PGDATA_DIR/pg_hba.conf"
t_sql "ALTER SYSTEM SET ssl = on" && t_sql "SELECT pg_reload_conf()" >/dev/null
ssl_on() { [ "$(t_sql "SHOW ssl")" = on ]; }
t_wait_until 10 ssl_on
tap_is "$(t_sql "SHOW ssl")" on "PostgreSQL has TLS on"

# --- the database, its roles and rights: one command -----------------------------------------
SERVER="host=127.0.0.1 port=$FG_PG_PORT sslmode=require"
PGUSER=postgres "$SETUP" --db fgroles --dir "$TMP/etc" --conninfo "$SERVER" \
	--controlplane "$CP" >"$TMP/setup.log" 2>&1
tap_ok $? "flashgate-db-setup makes the roles and the database, migrates and grants"
tap_diag "$(cat "$TMP/setup.log")"
tap_is "$(stat -c %a "$TMP/etc/pgpass" "$TMP/etc/pgpass-owner" "$TMP/etc/pgpass-shop" | sort -u)" \
	600 "its three passfiles have mode 0600"
tap_is "$(cut -d: -f3,4 "$TMP/etc/pgpass" | paste -sd' ')" \
	"fgroles:flashgate_controlplane fgroles:flashgate_order_writer" \
	"the daemons' passfile holds their two roles only"
ps -eo args | grep -F -f <(cut -d: -f5 "$TMP/etc/pgpass"{,-owner,-shop} | grep .) >/dev/null
tap_ok $((! $?)) "no password is on a command line"
PSQL() { # ROLE PASSFILE SQL: psql as ROLE over TLS
	PGPASSFILE=$2 psql "$SERVER dbname=fgroles user=$1" -XAtq -v ON_ERROR_STOP=1 -c "$3" 2>&1
}
q() { psql -h "$FG_PG_HOST" -p "$FG_PG_PORT" -U postgres -d fgroles -XAtq -c "$1"; }
tap_is "$(q "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = 'fgroles'")/$(q \
	"SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = 'public'")" \
	flashgate_owner/flashgate_owner "the database and every table belong to the owner role"
sslmode_off=$(PGPASSFILE=$TMP/etc/pgpass psql "host=127.0.0.1 port=$FG_PG_PORT sslmode=disable \
dbname=fgroles user=flashgate_controlplane" -XAtq -c "SELECT 1" 2>&1)
grep -q "rejects connection.*no encryption" <<<"$sslmode_off"
tap_ok $? "a connection without TLS is rejected: ${sslmode_off//$'\n'/ }"
# The migrations' owner is the only one that changes the schema.
out=$(PSQL flashgate_controlplane "$TMP/etc/pgpass" "CREATE TABLE x (i int)")
grep -q "permission denied for schema public" <<<"$out"
tap_ok $? "the control plane's role cannot create a table: ${out//$'\n'/ }"

# --- the daemons as their roles, over TLS, Redis with a password -----------------------------
CP_CI="$SERVER dbname=fgroles user=flashgate_controlplane passfile=$TMP/etc/pgpass"
OW_CI="$SERVER dbname=fgroles user=flashgate_order_writer passfile=$TMP/etc/pgpass"
: >"$TMP/cp.log"
t_cp_up "${REDIS_AUTH[@]}" -s "postgres.conninfo=$CP_CI"
tap_ok $? "the control plane starts as its role (the schema up to date: no migration to apply)"
"$OW" "${T_REDIS[@]}" "${REDIS_AUTH[@]}" -s "postgres.conninfo=$OW_CI" \
	-s "order_writer.push_endpoint=$T_PULL" -s order_writer.max_rate=0 \
	-s order_writer.sweep_interval=1s >"$TMP/ow.log" 2>&1 &
OW_PID=$!
fg_wait_line "$TMP/ow.log" 'consumer .* of group' "$OW_PID" 20
tap_ok $? "the order writer starts as its role"
tap_is "$(q "SELECT count(*) FROM pg_stat_ssl JOIN pg_stat_activity USING (pid)
	WHERE ssl AND usename IN ('flashgate_controlplane', 'flashgate_order_writer')
	GROUP BY usename HAVING count(*) > 0" | wc -l)" 2 "both connect over TLS (pg_stat_ssl)"
clients=$(r client list)
tap_is "$(grep -vc 'user=flashgate ' <<<"$clients")/$(($(wc -l <<<"$clients") >= 3))" 0/1 \
	"both daemons are clients of Redis, as the ACL user flashgate like every other client"

now=$(date +%s)
ctl event create "$EV" --name "roles" --stock "$STOCK" --starts-at $((now - 60)) \
	--ends-at $((now + 3600)) --pay-window 10s && ctl event preheat "$EV" && ctl event open "$EV"
tap_ok $? "event $EV created, preheated and opened by the control plane's role"
"$FEED" --push "$T_PULL" --sub "$T_PUB" --event "$EV" --users 1-20 --dp 61 --batch 5 \
	--timeout-ms 20000 >"$TMP/feed" 2>&1
tap_is "$(t_field "$TMP/feed" reserved)" "$STOCK" "20 buyers for $STOCK items: $STOCK reserved"
orders_in() { [ "$(q "SELECT count(*) FROM orders WHERE event_id = $EV")" = "$STOCK" ]; }
t_wait_until 30 orders_in
tap_ok $? "the order writer's role wrote the $STOCK orders"

# The shop pays one order, as its role, through flashgate_pay().
oid=$(q "SELECT min(id) FROM orders WHERE event_id = $EV")
uid=$(q "SELECT user_id FROM orders WHERE id = $oid")
tap_is "$(PSQL flashgate_shop "$TMP/etc/pgpass-shop" "SELECT flashgate_pay($oid)")" paid \
	"the shop's role pays order $oid with flashgate_pay()"
t_wait_until 20 sh -c "redis-cli --user flashgate -s '$FG_REDIS_SOCK' hget 'fg:{$EV}:result' $uid |
	grep -q '^P:'"
tap_ok $? "the payment reaches the buyer's result in Redis (the order writer's role read it)"
tap_is "$(PSQL flashgate_shop "$TMP/etc/pgpass-shop" \
	"SELECT count(*) FROM orders WHERE event_id = $EV")" \
	"$STOCK" "the shop's role reads orders"
out=$(PSQL flashgate_shop "$TMP/etc/pgpass-shop" \
	"UPDATE orders SET status = 'paid', paid_at = now() WHERE event_id = $EV AND status = 'pending'")
grep -q "permission denied for table orders" <<<"$out"
tap_ok $? "the shop's role cannot UPDATE orders itself: ${out//$'\n'/ }"
out=$(PSQL flashgate_shop "$TMP/etc/pgpass-shop" "SELECT count(*) FROM events")
grep -q "permission denied for table events" <<<"$out"
tap_ok $? "nor read anything but orders: ${out//$'\n'/ }"

# The order writer's role: orders yes, events no.
for sql in "UPDATE events SET state = 'closed' WHERE id = $EV" "DELETE FROM events WHERE id = $EV" \
	"INSERT INTO events (id, name, starts_at, ends_at, pay_window_s) VALUES (99, 'x', now(), \
now() + interval '1 hour', 60)" "UPDATE stock SET initial = 0" "SELECT flashgate_pay($oid + 1)"; do
	out=$(PSQL flashgate_order_writer "$TMP/etc/pgpass" "$sql")
	grep -qE "permission denied for (table|function)" <<<"$out"
	tap_ok $? "the order writer's role cannot: ${sql%% WHERE*} ($out)"
done
tap_is "$(q "SELECT state FROM events WHERE id = $EV")" open "event $EV is as it was"

# The unpaid orders expire (10 s): the order writer's role expires them and returns the stock.
expired() {
	[ "$(q "SELECT count(*) FROM stock_releases r JOIN orders o ON o.id = r.order_id
		WHERE o.event_id = $EV AND o.status = 'expired' AND r.applied_at IS NOT NULL")" = \
		$((STOCK - 1)) ]
}
t_wait_until 40 expired
tap_ok $? "the $((STOCK - 1)) unpaid orders expired and their stock went back to Redis"
tap_is "$(q "SELECT available FROM stock WHERE event_id = $EV")/$(r get "fg:{$EV}:stock")" \
	"$((STOCK - 1))/$((STOCK - 1))" "stock: $((STOCK - 1)) available again in PostgreSQL and Redis"
tap_is "$(cat "$TMP/cp.log" "$TMP/ow.log" | grep -ciE "permission denied")" 0 \
	"neither daemon met a permission error"
tap_done
