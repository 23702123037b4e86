#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The sale page (web/) in a real browser: headless Chromium driven by Selenium in the client
# namespace loads it over https from an nginx edge (scripts/page-edge) that proxies /api/ to the
# data plane, against the real control plane, order writer, Redis and PostgreSQL. The buyers'
# scenarios are in page_scenarios.py (countdown, one click, sold out, expired, paid, a reload
# while queued, a second tab of a buyer who holds an order, the connection lost while ordered, a
# login expired then renewed, a sale with a line, a draw and a challenge: the challenge's time in
# the browser printed, the place in line shown), all under the edge's Content-Security-Policy (a
# violation the browser reports fails the test); screenshots of every step go to SHOTS_DIR.
#
# usage: test_page.sh DATAPLANE CONTROLPLANE FLASHGATECTL ORDER_WRITER SHOTS_DIR
set -euo pipefail
. "$(dirname "$0")/harness.sh"

CP_EXE=${2:-} CTL_EXE=${3:-} OW_EXE=${4:-} SHOTS=${5:-}
mapfile -t PORTS < <(fg_free_ports 2)
PULL=tcp://127.0.0.1:${PORTS[0]} PUB=tcp://127.0.0.1:${PORTS[1]}
# The page's edge runs on the client's address (the harness's 198.18.10.1): the data plane trusts
# it to tell the shopper's address (X-Forwarded-For), as docs/page.md says to set it up.
EDGE_IP=198.18.10.1
E2E_DP_ARGS=(-s "bridge.push_endpoint=$PULL" -s "bridge.sub_endpoint=$PUB"
	-s "edge.trusted=$EDGE_IP" -s admission.cors_origin=https://shop.example)
E2E_TOOLS=(redis-cli psql nginx openssl chromium chromedriver)
e2e_begin pg "$1"
[ "$FG_CL_ADDR" = "$EDGE_IP" ] || tap_bail "the client's address is $EDGE_IP (edge.trusted)"
[ -x "$CP_EXE" ] && [ -x "$CTL_EXE" ] && [ -x "$OW_EXE" ] && [ -n "$SHOTS" ] ||
	tap_bail "control plane, flashgatectl, order writer and a screenshot folder given"
/usr/bin/python3 -c 'import selenium' 2>/dev/null ||
	tap_bail "python3-selenium is installed (scripts/install-deps)"

SVC=$E2E_TMP/svc ADMIN=$E2E_TMP/admin.sock EDGE=$E2E_TMP/edge
CP_PID= OW_PID= EDGE_PID= PY_PID=
chmod o+x "$E2E_TMP"
pg_cleanup() {
	[ -z "$PY_PID" ] || fg_stop_pid "$PY_PID" 10 || true
	# A control plane stopped by a scenario must be able to take its SIGTERM.
	[ -z "$CP_PID" ] || kill -CONT "$CP_PID" 2>/dev/null || true
	for p in $EDGE_PID $OW_PID $CP_PID; do fg_stop_pid "$p" 10 || true; done
	"$FG_ROOT/scripts/services" down "$SVC" >/dev/null 2>&1 || true
}
trap 'pg_cleanup; e2e_cleanup' EXIT
t_services_up "$SVC"

# Sale C's draw decides one entrant a batch, so that the scenario can hold it (Redis paused for
# a few seconds: a longer reply timeout).
t_cp_start "$CP_EXE" "$E2E_TMP/cp.log" "$ADMIN" "$PULL" "$PUB" -s controlplane.draw_batch=1 \
	-s redis.timeout=10s || tap_bail "control plane ready"
# Unpaid orders expire within a second of their deadline.
"$OW_EXE" -s "order_writer.push_endpoint=$PULL" -s order_writer.sweep_interval=1s \
	"${T_REDIS[@]}" -s "postgres.conninfo=$FG_PG_CONNINFO" \
	>"$E2E_TMP/ow.log" 2>&1 &
OW_PID=$!

T_CTL=$CTL_EXE T_ADMIN=$ADMIN
AUTH=$(python3 -c 'import os; print(os.urandom(32).hex())')
# Sale A starts in START_IN seconds: 2 items, a pay window of 20 s. Sale B is open: 5 items.
EV_A=21 EV_B=22 START_IN=90 PAY_WINDOW=20
starts_a=$(($(date +%s) + START_IN))
setup() {
	ctl keys auth-set 1 <<<"$AUTH" >/dev/null && ctl keys rotate >/dev/null &&
		ctl limits set ip 100000/4000 user 20/20 device 20/20 forward 100000 >/dev/null &&
		ctl event create $EV_A --name "Page test: 2 lamps" --stock 2 \
			--starts-at "$(date -u -d "@$starts_a" +%Y-%m-%dT%H:%M:%SZ)" \
			--ends-at 2036-01-01T00:00:00Z --pay-window ${PAY_WINDOW}s >/dev/null &&
		ctl event preheat $EV_A >/dev/null && ctl event open $EV_A >/dev/null &&
		ctl event create $EV_B --name "Page test: 5 cups" --stock 5 \
			--starts-at 2026-01-01T00:00:00Z --ends-at 2036-01-01T00:00:00Z \
			--pay-window 10m >/dev/null &&
		ctl event preheat $EV_B >/dev/null && ctl event open $EV_B >/dev/null
}
tap_run "two sales set up with flashgatectl (one starting in ${START_IN}s, one open)" setup
state_is() { # EVENT STATE
	e2e_curl ev "$E2E_BASE/api/v1/events/$1"
	grep -q "\"state\":\"$2\"" "$E2E_TMP/ev.b"
}
tap_run "the data plane shows sale B open" t_wait_until 20 state_is $EV_B open

# The edge in the client namespace, on the client's address, as the buyers' https origin.
EDGE_ADDR=$FG_CL_ADDR:8443
fg_ns_exec "$FG_ROOT/scripts/page-edge" "$EDGE" "$EDGE_ADDR" "$FG_DP_ADDR:$E2E_PORT" \
	>"$E2E_TMP/edge.out" 2>&1 &
EDGE_PID=$!
edge_up() { fg_ns_exec curl -sk --max-time 2 -o /dev/null "https://$EDGE_ADDR/index.html"; }
t_wait_until 20 edge_up || {
	tap_diag "$(cat "$E2E_TMP/edge.out")"
	tap_bail "the nginx edge answers https://$EDGE_ADDR/"
}
tap_ok 0 "the nginx edge serves web/ over https and proxies /api/ to the data plane"
e2e_curl api "https://$EDGE_ADDR/api/v1/events/$EV_B" -k
tap_is "$E2E_CODE" 200 "GET /api/v1/events/$EV_B through the edge answers 200"
e2e_curl page "https://$EDGE_ADDR/index.html" -k
csp="^content-security-policy: default-src 'none'; script-src 'self'; style-src 'self'; \
img-src 'self'; connect-src 'self'; worker-src 'self'; base-uri 'none'; form-action 'none'; \
frame-ancestors 'none'"
rc=0
e2e_has_header page "$csp" || rc=$?
tap_ok $rc "the page comes with a strict Content-Security-Policy (no inline script, scripts, \
workers and connections only from its origin)"
# A trusted edge's X-Forwarded-For that does not parse (this namespace's address is the trusted
# edge's): 400, with the CORS lines as every refusal of the parser (docs/api.md, CORS).
e2e_curl badxff "$E2E_BASE/api/v1/events/$EV_B" -H "X-Forwarded-For: not-an-address" \
	-H "Origin: https://shop.example"
rc=0
e2e_has_header badxff "^access-control-allow-origin: https://shop.example" || rc=$?
tap_ok $rc "a trusted edge's malformed X-Forwarded-For: $E2E_CODE, with the CORS lines \
($(tr -d '\r' <"$E2E_TMP/badxff.h" | grep -ci '^access-control') of them)"
tap_is "$E2E_CODE" 400 "  refused with 400"

rm -rf "$SHOTS"
mkdir -p "$SHOTS"
tap_diag "screenshots: $SHOTS"
# The scenarios print "ok ...", "not ok ...", "skip ... # reason" and "# ..." lines; each is
# one check here. They run in the client namespace, where the browsers are.
export PAGE_BASE="https://$EDGE_ADDR" PAGE_SPKI_FILE=$EDGE/edge.spki
export PAGE_ACCESS_LOG=$EDGE/access.log PAGE_SHOTS=$SHOTS PAGE_AUTH_HEX=$AUTH
export PAGE_EV_A=$EV_A PAGE_EV_B=$EV_B PAGE_STARTS_A=$((starts_a * 1000))
export PAGE_PAY_WINDOW=$PAY_WINDOW PAGE_CP_PID=$CP_PID PAGE_REDIS_SOCK=$FG_REDIS_SOCK
export PAGE_PSQL="psql -qtAX -h $FG_PG_HOST -p $FG_PG_PORT -U postgres flashgate"
# Sale C (a line, a draw and a challenge) is created by the scenario itself, when it comes.
export PAGE_CTL=$CTL_EXE PAGE_ADMIN=$ADMIN PAGE_EV_C=23 PAGE_DP_ADDR=$FG_DP_ADDR
fg_ns_exec /usr/bin/python3 "$E2E_DIR/page_scenarios.py" >"$E2E_TMP/scenarios.out" \
	2>"$E2E_TMP/scenarios.err" &
PY_PID=$!
e2e_relay "$PY_PID" "$E2E_TMP/scenarios.out" "$E2E_TMP/scenarios.err" "the browser scenarios"
PY_PID=
[ "$tap_failed" -eq 0 ] || tap_diag "edge log: $(tail -n 40 "$EDGE/access.log")"

# Two shoppers on two addresses through the page's edge are limited each on its own address
# (docs/page.md): with 2 requests of burst per IP, the first shopper's 4 token requests meet a
# 429, and the second's is still let through. An edge that forwarded no address would make them
# one (the edge's) or, trusted, none.
SHOP_A=${FG_CL_ADDR%.*}.201 SHOP_B=${FG_CL_ADDR%.*}.202
rc=0
fg_ns_exec ip addr add "$SHOP_A/32" dev lo && fg_ns_exec ip addr add "$SHOP_B/32" dev lo || rc=$?
tap_ok $rc "two shoppers' addresses in the client namespace ($SHOP_A, $SHOP_B)"
rc=0
ctl limits set ip 1/2 user 100/100 device 100/100 forward 100000 >/dev/null || rc=$?
tap_ok $rc "per-IP limit set to 1/s, a burst of 2"
sleep 1 # the limits reach the data plane
shop() { # ADDR USER N: N token requests of USER from ADDR through the edge, at once on one
	# connection (minted first: a slow start must not let the bucket refill); prints statuses
	local tok o=()
	tok=$(python3 "$E2E_DIR/mint_token.py" session "hex:$AUTH" 1 "$2" +3600)
	for _ in $(seq "$3"); do o+=(-o /dev/null "https://$EDGE_ADDR/api/v1/events/$EV_B/token"); done
	fg_ns_exec curl -sk --interface "$1" --max-time 10 -w '%{http_code} ' -X POST \
		-H "Authorization: Bearer $tok" "${o[@]}"
}
a=$(shop "$SHOP_A" 501 4) || true
b=$(shop "$SHOP_B" 511 1) || true
b=${b% }
tap_diag "shopper A: $a; shopper B: $b"
rc=0
[[ $a == *429* ]] && [[ ${a%% *} != 429 ]] || rc=1
tap_ok $rc "shopper A is limited on its own address through the page's edge ($a)"
rc=0
[ "$b" != 429 ] && [ "$b" != 000 ] || rc=1
tap_ok $rc "shopper B, on another address, is not limited by A's requests ($b)"

e2e_invariants --event $EV_A --admin-socket "$ADMIN" --ctl "$CTL_EXE" --services "$SVC" --wait 30
e2e_invariants --event $EV_B --admin-socket "$ADMIN" --ctl "$CTL_EXE" --services "$SVC" --wait 30
e2e_invariants --event 23 --admin-socket "$ADMIN" --ctl "$CTL_EXE" --services "$SVC" --wait 30
e2e_stop_dataplane
tap_done
