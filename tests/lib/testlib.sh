# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# shellcheck disable=SC2034 # T_* variables are for the tests that source this
#
# The tests' shell library: every test script of tests/ sources it (tests/e2e/harness.sh adds the
# data plane's network on top), rather than writing its own TAP, starts or admin helpers. It
# sources scripts/lib.sh (fg_*). Functions:
#
#   TAP          tap_ok RC DESC, tap_is GOT WANT DESC, tap_diag TEXT, tap_run DESC CMD...,
#                tap_skip DESC REASON, tap_bail REASON, tap_done; t_end RC: the end of a test
#                whose lines and plan another program printed (a Python test run by the script)
#   the test     t_begin TAG: no root, "1..0 # SKIP"; else T_TMP (a fresh directory, also TMP)
#                and a cleanup at exit (t_cleanup: T_CLEANUP hooks, the pids in T_PIDS and
#                CP_PID stopped, the services down, T_TMP removed, then t_finish)
#                t_finish: a test that stopped before tap_done fails, naming where
#   services     t_services_up DIR: scripts/services' Redis and PostgreSQL (--fast), their
#                FG_REDIS_* and FG_PG_* variables exported; stopped by t_cleanup; T_REDIS:
#                the daemons' -s options for that Redis (its socket, and the settings check
#                skipped, as its appendfsync no needs: redis.unsafe_settings)
#   control      t_cp_start EXE LOG ADMIN PULL PUB [ARGS...]: flashgate-controlplane on those
#   plane        endpoints and admin socket with the services' Redis and PostgreSQL, metrics off
#                (ARGS: more "-s SECTION.KEY=VALUE", later ones win), its log appended to LOG;
#                sets CP_PID, waits up to 20 s for that pid's ready line
#                t_cp_up [ARGS...]: t_cp_start of $T_CP on the test's own endpoints: T_PULL,
#                T_PUB and T_METRICS_PORT (free loopback ports, picked on the first call),
#                admin socket T_ADMIN ($T_TMP/admin.sock), log $T_TMP/cp.log
#   admin        ctl ARGS..., ctlj ARGS... (--json): flashgatectl $T_CTL on $T_ADMIN with the
#                options T_CTL_OPTS (an array), bounded by $T_CTL_TIMEOUT s (60); the output
#                as it is, or with T_CTL_OUT=diag as TAP comments, =quiet nowhere, =FILE
#                appended to FILE (t_ctl_run ARGS...: the command alone)
#                jget PATH...: from the JSON on stdin, each dotted PATH's value as fg_json
#                prints it (digits index a list), joined by "/" ("" for one absent or null)
#                t_stat SECTION KEY: one number of `ctlj stats` (0 when absent)
#   data         t_field FILE KEY: N of "KEY=N" in FILE (tests/peer/fg_feed's output)
#                t_sql [QUERY]: psql on $FG_PG_CONNINFO (QUERY, else the SQL on stdin),
#                unaligned, tuples only, stopping at the first error
#                t_redis ARGS...: redis-cli on $FG_REDIS_SOCK
#   waiting      t_wait_until TIMEOUT_S CMD...: CMD every 0.1 s until it succeeds (0) or
#                TIMEOUT_S passed (1)
#   draws        t_draw_sale EV NAME STOCK: a drawn sale, its pre-queue at T_DRAW_Q (in 3 s),
#                a draw window of 2 s, its end T_DRAW_END; t_draw_key EV FIELD...: its draw
#                key in Redis; t_draw_stats EV KEY...: its draw in `ctlj stats`; t_draw_done
#                EV SECONDS: wait for its draw_done_at; t_draw_next_wait EV MIN SECONDS: wait
#                for its cursor in Redis at MIN or past (printed); t_feed_ranks LOG: the
#                decided ranks in fg_feed's --log LOG
#   tokens       t_sessions AUTH_HEX FIRST_USER N: N lines "USER SESSION_TOKEN", valid an hour
#                (tests/lib/fgtest.py, from docs/tokens.md)

T_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib.sh
. "$T_LIB_DIR/../../scripts/lib.sh"

tap_n=0
tap_failed=0
T_DONE=
T_RC=1
T_TMP=
T_SVC=
T_PIDS=()
T_CLEANUP=()
T_BAIL_HOOK=
T_CTL_OPTS=()
CP_PID=
# Where a command failed, for t_finish to name when the test stopped early.
T_ERR_AT=
set -o errtrace # the ERR trap in functions too: a failure inside one is named where it is
trap 'T_ERR_AT="line $LINENO: $BASH_COMMAND"' ERR

# tap_ok RC DESCRIPTION: one check; passes when RC is 0.
tap_ok() {
	tap_n=$((tap_n + 1))
	if [ "$1" -eq 0 ]; then
		printf 'ok %d - %s\n' "$tap_n" "$2"
	else
		tap_failed=$((tap_failed + 1))
		printf 'not ok %d - %s\n' "$tap_n" "$2"
	fi
}

# tap_is GOT WANT DESCRIPTION: one check; passes when the two strings are equal.
tap_is() {
	if [ "$1" = "$2" ]; then
		tap_ok 0 "$3"
	else
		tap_ok 1 "$3 (got '$1', want '$2')"
	fi
}

# tap_diag TEXT...: diagnostic lines, not counted.
tap_diag() {
	printf '%s\n' "$*" | sed 's/^/# /'
}

# tap_run DESCRIPTION CMD...: one check; passes when CMD exits 0.
tap_run() {
	local desc=$1 rc=0
	shift
	"$@" || rc=$?
	tap_ok "$rc" "$desc"
}

# tap_skip DESCRIPTION REASON: one check not run ("ok N - DESCRIPTION # SKIP REASON").
tap_skip() {
	tap_n=$((tap_n + 1))
	printf 'ok %d - %s # SKIP %s\n' "$tap_n" "$1" "$2"
}

# tap_done: prints the plan; exits 0 when every check passed (and there was one), 1 otherwise.
tap_done() {
	printf '1..%d\n' "$tap_n"
	T_DONE=1
	T_RC=1
	if [ "$tap_failed" -eq 0 ] && [ "$tap_n" -gt 0 ]; then
		T_RC=0
	fi
	exit "$T_RC"
}

# t_end RC: ends a test whose TAP lines and plan another program printed (e.g. a Python test the
# script ran): exits RC, through the cleanup.
t_end() {
	T_DONE=1
	T_RC=$1
	exit "$1"
}

# tap_bail REASON: stops the test here; the checks not run are not counted, the failure is.
# Runs T_BAIL_HOOK (a command: e.g. show a log) first when it is set.
tap_bail() {
	tap_ok 1 "$1"
	[ -z "$T_BAIL_HOOK" ] || $T_BAIL_HOOK
	tap_done
}

# t_finish: the last word of every EXIT trap, after the test's cleanup. A test that ended
# through tap_done exits as it decided; one that stopped before it (a command failed under
# set -e, a signal, an exit) gets a "not ok" naming where, its plan and exit status 1.
t_finish() {
	if [ -z "$T_DONE" ]; then
		tap_ok 1 "the test ran to its end (it stopped at ${T_ERR_AT:-an exit before tap_done})"
		printf '1..%d\n' "$tap_n"
		exit 1
	fi
	exit "$T_RC"
}

# t_stop_all: runs the T_CLEANUP hooks (last first), stops the pids of T_PIDS (last first) and
# CP_PID (SIGTERM, SIGKILL after 10 s) and the services of T_SVC. Silent; never fails.
t_stop_all() {
	local i
	for ((i = ${#T_CLEANUP[@]} - 1; i >= 0; i--)); do
		${T_CLEANUP[i]} >/dev/null 2>&1 || true
	done
	T_CLEANUP=()
	for ((i = ${#T_PIDS[@]} - 1; i >= 0; i--)); do
		[ -z "${T_PIDS[i]}" ] || fg_stop_pid "${T_PIDS[i]}" 10 >/dev/null 2>&1 || true
	done
	T_PIDS=()
	[ -z "$CP_PID" ] || fg_stop_pid "$CP_PID" 10 >/dev/null 2>&1 || true
	CP_PID=
	[ -z "$T_SVC" ] || "$FG_ROOT/scripts/services" down "$T_SVC" >/dev/null 2>&1 || true
	T_SVC=
}

# t_cleanup: the EXIT trap of t_begin: t_stop_all, T_TMP removed (kept with FG_KEEP_TMP=1),
# t_finish.
t_cleanup() {
	trap - EXIT INT TERM
	t_stop_all
	[ -z "$T_TMP" ] || [ -n "${FG_KEEP_TMP:-}" ] || rm -rf "$T_TMP"
	t_finish
}

# t_need_root: a test that is not run as root prints "1..0 # SKIP needs root" and exits 0.
t_need_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "1..0 # SKIP needs root (PostgreSQL runs as the user postgres; namespaces)"
		exit 0
	fi
}

# t_begin TAG: t_need_root; T_TMP (and TMP) a new directory /tmp/fg-TAG.XXXXXX that the user
# postgres may enter; t_cleanup at exit, SIGTERM and SIGINT.
t_begin() {
	t_need_root
	T_TMP=$(mktemp -d "/tmp/fg-$1.XXXXXX")
	TMP=$T_TMP
	chmod o+x "$T_TMP"
	trap t_cleanup EXIT
	trap 'exit 143' TERM
	trap 'exit 130' INT
}

# t_services_up DIR: scripts/services' Redis and PostgreSQL (--fast: they keep their data across
# their own crashes, not the machine's) in DIR, their settings (FG_REDIS_SOCK, FG_PG_CONNINFO,
# ...) exported; ends the test (tap_bail, the log's end as comments) when they do not start.
# t_cleanup stops them.
t_services_up() {
	T_SVC=$1
	chmod o+x "$(dirname "$1")" # PostgreSQL runs as postgres and lives below it
	if ! "$FG_ROOT/scripts/services" up "$1" --fast >"$1.log" 2>&1; then
		tap_diag "$(tail -20 "$1.log")"
		tap_bail "scripts/services up"
	fi
	eval "$("$FG_ROOT/scripts/services" env "$1")"
	export FG_REDIS_SOCK FG_REDIS_PORT FG_PG_HOST FG_PG_PORT FG_PG_CONNINFO FG_PG_CONNINFO_TCP \
		FG_REDIS_UNSAFE_SETTINGS
	T_REDIS=(-s "redis.socket=$FG_REDIS_SOCK" -s "redis.unsafe_settings=$FG_REDIS_UNSAFE_SETTINGS")
}

# t_cp_start EXE LOG ADMIN PULL PUB [ARGS...]: starts flashgate-controlplane binding PULL and PUB
# (ZeroMQ endpoints), its admin socket ADMIN, metrics off, on the services' Redis and PostgreSQL,
# ARGS after these (later -s settings win); its output appended to LOG (across restarts). Sets
# CP_PID (stopped by t_cleanup). Returns 0 once that pid's ready line is in LOG, 1 when it
# exited first or after 20 s.
t_cp_start() {
	local exe=$1 log=$2 admin=$3 pull=$4 pub=$5
	shift 5
	"$exe" -s "controlplane.pull_endpoint=$pull" -s "controlplane.pub_endpoint=$pub" \
		-s "controlplane.admin_socket=$admin" -s controlplane.metrics_port=0 \
		"${T_REDIS[@]}" -s "postgres.conninfo=$FG_PG_CONNINFO" "$@" \
		>>"$log" 2>&1 &
	CP_PID=$!
	fg_wait_line "$log" "\\[$CP_PID\\] [a-z-]+: ready:" "$CP_PID" 20 && return 0
	tap_diag "$(tail -20 "$log")"
	return 1
}

# t_cp_up [ARGS...]: t_cp_start of the control plane $T_CP with the test's own endpoints: T_PULL
# and T_PUB (ZeroMQ on loopback) and T_METRICS_PORT (its metrics), free ports picked on the first
# call (unless the test set T_PULL and T_PUB itself; metrics then off unless it set
# T_METRICS_PORT too) and kept across restarts; its admin socket T_ADMIN (default
# $T_TMP/admin.sock), its log $T_TMP/cp.log. Returns t_cp_start's status.
t_cp_up() {
	local p
	if [ -z "${T_PULL:-}" ]; then
		mapfile -t p < <(fg_free_ports 3)
		T_PULL=tcp://127.0.0.1:${p[0]} T_PUB=tcp://127.0.0.1:${p[1]} T_METRICS_PORT=${p[2]}
	fi
	T_ADMIN=${T_ADMIN:-$T_TMP/admin.sock}
	t_cp_start "$T_CP" "$T_TMP/cp.log" "$T_ADMIN" "$T_PULL" "$T_PUB" \
		-s "controlplane.metrics_port=${T_METRICS_PORT:-0}" "$@"
}

# t_cp_n N PULL_PORT PUB_PORT [ARGS...]: control plane N of several on one Redis and PostgreSQL
# ($T_CP): t_cp_start with ZeroMQ on loopback ports PULL_PORT and PUB_PORT, its admin socket
# $T_TMP/adminN.sock, its log $T_TMP/cpN.log, controlplane.id 100+N, ARGS after these. Its pid
# goes to T_CP_PIDS[N] and T_PIDS (stopped by t_cleanup). Returns t_cp_start's status.
T_CP_PIDS=()
t_cp_n() {
	local n=$1 pull=$2 pub=$3 rc
	shift 3
	t_cp_start "$T_CP" "$T_TMP/cp$n.log" "$T_TMP/admin$n.sock" "tcp://127.0.0.1:$pull" \
		"tcp://127.0.0.1:$pub" -s "controlplane.id=$((100 + n))" "$@"
	rc=$?
	T_CP_PIDS[n]=$CP_PID
	T_PIDS+=("$CP_PID")
	CP_PID=
	return $rc
}

# t_ctl_run ARGS...: flashgatectl ($T_CTL) ARGS on the admin socket $T_ADMIN with the options
# T_CTL_OPTS, ended after T_CTL_TIMEOUT seconds (60); flashgatectl's status (124 on the timeout).
t_ctl_run() {
	timeout --foreground "${T_CTL_TIMEOUT:-60}" "$T_CTL" --socket "$T_ADMIN" \
		${T_CTL_OPTS[@]+"${T_CTL_OPTS[@]}"} "$@"
}

# ctl ARGS...: t_ctl_run ARGS, its output by T_CTL_OUT: unset or empty as it is, "diag" as TAP
# comments, "quiet" nowhere, else appended to that file (with its errors). Returns
# flashgatectl's status.
ctl() {
	case ${T_CTL_OUT:-} in
	'') t_ctl_run "$@" ;;
	diag)
		t_ctl_run "$@" 2>&1 | sed 's/^/# /'
		return "${PIPESTATUS[0]}"
		;;
	quiet) t_ctl_run "$@" >/dev/null 2>&1 ;;
	*) t_ctl_run "$@" >>"$T_CTL_OUT" 2>&1 ;;
	esac
}

# ctlj ARGS...: t_ctl_run --json ARGS, the answer on stdout.
ctlj() {
	t_ctl_run --json "$@"
}

# jget PATH...: from the JSON document on stdin, each dotted PATH's value as scripts/lib.sh's
# fg_json prints it ("event.seed_sha256", "rules.0.kind": digits index a list; true/false; ""
# for a path that is absent or null, and for every path when stdin is not JSON), joined by "/".
jget() {
	local doc
	doc=$(cat)
	fg_json <(printf '%s' "$doc") "$@" | paste -sd/ -
}

# t_stat SECTION KEY: the number KEY of SECTION in `flashgatectl --json stats` (0 when absent).
t_stat() {
	local v
	v=$(ctlj stats | jget "$1.$2")
	printf '%s\n' "${v:-0}"
}

# t_sleep_until UNIX_S: sleeps until that wall-clock second (at once when it is past).
t_sleep_until() {
	local now_ms
	now_ms=$(date +%s%3N)
	[ "$now_ms" -ge $(($1 * 1000)) ] || sleep "$(python3 -c "print(($1*1000 - $now_ms)/1000)")"
}

# t_field FILE KEY: N of the first "KEY=N" in FILE (a word of tests/peer/fg_feed's output).
t_field() {
	grep -oE "(^| )$2=[0-9]+" "$1" | head -n 1 | cut -d= -f2
}

# t_feed OUT EVENT USERS DP [ARGS...]: tests/peer/fg_feed ($T_FEED) sends USERS' reservations
# (a range "A-B") of EVENT as the data plane DP, in batches of 500, to the control plane's
# T_PULL and T_PUB, and waits for their answers T_FEED_TIMEOUT_MS (default 60000) at most; ARGS
# after these (a later --timeout-ms wins); its output in $T_TMP/OUT. Returns fg_feed's status.
t_feed() {
	local out=$1 ev=$2 users=$3 dp=$4
	shift 4
	"$T_FEED" --push "$T_PULL" --sub "$T_PUB" --event "$ev" --users "$users" --dp "$dp" \
		--batch 500 --timeout-ms "${T_FEED_TIMEOUT_MS:-60000}" "$@" >"$T_TMP/$out" 2>&1
}

# t_draw_done EVENT SECONDS: waits until PostgreSQL holds EVENT's draw done (draw_done_at);
# returns 1 when it does not after SECONDS.
t_draw_done() {
	local deadline=$((SECONDS + $2))
	until [ "$(t_sql "SELECT draw_done_at IS NOT NULL FROM events WHERE id = $1")" = t ]; do
		((SECONDS < deadline)) || return 1
		sleep 0.1
	done
}

# t_draw_sale EV NAME STOCK [LEAD_S [WINDOW_S]]: creates, preheats and opens event EV
# (flashgatectl), a drawn sale of STOCK items: its pre-queue opens at T_DRAW_Q (set here: LEAD_S
# seconds from now, default 3, a unix second), the sale a second later, the draw after a draw
# window of WINDOW_S seconds (default 2); it ends at T_DRAW_END (set here: in an hour), orders
# are paid in 15 minutes. Returns the first failing flashgatectl's status (0: all three done).
t_draw_sale() {
	local now
	now=$(date +%s)
	T_DRAW_Q=$((now + ${4:-3})) T_DRAW_END=$((now + 3600))
	ctl event create "$1" --name "$2" --stock "$3" --queue-opens-at $T_DRAW_Q \
		--starts-at $((T_DRAW_Q + 1)) --draw-window "${5:-2}s" --ends-at $T_DRAW_END \
		--pay-window 15m && ctl event preheat "$1" && ctl event open "$1"
}

# t_draw_key EV FIELD...: those fields of EV's draw key in Redis (fg:{EV}:draw: state, n, next,
# served), joined by "/" ("" for one absent).
t_draw_key() {
	local ev=$1
	shift
	t_redis hmget "fg:{$ev}:draw" "$@" | paste -sd/ -
}

# t_draw_next_wait EV MIN SECONDS: waits until EV's draw cursor in Redis (fg:{EV}:draw's next) is
# MIN or more, looked at every 10 ms (a test acts between two rounds of decisions), and prints the
# cursor last seen; returns 1 when it is not MIN or more after SECONDS.
t_draw_next_wait() {
	local deadline=$((SECONDS + $3)) nx
	while nx=$(t_draw_key "$1" next); [ -z "$nx" ] || [ "$nx" -lt "$2" ]; do
		if ((SECONDS >= deadline)); then
			echo "$nx"
			return 1
		fi
		sleep 0.01
	done
	echo "$nx"
}

# t_draw_stats EV KEY...: those keys of EV's draw in `flashgatectl --json stats` ("draws": phase,
# decided, rounds, ...), joined by "/"; "-" when stats shows no draw of EV (or no answer).
t_draw_stats() {
	ctlj stats | python3 -c 'import json, sys
ev, keys = int(sys.argv[1]), sys.argv[2:]
try:
    d = [x for x in json.load(sys.stdin)["draws"] if x["event"] == ev]
except (ValueError, KeyError, TypeError):
    d = []
print("/".join(str(d[0][k]) for k in keys) if d else "-")' "$@"
}

# t_window_hold EV: EV's sale window key in Redis says "held" (reserve.lua decides nothing of
# EV, a draw's decisions wait) until t_window_release EV: set again about every millisecond by a
# redis-cli in repeat mode (at most three minutes), for a control plane sets the key from
# PostgreSQL's row after each reload of the events (any draw's write to PostgreSQL brings one),
# so that a key set once does not stay held. Its pid in T_WINDOW_HOLD[EV] (and T_PIDS); returns
# 1 when the key does not say held within 5 s.
T_WINDOW_HOLD=()
t_window_hold() {
	redis-cli -s "$FG_REDIS_SOCK" -r 180000 -i 0.001 set "fg:{$1}:window" held >/dev/null &
	T_WINDOW_HOLD[$1]=$!
	T_PIDS+=("$!")
	t_wait_until 5 t_window_held "$1"
}

# t_window_held EV: whether EV's sale window key in Redis says held.
t_window_held() {
	[ "$(t_redis get "fg:{$1}:window")" = held ]
}

# t_window_release EV: stops t_window_hold EV's redis-cli (the key still says held: the caller
# sets it next).
t_window_release() {
	[ -n "${T_WINDOW_HOLD[$1]:-}" ] || return 0
	kill "${T_WINDOW_HOLD[$1]}" 2>/dev/null
	wait "${T_WINDOW_HOLD[$1]}" 2>/dev/null
	T_WINDOW_HOLD[$1]=
}

# t_feed_ranks LOG: the ranks of the decisions (the results not "queued") in tests/peer/fg_feed's
# --log LOG, in increasing order, one a line.
t_feed_ranks() {
	awk '$1 == "result" && $3 != "queued" { print $4 }' "$1" | sort -n
}

# t_sql [QUERY]: the rows of QUERY (without one: of the SQL on stdin) on the services'
# PostgreSQL, unaligned, tuples only; psql's status (non-zero at the first error).
t_sql() {
	if [ $# -gt 0 ]; then
		psql "$FG_PG_CONNINFO" -XAtq -v ON_ERROR_STOP=1 -c "$1"
	else
		psql "$FG_PG_CONNINFO" -XAtq -v ON_ERROR_STOP=1
	fi
}

# t_redis ARGS...: redis-cli on the services' Redis socket.
t_redis() {
	redis-cli -s "$FG_REDIS_SOCK" "$@"
}

# t_wait_until TIMEOUT_S CMD...: runs CMD every 0.1 s until it succeeds (returns 0) or TIMEOUT_S
# seconds have passed (returns 1).
t_wait_until() {
	local deadline=$((SECONDS + $1))
	shift
	while ! "$@"; do
		((SECONDS < deadline)) || return 1
		sleep 0.1
	done
}

# t_faked EXE OFFSET_FILE: prints the path of a script in $T_TMP that runs EXE (same pid: exec)
# with its wall clock shifted by the offset in OFFSET_FILE (libfaketime's: seconds, "+0", "-3600"),
# read again every second; CLOCK_MONOTONIC is not faked. Fails when Debian's libfaketime
# (scripts/install-deps: faketime) is not installed.
t_faked() {
	local lib script
	lib=$(compgen -G '/usr/lib/*/faketime/libfaketimeMT.so.1' | head -n 1) && [ -r "$lib" ] ||
		return 1
	script=$T_TMP/faked-$(basename "$1")
	cat >"$script" <<EOF
#!/bin/sh
exec env LD_PRELOAD=$lib FAKETIME_TIMESTAMP_FILE=$2 FAKETIME_CACHE_DURATION=1 \\
	FAKETIME_DONT_FAKE_MONOTONIC=1 "$1" "\$@"
EOF
	chmod +x "$script"
	echo "$script"
}

# t_sessions AUTH_HEX FIRST_USER N: prints N lines "USER SESSION_TOKEN" for users FIRST_USER..,
# valid for an hour, minted as the shop's login service does (docs/tokens.md).
t_sessions() {
	python3 - "$T_LIB_DIR" "$@" <<'PY'
import sys, time
sys.path.insert(0, sys.argv[1])
import fgtest
key, first, n = bytes.fromhex(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
exp = int(time.time()) + 3600
for u in range(first, first + n):
    print(u, fgtest.session(key, 1, u, exp))
PY
}
