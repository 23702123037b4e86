# SPDX-License-Identifier: BSD-3-Clause
# scripts/bench.d/dataplane.sh: the dataplane part of scripts/bench: testpmd's io forwarding over
# a memif pair (the I/O ceiling) against flashgate-dataplane with one worker core over the same
# kind of pair, driven by flashgate-loadgen, a reserve stream replayed from memory, and
# tests/bench_pipeline's per-path cycles; the kept and reserve loads again with the data plane
# memif's zero-copy client (lg_zc). Figures come from the loadgen's --report-json and the
# data plane's --counters-json (scripts/lib.sh's fg_json). Sourced by scripts/bench; it defines
# part_dataplane and the FG_* figures the nginx part compares with.
# shellcheck shell=bash
# shellcheck disable=SC2154 # quick, huge, the sizes and programs: set by scripts/bench
# shellcheck disable=SC2034 # SRV_PAGES and the FG_* figures: read by scripts/bench and nginx.sh

# huge_setup: reserves 2 MB hugepages for the servers (1 GiB for the data plane and a margin)
# on a hugetlbfs of this run; on any failure gives back what it took and leaves --no-huge.
HUGE_PAGES=640
huge_setup() {
	[ "$huge" -eq 1 ] || return 0
	local free
	HUGE_PREV=$(cat /proc/sys/vm/nr_hugepages 2>/dev/null) || return 0
	mkdir -p "$TMP/huge" && mount -t hugetlbfs -o pagesize=2M nodev "$TMP/huge" 2>/dev/null ||
		{ log "no hugetlbfs here: the servers run on 4 KB pages"; HUGE_PREV=''; return 0; }
	HUGE_DIR=$TMP/huge
	echo $((HUGE_PREV + HUGE_PAGES)) >/proc/sys/vm/nr_hugepages 2>/dev/null || true
	free=$(awk '$1 == "HugePages_Free:" { print $2 }' /proc/meminfo)
	if [ "${free:-0}" -lt "$HUGE_PAGES" ]; then
		log "only ${free:-0} hugepages free: the servers run on 4 KB pages"
		huge_release
		return 0
	fi
	SRV_MEM=(--huge-dir "$HUGE_DIR" --huge-unlink)
	log "servers on 2 MB hugepages ($HUGE_PAGES reserved in $HUGE_DIR)"
}
# huge_release: unmounts what huge_setup() mounted and sets nr_hugepages back.
huge_release() {
	if [ -n "$HUGE_DIR" ]; then
		umount "$HUGE_DIR" 2>/dev/null || true
		HUGE_DIR=''
	fi
	if [ -n "$HUGE_PREV" ]; then
		echo "$HUGE_PREV" >/proc/sys/vm/nr_hugepages 2>/dev/null || true
		HUGE_PREV=''
	fi
	SRV_MEM=(--no-huge)
}

# Figures the nginx part compares with; empty when the dataplane part did not run.
FG_HEALTHZ_RPS='' FG_SALE_RPS='' FG_RESV_RPS='' FG_RESERVE_PIPE='' FG_IP429_PIPE=''

# pps_median FILE: the median of testpmd's per-second Tx-pps samples once traffic flows (the
# first and last non-zero samples are partial seconds and are left out).
pps_median() {
	awk '/Tx-pps:/ && $2 > 0 { v[n++] = $2 } END {
		if (n < 3) { if (n) print v[n - 1]; exit }
		m = 0; for (i = 1; i < n - 1; i++) w[m++] = v[i]
		for (i = 0; i < m; i++) for (j = i + 1; j < m; j++) if (w[j] < w[i]) { t = w[i]; w[i] = w[j]; w[j] = t }
		print w[int(m / 2)] }' "$1"
}

# testpmd_ceiling: testpmd io forwarding as the memif server (one forwarding core), a second
# testpmd in flowgen mode as the client. flowgen sends 64-byte frames as fast as the ring takes
# them and also reads and frees every frame that comes back, as flashgate-loadgen does; txonly
# would never read, the return ring would fill and the server could forward nothing back.
testpmd_ceiling() {
	local sock=$TMP/tp.sock srv_pid cl_pid rc=0
	local sp=fg-bench-tps-$$ cp=fg-bench-tpc-$$
	PREFIXES+=("$sp" "$cp")
	local common=(--no-huge -m 512 --no-pci --log-level=error)
	local tp_opts=(--stats-period 1 --auto-start --nb-cores=1 --total-num-mbufs=32768 --no-numa)
	# --record-core-cycles: at exit the server prints its forwarding core's cycles per frame,
	# counted as the data plane counts its own (bursts that received something, receive to
	# send), so the two cores compare at full load whichever generator is the slower;
	# --record-burst-stats: how many of its polls found nothing.
	local srv=(dpdk-testpmd "$SRV_LOPT" "$SRV_LCORES" "${SRV_MEM[@]}" -m 512 --no-pci
		--log-level=error --file-prefix "$sp"
		--vdev "net_memif0,role=server,socket=$sock" -- --forward-mode=io "${tp_opts[@]}"
		--record-core-cycles --record-burst-stats)
	local cl=(dpdk-testpmd --lcores "$CL_LCORES" "${common[@]}" --file-prefix "$cp"
		--vdev "net_memif0,role=client,socket=$sock" -- --forward-mode=flowgen "${tp_opts[@]}")
	if [ ${#TP_RUNS[@]} -eq 0 ]; then
		cmd "${srv[*]}"
		cmd "${cl[*]}   # for ${TP_SECONDS}s, before and after the data plane's runs"
	fi
	rm -f "$sock"
	"${srv[@]}" </dev/null >"$TMP/testpmd-server.out" 2>&1 &
	srv_pid=$!
	PIDS+=("$srv_pid")
	fg_wait_line "$TMP/testpmd-server.out" 'Checking link statuses' "$srv_pid" 30 || rc=$?
	if [ "$rc" -ne 0 ]; then
		row dataplane "I/O ceiling: testpmd io" "" "" "" "" "testpmd server did not start"
		stop "$srv_pid"
		return 0
	fi
	"${cl[@]}" </dev/null >"$TMP/testpmd-client.out" 2>&1 &
	cl_pid=$!
	PIDS+=("$cl_pid")
	sleep $((TP_SECONDS + 2))
	# The server first: it prints its forwarding statistics when it stops, and they are gone
	# once the client's disconnect has taken the link down under it.
	stop "$srv_pid"
	stop "$cl_pid"
	local pps cyc
	pps=$(pps_median "$TMP/testpmd-server.out")
	cyc=$(sed -n 's/.*CPU cycles\/packet=\([0-9.]*\).*/\1/p' "$TMP/testpmd-server.out" | tail -n 1)
	cat "$TMP/testpmd-server.out" >>"$TMP/testpmd-server.all"
	log "testpmd io ceiling: ${pps:-none} packets/s each way, ${cyc:-?} busy cycles per frame"
	TP_RUNS+=("${pps:-0}")
	TP_CYC_RUNS+=("${cyc:-}")
	TP_IDLE=$(sed -n 's/.*RX-bursts : [0-9]* \[\([0-9]*\)% of 0 pkts.*/\1/p' \
		"$TMP/testpmd-server.out" | tail -n 1)
	# The machine is shared: the better of the runs is the ceiling (the ratio errs low).
	[ -z "$pps" ] || [ "$pps" -le "${TP_PPS:-0}" ] || TP_PPS=$pps
	[ -z "$cyc" ] || awk -v a="$cyc" -v b="${TP_CYC:-0}" 'BEGIN { exit !(b == 0 || a < b) }' ||
		return 0
	[ -z "$cyc" ] || TP_CYC=$cyc
}

# Data plane, test peer and loadgen over one memif pair.
DP_PID='' PEER_PID='' DP_PREFIX=fg-bench-dp-$$ LG_PREFIX=fg-bench-lg-$$ DP_SOCK=$TMP/dp.sock
AUTH_KID=1 AUTH_KEY=authkey-bench-0123456789abcdef SALE_KID=7 SALE_KEY=salekey-bench-0123456789abcd
COOKIE_SECRET=62656e63682d636f6f6b69652d6b6579 # the data plane's syncookie_secret, for the blast

hex() { printf '%s' "$1" | od -An -v -tx1 | tr -d ' \n'; }
# field RUN KEY WORD: the figure WORD of KEY in the loadgen's JSON report of RUN ("blast sent").
field() { fg_lg_field "$TMP/lg-$1.json" "$2" "$3"; }
# value RUN KEY: the figure KEY of that report ("requests_per_s").
value() { fg_lg_value "$TMP/lg-$1.json" "$2"; }
# answer RUN STATUS: how many answers had that status.
answer() { fg_lg_field "$TMP/lg-$1.json" answers "$2"; }

dp_start() {
	local ports now rc=0
	mapfile -t ports < <(fg_free_ports 2)
	now=$(date +%s)
	# Event 1: plenty of stock (reserves admitted); event 2: none (sold out).
	cat >"$TMP/flashgate.conf" <<EOF
# written by scripts/bench
[dataplane]
address = 198.18.0.2
listen_ports = 80
syncookie_secret = $COOKIE_SECRET

[event.1]
name = bench sale
starts_at = $((now - 3600))
ends_at = $((now + 3600))
stock = 100000000

[event.2]
name = bench sold out
starts_at = $((now - 3600))
ends_at = $((now + 3600))
stock = 1
EOF
	PREFIXES+=("$DP_PREFIX" "$LG_PREFIX")
	local peer=("$PEER_EXE" --pull "tcp://127.0.0.1:${ports[0]}" --pub "tcp://127.0.0.1:${ports[1]}"
		--event "1:100000000:bench sale" --event "2:0:bench sold out"
		--key "auth:$AUTH_KID:$AUTH_KEY:current" --key "sale:$SALE_KID:$SALE_KEY:current"
		--limits '1000000,1000000,1000000,1000000,1000000,1000000,10000000')
	local dp=("$DP_EXE" "$SRV_LOPT" "$SRV_LCORES" "${SRV_MEM[@]}" -m 1024 --no-pci
		--file-prefix "$DP_PREFIX" --vdev "net_memif0,role=server,socket=$DP_SOCK" --
		-c "$TMP/flashgate.conf" -s "bridge.push_endpoint=tcp://127.0.0.1:${ports[0]}"
		-s "bridge.sub_endpoint=tcp://127.0.0.1:${ports[1]}")
	cmd "taskset -c $CL_CPU ${peer[*]}   # the test peer plays the control plane"
	cmd "${dp[*]} --counters-json \$TMP/dataplane-RUN.json"
	mkfifo -m 600 "$TMP/peer.in"
	taskset -c "$CL_CPU" "${peer[@]}" <"$TMP/peer.in" >"$TMP/peer.out" 2>"$TMP/peer.err" &
	PIDS+=($!)
	PEER_PID=$!
	exec {PEER_FD}<>"$TMP/peer.in"
	fg_wait_line "$TMP/peer.out" '^ready$' "$PEER_PID" 10 || return 1
	DP_CMD=("${dp[@]}")
	dp_up
}

# dp_up: starts the data plane (DP_CMD) and waits until it has the control plane's state.
dp_up() {
	local rc=0
	# Each start logs to a file of its own, and writes its final counters to one of its own
	# (dataplane-N.json); dataplane.log points at the newest log.
	DP_RUN=$((${DP_RUN:-0} + 1))
	"${DP_CMD[@]}" --counters-json "$TMP/dataplane-$DP_RUN.json" \
		>"$TMP/dataplane-$DP_RUN.log" 2>&1 &
	DP_PID=$!
	PIDS+=("$DP_PID")
	ln -sf "dataplane-$DP_RUN.log" "$TMP/dataplane.log"
	fg_wait_line "$TMP/dataplane-$DP_RUN.log" 'ready:' "$DP_PID" 60 || rc=$?
	[ "$rc" -eq 0 ] || return 1
	# Tokens and reserves are answered 503 until the control plane's first snapshot is in.
	local deadline=$((SECONDS + 20))
	while ((SECONDS < deadline)); do
		fg_telemetry "$DP_PREFIX" /flashgate/bridge 2>/dev/null | grep -q '"ready": *1' && return 0
		sleep 0.2
	done
	return 1
}

# peer_cmd LINE: one command to the test peer; true when it answered "ok" within 5 s.
peer_cmd() {
	local before deadline=$((SECONDS + 5))
	before=$(wc -l <"$TMP/peer.out")
	cmd "echo '$1' > the test peer's standard input"
	printf '%s\n' "$1" >&"$PEER_FD"
	while (($(wc -l <"$TMP/peer.out") <= before)); do
		((SECONDS < deadline)) || return 1
		sleep 0.05
	done
	sed -n "$((before + 1))p" "$TMP/peer.out" | grep -q '^ok'
}

# The data plane's final counters of each loadgen run (--counters-json: busy cycles, requests).
declare -A LG_DPJSON=()
# dp_figure RUN PATH...: figures of the data plane's final counters in RUN ("total.busy_cycles"),
# one line each; empty lines when there are none.
dp_figure() { fg_json "${LG_DPJSON[$1]:-/dev/null}" "${@:2}"; }

# per_busy_cycle RUN PATH: "cycles-per-unit units-per-second" of the data plane's worker in RUN:
# its busy cycles (on bursts with packets: receive, pipeline, send) per unit of the counter
# PATH, and the units a fully busy core would take at that cost. Empty when unknown.
per_busy_cycle() {
	local f
	mapfile -t f < <(dp_figure "$1" total.busy_cycles tsc_hz "$2")
	awk -v b="${f[0]:-}" -v hz="${f[1]:-}" -v r="${f[2]:-}" 'BEGIN {
		if (b > 0 && r > 0 && hz > 0) printf "%.0f %.0f\n", b / r, hz / (b / r) }'
}

# busy RUN: "cycles-per-request capacity-per-second" of the data plane's worker in RUN: the
# TSC cycles it spent on bursts with packets per HTTP request, and the requests a fully busy
# core would answer at that cost. Empty when unknown.
busy() { per_busy_cycle "$1" total.http_requests; }

# busy_frames RUN: "cycles-per-frame frames-per-second" of the data plane's worker in RUN: its
# busy cycles per frame received, and the frames a fully busy core would take at that cost.
busy_frames() { per_busy_cycle "$1" total.rx_packets; }

# tsc_hz RUN: the TSC frequency the data plane reported in RUN.
tsc_hz() { dp_figure "$1" tsc_hz; }

# ran RUN: the share of wall time the data plane's workers ran on a CPU in RUN, percent: their
# threads' CPU clock against the time since their loops started (cpu_ns / wall_ns; they poll
# without sleeping, so under 100 only when others had their CPU, whose time slices the busy
# cycles, TSC, then count too). Empty when unknown.
ran() {
	local f
	mapfile -t f < <(dp_figure "$1" total.cpu_ns total.wall_ns)
	awk -v c="${f[0]:-}" -v w="${f[1]:-}" 'BEGIN { if (c != "" && w > 0) printf "%.0f\n", 100 * c / w }'
}

# ran_note RUN: ", the worker on its CPU P % of wall time" for a row's note, or nothing.
ran_note() {
	local p
	p=$(ran "$1")
	[ -z "$p" ] || printf ', the worker on its CPU %s %% of wall time' "$p"
}

# busy_note "CYCLES CAPACITY" RUN: "; worker busy N cycles per request, the worker on its CPU P %
# of wall time" for a row's note.
busy_note() { [ -z "$1" ] || printf '; worker busy %s cycles per request%s' "${1%% *}" "$(ran_note "$2")"; }

# lg_launch RUN ROLE ARGS...: starts one loadgen run in the background (LG_PID) as memif's ROLE
# (client or server) on DP_SOCK, report in $TMP/lg-RUN.out and as JSON in lg-RUN.json, lingering
# at its end until the data plane is stopped (lg_finish).
lg_launch() {
	local name=$1 role=$2
	shift 2
	local pre=()
	# LG_NICE: the loadgen niced that much, so that on CPU 0 it yields to the test peer and
	# the data plane's bridge thread (the reserve runs: else the bridge's ring fills and a
	# quarter to three quarters of the reserves are answered 503, a mix the figures then
	# measure instead of admitted reserves).
	[ -z "${LG_NICE:-}" ] || pre=(nice -n "$LG_NICE")
	local c=(${pre[@]+"${pre[@]}"} "$LG_EXE" --lcores "$LG_LCORES" --no-huge -m 512 --no-pci
		--file-prefix "$LG_PREFIX" --vdev "net_memif0,role=$role,socket=$DP_SOCK"
		--log-level=error -- --dst 198.18.0.2 --duration-s "$LG_DURATION" --report-json "$TMP/lg-$name.json" "$@")
	cmd "${c[*]} --linger-s 60"
	timeout $((LG_DURATION + 90)) "${c[@]}" --linger-s 60 >"$TMP/lg-$name.out" 2>&1 &
	LG_PID=$!
}

# lg_finish RUN: waits until the loadgen of RUN lingers, then stops the data plane (its final
# counters are RUN's) and waits for the loadgen's exit status (LG_EXIT). DPDK 22.11's memif may
# crash the side still polling when the other one disconnects (docs/loadgen.md): the data plane
# stops while the loadgen lingers, polling nothing.
lg_finish() {
	local name=$1 rc=0
	fg_wait_line "$TMP/lg-$name.out" '^lingering:' "$LG_PID" $((LG_DURATION + 60)) || true
	LG_DPJSON[$name]=$TMP/dataplane-$DP_RUN.json
	stop "$DP_PID"
	wait "$LG_PID" || rc=$?
	LG_EXIT[$name]=$rc
}

# lg_log RUN: the progress line of a finished run.
lg_log() {
	log "loadgen $1: exit ${LG_EXIT[$1]:-?}, $(value "$1" requests_per_s || true) requests/s," \
		"$(field "$1" packets_per_s rx || true) frames/s received"
}

# lg RUN ARGS...: one loadgen run against the data plane up now (a memif server, the loadgen its
# client, each copying every frame); the data plane is started again for the next run.
lg() {
	local name=$1
	shift
	lg_launch "$name" client "$@"
	lg_finish "$name"
	dp_up || log "the data plane did not start again: $(tail -n 3 "$TMP/dataplane.log")"
	lg_log "$name"
}

# The zero-copy rows: the data plane as memif's client with zero-copy=yes, the loadgen the server.
# A zero-copy client receives into and sends from its own pool's mbufs, which the server maps
# (the rings alone are in memif's shared region), as a NIC DMAs into and out of them; the
# server copies both ways, on the loadgen's core. Copying, both PMDs copy every frame, and the
# data plane's share (a copy on receive and one on send) is in its busy cycles.
# How long after the loadgen's start it begins sending (--start-at): on a loaded host its EAL
# (niced) and the data plane's start took 10 s.
ZC_LEAD_S=20

# dp_zc_cmd: DP_CMD with the data plane as memif's zero-copy client of DP_SOCK, and the EAL option
# that needs (--single-file-segments: the PMD hands the server each memseg list as one file),
# which EAL refuses with --huge-unlink: its hugepage files stay until zc_huge_release.
dp_zc_cmd() {
	local a out=() eal=1
	for a in "${DP_CMD[@]}"; do
		if [ "$eal" -eq 1 ] && [ "$a" = -- ]; then
			out+=(--single-file-segments --)
			eal=0
		elif [ "$eal" -eq 1 ] && [ "$a" = --huge-unlink ]; then
			continue
		elif [ "$eal" -eq 1 ] && [[ $a == net_memif0,* ]]; then
			out+=("net_memif0,role=client,socket=$DP_SOCK,zero-copy=yes")
		else
			out+=("$a")
		fi
	done
	DP_CMD=("${out[@]}")
}

# zc_huge_release: gives back the hugepages of a stopped zero-copy data plane (its files).
zc_huge_release() { [ -z "${HUGE_DIR:-}" ] || rm -f "$HUGE_DIR/${DP_PREFIX}map_"*; }

# lg_zc RUN ARGS...: one loadgen run as lg()'s, with the roles of the memif pair swapped: the
# loadgen the server, the data plane (DP_CMD made a zero-copy client) started after it, since a
# client connects at its start. The loadgen begins ZC_LEAD_S seconds after its own start, by then
# the data plane has its control plane's state (said when not). Leaves no data plane running.
lg_zc() {
	local name=$1 saved=("${DP_CMD[@]}") start_at rc=0
	shift
	! kill -0 "${DP_PID:-0}" 2>/dev/null || stop "$DP_PID"
	start_at=$(date +%s.%N | awk -v l="$ZC_LEAD_S" '{ printf "%.3f", $1 + l }')
	LG_DURATION=$((LG_DURATION + ZC_LEAD_S)) lg_launch "$name" server --start-at "$start_at" "$@"
	# A memif server refuses a client until its port has started.
	fg_wait_line "$TMP/lg-$name.out" '^waiting:' "$LG_PID" 30 ||
		log "loadgen $name did not start its port: $(tail -n 2 "$TMP/lg-$name.out")"
	dp_zc_cmd
	[ -n "${ZC_CMD_SHOWN:-}" ] ||
		cmd "${DP_CMD[*]} --counters-json \$TMP/dataplane-RUN.json   # the zero-copy rows' data plane"
	ZC_CMD_SHOWN=1
	dp_up || rc=$?
	DP_CMD=("${saved[@]}")
	[ "$rc" -eq 0 ] || log "the zero-copy data plane did not start: $(tail -n 3 "$TMP/dataplane.log")"
	awk -v t="$start_at" -v n="$(date +%s.%N)" 'BEGIN { exit !(n > t) }' &&
		log "loadgen $name began before the data plane had its control plane's state"
	lg_finish "$name"
	zc_huge_release
	lg_log "$name"
}

# zc_row RUN COPY-RUN WHAT ANSWERS MORE: the row of RUN, a load of lg_zc, against COPY-RUN, the
# same load copying: WHAT the load, ANSWERS what it was answered, MORE the note's end.
zc_row() {
	local cap copy
	cap=$(busy "$1")
	copy=$(busy "$2")
	row dataplane "$3, memif zero-copy (the data plane copies no frame): a fully busy worker core at the \
cycles measured in that run, requests/s" "${cap#* }" "the same copying, fully busy" "${copy#* }" \
		"$(ratio "${cap#* }" "${copy#* }")" "${cap%% *} busy cycles per request against \
${copy%% *} copying; $(human "$(value "$1" requests_per_s 2>/dev/null || true)") requests/s, $4; \
loadgen exit ${LG_EXIT[$1]:-?}$(ran_note "$1"); $5"
}

# pipeline_case NAME-PREFIX: "cycles packets/s share" of one case of bench_pipeline's output,
# share the percent of the case's timed wall time it ran on its CPU ("?" when not printed).
pipeline_case() {
	awk -v n="$1" 'index($0, n) && /cycles\/packet/ {
		r = "?"
		for (i = 1; i < NF; i++) {
			if ($(i + 1) == "cycles/packet") c = $i
			if ($(i + 1) == "Mpps/core") m = $i
			if ($i == "CPU" && $(i + 2) ~ /^%/) r = $(i + 1)
		}
		printf "%s %.0f %s\n", c, m * 1e6, r; exit }' "$TMP/bench_pipeline.out"
}

# stats_pair: "http_requests busy_cycles http_responses_202 http_responses_200" of
# /flashgate/stats, now.
stats_pair() {
	fg_telemetry "$DP_PREFIX" /flashgate/stats 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)["/flashgate/stats"]
print(d["http_requests"], d["busy_cycles"], d["http_responses_202"], d["http_responses_200"])'
}

# replay_run: the data plane on a net_pcap port that replays a flashgate-pcapgen reserve stream
# from memory, over and over (infinite_rx; what it sends is dropped), with the test peer still
# its control plane: one worker core saturated with no generator in the way. Measured over
# REPLAY_SECONDS of wall time by the data plane's own counters. Sets REPLAY to "requests/s
# busy-percent cycles-per-request 202s/s 200s/s", REPLAY_NOTE to what went wrong, if anything.
# The stream's users come round again every N_REPLAY connections: once each holds a reservation,
# its reserve is a known buyer's, answered 200 with its result by the data plane itself (no
# control plane), so past the first round the replay measures that path, not admissions.
REPLAY='' REPLAY_NOTE=''
replay_run() {
	# net_pcap's port MAC (it logs it; checked below): the stream is addressed to it.
	local mac=02:70:63:61:70:00 pcap=$TMP/reserve-stream.pcap a b t0 t1 rc=0 cmd_saved
	cmd "$PG_EXE --stream reserve --count $N_REPLAY --dst-mac $mac --cookie-secret-hex \
$COOKIE_SECRET --sale-key-hex $(hex "$SALE_KEY") --sale-kid $SALE_KID --event 1 --user-base 300000000 \
--src-net 198.18.64.0/18 --out reserve-stream.pcap"
	"$PG_EXE" --stream reserve --count "$N_REPLAY" --dst-mac "$mac" \
		--cookie-secret-hex "$COOKIE_SECRET" --sale-key-hex "$(hex "$SALE_KEY")" \
		--sale-kid "$SALE_KID" --event 1 --user-base 300000000 --src-net 198.18.64.0/18 \
		--out "$pcap" >"$TMP/pcapgen.out" 2>&1 || {
		REPLAY_NOTE="pcapgen failed: $(tail -n 1 "$TMP/pcapgen.out")"
		return 0
	}
	# Every frame of the file sits in an mbuf of its own, plus the rings.
	cmd_saved=("${DP_CMD[@]}")
	local i
	for i in "${!DP_CMD[@]}"; do
		[[ ${DP_CMD[$i]} != net_memif0,* ]] ||
			DP_CMD[i]="net_pcap0,rx_pcap=$pcap,infinite_rx=1"
	done
	DP_CMD+=(-s "dataplane.mbufs=$((4 * N_REPLAY > 131071 ? 262143 : 131071))")
	cmd "${DP_CMD[*]}   # the same data plane on a net_pcap port"
	dp_up || rc=$?
	DP_CMD=("${cmd_saved[@]}")
	if [ "$rc" -ne 0 ]; then
		REPLAY_NOTE="the data plane did not start on net_pcap: $(tail -n 2 "$TMP/dataplane.log")"
		stop "$DP_PID"
		return 0
	fi
	grep -qi "net_pcap0): mac $mac" "$TMP/dataplane.log" ||
		REPLAY_NOTE="net_pcap0 has another MAC than $mac: the frames are dropped; "
	sleep 1
	a=$(stats_pair) t0=$(date +%s.%N)
	sleep "$REPLAY_SECONDS"
	b=$(stats_pair) t1=$(date +%s.%N)
	stop "$DP_PID"
	LG_DPJSON[replay]=$TMP/dataplane-$DP_RUN.json
	REPLAY=$(awk -v a="$a" -v b="$b" -v t0="$t0" -v t1="$t1" -v hz="$(tsc_hz replay)" 'BEGIN {
		split(a, x, " "); split(b, y, " "); r = y[1] - x[1]; c = y[2] - x[2]; t = t1 - t0
		if (r > 0 && t > 0 && hz > 0)
			printf "%.0f %.0f %.0f %.0f %.0f\n", r / t, 100 * c / (t * hz), c / r,
				(y[3] - x[3]) / t, (y[4] - x[4]) / t }')
}

part_dataplane() {
	huge_setup
	SRV_PAGES="servers on $([ -n "${HUGE_DIR:-}" ] && echo "2 MB hugepages" || echo "4 KB pages (--no-huge)")"
	log "dataplane: the I/O ceiling (testpmd)"
	TP_PPS='' TP_RUNS=() TP_CYC='' TP_CYC_RUNS=() TP_IDLE=''
	testpmd_ceiling

	log "dataplane: the per-burst pipeline alone (bench_pipeline)"
	local q=()
	[ "$quick" -eq 0 ] || q=(FG_BENCH_QUICK=1)
	cmd "${q[*]:+${q[*]} }taskset -c $SRV_CPU $PIPE_EXE"
	env "${q[@]}" timeout 600 taskset -c "$SRV_CPU" "$PIPE_EXE" >"$TMP/bench_pipeline.out" 2>&1 ||
		log "bench_pipeline failed: $(tail -n 3 "$TMP/bench_pipeline.out")"

	log "dataplane: flashgate-dataplane, one worker, driven by flashgate-loadgen"
	if ! dp_start; then
		log "data plane or test peer did not start: $(tail -n 5 "$TMP/dataplane.log" 2>/dev/null)"
		row dataplane "flashgate-dataplane over memif" "" "" "" "" "did not start"
	else
		lg syn --mode syn-flood --connections "$N_SYN"
		lg healthz --mode healthz --connections "$N_HEALTHZ" --concurrency 256
		# The same connections sent whole without waiting (the loadgen computes the cookies
		# with the data plane's secret): more load than one core of handshaking clients.
		lg blast --mode healthz-blast --connections "$N_BLAST" \
			--cookie-secret-hex "$COOKIE_SECRET"
		# Users one after another at 1,024 at once: each opens its next connection as soon as
		# an answer says (the reserve after the token, a poll 1 ms after the reserve). 2,048 at
		# once overflow memif's rings of 1,024 frames with their SYNs, and lose some.
		lg sale --mode sale --users "$N_USERS" --concurrency 1024 --poll-ms 1 \
			--max-polls 1000 --event 1 --user-base 1000000 \
			--auth-key-hex "$(hex "$AUTH_KEY")" --kid "$AUTH_KID"
		# Event 2 sold out: the data plane answers the token request 410 by itself.
		peer_cmd "sold_out 2" && sleep 1
		lg soldout --mode sale --users "$N_SOLD" --concurrency 256 --event 2 \
			--user-base 5000000 --auth-key-hex "$(hex "$AUTH_KEY")" --kid "$AUTH_KID"
		# One path at a time: a reserve with a valid purchase token per connection (202), a
		# result poll with a fresh receipt per connection (200), each user once.
		local one=(--connections "$N_HEALTHZ" --concurrency 256 --event 1
			--sale-key-hex "$(hex "$SALE_KEY")" --sale-kid "$SALE_KID")
		LG_NICE=10 lg reserve --mode reserve "${one[@]}" --user-base 20000000
		# The same reserves sent as whole connections (as the healthz blast): a worker's
		# capacity for admitted reserves. Users of nine digits each (the blast's rule).
		LG_NICE=10 lg rblast --mode reserve-blast --connections "$N_BLAST" --event 1 \
			--user-base 100000000 --sale-key-hex "$(hex "$SALE_KEY")" --sale-kid "$SALE_KID" \
			--cookie-secret-hex "$COOKIE_SECRET"
		lg result --mode result "${one[@]}" --user-base 20000000
		# Kept connections, as a TLS edge keeps them to its origin (issue 17): the loadgen's
		# addresses are trusted edges for these two runs only (a blast's connections must
		# stay stateless), 100 requests on each connection.
		local saved=("${DP_CMD[@]}")
		DP_CMD+=(-s "edge.trusted=198.18.2.0/24")
		stop "$DP_PID"
		dp_up || log "the data plane did not start with trusted edges"
		lg kept --mode kept-healthz --connections "$N_KEPT" --per-conn 100 --concurrency 256
		LG_NICE=10 lg kres --mode kept-reserve --connections "$N_KEPT" --per-conn 100 \
			--concurrency 256 --event 1 --user-base 400000000 --sale-key-hex "$(hex "$SALE_KEY")" \
			--sale-kid "$SALE_KID"
		# The kept runs and the reserve runs again with the data plane memif's zero-copy
		# client (lg_zc), each against a data plane of its own, and users of their own.
		lg_zc zkept --mode kept-healthz --connections "$N_KEPT" --per-conn 100 --concurrency 256
		LG_NICE=10 lg_zc zkres --mode kept-reserve --connections "$N_KEPT" --per-conn 100 \
			--concurrency 256 --event 1 --user-base 420000000 --sale-key-hex "$(hex "$SALE_KEY")" \
			--sale-kid "$SALE_KID"
		DP_CMD=("${saved[@]}")
		LG_NICE=10 lg_zc zreserve --mode reserve "${one[@]}" --user-base 24000000
		LG_NICE=10 lg_zc zrblast --mode reserve-blast --connections "$N_BLAST" --event 1 \
			--user-base 120000000 --sale-key-hex "$(hex "$SALE_KEY")" --sale-kid "$SALE_KID" \
			--cookie-secret-hex "$COOKIE_SECRET"
		dp_up || log "the data plane did not start again"
		# Paths the loadgen drives as floods: while a trickle of healthz connections (1,000 a
		# second, retried patiently since the flood crowds them) sets the length of the run, one flood
		# runs as fast as it can.
		local trickle=(--mode healthz --connections $((FLOOD_SECONDS * 1000)) --rate 1000 --retries 10
			--event 1 --auth-key-hex "$(hex "$AUTH_KEY")" --kid "$AUTH_KID"
			--flood-concurrency 1024)
		lg unsigned "${trickle[@]}" --flood unsigned:10000000
		lg token "${trickle[@]}" --flood one-ip:10000000
		stop "$DP_PID"
		log "dataplane: a reserve stream replayed from memory (net_pcap), no generator"
		replay_run
	fi
	[ -z "$PEER_PID" ] || stop "$PEER_PID"
	log "dataplane: the I/O ceiling again (testpmd)"
	testpmd_ceiling
	huge_release

	# Rows. SYN: packets/s each way against the ceiling (issue 6: >= 50 %).
	local syn_pps el syn_acks
	syn_acks=$(field syn syn syn_ack 2>/dev/null || true)
	el=$(value syn elapsed_s 2>/dev/null || true)
	syn_pps=$(field syn packets_per_s rx 2>/dev/null || true)
	row dataplane "I/O ceiling: testpmd io forwarding, 64-byte frames, packets/s each way" \
		"" "testpmd" "$TP_PPS" "" "flowgen client; best of $(human "${TP_RUNS[0]:-}") before and \
$(human "${TP_RUNS[1]:-}") after the data plane; its forwarding core busy ${TP_CYC:-?} cycles per \
frame, ${TP_IDLE:-?} % of its polls found no frame (the generator is the slower side)"
	row dataplane "SYN → SYN-ACK (loadgen syn-flood), SYN-ACKs/s" "$syn_pps" "testpmd io" \
		"$TP_PPS" "$(ratio "$syn_pps" "$TP_PPS")" \
		"${syn_acks:-?} SYN-ACKs in ${el:-?} s; target ≥ 0.50×"
	# Both figures above are the generators' (flowgen, loadgen on the other core) as much as
	# the forwarders': at full load the two cores compare by their busy cycles per frame.
	local syn_cyc tp_full hz
	syn_cyc=$(busy_frames syn)
	hz=$(tsc_hz syn)
	tp_full=$(awk -v c="${TP_CYC:-}" -v hz="${hz:-}" 'BEGIN { if (c > 0 && hz > 0) printf "%.0f", hz / c }')
	[ -z "$syn_cyc" ] || row dataplane "SYN → SYN-ACK: a fully busy worker core at the cycles \
measured in that run, SYN-ACKs/s" "${syn_cyc#* }" "testpmd io, fully busy" "$tp_full" \
		"$(ratio "${syn_cyc#* }" "$tp_full")" "${syn_cyc%% *} busy cycles per SYN against \
testpmd's ${TP_CYC:-?} per frame forwarded (best of ${TP_CYC_RUNS[*]:-?}; each counts its bursts \
that received frames, receive to send; TSC)$(ran_note syn); target ≥ 0.50×"
	local hz_rps hz_pps
	hz_rps=$(value healthz requests_per_s 2>/dev/null || true)
	hz_pps=$(field healthz packets_per_s rx 2>/dev/null || true)
	FG_HEALTHZ_RPS=$hz_rps
	local cap hz_cap
	cap=$(busy healthz)
	hz_cap=$cap
	row dataplane "GET /healthz, one connection each (loadgen healthz), connections/s" \
		"$hz_rps" "" "" "" "3 frames each way: $(human "$hz_pps") frames/s, \
$(ratio "$hz_pps" "$TP_PPS") of the ceiling$(busy_note "$cap" healthz)"
	[ -z "$cap" ] || row dataplane "GET /healthz: a fully busy worker core at the cycles measured \
in that run, connections/s" "${cap#* }" "" "" "" "${cap%% *} busy cycles per connection \
(receive, pipeline, send; TSC)$(ran_note healthz); target ≥ 2 M/s"
	local b_rps b_sent b_200 b_cap b_full
	b_rps=$(value blast requests_per_s 2>/dev/null || true)
	b_sent=$(field blast blast sent 2>/dev/null || true)
	b_200=$(field blast blast answered_200 2>/dev/null || true)
	b_cap=$(busy blast)
	b_full=$(dp_figure blast total.tx_held)
	row dataplane "GET /healthz, whole connections sent at once (loadgen healthz-blast), \
connections/s answered" "$b_rps" "" "" "" "${b_200:-?} of ${b_sent:-?} answered 200; the data plane \
held ${b_full:-?} answers on a full ring to the loadgen until it had room$(busy_note "$b_cap" blast)"
	[ -z "$b_cap" ] || row dataplane "GET /healthz: a fully busy worker core at the cycles of the \
blast, connections/s" "${b_cap#* }" "" "" "" "${b_cap%% *} busy cycles per request it answered \
(a burst whose answers a full ring held is not received until they went out)$(ran_note blast); \
target ≥ 2 M/s"
	local s_rps s_pps s200 s202 tok res
	s_rps=$(value sale requests_per_s 2>/dev/null || true)
	s_pps=$(field sale packets_per_s rx 2>/dev/null || true)
	s200=$(answer sale 200 2>/dev/null || true)
	s202=$(answer sale 202 2>/dev/null || true)
	FG_SALE_RPS=$s_rps
	tok=$(field sale users "done" 2>/dev/null || true)
	res=$((${s200:-0} - ${tok:-0}))
	row dataplane "sale: token → reserve admitted → result polls (loadgen sale), requests/s" \
		"$s_rps" "" "" "" "mix: ${tok:-?} tokens, ${s202:-?} reserves 202, ${res} result polls; \
$(human "$s_pps") frames/s, $(ratio "$s_pps" "$TP_PPS") of the ceiling; \
$(value sale retransmits 2>/dev/null || echo ?) retransmissions, loadgen exit ${LG_EXIT[sale]:-?}\
$(busy_note "$(busy sale)" sale)"
	local r_rps
	for r_rps in reserve:202:"reserve admitted → 202 + receipt" \
		result:200:"result poll with the receipt → 200"; do
		local run=${r_rps%%:*} st=${r_rps#*:}
		local what=${st#*:} rate
		st=${st%%:*}
		rate=$(value "$run" requests_per_s 2>/dev/null || true)
		[ "$run" != reserve ] || FG_RESV_RPS=$rate
		cap=$(busy "$run")
		[ -z "$cap" ] || row dataplane "$what: a fully busy worker core at the cycles \
measured in that run, requests/s" "${cap#* }" "" "" "" "${cap%% *} busy cycles per request \
(receive, pipeline, send, bridge; TSC)$(ran_note "$run")$([ "$run" != reserve ] ||
		echo "; target ≥ 1.5 M/s")"
		row dataplane "$what, one per connection (loadgen $run), requests/s" "$rate" "" "" "" \
			"$(answer "$run" "$st" 2>/dev/null || echo ?) answers $st\
$([ "$run" != reserve ] || echo ", $(answer "$run" 503 2>/dev/null | grep . || echo 0) answers 503 \
(control plane link busy)"); 3 frames each way: \
$(human "$(field "$run" packets_per_s rx 2>/dev/null || true)") frames/s; loadgen exit \
${LG_EXIT[$run]:-?}"
	done
	local rb_rps rb_sent rb202 rb503 rb_cap rb_full
	rb_rps=$(value rblast requests_per_s 2>/dev/null || true)
	rb_sent=$(field rblast blast sent 2>/dev/null || true)
	rb202=$(field rblast blast answered_202 2>/dev/null || true)
	rb503=$(field rblast blast answered_503 2>/dev/null || true)
	rb_cap=$(busy rblast)
	rb_full=$(dp_figure rblast total.tx_held)
	row dataplane "reserve admitted, whole connections sent at once (loadgen reserve-blast), \
requests/s answered" "$rb_rps" "" "" "" "${rb202:-?} of ${rb_sent:-?} answered 202, ${rb503:-?} \
503 (control plane link busy); the data plane held ${rb_full:-?} answers on a full ring to the \
loadgen until it had room$(busy_note "$rb_cap" rblast)"
	[ -z "$rb_cap" ] || row dataplane "reserve admitted: a fully busy worker core at the cycles \
of the blast, requests/s" "${rb_cap#* }" "" "" "" "${rb_cap%% *} busy cycles per request it \
answered (receive, pipeline, send, bridge; TSC)$(ran_note rblast)$(awk -v c="${TP_CYC:-}" 'BEGIN { if (c > 0)
		printf "; its 3 frames each way would cost %.0f of them at testpmd'"'"'s cycles per frame", 3 * c }'); \
target ≥ 1.5 M/s"
	row dataplane "reserves: one worker core saturated by a replayed reserve stream \
(flashgate-pcapgen --stream reserve, net_pcap from memory, no generator), requests/s answered" \
		"$(printf '%s' "$REPLAY" | awk '{ print $1 }')" "" "" "" "${REPLAY_NOTE}$([ -z "$REPLAY" ] ||
		printf '%s' "$REPLAY" | awk '{ printf "%s/s 202 (admitted), %s/s 200 (a known buyer'"'"'s \
reserve, answered by the data plane with its result: the stream'"'"'s users come round again), %.0f/s \
else (503: the test peer on the other core took no more); busy %s %% of the %s s measured, %s busy \
cycles per request; ", $4, $5, $1 - $4 - $5, $2, s, $3 }' s="$REPLAY_SECONDS")${N_REPLAY} \
connections replayed over \
and over; its I/O is net_pcap's (a copy from memory per frame received, what is sent dropped), \
not memif's"
	# Kept connections against the stateless figures of the same run (issue 17's targets).
	local k_cap kr_cap
	k_cap=$(busy kept)
	kr_cap=$(busy kres)
	row dataplane "GET /healthz on kept connections from a trusted edge (loadgen kept-healthz, \
100 requests each), requests/s" "$(value kept requests_per_s 2>/dev/null || true)" "" "" "" \
		"$(field kept requests kept 2>/dev/null || echo ?) answers on kept connections, \
$(field kept requests kept_closed 2>/dev/null || echo ?) with Connection: close; loadgen exit \
${LG_EXIT[kept]:-?}$(busy_note "$k_cap" kept)"
	row dataplane "kept GET /healthz: a fully busy worker core at the cycles measured in that \
run, requests/s" "${k_cap#* }" "stateless healthz-blast, fully busy" "${b_cap#* }" \
		"$(ratio "${k_cap#* }" "${b_cap#* }")" "${k_cap%% *} busy cycles per request against \
${b_cap%% *} per stateless connection (handshaking clients: ${hz_cap%% *}, \
$(ratio "${k_cap#* }" "${hz_cap#* }"))$(ran_note kept); targets ≥ 1.5× and ≥ 4 M/s"
	row dataplane "reserve admitted on kept connections (loadgen kept-reserve, 100 users \
each), requests/s" "$(value kres requests_per_s 2>/dev/null || true)" "" "" "" \
		"$(answer kres 202 2>/dev/null || echo ?) answers 202, $(answer kres 503 2>/dev/null |
		grep . || echo 0) 503 (control plane link busy); loadgen exit \
${LG_EXIT[kres]:-?}$(busy_note "$kr_cap" kres)"
	row dataplane "kept reserve admitted: a fully busy worker core at the cycles measured in \
that run, requests/s" "${kr_cap#* }" "stateless reserve-blast, fully busy" "${rb_cap#* }" \
		"$(ratio "${kr_cap#* }" "${rb_cap#* }")" "${kr_cap%% *} busy cycles per request \
against ${rb_cap%% *} per stateless connection$(ran_note kres); targets ≥ 1.3× and ≥ 2 M/s"
	# The same loads with the data plane memif's zero-copy client (lg_zc), against the rows above.
	local zb zkr
	zb=$(busy zrblast)
	zkr=$(busy zkres)
	zc_row zkept kept "kept GET /healthz" "$(field zkept requests kept 2>/dev/null || echo ?) \
answers 200 on kept connections" "the data plane is memif's zero-copy client, the loadgen the \
server: it receives into and sends from its own pool's mbufs, which the loadgen maps, as a NIC \
DMAs into and out of them, and memif's copies are the loadgen's, on its core; target ≥ 4 M/s"
	zc_row zkres kres "kept reserve admitted" "$(answer zkres 202 2>/dev/null || echo ?) answers \
202, $(answer zkres 503 2>/dev/null | grep . || echo 0) 503" "against the zero-copy \
reserve-blast ${zb%% *} per stateless connection, $(ratio "${zkr#* }" "${zb#* }"); targets ≥ 1.3× \
and ≥ 2 M/s"
	zc_row zreserve reserve "reserve admitted, one per connection" "$(answer zreserve 202 \
2>/dev/null || echo ?) answers 202, $(answer zreserve 503 2>/dev/null | grep . || echo 0) 503" \
		"target ≥ 1.5 M/s"
	zc_row zrblast rblast "reserve admitted, whole connections sent at once" "$(field zrblast \
blast answered_202 2>/dev/null || echo ?) of $(field zrblast blast sent 2>/dev/null || echo ?) \
answered 202, $(field zrblast blast answered_503 2>/dev/null || echo ?) 503" "target ≥ 1.5 M/s"
	local so_rps so410
	so_rps=$(value soldout requests_per_s 2>/dev/null || true)
	so410=$(answer soldout 410 2>/dev/null || true)
	row dataplane "sold out: token → 410 (loadgen sale, no stock), requests/s" "$so_rps" "" "" "" \
		"${so410:-?} answers 410"
	local kind run answered el rate
	for kind in unsigned:unsigned:"403/401: forged or missing tokens (loadgen --flood unsigned)" \
		token:one_ip:"POST .../token → 200 + purchase token (loadgen --flood one-ip, limits off)"; do
		run=${kind%%:*} kind=${kind#*:}
		answered=$(field "$run" "flood_${kind%%:*}" answered 2>/dev/null || true)
		el=$(value "$run" elapsed_s 2>/dev/null || true)
		rate=$(awk -v a="${answered:-0}" -v e="${el:-0}" 'BEGIN { if (e > 0) printf "%.0f", a / e }')
		row dataplane "${kind#*:}, requests/s" "$rate" "" "" "" \
			"${answered:-?} answered in ${el:-?} s: $(fg_json "$TMP/lg-$run.json" \
			"flood_${kind%%:*}.answers"); loadgen exit ${LG_EXIT[$run]:-?}"
	done
	# Paths the loadgen cannot drive yet: the pipeline's cycles, no I/O.
	local name p p_cyc p_pps p_ran
	for name in "SYN -> SYN-ACK" "GET /healthz -> 200" "reserve admitted -> 202" \
		"result poll (receipt) -> 200" "reserve with a forged token -> 403" \
		"reserve after sell-out -> 410" "reserve over the IP limit -> 429" \
		"reserve over the user limit -> 429" \
		"reserve admitted, users' buckets cold, limits on -> 202" \
		"reserve admitted, users' and devices' buckets cold, limits on -> 202" \
		"kept connection: GET /healthz -> 200, kept" \
		"kept connection: reserve admitted -> 202, kept"; do
		p=$(pipeline_case "$name" 2>/dev/null || true)
		read -r p_cyc p_pps p_ran <<<"${p:-}"
		row dataplane "pipeline alone (bench_pipeline), $name, requests/s" "${p_pps:-}" "" "" "" \
			"${p_cyc:-?} cycles/packet; no I/O; on its CPU ${p_ran:-?} % of wall time"
		case $name in
		"reserve admitted -> 202") FG_RESERVE_PIPE=${p_pps:-} ;;
		"reserve over the IP"*) FG_IP429_PIPE=${p_pps:-} ;;
		esac
	done
}
