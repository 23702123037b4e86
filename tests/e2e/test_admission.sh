#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# shellcheck disable=SC2317 # some functions are only called through t_wait_until or tap_run
#
# Admission end to end: the data plane on the test network, the test peer (tests/peer/fg_testpeer.c)
# as its control plane over real ZeroMQ on 127.0.0.1, curl from the client namespace, and session
# tokens minted in Python from docs/tokens.md. Covers the life of a sale as a shop sees it: not
# ready before the control plane's snapshot, 425 before the start, session -> purchase token ->
# hidden reserve path -> 202 + receipt -> result; every refusal (401, 403, 404, 410, 429) with its
# reason; stock running out; risk rules and rate limits pushed at run time; CORS; the counters.
# usage: test_admission.sh DATAPLANE_EXECUTABLE FG_TESTPEER_EXECUTABLE   (prints TAP; needs root)
set -euo pipefail
# shellcheck source=tests/e2e/harness.sh
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

PEER_EXE=${2:-}
MINT=("python3" "$E2E_DIR/mint_token.py")

# The control plane's keys, given to the peer; the test mints with them as the shop would.
AUTH_KID=1 AUTH_KEY=authkey-0123456789abcdef
SALE_KID=7 SALE_KEY=salekey-0123456789abcdef
ORIGIN=https://shop.example
# Events of the peer: 1 for the purchase flow, 3 with little stock, 5 as "another event".
EV=1 EV_STOCK=3 EV_OTHER=5 STOCK=3
# Limits: IP rate/burst, user, device, forward budget. The user's bucket is small so that a few
# quick requests of one user meet it; every other user below makes at most 3 counted requests.
USER_RATE=1 USER_BURST=3
LIMITS=1000,2000,$USER_RATE,$USER_BURST,0,0,1000

E2E_TOOLS=(mkfifo)
mapfile -t zmq_ports < <(fg_free_ports 2)
PULL_EP=tcp://127.0.0.1:${zmq_ports[0]}
PUB_EP=tcp://127.0.0.1:${zmq_ports[1]}
E2E_DP_ARGS=(-s "bridge.push_endpoint=$PULL_EP" -s "bridge.sub_endpoint=$PUB_EP"
	-s "admission.cors_origin=$ORIGIN" -s admission.limit_table_log2=12)

# What this test expects in the data plane's counters: EXP[counter] += 1 for every request made.
declare -A EXP=()
expect() {
	EXP[$1]=$((${EXP[$1]:-0} + 1))
}

e2e_begin adm "${1:-}"
if [ -z "$PEER_EXE" ] || [ ! -x "$PEER_EXE" ]; then
	tap_bail "fg_testpeer executable given as the second argument ('$PEER_EXE')"
fi

session() { # USER [EXPIRES]: a session token of the shop's login service
	"${MINT[@]}" session "text:$AUTH_KEY" "$AUTH_KID" "$1" "${2:-+600}"
}

# tamper TOKEN: the same token with its MAC's first character changed.
tamper() {
	local head=${1%.*} mac=${1##*.} c=A
	[ "${mac:0:1}" != A ] || c=B
	printf '%s.%s%s\n' "$head" "$c" "${mac:1}"
}

# lacks_header NAME REGEX: true when no header line of response NAME matches.
lacks_header() {
	! e2e_has_header "$@"
}

# in_range V LO HI: true when V is a decimal number in [LO, HI].
in_range() {
	[[ $1 =~ ^[0-9]+$ ]] && (($1 >= $2 && $1 <= $3))
}

# header NAME FIELD: the value of a header of response NAME (empty when absent).
header() {
	tr -d '\r' <"$E2E_TMP/$1.h" | sed -n "s/^$2: *//Ip" | head -n 1
}

# token NAME EVENT [CURL ARGS...]: POST /api/v1/events/EVENT/token.
token() {
	local name=$1 ev=$2
	shift 2
	e2e_curl "$name" "$E2E_BASE/api/v1/events/$ev/token" -X POST "$@"
}

# get_token NAME EVENT USER: a purchase token for USER (checked to be 200); sets TOK and RPATH.
get_token() {
	token "$1" "$2" -H "Authorization: Bearer $(session "$3")"
	expect admits_token_issued
	TOK=$(e2e_json_field "$1" token)
	RPATH=$(e2e_json_field "$1" reserve_path)
	[ "$E2E_CODE" = 200 ] && [ -n "$TOK" ] && [ -n "$RPATH" ]
}

# reserve NAME PATH [CURL ARGS...]: POST to a reserve path.
reserve() {
	local name=$1 path=$2
	shift 2
	e2e_curl "$name" "$E2E_BASE$path" -X POST "$@"
}

# poll NAME EVENT TOKEN: GET the result with a receipt or purchase token; sets STATUS.
POLLS=0
poll() {
	e2e_curl "$1" "$E2E_BASE/api/v1/events/$2/result" -H "X-Flash-Token: $3"
	STATUS=$(e2e_json_field "$1" status)
	[ "$E2E_CODE" != 200 ] || POLLS=$((POLLS + 1))
}

# poll_decided NAME EVENT TOKEN: polls until the result is no longer "queued" (at most 10 s).
poll_decided() {
	local deadline=$((SECONDS + 10))
	while :; do
		poll "$@"
		[ "$E2E_CODE" = 200 ] && [ "$STATUS" = queued ] && ((SECONDS < deadline)) || return 0
		sleep 0.1
	done
}

# bridge FIELD: a field of /flashgate/bridge (0 when unreadable, so waits simply go on).
bridge() {
	e2e_telemetry_field /flashgate/bridge "$1" || echo 0
}

bridge_ready() {
	[ "$(bridge ready)" = 1 ]
}

# bridge_above FIELD N: true when that field of /flashgate/bridge is above N.
bridge_above() {
	[ "$(bridge "$1")" -gt "$2" ]
}

# peer_change DESCRIPTION COMMAND: sends the peer a state change and waits (10 s at most) until
# the data plane published a new version of its shared state.
peer_change() {
	local v rc=0
	v=$(bridge shared_versions)
	e2e_peer_cmd "$2" || rc=$?
	[ "$rc" -ne 0 ] || t_wait_until 10 bridge_above shared_versions "$v" || rc=$?
	tap_ok "$rc" "$1 (peer: ${E2E_PEER_REPLY:-no answer})"
}

# --- before the control plane: config events, nothing from the peer yet -----------------------
tap_run "the Python minter reproduces every worked example of docs/tokens.md" \
	"${MINT[@]}" --self-test
tap_is "$(bridge ready)" 0 "/flashgate/bridge: not ready before the control plane answers"

token early "$EV" -H "Authorization: Bearer $(session 900)"
expect rejects_not_ready
tap_is "$E2E_CODE" 503 "token before the snapshot: 503"
tap_run "token before the snapshot: Retry-After" test -n "$(header early retry-after)"

reserve early-res "/api/v1/events/$EV/reserve/$SALE_KID-AAAAAAAAAAAAAAAA" -H 'X-Flash-Token: x'
expect rejects_not_ready
tap_is "$E2E_CODE" 503 "reserve before the snapshot: 503"

# Event 2 of the config starts tomorrow; the peer has no upcoming events (its --event makes sales
# that are open now), so 425 is checked here, while the config's events are in force.
token upcoming 2 -H "Authorization: Bearer $(session 900)"
expect rejects_too_early
tap_is "$E2E_CODE" 425 "token of an upcoming sale: 425"
ra=$(header upcoming retry-after)
tap_run "425: Retry-After is the seconds until the start (1..86400, got '$ra')" \
	in_range "$ra" 1 86400
tap_is "$(e2e_json_field upcoming error)" "the sale has not started" "425: the error text"

# --- the control plane arrives ----------------------------------------------------------------
rc=0
e2e_peer_start "$PEER_EXE" --pull "$PULL_EP" --pub "$PUB_EP" \
	--event "$EV:100:flow sale" --event "$EV_STOCK:$STOCK:small stock" \
	--event "$EV_OTHER:100:other sale" \
	--key "auth:$AUTH_KID:$AUTH_KEY:current" --key "sale:$SALE_KID:$SALE_KEY:current" \
	--limits "$LIMITS" || rc=$?
tap_ok "$rc" "the test peer is ready on $PULL_EP and $PUB_EP"
[ "$rc" -eq 0 ] || {
	tap_diag "$(cat "$E2E_TMP/peer.err")"
	tap_bail "the test peer started"
}
rc=0
t_wait_until 20 bridge_ready || rc=$?
tap_ok "$rc" "/flashgate/bridge: ready once the peer's snapshot arrived (within 20 s)"
[ "$rc" -eq 0 ] || tap_bail "the data plane became ready"

e2e_curl ev-stock "$E2E_BASE/api/v1/events/$EV_STOCK"
tap_is "$E2E_CODE/$(e2e_json_field ev-stock stock)" "200/$STOCK" \
	"GET event $EV_STOCK: the control plane's event with its stock"
e2e_curl ev-2 "$E2E_BASE/api/v1/events/2"
tap_is "$E2E_CODE" 404 "GET event 2: the control plane's events replaced the config's"

# --- token --------------------------------------------------------------------------------------
token no-auth "$EV"
expect rejects_no_session
tap_is "$E2E_CODE" 401 "token without Authorization: 401"
tap_is "$(e2e_json_field no-auth error)" "log in first: Authorization: Bearer <session token>" \
	"401: the error says how to log in"

token basic "$EV" -H "Authorization: Basic dXNlcjpwYXNz"
expect rejects_no_session
tap_is "$E2E_CODE" 401 "token with Authorization: Basic: 401"

token tampered "$EV" -H "Authorization: Bearer $(tamper "$(session 1001)")"
expect rejects_session_invalid
tap_is "$E2E_CODE/$(e2e_json_field tampered error)" "401/invalid session" \
	"token with a tampered session: 401 invalid session"

token wrong-key "$EV" -H "Authorization: Bearer $("${MINT[@]}" session "text:$AUTH_KEY" 9 1001 +600)"
expect rejects_session_invalid
tap_is "$E2E_CODE" 401 "token with a session of an unknown key id: 401"

token expired "$EV" -H "Authorization: Bearer $(session 1001 -10)"
expect rejects_session_expired
tap_is "$E2E_CODE/$(e2e_json_field expired error)" "401/session expired: log in again" \
	"token with an expired session: 401 session expired"

token no-event 999 -H "Authorization: Bearer $(session 1001)"
expect rejects_no_event
tap_is "$E2E_CODE" 404 "token of an unknown event: 404"

# User A (1001) buys in event 1.
rc=0
get_token tok-a "$EV" 1001 || rc=$?
tap_ok "$rc" "token with a valid session: 200 with token and reserve_path"
TOK_A=$TOK PATH_A=$RPATH
tap_run "the purchase token is p1.$EV.1001.<expiry>.$SALE_KID.<mac> (got '$TOK_A')" \
	grep -Eq "^p1\.$EV\.1001\.[0-9]+\.$SALE_KID\.[A-Za-z0-9_-]{22}$" <<<"$TOK_A"
tap_is "$PATH_A" "$("${MINT[@]}" path "text:$SALE_KEY" "$SALE_KID" "$EV")" \
	"reserve_path is the hidden path docs/tokens.md derives from the sale key"
ttl=$(($(e2e_json_field tok-a expires_at) - $(e2e_json_field tok-a server_time)))
tap_run "expires_at is purchase_token_ttl (5 min) after server_time (got ${ttl} ms)" \
	in_range "$ttl" 299001 300000

# --- reserve ------------------------------------------------------------------------------------
reserve wrong-path "/api/v1/events/$EV/reserve/$SALE_KID-AAAAAAAAAAAAAAAA" \
	-H "X-Flash-Token: $TOK_A"
expect rejects_bad_reserve_path
tap_is "$E2E_CODE/$(e2e_json_field wrong-path error)" "403/no such reserve path" \
	"reserve on a wrong path: 403"

reserve no-token "$PATH_A"
expect rejects_no_token
tap_is "$E2E_CODE" 403 "reserve without X-Flash-Token: 403"

reserve bad-token "$PATH_A" -H "X-Flash-Token: $(tamper "$TOK_A")"
expect rejects_token_invalid
tap_is "$E2E_CODE/$(e2e_json_field bad-token error)" "403/invalid purchase token" \
	"reserve with a tampered purchase token: 403"

rc=0
get_token tok-b5 "$EV_OTHER" 1002 || rc=$?
tap_ok "$rc" "user B gets a purchase token of event $EV_OTHER"
TOK_B5=$TOK
reserve other-event "$PATH_A" -H "X-Flash-Token: $TOK_B5"
expect rejects_token_other_event
tap_is "$E2E_CODE/$(e2e_json_field other-event error)" \
	"403/the purchase token is for another event" \
	"reserve in event $EV with a token of event $EV_OTHER: 403"

reserve tok-expired "$PATH_A" -H "X-Flash-Token: $("${MINT[@]}" purchase "text:$SALE_KEY" \
	"$SALE_KID" "$EV" 1001 -10)"
expect rejects_token_expired
tap_is "$E2E_CODE" 403 "reserve with an expired purchase token: 403"

reserve other-user "$PATH_A" -H "X-Flash-Token: $TOK_A" -H "Authorization: Bearer $(session 1002)"
expect rejects_token_other_user
tap_is "$E2E_CODE/$(e2e_json_field other-user error)" \
	"403/the purchase token belongs to another user" \
	"reserve with user A's token and user B's session: 403"

reserve res-a "$PATH_A" -H "X-Flash-Token: $TOK_A" -H "Authorization: Bearer $(session 1001)"
expect admits_reserve_admitted
tap_is "$E2E_CODE/$(e2e_json_field res-a status)" 202/queued \
	"reserve with the token (and the same user's session): 202 queued"
RC_A=$(e2e_json_field res-a receipt)
rc_ms=$(cut -d. -f4 <<<"$RC_A")
tap_is "$RC_A" "$("${MINT[@]}" receipt "text:$SALE_KEY" "$SALE_KID" "$EV" 1001 "${rc_ms:-0}")" \
	"the receipt r1.$EV.1001.<admitted_ms>.$SALE_KID.<rmac> is what docs/tokens.md makes of it"
tap_is "$(e2e_json_field res-a result_path)" "/api/v1/events/$EV/result" "202: result_path"

poll_decided poll-a "$EV" "$RC_A"
tap_is "$E2E_CODE/$STATUS" 200/reserved "result with the receipt: reserved"
poll poll-a-tok "$EV" "$TOK_A"
tap_is "$STATUS" reserved "result with the purchase token: reserved"

# The same user again, once its result is here: answered from the result table (a known buyer,
# docs/api.md), 200 with that result; nothing goes to the control plane (the bridge's count of
# reservations handed over, checked at the end, does not grow).
in_results=$(bridge in_result)
reserve res-a2 "$PATH_A" -H "X-Flash-Token: $TOK_A"
tap_is "$E2E_CODE/$(e2e_json_field res-a2 status)" 200/reserved \
	"the same user reserves again: 200 with its result (reserved), answered here"
poll poll-a2 "$EV" "$RC_A"
tap_is "$STATUS" reserved "after the second attempt the result is still reserved"
tap_is "$(bridge in_result)" "$in_results" "  and no verdict of a second attempt came back"

# No leak: C holds a token and reserved nothing; its polls never show A's result.
rc=0
get_token tok-c "$EV" 1003 || rc=$?
TOK_C=$TOK
poll poll-c "$EV" "$TOK_C"
tap_is "$rc/$STATUS" 0/queued "user C (no reservation) polls: queued, not user A's result"
poll poll-a-ev5 "$EV_OTHER" "$RC_A"
expect rejects_token_other_event
tap_is "$E2E_CODE" 403 "user A's receipt on another event's result: 403"
forged=${RC_A/#r1.$EV.1001./r1.$EV.1003.}
poll poll-forged "$EV" "$forged"
expect rejects_token_invalid
tap_is "$E2E_CODE" 403 "user A's receipt relabelled for user C: 403"
poll poll-none "$EV" ""
expect rejects_no_token
tap_is "$E2E_CODE" 403 "result without X-Flash-Token: 403"

# --- stock: 3 items, 5 buyers -------------------------------------------------------------------
declare -a TOKS PATHS RCS
rc=0
for u in 301 302 303 304 305 306; do
	get_token "tok-$u" "$EV_STOCK" "$u" || rc=1
	TOKS[u]=$TOK PATHS[u]=$RPATH
done
tap_ok "$rc" "six users get purchase tokens of event $EV_STOCK (stock $STOCK)"

# The peer reads nothing while paused, so all five reach it before its SOLD_OUT can reach us.
tap_run "the peer pauses (it reads nothing until resumed)" e2e_peer_cmd pause
rc=0
for u in 301 302 303 304 305; do
	reserve "res-$u" "${PATHS[u]}" -H "X-Flash-Token: ${TOKS[u]}"
	expect admits_reserve_admitted
	[ "$E2E_CODE" = 202 ] || rc=1
	RCS[u]=$(e2e_json_field "res-$u" receipt)
done
tap_ok "$rc" "five users reserve while the control plane is paused: five 202"
tap_run "the peer resumes" e2e_peer_cmd resume

got=()
for u in 301 302 303 304 305; do
	poll_decided "poll-$u" "$EV_STOCK" "${RCS[u]}"
	got+=("$u:$STATUS")
done
tap_is "${got[*]}" "301:reserved 302:reserved 303:reserved 304:sold_out 305:sold_out" \
	"each receipt shows its own user's result: the first $STOCK reserved, the rest sold_out"
got=()
for u in 301 305; do
	poll "poll-tok-$u" "$EV_STOCK" "${TOKS[u]}"
	got+=("$u:$STATUS")
done
tap_is "${got[*]}" "301:reserved 305:sold_out" "the purchase tokens show the same results"

sold_out() {
	e2e_curl ev-sold "$E2E_BASE/api/v1/events/$EV_STOCK"
	[ "$(e2e_json_field ev-sold state)" = sold_out ]
}
rc=0
t_wait_until 10 sold_out || rc=$?
tap_ok "$rc" "the peer's SOLD_OUT reached the data plane: event $EV_STOCK is sold_out"

reserves=$(e2e_peer_stat reserves || echo "no answer")
token sold-tok "$EV_STOCK" -H "Authorization: Bearer $(session 307)"
expect rejects_sold_out
tap_is "$E2E_CODE/$(e2e_json_field sold-tok error)" "410/sold out" "token after sold out: 410"
reserve sold-res "${PATHS[306]}" -H "X-Flash-Token: ${TOKS[306]}"
expect rejects_sold_out
tap_is "$E2E_CODE" 410 "reserve after sold out (with a token from before): 410"
sleep 0.5 # what a forwarded reservation would need to reach the peer
after=$(e2e_peer_stat reserves || echo "no answer")
# A peer that does not answer proves nothing: both counts must be numbers.
tap_ok "$([[ $reserves =~ ^[0-9]+$ && $after == "$reserves" ]]; echo $?)" \
	"the 410s were answered without the control plane (its reserve count $reserves, then $after)"

# --- risk rules, pushed at run time ---------------------------------------------------------------
peer_change "the peer blocks the client's address" "rules ip $FG_CL_ADDR"
token blk-tok "$EV" -H "Authorization: Bearer $(session 401)"
expect rejects_blocked_ip
tap_is "$E2E_CODE/$(e2e_json_field blk-tok error)" 403/blocked "blocked address: token 403"
reserve blk-res "$PATH_A" -H "X-Flash-Token: $TOK_C"
expect rejects_blocked_ip
tap_is "$E2E_CODE" 403 "blocked address: reserve 403"
poll blk-poll "$EV" "$RC_A"
expect rejects_blocked_ip
tap_is "$E2E_CODE" 403 "blocked address: result 403"
e2e_curl blk-ev "$E2E_BASE/api/v1/events/$EV"
tap_is "$E2E_CODE" 200 "blocked address: GET of the event still 200 (rules guard admission)"

peer_change "the peer clears the rules" "rules"
rc=0
get_token unblk "$EV" 401 || rc=$?
tap_ok "$rc" "no rules: the same token request is 200 again"

peer_change "the peer blocks user 42" "rules user 42"
token blk-42 "$EV" -H "Authorization: Bearer $(session 42)"
expect rejects_blocked_user
tap_is "$E2E_CODE/$(e2e_json_field blk-42 error)" 403/blocked "blocked user 42: token 403"
rc=0
get_token ok-43 "$EV" 43 || rc=$?
tap_ok "$rc" "user 43 is not blocked: token 200"
TOK_43=$TOK PATH_43=$RPATH

peer_change "the peer blocks device bot-7" "rules device bot-7"
reserve blk-dev "$PATH_43" -H "X-Flash-Token: $TOK_43" -H "X-Device-Id: bot-7"
expect rejects_blocked_device
tap_is "$E2E_CODE" 403 "blocked device: reserve 403"
peer_change "the peer clears the rules again" "rules"

# --- rate limit per user --------------------------------------------------------------------------
# One curl process, six token requests of user 501 back to back: the bucket holds USER_BURST and
# gains USER_RATE a second, so the first USER_BURST pass and the rest meet the limit unless the
# six take seconds.
conf=$E2E_TMP/limit.curl
{
	# Options of a curl config apply to every URL in it: one header line, not one per URL.
	printf 'request = "POST"\nheader = "Authorization: Bearer %s"\n' "$(session 501)"
	for ((i = 0; i < 6; i++)); do
		printf 'url = "%s/api/v1/events/%s/token"\noutput = "/dev/null"\n' "$E2E_BASE" "$EV"
	done
} >"$conf"
fg_ns_exec timeout 60 curl -s --connect-timeout 3 --max-time 5 \
	-w '%{http_code} %header{retry-after}\n' -K "$conf" >"$E2E_TMP/limit.out" 2>&1 || true
mapfile -t limit_codes <"$E2E_TMP/limit.out"
tap_diag "user 501, six quick token requests: ${limit_codes[*]}"
first=$(printf '%s\n' "${limit_codes[@]:0:USER_BURST}" | awk '{print $1}' | tr '\n' ' ')
tap_is "$first" "$(printf '200 %.0s' $(seq "$USER_BURST"))" \
	"the first $USER_BURST (the burst) token requests of one user: 200"
n429=$(printf '%s\n' "${limit_codes[@]}" | grep -c '^429 [1-9][0-9]*$' || true)
tap_run "a request beyond the burst: 429 with Retry-After (got $n429)" test "$n429" -ge 1
n200=$(printf '%s\n' "${limit_codes[@]}" | grep -c '^200' || true)
for ((i = 0; i < n429; i++)); do expect rejects_limit_user; done
for ((i = 0; i < n200; i++)); do expect admits_token_issued; done
tap_is "$((n200 + n429))" 6 "every one of the six was answered 200 or 429"

# --- CORS ---------------------------------------------------------------------------------------
e2e_curl cors-ok "$E2E_BASE/api/v1/events/$EV" -H "Origin: $ORIGIN"
tap_is "$(header cors-ok access-control-allow-origin)" "$ORIGIN" \
	"Origin $ORIGIN: Access-Control-Allow-Origin: $ORIGIN"
tap_run "Origin $ORIGIN: Vary: Origin" e2e_has_header cors-ok '^vary: *origin'
e2e_curl cors-no "$E2E_BASE/api/v1/events/$EV" -H "Origin: https://evil.example"
tap_run "another Origin: no Access-Control-Allow-Origin" \
	lacks_header cors-no '^access-control-allow-origin:'
token cors-401 "$EV" -H "Origin: $ORIGIN"
expect rejects_no_session
tap_is "$E2E_CODE/$(header cors-401 access-control-allow-origin)" "401/$ORIGIN" \
	"a refusal (401) to $ORIGIN carries Access-Control-Allow-Origin too"

e2e_curl pre "$E2E_BASE/api/v1/events/$EV/token" -X OPTIONS -H "Origin: $ORIGIN" \
	-H "Access-Control-Request-Method: POST" \
	-H "Access-Control-Request-Headers: authorization"
expect admits_cors_preflight
tap_is "$E2E_CODE" 204 "OPTIONS preflight from $ORIGIN: 204"
tap_run "preflight: Access-Control-Allow-Methods with POST" \
	e2e_has_header pre '^access-control-allow-methods:.*POST'
tap_run "preflight: Access-Control-Allow-Headers with Authorization" \
	e2e_has_header pre '^access-control-allow-headers:.*authorization'
tap_run "preflight: Access-Control-Allow-Headers with X-Flash-Token" \
	e2e_has_header pre '^access-control-allow-headers:.*x-flash-token'
tap_is "$(header pre access-control-allow-origin)" "$ORIGIN" \
	"preflight: Access-Control-Allow-Origin: $ORIGIN"
tap_run "preflight: no Content-Length on the 204" lacks_header pre '^content-length:'
e2e_curl pre-no "$E2E_BASE/api/v1/events/$EV/token" -X OPTIONS -H "Origin: https://evil.example" \
	-H "Access-Control-Request-Method: POST"
expect admits_cors_preflight
tap_is "$E2E_CODE" 204 "preflight from another Origin: 204"
tap_run "preflight from another Origin: no Access-Control-Allow-* (the browser refuses)" \
	lacks_header pre-no '^access-control-allow-'

# --- the counters match what this test did --------------------------------------------------------
rc=0
e2e_stats "$E2E_TMP/stats.json" || rc=$?
tap_ok "$rc" "telemetry /flashgate/stats answers"
exp_args=()
for k in "${!EXP[@]}"; do exp_args+=("$k=${EXP[$k]}"); done
python3 - "$E2E_TMP/stats.json" "$POLLS" "${exp_args[@]}" >"$E2E_TMP/counters.out" <<'EOF' || rc=$?
import json, sys
stats = json.load(open(sys.argv[1]))["/flashgate/stats"]
polls = int(sys.argv[2])
want = {k: int(v) for k, v in (a.split("=") for a in sys.argv[3:])}
bad = 0
# Every refusal and every "yes" this test caused, and none it did not.
for k in sorted(stats):
    if not (k.startswith("rejects_") or k in ("admits_token_issued", "admits_reserve_admitted",
                                          "admits_cors_preflight")):
        continue
    ok = stats[k] == want.get(k, 0)
    bad += not ok
    if stats[k] or want.get(k, 0):
        print(f"# {k}: {stats[k]} (this test expects {want.get(k, 0)}){'' if ok else '  <-- differs'}")
got = stats.get("admits_result_found", 0) + stats.get("admits_result_queued", 0)
print(f"# admits_result_found + admits_result_queued: {got} (polls answered 200: {polls})")
bad += got != polls
sys.exit(1 if bad else 0)
EOF
cat "$E2E_TMP/counters.out"
tap_ok "$rc" "/flashgate/stats: the rejects_* and admits_* counters equal what this test did"

admitted=${EXP[admits_reserve_admitted]}
tap_is "$(bridge submitted)" "$admitted" "/flashgate/bridge: $admitted reservations handed over"
tap_is "$(e2e_peer_stat reserves || echo ?)/$(e2e_peer_stat dups || echo ?)" "$admitted/0" \
	"the peer received each of the $admitted admitted reservations exactly once"

# --- stop: exit 0, final counters with the bridge line ---------------------------------------------
lines=$(wc -l <"$E2E_TMP/dataplane.log")
e2e_stop_dataplane
tail -n "+$((lines + 1))" "$E2E_TMP/dataplane.log" >"$E2E_TMP/final.log"
tap_run "the final counters include the bridge: $admitted reservations handed over" \
	grep -Eq "bridge: $admitted reservations handed over" "$E2E_TMP/final.log"
e2e_peer_stop
tap_is "$E2E_PEER_RC" 0 "the test peer exits 0 on its quit command"
tap_done
