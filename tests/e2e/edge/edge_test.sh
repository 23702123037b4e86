# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# shellcheck disable=SC2317 # functions called through t_wait_until and tap_run
#
# A sale behind a real TLS edge (docs/edge.md), sourced by test_edge_haproxy.sh and
# test_edge_nginx.sh with EDGE_KIND set. In the test network's client namespace: the edge
# (HAProxy or nginx, with the configuration of tests/e2e/edge/ as docs/edge.md shows it) terminates
# TLS with a certificate the test makes with openssl, and speaks HTTP to the data plane with
# X-Forwarded-For; shoppers (tests/e2e/edge/shopper.py, https with the test's CA) come from three
# addresses of their own. The data plane trusts the edge's address ([edge] trusted_file, among
# 5,000 networks: edge_lib.sh, which starts the data plane and the control plane); the real
# control plane decides in Redis. Checks: a sale's token, reserve and result through the edge;
# the data plane sees the shoppers' addresses, not the edge's (its counters by address source);
# two shoppers behind the edge, one over its per-IP limit (429), the other unaffected; a blocked
# client network refused; the data plane killed and started again under the edge: the edge
# recovers and nothing is decided twice. The edge keeps its connections to the data plane
# (HAProxy's http-reuse always, nginx's upstream keepalive): the data plane's kept-connection
# counters show far fewer connections than requests. With EDGE_SRC=proxy (HAProxy in mode tcp
# with send-proxy-v2) the addresses come from PROXY v2 headers instead, each shopper keeping its
# connection to the edge (shopper.py with FG_SHOP_KEEP=1), so each of the data plane's
# connections carries one shopper's requests.
#
# usage: test_edge_KIND.sh DATAPLANE CONTROLPLANE FLASHGATECTL   (prints TAP; needs root)
set -euo pipefail
# shellcheck source=tests/e2e/harness.sh
. "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"

# shellcheck source=tests/e2e/edge/edge_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/edge_lib.sh"

# Where the data plane takes the shoppers' addresses from: x_forwarded_for or proxy.
EDGE_SRC=${EDGE_SRC:-x_forwarded_for}
if [ "$EDGE_SRC" = proxy ]; then
	export FG_SHOP_KEEP=1
	SRC_NAME="PROXY v2 headers"
else
	SRC_NAME=X-Forwarded-For
fi
EV=9
STOCK=4
EDGE_PORT=8443
# Shoppers: A and B behind the edge, C in a network the operator blocks.
SHOP_A=198.18.20.1 SHOP_B=198.18.20.2 SHOP_C=198.18.21.1 BLOCKED_NET=198.18.21.0/24
BASE=https://$EDGE_ADDR:$EDGE_PORT

E2E_TOOLS=(redis-cli openssl "$EDGE_KIND")
edge_begin "${EDGE_KIND:0:3}${EDGE_SRC:0:1}" "${1:-}" "${2:-}" "${3:-}" 0 \
	-s admission.limit_table_log2=12 -s admission.purchase_token_ttl=10m

tap_run "the sale is set up: keys, generous limits, event $EV with $STOCK items, open" \
	e2e_open_sale $EV "edge sale" $STOCK \
	00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff

# --- the edge: its certificate, its addresses, its configuration ------------------------------
edge_addrs "$EDGE_ADDR" "$SHOP_A" "$SHOP_B" "$SHOP_C"
tap_run "openssl makes a CA and the edge's certificate for $EDGE_ADDR" edge_tls
RUN=$E2E_TMP/edge
mkdir -p "$RUN"
sed -e "s|@EDGE_ADDR@|$EDGE_ADDR|g" -e "s|@EDGE_PORT@|$EDGE_PORT|g" \
	-e "s|@DP_ADDR@|$FG_DP_ADDR|g" -e "s|@DP_PORT@|$E2E_PORT|g" -e "s|@RUN@|$RUN|g" \
	-e "s|@CERT_PEM@|$E2E_TMP/edge-full.pem|g" -e "s|@CERT@|$E2E_TMP/edge.pem|g" \
	-e "s|@KEY@|$E2E_TMP/edge.key|g" "$EDGE_DIR/$EDGE_CONF" >"$RUN/$EDGE_CONF"
start_edge() {
	case $EDGE_KIND in
	haproxy) fg_ns_exec haproxy -db -f "$RUN/$EDGE_CONF" >>"$RUN/edge.log" 2>&1 & ;;
	nginx) fg_ns_exec nginx -c "$RUN/$EDGE_CONF" -e "$RUN/nginx-error.log" \
		>>"$RUN/edge.log" 2>&1 & ;;
	esac
	EDGE_PID=$!
}
# HAProxy starts its server UP and takes it out at the first failed check (init-state up, its
# default): the edge starts once the data plane answers /readyz 200 (the sale's state and key
# from the control plane), as an operator's start order would have it, so that a DOWN below is
# a check that failed under way, not a data plane that was not ready yet.
dp_ready() { e2e_curl rz "$E2E_BASE:$E2E_PORT/readyz" && [ "$E2E_CODE" = 200 ]; }
tap_run "the data plane is ready (/readyz 200) before the edge starts" t_wait_until 30 dp_ready
start_edge

# --- shoppers ---------------------------------------------------------------------------------
shop() { fg_ns_exec python3 "$EDGE_DIR/shopper.py" "$1" "$BASE" "$E2E_TMP/ca.pem" "${@:2}"; }
healthz_ok() { [ "$(shop get "$SHOP_A" /healthz | jget status)" = 200 ]; }
if t_wait_until 20 healthz_ok; then
	tap_ok 0 "$EDGE_KIND answers https on $EDGE_ADDR:$EDGE_PORT with the data plane's /healthz"
else
	tap_diag "$(tail -5 "$RUN/edge.log" "$RUN/nginx-error.log" 2>/dev/null)"
	tap_bail "$EDGE_KIND answers https with the data plane's /healthz"
fi
open_seen() { [ "$(shop get "$SHOP_A" "/api/v1/events/$EV" | jget body.state)" = open ]; }
tap_run "the sale is open, seen through the edge" t_wait_until 20 open_seen

stat() { e2e_telemetry_field /flashgate/stats "$1"; }
declare -A TOK PATHS
# buy USER SRC: a shopper's whole sale through the edge (token, reserve, result polls); the
# answers in $E2E_TMP/saleUSER.json and as "token/reserve/result" in BOUGHT, the purchase token
# and reserve path kept for later.
buy() {
	local s r
	s=$(ctlj session-token "$1" | jget token)
	shop sale "$2" $EV "$s" >"$E2E_TMP/sale$1.json"
	r=$(cat "$E2E_TMP/sale$1.json")
	TOK[$1]=$(jget purchase_token <<<"$r")
	PATHS[$1]=$(jget reserve_path <<<"$r")
	BOUGHT="$(jget token <<<"$r")/$(jget reserve <<<"$r")/$(jget result <<<"$r")"
}
buy 201 "$SHOP_A"
tap_is "$BOUGHT" 200/202/reserved \
	"user 201 from shopper A's address: token 200, reserve 202, result reserved, through $EDGE_KIND"
buy 202 "$SHOP_B"
tap_is "$BOUGHT" 200/202/reserved "user 202 from shopper B's address: the same"
buy 203 "$SHOP_A"
tap_is "$BOUGHT" 200/202/reserved "user 203 from shopper A's address: the same"
xff=$(stat "client_addresses_$EDGE_SRC")
tap_ok "$( ((xff >= 6)) && echo 0 || echo 1)" \
	"the data plane took every shopper's address from $SRC_NAME ($xff requests)"
tap_is "$(stat client_addresses_packet)/$(stat client_addresses_refused)" 0/0 \
	"  none was taken as the edge's packets' address, none refused"
if [ "$EDGE_KIND" = haproxy ]; then
	tap_ok "$( (($(stat client_addresses_edge) > 0)) && echo 0 || echo 1)" \
		"  HAProxy's health checks are the edge's own requests (counted edge)"
fi

# The edge's own requests (HAProxy's health checks) each come on a connection of their own:
# conns is the number of connections that carried shoppers' requests (both counters read from
# one telemetry answer, so that a health check between two reads does not count).
conns() {
	fg_telemetry "$E2E_PREFIX" /flashgate/stats 2>/dev/null | python3 -c 'import json, sys
d = json.load(sys.stdin)["/flashgate/stats"]
print(d["kept_connections_opened"] - d["client_addresses_edge"])'
}
if [ "$EDGE_SRC" = proxy ]; then
	c0=$(conns) r0=$(stat kept_connections_requests) p0=$(stat client_addresses_proxy)
	shop many "$SHOP_A" 20 "/api/v1/events/$EV" >"$E2E_TMP/keep20.json"
	tap_is "$(jget statuses.200 <"$E2E_TMP/keep20.json")" 20 \
		"20 requests of shopper A on one connection through the edge: 20 answers 200"
	c1=$(conns) r1=$(stat kept_connections_requests) p1=$(stat client_addresses_proxy)
	tap_ok "$( ((c1 - c0 <= 2 && r1 - r0 >= 20 && p1 - p0 >= 20)) && echo 0 || echo 1)" \
		"  the data plane kept the connection: $((c1 - c0)) opened for them (the PROXY header's and at most one health check's race), $((r1 - r0)) kept requests, $((p1 - p0)) addressed by PROXY v2"
	tap_ok "$( (($(stat kept_connections_proxy_alone) > 0)) && echo 0 || echo 1)" \
		"  HAProxy sent each PROXY v2 header alone in its first segment (kept proxy_alone $(stat kept_connections_proxy_alone))"
	# A shopper past the edge, straight to the data plane, with a PROXY v2 header of its own
	# (naming shopper B) before its request in one segment: not from a trusted edge, so the
	# connection is reset and counted, and nothing is answered for B.
	proxy_direct() {
		fg_ns_exec python3 - "$SHOP_C" "$FG_DP_ADDR" "$E2E_PORT" <<'EOF'
import socket, struct, sys
src, dst, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
hdr = (b"\r\n\r\n\x00\r\nQUIT\n" + bytes([0x21, 0x11]) + struct.pack("!H", 12) +
       socket.inet_aton("198.18.20.2") + socket.inet_aton(dst) + struct.pack("!HH", 40000, port))
s = socket.create_connection((dst, port), timeout=5, source_address=(src, 0))
s.sendall(hdr + b"GET /healthz HTTP/1.1\r\nHost: dp\r\n\r\n")
try:
    print("answered" if s.recv(4096) else "closed")
except ConnectionResetError:
    print("reset")
except OSError as e:
    print("error: %s" % e)
EOF
	}
	u0=$(stat client_addresses_proxy_untrusted)
	tap_is "$(proxy_direct)" reset \
		"a PROXY v2 header sent straight to the data plane by a shopper (not the edge): reset"
	tap_is "$(($(stat client_addresses_proxy_untrusted) - u0))" 1 \
		"  counted proxy_untrusted"
fi

# --- per-IP limits apply to the shoppers, not to the edge ----------------------------------
tap_run "limits set ip 1/2" ctl limits set ip 1/2
over_limit() {
	shop many "$SHOP_A" 6 "/api/v1/events/$EV/result" "X-Flash-Token:x" >"$E2E_TMP/many.json"
	[ "$(jget statuses.429 <"$E2E_TMP/many.json")" != "" ]
}
tap_run "shopper A, over its per-IP limit behind the edge: 429" t_wait_until 10 over_limit
tap_diag "A's answers: $(cat "$E2E_TMP/many.json")"
b=$(shop get "$SHOP_B" "/api/v1/events/$EV/result" "X-Flash-Token:${TOK[202]}")
tap_is "$(jget status <<<"$b")/$(jget body.status <<<"$b")" 200/reserved \
	"shopper B behind the same edge is unaffected: its result, 200"
tap_run "limits set ip 100000/4000 (generous again)" ctl limits set ip 100000/4000

# --- a blocked client network ---------------------------------------------------------------
tap_run "rules add ip $BLOCKED_NET" ctl rules add ip "$BLOCKED_NET"
blocked() {
	c=$(shop get "$SHOP_C" "/api/v1/events/$EV/result" "X-Flash-Token:${TOK[201]}")
	[ "$(jget status <<<"$c")/$(jget body.error <<<"$c")" = 403/blocked ]
}
tap_run "shopper C in the blocked network is refused: 403 blocked" t_wait_until 10 blocked
a=$(shop get "$SHOP_A" "/api/v1/events/$EV/result" "X-Flash-Token:${TOK[201]}")
tap_is "$(jget status <<<"$a")/$(jget body.status <<<"$a")" 200/reserved \
	"  the same request from shopper A through the same edge: 200"

# --- kept connections: the edge's connections to the data plane far fewer than its requests --
# HAProxy (http-reuse always) and nginx (keepalive) share a few kept connections among every
# shopper's requests; in mode tcp each shopper's connection is one of the data plane's, carrying
# all of that shopper's requests.
kept_c=$(conns) kept_r=$(stat kept_connections_requests) src_r=$(stat "client_addresses_$EDGE_SRC")
tap_diag "kept: $(stat kept_connections_opened) opened, $(stat client_addresses_edge) edge requests, $kept_r kept requests, $src_r from $SRC_NAME, $(stat kept_connections_close_answered) close_answered, $(stat kept_connections_table_full) table_full"
div=5
[ "$EDGE_SRC" != proxy ] || div=2
tap_ok "$( ((kept_c >= 1 && kept_c * div <= src_r && kept_r >= src_r)) && echo 0 || echo 1)" \
	"the edge's connections for shoppers ($kept_c) are at most 1/$div of their requests ($src_r), all on kept connections ($kept_r kept requests)"
tap_is "$(stat kept_connections_table_full)" 0 "  the kept-connection table was never full"

# --- a data plane that stalls, as one on a loaded host may, stays in -------------------------
# HAProxy's checks give the data plane 2 s to answer (timeout check 2s; the connect within inter
# 2s) and take it out after 3 failures in a row (fall 3, fastinter 500ms meanwhile): a stall of
# 2.5 s fails one check at most. With checks of 500 ms in all (inter 500ms and no timeout
# check) and fall 2, a stall of 1.5 s took it out, and the shoppers' requests meanwhile found
# no server (the failure seen on a loaded host: "Layer4 timeout, check duration: 503ms").
if [ "$EDGE_KIND" = haproxy ]; then
	downs() { grep -c 'is DOWN' "$RUN/edge.log" || true; }
	# why the first check that took it out failed, for the message of a failure
	down_why() { grep -m1 -o 'is DOWN, reason: [^.]*' "$RUN/edge.log" || true; }
	tap_is "$(downs)" 0 "HAProxy's checks never took the data plane out so far (no 'is DOWN' in its log) $(down_why)"
	kill -STOP "$E2E_DP_PID"
	sleep 2.5
	kill -CONT "$E2E_DP_PID"
	sleep 3
	tap_is "$(downs)" 0 "  nor when it stalled for 2.5 s (SIGSTOP) and ran on $(down_why)"
	tap_diag "$(grep -E 'is (DOWN|UP)' "$RUN/edge.log" | tail -3)"
	tap_run "  a shopper's request right after: answered 200" healthz_ok
fi

# --- the data plane killed under the edge, and started again --------------------------------
kill -KILL "$E2E_DP_PID"
wait "$E2E_DP_PID" 2>/dev/null || true
E2E_DP_PID=
down=$(shop get "$SHOP_A" /healthz | jget status)
tap_ok "$([ "$down" != 200 ] && echo 0 || echo 1)" \
	"with the data plane killed the edge answers no 200 (got ${down:-nothing})"
fg_dp_start "${1:-}" "$E2E_PREFIX" "$E2E_TMP/dataplane.log" -c "$E2E_TMP/flashgate.conf" \
	"${E2E_DP_ARGS[@]}"
E2E_DP_PID=$FG_DP_PID
tap_run "the data plane starts again" fg_wait_line "$E2E_TMP/dataplane.log" 'ready:' \
	"$E2E_DP_PID" 30
tap_run "the edge recovers: /healthz through it answers 200 again" t_wait_until 30 healthz_ok
# Each buyer's reserve sent again after the restart, as a browser retries one that failed: the
# control plane decides it a duplicate, and the result is the buyer's one item.
for u in 201 202 203; do
	src=$SHOP_A
	[ "$u" != 202 ] || src=$SHOP_B
	again_done() {
		shop again "$src" "$EV" "${TOK[$u]}" "${PATHS[$u]}" >"$E2E_TMP/again$u.json"
		[ "$(jget reserve <"$E2E_TMP/again$u.json")" = 202 ]
	}
	t_wait_until 20 again_done || true
	r=$(cat "$E2E_TMP/again$u.json")
	# reserved, or duplicate while the restarted data plane does not know the first one's
	# result yet (docs/api.md): either way the one item the user holds, and no second.
	got=$(jget reserve <<<"$r")/$(jget result <<<"$r")
	case $got in 202/duplicate) got=202/reserved ;; esac
	tap_is "$got" 202/reserved "user $u reserves again after the restart: 202, still its one item"
done
tap_is "$(t_redis hlen "fg:{$EV}:result")/$(t_redis get "fg:{$EV}:stock")" "3/$((STOCK - 3))" \
	"Redis: 3 buyers, stock $((STOCK - 3)): nothing was decided twice"
buy 204 "$SHOP_B"
tap_is "$BOUGHT" 200/202/reserved "a new buyer after the restart gets the last item"
buy 205 "$SHOP_A"
tap_is "$BOUGHT" 410// "the next one is told sold out (410)"
tap_is "$(t_redis hlen "fg:{$EV}:result")/$(t_redis get "fg:{$EV}:stock")" "$STOCK/0" \
	"Redis: $STOCK buyers, stock 0"
dups=$(t_redis xrange "fg:{$EV}:outbox" - + | awk 'prev == "u" { print } { prev = $0 }' | sort |
	uniq -d | wc -l)
tap_is "$dups" 0 "  no user twice in the outbox"
st=$(ctlj stats)
n=$(python3 -c 'import json,sys
d=json.loads(sys.argv[1])["dp_totals"]
s=sys.argv[2]
print(d.get("client_addresses", {}).get(s, d.get("client_addresses.source=" + s, 0)))' "$st" "$EDGE_SRC" 2>/dev/null || echo 0)
tap_ok "$( ((n > 0)) && echo 0 || echo 1)" \
	"flashgatectl stats shows the requests by client address source ($n from $SRC_NAME)"
k=$(python3 -c 'import json,sys
d=json.loads(sys.argv[1])["dp_totals"]
print(d.get("kept_connections", {}).get("requests", d.get("kept_connections.event=requests", 0)))' "$st" 2>/dev/null || echo 0)
tap_ok "$( ((k > 0)) && echo 0 || echo 1)" \
	"  and the requests on kept connections since the restart ($k)"

fg_stop_pid "$EDGE_PID" 10 || true
EDGE_PID=
e2e_stop_dataplane
tap_done
