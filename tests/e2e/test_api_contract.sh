#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# docs/api.md's promises against the real thing (issue 16 item 13): the data plane on the veth,
# the real control plane with Redis and PostgreSQL, the events each table's rows need, and then
# tests/e2e/api_contract.py, which reads the page's contract tables and checks every row from the
# client's namespace (a row it cannot bring about is a # SKIP with the reason, never a pass).
#
# usage: test_api_contract.sh DATAPLANE CONTROLPLANE FLASHGATECTL ORDER_WRITER
# (FG_API_MD: another page to check, e.g. a changed copy, to see a broken promise fail)
set -euo pipefail
. "$(dirname "$0")/harness.sh"

CP_EXE=${2:-}
CTL_EXE=${3:-}
OW_EXE=${4:-}
ORIGIN=https://shop.example
AUTH_KEY=00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff
LIMITS="ip 1000/2000 user 10/20 device 10/20 forward 10000"

mapfile -t PORTS < <(fg_free_ports 3)
PULL_PORT=${PORTS[0]} PUB_PORT=${PORTS[1]} METRICS_PORT=${PORTS[2]}
E2E_DP_ARGS=(-s "bridge.push_endpoint=tcp://127.0.0.1:$PULL_PORT"
	-s "bridge.sub_endpoint=tcp://127.0.0.1:$PUB_PORT" -s "admission.cors_origin=$ORIGIN")
E2E_TOOLS=(redis-cli psql nsenter)
e2e_begin api "$1"

[ -x "$CP_EXE" ] && [ -x "$CTL_EXE" ] && [ -x "$OW_EXE" ] ||
	tap_bail "control plane, flashgatectl and order writer given"
t_services_up "$E2E_TMP/svc"
T_CP=$CP_EXE T_CTL=$CTL_EXE T_CTL_OUT=$E2E_TMP/ctl.log
T_PULL=tcp://127.0.0.1:$PULL_PORT T_PUB=tcp://127.0.0.1:$PUB_PORT T_METRICS_PORT=$METRICS_PORT
t_cp_up || tap_bail "control plane ready"
ADMIN=$T_ADMIN
tap_ok 0 "control plane is ready"

FAR=(--starts-at 2026-01-01T00:00:00Z --ends-at 2036-01-01T00:00:00Z --pay-window 15m)
setup() {
	ctl keys auth-set 1 <<<"$AUTH_KEY" && ctl keys rotate && ctl limits set $LIMITS &&
		ctl event create 31 --name "contract open" --stock 1000 "${FAR[@]}" &&
		ctl event create 32 --name "contract other" --stock 1000 "${FAR[@]}" &&
		ctl event create 33 --name "contract later" --stock 10 --starts-at 2035-01-01T00:00:00Z \
			--ends-at 2036-01-01T00:00:00Z --pay-window 15m &&
		ctl event create 34 --name "contract closed" --stock 10 "${FAR[@]}" &&
		ctl event create 35 --name "contract one" --stock 1 "${FAR[@]}" || return 1
	for ev in 31 32 34 35; do ctl event preheat $ev && ctl event open $ev || return 1; done
	ctl event preheat 33 && ctl event open 33 && ctl event close 34
}
setup || { tap_diag "$(tail -20 "$E2E_TMP/ctl.log")"; tap_bail "events, keys and limits set"; }
tap_ok 0 "events 31..35, the auth key, a sale key and the limits are set"
state_is() { # EVENT STATE
	e2e_curl ev "$E2E_BASE/api/v1/events/$1"
	grep -q "\"state\":\"$2\"" "$E2E_TMP/ev.b"
}
tap_run "the data plane has the control plane's events" t_wait_until 20 state_is 34 closed

SRC=
for i in $(seq 100 119); do
	fg_ns_exec ip addr add "198.18.10.$i/24" dev "$FG_CL_IF"
	SRC="$SRC 198.18.10.$i"
done

# The contract itself: its TAP lines go on after ours.
set +e
FG_DP_ADDR=$FG_DP_ADDR FG_ORIGIN=$ORIGIN FG_CTL=$CTL_EXE FG_ADMIN=$ADMIN FG_AUTH_KEY=$AUTH_KEY \
	FG_AUTH_KID=1 FG_EV_OPEN=31 FG_EV_OTHER=32 FG_EV_UP=33 FG_EV_CLOSED=34 FG_EV_SOLD=35 \
	FG_SRC_ADDRS=$SRC FG_LIMITS=$LIMITS FG_HOST_NETNS=/proc/$$/ns/net \
	FG_OW_CMD="'$OW_EXE' -s order_writer.push_endpoint=tcp://127.0.0.1:$PULL_PORT \
-s order_writer.max_rate=0 -s redis.socket=$FG_REDIS_SOCK \
-s redis.unsafe_settings=$FG_REDIS_UNSAFE_SETTINGS -s 'postgres.conninfo=$FG_PG_CONNINFO' \
>>'$E2E_TMP/ow.log' 2>&1" \
	fg_ns_exec python3 "$FG_ROOT/tests/e2e/api_contract.py" "${FG_API_MD:-$FG_ROOT/docs/api.md}" \
	>"$E2E_TMP/contract.tap" 2>"$E2E_TMP/contract.err"
rc=$?
set -e
# Renumber its lines after ours: the harness counts its own.
while IFS= read -r line; do
	case $line in
	"ok "* | "not ok "*)
		verdict=${line%% [0-9]*}
		rest=${line#"$verdict "}
		rest=${rest#* - }
		if [[ $rest == *" # SKIP "* || $rest == *" # TODO "* ]]; then
			# Skipped, or a promise known broken (TAP TODO): reported, not counted.
			tap_n=$((tap_n + 1))
			printf '%s %d - %s\n' "$verdict" "$tap_n" "$rest"
		else
			tap_ok "$([ "$verdict" = ok ]; echo $?)" "$rest"
		fi
		;;
	"#"*) echo "$line" ;;
	esac
done <"$E2E_TMP/contract.tap"
[ ! -s "$E2E_TMP/contract.err" ] || tap_diag "$(tail -20 "$E2E_TMP/contract.err")"
tap_is "$rc" 0 "api_contract.py exited 0"
[ ! -f "$E2E_TMP/ow.log" ] || tap_diag "order writer: $(tail -3 "$E2E_TMP/ow.log" | tr '\n' '|')"
tap_done
