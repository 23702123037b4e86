#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The ZeroMQ links are authenticated and bounded (docs/wire.md, "Security"): a real control
# plane with CURVE keys made by flashgatectl, real Redis and PostgreSQL (scripts/services), and
# stand-in data planes and order writers (tests/peer/fg_feed) with keys of every kind:
#   - a client whose key is not in the allow-list receives nothing (no KEYS) and none of its
#     reservations is decided; a listed data plane's are, and it gets the keys;
#   - a data plane's key cannot send RESULT (dropped and counted), an order writer's can;
#   - a message over ZMQ_MAXMSGSIZE is dropped with its connection, counted, and the control
#     plane decides on;
#   - a client key added to the allow-list is let in without a restart, a removed one no more;
#   - a secret key file others can read is refused, by the control plane and by a client;
#   - a program without key files whose local key directory cannot be used refuses to start and
#     says how to give keys; the lab opt-out starts with a warning.
#
# usage: test_links_curve.sh CONTROLPLANE ORDER_WRITER DATAPLANE FLASHGATECTL FG_FEED
set -uo pipefail

CP=$1 OW=$2 DP=$3 CTL=$4 FEED=$5
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
t_begin links
t_services_up "$TMP/svc"
T_CTL=$CTL T_ADMIN=$TMP/admin.sock
has() { grep -q -- "$2" "$1"; tap_ok $? "$3"; } # FILE TEXT DESCRIPTION

mapfile -t P < <(fg_free_ports 2)
PULL=tcp://127.0.0.1:${P[0]} PUB=tcp://127.0.0.1:${P[1]}
K=$TMP/keys
mkdir -m 700 "$K"

# ---- keys --------------------------------------------------------------------------------
"$CTL" curve keygen cp --dir "$K" >"$TMP/kg.out" 2>&1
tap_ok $? "flashgatectl curve keygen makes the control plane's key pair"
tap_is "$(stat -c %a "$K/cp.key") $(stat -c %a "$K/cp.pub")" "600 644" \
	"the secret key file is mode 0600, the public one 0644"
tap_is "$(tr -d '\n' <"$K/cp.pub" | wc -c) $(tr -d '\n' <"$K/cp.key" | wc -c)" "40 40" \
	"each holds one key of 40 Z85 characters"
"$CTL" curve keygen cp --dir "$K" >"$TMP/kg2.out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "never overwritten" "$TMP/kg2.out"
tap_ok $? "a key pair is never overwritten (exit $rc: $(head -c 200 "$TMP/kg2.out"))"
: >"$TMP/clients"
for c in dp1:dataplane ow1:order-writer dp2:dataplane stranger:dataplane; do
	"$CTL" curve keygen "${c%%:*}" --dir "$K" --role "${c#*:}" >"$TMP/kg.out" || tap_ok 1 "keygen $c"
	# Not listed: the stranger, and dp2 until the rotation below.
	case $c in dp1:* | ow1:*) tail -n 1 "$TMP/kg.out" >>"$TMP/clients" ;; esac
done
tap_is "$(awk '{ print $1, $2 }' "$TMP/clients" | tr '\n' ,)" "dataplane dp1,order-writer ow1," \
	"--role prints the allow-list line"

# ---- the control plane with CURVE ---------------------------------------------------------
# CP_CONF FILE [LINE...]: a config of mode 0600 for the control plane, with these lines in
# [controlplane].
cp_conf() {
	local f=$1
	shift
	(
		umask 077
		printf '[controlplane]\npull_endpoint = %s\npub_endpoint = %s\n' "$PULL" "$PUB"
		printf 'admin_socket = %s\nmetrics_port = 0\n' "$TMP/admin.sock"
		printf '%s\n' "$@"
		printf '[redis]\nsocket = %s\nunsafe_settings = %s\n' "$FG_REDIS_SOCK" "$FG_REDIS_UNSAFE_SETTINGS"
		printf '[postgres]\nconninfo = "%s"\n' \
			"$FG_PG_CONNINFO"
	) >"$f"
}
cp_conf "$TMP/cp.conf" "curve_secret_key_file = $K/cp.key" "curve_clients_file = $TMP/clients"
"$CP" -c "$TMP/cp.conf" >"$TMP/cp.log" 2>&1 &
CP_PID=$!
T_PIDS+=("$CP_PID")
fg_wait_line "$TMP/cp.log" 'ready:' "$CP_PID" 30
tap_ok $? "the control plane starts with CURVE on both sockets"
has "$TMP/cp.log" "links: CURVE on both sockets" "and says so in its log"

ctl event create 5 --name "links" --stock 1000 --starts-at 2026-01-01T00:00:00Z \
	--ends-at 2036-01-01T00:00:00Z --pay-window 15m >/dev/null && ctl event preheat 5 \
	>/dev/null && ctl event open 5 >/dev/null
tap_ok $? "event 5 created, preheated and opened"

# link FIELD: a counter of "flashgatectl stats" links section.
link() {
	ctl --json stats >"$TMP/stats.json" 2>/dev/null
	fg_json "$TMP/stats.json" "links.$1"
}
# Each feed has a dp id of its own (from its first user): one live data plane per dp id, and a
# feed that just ended still holds its id for [controlplane] dp_timeout.
feed() { # NAME USERS [fg_feed options...]: prints its line; the feed's exit status ignored
	local name=$1 users=$2
	shift 2
	"$FEED" --push "$PULL" --sub "$PUB" --event 5 --users "$users" \
		--dp $((${users%%-*} % 1000 + 1)) --batch 10 \
		--secret-key "$K/$name.key" --server-key "$K/cp.pub" "$@" 2>&1
}
field() { grep -o "$1=[0-9]*" <<<"$2" | cut -d= -f2; } # FIELD LINE

# ---- a key not in the list ----------------------------------------------------------------
refused0=$(link clients_refused)
out=$(feed stranger 1-20 --snapshot --timeout-ms 3000)
echo "# stranger: $out"
tap_is "$(field msgs "$out") $(field keys "$out")" "0 0" \
	"a client with an unknown key receives nothing: no message, no KEYS"
tap_is "$(field missing "$out")" 20 "none of its 20 reservations is answered"
tap_is "$(link reservations_in) $(t_redis hlen 'fg:{5}:result')" "0 0" \
	"none reached the decider: 0 received, no result in Redis"
[ "$(link clients_refused)" -gt "$refused0" ]
tap_ok $? "its handshakes are refused and counted (clients_refused $(link clients_refused))"
has "$TMP/cp.log" "its key is not in curve_clients_file" "and logged"

# ---- a listed data plane ----------------------------------------------------------------
out=$(feed dp1 1-20 --snapshot --timeout-ms 20000)
echo "# dp1: $out"
tap_is "$(field reserved "$out")" 20 "a listed data plane's 20 reservations are decided"
[ "$(field keys "$out")" -ge 1 ]
tap_ok $? "and it receives the keys (KEYS messages: $(field keys "$out"))"
has "$TMP/cp.log" "links: dataplane:dp1 connected" "its role and name are logged"

# ---- roles ------------------------------------------------------------------------------
wrong0=$(link wrong_role) results0=$(link results_out)
out=$(feed dp1 101-110 --send result --timeout-ms 3000)
echo "# dp1 sends RESULT: $out"
tap_is "$(link wrong_role)" $((wrong0 + 1)) "a data plane's key cannot send RESULT: dropped, counted"
tap_is "$(link results_out)" "$results0" "and nothing of it is relayed to the data planes"
tap_is "$(field ordered "$out")" 0 "(the data plane sees no ORDERED come back)"
has "$TMP/cp.log" "dropped a result message from dataplane:dp1" "and it is logged"
out=$(feed ow1 111-120 --send result --timeout-ms 3000)
echo "# ow1 sends RESULT: $out"
tap_is "$(link results_out)" $((results0 + 10)) "an order writer's key sends RESULT: 10 relayed"
tap_is "$(link wrong_role)" $((wrong0 + 1)) "nothing of it dropped"
tap_is "$(field msgs "$out")" 0 "an order writer's key may not subscribe: it receives nothing"

# ---- message size -----------------------------------------------------------------------
disc0=$(link disconnected)
feed dp1 201-201 --oversize --timeout-ms 8000 >"$TMP/big.out" &
big=$!
for _ in $(seq 70); do [ "$(link disconnected)" -gt "$disc0" ] && break; sleep 0.1; done
disc1=$(link disconnected)
kill -0 "$big" 2>/dev/null
tap_ok $? "(the feed still runs: it did not end its connection itself)"
[ "$disc1" -gt "$disc0" ]
tap_ok $? "a message over ZMQ_MAXMSGSIZE is dropped with its connection, counted (disconnected \
$disc0 -> $disc1)"
wait "$big"
echo "# dp1 oversized: $(cat "$TMP/big.out")"
tap_is "$(grep -o '"decode_error_[a-z_]*"' "$TMP/stats.json")" "" \
	"it never reached the decoder (no decode_error_* counted)"
out=$(feed dp1 301-310 --timeout-ms 20000)
tap_is "$(field reserved "$out")" 10 "the control plane decides on afterwards"

# ---- rotation: the allow-list read again --------------------------------------------------
reloads0=$(link clients_file_reloads)
sleep 1.1 # a new modification time, whatever the file system's granularity
{
	cat "$TMP/clients"
	printf 'dataplane dp2 %s\n' "$(cat "$K/dp2.pub")"
} >"$TMP/clients.new" && mv "$TMP/clients.new" "$TMP/clients"
for _ in $(seq 50); do [ "$(link clients_file_reloads)" -gt "$reloads0" ] && break; sleep 0.1; done
[ "$(link clients_file_reloads)" -gt "$reloads0" ]
tap_ok $? "a changed allow-list is read again without a restart"
out=$(feed dp2 401-410 --timeout-ms 20000)
tap_is "$(field reserved "$out")" 10 "a key added to it is let in"
sleep 1.1
grep -v " dp1 " "$TMP/clients" >"$TMP/clients.new" && mv "$TMP/clients.new" "$TMP/clients"
for _ in $(seq 50); do [ "$(link clients_file_reloads)" -gt $((reloads0 + 1)) ] && break; sleep 0.1; done
out=$(feed dp1 501-510 --snapshot --timeout-ms 3000)
tap_is "$(field missing "$out") $(field keys "$out")" "10 0" "a key removed from it is let in no more"
echo "not a key" >>"$TMP/clients"
for _ in $(seq 50); do [ "$(link clients_file_errors)" -gt 0 ] && break; sleep 0.1; done
tap_is "$(link clients_file_errors)" 1 "a broken allow-list is refused (the previous one stays)"
out=$(feed dp2 601-610 --timeout-ms 20000)
tap_is "$(field reserved "$out")" 10 "and the keys of the previous one still get in"
grep -v "not a key" "$TMP/clients" >"$TMP/clients.new" && mv "$TMP/clients.new" "$TMP/clients"

# ---- a client whose key is refused says so ------------------------------------------------
"$OW" -s "order_writer.push_endpoint=$PULL" -s "order_writer.curve_secret_key_file=$K/stranger.key" \
	-s "order_writer.curve_server_key_file=$K/cp.pub" "${T_REDIS[@]}" \
	-s "postgres.conninfo=$FG_PG_CONNINFO" >"$TMP/ow-stranger.log" 2>&1 &
OW_PID=$!
T_PIDS+=("$OW_PID")
fg_wait_line "$TMP/ow-stranger.log" "refused the CURVE handshake: is this order writer's public \
key in its curve_clients_file" "$OW_PID" 20
tap_ok $? "an order writer whose key is not listed logs that the control plane refused it"
fg_stop_pid "$OW_PID" 20

fg_stop_pid "$CP_PID" 20
tap_is "$FG_STOP_RC" 0 "the control plane exits with status 0 on SIGTERM"
T_PIDS=() CP_PID=

# ---- refusals at start --------------------------------------------------------------------
cp "$K/cp.key" "$TMP/cp-open.key"
chmod 644 "$TMP/cp-open.key"
cp_conf "$TMP/cp2.conf" "curve_secret_key_file = $TMP/cp-open.key" \
	"curve_clients_file = $TMP/clients"
timeout 30 "$CP" -c "$TMP/cp2.conf" >"$TMP/cp2.log" 2>&1
rc=$?
[ $rc -ne 0 ] && grep -q "mode 0644.*chmod 600" "$TMP/cp2.log"
tap_ok $? "a secret key file of mode 0644 is refused by the control plane (exit $rc: \
$(tail -c 300 "$TMP/cp2.log"))"
cp "$K/ow1.key" "$TMP/ow-open.key"
chmod 640 "$TMP/ow-open.key"
timeout 30 "$OW" -s "order_writer.push_endpoint=$PULL" \
	-s "order_writer.curve_secret_key_file=$TMP/ow-open.key" \
	-s "order_writer.curve_server_key_file=$K/cp.pub" "${T_REDIS[@]}" \
	-s "postgres.conninfo=$FG_PG_CONNINFO" >"$TMP/ow.log" 2>&1
rc=$?
[ $rc -ne 0 ] && grep -q "mode 0640.*chmod 600" "$TMP/ow.log"
tap_ok $? "and by an order writer (exit $rc: $(tail -c 200 "$TMP/ow.log"))"

cp_conf "$TMP/cp3.conf"
timeout 30 "$CP" -c "$TMP/cp3.conf" -s "controlplane.curve_secret_key_file=$K/cp.key" \
	>"$TMP/cp4.log" 2>&1
rc=$?
[ $rc -ne 0 ] && grep -q "curve_secret_key_file and curve_clients_file go together" "$TMP/cp4.log"
tap_ok $? "a control plane with its key but no allow-list refuses to start (exit $rc)"
# Without key files the local key directory's keys are used (tests/integration/
# test_links_local.sh); one that cannot be used stops every program, naming the opt-out.
mkdir -m 755 "$TMP/open"
timeout 30 "$CP" -c "$TMP/cp3.conf" -s "controlplane.pull_endpoint=tcp://0.0.0.0:${P[0]}" \
	-s "controlplane.curve_key_dir=$TMP/open" >"$TMP/cp3.log" 2>&1
rc=$?
[ $rc -ne 0 ] && grep -q "\[controlplane\] the local link keys in $TMP/open: .*chmod 700.*\
curve_secret_key_file.*insecure_plaintext_links = yes" "$TMP/cp3.log" && ! grep -q "ready:" "$TMP/cp3.log"
tap_ok $? "a control plane without key files and a key directory it cannot use refuses to start, \
saying how to give keys and naming the opt-out (exit $rc: $(tail -c 400 "$TMP/cp3.log"))"
timeout 30 "$OW" -s "order_writer.push_endpoint=tcp://198.18.0.1:${P[0]}" \
	-s "order_writer.curve_key_dir=$TMP/open" \
	"${T_REDIS[@]}" -s "postgres.conninfo=$FG_PG_CONNINFO" >"$TMP/ow2.log" 2>&1
rc=$?
[ $rc -ne 0 ] && grep -q "\[order_writer\] the local link keys.*insecure_plaintext_links" "$TMP/ow2.log"
tap_ok $? "so does an order writer (exit $rc)"
timeout 30 "$DP" -- -s "bridge.sub_endpoint=tcp://198.18.0.1:${P[1]}" \
	-s "bridge.curve_key_dir=$TMP/open" >"$TMP/dp.log" 2>&1
rc=$?
[ $rc -ne 0 ] && grep -q "\[bridge\] the local link keys.*insecure_plaintext_links" "$TMP/dp.log" &&
	! grep -qi "EAL" "$TMP/dp.log"
tap_ok $? "and a data plane, before DPDK starts (exit $rc: $(tail -c 300 "$TMP/dp.log"))"
timeout 30 "$DP" -- -s "dataplane.syncookie_secret=00112233445566778899aabbccddeeff" \
	>"$TMP/dp2.log" 2>&1
rc=$?
[ $rc -ne 0 ] && grep -q "syncookie_secret is refused.*-c" "$TMP/dp2.log" &&
	! grep -q 00112233 "$TMP/dp2.log"
tap_ok $? "a data plane refuses a secret given with -s, saying where it goes (exit $rc)"

"$OW" -s "order_writer.push_endpoint=tcp://198.18.0.1:${P[0]}" \
	-s order_writer.insecure_plaintext_links=yes "${T_REDIS[@]}" \
	-s "postgres.conninfo=$FG_PG_CONNINFO" >"$TMP/ow3.log" 2>&1 &
OW_PID=$!
T_PIDS+=("$OW_PID")
fg_wait_line "$TMP/ow3.log" 'consumer .* of group' "$OW_PID" 30
tap_ok $? "with insecure_plaintext_links = yes an order writer starts on a plaintext link off \
the host"
has "$TMP/ow3.log" "warn: \[order_writer\] insecure_plaintext_links = yes: .*PLAINTEXT" \
	"and logs a warning that names it"
fg_stop_pid "$OW_PID" 20
T_PIDS=() CP_PID=
tap_done
