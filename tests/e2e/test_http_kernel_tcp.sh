#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# HTTP from the Linux TCP stack (curl in the client namespace) to the data plane over the test
# network: the routes, a closed port, 1,000 sequential connections, telemetry, and a clean stop.
# usage: test_http_kernel_tcp.sh DATAPLANE_EXECUTABLE   (prints TAP; needs root)
set -euo pipefail
# shellcheck source=tests/e2e/harness.sh
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

SEQUENTIAL=1000

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
