# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
#
# scripts/cluster's hosts: what runs on each, started inside its namespace (so that
# `ip netns pids` names every process of a host), its data under $FGC_DIR/HOST (what `kill`
# removes: the disk is gone), its log under $FGC_DIR/logs (kept, to read afterwards). Sourced by
# scripts/cluster after net.sh; it runs nothing by itself.
#
# Every function returns 0 on success, non-zero with a message on stderr otherwise.

FGC_PG_PORT=5432
FGC_REDIS_PORT=6379
FGC_SENTINEL_PORT=26379
FGC_PULL_PORT=5601
FGC_PUB_PORT=5602
FGC_MASTER=flashgate

fgc_say() { printf '%s\n' "$*"; }

fgc_err() { printf 'cluster: %s\n' "$*" >&2; }

fgc_data() { printf '%s/%s\n' "$FGC_DIR" "$1"; }
fgc_log() { printf '%s/logs/%s.log\n' "$FGC_DIR" "$1"; }

# fgc_in HOST CMD...: runs CMD in HOST's namespace.
fgc_in() {
	local h=$1
	shift
	ip netns exec "$(fgc_ns "$h")" "$@"
}

# fgc_spawn HOST LOG CMD...: starts CMD in the background in HOST's namespace, in a session of its
# own, output appended to LOG, stdin /dev/null. Prints its pid.
fgc_spawn() {
	local h=$1 log=$2
	shift 2
	ip netns exec "$(fgc_ns "$h")" setsid "$@" </dev/null >>"$log" 2>&1 &
	printf '%s\n' "$!"
}

# fgc_until TIMEOUT_S CMD...: runs CMD every 0.2 s until it succeeds (0) or the time is up (1).
fgc_until() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		((SECONDS < deadline)) || return 1
		sleep 0.2
	done
}

# fgc_wait_ready LOG PID REGEX TIMEOUT_S: waits for "[PID] ...REGEX" in LOG (the daemons prefix
# their lines with their pid; logs are appended across restarts).
fgc_wait_ready() {
	local log=$1 pid=$2 re=$3 rc=0
	fg_wait_line "$log" "\\[$pid\\] [a-z-]+: $re" "$pid" "$4" || rc=$?
	((rc == 0)) && return 0
	fgc_err "pid $pid did not log '$re' ($([ $rc = 1 ] && echo exited || echo timed out)); end of $log:"
	tail -n 15 "$log" >&2
	return 1
}

fgc_exe() {
	case $1 in
	dataplane) printf '%s/dataplane/flashgate-dataplane\n' "$FGC_BUILD" ;;
	controlplane) printf '%s/controlplane/flashgate-controlplane\n' "$FGC_BUILD" ;;
	order-writer) printf '%s/order-writer/flashgate-order-writer\n' "$FGC_BUILD" ;;
	ctl) printf '%s/flashgatectl/flashgatectl\n' "$FGC_BUILD" ;;
	esac
}

fgc_as_pg() { runuser -u postgres -- "$@"; }

fgc_pg_bin() {
	local d
	if [ -x /usr/lib/postgresql/15/bin/postgres ]; then
		printf '/usr/lib/postgresql/15/bin\n'
	else
		d=$(printf '%s\n' /usr/lib/postgresql/*/bin | grep -v '\*' | sort -V | tail -n 1)
		printf '%s\n' "${d:-/usr/lib/postgresql/15/bin}"
	fi
}

# --- shared files: config, link keys --------------------------------------------------------

fgc_sentinels() {
	local h s=
	for h in redis1 redis2 redis3; do s+=${s:+,}$(fgc_addr "$h"):$FGC_SENTINEL_PORT; done
	printf '%s\n' "$s"
}
fgc_cp_list() { # PORT: the control planes' endpoints on PORT, comma-separated
	printf 'tcp://%s:%s,tcp://%s:%s\n' "$(fgc_addr cp1)" "$1" "$(fgc_addr cp2)" "$1"
}
fgc_conninfo() { # (the config's lines hold at most 197 characters: port 5432 is libpq's default)
	printf 'host=%s,%s dbname=flashgate user=postgres' "$(fgc_addr pg1)" "$(fgc_addr pg2)"
	printf ' target_session_attrs=read-write connect_timeout=3 keepalives_idle=5'
	printf ' keepalives_interval=2 tcp_user_timeout=15000\n'
}

# fgc_write_config: $FGC_DIR/flashgate.conf, the settings every host shares (each program reads
# its own sections; per-host settings are -s options).
fgc_write_config() {
	cat >"$FGC_DIR/flashgate.conf.tmp" <<EOF
# written by scripts/cluster up: the settings every host of the cluster shares
[dataplane]
listen_ports = 80
log_level = info

[admission]
# Small rate-limit tables (a few hundred buyers; 64 KiB a table) and receipts that age into
# "retry" within seconds (a reservation lost with a control plane's host is retried soon).
limit_table_log2 = 12
receipt_young = 2s
receipt_retry = 5s

[bridge]
push_endpoint = $(fgc_cp_list $FGC_PULL_PORT)
sub_endpoint = $(fgc_cp_list $FGC_PUB_PORT)
curve_server_key_file = $FGC_DIR/keys/controlplane.pub
result_capacity = 65536
resync = 3s

[edge]
trusted = $(fgc_addr edge)

[controlplane]
heartbeat = 500ms
metrics_port = 0
curve_secret_key_file = $FGC_DIR/keys/controlplane.key
curve_clients_file = $FGC_DIR/keys/clients

[redis]
sentinels = $(fgc_sentinels)
master_name = $FGC_MASTER
wait_replicas = 1
# A loaded machine's replicas may take longer than docs/ha.md's 500ms to confirm a batch.
wait_timeout = 1s
timeout = 5s

[postgres]
conninfo = "$(fgc_conninfo)"

[order_writer]
push_endpoint = $(fgc_cp_list $FGC_PULL_PORT)
curve_secret_key_file = $FGC_DIR/keys/ow.key
curve_server_key_file = $FGC_DIR/keys/controlplane.pub
max_rate = 2000
claim_idle = 5s
claim_interval = 1s
EOF
	mv "$FGC_DIR/flashgate.conf.tmp" "$FGC_DIR/flashgate.conf"
}

# fgc_keys: a CURVE key pair per program (one for both control planes: a data plane that moves
# checks the same server key), and the control planes' allow-list. Kept when present.
fgc_keys() {
	local k ctl
	ctl=$(fgc_exe ctl)
	[ ! -s "$FGC_DIR/keys/clients" ] || return 0
	rm -rf "$FGC_DIR/keys"
	mkdir -m 700 "$FGC_DIR/keys"
	"$ctl" curve keygen controlplane --dir "$FGC_DIR/keys" >/dev/null || return 1
	: >"$FGC_DIR/keys/clients.tmp"
	for k in dp1:dataplane dp2:dataplane ow:order-writer; do
		"$ctl" curve keygen "${k%%:*}" --dir "$FGC_DIR/keys" --role "${k#*:}" | tail -n 1 \
			>>"$FGC_DIR/keys/clients.tmp" || return 1
	done
	mv "$FGC_DIR/keys/clients.tmp" "$FGC_DIR/keys/clients"
}

# --- Redis and Sentinel ----------------------------------------------------------------------

fgc_redis_sock() { printf '%s/redis.sock\n' "$(fgc_data "$1")"; }
fgc_rcli() { # HOST ARGS...: redis-cli on HOST's Redis (its Unix socket)
	local h=$1
	shift
	timeout 5 redis-cli -s "$(fgc_redis_sock "$h")" "$@"
}
fgc_redis_pong() { [ "$(fgc_rcli "$1" PING 2>/dev/null)" = PONG ]; }
fgc_host_of_addr() {
	local h
	for h in $(fgc_host_names); do
		[ "$(fgc_addr "$h")" != "$1" ] || { printf '%s\n' "$h"; return 0; }
	done
	return 1
}

# fgc_redis_primary: the Redis primary's host as the Sentinels name it (the first that answers),
# and a primary by ROLE; fails when none does.
fgc_redis_primary() {
	local s a h
	for s in redis1 redis2 redis3; do
		a=$(fgc_in client timeout 2 redis-cli -h "$(fgc_addr "$s")" -p "$FGC_SENTINEL_PORT" \
			SENTINEL get-master-addr-by-name "$FGC_MASTER" 2>/dev/null | head -n 1) || continue
		h=$(fgc_host_of_addr "$a") || continue
		[ "$(fgc_rcli "$h" ROLE 2>/dev/null | head -n 1)" = master ] || continue
		printf '%s\n' "$h"
		return 0
	done
	return 1
}

fgc_redis_replicas_online() { # HOST N: HOST is a primary with N replicas online
	[ "$(fgc_rcli "$1" INFO replication 2>/dev/null | grep -c 'state=online')" -ge "$2" ]
}

# fgc_start_redis HOST [PRIMARY]: redis-server (a replica of PRIMARY's, when given) and
# redis-sentinel monitoring PRIMARY (or HOST). The settings of docs/ha.md: appendfsync always,
# noeviction, min-replicas-to-write 1.
fgc_start_redis() {
	local h=$1 p=${2:-$1} d addr rep=()
	d=$(fgc_data "$h")
	addr=$(fgc_addr "$h")
	mkdir -p "$d"
	[ "$p" = "$h" ] || rep=(--replicaof "$(fgc_addr "$p")" "$FGC_REDIS_PORT")
	if ! fgc_redis_pong "$h"; then
		rm -f "$d/redis.sock"
		fgc_spawn "$h" "$(fgc_log "$h")" redis-server --bind "$addr" --port "$FGC_REDIS_PORT" \
			--protected-mode no --unixsocket "$d/redis.sock" --unixsocketperm 700 --dir "$d" \
			--appendonly yes --appendfsync always --maxmemory-policy noeviction --save '' \
			--min-replicas-to-write 1 --min-replicas-max-lag 5 "${rep[@]}" >/dev/null
		fgc_until 20 fgc_redis_pong "$h" ||
			{ fgc_err "$h: redis-server does not answer"; return 1; }
	fi
	if ! fgc_in "$h" timeout 2 redis-cli -h "$addr" -p "$FGC_SENTINEL_PORT" PING >/dev/null 2>&1; then
		cat >"$d/sentinel.conf" <<EOF
port $FGC_SENTINEL_PORT
bind $addr
protected-mode no
dir $d
sentinel monitor $FGC_MASTER $(fgc_addr "$p") $FGC_REDIS_PORT 2
sentinel down-after-milliseconds $FGC_MASTER 1000
sentinel failover-timeout $FGC_MASTER 10000
sentinel parallel-syncs $FGC_MASTER 1
EOF
		fgc_spawn "$h" "$(fgc_log "$h-sentinel")" redis-sentinel "$d/sentinel.conf" >/dev/null
		fgc_until 20 fgc_in "$h" timeout 2 redis-cli -h "$addr" -p "$FGC_SENTINEL_PORT" PING \
			>/dev/null 2>&1 || { fgc_err "$h: redis-sentinel does not answer"; return 1; }
	fi
}

# fgc_sentinels_reset HOST: every other Sentinel forgets the nodes it knew and learns them again
# (the lost host's old Redis and Sentinel go; docs/ha.md, "Replacing a lost Redis host"), one at
# a time, $FGC_RESET_GAP_S (default 5) seconds apart.
fgc_sentinels_reset() {
	local s first=1
	for s in redis1 redis2 redis3; do
		[ "$s" != "$1" ] || continue
		((first)) || sleep "${FGC_RESET_GAP_S:-5}"
		first=0
		fgc_in client timeout 2 redis-cli -h "$(fgc_addr "$s")" -p "$FGC_SENTINEL_PORT" \
			SENTINEL RESET "$FGC_MASTER" >/dev/null 2>&1 || true
	done
}

# --- PostgreSQL ------------------------------------------------------------------------------

fgc_psql() { # HOST SQL: the rows of SQL on HOST's PostgreSQL (its Unix socket)
	timeout 10 psql -h "$(fgc_data "$1")" -p "$FGC_PG_PORT" -U postgres -d "${FGC_DB:-flashgate}" \
		-XAtq -v ON_ERROR_STOP=1 -c "$2"
}
fgc_pg_up() { # HOST: its PostgreSQL answers
	[ -S "$(fgc_data "$1")/.s.PGSQL.$FGC_PG_PORT" ] &&
		timeout 5 "$(fgc_pg_bin)/pg_isready" -q -h "$(fgc_data "$1")" -p "$FGC_PG_PORT" -U postgres
}
fgc_pg_is_primary() { [ "$(FGC_DB=postgres fgc_psql "$1" 'SELECT pg_is_in_recovery()' 2>/dev/null)" = f ]; }
fgc_pg_is_standby() { [ "$(FGC_DB=postgres fgc_psql "$1" 'SELECT pg_is_in_recovery()' 2>/dev/null)" = t ]; }
fgc_pg_other() { [ "$1" = pg1 ] && echo pg2 || echo pg1; }

# fgc_pg_primary: the PostgreSQL host that accepts writes; fails when none does.
fgc_pg_primary() {
	local h
	for h in pg1 pg2; do
		fgc_pg_is_primary "$h" && { printf '%s\n' "$h"; return 0; }
	done
	return 1
}

# fgc_pg_start HOST: starts the cluster in HOST's data directory (made already) on its address.
fgc_pg_start() {
	local h=$1 d
	d=$(fgc_data "$h")
	fgc_pg_up "$h" && return 0
	fgc_in "$h" runuser -u postgres -- "$(fgc_pg_bin)/pg_ctl" -D "$d/data" -l "$(fgc_log "$h")" \
		-w -t 60 -o "-k $d -p $FGC_PG_PORT -c listen_addresses=$(fgc_addr "$h") -c cluster_name=$h -c shared_buffers=16MB -c max_connections=50" \
		start >/dev/null || { fgc_err "$h: PostgreSQL did not start; see $(fgc_log "$h")"; return 1; }
	fgc_until 30 fgc_pg_up "$h"
}

fgc_pg_dir() { # HOST: its data directory made, owned by postgres, reachable through FGC_DIR
	mkdir -p "$(fgc_data "$1")"
	touch "$(fgc_log "$1")"
	chown postgres: "$(fgc_data "$1")" "$(fgc_log "$1")"
	chmod o+x "$FGC_DIR"
}

# fgc_start_pg_primary HOST: a new primary (initdb, replication allowed from the cluster's
# network, the database flashgate), or the one already in HOST's data directory started.
fgc_start_pg_primary() {
	local h=$1 d
	d=$(fgc_data "$h")
	fgc_pg_dir "$h"
	if [ ! -f "$d/data/PG_VERSION" ]; then
		fgc_as_pg "$(fgc_pg_bin)/initdb" -D "$d/data" -A trust -U postgres -E UTF8 --locale=C \
			--no-instructions --no-sync >>"$(fgc_log "$h")" 2>&1 ||
			{ fgc_err "$h: initdb failed; see $(fgc_log "$h")"; return 1; }
		printf 'host all all 198.19.0.0/24 trust\nhost replication all 198.19.0.0/24 trust\n' \
			>>"$d/data/pg_hba.conf"
	fi
	fgc_pg_start "$h" || return 1
	[ "$(FGC_DB=postgres fgc_psql "$h" "SELECT 1 FROM pg_database WHERE datname = 'flashgate'")" = 1 ] ||
		FGC_DB=postgres fgc_psql "$h" 'CREATE DATABASE flashgate' >/dev/null
}

# fgc_pg_sync_names PRIMARY NAMES: synchronous_standby_names on PRIMARY ('' or 'FIRST 1 (pgN)'),
# reloaded.
fgc_pg_sync_names() {
	FGC_DB=postgres fgc_psql "$1" "ALTER SYSTEM SET synchronous_standby_names = '$2'" >/dev/null &&
		FGC_DB=postgres fgc_psql "$1" 'SELECT pg_reload_conf()' >/dev/null
}
fgc_pg_is_sync() { # PRIMARY STANDBY
	[ "$(FGC_DB=postgres fgc_psql "$1" "SELECT sync_state FROM pg_stat_replication WHERE application_name = '$2'" 2>/dev/null)" = sync ]
}

# fgc_start_pg_standby HOST PRIMARY: a new streaming standby of PRIMARY (pg_basebackup -R from
# it, over the cluster's network), or the one in HOST's data directory started; then PRIMARY's
# commits made synchronous to it, and waited for.
fgc_start_pg_standby() {
	local h=$1 p=$2 d
	d=$(fgc_data "$h")
	fgc_pg_dir "$h"
	if [ ! -f "$d/data/PG_VERSION" ]; then
		rm -rf "$d/data"
		fgc_in "$h" runuser -u postgres -- "$(fgc_pg_bin)/pg_basebackup" -h "$(fgc_addr "$p")" \
			-p "$FGC_PG_PORT" -U postgres -D "$d/data" -R -X stream -c fast --no-sync \
			>>"$(fgc_log "$h")" 2>&1 ||
			{ fgc_err "$h: pg_basebackup from $p failed; see $(fgc_log "$h")"; return 1; }
	fi
	fgc_pg_start "$h" || return 1
	fgc_pg_sync_names "$p" "FIRST 1 ($h)" || return 1
	fgc_until 60 fgc_pg_is_sync "$p" "$h" ||
		{ fgc_err "$h: not a synchronous standby of $p after 60 s"; return 1; }
}

# --- flashgate's daemons ---------------------------------------------------------------------

fgc_alive() { # HOST WORD: a process of HOST runs a program whose command line holds WORD
	local p
	for p in $(fgc_pids "$1"); do
		tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF -- "$2" && return 0
	done
	return 1
}

fgc_start_cp() {
	local h=$1 d pid n
	d=$(fgc_data "$h")
	fgc_alive "$h" flashgate-controlplane && return 0
	mkdir -p "$d"
	n=${h#cp}
	pid=$(fgc_spawn "$h" "$(fgc_log "$h")" "$(fgc_exe controlplane)" -c "$FGC_DIR/flashgate.conf" \
		-s "controlplane.id=$((100 + n))" \
		-s "controlplane.pull_endpoint=tcp://$(fgc_addr "$h"):$FGC_PULL_PORT" \
		-s "controlplane.pub_endpoint=tcp://$(fgc_addr "$h"):$FGC_PUB_PORT" \
		-s "controlplane.admin_socket=$d/admin.sock")
	fgc_wait_ready "$(fgc_log "$h")" "$pid" 'ready:' 60
}

fgc_start_ow() {
	local h=$1 pid
	fgc_alive "$h" flashgate-order-writer && return 0
	mkdir -p "$(fgc_data "$h")"
	pid=$(fgc_spawn "$h" "$(fgc_log "$h")" "$(fgc_exe order-writer)" -c "$FGC_DIR/flashgate.conf")
	fgc_wait_ready "$(fgc_log "$h")" "$pid" 'consumer ' 60
}

# fgc_dp_cpu: the CPU both data planes run on (their main lcore and their one worker): the last,
# so that their busy polling (DPDK does not sleep) leaves the others to everything else.
fgc_dp_cpu() { echo $(($(nproc) - 1)); }

fgc_start_dp() {
	local h=$1 d pid c
	d=$(fgc_data "$h")
	fgc_alive "$h" flashgate-dataplane && return 0
	mkdir -p "$d"
	rm -rf "$(fg_dpdk_runtime_dir "$FGC_PREFIX-$h")"
	c=$(fgc_dp_cpu)
	pid=$(fgc_spawn "$h" "$(fgc_log "$h")" "$(fgc_exe dataplane)" --lcores "0@$c,1@$c" --no-huge \
		-m "${FGC_DP_MEM_MB:-256}" --no-pci --file-prefix "$FGC_PREFIX-$h" \
		--vdev "net_af_packet0,iface=dpdk0" -- -c "$FGC_DIR/flashgate.conf" \
		-s "dataplane.address=$(fgc_dp_addr "$h")" -s "bridge.dp_id=${h#dp}" \
		-s "bridge.curve_secret_key_file=$FGC_DIR/keys/$h.key" -s dataplane.mbufs=4095 \
		-s dataplane.rx_desc=256 -s dataplane.tx_desc=256 -s dataplane.kept_connections=256)
	fgc_wait_ready "$(fgc_log "$h")" "$pid" 'ready:' 90
}

fgc_start_edge() {
	local h=$1 d
	d=$(fgc_data "$h")
	fgc_alive "$h" haproxy && return 0
	mkdir -p "$d"
	cat >"$d/haproxy.cfg" <<EOF
# written by scripts/cluster: the shop's edge in front of both data planes
global
	maxconn 4096
defaults
	mode http
	timeout connect 2s
	timeout client 30s
	timeout server 10s
	retries 2
	option redispatch
	# The data planes trust this host (their [edge] trusted) for the buyer's address.
	option forwardfor
frontend sale
	bind $(fgc_addr edge):80
	default_backend dataplanes
backend dataplanes
	balance roundrobin
	option httpchk GET /healthz
	server dp1 $(fgc_dp_addr dp1):80 check inter 1s fall 2 rise 1
	server dp2 $(fgc_dp_addr dp2):80 check inter 1s fall 2 rise 1
EOF
	fgc_spawn "$h" "$(fgc_log "$h")" haproxy -f "$d/haproxy.cfg" -db >/dev/null
	fgc_until 20 fgc_in client timeout 3 curl -sf -o /dev/null "http://$(fgc_addr edge)/healthz" ||
		{ fgc_err "edge: no answer to /healthz through HAProxy; see $(fgc_log edge)"; return 1; }
}
