#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# PostgreSQL's clock a minute behind the control plane's (libfaketime runs the control plane's
# wall clock 60 s ahead; NTP not converged on one host, a VM resumed): a sale's end and a sale
# key's retirement, due at once by the control plane's clock, are PostgreSQL's to say by its
# own. The control plane waits for PostgreSQL's clock, asking it every few seconds, instead of
# loading its whole state again every heartbeat until PostgreSQL's clock gets there: a handful
# of reloads, not one a second (stats follow.reloads_sale_end / reloads_key_retire), one log line
# naming the skew, and the key is still removed once PostgreSQL's clock reaches its time
# (docs/operations.md "Timers follow the monotonic clock"). Real Redis and PostgreSQL from
# scripts/services.
#
# usage: test_db_clock_behind.sh CONTROLPLANE FLASHGATECTL
set -uo pipefail

CP=$1 CTL=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
t_begin dbclock
AHEAD_S=60
EV=31
AUTH=00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff
# At most this many reloads for each: the one that finds the time passed, and one more for a
# PostgreSQL clock a few ms behind ours then (the old code: one a heartbeat, 15 and 31 here).
RELOADS_MAX=3

t_services_up "$TMP/svc"
echo "+$AHEAD_S" >"$TMP/wall-offset"
T_CP=$(t_faked "$CP" "$TMP/wall-offset") ||
	tap_bail "libfaketime is installed (scripts/install-deps: faketime)"
T_CTL=$CTL
# A sale key retires purchase_token_ttl + 30 s after it stops being current: 31 s here.
t_cp_up -s controlplane.purchase_token_ttl=1s
tap_ok $? "the control plane is ready, its clock ${AHEAD_S} s ahead (libfaketime)"
faked_now=$("$(t_faked date "$TMP/wall-offset")" +%s)
off=$((faked_now - $(date +%s) - AHEAD_S))
tap_ok "$((off * off <= 4 ? 0 : 1))" "  date under the same libfaketime is ${AHEAD_S} s ahead"

T_CTL_OUT=$TMP/ctl.out
# follow N: the number N of stats' follow section.
follow() { t_stat follow "$1"; }
# Times by PostgreSQL's clock (the test's: same host, not faked), in Unix ms.
pg_ms() { t_sql "SELECT floor(extract(epoch FROM now()) * 1000)::bigint"; }
now=$(date +%s)
ctl keys auth-set 1 <<<"$AUTH" && ctl keys rotate && ctl keys rotate &&
	ctl event create "$EV" --name "ends soon" --stock 10 --starts-at $((now - 60)) \
		--ends-at $((now + 15)) --pay-window 1m
tap_ok $? "sale key 1 rotated out (retires in 31 s), event $EV ends in 15 s (PostgreSQL's clock)"
retire_ms=$(t_sql "SELECT floor(extract(epoch FROM retired_at) * 1000)::bigint + 31000
	FROM keys WHERE kind = 'sale' AND kid = 1")
tap_diag "key 1 retires at $retire_ms, PostgreSQL's clock says $(pg_ms) now"

# --- the sale's end: due by the control plane's clock at once, by PostgreSQL's in 15 s --------
key1_left() { t_sql "SELECT count(*) FROM keys WHERE kind = 'sale' AND kid = 1"; }
sale_over() { [ "$(pg_ms)" -gt $(((now + 15) * 1000 + 8000)) ]; }
tap_run "PostgreSQL's clock passes the sale's end (+8 s)" t_wait_until 30 sale_over
tap_is "$(key1_left)" 1 "  sale key 1 is still there: PostgreSQL's clock is not at its time yet"
n=$(follow reloads_sale_end)
tap_ok "$((n >= 1 && n <= RELOADS_MAX ? 0 : 1))" \
	"  the state was loaded again for the sale's end $n time(s) (1..$RELOADS_MAX), not per beat"

# --- the key's retirement: due by the control plane's clock 5 s after its start (the hold) ----
gone() { [ "$(key1_left)" = 0 ]; }
tap_run "sale key 1 is removed once PostgreSQL's clock reaches its time" \
	t_wait_until 45 gone
late_ms=$(($(pg_ms) - retire_ms))
tap_ok "$((late_ms >= 0 && late_ms <= 6500 ? 0 : 1))" \
	"  within 5 s and a heartbeat of it (${late_ms} ms after, by PostgreSQL's clock)"
tap_run "  by the control plane's key retirement (its log)" \
	t_wait_until 5 grep -q "1 retired sale key removed" "$TMP/cp.log"
n=$(follow reloads_key_retire)
tap_ok "$((n >= 1 && n <= RELOADS_MAX ? 0 : 1))" \
	"  the state was loaded again for it $n time(s) (1..$RELOADS_MAX), not each heartbeat"
m=$(curl -s "http://127.0.0.1:$T_METRICS_PORT/metrics")
reloads_metric=$(grep -c "^flashgate_cp_state_reloads_total{cause=\"key_retire\"} $n\$" <<<"$m")
tap_ok "$((reloads_metric == 1 ? 0 : 1))" \
	"  the metrics say the same (flashgate_cp_state_reloads_total{cause=\"key_retire\"} $n)"
waits=$(follow db_clock_waits)
tap_ok "$((waits >= 2 ? 0 : 1))" "  the control plane waited for PostgreSQL's clock ($waits looks)"
behind=$(follow db_clock_behind_ms)
tap_ok "$((behind >= (AHEAD_S - 2) * 1000 && behind <= (AHEAD_S + 2) * 1000 ? 0 : 1))" \
	"  and saw it ${AHEAD_S} s behind (db_clock_behind_ms $behind)"
tap_is "$(grep -c "^flashgate_cp_postgres_clock_behind_ms $behind\$" <<<"$m")" 1 \
	"  metrics: flashgate_cp_postgres_clock_behind_ms $behind"
lines=$(grep -c "PostgreSQL's clock is [0-9]* ms behind the control plane's" "$TMP/cp.log")
tap_ok "$((lines >= 1 && lines <= 2 ? 0 : 1))" \
	"  the log names the skew once a minute at most ($lines line(s) in $SECONDS s)"
tap_diag "$(grep -m 1 "PostgreSQL's clock is" "$TMP/cp.log")"

tap_done
