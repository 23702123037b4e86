#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# flashgate-loadgen against the data plane over a memif pair (no network namespace, no NIC):
# healthz connections, a SYN flood, a small sale against the test peer as control plane, and the
# same sale again with four floods mixed in (--flood syn, bad-ack, unsigned, one-ip); reserves
# with the data plane as memif's zero-copy client (scripts/bench's zero-copy rows).
# Every answer must be well-formed and expected, every connection must complete, and the data
# plane's own counters must agree with the loadgen's. Rates are printed as diagnostics, and only
# checked to be above zero, never against a time.
# usage: test_loadgen.sh DATAPLANE LOADGEN TESTPEER   (prints TAP)
set -euo pipefail
# shellcheck source=tests/e2e/harness.sh
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

DP_EXE=${1:-} LG_EXE=${2:-} PEER_EXE=${3:-}
N_CONN=20000 N_SYN=20000 N_USERS=300 STOCK=100
# The floods' run: the per-address limit (rate/s, burst) is low enough that the one-ip flood
# meets it in well under a second, and high enough for the honest users (at most two per
# address, a handful of requests each).
IP_RATE=20 IP_BURST=40
AUTH_KID=1 AUTH_KEY=authkey-loadgen-e2e-0123456789
SALE_KID=7 SALE_KEY=salekey-loadgen-e2e-0123456789

for exe in "$DP_EXE" "$LG_EXE" "$PEER_EXE"; do
	if [ -z "$exe" ] || [ ! -x "$exe" ]; then
		echo "Bail out! usage: $0 DATAPLANE LOADGEN TESTPEER (got '$exe')"
		exit 1
	fi
done

E2E_TMP=$(mktemp -d /tmp/fg-e2e-lg.XXXXXX)
DP_PREFIX=fg-e2e-lgdp-$$ LG_PREFIX=fg-e2e-lglg-$$
SOCK=$E2E_TMP/memif.sock
E2E_PREFIX=$DP_PREFIX # for e2e_peer_* and the log helpers
DP_PID= WAIT_BRIDGE=
DP_CONF=$E2E_TMP/flashgate.conf # its config file (one with the SYN cookie secret for some runs)
DP_EXTRA=() # more -s overrides (no secrets) for the data plane of the next runs
COOKIE_SECRET=0123456789abcdef0123456789abcdef

# shellcheck disable=SC2317 # called by t_wait_until
bridge_ready() { [ "$(e2e_telemetry_field /flashgate/bridge ready 2>/dev/null)" = 1 ]; }

# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	trap - EXIT INT TERM
	if [ -n "$DP_PID" ] && kill -0 "$DP_PID" 2>/dev/null; then
		fg_stop_pid "$DP_PID" 10 >/dev/null 2>&1
	fi
	[ -z "$E2E_PEER_PID" ] || e2e_peer_stop >/dev/null 2>&1
	rm -rf "$(fg_dpdk_runtime_dir "$DP_PREFIX")" "$(fg_dpdk_runtime_dir "$LG_PREFIX")"
	rm -rf "$E2E_TMP"
	t_finish
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

hex() { printf '%s' "$1" | od -An -v -tx1 | tr -d ' \n'; }

# The loadgen shares the data plane's first core (its control loop mostly sleeps); the data plane's
# worker keeps the other. On one CPU everything shares core 0.
DP_LCORES=$(fg_lcores)
LG_LCORES=0
[[ $DP_LCORES != *@* ]] || LG_LCORES=2@0
# Each run gets a data plane of its own, stopped while the loadgen lingers without polling:
# DPDK 22.11's memif PMD unmaps a peer's shared memory on disconnect with no barrier against a
# worker inside rx_burst, so the side still polling when the other disconnects may crash. With
# the data plane stopped first (its workers stop before its port closes) neither side polls a
# ring that goes away. The data plane's logs are appended to dataplane.log; its final counters
# (--counters-json) are kept as dp-NAME.json for dp_counter.
# With LG_ZC set the roles are swapped, as in scripts/bench's zero-copy rows: the data plane is
# memif's zero-copy client (it receives into and sends from its own mbufs, the loadgen copies).
dp_start() {
	local memif=(--vdev "net_memif0,role=server,socket=$SOCK")
	[ -z "${LG_ZC:-}" ] ||
		memif=(--single-file-segments --vdev "net_memif0,role=client,socket=$SOCK,zero-copy=yes")
	rm -f "$E2E_TMP/dp-run.json"
	"$DP_EXE" -l "$DP_LCORES" --no-huge -m 512 --no-pci --file-prefix "$DP_PREFIX" \
		"${memif[@]}" -- -c "$DP_CONF" \
		-s "bridge.push_endpoint=$PULL_EP" -s "bridge.sub_endpoint=$PUB_EP" \
		--counters-json "$E2E_TMP/dp-run.json" \
		${DP_EXTRA[@]+"${DP_EXTRA[@]}"} >"$E2E_TMP/dp-run.log" 2>&1 &
	DP_PID=$!
	fg_wait_line "$E2E_TMP/dp-run.log" 'ready:' "$DP_PID" 60
}
# dp_stop: stops the data plane; DP_RC is its exit status.
dp_stop() {
	fg_stop_pid "$DP_PID" 20
	DP_RC=$FG_STOP_RC DP_PID=
	cat "$E2E_TMP/dp-run.log" >>"$E2E_TMP/dataplane.log"
}
# lg_run NAME ARGS...: a data plane, then (after LG_HOOK, when set, once its bridge is ready) the
# loadgen; its text report in $E2E_TMP/NAME.out, its
# JSON report (--report-json) in NAME.json, which must hold the text's figures (but for a run
# that ends before its report: exit status 2); the data plane's final counters in dp-NAME.json,
# which must hold those of its log.
# With LG_ZC the loadgen is memif's server and starts first (a client connects at its start, and
# a server refuses it until its port has started: the "waiting:" line), told to begin ZC_LEAD_S
# seconds later, by when the data plane has its control plane's state; LG_REGION0_KB is then
# the size of memif's shared region as the loadgen maps it.
ZC_LEAD_S=15
lg_run() {
	local name=$1 lg_pid rc=0 diff role=client zc_start=()
	shift
	LG_RC=0
	# lg_start: the loadgen in the background (lg_pid).
	lg_start() {
		timeout $((90 + ${#zc_start[@]} * ZC_LEAD_S / 2)) "$LG_EXE" --lcores "$LG_LCORES" \
			--no-huge -m 256 --no-pci --file-prefix "$LG_PREFIX" \
			--vdev "net_memif0,role=$role,socket=$SOCK" --log-level=error -- \
			--dst 198.18.0.2 --linger-s 30 ${zc_start[@]+"${zc_start[@]}"} \
			--report-json "$E2E_TMP/$name.json" "$@" >"$E2E_TMP/$name.out" 2>&1 &
		lg_pid=$!
	}
	if [ -n "${LG_ZC:-}" ]; then
		role=server
		zc_start=(--start-at "$(date +%s.%N | awk -v l="$ZC_LEAD_S" '{ printf "%.3f", $1 + l }')")
		lg_start "$@"
		fg_wait_line "$E2E_TMP/$name.out" '^waiting:' "$lg_pid" 30 || true
	fi
	dp_start || rc=$?
	tap_ok "$rc" "$name: data plane is ready on a memif $([ -n "${LG_ZC:-}" ] &&
		echo zero-copy client || echo server) port"
	[ -z "$WAIT_BRIDGE" ] || t_wait_until 20 bridge_ready || true
	[ -z "${LG_HOOK:-}" ] || "$LG_HOOK" # the test peer's state for this data plane
	[ -n "${LG_ZC:-}" ] || lg_start "$@"
	fg_wait_line "$E2E_TMP/$name.out" '^lingering:' "$lg_pid" $((75 + ${#zc_start[@]} * ZC_LEAD_S / 2)) ||
		true
	[ -z "${LG_ZC:-}" ] || LG_REGION0_KB=$(region0_kb "$(pgrep -P "$lg_pid" | head -n 1)")
	dp_stop
	tap_is "$DP_RC" 0 "$name: data plane exits with status 0 on SIGTERM"
	rc=0
	diff=$(python3 "$FG_ROOT/tests/lib/dp_counters_check.py" "$E2E_TMP/dp-run.log" \
		"$E2E_TMP/dp-run.json" 2>&1) || rc=$?
	tap_ok "$rc" "$name: the data plane's --counters-json holds its final counters${diff:+: $diff}"
	cp "$E2E_TMP/dp-run.json" "$E2E_TMP/dp-$name.json" 2>/dev/null || true
	wait "$lg_pid" || LG_RC=$?
	tap_diag "loadgen $name:" "$(cat "$E2E_TMP/$name.out")"
	if [ "$LG_RC" -ne 2 ]; then
		rc=0
		diff=$(python3 "$FG_ROOT/tests/lib/lg_report_check.py" "$E2E_TMP/$name.out" \
			"$E2E_TMP/$name.json" 2>&1) || rc=$?
		tap_ok "$rc" "$name: the loadgen's --report-json holds its text report${diff:+: $diff}"
	fi
}
# region0_kb PID: the KB that process maps of memif's shared region 0 (memfd memif_region_0).
region0_kb() {
	local range rest sum=0
	while read -r range rest; do
		[[ $rest == *memif_region_0* ]] || continue
		sum=$((sum + 0x${range#*-} - 0x${range%-*}))
	done <"/proc/${1:-0}/maps"
	echo $((sum / 1024))
}
# field NAME KEY WORD: the figure WORD of KEY in NAME's JSON report ("users done").
field() { fg_lg_field "$E2E_TMP/$1.json" "$2" "$3"; }
# value NAME KEY: the figure KEY of NAME's JSON report ("elapsed_s").
value() { fg_lg_value "$E2E_TMP/$1.json" "$2"; }
# answer NAME STATUS: how many answers had that status.
answer() { fg_lg_field "$E2E_TMP/$1.json" answers "$2"; }
# flood_answer NAME KEY STATUS: how many answers of that status a flood counts (0 if none).
flood_answer() {
	local n
	n=$(fg_lg_field "$E2E_TMP/$1.json" "$2" "$3")
	echo "${n:-0}"
}
# run_counter GROUP NAME: a counter of the last run's data plane only ("answers syn_ack",
# "http_responses 401", "rejects limit_ip"), from its --counters-json.
run_counter() {
	local v
	v=$(fg_json "$E2E_TMP/dp-run.json" "total.$1.$2")
	echo "${v:-0}"
}
# dp_counter GROUP NAME: a counter of the data plane's final counters, summed over its runs.
dp_counter() {
	local f v sum=0
	for f in "$E2E_TMP"/dp-*.json; do
		if [ "$f" = "$E2E_TMP/dp-run.json" ] || [ ! -f "$f" ]; then
			continue
		fi
		v=$(fg_json "$f" "total.$1.$2")
		sum=$((sum + ${v:-0}))
	done
	echo "$sum"
}

mapfile -t zmq_ports < <(fg_free_ports 2)
PULL_EP=tcp://127.0.0.1:${zmq_ports[0]} PUB_EP=tcp://127.0.0.1:${zmq_ports[1]}
FG_DP_ADDR=198.18.0.2
e2e_write_config "$E2E_TMP/flashgate.conf"
: >"$E2E_TMP/dataplane.log"

# --- healthz: SYN, ACK+request, answer+FIN, ACK+FIN, ACK -----------------------------------------
lg_run healthz --mode healthz --connections "$N_CONN" --concurrency 64 --duration-s 20
tap_is "$LG_RC" 0 "healthz: loadgen exits 0 (every answer well-formed and expected)"
tap_is "$(field healthz connections started)/$(field healthz connections completed)" \
	"$N_CONN/$N_CONN" "healthz: all $N_CONN connections started and completed"
tap_is "$(field healthz connections rst)/$(field healthz connections timeout)/$(field healthz \
	connections unfinished)" 0/0/0 "healthz: no reset, timed-out or unfinished connection"
tap_is "$(field healthz malformed tcp)/$(field healthz malformed http)" 0/0 \
	"healthz: zero malformed answers (TCP and HTTP)"
tap_is "$(answer healthz 200)" "$N_CONN" "healthz: $N_CONN answers 200"
tap_is "$(value healthz unexpected_status)" 0 "healthz: no unexpected status"
rps=$(value healthz requests_per_s)
tap_run "healthz: requests/s printed and above zero (got '${rps:-none}')" \
	awk -v r="${rps:-0}" 'BEGIN { exit !(r > 0) }'
tap_run "healthz: latency p50/p99/p999 printed" \
	grep -Eq '^latency_request_us: count [0-9]+ p50 [0-9.]+ p99 [0-9.]+ p999 [0-9.]+' \
	"$E2E_TMP/healthz.out"

# --- SYN flood: every SYN gets its SYN-ACK cookie; nothing is remembered -------------------------
lg_run flood --mode syn-flood --connections "$N_SYN" --rate 200000 --duration-s 20 \
	--pcap "$E2E_TMP/flood.pcap" --pcap-max 100
tap_is "$LG_RC" 0 "syn-flood: loadgen exits 0"
# A flood may lose SYNs when a ring is full (the cores are shared); every SYN-ACK that comes back
# must carry the ACK of a SYN we sent (else it counts as malformed).
syn_acks=$(field flood syn syn_ack)
tap_is "$(field flood syn sent)" "$N_SYN" "syn-flood: $N_SYN SYNs sent"
tap_run "syn-flood: SYN-ACKs came back, no more than SYNs (got '${syn_acks:-none}')" \
	test "${syn_acks:-0}" -gt 0 -a "${syn_acks:-0}" -le "$N_SYN"
tap_is "$(field flood malformed tcp)" 0 "syn-flood: no malformed segment, every ACK matches a SYN"
# pcap: magic, 100 records, each whole (captured length = length) and ending at the file's end.
pcap_check() {
	python3 - "$1" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
magic, = struct.unpack("<I", d[:4]); off = 24; n = 0; whole = True
while off + 16 <= len(d):
    incl, orig = struct.unpack("<II", d[off + 8:off + 16])
    whole &= incl == orig and incl >= 42; off += 16 + incl; n += 1
print("%08x/%d/%s" % (magic, n, whole and off == len(d)))
PY
}
tap_is "$(pcap_check "$E2E_TMP/flood.pcap" 2>&1)/$(field flood pcap frames)" \
	"a1b2c3d4/100/True/100" \
	"syn-flood: --pcap wrote a pcap file of the first 100 frames"

# --- healthz-blast: whole connections sent without waiting, cookies made with the secret -------
e2e_config_add "$E2E_TMP/flashgate.conf" "$E2E_TMP/cookie.conf" dataplane \
	"syncookie_secret = $COOKIE_SECRET"
DP_CONF=$E2E_TMP/cookie.conf
lg_run blast --mode healthz-blast --connections "$N_CONN" --rate 200000 --duration-s 20 \
	--cookie-secret-hex "$COOKIE_SECRET"
tap_is "$LG_RC" 0 "healthz-blast: loadgen exits 0 (every answer well-formed and expected)"
tap_is "$(field blast blast sent)/$(field blast blast rst)" "$N_CONN/0" \
	"healthz-blast: $N_CONN connections sent, none reset (the data plane took every cookie)"
b200=$(field blast blast answered_200) bsyn=$(field blast blast syn_ack)
bfin=$(field blast blast fin_ack)
# Nothing retransmits here: a frame a full ring drops stays lost, so not every answer must come.
tap_run "healthz-blast: at least 99 % of the SYN-ACKs ($bsyn), 200s ($b200) and FIN ACKs ($bfin)" \
	awk -v a="$bsyn" -v b="$b200" -v c="$bfin" -v n="$N_CONN" \
	'BEGIN { exit !(a >= n * 0.99 && b >= n * 0.99 && c >= n * 0.99 && a <= n && b <= n && c <= n) }'
tap_is "$(field blast malformed tcp)/$(field blast malformed http)/$(value blast \
	unexpected_status)" 0/0/0 "healthz-blast: zero malformed answers, no unexpected status"
# Without --rate the blast fills the data plane's RX ring, and the data plane its TX ring (the
# loadgen's RX ring), where it holds what does not fit and receives nothing until it went: the
# loadgen must take the answers while it waits to send, or both wait for each other until the
# loadgen's wait runs out and it drops frames (a few hundred connections/s, two in three lost).
lg_run blastfull --mode healthz-blast --connections "$N_CONN" --duration-s 30 \
	--cookie-secret-hex "$COOKIE_SECRET"
b200=$(field blastfull blast answered_200) bsent=$(field blastfull blast sent)
tap_run "healthz-blast without --rate: all $N_CONN connections sent ($bsent), at least 99 % answered 200 ($b200)" \
	awk -v s="$bsent" -v b="$b200" -v n="$N_CONN" 'BEGIN { exit !(s == n && b >= n * 0.99) }'
lg_run blastkey --mode healthz-blast --connections 200 --rate 2000 --duration-s 10 \
	--cookie-secret-hex ffeeddccbbaa99887766554433221100
tap_is "$LG_RC/$(field blastkey blast answered_200)" "1/0" \
	"healthz-blast with another secret: loadgen exits 1, no request answered"
tap_run "healthz-blast with another secret: the data plane reset them (bad cookie)" \
	test "$(field blastkey blast rst)" -gt 0
DP_CONF=$E2E_TMP/flashgate.conf
rc=0
out=$("$LG_EXE" --no-huge -m 64 --no-pci --vdev net_null0 --file-prefix "$LG_PREFIX-nosecret" \
	--log-level=error -- --mode healthz-blast 2>&1) || rc=$?
tap_is "$rc" 2 "healthz-blast without --cookie-secret-hex: loadgen exits 2"
tap_run "healthz-blast without --cookie-secret-hex: it says what is missing" \
	grep -q 'give --cookie-secret-hex' <<<"$out"
rm -rf "$(fg_dpdk_runtime_dir "$LG_PREFIX-nosecret")"

# --- a sale: 300 users, 100 items; the test peer plays the control plane -----------------------
E2E_TOOLS=(mkfifo)
rc=0
e2e_peer_start "$PEER_EXE" --pull "$PULL_EP" --pub "$PUB_EP" --event "1:$STOCK:loadgen sale" \
	--key "auth:$AUTH_KID:$AUTH_KEY:current" --key "sale:$SALE_KID:$SALE_KEY:current" \
	--limits 100000,200000,1000,1000,0,0,100000 || rc=$?
tap_ok "$rc" "the test peer is ready"
WAIT_BRIDGE=1
lg_run sale --mode sale --users "$N_USERS" --concurrency 64 --poll-ms 100 --duration-s 30 \
	--auth-key-hex "$(hex "$AUTH_KEY")" --kid "$AUTH_KID"
tap_is "$LG_RC" 0 "sale: loadgen exits 0"
tap_is "$(field sale users "done")" "$N_USERS" "sale: all $N_USERS users finished"
tap_is "$(grep -o ' reserved=[0-9]*' "$E2E_TMP/sale.out")" " reserved=$STOCK" \
	"sale: exactly the stock ($STOCK) reserved"
tap_is "$(grep -o 'sold_out=[0-9]*' "$E2E_TMP/sale.out" | head -n1)" \
	"sold_out=$((N_USERS - STOCK))" \
	"sale: every other user told sold out"
tap_is "$(field sale malformed tcp)/$(field sale malformed http)/$(value sale \
	unexpected_status)" 0/0/0 "sale: zero malformed answers, no unexpected status"


# --- the same sale with four floods mixed in: honest users' counts stay apart ------------------
# A new test peer (new stock, the low per-address limit) on new ports; the honest users come at
# 200/s so that the floods run alongside them for over a second.
e2e_peer_stop
mapfile -t zmq_ports < <(fg_free_ports 2)
PULL_EP=tcp://127.0.0.1:${zmq_ports[0]} PUB_EP=tcp://127.0.0.1:${zmq_ports[1]}
rc=0
e2e_peer_start "$PEER_EXE" --pull "$PULL_EP" --pub "$PUB_EP" --event "1:$STOCK:flooded sale" \
	--key "auth:$AUTH_KID:$AUTH_KEY:current" --key "sale:$SALE_KID:$SALE_KEY:current" \
	--limits "$IP_RATE,$IP_BURST,1000,1000,0,0,100000" || rc=$?
tap_ok "$rc" "floods: a new test peer is ready (per-address limit $IP_RATE/s, burst $IP_BURST)"
lg_run floods --mode sale --users "$N_USERS" --concurrency 64 --rate 200 --poll-ms 100 \
	--duration-s 30 --auth-key-hex "$(hex "$AUTH_KEY")" --kid "$AUTH_KID" \
	--flood syn:2000 --flood bad-ack:2000 --flood unsigned:1000 --flood one-ip:500
tap_is "$LG_RC" 0 "floods: loadgen exits 0 (every honest and every flood answer expected)"
tap_is "$(field floods users "done")/$(field floods users unfinished)" "$N_USERS/0" \
	"floods: all $N_USERS honest users finished"
tap_is "$(grep -o ' reserved=[0-9]*' "$E2E_TMP/floods.out")/$(grep -o 'sold_out=[0-9]*' \
	"$E2E_TMP/floods.out" | head -n1)" " reserved=$STOCK/sold_out=$((N_USERS - STOCK))" \
	"floods: exactly the stock ($STOCK) reserved, every other user told sold out"
tap_is "$(field floods malformed tcp)/$(field floods malformed http)/$(value floods \
	unexpected_status)/$(field floods connections rst)/$(field floods connections timeout)" \
	0/0/0/0/0 "floods: honest users got no malformed or unexpected answer, reset or timeout"
for key in flood_syn flood_bad_ack flood_unsigned flood_one_ip; do
	tap_is "$(field floods $key malformed)/$(field floods $key unexpected)" 0/0 \
		"floods: $key: no malformed and no unexpected answer"
done
f_syn_sent=$(field floods flood_syn sent) f_syn_ack=$(field floods flood_syn syn_ack)
tap_run "floods: SYNs got SYN-ACKs acking them ($f_syn_ack of $f_syn_sent), no RST" \
	test "${f_syn_ack:-0}" -gt 0 -a "${f_syn_ack:-0}" -le "${f_syn_sent:-0}" \
	-a "$(field floods flood_syn rst)" = 0
f_ba_sent=$(field floods flood_bad_ack sent) f_ba_rst=$(field floods flood_bad_ack rst)
tap_run "floods: bad-cookie ACKs got RST <SEQ=SEG.ACK> ($f_ba_rst of $f_ba_sent)" \
	test "${f_ba_rst:-0}" -gt 0 -a "${f_ba_rst:-0}" -le "${f_ba_sent:-0}"
f_401=$(flood_answer floods flood_unsigned 401) f_403=$(flood_answer floods flood_unsigned 403)
tap_run "floods: unsigned token requests got 401 ($f_401), unsigned reserves 403 ($f_403)" \
	test "$f_401" -gt 0 -a "$f_403" -gt 0
f_200=$(flood_answer floods flood_one_ip 200) f_429=$(flood_answer floods flood_one_ip 429)
tap_run "floods: one address got 200 ($f_200) until its limit, then 429 ($f_429)" \
	test "$f_200" -gt 0 -a "$f_429" -gt 0
# No more 200s than the bucket allows: its burst and its rate over the run (plus a second).
tap_run "floods: one address's 200s ($f_200) within burst + rate x time" \
	awk -v n="$f_200" -v e="$(value floods elapsed_s)" -v b="$IP_BURST" -v r="$IP_RATE" \
	'BEGIN { exit !(e > 0 && n <= b + r * (e + 1)) }'
# The data plane's own counters of this run agree (>=: a retransmitted request is counted there
# once more, and an answer lost on the way is not in the loadgen's counts).
got=$(run_counter answers rst_bad_cookie)
tap_run "floods: data plane sent rst_bad_cookie $got >= the $f_ba_rst RSTs the loadgen got" \
	test "$got" -ge "$f_ba_rst" -a "$f_ba_rst" -gt 0
got=$(run_counter http_responses 401)
tap_run "floods: data plane's 401s ($got) >= the unsigned flood's ($f_401)" test "$got" -ge "$f_401"
got=$(run_counter http_responses 403)
tap_run "floods: data plane's 403s ($got) >= the unsigned flood's ($f_403)" test "$got" -ge "$f_403"
f_429_all=$((f_429 + $(flood_answer floods flood_unsigned 429)))
got=$(run_counter rejects limit_ip)
tap_run "floods: data plane's limit_ip refusals ($got) >= the floods' 429s ($f_429_all)" \
	test "$got" -ge "$f_429_all"
got=$(run_counter answers syn_ack)
want=$((f_syn_ack + $(field floods connections completed) + $(field floods flood_unsigned \
	sent) + $(field floods flood_one_ip sent)))
tap_run "floods: data plane's SYN-ACKs ($got) >= honest, flood and SYN-flood handshakes \
($want)" test "$got" -ge "$want"

# A flood answered otherwise than it must be fails the run: one-ip sessions under a key the data
# plane does not have get 401, not 200/429 (the sale restocked, so that it is open again).
rc=0
e2e_peer_cmd "restock 1 $STOCK" || rc=$?
tap_ok "$rc" "the test peer restocks the sale ($E2E_PEER_REPLY)"
lg_run badkey --mode healthz --connections 1000 --rate 2000 --duration-s 20 --flood one-ip:200 \
	--auth-key-hex "$(hex "not-the-auth-key-of-this-shop-0123")" --kid "$AUTH_KID"
tap_is "$LG_RC/$(answer badkey 200)" "1/1000" \
	"one-ip flood with a wrong key: loadgen exits 1, the honest healthz clients all got 200"
b401=$(flood_answer badkey flood_one_ip 401)
tap_run "one-ip flood with a wrong key: its 401s ($b401) are all counted unexpected" \
	test "$b401" -gt 0 -a "$(field badkey flood_one_ip unexpected)" = "$b401"

# --- --flood-max: the floods stop after that many segments and connections in all -----------
# Healthz clients for ~2 s beside a SYN flood of 20,000/s and a bad-ACK flood of 20,000/s: without
# the bound ~80,000 segments, with it exactly 1,500 (what the demo's --requests counts on).
lg_run bounded --mode healthz --connections 200 --rate 100 --duration-s 20 \
	--flood syn:20000 --flood bad-ack:20000 --flood-max 1500
b_syn=$(field bounded flood_syn sent) b_ba=$(field bounded flood_bad_ack sent)
tap_is "$LG_RC/$(answer bounded 200)/$((${b_syn:-0} + ${b_ba:-0}))" "0/200/1500" \
	"--flood-max 1500: loadgen exits 0, the 200 healthz clients got 200, the floods sent 1500 in all ($b_syn SYNs, $b_ba bad ACKs)"

# --- one reserve per connection with a valid purchase token (minted with the sale key): 202 ---
N_RES=2000
rc=0
e2e_peer_cmd "restock 1 100000" || rc=$?
tap_ok "$rc" "the test peer restocks the sale for the reserve runs ($E2E_PEER_REPLY)"
lg_run reserve --mode reserve --connections "$N_RES" --concurrency 64 --event 1 \
	--user-base 700000 --sale-key-hex "$(hex "$SALE_KEY")" --sale-kid "$SALE_KID" --duration-s 30
tap_is "$LG_RC/$(answer reserve 202)/$(value reserve unexpected_status)" "0/$N_RES/0" \
	"reserve: loadgen exits 0, all $N_RES reserves admitted (202), nothing unexpected"
got=$(dp_counter admits reserve_admitted)
tap_run "reserve: the data plane admitted at least $N_RES reserves (got '$got')" \
	test "${got:-0}" -ge "$N_RES"
lg_run result --mode result --connections "$N_RES" --concurrency 64 --event 1 \
	--user-base 700000 --sale-key-hex "$(hex "$SALE_KEY")" --sale-kid "$SALE_KID" --duration-s 30
tap_is "$LG_RC/$(answer result 200)" "0/$N_RES" \
	"result: loadgen exits 0, all $N_RES polls with a fresh receipt answered 200"

# Kept connections from a trusted edge (the loadgen's --src-net in [edge] trusted): many
# requests on each, as an edge sends them; reserves of one user each, forwarded once each.
DP_EXTRA=(-s "edge.trusted=198.18.2.0/24")
before=$(dp_counter admits reserve_admitted)
lg_run kres --mode kept-reserve --connections 40 --per-conn 50 --concurrency 16 --event 1 \
	--user-base 750000 --sale-key-hex "$(hex "$SALE_KEY")" --sale-kid "$SALE_KID" --duration-s 30
tap_is "$LG_RC/$(answer kres 202)/$(field kres requests kept)" "0/$N_RES/$N_RES" \
	"kept-reserve: loadgen exits 0, all $N_RES reserves admitted (202) on kept connections"
tap_is "$(run_counter kept_connections opened)/$(run_counter kept_connections requests)/$(field \
	kres connections completed)" "40/$N_RES/40" "kept-reserve: the data plane kept 40 connections for them"
tap_is "$(($(dp_counter admits reserve_admitted) - before))" "$N_RES" \
	"kept-reserve: each reserve admitted (forwarded) once"
lg_run khz --mode kept-healthz --connections 20 --per-conn 100 --concurrency 8 --proxy-v2 \
	--duration-s 30
tap_is "$LG_RC/$(answer khz 200)/$(field khz requests kept)" "0/$N_RES/$N_RES" \
	"kept-healthz with PROXY v2 headers: loadgen exits 0, all $N_RES answered 200 on kept connections"
# A table of 4 entries for 8 clients at once: the others are answered with Connection: close
# (table_full) and the loadgen goes on with a new connection for the rest of their requests.
DP_EXTRA=(-s "edge.trusted=198.18.2.0/24" -s "dataplane.kept_connections=4")
lg_run kfull --mode kept-healthz --connections 20 --per-conn 10 --concurrency 8 --duration-s 30
tap_is "$LG_RC/$(answer kfull 200)" "0/200" \
	"kept-healthz, table of 4: loadgen exits 0, all 200 requests answered 200"
tap_run "kept-healthz, table of 4: some answered Connection: close ($(field kfull requests \
kept_closed)), counted table_full ($(run_counter kept_connections table_full))" \
	test "$(field kfull requests kept_closed)" -gt 0 -a \
	"$(run_counter kept_connections table_full)" -gt 0
DP_EXTRA=()

# The same reserves sent as whole connections (reserve-blast): each answered 202, or 503 when
# the link to the control plane is busy; every 202 the loadgen saw was an admitted reservation.
e2e_config_add "$E2E_TMP/flashgate.conf" "$E2E_TMP/cookie.conf" dataplane \
	"syncookie_secret = $COOKIE_SECRET"
DP_CONF=$E2E_TMP/cookie.conf
before=$(dp_counter admits reserve_admitted)
lg_run rblast --mode reserve-blast --connections "$N_RES" --rate 50000 --event 1 \
	--user-base 800000 --sale-key-hex "$(hex "$SALE_KEY")" --sale-kid "$SALE_KID" \
	--cookie-secret-hex "$COOKIE_SECRET" --duration-s 20
tap_is "$LG_RC/$(field rblast blast sent)/$(field rblast blast rst)" "0/$N_RES/0" \
	"reserve-blast: loadgen exits 0, $N_RES connections sent, none reset"
r202=$(field rblast blast answered_202) r503=$(field rblast blast answered_503)
tap_run "reserve-blast: at least 99 % answered 202 or 503 (202: $r202, 503: $r503)" \
	awk -v a="$r202" -v b="$r503" -v n="$N_RES" 'BEGIN { exit !(a + b >= n * 0.99 && a + b <= n && a > 0) }'
tap_is "$(field rblast malformed tcp)/$(field rblast malformed http)/$(value rblast \
	unexpected_status)" 0/0/0 "reserve-blast: zero malformed answers, no unexpected status"
got=$(($(dp_counter admits reserve_admitted) - before))
tap_run "reserve-blast: the data plane admitted at least the $r202 reserves answered 202 (got $got)" \
	test "$got" -ge "$r202" -a "$got" -le "$N_RES"
lg_run rblastkey --mode reserve-blast --connections 200 --rate 2000 --event 1 \
	--user-base 800000 --sale-key-hex "$(hex "not-the-sale-key-of-this-shop-0123")" \
	--sale-kid "$SALE_KID" --cookie-secret-hex "$COOKIE_SECRET" --duration-s 10
tap_run "reserve-blast with a wrong sale key: loadgen exits 1, its 403s counted unexpected" \
	test "$LG_RC" = 1 -a "$(field rblastkey blast answered_202)" = 0 -a \
	"$(value rblastkey unexpected_status)" -gt 0
DP_CONF=$E2E_TMP/flashgate.conf
rc=0
out=$("$LG_EXE" --no-huge -m 64 --no-pci --vdev net_null0 --file-prefix "$LG_PREFIX-digits" \
	--log-level=error -- --mode reserve-blast --cookie-secret-hex "$COOKIE_SECRET" \
	--sale-key-hex "$(hex "$SALE_KEY")" --user-base 99990 --connections 100 2>&1) || rc=$?
tap_is "$rc" 2 "reserve-blast with user ids of 5 and 6 digits: loadgen exits 2"
tap_run "reserve-blast with user ids of 5 and 6 digits: it says why and what to use" \
	grep -q 'needs user ids of one length.*try --user-base 100' <<<"$out"
rm -rf "$(fg_dpdk_runtime_dir "$LG_PREFIX-digits")"

# --- memif zero-copy (scripts/bench's zero-copy rows): the data plane memif's zero-copy client,
# the loadgen the server. Stateless answers written over the request's mbuf, kept answers in
# new mbufs of the data plane's pool: each must reach the loadgen whole. Memif's shared region
# then holds only the rings (the packet buffers are the data plane's own mbufs), under 1 MB
# where copying it holds 2 x 1,024 buffers of 2 KB.
LG_ZC=1 WAIT_BRIDGE=1
lg_run zres --mode reserve --connections "$N_RES" --concurrency 64 --event 1 \
	--user-base 1700000 --sale-key-hex "$(hex "$SALE_KEY")" --sale-kid "$SALE_KID" --duration-s 30
tap_is "$LG_RC/$(answer zres 202)/$(value zres unexpected_status)" "0/$N_RES/0" \
	"zero-copy reserve: loadgen exits 0, all $N_RES reserves admitted (202), nothing unexpected"
tap_run "zero-copy reserve: memif's shared region holds only the rings (${LG_REGION0_KB:-?} KB)" \
	test "${LG_REGION0_KB:-0}" -gt 0 -a "${LG_REGION0_KB:-0}" -lt 1024
DP_EXTRA=(-s "edge.trusted=198.18.2.0/24")
lg_run zkres --mode kept-reserve --connections 40 --per-conn 50 --concurrency 16 --event 1 \
	--user-base 1750000 --sale-key-hex "$(hex "$SALE_KEY")" --sale-kid "$SALE_KID" --duration-s 30
tap_is "$LG_RC/$(answer zkres 202)/$(field zkres requests kept)" "0/$N_RES/$N_RES" \
	"zero-copy kept-reserve: loadgen exits 0, all $N_RES reserves admitted (202) on kept connections"
tap_run "zero-copy kept-reserve: memif's shared region holds only the rings (${LG_REGION0_KB:-?} KB)" \
	test "${LG_REGION0_KB:-0}" -gt 0 -a "${LG_REGION0_KB:-0}" -lt 1024
DP_EXTRA=() LG_ZC=''

# A sale user's next request (the reserve after the token, the polls after the reserve) starts
# when its answer says, not when a retransmission timer would fire: with a 30 s RTO, a user who
# waited for one between its steps could not finish its three requests in the 20 s of the run.
lg_run steps --mode sale --users 20 --user-base 900000 --concurrency 4 --rto-ms 30000 \
	--poll-ms 10 --duration-s 20 --auth-key-hex "$(hex "$AUTH_KEY")" --kid "$AUTH_KID"
tap_is "$LG_RC/$(field steps users "done")/$(field steps users unfinished)" "0/20/0" \
	"sale steps: with --rto-ms 30000 all 20 users finish their requests within the run"
tap_is "$(answer steps 202)/$(grep -o ' reserved=[0-9]*' "$E2E_TMP/steps.out")" "20/ reserved=20" \
	"sale steps: each user's token, reserve (202) and result polls (reserved) answered"

# --- bots and people, a pre-queue: 200 users, a quarter of them bots (100x faster), half of
# them arriving over the 2 s before the start and half in a burst at it, for 50 items ---------
N_FAIR=200 FAIR_STOCK=50
rc=0
e2e_peer_cmd "restock 1 $FAIR_STOCK" || rc=$?
tap_ok "$rc" "the test peer restocks the sale with $FAIR_STOCK items ($E2E_PEER_REPLY)"
start=$(($(date +%s) + 5))
lg_run fair --mode sale --users "$N_FAIR" --user-base 1000000 --bots 25% --think-ms 200 \
	--arrive-before 2 --burst 50 --start-at "$start" --concurrency 256 --poll-ms 50 \
	--retries 5 --duration-s 40 --auth-key-hex "$(hex "$AUTH_KEY")" --kid "$AUTH_KID"
tap_is "$LG_RC/$(field fair users "done")/$(field fair users unfinished)" "0/$N_FAIR/0" \
	"bots and a pre-queue: loadgen exits 0, all $N_FAIR users finished"
tap_is "$(field fair bots users)/$(field fair people users)" "50/150" \
	"bots and a pre-queue: 25 % of $N_FAIR users are bots (50), the rest people (150)"
# First come: once the items are gone the token route answers 410, so the entrants are the
# users whose reserve was answered 202 (each once: no second click here).
n202=$(answer fair 202)
tap_is "$(($(field fair bots entrants) + $(field fair people entrants)))" "${n202:-none}" \
	"bots and a pre-queue: the populations' entrants add up to the reserves answered 202"
tap_is "$(($(field fair bots items) + $(field fair people items)))/$(field fair outcomes \
	reserved)" "$FAIR_STOCK/$FAIR_STOCK" \
	"bots and a pre-queue: the populations' items add up to the $FAIR_STOCK reserved"
tap_is "$(field fair arrivals before)/$(field fair arrivals at_start)" "100/100" \
	"bots and a pre-queue: 100 users arrived before the start, 100 at it"
first=$(field fair arrivals first_before_s) last=$(field fair arrivals last_before_s)
burst=$(field fair arrivals first_at_start_s)
tap_run "bots and a pre-queue: the early arrivals began within the 2 s before the start, the \
burst at it (first $first s, last $last s, burst $burst s)" \
	awk -v f="$first" -v l="$last" -v b="$burst" \
	'BEGIN { exit !(f >= -2.001 && f < 0 && l >= f && b >= 0) }'
tap_diag "shares (first come, no draw):" "$(grep -E '^(bots|people):' "$E2E_TMP/fair.out")"
tap_is "$(field fair pow challenges)/$(field fair queue rises)" "0/0" \
	"bots and a pre-queue: no challenge (the event has none), no position that rose"

# --- a challenge: the event's tokens carry one of 12 bits (a FAIR record from the test peer);
# each user solves its own, a slice at a time, and its reserve carries the solution ---------
N_POW=100 POW_BITS=12
rc=0
e2e_peer_cmd "restock 1 100000" || rc=$?
[ "$rc" -ne 0 ] || e2e_peer_cmd "fair 1 0 $POW_BITS 0 0 0" || rc=$?
tap_ok "$rc" "the test peer sets challenges of $POW_BITS bits on the sale ($E2E_PEER_REPLY)"
lg_run pow --mode sale --users "$N_POW" --user-base 1100000 --concurrency 64 --poll-ms 50 \
	--pow-tries-per-loop 64 --duration-s 40 --auth-key-hex "$(hex "$AUTH_KEY")" --kid "$AUTH_KID"
tap_is "$LG_RC/$(field pow users "done")/$(field pow outcomes reserved)" "0/$N_POW/$N_POW" \
	"challenge: loadgen exits 0, all $N_POW users reserved"
tap_is "$(field pow pow challenges)/$(field pow pow solved)/$(field pow pow unsolved)" \
	"$N_POW/$N_POW/0" "challenge: $N_POW token answers with a challenge, each solved"
tap_is "$(field pow pow bits_min)/$(field pow pow bits_max)/$(field pow pow_cpu_us count)" \
	"$POW_BITS/$POW_BITS/$N_POW" "challenge: all of $POW_BITS bits, the solving time of each kept"
tries=$(field pow pow tries)
tap_run "challenge: at least one try per solution (tries $tries, per solution \
$(field pow pow tries_per_solution), $(field pow pow cpu_us_per_solution) us each)" \
	test "${tries:-0}" -ge "$N_POW"
tap_is "$(run_counter rejects pow_missing)/$(run_counter rejects pow_wrong)/$(answer pow 403)" \
	"0/0/" "challenge: the data plane refused no solution as missing or wrong"
got=$(run_counter admits reserve_admitted)
tap_run "challenge: the data plane admitted the $N_POW reserves with their solutions ($got)" \
	test "${got:-0}" -ge "$N_POW"

# --- entrants of a draw in progress: 20 users ranked 11..30 (QUEUED results from the test peer,
# published to the run's data plane before the users come), none decided yet at 1 a second, so
# each is 10..29 s from its turn; 4 other users are no entrants. An entrant's reserve is
# answered 200 with its place, and it polls when its wait_ms says, within [--poll-ms 50,
# --poll-max-ms 1000]: every 1 s here, not every 50 ms; the others are told 425 (the draw in
# progress) until they give up. ---------------------------------------------------------------
N_Q=20 N_NQ=4
# shellcheck disable=SC2317 # called by lg_run
queued_hook() {
	local i
	for ((i = 0; i < N_Q; i++)); do
		e2e_peer_cmd "queued 1 $((1200000 + i)) $((i + 11))" || return 1
	done
	e2e_peer_cmd "fair 1 2 0 $((N_Q + 10)) 0 1"
}
LG_HOOK=queued_hook
lg_run queued --mode sale --users $((N_Q + N_NQ)) --user-base 1200000 --concurrency 64 \
	--bots 50% --think-ms 20 --poll-ms 50 --poll-max-ms 1000 --max-polls 3 --retries 1 \
	--duration-s 30 --auth-key-hex "$(hex "$AUTH_KEY")" --kid "$AUTH_KID"
LG_HOOK=
tap_is "$LG_RC/$(field queued outcomes still_queued)/$(field queued outcomes gave_up)" \
	"0/$N_Q/$N_NQ" "draw in progress: loadgen exits 0, $N_Q entrants still queued after their \
polls, the $N_NQ others gave up"
tap_is "$(($(field queued bots entrants) + $(field queued people entrants)))" "$N_Q" \
	"draw in progress: the $N_Q entrants counted (reserve answered 200 queued with a place)"
want=$((N_Q * 4))
tap_is "$(field queued queue polls)/$(field queued queue position)/$(field queued queue \
	wait)/$(field queued queue rises)" "$want/$want/$want/0" \
	"draw in progress: each entrant's reserve and 3 polls answered queued with position and \
wait_ms, no position rose"
n425=$(answer queued 425)
tap_run "draw in progress: the other users' reserves answered 425 (${n425:-0})" \
	test "${n425:-0}" -ge "$N_NQ"
# Each entrant waits at least --poll-max-ms (1 s) between its polls: no more polls than one a
# second each over the run, plus the first two (a poll every 50 ms would be 20 a second).
el=$(value queued elapsed_s)
tap_run "draw in progress: entrants polled at most once a second ($want answers in $el s)" \
	awk -v n="$want" -v e="$el" -v u="$N_Q" 'BEGIN { exit !(n <= u * (e + 2)) }'
rc=0
e2e_peer_cmd "fair 1 0 0 0 0 0" || rc=$?
tap_ok "$rc" "the test peer takes the challenge and the draw off ($E2E_PEER_REPLY)"

rc=0
out=$("$LG_EXE" --no-huge -m 64 --no-pci --vdev net_null0 --file-prefix "$LG_PREFIX-nokey" \
	--log-level=error -- --mode reserve 2>&1) || rc=$?
tap_is "$rc" 2 "reserve without --sale-key-hex: loadgen exits 2"
tap_run "reserve without --sale-key-hex: it says what is missing" \
	grep -q 'needs --sale-key-hex' <<<"$out"
rc=0
out=$("$LG_EXE" --no-huge -m 64 --no-pci --vdev net_null0 --file-prefix "$LG_PREFIX-nokey" \
	--log-level=error -- --mode sale --auth-key-hex "$(hex "$AUTH_KEY")" --arrive-before 5 \
	2>&1) || rc=$?
tap_is "$rc" 2 "--arrive-before without --start-at: loadgen exits 2"
tap_run "--arrive-before without --start-at: it says what is missing" \
	grep -q 'give --start-at' <<<"$out"
rc=0
out=$("$LG_EXE" --no-huge -m 64 --no-pci --vdev net_null0 --file-prefix "$LG_PREFIX-nokey" \
	--log-level=error -- --mode sale --auth-key-hex "$(hex "$AUTH_KEY")" --users 10 \
	--bots 11 2>&1) || rc=$?
tap_is "$rc" 2 "--bots above --users: loadgen exits 2"
tap_run "--bots above --users: it says so" grep -q 'more than the 10 --users' <<<"$out"
rm -rf "$(fg_dpdk_runtime_dir "$LG_PREFIX-nokey")"

# --- a data plane that is not there: the loadgen says so instead of hanging ---------------------
WAIT_BRIDGE=
lg_run nodp --mode healthz --connections 10 --dst 198.18.0.99 --duration-s 1
tap_is "$LG_RC" 2 "wrong --dst: loadgen exits 2"
tap_run "wrong --dst: it says that nobody answered ARP" grep -q 'no ARP answer' \
	"$E2E_TMP/nodp.out"

# The data plane counted what the loadgen did, from its side of the link: at least one SYN-ACK
# and one 200 for each the loadgen received (more if segments were retransmitted).
want_syn_acks=$((N_CONN + syn_acks + $(field sale connections completed) + want))
got=$(dp_counter answers syn_ack)
tap_run "data plane: SYN-ACKs sent >= loadgen's connections and flood SYN-ACKs (got '$got', \
want >= $want_syn_acks)" test "${got:-0}" -ge "$want_syn_acks"
want_200=$((N_CONN + $(answer sale 200)))
got=$(dp_counter http_responses 200)
tap_run "data plane: 200s sent >= the loadgen's 200s (got '$got', want >= $want_200)" \
	test "${got:-0}" -ge "$want_200"
tap_done
