#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Metrics an operator can reach, scraped by a real Prometheus server (docs/metrics.md): the
# control plane's endpoint bound to a chosen address (a test network's, not the loopback) with
# an allow-list (controlplane.metrics_allow): served to a peer in it, closed unread for one
# that is not, and refused at start without a list; the order writer's endpoint; the data
# plane's counters through the control plane. Prometheus, with monitoring/flashgate-rules.yml
# loaded, scrapes both daemons during a sale: both targets up, every rule healthy, the data
# plane's, control plane's and order writer's series there, no alert firing; the order writer
# stopped: its target down and FlashgateOrderWriterDown pending.
#
# usage: test_prometheus.sh DATAPLANE CONTROLPLANE FLASHGATECTL ORDER_WRITER
set -euo pipefail
. "$(dirname "$0")/harness.sh"

OW_PID=
PROM_PID=
EV=16
MON_NS=fg-e2e-mon-$$
MON_IF=fgm$$
MON_HOST=198.18.21.1 MON_PEER=198.18.21.2 MON_STRANGER=198.18.21.3

E2E_TOOLS=(redis-cli psql prometheus)
e2e_sale_begin prm 5 "$@"
CP_MPORT=${E2E_PORTS[2]} OW_MPORT=${E2E_PORTS[3]} PROM_PORT=${E2E_PORTS[4]}
prom_stop() {
	local p
	for p in "$PROM_PID" "$OW_PID"; do [ -z "$p" ] || fg_stop_pid "$p" 10 || true; done
	ip netns del "$MON_NS" 2>/dev/null || true
	ip link del "${MON_IF}h" 2>/dev/null || true
}
T_CLEANUP+=(prom_stop)

# --- a network of the test's own for the metrics: the host's end and a namespace's ----------
ip netns add "$MON_NS"
ip link add "${MON_IF}h" type veth peer name "${MON_IF}n"
ip link set "${MON_IF}n" netns "$MON_NS"
ip addr add "$MON_HOST/24" dev "${MON_IF}h"
ip link set "${MON_IF}h" up
ip -n "$MON_NS" addr add "$MON_PEER/24" dev "${MON_IF}n"
ip -n "$MON_NS" addr add "$MON_STRANGER/24" dev "${MON_IF}n"
ip -n "$MON_NS" link set "${MON_IF}n" up
ip -n "$MON_NS" link set lo up
tap_ok 0 "the metrics network: $MON_HOST here, $MON_PEER and $MON_STRANGER in $MON_NS"

# Without an allow-list a non-loopback address is refused at start, saying what to set.
T_ADMIN=$E2E_TMP/admin-refused.sock
t_cp_start "$CP_EXE" "$E2E_TMP/cp-refused.log" "$T_ADMIN" "$T_PULL" "$T_PUB" \
	-s "controlplane.metrics_address=$MON_HOST" -s "controlplane.metrics_port=$CP_MPORT" \
	>/dev/null 2>&1 && rc=0 || rc=1
[ "$rc" = 1 ] || fg_stop_pid "$CP_PID" 10
tap_ok "$( [ "$rc" = 1 ] && grep -q 'not a loopback address.*controlplane.metrics_allow' \
	"$E2E_TMP/cp-refused.log" && echo 0 || echo 1)" \
	"metrics on $MON_HOST without metrics_allow: the control plane refuses to start, naming it"
CP_PID=
T_ADMIN=$E2E_TMP/admin.sock
T_METRICS_PORT=$CP_MPORT
t_cp_up -s "controlplane.metrics_address=$MON_HOST" \
	-s "controlplane.metrics_allow=$MON_HOST/32, $MON_PEER/32" || tap_bail "control plane ready"
tap_ok 0 "the control plane serves its metrics on $MON_HOST:$CP_MPORT, allowed: $MON_HOST, $MON_PEER"

scrape_from() { # scrape_from SOURCE: curl's status, the body in $E2E_TMP/scrape.out
	rm -f "$E2E_TMP/scrape.out"
	ip netns exec "$MON_NS" curl -s -m 5 --interface "$1" -o "$E2E_TMP/scrape.out" \
		"http://$MON_HOST:$CP_MPORT/metrics"
}
scrape_from "$MON_PEER" && rc=0 || rc=$?
tap_ok "$( [ "$rc" = 0 ] && grep -q '^flashgate_cp_redis_connected 1' "$E2E_TMP/scrape.out" &&
	echo 0 || echo 1)" "a scrape from $MON_PEER (allowed) gets the metrics"
scrape_from "$MON_STRANGER" && rc=0 || rc=$?
tap_ok "$( [ "$rc" != 0 ] && [ ! -s "$E2E_TMP/scrape.out" ] && echo 0 || echo 1)" \
	"a scrape from $MON_STRANGER (not allowed) is closed unread (curl status $rc)"
tap_ok "$(grep -q "metrics: refused a scrape from $MON_STRANGER" "$E2E_TMP/cp.log" && echo 0 ||
	echo 1)" "  and logged"

tap_run "the sale is set up (event, keys, limits, preheat, open)" e2e_open_sale $EV scraped 50 \
	00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff
"$OW_EXE" -s "order_writer.push_endpoint=tcp://127.0.0.1:$PULL_PORT" -s order_writer.max_rate=0 \
	-s "order_writer.metrics_port=$OW_MPORT" \
	"${T_REDIS[@]}" -s "postgres.conninfo=$FG_PG_CONNINFO" \
	>"$E2E_TMP/ow.log" 2>&1 &
OW_PID=$!
tap_run "the order writer serves its metrics on 127.0.0.1:$OW_MPORT" t_wait_until 20 \
	curl -sf -o /dev/null "http://127.0.0.1:$OW_MPORT/metrics"

# --- Prometheus ----------------------------------------------------------------------------------
mkdir -p "$E2E_TMP/prom"
cat >"$E2E_TMP/prometheus.yml" <<EOF
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: ['$FG_ROOT/monitoring/flashgate-rules.yml']
scrape_configs:
  - job_name: flashgate-controlplane
    static_configs: [{targets: ['$MON_HOST:$CP_MPORT']}]
  - job_name: flashgate-order-writer
    static_configs: [{targets: ['127.0.0.1:$OW_MPORT']}]
EOF
prometheus --config.file="$E2E_TMP/prometheus.yml" --storage.tsdb.path="$E2E_TMP/prom" \
	--web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$E2E_TMP/prom.log" 2>&1 &
PROM_PID=$!
# q EXPR: the instant query's result as "labels=value" lines (sorted); "" when empty.
q() {
	curl -s -m 5 -G "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1" |
		python3 -c 'import json, sys
d = json.load(sys.stdin)
for r in d["data"]["result"]:
    m = {k: v for k, v in r["metric"].items() if k != "__name__"}
    print(",".join(f"{k}={v}" for k, v in sorted(m.items())) + "=" + r["value"][1])' | sort
}
q_nonempty() { [ -n "$(q "$1" 2>/dev/null)" ]; }
tap_run "Prometheus scrapes the control plane (up 1)" t_wait_until 60 \
	q_nonempty 'up{job="flashgate-controlplane"} == 1'
tap_run "  and the order writer (up 1)" t_wait_until 30 \
	q_nonempty 'up{job="flashgate-order-writer"} == 1'
tap_run "  and the data plane's counters through the control plane (flashgate_dataplane_up 1)" \
	t_wait_until 30 q_nonempty 'flashgate_dataplane_up == 1 and on(dp) flashgate_dp_bridge_ready == 1'

e2e_buy $EV $(seq 701 710) || tap_bail "users 701-710 reserve (202)"
tap_run "Prometheus sees the 10 orders written (flashgate_ow_orders_total)" t_wait_until 30 \
	q_nonempty 'flashgate_ow_orders_total >= 10'
tap_run "  the 10 decisions (flashgate_cp_verdicts_total{verdict=\"reserved\"})" t_wait_until 20 \
	q_nonempty 'flashgate_cp_verdicts_total{verdict="reserved"} >= 10'
tap_run "  and the data plane's admissions (flashgate_dp_admits_total{kind=\"reserve_admitted\"})" \
	t_wait_until 20 q_nonempty 'flashgate_dp_admits_total{kind="reserve_admitted"} >= 10'
rules=$(curl -s "http://127.0.0.1:$PROM_PORT/api/v1/rules" | python3 -c 'import json, sys
d = json.load(sys.stdin)["data"]["groups"]
rs = [r for g in d for r in g["rules"]]
bad = [r["name"] + ": " + r.get("lastError", "") for r in rs if r["health"] != "ok"]
print(len(d), len(rs), len(bad), *bad)')
# As many rules as the file holds (every record and alert).
nrules=$(grep -cE '^ *- (record|alert): ' "$FG_ROOT/monitoring/flashgate-rules.yml")
tap_ok "$( [[ $rules == "2 $nrules 0" ]] && echo 0 || echo 1)" \
	"Prometheus loaded monitoring/flashgate-rules.yml: 2 groups, $nrules rules, all healthy ($rules)"
sleep 3
tap_is "$(q 'ALERTS{alertstate="firing"}')" "" "no alert fires during the healthy sale"
for r in 'flashgate:dp_answers:rate1m' 'flashgate:cp_verdicts:rate1m' 'flashgate:ow_orders:rate1m'; do
	tap_run "  the recording rule $r has samples" t_wait_until 20 q_nonempty "$r"
done
curl -s "http://$MON_HOST:$CP_MPORT/metrics" >"$E2E_TMP/cp.metrics" || true
curl -s "http://127.0.0.1:$OW_MPORT/metrics" >"$E2E_TMP/ow.metrics" || true
# docs/metrics.md is the reference of every metric: each one served is named there.
undocumented=$(cat "$E2E_TMP/cp.metrics" "$E2E_TMP/ow.metrics" | grep -v '^#' | sed 's/[{ ].*//' |
	sort -u | while read -r n; do grep -q "\`$n[\`{]" "$FG_ROOT/docs/metrics.md" || echo "$n"; done)
tap_is "$undocumented" "" "docs/metrics.md names every metric the daemons serve"
tap_diag "the control plane serves $(grep -c '^flashgate' "$E2E_TMP/cp.metrics") samples, the order writer $(grep -c '^flashgate' "$E2E_TMP/ow.metrics")"

# The live view of the same sale, as plain lines: the data plane's answers per second.
"$CTL_EXE" --socket "$T_ADMIN" top $EV --count 2 >"$E2E_TMP/top.out" 2>&1
tap_ok "$(grep -q "event $EV \"scraped\" open" "$E2E_TMP/top.out" &&
	grep -qE '^data plane [0-9]+ +up .*answers/s.* 202 [0-9]+' "$E2E_TMP/top.out" && echo 0 ||
	echo 1)" "flashgatectl top $EV --count 2: the sale and its data plane's answers per second"
sed 's/^/# /' "$E2E_TMP/top.out" | tail -9

# --- the order writer stops: its target goes down, its alert pending ----------------------------
fg_stop_pid "$OW_PID" 10
tap_is "$FG_STOP_RC" 0 "order writer exits with status 0 on SIGTERM"
OW_PID=
tap_run "Prometheus sees the order writer down (up 0)" t_wait_until 30 \
	q_nonempty 'up{job="flashgate-order-writer"} == 0'
tap_run "  and FlashgateOrderWriterDown pending (it fires after 1m)" t_wait_until 30 \
	q_nonempty 'ALERTS{alertname="FlashgateOrderWriterDown"}'

fg_stop_pid "$PROM_PID" 10
PROM_PID=
fg_stop_pid "$CP_PID" 10
tap_is "$FG_STOP_RC" 0 "control plane exits with status 0 on SIGTERM"
CP_PID=
e2e_stop_dataplane
tap_done
