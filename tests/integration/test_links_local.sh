#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Links on one host are authenticated by default (issue 25 item 5): the control plane started
# with the shipped flashgate.conf and no key files makes the local key directory at its first
# start, and another local user (nobody) who reaches its loopback endpoints
#   - receives nothing on the PUB socket (no KEYS: not the shop's auth key), and
#   - pushes reservations that are never decided,
# with plain ZeroMQ or with a CURVE key of its own; the local data plane's key
# (tests/peer/fg_feed with the directory's pair) gets the keys and its reservations decided.
# The same stranger against insecure_plaintext_links = yes does read the keys: what the check
# would see if the default were plaintext. A key directory others may enter is refused, the
# message naming the opt-out.
#
# usage: test_links_local.sh CONTROLPLANE FLASHGATECTL FG_FEED
set -uo pipefail

CP=$1 CTL=$2 FEED=$3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
t_need_root
if ! id nobody >/dev/null 2>&1 || ! command -v setpriv >/dev/null; then
	echo "1..0 # SKIP needs the user nobody and setpriv"
	exit 0
fi
t_begin links-local
chmod 755 "$TMP"
t_services_up "$TMP/svc"
mapfile -t P < <(fg_free_ports 2)
PULL=tcp://127.0.0.1:${P[0]} PUB=tcp://127.0.0.1:${P[1]}
# The daemons' state directory, as systemd's StateDirectory= gives it.
export STATE_DIRECTORY=$TMP/state
KD=$STATE_DIRECTORY/links
# The stranger's copy of the feed, somewhere nobody may run it from.
install -m 755 "$FEED" "$TMP/fg_feed"
mkdir -m 755 "$TMP/nobody" && chown nobody:nogroup "$TMP/nobody"

# cp_start LOG [-s OPTION...]: the control plane with the shipped flashgate.conf and this test's
# endpoints and services; sets CP_PID.
cp_start() {
	local log=$1
	shift
	"$CP" -c "$ROOT/flashgate.conf" -s "controlplane.pull_endpoint=$PULL" \
		-s "controlplane.pub_endpoint=$PUB" -s "controlplane.admin_socket=$TMP/admin.sock" \
		-s controlplane.metrics_port=0 "${T_REDIS[@]}" \
		-s "postgres.conninfo=$FG_PG_CONNINFO" "$@" >"$log" 2>&1 &
	CP_PID=$!
	T_PIDS+=("$CP_PID")
	fg_wait_line "$log" 'ready:' "$CP_PID" 30
}
T_CTL=$CTL T_ADMIN=$TMP/admin.sock
link() { # FIELD: a counter of the links section of "flashgatectl stats"
	ctl --json stats >"$TMP/stats.json" 2>/dev/null
	fg_json "$TMP/stats.json" "links.$1"
}
field() { grep -o "$1=[0-9]*" <<<"$2" | cut -d= -f2; } # FIELD LINE
R="redis-cli -s $FG_REDIS_SOCK"
# stranger USERS [fg_feed options]: the feed run as nobody; prints its line.
stranger() {
	local users=$1
	shift
	setpriv --reuid=nobody --regid=nogroup --clear-groups --reset-env \
		env STATE_DIRECTORY=/nonexistent "$TMP/fg_feed" --push "$PULL" --sub "$PUB" \
		--event 5 --users "$users" --dp $((${users%%-*} % 1000 + 1)) --batch 10 --snapshot \
		"$@" 2>&1
}

# ---- the default: local keys -------------------------------------------------------------
cp_start "$TMP/cp.log"
tap_ok $? "the control plane starts with the shipped flashgate.conf and no key files"
grep -q "links: CURVE on both sockets, the clients of $KD/clients" "$TMP/cp.log"
tap_ok $? "its links are CURVE, the allow-list that of its state directory"
tap_is "$(stat -c '%a %U' "$KD")" "700 root" "the key directory is made at first start, mode 0700"
tap_is "$(stat -c %a "$KD/controlplane.key" "$KD/dataplane.key" "$KD/order-writer.key" | tr '\n' ' ')" \
	"600 600 600 " "a key pair per role, the secret halves mode 0600"
setpriv --reuid=nobody --regid=nogroup --clear-groups cat "$KD/dataplane.key" >/dev/null 2>&1
tap_ok $((!$?)) "nobody cannot read the keys"

ctl event create 5 --name "local" --stock 1000 --starts-at 2026-01-01T00:00:00Z \
	--ends-at 2036-01-01T00:00:00Z --pay-window 15m >/dev/null && ctl event preheat 5 \
	>/dev/null && ctl event open 5 >/dev/null
tap_ok $? "event 5 created, preheated and opened"

out=$(stranger 1-20 --plaintext --timeout-ms 3000)
echo "# nobody, plain ZeroMQ: $out"
tap_is "$(field msgs "$out") $(field keys "$out")" "0 0" \
	"nobody subscribing with plain ZeroMQ receives nothing: no message, no KEYS"
tap_is "$(field missing "$out")" 20 "none of its 20 reservations is answered"

setpriv --reuid=nobody --regid=nogroup --clear-groups "$CTL" curve keygen own \
	--dir "$TMP/nobody" >/dev/null 2>&1 && install -m 644 "$KD/controlplane.pub" "$TMP/nobody/cp.pub"
tap_ok $? "nobody makes a CURVE key of its own (and knows the control plane's public key)"
out=$(stranger 21-40 --secret-key "$TMP/nobody/own.key" --server-key "$TMP/nobody/cp.pub" \
	--timeout-ms 3000)
echo "# nobody, own CURVE key: $out"
tap_is "$(field msgs "$out") $(field keys "$out") $(field missing "$out")" "0 0 20" \
	"with a key of its own: nothing received, none of its reservations answered"
tap_is "$(link reservations_in) $($R hlen 'fg:{5}:result')" "0 0" \
	"nothing of nobody's reached the decider: 0 received, no result in Redis"

out=$("$FEED" --push "$PULL" --sub "$PUB" --event 5 --users 101-110 --dp 101 --batch 10 \
	--snapshot --timeout-ms 20000 2>&1)
echo "# the local data plane's key: $out"
tap_is "$(field reserved "$out")" 10 "the local data plane's key: its 10 reservations decided"
[ "$(field keys "$out")" -ge 1 ]
tap_ok $? "and it receives the keys (KEYS messages: $(field keys "$out"))"
grep -q "links: dataplane:local connected" "$TMP/cp.log"
tap_ok $? "its role and name are logged (dataplane:local)"
fg_stop_pid "$CP_PID" 20
T_PIDS=()

# ---- what the check sees when the links are plaintext --------------------------------------
cp_start "$TMP/cp-open.log" -s controlplane.insecure_plaintext_links=yes
grep -q "insecure_plaintext_links = yes: the ZeroMQ link $PUB is PLAINTEXT.*any user of this host" \
	"$TMP/cp-open.log"
tap_ok $? "insecure_plaintext_links = yes starts plaintext, with a warning that names it"
out=$(stranger 201-210 --plaintext --timeout-ms 10000)
echo "# nobody, plaintext links: $out"
[ "$(field keys "$out")" -ge 1 ] && [ "$(field reserved "$out")" -eq 10 ]
tap_ok $? "there the same stranger reads the keys and gets its reservations decided"
fg_stop_pid "$CP_PID" 20
T_PIDS=()

# ---- a key directory others may enter ----------------------------------------------------
mkdir -m 755 "$TMP/open"
timeout 30 "$CP" -c "$ROOT/flashgate.conf" -s "controlplane.pull_endpoint=$PULL" \
	-s "controlplane.pub_endpoint=$PUB" -s "controlplane.curve_key_dir=$TMP/open" \
	"${T_REDIS[@]}" -s "postgres.conninfo=$FG_PG_CONNINFO" \
	>"$TMP/cp-refused.log" 2>&1
rc=$?
[ $rc -ne 0 ] && grep -q "chmod 700.*insecure_plaintext_links = yes" "$TMP/cp-refused.log" &&
	! grep -q "ready:" "$TMP/cp-refused.log"
tap_ok $? "a key directory others may enter is refused, naming the opt-out (exit $rc: \
$(tail -c 300 "$TMP/cp-refused.log"))"
tap_done
