#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A sale through every real component: curl in the client namespace -> the data plane on the
# veth -> ZeroMQ -> flashgate-controlplane -> reserve.lua in Redis, with the event, keys and
# limits set through flashgatectl and kept in PostgreSQL. Checks exact stock, one reservation
# per user, the sold-out moment reaching the data plane, the invariants in Redis, Redis killed
# and restarted mid-sale, flashgatectl's refusals, stats and metrics. Every ZeroMQ link is CURVE,
# with keys made by flashgatectl and the control plane's allow-list (docs/operations.md).
#
# usage: test_controlplane.sh DATAPLANE CONTROLPLANE FLASHGATECTL ORDER_WRITER
set -euo pipefail
. "$(dirname "$0")/harness.sh"

CP_EXE=${2:-}
CTL_EXE=${3:-}
OW_EXE=${4:-}
OW_PID=
STOCK=5
USERS=8
DOUBLE=3 # the first DOUBLE users click reserve twice, as an impatient buyer does
EV=7

mapfile -t PORTS < <(fg_free_ports 3)
PULL_PORT=${PORTS[0]} PUB_PORT=${PORTS[1]} METRICS_PORT=${PORTS[2]}
# The link keys, before the data plane starts: the control plane's, a data plane's and an order
# writer's, the last two in the control plane's allow-list.
KEYS=$(mktemp -d /tmp/fg-e2e-cp-keys.XXXXXX)
trap 'rm -rf "$KEYS"' EXIT
"${3:-false}" curve keygen cp --dir "$KEYS" >/dev/null || true
for k in dp1:dataplane ow1:order-writer; do
	"${3:-false}" curve keygen "${k%%:*}" --dir "$KEYS" --role "${k#*:}" | tail -n 1 \
		>>"$KEYS/clients" || true
done
[ -f "$KEYS/cp.pub" ] && [ "$(wc -l <"$KEYS/clients")" = 2 ] ||
	{ echo "Bail out! flashgatectl curve keygen"; exit 1; }
E2E_DP_ARGS=(-s "bridge.push_endpoint=tcp://127.0.0.1:$PULL_PORT"
	-s "bridge.sub_endpoint=tcp://127.0.0.1:$PUB_PORT" -s admission.limit_table_log2=3
	-s admission.purchase_token_ttl=10m -s "bridge.curve_secret_key_file=$KEYS/dp1.key"
	-s "bridge.curve_server_key_file=$KEYS/cp.pub")
E2E_TOOLS=(redis-cli psql)
# The data plane runs 90 s ahead of the control plane (a test-only offset, docs/operations.md):
# flashgatectl stats must show that skew. The sale is open for years either way.
export FG_TEST_CLOCK_OFFSET_MS=90000
e2e_begin cp "$1"
unset FG_TEST_CLOCK_OFFSET_MS

[ -x "$CP_EXE" ] && [ -x "$CTL_EXE" ] || tap_bail "control plane and flashgatectl given"
cp_stop() {
	[ -z "$OW_PID" ] || fg_stop_pid "$OW_PID" 10 || true
	rm -rf "$KEYS"
}
T_CLEANUP+=(cp_stop)

t_services_up "$E2E_TMP/svc"
SVC=$T_SVC
tap_is "$(t_redis ping || true)/$(t_sql 'select 1' || true)" PONG/1 \
	"Redis and PostgreSQL are up in a temporary directory and answer"

T_CP=$CP_EXE T_CTL=$CTL_EXE T_CTL_OUT=diag
T_PULL=tcp://127.0.0.1:$PULL_PORT T_PUB=tcp://127.0.0.1:$PUB_PORT T_METRICS_PORT=$METRICS_PORT
start_cp() {
	t_cp_up -s "controlplane.curve_secret_key_file=$KEYS/cp.key" \
		-s "controlplane.curve_clients_file=$KEYS/clients"
}
start_cp || tap_bail "control plane ready"
ADMIN=$T_ADMIN

# flashgatectl's human output goes into the TAP stream as comments.
tap_run "the control plane is ready and answers on its admin socket" eval 'ctlj stats >/dev/null'

# --- the operator sets up the sale -------------------------------------------------------
tap_run "event create" ctl event create $EV --name "e2e sale" --stock $STOCK \
	--starts-at 2026-01-01T00:00:00Z --ends-at 2036-01-01T00:00:00Z --pay-window 15m
tap_run "keys auth-set (the shop's login key, on standard input)" ctl keys auth-set 1 \
	<<<00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff
tap_run "keys rotate (a sale key)" ctl keys rotate
tap_run "limits set" ctl limits set ip 1000/2000 user 10/20 device 10/20 forward 10000
state_is() { # STATE: the data plane shows event EV in STATE
	e2e_curl ev "$E2E_BASE/api/v1/events/$EV"
	grep -q "\"state\":\"$1\"" "$E2E_TMP/ev.b"
}
tap_run "a created event is upcoming on the data plane until the operator opens it" \
	t_wait_until 20 state_is upcoming
tap_run "event preheat" ctl event preheat $EV
tap_is "$(t_redis get "fg:{$EV}:stock")" $STOCK "preheat loaded the stock into Redis"
tap_run "event open" ctl event open $EV
tap_run "the data plane shows the sale open" t_wait_until 10 state_is open

# --- the sale: USERS users, STOCK items ----------------------------------------------------
# The first DOUBLE users reserve twice with the same purchase token while stock remains: both
# are admitted (docs/api.md), the control plane decides the second duplicate, and the result
# the second receipt shows is the user's, the first one's.
reserved=0 sold=0 again=0 known=0 stocks=
for u in $(seq 101 $((100 + USERS))); do
	s=$(ctlj session-token $u | jget token)
	e2e_curl tok$u "$E2E_BASE/api/v1/events/$EV/token" -X POST -H "Authorization: Bearer $s"
	if [ "$E2E_CODE" != 200 ]; then
		tap_diag "user $u token: $E2E_CODE $(cat "$E2E_TMP/tok$u.b")"
		[ "$E2E_CODE" = 410 ] && sold=$((sold + 1))
		continue
	fi
	tok=$(jget token <"$E2E_TMP/tok$u.b")
	path=$(jget reserve_path <"$E2E_TMP/tok$u.b")
	e2e_curl res$u "$E2E_BASE$path" -X POST -H "X-Flash-Token: $tok"
	if [ "$E2E_CODE" = 410 ]; then
		sold=$((sold + 1))
		continue
	fi
	rc=$(jget receipt <"$E2E_TMP/res$u.b")
	if [ "$u" -lt $((101 + DOUBLE)) ]; then
		# Admitted again (202, decided duplicate) while the first one's verdict is on its
		# way; once it is here, answered 200 with it (a known buyer, docs/api.md).
		e2e_curl again$u "$E2E_BASE$path" -X POST -H "X-Flash-Token: $tok"
		if [ "$E2E_CODE" = 202 ]; then
			again=$((again + 1))
			rc=$(jget receipt <"$E2E_TMP/again$u.b")
		elif [ "$E2E_CODE" = 200 ] && grep -q '"status":"reserved"' "$E2E_TMP/again$u.b"; then
			known=$((known + 1))
		else
			tap_diag "user $u, second click: $E2E_CODE $(cat "$E2E_TMP/again$u.b")"
		fi
	fi
	got=queued
	poll() {
		e2e_curl poll$u "$E2E_BASE/api/v1/events/$EV/result" -H "X-Flash-Token: $rc"
		got=$(jget status <"$E2E_TMP/poll$u.b")
		[ "$got" != queued ]
	}
	t_wait_until 10 poll || true
	case $got in
	reserved)
		reserved=$((reserved + 1))
		# Issue 16 item 7: the event's stock follows the sale (from the results' stock_left),
		# not the preheated figure until the sell-out.
		e2e_curl st$u "$E2E_BASE/api/v1/events/$EV"
		stocks="$stocks $(jget stock <"$E2E_TMP/st$u.b")"
		;;
	sold_out) sold=$((sold + 1)) ;;
	*) tap_diag "user $u: $got" ;;
	esac
done
tap_is "$((again + known))" $DOUBLE \
	"the $DOUBLE users who clicked twice were admitted twice (202: $again) or told their result (200: $known)"
tap_is "$reserved" $STOCK "exactly $STOCK of $USERS users reserved"
tap_is "$stocks" "$(seq -s ' ' -f ' %g' $((STOCK - 1)) -1 0 | tr -s ' ')" \
	"GET /api/v1/events/$EV shows the stock going down as buyers reserve"
tap_is "$sold" $((USERS - STOCK)) "the other $((USERS - STOCK)) were told sold out"
tap_is "$(t_redis get "fg:{$EV}:stock")" 0 "Redis stock is 0"
# Buyers are the fields of the result hash; an outbox entry holds a batch's reservations,
# u r t repeated: the value after each "u" is one reservation's user.
outbox_users() { t_redis xrange "$1" - + | awk 'prev == "u" { print } { prev = $0 }'; }
outbox_reservations() { outbox_users "$1" | wc -l; }
tap_is "$(t_redis hlen "fg:{$EV}:result")" $STOCK "Redis has $STOCK buyers"
tap_is "$(outbox_reservations "fg:{$EV}:outbox")" $STOCK "the outbox holds one reservation per buyer"
tap_is "$(outbox_users "fg:{$EV}:outbox" | sort | uniq -d | wc -l)" 0 \
	"one reservation per user: no user twice in the outbox"
e2e_curl so "$E2E_BASE/api/v1/events/$EV"
tap_ok "$(grep -q '"state":"sold_out"' "$E2E_TMP/so.b"; echo $?)" "the data plane shows sold_out"
s=$(ctlj session-token 999 | jget token)
e2e_curl late "$E2E_BASE/api/v1/events/$EV/token" -X POST -H "Authorization: Bearer $s"
tap_is "$E2E_CODE" 410 "after the sell-out the data plane answers 410 by itself"

# User 101 holds a purchase token and a receipt of sale key 1 (the only key so far): they are
# checked after three rotations at the end (keys retire by age).
old_tok=$(jget token <"$E2E_TMP/tok101.b")
old_rc=$(jget receipt <"$E2E_TMP/res101.b")

# --- the order writer turns the reservations into orders; reconcile ----------------------
"$OW_EXE" -s "order_writer.push_endpoint=tcp://127.0.0.1:$PULL_PORT" -s order_writer.max_rate=0 \
	"${T_REDIS[@]}" -s "postgres.conninfo=$FG_PG_CONNINFO" \
	-s "order_writer.curve_secret_key_file=$KEYS/ow1.key" \
	-s "order_writer.curve_server_key_file=$KEYS/cp.pub" >"$E2E_TMP/ow.log" 2>&1 &
OW_PID=$!
orders_made() { [ "$(t_sql "select count(*) from orders where event_id = $EV" 2>/dev/null)" = $STOCK ]; }
tap_run "the order writer makes one order per reservation" t_wait_until 15 orders_made
ordered_poll() {
	e2e_curl op "$E2E_BASE/api/v1/events/$EV/result" -H "X-Flash-Token: $rc"
	grep -q '"status":"ordered","order_id":' "$E2E_TMP/op.b"
}
if t_wait_until 10 ordered_poll; then
	tap_ok 0 "a buyer's poll shows ordered, with the order id and pay deadline"
else
	tap_ok 1 "a buyer's poll shows ordered, with the order id and pay deadline"
	tap_diag "poll: $(cat "$E2E_TMP/op.b")"
	tap_diag "order writer: $(tail -5 "$E2E_TMP/ow.log" | tr '\n' '|')"
	tap_diag "control plane: $(tail -5 "$E2E_TMP/cp.log" | tr '\n' '|')"
	tap_diag "result hash: $(t_redis hgetall "fg:{$EV}:result" | tr '\n' ' ')"
fi
refuse() { # WANT_RC MESSAGE_PART ARGS...
	local want=$1 part=$2 out rc=0
	shift 2
	out=$(ctl "$@" 2>&1) || rc=$?
	tap_ok "$([ $rc -eq "$want" ] && grep -qF -- "$part" <<<"$out"; echo $?)" \
		"flashgatectl $* -> exit $want, says '$part' (got $rc: $out)"
}
recon() { ctlj reconcile $EV "$@"; }
tap_is "$(recon | jget consistent)" true "reconcile: Redis agrees with PostgreSQL after the sale"
# Two buyers lose their result fields: one whose order awaits payment, one who paid.
victim=$(t_sql "select user_id from orders where event_id = $EV order by user_id limit 1")
payer=$(t_sql "select user_id from orders where event_id = $EV order by user_id offset 1 limit 1")
tap_run "order pay (the second buyer's order)" ctl order pay \
	"$(t_sql "select id from orders where event_id = $EV and user_id = $payer")"
order_result() { # USER: its order's result hash value, as PostgreSQL's row has it
	t_sql "select case status when 'paid' then 'P:' else 'O:' end ||
		(reservation_id::numeric + case when reservation_id < 0 then 18446744073709551616
		else 0 end) || ':' || id || ':' || floor(extract(epoch from pay_deadline) * 1000)::bigint
		from orders where event_id = $EV and user_id = $1"
}
paid_published() { [ "$(t_redis hget "fg:{$EV}:result" "$payer")" = "$(order_result "$payer")" ]; }
tap_run "the payment reaches Redis: $(order_result "$payer")" t_wait_until 15 paid_published
victim_was=$(t_redis hget "fg:{$EV}:result" "$victim")
tap_is "$victim_was" "$(order_result "$victim")" "  the other buyer is ordered in Redis"
t_redis set "fg:{$EV}:stock" 3 >/dev/null
t_redis hdel "fg:{$EV}:result" "$victim" "$payer" >/dev/null
tap_is "$(recon | jget consistent)" false "drift injected in Redis (stock changed, a buyer removed) is reported"
tap_ok "$(recon | grep -q "user $victim has an order but is not a buyer"; echo $?)" \
	"  naming the user whose buyer entry is gone"
refuse 1 "is open" reconcile $EV --repair
tap_run "event close" ctl event close $EV
tap_is "$(recon --repair | jget repaired)" true "reconcile --repair repairs a closed sale"
tap_is "$(recon | jget consistent)" true "  and Redis agrees with PostgreSQL again"
tap_is "$(t_redis get "fg:{$EV}:stock")" 0 "  stock restored"
tap_is "$(t_redis hexists "fg:{$EV}:result" "$victim")" 1 "  buyer restored"
# A repaired buyer's result is its order's, as the order writer wrote it (not a bare "H"), so a
# result query answers it: ordered with the order id and deadline, or paid.
tap_is "$(t_redis hget "fg:{$EV}:result" "$victim")" "$victim_was" \
	"  its result is its order awaiting payment again (O:<rid>:<order id>:<deadline ms>)"
tap_is "$(t_redis hget "fg:{$EV}:result" "$payer")" "$(order_result "$payer")" \
	"  the paid buyer's is its paid order (P:<rid>:<order id>:<deadline ms>)"

# --- flashgatectl: stats, metrics and refusals ----------------------------------------------
stats_have_dp() { ctlj stats | python3 -c 'import json,sys
d=json.load(sys.stdin); sys.exit(0 if d.get("data_planes") else 1)'; }
tap_run "stats include the data plane's counters" t_wait_until 5 stats_have_dp
ahead_ok() { # the data plane's skew against the control plane, 90 s give or take 1 s
	local a
	a=$(ctlj stats | python3 -c 'import json,sys
d = json.load(sys.stdin)["dp_counters"]
print(max((v.get("clock_ahead_ms", -1) for v in d.values()), default=-1))')
	[ "$a" -ge 89000 ] && [ "$a" -le 91000 ]
}
tap_run "stats show the data plane's clock 90 s ahead (clock_ahead_ms)" t_wait_until 5 ahead_ok
tap_is "$(ctlj stats | jget decisions.reserved)" $STOCK "stats count $STOCK reserved"
tap_ok "$(grep -q 'links: dataplane:dp1 connected' "$E2E_TMP/cp.log" &&
	grep -q 'links: order-writer:ow1 connected' "$E2E_TMP/cp.log"; echo $?)" \
	"the sale ran over CURVE links: the data plane and the order writer let in by their keys"
tap_is "$(ctlj stats | jget links.clients_refused)/$(ctlj stats | jget links.wrong_role)" 0/0 \
	"no link refused, no message of a wrong role"
tap_is "$(ctlj stats | jget decisions.duplicate)" $again \
	"stats count $again duplicate: each second click admitted, none of the first"
metrics=$(curl -s --max-time 3 "http://127.0.0.1:$METRICS_PORT/metrics" || true)
tap_ok "$(grep -q "^flashgate_cp_verdicts_total{verdict=\"reserved\"} $STOCK\$" <<<"$metrics"; echo $?)" \
	"GET /metrics counts the reserved verdicts"
tap_ok "$(grep -q '^flashgate_dataplane_up' <<<"$metrics"; echo $?)" "metrics include the data plane"

# Issue 16 item 9: the rate-limit tables' inserts, moves, recycles and evictions where operators
# look. The data plane's tables have 8 buckets (admission.limit_table_log2=3): 40 client
# addresses that each ask for a token within the address limit's refill time (ip 1/20: an
# entry stays hot a second after each request) cannot all fit.
for i in $(seq 100 139); do fg_ns_exec ip addr add "198.18.10.$i/24" dev "$FG_CL_IF"; done
rl_stat() { # EVENT: the address table's EVENT counter in flashgatectl stats (0 when absent)
	ctlj stats | python3 -c 'import json,sys
print(json.load(sys.stdin).get("dp_totals", {}).get("ratelimit_" + sys.argv[1], {}).get("ip", 0))' "$1"
}
churn() { # the 40 addresses ask once each; true once evictions show in flashgatectl stats
	for i in $(seq 100 139); do
		fg_ns_exec curl -s -o /dev/null --max-time 3 --interface "198.18.10.$i" -X POST \
			"$E2E_BASE/api/v1/events/$EV/token" || true
	done
	[ "$(rl_stat evictions)" -gt 0 ] && [ "$(rl_stat inserts)" -ge 40 ]
}
ctl limits set ip 1/20
tap_run "flashgatectl stats: the address table's inserts (>= 40) and evictions (> 0)" \
	t_wait_until 30 churn
ctl limits set ip 1000/2000
tap_diag "address table: $(rl_stat inserts) inserts, $(rl_stat recycled) recycled, $(rl_stat moved) moved, $(rl_stat evictions) evictions"
metrics=$(curl -s --max-time 3 "http://127.0.0.1:$METRICS_PORT/metrics" || true)
tap_ok "$(grep -Eq '^flashgate_dp_ratelimit_evictions_total\{dp="[0-9]+",table="ip"\} [1-9]' <<<"$metrics"; echo $?)" \
	"GET /metrics: flashgate_dp_ratelimit_evictions_total{table=\"ip\"} > 0"
tap_ok "$(grep -Eq '^flashgate_dp_ratelimit_moved_total\{dp="[0-9]+",table="user"\} [0-9]' <<<"$metrics"; echo $?)" \
	"  and the moves, recycles and inserts of each table (the user table's moves)"
tel=$(e2e_telemetry_field /flashgate/stats ratelimit_evictions_ip || echo 0)
tap_ok "$([ "${tel:-0}" -gt 0 ]; echo $?)" "telemetry /flashgate/stats: ratelimit_evictions_ip $tel > 0"

refuse 1 "exists already" event create $EV --name dup --stock 1 --starts-at 2026-01-01T00:00:00Z \
	--ends-at 2036-01-01T00:00:00Z --pay-window 15m
refuse 1 "no event 4242" event show 4242
refuse 2 "--stock" event create 9 --name x --stock -5 --starts-at 2026-01-01T00:00:00Z \
	--ends-at 2036-01-01T00:00:00Z --pay-window 15m
refuse 2 "unknown command" frobnicate
refuse 1 "closed" event preheat $EV
tap_is "$(t_redis get "fg:{$EV}:stock")" 0 "a refused preheat changed nothing in Redis"

# --- Redis killed and restarted mid-sale ----------------------------------------------------
tap_run "event create (a second sale)" ctl event create 8 --name "second" --stock 3 \
	--starts-at 2026-01-01T00:00:00Z --ends-at 2036-01-01T00:00:00Z --pay-window 15m
tap_run "preheat and open it" sh -c "'$CTL_EXE' --socket '$ADMIN' event preheat 8 >/dev/null &&
	'$CTL_EXE' --socket '$ADMIN' event open 8 >/dev/null"
"$FG_ROOT/scripts/services" redis-kill "$SVC" >/dev/null 2>&1
one_try() { # user -> prints the poll's final status
	local u=$1 s tok path rc st=none
	s=$(ctlj session-token "$u" | jget token)
	e2e_curl t$u "$E2E_BASE/api/v1/events/8/token" -X POST -H "Authorization: Bearer $s"
	[ "$E2E_CODE" = 200 ] || { echo "token-$E2E_CODE"; return; }
	tok=$(jget token <"$E2E_TMP/t$u.b")
	path=$(jget reserve_path <"$E2E_TMP/t$u.b")
	e2e_curl r$u "$E2E_BASE$path" -X POST -H "X-Flash-Token: $tok"
	[ "$E2E_CODE" = 202 ] || { echo "reserve-$E2E_CODE"; return; }
	rc=$(jget receipt <"$E2E_TMP/r$u.b")
	# Polled at the user's poll rate (admission.poll_rate, 2/s): a 429 is waited out.
	for _ in $(seq 40); do
		e2e_curl p$u "$E2E_BASE/api/v1/events/8/result" -H "X-Flash-Token: $rc"
		if [ "$E2E_CODE" = 429 ]; then
			sleep 1
			continue
		fi
		st=$(jget status <"$E2E_TMP/p$u.b")
		[ "$st" = queued ] || break
		sleep 0.5
	done
	echo "$st"
}
tap_is "$(one_try 201)" retry "with Redis down a reservation is answered retry, not lost"
tap_ok "$(kill -0 "$CP_PID"; echo $?)" "the control plane survives Redis going away"
"$FG_ROOT/scripts/services" redis-start "$SVC" >/dev/null 2>&1
# Redis ran with appendonly and appendfsync always: it comes back with the sale as it was.
# With the order writer running, a reservation may already be an order when polled.
got=$(one_try 202)
tap_ok "$([[ $got =~ ^(reserved|ordered)$ ]]; echo $?)" "after Redis is back the sale goes on ($got)"
got=$(one_try 201)
tap_ok "$([[ $got =~ ^(reserved|ordered)$ ]]; echo $?)" \
	"the user whose first try was answered retry reserves now ($got)"
tap_is "$(( $(t_redis get 'fg:{8}:stock') + $(t_redis hlen 'fg:{8}:result') ))" 3 \
	"after the restart: stock + buyers == preheated stock"
tap_is "$(outbox_reservations 'fg:{8}:outbox')" "$(t_redis hlen 'fg:{8}:result')" \
	"every reservation in the outbox has a buyer"

# --- keys retire by age: three rotations within a token's lifetime -------------------------
# A purchase token of user U for event EV signed with sale key KID, read from PostgreSQL as
# the data plane would mint it (docs/tokens.md, tests/lib/fgtest.py).
mint_with() { # KID USER
	python3 "$E2E_DIR/mint_token.py" purchase \
		"hex:$(t_sql "select encode(secret, 'hex') from keys where kind = 'sale' and kid = $1")" \
		"$1" "$EV" "$2" +300
}
polls_as() { # WANT_CODE TOKEN: a result poll with TOKEN is answered WANT_CODE
	e2e_curl kp "$E2E_BASE/api/v1/events/$EV/result" -H "X-Flash-Token: $2"
	[ "$E2E_CODE" = "$1" ]
}
tap_ok "$(case $old_tok in p1.$EV.101.*.1.*) echo 0 ;; *) echo 1 ;; esac)" \
	"user 101's purchase token is signed with sale key 1"
tap_run "three rotations within the token's lifetime (keys 2, 3, 4)" \
	eval 'ctl keys rotate && ctl keys rotate && ctl keys rotate'
new_tok=$(mint_with 4 101)
tap_run "the data plane has key 4: a token of it polls 200" t_wait_until 10 polls_as 200 "$new_tok"
tap_run "key 1's purchase token still polls 200" polls_as 200 "$old_tok"
tap_run "key 1's receipt still polls 200" polls_as 200 "$old_rc"
keys_json=$(ctlj keys list)
key_state() { python3 -c 'import json,sys
for k in json.loads(sys.argv[1])["keys"]:
    if k["kind"] == "sale" and k["kid"] == int(sys.argv[2]): print(k["state"], "retires_at" in k)' \
	"$keys_json" "$1"; }
tap_is "$(key_state 1)" "retiring True" "keys list: key 1 is retiring, with the time it retires"
tap_is "$(key_state 4)" "current False" "keys list: key 4 is current"
refuse4=$(ctl keys rotate 2>&1) && rc4=0 || rc4=$?
tap_ok "$([ "$rc4" = 1 ] && grep -q "as many as a data plane holds" <<<"$refuse4"; echo $?)" \
	"a fourth rotation while key 1 may be in use is refused, saying when to retry (exit $rc4)"
tap_run "  and the data plane still takes key 1's receipt" polls_as 200 "$old_rc"
# Key 1's dates changed in PostgreSQL: the control plane follows (NOTIFY flashgate_config). The
# data plane mints tokens valid 10 min, longer than the control plane's 5 min default: it reports
# that, and retired keys verify 10 min 30 s after they stopped being current (dates after every
# sale here, 2036, so that no sale it signed for holds it longer).
t_sql "update keys set created_at = '2036-01-02Z', retired_at = '2036-01-03Z'
	where kind = 'sale' and kid = 1" >/dev/null
tap_ok "$(grep -q 'data plane 1 mints purchase tokens valid 600 s' "$E2E_TMP/cp.log"; echo $?)" \
	"the control plane follows the data plane's longer purchase token lifetime (and says so)"
key1_list() { ctlj keys list | python3 -c 'import json,sys
for k in json.load(sys.stdin)["keys"]:
    if k["kind"] == "sale" and k["kid"] == 1: print(k["state"], k.get("retires_at"))'; }
key1_is() { [ "$(key1_list)" = "$1" ]; }
tap_run "keys list: key 1 retires 10 min 30 s after it stopped being current" \
	t_wait_until 10 key1_is "retiring 2036-01-03T00:10:30Z"
# Key 1 past its retirement: it stopped being current long ago, before this sale began. The
# control plane follows the change and removes the key (its cron, at the retirement it reads).
t_sql "update keys set created_at = '2025-01-01Z', retired_at = '2025-01-02Z'
	where kind = 'sale' and kid = 1" >/dev/null
tap_run "a key past its retirement is removed: its receipt polls 403" \
	t_wait_until 10 polls_as 403 "$old_rc"
tap_run "  and its purchase token too" polls_as 403 "$old_tok"
key1_gone() { [ "$(t_sql "select count(*) from keys where kind = 'sale' and kid = 1")" = 0 ]; }
tap_run "  key 1 is gone from PostgreSQL" t_wait_until 10 key1_gone
tap_run "  key 2 still verifies" polls_as 200 "$(mint_with 2 101)"


e2e_sale_end
