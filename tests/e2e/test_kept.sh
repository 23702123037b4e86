#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Kept connections from a trusted edge, with the kernel's TCP as the edge: python's http.client
# from the client namespace sends several requests on one connection (keep-alive, RFC 9112
# 9.3); the same client from an address that is not trusted gets Connection: close on each; a
# kept connection left idle is closed by the data plane's FIN (dataplane.kept_idle_timeout); the
# table's counters in telemetry.
# usage: test_kept.sh DATAPLANE_EXECUTABLE   (prints TAP; needs root)
set -euo pipefail
# shellcheck source=tests/e2e/harness.sh
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

REQUESTS=50
UNTRUSTED=198.18.10.3 # a second address of the client's veth, not in [edge] trusted
E2E_DP_ARGS=(-s "edge.trusted=198.18.10.1" -s "dataplane.kept_idle_timeout=2s"
	-s "dataplane.kept_connections=64")

e2e_begin kept "$@"
fg_ns_exec ip addr add "$UNTRUSTED/24" dev "$FG_CL_IF"

# stat NAME: one counter of /flashgate/stats now (empty when unreadable).
stat() {
	fg_telemetry "$E2E_PREFIX" /flashgate/stats 2>/dev/null | python3 -c '
import json, sys
print(json.load(sys.stdin)["/flashgate/stats"][sys.argv[1]])' "$1" 2>/dev/null || true
}

# client SOURCE N IDLE: N GET /healthz through one http.client from SOURCE (it opens a new
# connection only after an answer that closed the last), then IDLE seconds without a request
# and one read; prints one JSON line: statuses, Connection headers, local ports used (one per
# connection), and whether the server closed the idle connection.
client() {
	fg_ns_exec timeout 60 python3 - "$FG_DP_ADDR" "$1" "$2" "$3" <<'EOF'
import http.client, json, socket, sys, time
dst, src, n, idle = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
c = http.client.HTTPConnection(dst, 80, timeout=5, source_address=(src, 0))
out = {"status": [], "connection": [], "ports": set(), "bodies_ok": 0}
for i in range(n):
    c.request("GET", "/healthz", headers={"Host": "sale.example"})
    out["ports"].add(c.sock.getsockname()[1])
    r = c.getresponse()
    body = r.read()
    out["status"].append(r.status)
    out["connection"].append(r.getheader("Connection") or "")
    out["bodies_ok"] += body == b'{"status":"ok"}'
out["ports"] = len(out["ports"])
if idle > 0 and c.sock is not None:
    time.sleep(idle)
    c.sock.settimeout(5)
    try:
        out["idle_read"] = "eof" if c.sock.recv(1) == b"" else "data"
    except socket.timeout:
        out["idle_read"] = "timeout"
    except ConnectionResetError:
        out["idle_read"] = "reset"
c.close()
print(json.dumps(out))
EOF
}

# kept_free: no kept connection's entry in use, read anew at each call (for t_wait_until).
# shellcheck disable=SC2317 # called by t_wait_until
kept_free() { [ "$(stat kept_connections_in_use)" = 0 ]; }

# field JSON KEY: a field of client()'s line.
field() { python3 -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

opened0=$(stat kept_connections_opened)
res=$(client "$FG_CL_ADDR" "$REQUESTS" 0) || res='{}'
tap_diag "trusted: $res"
tap_is "$(field "$res" status 2>/dev/null | tr -d ' ')" "[$(printf '200,%.0s' $(seq 2 "$REQUESTS"))200]" \
	"$REQUESTS GET /healthz from the trusted edge: all 200"
tap_is "$(field "$res" bodies_ok 2>/dev/null)" "$REQUESTS" "  every body whole"
tap_is "$(field "$res" ports 2>/dev/null)" 1 "  all on one connection (one local port)"
tap_is "$(field "$res" connection 2>/dev/null | grep -c close)" 0 \
	"  no answer says Connection: close"
tap_is "$(($(stat kept_connections_opened) - ${opened0:-0}))" 1 "  the data plane opened one kept connection"
tap_run "  and counted the requests on kept connections" \
	test "$(stat kept_connections_requests)" -ge "$REQUESTS"
tap_is "$(stat kept_connections_capacity)" 64 "kept_connections_capacity shows the table's size"
# http.client's close sent a FIN: ours answers it, and the entry is freed on its ACK.
t_wait_until 5 kept_free || true
tap_is "$(stat kept_connections_in_use)" 0 "after the client closed, no entry in use"

res=$(client "$UNTRUSTED" 5 0) || res='{}'
tap_diag "untrusted: $res"
tap_is "$(field "$res" connection 2>/dev/null | grep -o close | wc -l)" 5 \
	"from an untrusted address every answer says Connection: close (stateless path)"
tap_is "$(field "$res" ports 2>/dev/null)" 5 "  one connection per request"

idle0=$(stat kept_connections_idle_closed)
res=$(client "$FG_CL_ADDR" 3 4) || res='{}'
tap_diag "idle: $res"
tap_is "$(field "$res" ports 2>/dev/null)" 1 "three requests on one kept connection"
tap_is "$(field "$res" idle_read 2>/dev/null)" eof \
	"left idle past kept_idle_timeout (2 s), the data plane closes it with a FIN"
tap_is "$(($(stat kept_connections_idle_closed) - ${idle0:-0}))" 1 "  counted as kept_connections_idle_closed"
t_wait_until 5 kept_free || true
tap_is "$(stat kept_connections_in_use)" 0 "  and its entry freed"

e2e_stop_dataplane
tap_done
