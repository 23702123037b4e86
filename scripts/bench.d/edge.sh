# SPDX-License-Identifier: BSD-3-Clause
# scripts/bench.d/edge.sh: the edge part of scripts/bench (issue 17): wrk through HAProxy
# (mode http, keep-alive on both sides, http-reuse always, option forwardfor) to the data plane,
# against wrk through the same HAProxy to nginx with limit_req (the same per-client limit, keyed
# by X-Forwarded-For as the data plane keys it). The data plane runs on a veth of a test network
# of its own (net_af_packet, scripts/testnet) with HAProxy's address as its trusted edge, so its
# connections from HAProxy are kept; HAProxy, nginx and wrk run in the test network's namespace.
# Sourced by scripts/bench; it defines part_edge.
# shellcheck shell=bash
# shellcheck disable=SC2154 # the sizes and programs: set by scripts/bench

edge_haproxy_conf() {
	cat <<EOF
# written by scripts/bench: one thread on CPU $CL_CPU
global
	nbthread 1
	cpu-map 1/1 $CL_CPU
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
	bind 127.0.0.1:$1
	default_backend dataplane
frontend to_nginx
	bind 127.0.0.1:$2
	default_backend nginx
backend dataplane
	server dp $FG_DP_ADDR:80 maxconn 256
backend nginx
	server ng 127.0.0.1:$3 maxconn 256
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
	EDGE_UP=1
	"$FG_ROOT/scripts/testnet" up >"$TMP/edge/testnet.log" 2>&1 || {
		row edge "through HAProxy" "" "" "" "" "scripts/testnet up failed"
		return 0
	}
	local now ports dp_prefix=fg-bench-edge-dp-$$ rc=0
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
	mapfile -t ports < <(ip netns exec "$FG_NS" python3 -c '
import socket
ss = [socket.socket() for _ in range(3)]
for s in ss: s.bind(("127.0.0.1", 0))
for s in ss: print(s.getsockname()[1])')
	edge_nginx_conf "${ports[2]}" >"$TMP/edge/nginx.conf"
	edge_haproxy_conf "${ports[0]}" "${ports[1]}" "${ports[2]}" >"$TMP/edge/haproxy.cfg"
	local ng=(ip netns exec "$FG_NS" nginx -p "$TMP/edge" -c "$TMP/edge/nginx.conf"
		-e "$TMP/edge/nginx-error.log" -g 'daemon off;')
	local hp=(ip netns exec "$FG_NS" haproxy -db -f "$TMP/edge/haproxy.cfg")
	cmd "${ng[*]}   # the config: edge_nginx_conf in scripts/bench.d/edge.sh"
	cmd "${hp[*]}   # the config: edge_haproxy_conf in scripts/bench.d/edge.sh"
	"${ng[@]}" >"$TMP/edge/nginx.out" 2>&1 &
	PIDS+=($!)
	local ng_pid=$!
	"${hp[@]}" >"$TMP/edge/haproxy.out" 2>&1 &
	PIDS+=($!)
	local hp_pid=$!
	local deadline=$((SECONDS + 15)) ok=0
	while ((SECONDS < deadline)); do
		if ip netns exec "$FG_NS" curl -fs -o /dev/null "http://127.0.0.1:${ports[0]}/healthz" &&
			ip netns exec "$FG_NS" curl -fs -o /dev/null "http://127.0.0.1:${ports[1]}/healthz"; then
			ok=1
			break
		fi
		sleep 0.2
	done
	if [ "$rc" -ne 0 ] || [ "$ok" -ne 1 ]; then
		log "edge: not ready: $(tail -n 3 "$TMP/edge/dataplane.log" "$TMP/edge/haproxy.out" \
			"$TMP/edge/nginx.out" 2>/dev/null)"
		row edge "through HAProxy" "" "" "" "" "the data plane, HAProxy or nginx did not start"
	else
		local dp_rps ng_rps dp_note
		edge_wrk dataplane "${ports[0]}"
		dp_rps=$WRK_RPS dp_note="non-2xx ${WRK_BAD:-0}, socket errors ${WRK_ERR:-none}"
		edge_wrk nginx "${ports[1]}"
		ng_rps=$WRK_RPS
		fg_stop_pid "$dp_pid" 20 >/dev/null 2>&1 || true
		local opened reqs
		opened=$(fg_json "$TMP/edge/dataplane.json" total.kept_connections.opened)
		reqs=$(fg_json "$TMP/edge/dataplane.json" total.kept_connections.requests)
		row edge "GET /healthz, wrk (64 keep-alive connections) through HAProxy (http-reuse \
always, forwardfor) to the data plane on a veth (net_af_packet), requests/s" "$dp_rps" \
			"the same HAProxy to nginx limit_req (keyed by X-Forwarded-For)" "$ng_rps" \
			"$(ratio "$dp_rps" "$ng_rps")" "$dp_note; the data plane kept ${opened:-?} \
connections from HAProxy for ${reqs:-?} requests; HAProxy and wrk share CPU $CL_CPU (HAProxy is the \
limit of both), af_packet's copies through the kernel are the data plane's I/O here"
	fi
	stop "$hp_pid"
	stop "$ng_pid"
	kill -0 "$dp_pid" 2>/dev/null && stop "$dp_pid"
	"$FG_ROOT/scripts/testnet" down >/dev/null 2>&1 || true
	EDGE_UP=
}
