#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# shellcheck disable=SC2317 # functions called through t_wait_until and tap_run
#
# docs/edge.md's whole HAProxy configuration for production, run as printed: the text between
# its two marker lines, with only the addresses, ports and file paths changed (the sed below),
# in front of a real data plane and control plane in the test network's client namespace.
# Checks: /api/ reaches the data plane through it, the rest goes to the shop's backend (none
# here: HAProxy's own 503); the data plane started again without its control plane answers
# /healthz but not /readyz (503), and HAProxy's health checks (GET /readyz) take it out: the
# backend DOWN on HAProxy's stats socket, shoppers answered 503 by HAProxy and not sent to it;
# the control plane started again, the data plane ready, HAProxy takes it back (UP) and a
# shopper's request reaches it; the control plane then silent (SIGSTOP) past bridge.resync:
# /readyz 503 "not heard", HAProxy takes the data plane out, and back once it continues. Waits
# are bounded at 30 s.
#
# usage: test_edge_haproxy_doc.sh DATAPLANE CONTROLPLANE FLASHGATECTL   (prints TAP; needs root)
set -euo pipefail
# shellcheck source=tests/e2e/harness.sh
. "$(dirname "$0")/harness.sh"

# shellcheck source=tests/e2e/edge/edge_lib.sh
. "$(dirname "$0")/edge/edge_lib.sh"

DOC=$FG_ROOT/docs/edge.md
EV=9
SHOP_A=198.18.20.1
E2E_TOOLS=(redis-cli openssl haproxy)
edge_begin hpd "${1:-}" "${2:-}" "${3:-}" 1
WEB_PORT=${EDGE_PORTS[0]}
CP_STOPPED=
trap '[ -z "$CP_STOPPED" ] || kill -CONT "$CP_PID" 2>/dev/null || true; edge_cleanup; e2e_cleanup' EXIT
tap_run "the sale is set up: keys, event $EV, open" e2e_open_sale $EV "doc edge sale" 4 \
	00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff

# --- the configuration, as docs/edge.md prints it ---------------------------------------------
RUN=$E2E_TMP/edge
mkdir -p "$RUN"
awk '/<!-- haproxy-production-config end -->/ { f = 0 } f && !/^```/ { print }
	/<!-- haproxy-production-config begin -->/ { f = 1 }' "$DOC" >"$RUN/doc.cfg"
tap_ok "$( (($(wc -l <"$RUN/doc.cfg") > 20)) && echo 0 || echo 1)" \
	"docs/edge.md holds the production configuration between its markers ($(wc -l <"$RUN/doc.cfg") lines)"
# Only addresses, ports and paths change: where HAProxy listens and its certificate, its stats
# socket, the data planes (both the doc's servers on the test's one data plane), the shop's
# server (a port of loopback where nothing listens).
sed -e "s|198\.18\.20\.254:443|$EDGE_ADDR:443|" -e "s|/etc/haproxy/edge\.pem|$E2E_TMP/edge-full.pem|" \
	-e "s|/run/haproxy/admin\.sock|$RUN/admin.sock|" \
	-e "s|198\.18\.10\.[23]:80|$FG_DP_ADDR:$E2E_PORT|" \
	-e "s|198\.18\.30\.2:8080|127.0.0.1:$WEB_PORT|" "$RUN/doc.cfg" >"$RUN/haproxy.cfg"
tap_diag "changed lines: $(diff "$RUN/doc.cfg" "$RUN/haproxy.cfg" | grep -c '^>' || true)"

edge_addrs "$EDGE_ADDR" "$SHOP_A"
tap_run "openssl makes a CA and the edge's certificate" edge_tls
check_cfg() { haproxy -c -f "$RUN/haproxy.cfg" >"$RUN/check.log" 2>&1; }
tap_run "haproxy -c accepts the configuration" check_cfg || tap_diag "$(cat "$RUN/check.log")"
fg_ns_exec haproxy -db -f "$RUN/haproxy.cfg" >>"$RUN/edge.log" 2>&1 &
EDGE_PID=$!

BASE=https://$EDGE_ADDR
shop() { fg_ns_exec python3 "$EDGE_DIR/shopper.py" get "$BASE" "$E2E_TMP/ca.pem" "$SHOP_A" "$@"; }
# HAProxy's view of the data planes' backend: UP or DOWN (its stats socket, "show stat").
backend_state() {
	python3 - "$RUN/admin.sock" <<'PY' | awk -F, '$1 == "dataplanes" && $2 == "BACKEND" { print $18 }'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
s.sendall(b"show stat\n")
out = b""
while True:
    d = s.recv(65536)
    if not d:
        break
    out += d
sys.stdout.write(out.decode())
PY
}
ev_state() { shop "/api/v1/events/$EV" | jget body.state; }
sale_seen() { [ "$(ev_state)" = open ]; }
if t_wait_until 30 sale_seen; then
	tap_ok 0 "GET /api/v1/events/$EV through HAProxy reaches the data plane: the sale, open"
else
	tap_diag "$(tail -5 "$RUN/edge.log")"
	tap_bail "a request through HAProxy reaches the data plane"
fi
tap_is "$(backend_state)" UP "  HAProxy's stats socket: the data planes' backend UP"
tap_is "$(shop / | jget status)" 503 "GET / goes to the shop's backend (none listening here): 503"

# --- readiness taken away: the data plane restarted while its control plane is down --------
fg_stop_pid "$CP_PID" 10 || true
CP_PID=
kill -KILL "$E2E_DP_PID"
wait "$E2E_DP_PID" 2>/dev/null || true
fg_dp_start "${1:-}" "$E2E_PREFIX" "$E2E_TMP/dataplane.log" -c "$E2E_TMP/flashgate.conf" \
	"${E2E_DP_ARGS[@]}"
E2E_DP_PID=$FG_DP_PID
tap_run "the data plane starts again, its control plane stopped" \
	fg_wait_line "$E2E_TMP/dataplane.log" 'ready:' "$E2E_DP_PID" 30
healthz_up() { e2e_curl hz "$E2E_BASE:$E2E_PORT/healthz" && [ "$E2E_CODE" = 200 ]; }
tap_run "  it answers /healthz 200 (the process is up)" t_wait_until 30 healthz_up
e2e_curl rz "$E2E_BASE:$E2E_PORT/readyz" || true
tap_is "$E2E_CODE" 503 "  and /readyz 503: $(cat "$E2E_TMP/rz.b" 2>/dev/null)"
is_down() { [ "$(backend_state)" = DOWN ]; }
tap_run "HAProxy's checks of /readyz take the data plane out: backend DOWN" t_wait_until 30 is_down
r=$(shop "/api/v1/events/$EV")
tap_is "$(jget status <<<"$r")/$(jget body.text <<<"$r" | grep -c 'No server is available' || true)" \
	503/1 "  a shopper is answered 503 by HAProxy itself, not sent to the data plane"

# --- and back -----------------------------------------------------------------------------------
t_cp_up || tap_bail "the control plane starts again"
is_up() { [ "$(backend_state)" = UP ]; }
tap_run "the control plane back, /readyz 200: HAProxy takes the data plane back (UP)" \
	t_wait_until 30 is_up
tap_run "  a shopper's request reaches it again: the sale, open" t_wait_until 30 sale_seen

# --- the control plane silent after the data plane has its state: stopped (SIGSTOP), it sends
# no heartbeat; past bridge.resync (5 s) /readyz says so and HAProxy takes the data plane out;
# continued, it is heard again and HAProxy takes the data plane back ---------------------------
kill -STOP "$CP_PID"
CP_STOPPED=1
rz_silent() {
	e2e_curl rz "$E2E_BASE:$E2E_PORT/readyz" || true
	[ "$E2E_CODE" = 503 ] && grep -q 'has not been heard for' "$E2E_TMP/rz.b"
}
tap_run "the control plane stopped (SIGSTOP): /readyz 503, not heard from" t_wait_until 30 rz_silent
tap_diag "$(cat "$E2E_TMP/rz.b" 2>/dev/null)"
tap_run "  HAProxy's checks take the data plane out: backend DOWN" t_wait_until 30 is_down
kill -CONT "$CP_PID"
CP_STOPPED=
tap_run "the control plane continued: HAProxy takes the data plane back (UP)" \
	t_wait_until 30 is_up
tap_run "  a shopper's request reaches it again: the sale, open" t_wait_until 30 sale_seen

fg_stop_pid "$EDGE_PID" 10 || true
EDGE_PID=
e2e_stop_dataplane
tap_done
