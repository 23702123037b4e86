# SPDX-License-Identifier: BSD-3-Clause
# Helpers shared by flashgate's scripts and end-to-end tests. Source it; it does not run anything.
# shellcheck shell=bash
# shellcheck disable=SC2034 # FG_ROOT, FG_DP_* and FG_STOP_RC are for the scripts that source this

FG_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Debian's programs first: every tool flashgate uses comes from a Debian package
# (scripts/install-deps), python3's modules too (python3-selenium, python3-matplotlib), and an
# interpreter of a version manager earlier on PATH lacks them and, through its shim, costs a
# second or two a start on a loaded host (the tests start python3 thousands of times).
case ":$PATH:" in
":/usr/sbin:/usr/bin:/sbin:/bin:"*) ;;
*) PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH ;;
esac
export PATH

# Names and addresses of the test network; each can be overridden from the environment so that
# tests run their own network beside the demo's. Only 198.18.0.0/15 (RFC 2544 benchmarking) is used.
FG_NS=${FG_NS:-fg-client}
FG_DP_IF=${FG_DP_IF:-fg-dp}
FG_CL_IF=${FG_CL_IF:-fg-cl}
FG_CL_ADDR=${FG_CL_ADDR:-198.18.0.1}
FG_DP_ADDR=${FG_DP_ADDR:-198.18.0.2}
FG_PREFIX_LEN=${FG_PREFIX_LEN:-24}

fg_heading() {
	if [ -t 1 ]; then
		printf '\n\033[1m== %s ==\033[0m\n' "$*"
	else
		printf '\n== %s ==\n' "$*"
	fi
}

fg_info() {
	printf '%s\n' "$*"
}

fg_warn() {
	printf 'warning: %s\n' "$*" >&2
}

fg_die() {
	printf 'error: %s\n' "$*" >&2
	exit 1
}

fg_require_root() {
	[ "$(id -u)" -eq 0 ] ||
		fg_die "$(basename "$0") must run as root (network namespaces, DPDK); try: sudo $0 $*"
}

# fg_ipv4_in_testnet ADDR: true when ADDR is a dotted quad inside 198.18.0.0/15.
fg_ipv4_in_testnet() {
	local a b c d
	[[ $1 =~ ^([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})$ ]] || return 1
	a=${BASH_REMATCH[1]} b=${BASH_REMATCH[2]} c=${BASH_REMATCH[3]} d=${BASH_REMATCH[4]}
	((a == 198 && (b == 18 || b == 19) && c <= 255 && d <= 255))
}

# fg_check_names: dies with a message when a name or address of the test network is unusable.
fg_check_names() {
	local n
	for n in "$FG_DP_IF" "$FG_CL_IF"; do
		# IFNAMSIZ is 16 with the NUL; no dots, so sysctl paths stay unambiguous.
		[[ $n =~ ^[A-Za-z0-9_-]{1,15}$ ]] ||
			fg_die "interface name '$n' must be 1-15 letters, digits, '-' or '_'"
	done
	[[ $FG_NS =~ ^[A-Za-z0-9_-]{1,64}$ ]] || fg_die "namespace name '$FG_NS' is not a plain name"
	[ "$FG_DP_IF" != "$FG_CL_IF" ] || fg_die "FG_DP_IF and FG_CL_IF must differ"
	fg_ipv4_in_testnet "$FG_CL_ADDR" ||
		fg_die "FG_CL_ADDR=$FG_CL_ADDR is not an address in 198.18.0.0/15"
	fg_ipv4_in_testnet "$FG_DP_ADDR" ||
		fg_die "FG_DP_ADDR=$FG_DP_ADDR is not an address in 198.18.0.0/15"
	[ "$FG_CL_ADDR" != "$FG_DP_ADDR" ] || fg_die "FG_CL_ADDR and FG_DP_ADDR must differ"
	if ! [[ $FG_PREFIX_LEN =~ ^[0-9]+$ ]] || ((FG_PREFIX_LEN < 15 || FG_PREFIX_LEN > 30)); then
		fg_die "FG_PREFIX_LEN=$FG_PREFIX_LEN must be 15..30"
	fi
}

# fg_ns_exec CMD...: runs CMD inside the client namespace.
fg_ns_exec() {
	ip netns exec "$FG_NS" "$@"
}

# fg_wait_line FILE REGEX PID TIMEOUT_S: waits until an extended REGEX matches a line of FILE.
# Returns 0 when it does, 1 when PID exited first, 2 after TIMEOUT_S seconds.
fg_wait_line() {
	local file=$1 re=$2 pid=$3 deadline=$((SECONDS + $4))
	while ((SECONDS < deadline)); do
		if [ -f "$file" ] && grep -Eq -- "$re" "$file"; then
			return 0
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			# One more look: the line may have been written just before the exit.
			grep -Eq -- "$re" "$file" 2>/dev/null && return 0
			return 1
		fi
		sleep 0.1
	done
	return 2
}

# fg_stop_pid PID TIMEOUT_S: sends SIGTERM to a child of this shell, waits up to TIMEOUT_S seconds,
# then SIGKILL. Sets FG_STOP_RC to the child's exit status (128+signal when killed by one).
fg_stop_pid() {
	local pid=$1 deadline=$((SECONDS + $2))
	FG_STOP_RC=0
	kill -TERM "$pid" 2>/dev/null || true
	while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		fg_warn "pid $pid still running after SIGTERM; sending SIGKILL"
		kill -KILL "$pid" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || FG_STOP_RC=$?
}

# fg_lcores: the EAL core list, main lcore plus one worker. Override with FG_LCORES.
fg_lcores() {
	if [ -n "${FG_LCORES:-}" ]; then
		printf '%s\n' "$FG_LCORES"
	elif [ "$(nproc)" -ge 2 ]; then
		printf '0,1\n'
	else
		# One CPU: both lcores share it (slow, but the data plane still runs).
		printf '0@0,1@0\n'
	fi
}

# fg_dp_start EXE PREFIX LOG [APP ARGS...]: starts the data plane in the background on $FG_DP_IF
# through net_af_packet, without hugepages or PCI, logging stdout and stderr to LOG. The array
# FG_DP_EAL_EXTRA, when set, adds EAL options (e.g. a second port: --vdev net_memif0,...).
# Sets FG_DP_PID, and FG_DP_CMD to the command line. The caller waits for the ready line and
# stops it with fg_stop_pid.
fg_dp_start() {
	local exe=$1 prefix=$2 log=$3 lcores lopt=-l
	shift 3
	lcores=$(fg_lcores)
	[[ $lcores != *@* ]] || lopt=--lcores
	FG_DP_CMD=("$exe" "$lopt" "$lcores" --no-huge -m "${FG_MEM_MB:-512}" --no-pci
		--file-prefix "$prefix" --vdev "net_af_packet0,iface=$FG_DP_IF"
		${FG_DP_EAL_EXTRA+"${FG_DP_EAL_EXTRA[@]}"} -- "$@")
	"${FG_DP_CMD[@]}" >"$log" 2>&1 &
	FG_DP_PID=$!
}

# fg_telemetry PREFIX COMMAND: prints the JSON reply of the DPDK application with that file
# prefix, on one line; fails when there is no JSON reply.
fg_telemetry() {
	local out
	out=$(printf '%s\n' "$2" | timeout 10 dpdk-telemetry.py -f "$1" 2>&1) || true
	case $out in
	'{'*) printf '%s\n' "$out" ;;
	*)
		printf 'telemetry: %s\n' "${out:-no reply}" >&2
		return 1
		;;
	esac
}

# fg_dpdk_runtime_dir PREFIX: where EAL keeps the runtime files of that prefix (as root).
fg_dpdk_runtime_dir() {
	printf '%s/dpdk/%s\n' "${RUNTIME_DIRECTORY:-/var/run}" "$1"
}

# fg_json FILE PATH...: from the JSON document in FILE (flashgate-loadgen --report-json,
# flashgate-dataplane --counters-json), the value at each dotted PATH ("answers.200",
# "users.done", "total.drops.tx_full", "per_worker.0.lcore"), one line each: a number as the file
# writes it, a string as it is, an object as "name=value ..." of its members in order, and an
# empty line where the path is not there (or FILE is not JSON).
fg_json() {
	python3 - "$@" <<'PY'
import json, sys
try:
    with open(sys.argv[1]) as f:
        doc = json.load(f, parse_float=str, parse_int=str)
except (OSError, ValueError):
    doc = None
def show(v):
    if isinstance(v, dict):
        return " ".join("%s=%s" % (k, show(w)) for k, w in v.items())
    if isinstance(v, list):
        return " ".join(show(w) for w in v)
    if isinstance(v, bool):
        return "true" if v else "false"
    return "" if v is None else str(v)
for path in sys.argv[2:]:
    v = doc
    for k in path.split("."):
        if isinstance(v, dict):
            v = v.get(k)
        elif isinstance(v, list) and k.isdigit() and int(k) < len(v):
            v = v[int(k)]
        else:
            v = None
    print(show(v))
PY
}

# fg_lg_field FILE KEY WORD: from flashgate-loadgen's JSON report in FILE (--report-json,
# docs/loadgen.md), the figure WORD of KEY ("users done", "answers 200", "outcomes reserved",
# "flood_one_ip 429": a flood's answers by status); nothing when it is not there.
fg_lg_field() {
	local v
	v=$(fg_json "$1" "$2.$3")
	[ -n "$v" ] || v=$(fg_json "$1" "$2.answers.$3")
	printf '%s\n' "$v"
}

# fg_lg_value FILE KEY: the figure KEY of the loadgen's JSON report in FILE ("elapsed_s",
# "requests_per_s", "unexpected_status").
fg_lg_value() { fg_json "$1" "$2"; }

# fg_meson_configure DIR [MESON SETUP OPTION]...: configures the meson build directory DIR (a
# path relative to the repository root, the current directory) when it is not yet, again when a
# meson.build or meson_options.txt changed since (ninja would too, but not after a meson run that
# died half way), and anew (--wipe) when its old configuration cannot be read at all (e.g. written
# by another meson version). Returns meson's status.
fg_meson_configure() {
	local dir=$1
	shift
	if [ ! -f "$dir/meson-private/coredata.dat" ]; then
		meson setup "$@" "$dir"
	elif [ ! -f "$dir/build.ninja" ] || [ -n "$(find . -path "./$dir" -prune -o \
		\( -name meson.build -o -name meson_options.txt \) -newer "$dir/build.ninja" -print |
		head -n 1)" ]; then
		meson setup --reconfigure "$@" "$dir" || meson setup --wipe "$@" "$dir"
	else
		echo "$dir is configured"
	fi
}

# fg_free_ports N: prints N distinct TCP ports that are free on 127.0.0.1 now, one a line (another
# process may take one before it is bound again: pick them right before starting what binds).
fg_free_ports() {
	python3 -c '
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print("\n".join(str(s.getsockname()[1]) for s in socks))' "$1"
}

# fg_items_sold SOCK EVENT STOCK: the items of EVENT (STOCK at the start) sold and their buyers,
# read from Redis (its Unix socket SOCK) at one moment (one script): "items sold (Redis): S of
# STOCK, to B buyers", and when orders expired unpaid and gave their items back (the released
# buyers, so that S = B - R), ", R of whom let their order expire unpaid and gave the item back".
# Read one by one while orders expire, the figures did not add up (712 sold, to 1000 buyers,
# 290 of whom released). Nothing printed and non-zero when Redis cannot be read.
fg_items_sold() {
	local f
	mapfile -t f < <(redis-cli -s "$1" eval "$(
		cat <<'LUA'
return {tonumber(redis.call('GET', KEYS[1]) or '0') or 0, redis.call('HLEN', KEYS[2]),
  redis.call('SCARD', KEYS[3])}
LUA
	)" 3 "fg:{$2}:stock" "fg:{$2}:result" "fg:{$2}:released" 2>/dev/null)
	[ "${#f[@]}" = 3 ] && [[ "${f[0]}${f[1]}${f[2]}" =~ ^[0-9]+$ ]] || return 1
	echo "items sold (Redis): $(($3 - f[0])) of $3, to ${f[1]} buyers$( ((f[2] == 0)) ||
		echo ", ${f[2]} of whom let their order expire unpaid and gave the item back")"
}

# fg_waiting_shown SOCK EVENT USER [NOW_MS]: what the sale page of USER, no buyer of EVENT, must
# end on, read from Redis (its Unix socket SOCK) at one moment (one script): "waiting" while USER
# is on the draw's waiting list and an item may still come back to it, "sold_out" otherwise
# (docs/api.md): not on the list, the sale closed or ended (the window key, at NOW_MS, now by
# default), or no item can come back any more: the stock is 0 and every item held is paid (the
# control plane's final, store_draw_waiting(): the buyers less those released, at most the draw
# key's "paid"). Nothing printed and non-zero when Redis cannot be read.
fg_waiting_shown() {
	local now=${4:-$(date +%s%3N)}
	redis-cli -s "$1" eval "$(
		cat <<'LUA'
local me, on = ARGV[1] .. ':', false
for _, w in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  if string.sub(w, 1, #me) == me then on = true break end
end
if not on then return 'sold_out' end
local win = redis.call('GET', KEYS[2])
if win == 'closed' then return 'sold_out' end
local ends = win and string.match(win, '^%d+ (%d+)$')
if ends and tonumber(ARGV[2]) >= tonumber(ends) then return 'sold_out' end
local stock = tonumber(redis.call('GET', KEYS[3]) or '')
local held = redis.call('HLEN', KEYS[4]) - redis.call('SCARD', KEYS[5])
local paid = tonumber(redis.call('HGET', KEYS[6], 'paid') or '0') or 0
if stock and stock <= 0 and held <= paid then return 'sold_out' end
return 'waiting'
LUA
	)" 6 "fg:{$2}:wait" "fg:{$2}:window" "fg:{$2}:stock" "fg:{$2}:result" "fg:{$2}:released" \
		"fg:{$2}:draw" "$3" "$now" | grep -x 'waiting\|sold_out'
}
