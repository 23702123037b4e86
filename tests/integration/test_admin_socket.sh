#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The admin socket never holds up decisions, and survives restarts of PostgreSQL and Redis:
# - while one admin client sends its request a byte a second and another never reads its large
#   answer, a stand-in data plane (tests/peer/fg_feed) has every reservation decided; other
#   admin clients are answered meanwhile, several at once; both slow clients are cut off at
#   controlplane.admin_timeout with one log line each; an over-long request line is refused;
# - after PostgreSQL is restarted (a crash), and after Redis is, the first admin command
#   answers, a read and a change alike; a change whose connection breaks while it runs
#   (pg_terminate_backend() on the control plane's session as it waits on a lock) is made
#   once, not refused.
# Real Redis and PostgreSQL from scripts/services; the real control plane.
#
# usage: test_admin_socket.sh CONTROLPLANE FLASHGATECTL FG_FEED
set -uo pipefail

CP=$1 CTL=$2 FEED=$3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DEADLINE_S=40 # controlplane.admin_timeout here: far longer than the feed needs
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
t_begin admin
t_services_up "$TMP/svc"
T_CP=$CP T_CTL=$CTL T_CTL_OPTS=(--timeout 50s)
t_cp_up -s "controlplane.admin_timeout=${DEADLINE_S}s" || tap_bail "the control plane is ready"
tap_ok 0 "the control plane is ready"
SOCK=$T_ADMIN
LOG=$TMP/cp.log

# Every admin command of the test is bounded: a control plane that hangs fails it, not the run.
field() { # PYTHON-EXPRESSION on the answer "a": reads one JSON answer on stdin
	python3 -c "import json, sys; a = json.load(sys.stdin); print($1)" 2>/dev/null || echo '?'
}

ctl event create 5 --name "slow clients" --stock 100000 --starts-at 2026-01-01T00:00:00Z \
	--ends-at 2036-01-01T00:00:00Z --pay-window 15m >/dev/null &&
	ctl event preheat 5 >/dev/null && ctl event open 5 >/dev/null
tap_ok $? "event 5 created, preheated and opened with 100000 items"

# Each of the control plane's PostgreSQL sessions is named for its job (application_name), as
# docs/operations.md lists them: an operator tells them apart in pg_stat_activity.
CP_APPS="flashgate-cp admin,flashgate-cp follow,flashgate-cp health,flashgate-cp loop"
CP_APPS+=",flashgate-cp sampler"
cp_sessions() {
	t_sql "SELECT string_agg(DISTINCT application_name, ',' ORDER BY application_name)
		FROM pg_stat_activity WHERE application_name LIKE 'flashgate-cp %'"
}
cp_sessions_all() { [ "$(cp_sessions)" = "$CP_APPS" ]; }
t_wait_until 20 cp_sessions_all
tap_is "$(cp_sessions)" "$CP_APPS" \
	"the control plane's sessions are named for their jobs in pg_stat_activity"

# A large answer: device rules of 63 bytes (about 130 bytes each in the answer) make `rules
# list` longer than what the kernel buffers for one Unix socket (net.core.wmem_default: 212992
# on Debian, whence at least 1,800), so a client that never reads it leaves most of it
# unwritten. A host whose buffers are larger than the longest answer (256 KiB) fails the check
# below and says so.
WMEM=$(cat /proc/sys/net/core/wmem_default)
N_RULES=$((WMEM / 128 + 100))
[ "$N_RULES" -ge 1800 ] || N_RULES=1800
t_sql "INSERT INTO rules (kind, value) SELECT 'device', lpad(i::text, 63, 'd')
	FROM generate_series(1, $N_RULES) AS i" &&
	tap_ok 0 "$N_RULES rules inserted" || tap_ok 1 "$N_RULES rules inserted"
ANSWER=$(ctlj rules list | wc -c)
[ "$ANSWER" -gt "$WMEM" ] && [ "$ANSWER" -le $((256 * 1024)) ]
tap_ok $? "rules list answers $ANSWER bytes: more than a socket buffers ($WMEM), within 256 KiB"

# The slow clients. "reader never": sends `rules list` and never reads; "trickle": sends a
# 60-byte line a byte a second. Each prints "open" when its connection is up and "closed" when
# the control plane closed it (the trickler notices at its next byte).
python3 - "$SOCK" >"$TMP/never.out" 2>&1 <<'EOF' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"rules list\n")
print("open", flush=True)
time.sleep(600)
EOF
NEVER=$!
T_PIDS+=("$NEVER")
python3 - "$SOCK" >"$TMP/trickle.out" 2>&1 <<'EOF' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
print("open", flush=True)
try:
    for b in b"event list" + b" " * 49 + b"\n":
        s.send(bytes([b]))
        time.sleep(1)
    print("sent the whole line", flush=True)
except OSError:
    print("closed", flush=True)
time.sleep(600)
EOF
TRICKLE=$!
T_PIDS+=("$TRICKLE")
for _ in $(seq 50); do
	grep -q open "$TMP/never.out" && grep -q open "$TMP/trickle.out" && break
	sleep 0.1
done
sleep 1 # the control plane has accepted both and is writing to / reading from them

# A sale decided at full speed meanwhile: 20,000 reservations of one stand-in data plane.
"$FEED" --push "$T_PULL" --sub "$T_PUB" --event 5 \
	--users 1-20000 --dp 7 --batch 100 --timeout-ms 15000 >"$TMP/feed.out" 2>&1
rc=$?
echo "# feed: $(cat "$TMP/feed.out")"
tap_ok $rc "all 20000 reservations got a verdict while both slow clients were connected"
tap_is "$(grep -o 'reserved=[0-9]*' "$TMP/feed.out")" reserved=20000 "every one was reserved"
STATS=$(ctlj stats)
tap_is "$(field 'a["admin"]["open"]' <<<"$STATS")" 3 \
	"stats answered meanwhile: 3 admin connections open (the two slow ones and its own)"
tap_is "$(field 'a["decisions"]["reserved"]' <<<"$STATS")" 20000 "stats: 20000 decided reserved"
tap_is "$(grep -c 'admin: client' "$LOG")" 0 "neither slow client was cut off yet"

# Several clients at once.
SHOWS=()
for i in $(seq 8); do
	ctlj event show 5 >"$TMP/show$i.out" &
	SHOWS+=($!)
done
wait "${SHOWS[@]}"
good=0
for i in $(seq 8); do
	[ "$(field 'a["ok"]' <"$TMP/show$i.out" 2>/dev/null)" = True ] && good=$((good + 1))
done
tap_is $good 8 "8 clients at once, beside the slow ones: each answered"

# A request line over 4096 bytes: refused, closed.
LONG=$(python3 - "$SOCK" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
try:
    s.sendall(b"event list" + b" " * 5000 + b"\n")
except OSError:
    pass
print(s.makefile().readline().strip())
EOF
)
echo "# $LONG"
[[ $LONG == *'"ok":false'*'request line too long'* ]]
tap_ok $? "a request line over 4096 bytes is refused: request line too long"
tap_is "$(grep -c 'longer than 4096 bytes' "$LOG")" 1 "... and logged once"

# Both slow clients are cut off at the deadline, each with one log line.
for _ in $(seq $((DEADLINE_S * 10 + 200))); do
	[ "$(grep -c 'admin: client pid .* within' "$LOG")" -ge 2 ] && break
	sleep 0.1
done
grep 'admin: client pid' "$LOG" | sed 's/^/# /'
tap_is "$(grep -c "did not read its answer within ${DEADLINE_S}000 ms" "$LOG")" 1 \
	"the client that never read is closed at the deadline, logged once"
tap_is "$(grep -c "did not send a whole request line within ${DEADLINE_S}000 ms" "$LOG")" 1 \
	"the client that sent a byte a second is closed at the deadline, logged once"
tap_is "$(ctlj stats | field 'a["admin"]["timed_out"]')" 2 "stats: admin timed_out 2"
kill "$NEVER" "$TRICKLE" 2>/dev/null

# PostgreSQL restarted (a crash, then recovery): the first command answers, a read and a change.
pg_restart() {
	"$ROOT/scripts/services" pg-kill "$TMP/svc" >/dev/null &&
		"$ROOT/scripts/services" pg-start "$TMP/svc" >/dev/null
}
pg_restart
tap_ok $? "PostgreSQL killed and started again"
A=$(ctlj event show 5)
echo "# $A"
tap_is "$(field 'a["ok"]' <<<"$A")" True "after the restart, the first event show answers"
pg_restart
tap_ok $? "PostgreSQL killed and started again"
A=$(ctlj event close 5)
echo "# $A"
tap_is "$(field 'a["ok"]' <<<"$A")" True "after the restart, the first event close answers"
tap_is "$(t_sql "SELECT state FROM events WHERE id = 5")" closed "... and the event is closed"

# Redis restarted three times: each time the first command that needs it finds it.
for round in 1 2 3; do
	"$ROOT/scripts/services" redis-kill "$TMP/svc" >/dev/null
	# The control plane notices (its heartbeat) and tries again with a backoff that grows
	# to 2 s: Redis comes back inside such a wait.
	for _ in $(seq 100); do
		[ "$(ctlj stats | field 'a["redis"]["connected"]')" = False ] && break
		sleep 0.1
	done
	sleep 4
	"$ROOT/scripts/services" redis-start "$TMP/svc" >/dev/null
	A=$(ctlj event show 5)
	tap_is "$(field 'type(a["redis"]).__name__' <<<"$A")" dict \
		"Redis restart $round: the first event show reads Redis (not unreachable)"
done

# A command whose connection breaks while it runs: the control plane's session waits on a lock
# held here (LOCK_SQL), is terminated, and the command runs once more on the new connection
# once the lock is gone. Only the admin commands' session is cut, found by its name
# (docs/operations.md "PostgreSQL sessions"): the control plane's other sessions (its loop, the
# follower, the sampler) may wait on the same lock at that moment and are left alone.
ADMIN_APP="flashgate-cp admin"
# cut_while_waiting CUTS LOCK_SQL OUT COMMAND...: prints the sessions terminated, each cut. With
# BYSTANDER set, a psql session named fg-bystander runs that query once the lock is held (its
# output in $TMP/bystander.out), and each cut waits for it to wait on the lock too.
cut_while_waiting() {
	local cuts=$1 lock=$2 out=$3 i by=${BYSTANDER:+x}
	shift 3
	{
		printf 'BEGIN;\n\\o /dev/null\n%s;\n\\o\n' "$lock"
		[ -n "$by" ] && echo "\! (PGAPPNAME=fg-bystander timeout 60 psql" \
			"\"$FG_PG_CONNINFO\" -XAtq -c \"$BYSTANDER\"" \
			">\"$TMP/bystander.out\" 2>&1 &)"
		echo "\! (timeout 60 \"$CTL\" --socket \"$SOCK\" --timeout 50s --json $* >\"$out\" 2>&1 &)"
		for i in $(seq "$cuts"); do
			cat <<EOF
DO \$\$ BEGIN
	FOR i IN 1..600 LOOP
		PERFORM pg_stat_clear_snapshot();
		EXIT WHEN EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND application_name = '$ADMIN_APP')
			AND ('$by' = '' OR EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND application_name = 'fg-bystander'));
		PERFORM pg_sleep(0.05);
	END LOOP;
END \$\$;
SELECT count(pg_terminate_backend(pid, 10000)) FROM pg_stat_activity
	WHERE wait_event_type = 'Lock' AND application_name = '$ADMIN_APP';
EOF
		done
		echo "COMMIT;"
	} | t_sql 2>&1 | tr '\n' ' ' | sed 's/ $//'
	for _ in $(seq 100); do [ -s "$out" ] && break; sleep 0.1; done
}
retried() { # COMMAND-NAME LINE: log lines after LINE that say COMMAND ran once more
	tail -n "+$(($2 + 1))" "$LOG" | grep -c "admin: $1: a connection was lost during the command"
}

# A read: event show waits behind a table lock.
mark=$(wc -l <"$LOG")
# Another session (as the control plane's loop or follower would) reads events then and waits
# on the same lock: it is not cut, and reads once the lock is gone.
tap_is "$(BYSTANDER="SELECT count(*) FROM events WHERE id = 5" cut_while_waiting 1 \
	"LOCK TABLE events IN ACCESS EXCLUSIVE MODE" "$TMP/show5.out" event show 5)" 1 \
	"the control plane's session was terminated as event show waited"
for _ in $(seq 100); do [ -s "$TMP/bystander.out" ] && break; sleep 0.1; done
tap_is "$(cat "$TMP/bystander.out")" 1 "... and only it: another session waiting then read"
A=$(cat "$TMP/show5.out")
echo "# $A"
tap_is "$(field 'a["event"]["id"]' <<<"$A")" 5 "event show answers after its connection broke"
tap_is "$(retried "event show" "$mark")" 1 "the control plane logged that it read once more"

# A change that is not repeatable as it is: the second run finds whether the first took effect.
ctl event create 6 --name "lost under a close" --stock 10 --starts-at 2026-01-01T00:00:00Z \
	--ends-at 2036-01-01T00:00:00Z --pay-window 15m >/dev/null
tap_ok $? "event 6 created"
mark=$(wc -l <"$LOG")
tap_is "$(cut_while_waiting 1 "SELECT 1 FROM events WHERE id = 6 FOR UPDATE" "$TMP/close6.out" \
	event close 6)" 1 "the control plane's session was terminated as event close waited"
A=$(cat "$TMP/close6.out")
echo "# $A"
tap_is "$(field 'a["ok"]' <<<"$A")" True "event close 6 answers ok after its connection broke"
tap_is "$(t_sql "SELECT state FROM events WHERE id = 6")" closed "... and event 6 is closed"
tap_is "$(retried "event close" "$mark")" 1 "the control plane logged that it ran it once more"

# The change is made while the second run waits: it finds it in place and says so (here this
# test's own session closes event 8 while the control plane waits on the row).
ctl event create 8 --name "closed meanwhile" --stock 10 --starts-at 2026-01-01T00:00:00Z \
	--ends-at 2036-01-01T00:00:00Z --pay-window 15m >/dev/null
tap_ok $? "event 8 created"
tap_is "$(cut_while_waiting 1 "UPDATE events SET state = 'closed' WHERE id = 8" \
	"$TMP/close8.out" event close 8)" 1 \
	"the control plane's session was terminated as event close 8 waited"
A=$(cat "$TMP/close8.out")
echo "# $A"
tap_is "$(field 'a["ok"], a["event"]["state"], "found in place" in a["note"]' <<<"$A")" \
	"True closed True" "event close 8 answers ok, closed, with a note that it was found in place"

# Lost twice: the second run breaks as well; the answer says it is not known whether the
# change took effect (here neither run did: the lock held both).
ctl event create 7 --name "lost twice" --stock 10 --starts-at 2026-01-01T00:00:00Z \
	--ends-at 2036-01-01T00:00:00Z --pay-window 15m >/dev/null
tap_ok $? "event 7 created"
tap_is "$(cut_while_waiting 2 "SELECT 1 FROM events WHERE id = 7 FOR UPDATE" "$TMP/close7.out" \
	event close 7)" "1 1" "the control plane's session was terminated twice as event close waited"
A=$(cat "$TMP/close7.out")
echo "# $A"
[[ $A == *'"ok":false'*'event close: the connection was lost during the command, and again'*'whether it took effect is not known'* ]]
tap_ok $? "event close 7 answers that whether it took effect is not known"
tap_is "$(t_sql "SELECT state FROM events WHERE id = 7")" draft "... and event 7 is still a draft"

kill "$CP_PID"
wait "$CP_PID"
tap_is $? 0 "the control plane exits with status 0 on SIGTERM"
CP_PID=
tap_done
