# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
#
# A streaming standby of the services' PostgreSQL (tests/lib/testlib.sh's t_services_up) for
# tests and benchmarks of docs/ha.md's "PostgreSQL": pg_basebackup -R of the primary into
# $T_TMP/standby, started on a free loopback port as application fgstandby, and the primary's
# commits made synchronous to it. Source it after testlib.sh; sb_stop is added to T_CLEANUP.
#
# sb_up: makes and starts the standby, waits until it is synchronous (tap checks). Sets SB (its
# directory and socket), SB_PORT, SB_HA (a conninfo listing both hosts, read-write).
# sb_sql QUERY: the rows of QUERY on the standby. sb_sync on|off: the primary's commits wait for
# the standby or not (synchronous_standby_names, reloaded; the standby streams either way).

PGBIN=${FG_PG_BIN:-/usr/lib/postgresql/15/bin}
[ -x "$PGBIN/pg_ctl" ] || PGBIN=$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
SB_UP=''

sb_as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
sb_sql() { psql "host=$SB port=$SB_PORT dbname=flashgate user=postgres" -XAtq -c "$1"; }
sb_stop() {
	[ -z "$SB_UP" ] || sb_as_pg "$PGBIN/pg_ctl" -D "$SB/data" -m immediate -w stop >/dev/null 2>&1
	SB_UP=''
}
sb_state() {
	t_sql "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'fgstandby'"
}
sb_is_sync() { [ "$(sb_state)" = sync ]; }
sb_is_async() { [ "$(sb_state)" = async ]; }

sb_sync() {
	local names=''
	[ "$1" = off ] || names=fgstandby
	t_sql "ALTER SYSTEM SET synchronous_standby_names = '$names'" &&
		t_sql "SELECT pg_reload_conf()" >/dev/null || return 1
	if [ "$1" = off ]; then t_wait_until 30 sb_is_async; else t_wait_until 30 sb_is_sync; fi
}

sb_up() {
	local rc
	SB=$T_TMP/standby
	mkdir -p "$SB"
	[ "$(id -u)" != 0 ] || chown postgres: "$SB"
	SB_PORT=$(fg_free_ports 1)
	T_CLEANUP+=(sb_stop)
	t_sql "ALTER SYSTEM SET synchronous_standby_names = 'fgstandby'" &&
		t_sql "SELECT pg_reload_conf()" >/dev/null
	tap_ok $? "primary: synchronous_standby_names = 'fgstandby'"
	sb_as_pg "$PGBIN/pg_basebackup" -h 127.0.0.1 -p "$FG_PG_PORT" -U postgres -D "$SB/data" \
		-R -X stream -c fast >"$SB/basebackup.log" 2>&1
	tap_ok $? "standby made with pg_basebackup -R" || tap_diag "$(cat "$SB/basebackup.log")"
	sb_as_pg "$PGBIN/pg_ctl" -D "$SB/data" -l "$SB/postgres.log" -w -t 60 -o \
		"-k $SB -p $SB_PORT -c listen_addresses=127.0.0.1 -c cluster_name=fgstandby -c fsync=off" \
		start >/dev/null
	rc=$?
	[ $rc != 0 ] || SB_UP=1
	tap_ok $rc "standby started on 127.0.0.1:$SB_PORT" || tap_diag "$(tail -20 "$SB/postgres.log")"
	t_wait_until 30 sb_is_sync
	tap_is "$(sb_state)" sync "the standby streams and is synchronous"
	SB_HA="host=127.0.0.1,127.0.0.1 port=$FG_PG_PORT,$SB_PORT dbname=flashgate user=postgres"
	SB_HA+=" target_session_attrs=read-write connect_timeout=3"
}
