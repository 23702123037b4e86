#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# flashgate-pcapgen's request streams replayed into the data plane through DPDK's net_pcap vdev
# (rx_pcap= the stream, tx_pcap= the answers; no NIC, no namespace), as pktgen-dpdk would send
# them on a NIC host (docs/pktgen.md):
#   arp      every request answered with the data plane's MAC, which the next streams are sent to
#   syn      one SYN-ACK per SYN, to the right address and port, acknowledging ISN + 1
#   bad-ack  one RST <SEQ=SEG.ACK> per ACK that no cookie of the data plane made
# The answers are checked in python3 frame by frame (checksums included), and the data plane's
# final counters must count exactly the frames of the stream.
#   reserve  whole connections with the data plane's cookies and purchase tokens, replayed over
#            and over (infinite_rx) while the test peer plays the control plane: every
#            connection answered SYN-ACK, 202 (503 until the peer's snapshot is in; 200 once
#            the user's result is here: a replay of a known buyer, answered from the result
#            table) and the ACK of its FIN, no RST, and the reservations reach the peer.
# Every wait is bounded.
# usage: test_pcap_replay.sh DATAPLANE PCAPGEN TESTPEER   (prints TAP)
set -euo pipefail
# shellcheck source=tests/e2e/harness.sh
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

DP_EXE=${1:-} PG_EXE=${2:-} PEER_EXE=${3:-}
N_ARP=200 N_SYN=3000 N_BAD=1000 N_RES=2000
SRC_NET=198.18.2.0/24 SRC_MAC=02:00:00:00:00:01 SEED=7

for exe in "$DP_EXE" "$PG_EXE" "$PEER_EXE"; do
	if [ -z "$exe" ] || [ ! -x "$exe" ]; then
		echo "Bail out! usage: $0 DATAPLANE PCAPGEN TESTPEER (got '$exe')"
		exit 1
	fi
done
if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root (DPDK runtime directory under /var/run/dpdk)"
	exit 0
fi
for t in python3 dpdk-telemetry.py timeout; do
	command -v "$t" >/dev/null || {
		echo "Bail out! tool '$t' is not installed (scripts/install-deps)"
		exit 1
	}
done

E2E_TMP=$(mktemp -d /tmp/fg-e2e-pcap.XXXXXX)
DP_PREFIX=fg-e2e-pcap-$$
E2E_PREFIX=$DP_PREFIX # for e2e_telemetry_field and the log helpers
DP_PID= E2E_PEER_PID= E2E_PEER_FD=

# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	trap - EXIT INT TERM
	if [ -n "$DP_PID" ] && kill -0 "$DP_PID" 2>/dev/null; then
		fg_stop_pid "$DP_PID" 10 >/dev/null 2>&1
	fi
	e2e_peer_stop >/dev/null 2>&1 || true
	rm -rf "$(fg_dpdk_runtime_dir "$DP_PREFIX")" "$E2E_TMP"
	t_finish
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

mapfile -t zmq_ports < <(fg_free_ports 2)
FG_DP_ADDR=198.18.0.2
e2e_write_config "$E2E_TMP/flashgate.conf"
: >"$E2E_TMP/dataplane.log"

# consumed N: true once the data plane has read N frames and sent N answers.
# shellcheck disable=SC2317 # called by t_wait_until
consumed() {
	[ "$(e2e_telemetry_field /flashgate/stats rx_packets 2>/dev/null)" = "$1" ] &&
		[ "$(e2e_telemetry_field /flashgate/stats tx_packets 2>/dev/null)" = "$1" ]
}

# replay NAME N: the data plane reads $E2E_TMP/NAME.pcap on a net_pcap port and writes its answers
# to $E2E_TMP/NAME-out.pcap; it is stopped once all N frames are answered (at most 30 s). Its log
# is appended to dataplane.log; NAME.counters gets its final counters.
replay() {
	local name=$1 n=$2 lopt=-l lcores rc=0 lines
	lcores=$(fg_lcores)
	[[ $lcores != *@* ]] || lopt=--lcores
	"$DP_EXE" "$lopt" "$lcores" --no-huge -m 512 --no-pci --file-prefix "$DP_PREFIX" \
		--vdev "net_pcap0,rx_pcap=$E2E_TMP/$name.pcap,tx_pcap=$E2E_TMP/$name-out.pcap" -- \
		-c "$E2E_TMP/flashgate.conf" -s "bridge.push_endpoint=tcp://127.0.0.1:${zmq_ports[0]}" \
		-s "bridge.sub_endpoint=tcp://127.0.0.1:${zmq_ports[1]}" >"$E2E_TMP/dp-run.log" 2>&1 &
	DP_PID=$!
	fg_wait_line "$E2E_TMP/dp-run.log" 'ready:' "$DP_PID" 60 || rc=$?
	tap_ok "$rc" "$name: data plane is ready on a net_pcap port"
	[ "$rc" -ne 0 ] || t_wait_until 30 consumed "$n" || rc=$?
	tap_ok "$rc" "$name: all $n frames read and answered within 30 s (rx $(e2e_telemetry_field \
/flashgate/stats rx_packets 2>/dev/null || echo ?), tx $(e2e_telemetry_field /flashgate/stats \
tx_packets 2>/dev/null || echo ?))"
	lines=$(wc -l <"$E2E_TMP/dp-run.log")
	fg_stop_pid "$DP_PID" 20
	DP_PID=
	tap_is "$FG_STOP_RC" 0 "$name: data plane exits with status 0 on SIGTERM"
	tail -n "+$((lines + 1))" "$E2E_TMP/dp-run.log" >"$E2E_TMP/$name.counters"
	cat "$E2E_TMP/dp-run.log" >>"$E2E_TMP/dataplane.log"
	[ "$tap_failed" -eq 0 ] || { tap_diag "data plane log:" && tail -n 20 "$E2E_TMP/dp-run.log" |
		sed 's/^/#   /'; }
}

# counter NAME KEY...: a counter of NAME's final counters ("answers syn_ack", "rx_packets"); 0
# when the data plane did not print it (it prints a family's members only when not zero).
counter() {
	local name=$1
	shift
	awk -v n="$*" '
		/final counters/ { f = 1; next }
		f { k = $0; sub(/^ +/, "", k); sub(/ +[0-9]+$/, "", k);
			if (k == n) { print $NF; found = 1 } }
		END { if (!found) print 0 }' "$E2E_TMP/$name.counters" | head -n 1
}

# check MODE IN OUT DST [DP_MAC]: checks the answers in OUT to the stream IN sent to address DST
# in python3; prints one "ok DESCRIPTION" or "not-ok DESCRIPTION" line per check, and "mac MAC"
# (the data plane's, from its replies) for arp.
check() {
	python3 - "$@" <<'PY'
import struct, sys

mode, fin, fout, dst = sys.argv[1:5]
want_mac = sys.argv[5] if len(sys.argv) > 5 else None
f_dst = bytes(int(x) for x in dst.split("."))
results = []


def ok(cond, desc):
    results.append(("ok" if cond else "not-ok", desc))
    return cond


def frames(path):
    d = open(path, "rb").read()
    # libpcap's magic: microsecond (ours) or nanosecond timestamps (net_pcap's tx_pcap)
    if len(d) < 24 or struct.unpack("<I", d[:4])[0] not in (0xA1B2C3D4, 0xA1B23C4D) or \
            struct.unpack("<I", d[20:24])[0] != 1:
        print(f"not-ok {mode}: {path} is a classic pcap file of Ethernet frames")
        sys.exit(1)
    off, out = 24, []
    while off + 16 <= len(d):
        incl, orig = struct.unpack("<II", d[off + 8:off + 16])
        out.append(d[off + 16:off + 16 + incl])
        off += 16 + incl
    if off != len(d):
        print(f"not-ok {mode}: {path} ends with a whole record")
        sys.exit(1)
    return out


def mac(b):
    return ":".join(f"{x:02x}" for x in b)


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def tcp(f):
    """(src, dst, sport, dport, seq, ack, flags, options, payload) of a well-formed IPv4 TCP
    frame with both checksums right, else None."""
    if len(f) < 54 or f[12:14] != b"\x08\x00" or f[14] != 0x45:
        return None
    tot = struct.unpack("!H", f[16:18])[0]
    if tot < 40 or 14 + tot > len(f) or f[23] != 6 or csum(f[14:34]) != 0xFFFF:
        return None
    seg = f[34:14 + tot]
    ph = f[26:34] + struct.pack("!BBH", 0, 6, len(seg))
    if csum(ph + seg) != 0xFFFF:
        return None
    sport, dport, seq, ack, off, flags = struct.unpack("!HHIIBB", seg[:14])
    thl = (off >> 4) * 4
    if thl < 20 or thl > len(seg):
        return None
    src, dst = struct.unpack("!II", f[26:34])
    return src, dst, sport, dport, seq, ack, flags, seg[20:thl], seg[thl:]


ins, outs = frames(fin), frames(fout)
ok(len(outs) == len(ins), f"{mode}: {len(outs)} answers to {len(ins)} frames")

if mode == "arp":
    asked = {}
    for f in ins:
        asked[f[28:32]] = f[22:28]  # sender IP -> sender MAC
    macs, good, answered = set(), 0, set()
    for f in outs:
        if len(f) < 42 or f[12:14] != b"\x08\x06" or f[14:22] != b"\x00\x01\x08\x00\x06\x04\x00\x02":
            continue
        sha, sip, tha, tip = f[22:28], f[28:32], f[32:38], f[38:42]
        if tip in asked and tha == asked[tip] and f[0:6] == tha and f[6:12] == sha and \
                sip == f_dst and tip not in answered:
            good += 1
            answered.add(tip)
            macs.add(sha)
    ok(good == len(ins), f"arp: every request answered once, to the asker's MAC and address, "
       f"'{'.'.join(map(str, f_dst))} is at' ({good} of {len(ins)})")
    ok(len(macs) == 1 and list(macs)[0][0] & 1 == 0,
       f"arp: one unicast MAC in every reply ({', '.join(mac(m) for m in macs)})")
    if len(macs) == 1:
        print("mac", mac(list(macs)[0]))
else:
    sent = {}
    for f in ins:
        t = tcp(f)
        if t is None:
            ok(False, f"{mode}: every replayed frame is well-formed")
            break
        sent[(t[0], t[2])] = t
    good, answered, bad = 0, set(), []
    for f in outs:
        t = tcp(f)
        if t is None:
            bad.append("malformed or bad checksum")
            continue
        src, dst, sport, dport, seq, ack, flags, opts, payload = t
        s = sent.get((dst, dport))
        if s is None or (dst, dport) in answered:
            bad.append(f"not to a sender, or twice: {dst:08x}:{dport}")
            continue
        if src != s[1] or sport != s[3] or mac(f[6:12]) != want_mac or f[0:6] != b"\x02\0\0\0\0\x01":
            bad.append(f"wrong addresses from {src:08x}:{sport}")
            continue
        if mode == "syn":
            # RFC 9293 §3.5: <SEQ=ISS><ACK=RCV.NXT><CTL=SYN,ACK>, RCV.NXT = ISN + 1; MSS option
            right = flags == 0x12 and ack == (s[4] + 1) % 2**32 and opts[:2] == b"\x02\x04" \
                and not payload
        else:
            # RFC 9293 §3.10.7.1: an ACK to LISTEN gets <SEQ=SEG.ACK><CTL=RST>
            right = flags == 0x04 and seq == s[5] and not payload
        if not right:
            bad.append(f"{mode}: flags {flags:#x} seq {seq} ack {ack} to {dst:08x}:{dport}")
            continue
        good += 1
        answered.add((dst, dport))
    what = "one SYN-ACK per SYN acknowledging ISN + 1, with MSS" if mode == "syn" else \
        "one RST per bad ACK with SEQ = its ACK"
    ok(good == len(sent) == len(ins), f"{mode}: {what}, both checksums right, to the sender's "
       f"address, port and MAC ({good} of {len(ins)}){'; first problem: ' + bad[0] if bad else ''}")

for r, d in results:
    print(r, d)
PY
}

# checker_failed NAME: after a failed check(), makes sure NAME.check holds a failure (a python
# traceback prints none), with the checker's last line.
checker_failed() {
	grep -q '^not-ok' "$E2E_TMP/$1.check" ||
		echo "not-ok $1: the answer checker failed: $(tail -n 1 "$E2E_TMP/$1.check")" \
			>>"$E2E_TMP/$1.check"
}

# tap_lines FILE: one TAP check per "ok ..."/"not-ok ..." line of FILE.
tap_lines() {
	local r d
	while read -r r d; do
		case $r in
		ok) tap_ok 0 "$d" ;;
		not-ok) tap_ok 1 "$d" ;;
		esac
	done <"$1"
}

# --- pcapgen's own refusals ----------------------------------------------------------------------
rc=0
"$PG_EXE" --stream syn --out "$E2E_TMP/x.pcap" >/dev/null 2>"$E2E_TMP/nomac.err" || rc=$?
tap_is "$rc" 2 "pcapgen: a syn stream without --dst-mac exits 2"
tap_run "pcapgen: and says that --dst-mac is needed" grep -q -- 'needs --dst-mac' \
	"$E2E_TMP/nomac.err"

# --- arp: learn the data plane's MAC as a replayer's operator would ------------------------------
rc=0
"$PG_EXE" --stream arp --count "$N_ARP" --src-net "$SRC_NET" --src-mac "$SRC_MAC" \
	--dst "$FG_DP_ADDR" --seed "$SEED" --out "$E2E_TMP/arp.pcap" >"$E2E_TMP/pg.out" 2>&1 || rc=$?
tap_ok "$rc" "pcapgen: wrote $N_ARP ARP requests ($(cat "$E2E_TMP/pg.out"))"
replay arp "$N_ARP"
check arp "$E2E_TMP/arp.pcap" "$E2E_TMP/arp-out.pcap" "$FG_DP_ADDR" >"$E2E_TMP/arp.check" 2>&1 ||
	checker_failed arp
tap_lines "$E2E_TMP/arp.check"
DP_MAC=$(awk '$1 == "mac" { print $2 }' "$E2E_TMP/arp.check")
LOG_MAC=$(sed -n 's/.*port 0 (net_pcap0): mac \([0-9A-Fa-f:]*\),.*/\1/p' "$E2E_TMP/arp.counters" \
	"$E2E_TMP/dataplane.log" | head -n 1 | tr 'A-F' 'a-f')
tap_is "${DP_MAC:-none}" "${LOG_MAC:-none}" "arp: the MAC in the replies is the one the data \
plane logs for its port"
tap_is "$(counter arp answers arp_reply)/$(counter arp rx_packets)/$(counter arp tx_packets)" \
	"$N_ARP/$N_ARP/$N_ARP" "arp: final counters: $N_ARP ARP replies, rx and tx $N_ARP"

# --- syn and bad-ack: to the MAC the data plane answered ARP with --------------------------------
# stream NAME N: writes stream NAME of N frames to the data plane's MAC, replays it, checks the
# answers.
stream() {
	local name=$1 n=$2 rc=0
	"$PG_EXE" --stream "$name" --count "$n" --src-net "$SRC_NET" --src-mac "$SRC_MAC" \
		--dst "$FG_DP_ADDR" --dst-mac "${DP_MAC:-02:00:00:00:00:02}" --seed "$SEED" \
		--out "$E2E_TMP/$name.pcap" >"$E2E_TMP/pg.out" 2>&1 || rc=$?
	tap_ok "$rc" "pcapgen: wrote $n $name frames ($(cat "$E2E_TMP/pg.out"))"
	replay "$name" "$n"
	check "$name" "$E2E_TMP/$name.pcap" "$E2E_TMP/$name-out.pcap" "$FG_DP_ADDR" \
		"${DP_MAC:-none}" >"$E2E_TMP/$name.check" 2>&1 || checker_failed "$name"
	tap_lines "$E2E_TMP/$name.check"
}

stream syn "$N_SYN"
tap_is "$(counter syn answers syn_ack)/$(counter syn rx_packets)/$(counter syn tx_packets)" \
	"$N_SYN/$N_SYN/$N_SYN" "syn: final counters: $N_SYN SYN-ACKs, rx and tx $N_SYN"
bursts=$(awk '/final counters/ { f = 1 } f && $1 == "rx_bursts" { print $2 }' \
	"$E2E_TMP/syn.counters")
tap_ok "$([ "${bursts:-0}" -ge $(((N_SYN + 31) / 32)) ] && [ "${bursts:-0}" -le "$N_SYN" ]
	echo $?)" "syn: rx_bursts counts the bursts that brought the $N_SYN frames (${bursts:-none}, \
at most 32 frames each)"

stream bad-ack "$N_BAD"
tap_is "$(counter bad-ack answers rst_bad_cookie)/$(counter bad-ack answers rst)/$(counter \
	bad-ack answers http_response)/$(counter bad-ack rx_packets)/$(counter bad-ack tx_packets)" \
	"$N_BAD/0/0/$N_BAD/$N_BAD" \
	"bad-ack: final counters: $N_BAD rst_bad_cookie, no other RST, no HTTP answer, rx and tx $N_BAD"

# --- reserve: whole connections, admitted, with the test peer as the control plane ---------------
COOKIE_HEX=72657365727665642d636f6f6b696573 SALE_KEY=salekey-e2e-pcap-0123456789abcdef
SALE_HEX=$(printf '%s' "$SALE_KEY" | od -An -v -tx1 | tr -d ' \n')
rc=0
"$PG_EXE" --stream reserve --out "$E2E_TMP/reserve.pcap" >/dev/null 2>"$E2E_TMP/nokey.err" \
	--dst-mac "${DP_MAC:-02:00:00:00:00:02}" --cookie-secret-hex "$COOKIE_HEX" || rc=$?
tap_is "$rc" 2 "pcapgen: a reserve stream without the sale key exits 2"
tap_run "pcapgen: and says that --sale-key-hex is needed" grep -q -- 'needs --sale-key-hex' \
	"$E2E_TMP/nokey.err"
rc=0
"$PG_EXE" --stream reserve --count "$N_RES" --src-net "$SRC_NET" --src-mac "$SRC_MAC" \
	--dst "$FG_DP_ADDR" --dst-mac "${DP_MAC:-02:00:00:00:00:02}" --seed "$SEED" --port "$E2E_PORT" \
	--cookie-secret-hex "$COOKIE_HEX" --sale-key-hex "$SALE_HEX" --sale-kid 7 --event 1 \
	--user-base 100000 --out "$E2E_TMP/reserve.pcap" >"$E2E_TMP/pg.out" 2>&1 || rc=$?
tap_ok "$rc" "pcapgen: wrote $N_RES reserve connections ($(head -n 1 "$E2E_TMP/pg.out"))"
e2e_peer_start "$PEER_EXE" --pull "tcp://127.0.0.1:${zmq_ports[0]}" \
	--pub "tcp://127.0.0.1:${zmq_ports[1]}" --event "1:100000000:e2e open sale" \
	--key "sale:7:$SALE_KEY:current" || rc=$?
tap_ok "$rc" "reserve: the test peer plays the control plane"

# admitted N: true once the peer has received N reservations.
# shellcheck disable=SC2317 # called by t_wait_until
admitted() { [ "$(e2e_peer_stat reserves 2>/dev/null || echo 0)" -ge "$1" ]; }

lopt=-l lcores=$(fg_lcores)
[[ $lcores != *@* ]] || lopt=--lcores
e2e_config_add "$E2E_TMP/flashgate.conf" "$E2E_TMP/cookie.conf" dataplane \
	"syncookie_secret = $COOKIE_HEX"
"$DP_EXE" "$lopt" "$lcores" --no-huge -m 512 --no-pci --file-prefix "$DP_PREFIX" \
	--vdev "net_pcap0,rx_pcap=$E2E_TMP/reserve.pcap,infinite_rx=1" -- \
	-c "$E2E_TMP/cookie.conf" -s "dataplane.mbufs=16383" \
	-s "bridge.push_endpoint=tcp://127.0.0.1:${zmq_ports[0]}" \
	-s "bridge.sub_endpoint=tcp://127.0.0.1:${zmq_ports[1]}" >"$E2E_TMP/dp-run.log" 2>&1 &
DP_PID=$!
rc=0
fg_wait_line "$E2E_TMP/dp-run.log" 'ready:' "$DP_PID" 60 || rc=$?
tap_ok "$rc" "reserve: data plane is ready, replaying the stream over and over (infinite_rx)"
rc=0
t_wait_until 30 admitted "$N_RES" || rc=$?
tap_ok "$rc" "reserve: the peer received $N_RES reservations, each connection's at least \
once, within 30 s ($(e2e_peer_stat reserves 2>/dev/null || echo ?))"
# The stream goes round at least once more: replays of users whose result is here by now.
# shellcheck disable=SC2317 # called by t_wait_until
known() {
	local v
	v=$(fg_telemetry "$DP_PREFIX" /flashgate/stats 2>/dev/null | python3 -c 'import json, sys
print(json.load(sys.stdin)["/flashgate/stats"].get("admits_reserve_known", 0))' 2>/dev/null) || v=0
	[ "${v:-0}" -ge "$1" ]
}
rc=0
t_wait_until 30 known "$N_RES" || rc=$?
tap_ok "$rc" "reserve: the stream replayed again, its known buyers answered from the result table"
fg_stop_pid "$DP_PID" 20
DP_PID=
tap_is "$FG_STOP_RC" 0 "reserve: data plane exits with status 0 on SIGTERM"
awk '/final counters/ { f = 1 } f' "$E2E_TMP/dp-run.log" >"$E2E_TMP/reserve.counters"
cat "$E2E_TMP/dp-run.log" >>"$E2E_TMP/dataplane.log"
syn=$(counter reserve answers syn_ack) fin=$(counter reserve answers fin_ack)
resp=$(counter reserve answers http_response) h202=$(counter reserve http_responses 202)
h200=$(counter reserve http_responses 200) known=$(counter reserve admits reserve_known)
h503=$(counter reserve http_responses 503) notready=$(counter reserve rejects not_ready)
full=$(counter reserve rejects bridge_full) stopping=$(counter reserve rejects stopping)
tap_ok "$([ "$syn" -gt 0 ] && [ "$fin" -ge $((syn - 1)) ] && [ "$fin" -le "$syn" ] &&
	[ "$resp" -ge $((syn - 1)) ] && [ "$resp" -le "$syn" ]; echo $?)" \
	"reserve: one SYN-ACK, one answer and one ACK of the FIN per connection ($syn/$resp/$fin; the \
stop may cut the last one)"
tap_ok "$([ "$h202" -ge "$N_RES" ] && [ $((h202 + h200 + h503)) -eq "$resp" ] &&
	[ "$h200" -eq "$known" ] && [ "$known" -ge "$N_RES" ] &&
	[ "$h503" -eq $((notready + full + stopping)) ]; echo $?)" \
	"reserve: every answer 202 ($h202), 200 to a known buyer ($h200 = reserve_known $known), \
or 503 before the snapshot, with the ring full or while stopping ($notready + $full + $stopping)"
tap_is "$(counter reserve answers rst)/$(counter reserve answers rst_bad_cookie)" "0/0" \
	"reserve: no RST: every ACK carried the data plane's cookie"
tap_is "$(e2e_peer_stat dups 2>/dev/null || echo ?)" 0 "reserve: no reservation reached the peer twice"
e2e_peer_stop
tap_done
