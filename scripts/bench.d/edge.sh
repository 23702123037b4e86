# SPDX-License-Identifier: BSD-3-Clause
# scripts/bench.d/edge.sh: the edge part of scripts/bench (issue 17): wrk through HAProxy
# (mode http, keep-alive on both sides, http-reuse always, option forwardfor) to the data plane,
# against wrk through the same HAProxy to nginx with limit_req (the same per-client limit, keyed
# by X-Forwarded-For as the data plane keys it). The data plane runs on a veth of a test network
# of its own (net_af_packet, scripts/testnet) with HAProxy's address as its trusted edge, so its
# connections from HAProxy are kept; HAProxy, nginx and wrk run in the test network's namespace.
# Then what one edge core feeds: HAProxy again with two threads (nbthread 2), and h2load over
# HTTP/2 with TLS (a self-signed certificate made here) against HAProxy with one and two
# threads, as a shopper's browser arrives; for each run the requests per second of HAProxy's own
# CPU time (/proc) and the data plane's busy cycles per request (its /flashgate/stats before and
# after), so the table says how many edge cores one worker core serves.
# Sourced by scripts/bench; it defines part_edge.
# shellcheck shell=bash
# shellcheck disable=SC2154 # the sizes and programs: set by scripts/bench

# edge_haproxy_conf THREADS DP_PORT NGINX_PORT NGINX_SERVER_PORT TLS_PORT: HAProxy's config, its
# threads on CL_CPU (and SRV_CPU for the second), the TLS frontend (HTTP/2 and HTTP/1.1 by ALPN)
# to the data plane on TLS_PORT.
edge_haproxy_conf() {
	local map="cpu-map 1/1 $CL_CPU"
	[ "$1" -lt 2 ] || map+=$'\n\t'"cpu-map 1/2 $SRV_CPU"
	cat <<EOF
# written by scripts/bench: $1 thread(s)
global
	nbthread $1
	$map
	pidfile $TMP/edge/haproxy.pid
	maxconn 4000
defaults
	mode http
	timeout connect 2s
	timeout client 30s
	timeout server 30s
	timeout http-keep-alive 30s
	option forwardfor
	http-reuse always
frontend to_dataplane
	bind 127.0.0.1:$2
	default_backend dataplane
frontend to_nginx
	bind 127.0.0.1:$3
	default_backend nginx
frontend tls_to_dataplane
	bind 127.0.0.1:$5 ssl crt $TMP/edge/edge.pem alpn h2,http/1.1
	default_backend dataplane
backend dataplane
	server dp $FG_DP_ADDR:80 maxconn 256
backend nginx
	server ng 127.0.0.1:$4 maxconn 256
EOF
}

edge_nginx_conf() {
	cat <<EOF
# written by scripts/bench: one worker on CPU $SRV_CPU, in the test network's namespace
worker_processes 1;
worker_cpu_affinity $(printf '%s' "$((1 << SRV_CPU))" | awk '{ s = ""; n = $1; while (n) { s = (n % 2) s; n = int(n / 2) } print s }');
pid $TMP/edge/nginx.pid;
error_log $TMP/edge/nginx-error.log crit;
events { worker_connections 8192; }
http {
	access_log off;
	client_body_temp_path $TMP/edge/tmp;
	keepalive_requests 100000000;
	keepalive_timeout 60s;
	# The data plane's per-client bucket behind an edge: keyed by the client HAProxy names.
	limit_req_zone \$http_x_forwarded_for zone=client:16m rate=10000000r/s;
	limit_req_status 429;
	default_type application/json;
	server {
		listen 127.0.0.1:$1 backlog=4096;
		root $TMP/edge/html;
		location = /healthz {
			limit_req zone=client burst=1000000 nodelay;
			try_files /nonexistent @ok;
		}
		location @ok { return 200 '{"status":"ok"}'; }
	}
}
EOF
}

# edge_wrk NAME PORT: wrk in the namespace through HAProxy's frontend PORT, 64 connections with
# keep-alive; sets WRK_RPS, WRK_BAD and WRK_ERR.
edge_wrk() {
	local c=(ip netns exec "$FG_NS" taskset -c "$CL_CPU" wrk -t1 -c64 -d"${WRK_SECONDS}s"
		--timeout 2s "http://127.0.0.1:$2/healthz")
	cmd "$(printf '%q ' "${c[@]}")"
	timeout $((WRK_SECONDS + 30)) "${c[@]}" >"$TMP/wrk-edge-$1.out" 2>&1 || true
	WRK_RPS=$(awk '/^Requests\/sec:/ { print $2 }' "$TMP/wrk-edge-$1.out")
	WRK_BAD=$(awk '/Non-2xx or 3xx responses:/ { print $NF }' "$TMP/wrk-edge-$1.out")
	WRK_ERR=$(sed -n 's/^ *Socket errors: *//p' "$TMP/wrk-edge-$1.out")
	log "wrk through HAProxy to $1: ${WRK_RPS:-none} requests/s, non-2xx ${WRK_BAD:-0}," \
		"socket errors ${WRK_ERR:-none}"
}

# edge_cpu_ticks PID: the CPU time of process PID (all its threads) in clock ticks, or nothing.
edge_cpu_ticks() {
	# utime and stime: fields 14 and 15 of /proc/PID/stat, 12 and 13 after the command's ")".
	sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $12 + $13 }'
}

# edge_dp_stats: "http_requests busy_cycles" of the edge part's data plane, now.
edge_dp_stats() {
	fg_telemetry "$EDGE_DP_PREFIX" /flashgate/stats 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)["/flashgate/stats"]
print(d["http_requests"], d["busy_cycles"])'
}

# edge_haproxy_start THREADS: HAProxy with that many threads (edge_haproxy_conf); sets HP_PID.
# Returns 1 when it did not answer on both plain frontends and the TLS one within 15 s.
edge_haproxy_start() {
	edge_haproxy_conf "$1" "${EDGE_PORTS[0]}" "${EDGE_PORTS[1]}" "${EDGE_PORTS[2]}" \
		"${EDGE_PORTS[3]}" >"$TMP/edge/haproxy-$1.cfg"
	local hp=(ip netns exec "$FG_NS" haproxy -db -f "$TMP/edge/haproxy-$1.cfg")
	cmd "${hp[*]}   # the config: edge_haproxy_conf $1 in scripts/bench.d/edge.sh"
	"${hp[@]}" >"$TMP/edge/haproxy-$1.out" 2>&1 &
	HP_PID=$!
	PIDS+=("$HP_PID")
	local deadline=$((SECONDS + 15)) u=http://127.0.0.1
	while ((SECONDS < deadline)); do
		if ip netns exec "$FG_NS" curl -fs -o /dev/null "$u:${EDGE_PORTS[0]}/healthz" &&
			ip netns exec "$FG_NS" curl -fs -o /dev/null "$u:${EDGE_PORTS[1]}/healthz" &&
			ip netns exec "$FG_NS" curl -fsk -o /dev/null \
				"https://127.0.0.1:${EDGE_PORTS[3]}/healthz"; then
			return 0
		fi
		sleep 0.2
	done
	return 1
}

wrk_rps() { awk '/^Requests\/sec:/ { print $2 }' "$1"; }
h2load_rps() {
	awk '/^finished in/ { for (i = 1; i < NF; i++) if ($(i + 1) ~ /^req\/s/) print $i }' "$1"
}

# edge_outcome FILE: what a wrk or h2load run's answers were, for the note.
edge_outcome() {
	awk '/Non-2xx or 3xx responses:/ { bad = $NF } /Socket errors:/ { sub(/^ *Socket errors: */, "")
		err = $0 } /^requests: / { h2 = $8 " of " $2 " succeeded, " $10 " failed, " $12 \
		" errored, " $14 " timed out" } /^status codes: / { sc = $3 " 2xx, " $9 " 5xx" }
		END { if (h2 != "") print "h2load: " h2 "; " sc
			else print "non-2xx " (bad == "" ? 0 : bad) ", socket errors " (err == "" ? "none" : err) }' "$1"
}

# Per measured run (edge_measured), in order: "name|what|rps|edge-requests-per-cpu-s|haproxy-cpu-%|
# dp-requests|dp-busy-cycles|note"; the rows are written once the data plane's TSC rate is known
# (its final counters).
EDGE_RUNS=()

# edge_measured NAME RPS_OF WHAT NOTE CMD...: runs CMD (a load generator in the namespace, its
# output in $TMP/edge-NAME.out), reading HAProxy's CPU time and the data plane's counters before
# and after; RPS_OF prints the requests/s from that output. What one edge core feeds is the
# requests the data plane answered in that time (a warm-up's too) per second of HAProxy's CPU.
edge_measured() {
	local name=$1 rps_of=$2 what=$3 note=$4 t0 t1 c0 c1 s0 s1 rps
	shift 4
	cmd "$(printf '%q ' "$@")"
	s0=$(edge_dp_stats) c0=$(edge_cpu_ticks "$HP_PID") t0=$(date +%s.%N)
	timeout $((WRK_SECONDS + 30)) "$@" >"$TMP/edge-$name.out" 2>&1 || true
	t1=$(date +%s.%N) c1=$(edge_cpu_ticks "$HP_PID") s1=$(edge_dp_stats)
	rps=$("$rps_of" "$TMP/edge-$name.out")
	# "edge-requests-per-cpu-s|haproxy-cpu-%|dp-requests|dp-busy-cycles"
	local f
	f=$(awk -v a="$s0" -v b="$s1" -v c0="${c0:-}" -v c1="${c1:-}" -v t0="$t0" -v t1="$t1" \
		-v hz="$(getconf CLK_TCK)" 'BEGIN {
		split(a, x, " "); split(b, y, " "); n = y[1] - x[1]; c = y[2] - x[2]
		cpu = (c1 - c0) / hz; wall = t1 - t0
		if (a == "" || b == "") n = c = ""
		if (n > 0 && cpu > 0 && wall > 0) printf "%.0f|%.0f|", n / cpu, 100 * cpu / wall
		else printf "||"
		if (n == "") printf "|"; else printf "%.0f|%.0f", n, c }')
	EDGE_RUNS+=("$name|$what|$rps|$f|$note; $(edge_outcome "$TMP/edge-$name.out")")
	log "edge $name: ${rps:-none} requests/s; HAProxy's requests per CPU second, its CPU %," \
		"the data plane's requests and busy cycles: $f"
}

# edge_rows TSC_HZ: the table's rows of EDGE_RUNS: each run's requests/s against what a fully
# busy worker core answers at the data plane's busy cycles per request in that run; the note
# says what one edge core fed and how many edge cores one worker core serves.
edge_rows() {
	local r name what rps edge cpu n cyc note cap
	for r in "${EDGE_RUNS[@]}"; do
		IFS='|' read -r name what rps edge cpu n cyc note <<<"$r"
		read -r cyc cap < <(awk -v n="$n" -v c="$cyc" -v hz="$1" 'BEGIN {
			if (n > 0 && c > 0 && hz > 0) printf "%.0f %.0f\n", c / n, hz / (c / n)
			else print "? " }')
		row edge "$what" "$rps" "the data plane's worker, fully busy at its cycles of the run" \
			"$cap" "" "HAProxy on a CPU ${cpu:-?} % of the run (all its threads): \
$(human "${edge:-?}") requests/s per edge core; the worker ${cyc:-?} busy cycles per request: \
$(awk -v w="${cap:-}" -v e="${edge:-}" 'BEGIN { if (w > 0 && e > 0) printf "%.1f", w / e; else
			printf "?" }') edge cores per worker core; $note"
	done
}

part_edge() {
	log "edge: wrk through HAProxy to the data plane (veth) and to nginx limit_req"
	command -v haproxy >/dev/null || {
		row edge "through HAProxy" "" "" "" "" "haproxy is not installed (scripts/install-deps)"
		return 0
	}
	export FG_NS=fg-bench-edge-$$ FG_DP_IF=fgdbe$$ FG_CL_IF=fgcbe$$
	export FG_CL_ADDR=198.18.20.1 FG_DP_ADDR=198.18.20.2 FG_PREFIX_LEN=24
	mkdir -p "$TMP/edge/tmp" "$TMP/edge/html"
	chmod 711 "$TMP" "$TMP/edge"
	chmod 755 "$TMP/edge/html"
	# The TLS frontend's certificate: self-signed, for this run only.
	if ! openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
		-subj /CN=edge.bench.invalid -keyout "$TMP/edge/edge.key" \
		-out "$TMP/edge/edge.crt" >"$TMP/edge/openssl.out" 2>&1; then
		row edge "through HAProxy" "" "" "" "" "openssl could not make the certificate"
		return 0
	fi
	cat "$TMP/edge/edge.crt" "$TMP/edge/edge.key" >"$TMP/edge/edge.pem"
	EDGE_UP=1
	"$FG_ROOT/scripts/testnet" up >"$TMP/edge/testnet.log" 2>&1 || {
		row edge "through HAProxy" "" "" "" "" "scripts/testnet up failed"
		return 0
	}
	local now dp_prefix=fg-bench-edge-dp-$$ rc=0
	EDGE_DP_PREFIX=$dp_prefix
	now=$(date +%s)
	PREFIXES+=("$dp_prefix")
	cat >"$TMP/edge/flashgate.conf" <<EOF
[dataplane]
address = $FG_DP_ADDR
listen_ports = 80
[edge]
trusted = $FG_CL_ADDR
[event.1]
name = bench edge
starts_at = $((now - 3600))
ends_at = $((now + 3600))
stock = 1000
EOF
	fg_dp_start "$DP_EXE" "$dp_prefix" "$TMP/edge/dataplane.log" -c "$TMP/edge/flashgate.conf" \
		--counters-json "$TMP/edge/dataplane.json"
	local dp_pid=$FG_DP_PID
	PIDS+=("$dp_pid")
	cmd "${FG_DP_CMD[*]}"
	fg_wait_line "$TMP/edge/dataplane.log" 'ready:' "$dp_pid" 60 || rc=$?
	mapfile -t EDGE_PORTS < <(ip netns exec "$FG_NS" python3 -c '
import socket
ss = [socket.socket() for _ in range(4)]
for s in ss: s.bind(("127.0.0.1", 0))
for s in ss: print(s.getsockname()[1])')
	edge_nginx_conf "${EDGE_PORTS[2]}" >"$TMP/edge/nginx.conf"
	local ng=(ip netns exec "$FG_NS" nginx -p "$TMP/edge" -c "$TMP/edge/nginx.conf"
		-e "$TMP/edge/nginx-error.log" -g 'daemon off;')
	cmd "${ng[*]}   # the config: edge_nginx_conf in scripts/bench.d/edge.sh"
	"${ng[@]}" >"$TMP/edge/nginx.out" 2>&1 &
	PIDS+=($!)
	local ng_pid=$! ok=0
	HP_PID='' EDGE_RUNS=()
	[ "$rc" -ne 0 ] || ! edge_haproxy_start 1 || ok=1
	if [ "$ok" -ne 1 ]; then
		log "edge: not ready: $(tail -n 3 "$TMP/edge/dataplane.log" "$TMP/edge/haproxy-1.out" \
			"$TMP/edge/nginx.out" 2>/dev/null)"
		row edge "through HAProxy" "" "" "" "" "the data plane, HAProxy or nginx did not start"
	else
		local dp_rps ng_rps dp_note
		edge_wrk dataplane "${EDGE_PORTS[0]}"
		dp_rps=$WRK_RPS dp_note="non-2xx ${WRK_BAD:-0}, socket errors ${WRK_ERR:-none}"
		edge_wrk nginx "${EDGE_PORTS[1]}"
		ng_rps=$WRK_RPS
		row edge "GET /healthz, wrk (64 keep-alive connections) through HAProxy (http-reuse \
always, forwardfor) to the data plane on a veth (net_af_packet), requests/s" "$dp_rps" \
			"the same HAProxy to nginx limit_req (keyed by X-Forwarded-For)" "$ng_rps" \
			"$(ratio "$dp_rps" "$ng_rps")" "$dp_note; HAProxy and wrk share CPU $CL_CPU \
(HAProxy is the limit of both), af_packet's copies through the kernel are the data plane's I/O here"
		edge_runs
	fi
	[ -z "$HP_PID" ] || stop "$HP_PID"
	fg_stop_pid "$dp_pid" 20 >/dev/null 2>&1 || true
	local opened reqs
	opened=$(fg_json "$TMP/edge/dataplane.json" total.kept_connections.opened)
	reqs=$(fg_json "$TMP/edge/dataplane.json" total.kept_connections.requests)
	log "edge: the data plane kept ${opened:-?} connections from HAProxy for ${reqs:-?} requests"
	edge_rows "$(fg_json "$TMP/edge/dataplane.json" tsc_hz)"
	stop "$ng_pid"
	kill -0 "$dp_pid" 2>/dev/null && stop "$dp_pid"
	"$FG_ROOT/scripts/testnet" down >/dev/null 2>&1 || true
	EDGE_UP=
}

# edge_runs: with HAProxy of one thread running (HP_PID), what one edge core feeds: wrk and
# h2load (HTTP/2 over TLS; its connections and handshakes made in 2 s of warm-up, not measured)
# through it, then the same through HAProxy with two threads.
edge_runs() {
	local th
	local h2=(ip netns exec "$FG_NS" taskset -c "$CL_CPU" h2load -t1 -c64 -m10
		-D "$WRK_SECONDS" --warm-up-time 2 "https://127.0.0.1:${EDGE_PORTS[3]}/healthz")
	local wrk=(ip netns exec "$FG_NS" taskset -c "$CL_CPU" wrk -t1 -c64 -d"${WRK_SECONDS}s"
		--timeout 2s "http://127.0.0.1:${EDGE_PORTS[0]}/healthz")
	command -v h2load >/dev/null || row edge "h2load over TLS through HAProxy" "" "" "" "" \
		"h2load is not installed (nghttp2-client, scripts/install-deps)"
	for th in 1 2; do
		if [ "$th" -eq 2 ]; then
			stop "$HP_PID"
			HP_PID=''
			edge_haproxy_start 2 || {
				row edge "through HAProxy with two threads" "" "" "" "" \
					"HAProxy with nbthread 2 did not start: $(tail -n 1 \
						"$TMP/edge/haproxy-2.out" 2>/dev/null)"
				return 0
			}
		fi
		edge_measured "wrk-$th" wrk_rps "GET /healthz, wrk (64 keep-alive connections, \
HTTP/1.1) through HAProxy of $th thread(s) to the data plane, requests/s" "wrk on CPU \
$CL_CPU$([ "$th" -eq 1 ] || echo ", HAProxy's second thread on CPU $SRV_CPU")" "${wrk[@]}"
		command -v h2load >/dev/null || continue
		edge_measured "h2load-$th" h2load_rps "GET /healthz, h2load (64 connections of \
HTTP/2 over TLS, 10 streams each, as browsers arrive) through HAProxy of $th thread(s) to the \
data plane, requests/s" "h2load on CPU $CL_CPU, TLS ended by HAProxy (a self-signed ECDSA P-256 \
certificate), kept HTTP/1.1 connections behind it" "${h2[@]}"
	done
}
