#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# IPv6 address rules behind a trusted edge (docs/edge.md, docs/limits.md "Risk rules"): the data
# plane receives IPv4 packets only, but a trusted edge names IPv6 clients, in a PROXY v2 header
# (TCP over IPv6) before the request or in X-Forwarded-For. The test's own client, in the test
# network's client namespace, is that edge ([edge] trusted = its address): each request goes on
# a connection of its own, the PROXY v2 header and the request in one segment, or the request
# with X-Forwarded-For. The operator blocks an IPv6 network and a single IPv6 address with
# flashgatectl on the real control plane (PostgreSQL, Redis); the rules reach the data plane over
# the wire (an IPv6 rule record). Checks: clients in the blocked network (through either source)
# and the blocked address are refused 403 "blocked", counted as blocked_ip; the neighbouring
# address and another IPv6 client buy through the whole sale (token, reserve, result); after the
# network's rule is deleted its clients are admitted again.
# usage: test_edge_ipv6.sh DATAPLANE CONTROLPLANE FLASHGATECTL   (prints TAP; needs root)
set -euo pipefail
# shellcheck source=tests/e2e/harness.sh
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

CP_EXE=${2:-}
CTL_EXE=${3:-}
EV=6
BLOCKED_NET=2001:db8:bad::/48
BLOCKED_ONE=2001:db8:1::66
mapfile -t PORTS < <(fg_free_ports 2)
PULL=tcp://127.0.0.1:${PORTS[0]} PUB=tcp://127.0.0.1:${PORTS[1]}
# The client namespace's address is the trusted edge.
E2E_DP_ARGS=(-s "bridge.push_endpoint=$PULL" -s "bridge.sub_endpoint=$PUB"
	-s admission.limit_table_log2=12 -s "edge.trusted=198.18.10.1")
E2E_TOOLS=(redis-cli)
e2e_begin six "${1:-}"
if [ ! -x "$CP_EXE" ] || [ ! -x "$CTL_EXE" ]; then
	tap_bail "control plane and flashgatectl given"
fi
t_services_up "$E2E_TMP/svc"
T_CP=$CP_EXE T_CTL=$CTL_EXE T_PULL=$PULL T_PUB=$PUB T_CTL_OUT=diag
t_cp_up || tap_bail "control plane ready"

tap_run "the sale is set up: keys, generous limits, event $EV with 10 items, open" \
	e2e_open_sale $EV "ipv6 sale" 10 \
	00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff

# edge HOW CLIENT ARGS...: the edge's client.py (below) from the client namespace.
edge() { fg_ns_exec timeout 30 python3 "$E2E_TMP/edge.py" "$FG_DP_ADDR" "$@"; }
cat >"$E2E_TMP/edge.py" <<'EOF'
# edge.py DP HOW CLIENT6 get PATH [HEADER:VALUE...] | sale EVENT SESSION
# One request per connection to the data plane (Connection: close), naming CLIENT6 as the
# client: HOW is "proxy" (a PROXY v2 header, TCP over IPv6, in the request's segment) or "xff"
# (X-Forwarded-For). Prints one JSON line: {"status": N, "body": {...}} for get; for sale the
# token's, reserve's and result's statuses (and the result's status word).
import ipaddress, json, socket, struct, sys, time

dp, how, client, cmd = sys.argv[1:5]
rest = sys.argv[5:]


def request(method, path, headers):
    hdr = {"Host": "sale.example", "Connection": "close"}
    hdr.update(headers)
    if method == "POST":
        hdr["Content-Length"] = "0"
    if how == "xff":
        hdr["X-Forwarded-For"] = client
    text = "%s %s HTTP/1.1\r\n" % (method, path)
    text += "".join("%s: %s\r\n" % kv for kv in hdr.items()) + "\r\n"
    data = text.encode()
    if how == "proxy":
        addrs = (ipaddress.IPv6Address(client).packed +
                 ipaddress.IPv6Address("2001:db8:ffff::1").packed + struct.pack("!HH", 40000, 443))
        data = (b"\r\n\r\n\x00\r\nQUIT\n" + bytes([0x21, 0x21]) + struct.pack("!H", len(addrs)) +
                addrs + data)
    s = socket.create_connection((dp, 80), timeout=10, source_address=("198.18.10.1", 0))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.sendall(data)  # one segment: the header and the request together
    got = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        got += b
    s.close()
    head, _, body = got.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/1.1 ") else 0
    try:
        return status, json.loads(body) if body else {}
    except ValueError:
        return status, {"text": body.decode("utf-8", "replace")}


if cmd == "get":
    h = dict(a.partition(":")[::2] for a in rest[1:])
    status, body = request("GET", rest[0], h)
    print(json.dumps({"status": status, "body": body}))
elif cmd == "post":
    h = dict(a.partition(":")[::2] for a in rest[1:])
    status, body = request("POST", rest[0], h)
    print(json.dumps({"status": status, "body": body}))
elif cmd == "sale":
    event, session = rest
    out = {}
    st, b = request("POST", "/api/v1/events/%s/token" % event, {"Authorization": "Bearer " + session})
    out["token"], out["token_body"] = st, b
    if st == 200:
        st, b = request("POST", b["reserve_path"], {"X-Flash-Token": b["token"]})
        out["reserve"] = st
        if st == 202:
            receipt = b["receipt"]
            for _ in range(40):
                st, b = request("GET", "/api/v1/events/%s/result" % event,
                                {"X-Flash-Token": receipt})
                if st != 200 or b.get("status") != "queued":
                    break
                time.sleep(0.25)
            out["result"] = b.get("status", "http %d" % st)
    print(json.dumps(out))
EOF

# sale CLIENT HOW USER: a session for USER, then the whole sale from CLIENT; prints
# "token/reserve/result" (e.g. 200/202/reserved, or 403// when refused at the token).
sale() {
	local s r
	s=$(ctlj session-token "$3" | jget token)
	r=$(edge "$2" "$1" sale $EV "$s") || r='{}'
	tap_diag "$1 ($2): $r" >&2
	echo "$(jget token <<<"$r")/$(jget reserve <<<"$r")/$(jget result <<<"$r")"
}
# token_answer CLIENT HOW: "status/error" of a token request from CLIENT with a valid session.
SESSION=$(ctlj session-token 400 | jget token)
token_answer() {
	local r
	r=$(edge "$2" "$1" post "/api/v1/events/$EV/token" "Authorization:Bearer $SESSION") ||
		r='{}'
	echo "$(jget status <<<"$r")/$(jget body.error <<<"$r")"
}
stat() { e2e_telemetry_field /flashgate/stats "$1"; }

open_seen() { [ "$(edge xff 2001:db8:2::5 get "/api/v1/events/$EV" | jget body.state)" = open ]; }
tap_run "the sale is open, seen by an IPv6 client through X-Forwarded-For" \
	t_wait_until 20 open_seen
tap_is "$(token_answer 2001:db8:bad::5 proxy)" 200/ \
	"before any rule: an IPv6 client (PROXY v2) gets its purchase token, 200"

# --- the operator blocks an IPv6 network and one IPv6 address --------------------------------
tap_run "flashgatectl rules add ip $BLOCKED_NET" ctl rules add ip "$BLOCKED_NET"
tap_run "flashgatectl rules add ip $BLOCKED_ONE" ctl rules add ip "$BLOCKED_ONE"
tap_is "$(ctlj rules list | python3 -c 'import json, sys
print(" ".join(r["value"] for r in json.load(sys.stdin)["rules"]))')" \
	"2001:db8:bad::/48 2001:db8:1::66" "rules list shows both, in canonical form"
blk0=$(stat rejects_blocked_ip)
blocked() { [ "$(token_answer 2001:db8:bad::5 proxy)" = 403/blocked ]; }
tap_run "a client of $BLOCKED_NET (PROXY v2: 2001:db8:bad::5) is refused: 403 blocked" \
	t_wait_until 10 blocked
tap_is "$(token_answer 2001:db8:bad:ffff:ffff:ffff:ffff:ffff xff)" 403/blocked \
	"  its last address, through X-Forwarded-For: 403 blocked"
tap_is "$(token_answer 2001:db8:1::66 proxy)" 403/blocked \
	"the blocked address $BLOCKED_ONE: 403 blocked"
tap_is "$(token_answer 2001:db8:1::66 xff)" 403/blocked "  through X-Forwarded-For too"
blk1=$(stat rejects_blocked_ip)
tap_ok "$( ((blk1 - blk0 >= 4)) && echo 0 || echo 1)" \
	"  counted as blocked_ip ($((blk1 - blk0)) more)"
tap_is "$(sale 2001:db8:1::67 proxy 401)" 200/202/reserved \
	"its neighbour 2001:db8:1::67 (PROXY v2) buys: token 200, reserve 202, result reserved"
tap_is "$(sale 2001:db8:bac::1 xff 402)" 200/202/reserved \
	"another IPv6 client, 2001:db8:bac::1 (X-Forwarded-For), buys too"
tap_is "$(sale 198.18.30.7 xff 403)" 200/202/reserved \
	"an IPv4 client behind the same edge is not touched by IPv6 rules"

# --- the rule deleted: its network's clients are admitted again -------------------------------
tap_run "flashgatectl rules del ip $BLOCKED_NET" ctl rules del ip "$BLOCKED_NET"
admitted() { [ "$(token_answer 2001:db8:bad::5 proxy)" = 200/ ]; }
tap_run "2001:db8:bad::5 is admitted again: 200" t_wait_until 10 admitted
tap_is "$(token_answer 2001:db8:1::66 proxy)" 403/blocked \
	"  while $BLOCKED_ONE stays blocked"

e2e_stop_dataplane
tap_done
