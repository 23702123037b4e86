# SPDX-License-Identifier: BSD-3-Clause
# scripts/bench.d/nginx.sh: the nginx part of scripts/bench: nginx (one worker, limit_req) on
# 127.0.0.1 driven by wrk, with and without keep-alive, against the dataplane part's figures.
# Sourced by scripts/bench; it defines part_nginx.
# shellcheck shell=bash
# shellcheck disable=SC2154 # quick, huge, the sizes and programs: set by scripts/bench

# A purchase-token-sized header, so that nginx reads as many bytes as the data plane does.
FAKE_TOKEN=v1.7.1.1000042.$(date +%s).AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA

nginx_conf() {
	local port=$1
	cat <<EOF
# written by scripts/bench: one worker on CPU $SRV_CPU, 127.0.0.1:$port only
worker_processes 1;
worker_cpu_affinity $(printf '%s' "$((1 << SRV_CPU))" | awk '{ s = ""; n = $1; while (n) { s = (n % 2) s; n = int(n / 2) } print s }');
pid $TMP/nginx/nginx.pid;
error_log $TMP/nginx/error.log crit; # refusals are counted, not logged, as in flashgate
events { worker_connections 8192; multi_accept on; }
http {
	access_log off;
	client_body_temp_path $TMP/nginx/tmp;
	keepalive_requests 100000000;
	# The data plane's buckets: per address, per user (the token stands for it), per device.
	limit_req_zone \$binary_remote_addr zone=ip:16m rate=10000000r/s;
	limit_req_zone \$http_x_flash_token zone=user:16m rate=10000000r/s;
	limit_req_zone \$http_x_device_id zone=dev:16m rate=10000000r/s;
	limit_req_zone \$binary_remote_addr zone=tight:1m rate=1r/s;
	limit_req_status 429;
	default_type application/json;
	server {
		listen 127.0.0.1:$port backlog=4096;
		root $TMP/nginx/html;
		location = /healthz { return 200 '{"status":"ok"}'; }
		# "return" acts in the rewrite phase, before limit_req (preaccess) would run; try_files
		# acts after it, so the answer comes from a named location once the limits passed.
		location /api/v1/events/1/reserve/ {
			limit_req zone=ip burst=1000000 nodelay;
			limit_req zone=user burst=1000000 nodelay;
			limit_req zone=dev burst=1000000 nodelay;
			try_files /nonexistent @receipt;
		}
		location /api/v1/events/2/reserve/ {
			limit_req zone=tight;
			try_files /nonexistent @receipt;
		}
		location @receipt {
			add_header Cache-Control no-store always;
			return 202 '{"status":"queued","receipt":"$FAKE_TOKEN","result_path":"/api/v1/events/1/result"}';
		}
	}
}
EOF
}

# wrk_run NAME URL_PATH KEEPALIVE(0|1) [LUA]: wrk on CPU $CL_CPU, 256 connections; sets WRK_RPS,
# WRK_BAD (non-2xx answers) and WRK_ERR (socket errors).
wrk_run() {
	local name=$1 path=$2 ka=$3 lua=${4:-} c=()
	c=(taskset -c "$CL_CPU" wrk -t1 -c256 -d"${WRK_SECONDS}s" --timeout 2s)
	[ "$ka" -eq 1 ] || c+=(-H 'Connection: close')
	[ -z "$lua" ] || c+=(-s "$lua")
	c+=("http://127.0.0.1:$NGINX_PORT$path")
	cmd "$(printf '%q ' "${c[@]}")"
	timeout $((WRK_SECONDS + 30)) "${c[@]}" >"$TMP/wrk-$name.out" 2>&1 || true
	WRK_RPS=$(awk '/^Requests\/sec:/ { print $2 }' "$TMP/wrk-$name.out")
	WRK_BAD=$(awk '/Non-2xx or 3xx responses:/ { print $NF }' "$TMP/wrk-$name.out")
	WRK_ERR=$(sed -n 's/^ *Socket errors: *//p' "$TMP/wrk-$name.out")
	log "wrk $name: ${WRK_RPS:-none} requests/s, non-2xx ${WRK_BAD:-0}, socket errors ${WRK_ERR:-none}"
}

part_nginx() {
	log "nginx: one worker with limit_req on 127.0.0.1, wrk with and without keep-alive"
	# nginx's worker runs as www-data: it must be able to look for (not find) try_files' file.
	mkdir -p "$TMP/nginx/tmp" "$TMP/nginx/html"
	chmod 711 "$TMP" "$TMP/nginx"
	chmod 755 "$TMP/nginx/html"
	NGINX_PORT=$(python3 -c '
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	nginx_conf "$NGINX_PORT" >"$TMP/nginx/nginx.conf"
	cat >"$TMP/reserve.lua" <<EOF
wrk.method = "POST"
wrk.headers["User-Agent"] = "Mozilla/5.0"
wrk.headers["X-Flash-Token"] = "$FAKE_TOKEN"
wrk.headers["X-Device-Id"] = "dev-42"
wrk.headers["Content-Length"] = "0"
EOF
	local ng=(nginx -p "$TMP/nginx" -c "$TMP/nginx/nginx.conf" -e "$TMP/nginx/error.log"
		-g 'daemon off;')
	cmd "${ng[*]}   # the config is printed by nginx_conf in scripts/bench.d/nginx.sh"
	"${ng[@]}" >"$TMP/nginx/stdout" 2>&1 &
	local ng_pid=$!
	PIDS+=("$ng_pid")
	local deadline=$((SECONDS + 10))
	until curl -fs -o /dev/null "http://127.0.0.1:$NGINX_PORT/healthz"; do
		if ! kill -0 "$ng_pid" 2>/dev/null || ((SECONDS >= deadline)); then
			log "nginx did not start: $(cat "$TMP/nginx/stdout" "$TMP/nginx/error.log" 2>/dev/null)"
			row nginx "nginx" "" "" "" "" "did not start"
			stop "$ng_pid"
			return 0
		fi
		sleep 0.1
	done
	local rpath=/api/v1/events/1/reserve/7-AAAAAAAAAAAAAAAAAAAAAA
	local hz_close hz_ka rs_close rs_ka l_close l_bad bad note
	wrk_run healthz-close /healthz 0
	hz_close=$WRK_RPS note="non-2xx ${WRK_BAD:-0}, socket errors ${WRK_ERR:-none}"
	wrk_run healthz-ka /healthz 1
	hz_ka=$WRK_RPS
	wrk_run reserve-close "$rpath" 0 "$TMP/reserve.lua"
	rs_close=$WRK_RPS bad=${WRK_BAD:-0}
	wrk_run reserve-ka "$rpath" 1 "$TMP/reserve.lua"
	rs_ka=$WRK_RPS
	wrk_run limited-close /api/v1/events/2/reserve/x 0 "$TMP/reserve.lua"
	l_close=$WRK_RPS l_bad=$WRK_BAD
	stop "$ng_pid"

	row nginx "GET /healthz, one request per connection (target ≥ 2 M/s per core)" \
		"$FG_HEALTHZ_RPS" "nginx, Connection: close" "$hz_close" \
		"$(ratio "$FG_HEALTHZ_RPS" "$hz_close")" "$note"
	row nginx "GET /healthz, nginx with keep-alive" "$FG_HEALTHZ_RPS" "nginx, keep-alive" \
		"$hz_ka" "$(ratio "$FG_HEALTHZ_RPS" "$hz_ka")" \
		"flashgate always closes: its connections/s against nginx's requests/s"
	row nginx "reserve admitted (target ≥ 1.5 M/s per core): flashgate over memif (loadgen reserve)" \
		"$FG_RESV_RPS" "nginx limit_req ×3, close" "$rs_close" \
		"$(ratio "$FG_RESV_RPS" "$rs_close")" "nginx checks no token; non-2xx $bad"
	row nginx "reserve admitted: flashgate pipeline alone (no I/O)" "$FG_RESERVE_PIPE" \
		"nginx limit_req ×3, keep-alive" "$rs_ka" "$(ratio "$FG_RESERVE_PIPE" "$rs_ka")" \
		"HMAC-SHA256 of the token per request on flashgate's side only"
	row nginx "over the per-IP limit → 429: flashgate pipeline alone (no I/O)" "$FG_IP429_PIPE" \
		"nginx limit_req 429, close" "$l_close" "$(ratio "$FG_IP429_PIPE" "$l_close")" \
		"nginx answered ${l_bad:-0} of them 429"
}
