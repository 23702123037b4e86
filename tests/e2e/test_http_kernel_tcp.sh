#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# HTTP from the Linux TCP stack (curl in the client namespace) to the data plane over the test
# network: the routes, a closed port, a client of MSS 536 given an answer longer than that, a
# SYN below the MSS floor, the absolute form, 1,000 sequential connections, telemetry, and a
# clean stop.
# usage: test_http_kernel_tcp.sh DATAPLANE_EXECUTABLE   (prints TAP; needs root)
set -euo pipefail
# shellcheck source=tests/e2e/harness.sh
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

SEQUENTIAL=1000
# The longest CORS origin (admission.cors_origin: 127 bytes) and an event name of 63 bytes, 21
# of them quotes (escaped in JSON): GET /api/v1/events/1 from that origin is more than 536 bytes.
ORIGIN="https://$(printf 'o%.0s' {1..111}).example"
NAME=$(printf '"xx%.0s' {1..21})
DP_HOST=sale.e2e.example
E2E_DP_ARGS=(-s "admission.cors_origin=$ORIGIN" -s "event.1.name=$NAME"
	-s "dataplane.host=$DP_HOST")

# stat FILE NAME: one counter of a /flashgate/stats reply (empty when there is none).
stat() {
	python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["/flashgate/stats"][sys.argv[2]])' "$1" "$2" 2>/dev/null || true
}

# grew FILE_BEFORE FILE_AFTER NAME: prints by how much a counter grew; "?" when unreadable.
grew() {
	local a b
	a=$(stat "$1" "$3")
	b=$(stat "$2" "$3")
	if [ -n "$a" ] && [ -n "$b" ]; then echo $((b - a)); else echo "?"; fi
}

e2e_begin http "$@"

# --- GET /healthz ----------------------------------------------------------------------------
e2e_curl healthz "$E2E_BASE/healthz"
tap_is "$E2E_CODE" 200 "GET /healthz answers 200"
tap_run "GET /healthz: body is JSON" python3 -m json.tool "$E2E_TMP/healthz.b" /dev/null
tap_run "GET /healthz: Content-Type: application/json" \
	e2e_has_header healthz '^content-type: *application/json'
tap_run "GET /healthz: Connection: close" e2e_has_header healthz '^connection: *close *$'
tap_run "GET /healthz: Cache-Control: no-store" e2e_has_header healthz '^cache-control:.*no-store'
tap_run "GET /healthz: the data plane closed the connection (curl saw the whole answer)" \
	test "$E2E_CURL_RC" -eq 0

# --- events ----------------------------------------------------------------------------------
e2e_curl ev1 "$E2E_BASE/api/v1/events/1"
tap_is "$E2E_CODE" 200 "GET /api/v1/events/1 (open sale) answers 200"
tap_is "$(e2e_json_field ev1 id)" 1 "GET /api/v1/events/1: id is 1"
tap_is "$(e2e_json_field ev1 state)" open "GET /api/v1/events/1: state is open"
tap_run "GET /api/v1/events/1: Cache-Control: no-store" \
	e2e_has_header ev1 '^cache-control:.*no-store'

e2e_curl ev2 "$E2E_BASE/api/v1/events/2"
tap_is "$E2E_CODE" 200 "GET /api/v1/events/2 (upcoming sale) answers 200"
tap_is "$(e2e_json_field ev2 state)" upcoming "GET /api/v1/events/2: state is upcoming"

e2e_curl ev999 "$E2E_BASE/api/v1/events/999"
tap_is "$E2E_CODE" 404 "GET /api/v1/events/999 (no such sale) answers 404"
tap_run "GET /api/v1/events/999: Connection: close" e2e_has_header ev999 '^connection: *close *$'

e2e_curl nosuch "$E2E_BASE/no/such/path"
tap_is "$E2E_CODE" 404 "GET /no/such/path answers 404"

e2e_curl post "$E2E_BASE/healthz" -X POST -d ''
tap_is "$E2E_CODE" 405 "POST /healthz answers 405"

# --- a port nobody listens on: RST, so curl reports "Couldn't connect" (exit 7) -----------------
e2e_curl refused "http://$FG_DP_ADDR:$E2E_CLOSED_PORT/healthz"
tap_is "$E2E_CURL_RC" 7 "a connection to port $E2E_CLOSED_PORT is refused (curl exit status)"

# --- a client of MSS 536 and an answer longer than that: several segments, FIN on the last ------
# The client's kernel announces the route's advmss in its SYN.
e2e_stats "$E2E_TMP/stats-seg0.json" || true
fg_ns_exec ip route add "$FG_DP_ADDR/32" dev "$FG_CL_IF" src "$FG_CL_ADDR" advmss 536
e2e_curl long "$E2E_BASE/api/v1/events/1" -H "Origin: $ORIGIN"
fg_ns_exec ip route del "$FG_DP_ADDR/32" dev "$FG_CL_IF"
e2e_stats "$E2E_TMP/stats-seg1.json" || true
tap_is "$E2E_CODE" 200 "MSS 536: GET /api/v1/events/1 from the 127-byte origin answers 200"
tap_is "$E2E_CURL_RC" 0 "MSS 536: curl read the whole answer and our FIN"
tap_is "$(e2e_json_field long name)" "$NAME" "MSS 536: the body is whole (the 63-byte name)"
tap_run "MSS 536: Access-Control-Allow-Origin is the whole origin" \
	e2e_has_header long "^access-control-allow-origin: $ORIGIN\$"
long_len=$(($(wc -c <"$E2E_TMP/long.h") + $(wc -c <"$E2E_TMP/long.b")))
tap_run "MSS 536: the answer ($long_len bytes) is longer than one segment" test "$long_len" -gt 536
seg=$(grew "$E2E_TMP/stats-seg0.json" "$E2E_TMP/stats-seg1.json" answers_http_more_segments)
tap_is "$seg" 1 "MSS 536: it went out in 2 segments (answers_http_more_segments grew by 1)"

# --- a SYN whose MSS is below dataplane.mss_floor (536) is dropped and counted --------------------
# connect_with_mss MSS: "connected" or "no answer" (within 2 s) for a SYN announcing MSS.
connect_with_mss() {
	fg_ns_exec python3 - "$FG_DP_ADDR" "$E2E_PORT" "$1" <<'EOF'
import socket, sys
s = socket.socket()
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, int(sys.argv[3]))
s.settimeout(2)
try:
    s.connect((sys.argv[1], int(sys.argv[2])))
    print("connected")
except OSError:
    print("no answer")
EOF
}
e2e_stats "$E2E_TMP/stats-mss0.json" || true
tap_is "$(connect_with_mss 500)" "no answer" "a SYN with MSS 500 gets no SYN-ACK"
e2e_stats "$E2E_TMP/stats-mss1.json" || true
floor=$(grew "$E2E_TMP/stats-mss0.json" "$E2E_TMP/stats-mss1.json" drops_tcp_mss_below_floor)
tap_run "  counted as drops_tcp_mss_below_floor (grew by $floor)" test "${floor/\?/0}" -ge 1
tap_is "$(connect_with_mss 536)" connected "a SYN with MSS 536 connects"

# --- RFC 9112 3.2.2: the absolute form, for our address or dataplane.host; another host: 400 ---
e2e_curl absaddr "$E2E_BASE/healthz" --request-target "http://$FG_DP_ADDR/healthz"
tap_is "$E2E_CODE" 200 "GET http://$FG_DP_ADDR/healthz (absolute form, our address) answers 200"
e2e_curl absname "$E2E_BASE/healthz" --request-target "http://$DP_HOST:$E2E_PORT/api/v1/events/1"
tap_is "$E2E_CODE" 200 "GET http://$DP_HOST:$E2E_PORT/api/v1/events/1 (dataplane.host) answers 200"
e2e_stats "$E2E_TMP/stats-abs0.json" || true
e2e_curl absother "$E2E_BASE/healthz" --request-target "http://other.example/healthz"
e2e_stats "$E2E_TMP/stats-abs1.json" || true
tap_is "$E2E_CODE" 400 "GET http://other.example/healthz (another host) answers 400"
tap_is "$(e2e_json_field absother error)" "absolute-form request-target names another host" \
	"  with the reason"
tap_is "$(grew "$E2E_TMP/stats-abs0.json" "$E2E_TMP/stats-abs1.json" rejects_other_host)" 1 \
	"  counted as rejects_other_host"

# --- telemetry, before the load ----------------------------------------------------------------
rc=0
e2e_stats "$E2E_TMP/stats-before.json" || rc=$?
tap_ok "$rc" "telemetry /flashgate/stats answers JSON"
[ "$rc" -eq 0 ] || tap_diag "$(cat "$E2E_TMP/stats-before.json.err")"

# --- 1,000 sequential requests, one connection each (Connection: close) ------------------------
# One curl process runs the transfers one after the other; each opens a new connection. It stops
# at the first transfer that fails, so a data plane that stopped answering fails this quickly.
conf=$E2E_TMP/sequential.curl
for ((i = 0; i < SEQUENTIAL; i++)); do
	printf 'url = "%s/healthz"\noutput = "/dev/null"\n' "$E2E_BASE"
done >"$conf"
start_ns=$(date +%s%N)
fg_ns_exec timeout 300 curl -s --fail-early --connect-timeout 3 --max-time 5 \
	-w '%{http_code}\n' -K "$conf" >"$E2E_TMP/sequential.out" 2>&1 || true
elapsed_ms=$((($(date +%s%N) - start_ns) / 1000000))
answered=$(grep -cx 200 "$E2E_TMP/sequential.out" || true)
tap_is "$answered" "$SEQUENTIAL" "$SEQUENTIAL sequential GET /healthz all answered 200"
tap_diag "$SEQUENTIAL sequential requests took ${elapsed_ms} ms" \
	"($((SEQUENTIAL * 1000 / (elapsed_ms > 0 ? elapsed_ms : 1))) requests/s, one connection each)"

# --- telemetry, after: the counters grew by at least the requests just made --------------------
rc=0
e2e_stats "$E2E_TMP/stats-after.json" || rc=$?
# A first read that failed left no counters: counters_grew.py exits 2 on it, a failure.
if [ "$rc" -eq 0 ]; then
	python3 "$E2E_DIR/counters_grew.py" "$E2E_TMP/stats-before.json" "$E2E_TMP/stats-after.json" \
		"$SEQUENTIAL" >"$E2E_TMP/grew.out" || rc=$?
	cat "$E2E_TMP/grew.out"
fi
tap_ok "$rc" "telemetry counters grew by at least $SEQUENTIAL over $SEQUENTIAL requests"

e2e_stop_dataplane
tap_done
