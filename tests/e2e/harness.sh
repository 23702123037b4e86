# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# shellcheck disable=SC2034 # E2E_* variables are for the tests that source this
#
# Sourced by tests/e2e/test_*.sh. Gives each test TAP output, its own test network (a namespace
# and veth pair named after the test and its pid), a data plane on it with its own EAL file
# prefix and config, and a cleanup that always runs. Usage:
#
#   . "$(dirname "$0")/harness.sh"
#   e2e_begin TAG "$@"          # TAG: 2-4 lowercase letters; $1 is the data plane executable
#   tap_is "$got" 200 "GET /healthz answers 200"
#   e2e_stop_dataplane           # two checks: exit status 0 on SIGTERM, final counters printed
#   tap_done
#
# A test that needs a control plane sets E2E_DP_ARGS (extra "-s SECTION.KEY=VALUE" for the data
# plane) before e2e_begin, picks ports with fg_free_ports, and plays the control plane with the
# test peer (tests/peer/fg_testpeer.c): e2e_peer_start, e2e_peer_cmd, e2e_peer_stop.
#
# A test that needs Redis, PostgreSQL and a control plane uses the tests' library
# (tests/lib/testlib.sh, sourced here: TAP, t_services_up, t_cp_start, ctl, ...).
#
# Every wait is bounded; nothing is sent anywhere but the test's own namespace.

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$E2E_DIR/../lib/testlib.sh"

E2E_READY_TIMEOUT_S=${E2E_READY_TIMEOUT_S:-60}
E2E_PORT=80
E2E_CLOSED_PORT=9 # a port the data plane does not listen on

E2E_DP_PID=
E2E_TMP=
E2E_PREFIX=
E2E_PEER_PID=
E2E_PEER_FD=
T_BAIL_HOOK=e2e_show_log

e2e_show_log() {
	[ -n "$E2E_TMP" ] && [ -s "$E2E_TMP/dataplane.log" ] || return 0
	tap_diag "last lines of the data plane's log:"
	tail -n 25 "$E2E_TMP/dataplane.log" | sed 's/^/#   /'
}

# Namespaces of earlier runs that were killed before their cleanup (SIGKILL on a timeout)
# carry the dead test's pid in their name; remove those, and nothing else.
e2e_reap_stale() {
	local ns pid p
	for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^fg-e2e-[a-z]+-[0-9]+$'); do
		pid=${ns##*-}
		kill -0 "$pid" 2>/dev/null && continue
		for p in $(ip netns pids "$ns" 2>/dev/null); do
			kill -KILL "$p" 2>/dev/null || true
		done
		ip netns del "$ns" 2>/dev/null || true
		rm -rf "$(fg_dpdk_runtime_dir "$ns")"
	done
}

# e2e_cleanup: the EXIT trap: the library's t_stop_all (hooks, pids, control plane, services),
# the data plane, the peer, the test network, then t_cleanup (the directory, t_finish).
e2e_cleanup() {
	trap - EXIT INT TERM
	t_stop_all
	if [ -n "$E2E_DP_PID" ] && kill -0 "$E2E_DP_PID" 2>/dev/null; then
		fg_stop_pid "$E2E_DP_PID" 10 >/dev/null 2>&1
	fi
	[ -z "$E2E_PEER_PID" ] || e2e_peer_stop >/dev/null 2>&1
	"$FG_ROOT/scripts/testnet" down >/dev/null 2>&1 || printf '# testnet down failed\n'
	[ -z "$E2E_PREFIX" ] || rm -rf "$(fg_dpdk_runtime_dir "$E2E_PREFIX")"
	t_cleanup
}

# e2e_write_config FILE: a config with one open and one upcoming sale, whatever the date.
# Times are Unix seconds (flashgate.conf also takes RFC 3339).
e2e_write_config() {
	local now
	now=$(date +%s)
	cat >"$1" <<EOF
# written by tests/e2e/harness.sh
[dataplane]
address = $FG_DP_ADDR
listen_ports = $E2E_PORT

[event.1]
name = e2e open sale
starts_at = $((now - 3600))
ends_at = $((now + 3600))
stock = 100

[event.2]
name = e2e upcoming sale
starts_at = $((now + 86400))
ends_at = $((now + 2 * 86400))
stock = 100
EOF
}

# e2e_config_add SRC DST SECTION LINE: SRC with LINE under [SECTION] (the section added when
# missing), written to DST with mode 0600: a secret goes in a config file, never on a command
# line (the programs refuse -s for a secret key).
e2e_config_add() {
	local src=$1 dst=$2 sec=$3 line=$4
	(
		umask 077
		if grep -qxF "[$sec]" "$src"; then
			awk -v s="[$sec]" -v l="$line" '{ print } $0 == s { print l }' "$src"
		else
			cat "$src"
			printf '\n[%s]\n%s\n' "$sec" "$line"
		fi
	) >"$dst.tmp" && mv "$dst.tmp" "$dst"
}

# e2e_begin TAG EXE: sets up the network and the data plane, or ends the test with a failure.
e2e_begin() {
	local tag=$1 exe=${2:-} rc t
	if [ "$(id -u)" -ne 0 ]; then
		echo "1..0 # SKIP end-to-end tests need root (network namespaces, AF_PACKET)"
		exit 0
	fi
	[[ $tag =~ ^[a-z]{2,4}$ ]] || {
		echo "Bail out! bad test tag '$tag'"
		exit 1
	}
	export FG_NS="fg-e2e-$tag-$$"
	export FG_DP_IF="fgd$tag$$" FG_CL_IF="fgc$tag$$"
	export FG_CL_ADDR=198.18.10.1 FG_DP_ADDR=198.18.10.2 FG_PREFIX_LEN=24
	E2E_PREFIX=$FG_NS
	E2E_BASE="http://$FG_DP_ADDR"

	trap e2e_cleanup EXIT
	trap 'exit 143' TERM
	trap 'exit 130' INT

	if [ -z "$exe" ] || [ ! -x "$exe" ]; then
		tap_bail "data plane executable given as the first argument ('$exe')"
	fi
	[ -n "${E2E_TOOLS+set}" ] || E2E_TOOLS=()
	for t in ip ethtool curl python3 dpdk-telemetry.py timeout "${E2E_TOOLS[@]}"; do
		command -v "$t" >/dev/null || tap_bail "tool '$t' is installed (scripts/install-deps)"
	done
	E2E_TMP=$(mktemp -d "/tmp/fg-e2e-$tag.XXXXXX")
	T_TMP=$E2E_TMP
	e2e_reap_stale
	"$FG_ROOT/scripts/testnet" up >"$E2E_TMP/testnet.log" 2>&1 || {
		tap_diag "$(cat "$E2E_TMP/testnet.log")"
		tap_bail "scripts/testnet up"
	}
	e2e_write_config "$E2E_TMP/flashgate.conf"
	[ -n "${E2E_DP_ARGS+set}" ] || E2E_DP_ARGS=()
	fg_dp_start "$exe" "$E2E_PREFIX" "$E2E_TMP/dataplane.log" -c "$E2E_TMP/flashgate.conf" \
		"${E2E_DP_ARGS[@]}"
	E2E_DP_PID=$FG_DP_PID
	rc=0
	fg_wait_line "$E2E_TMP/dataplane.log" 'ready:' "$E2E_DP_PID" "$E2E_READY_TIMEOUT_S" || rc=$?
	case $rc in
	0)
		tap_ok 0 "data plane is ready"
		tap_diag "$(grep -m1 'ready:' "$E2E_TMP/dataplane.log")"
		;;
	1) tap_bail "data plane printed 'ready:' (it exited first)" ;;
	*) tap_bail "data plane printed 'ready:' within ${E2E_READY_TIMEOUT_S}s" ;;
	esac
}

# e2e_sale_begin TAG N DATAPLANE CONTROLPLANE FLASHGATECTL ORDER_WRITER [DP_ARGS...]: the start
# of a test of a sale through the data plane and a real control plane. N (at least 2) free
# ports in E2E_PORTS, the first two PULL_PORT and PUB_PORT (the links, ZeroMQ on loopback);
# the data plane up (e2e_begin TAG, with E2E_TOOLS as the test set them) linked to them, with
# a small limit table, purchase tokens of 10 minutes and DP_ARGS after these; CP_EXE, CTL_EXE
# and OW_EXE set and checked; Redis and PostgreSQL up (t_services_up); T_CP, T_CTL (answers as
# TAP comments), T_PULL and T_PUB set for t_cp_up, which the test calls with its own options.
e2e_sale_begin() {
	local tag=$1 n=$2 dp=$3
	CP_EXE=${4:-} CTL_EXE=${5:-} OW_EXE=${6:-}
	shift 6 || shift $#
	mapfile -t E2E_PORTS < <(fg_free_ports "$n")
	PULL_PORT=${E2E_PORTS[0]} PUB_PORT=${E2E_PORTS[1]}
	E2E_DP_ARGS=(-s "bridge.push_endpoint=tcp://127.0.0.1:$PULL_PORT"
		-s "bridge.sub_endpoint=tcp://127.0.0.1:$PUB_PORT" -s admission.limit_table_log2=12
		-s admission.purchase_token_ttl=10m "$@")
	e2e_begin "$tag" "$dp"
	[ -x "$CP_EXE" ] && [ -x "$CTL_EXE" ] && [ -x "$OW_EXE" ] ||
		tap_bail "control plane, flashgatectl and order writer given"
	t_services_up "$E2E_TMP/svc"
	T_CP=$CP_EXE T_CTL=$CTL_EXE T_CTL_OUT=diag
	T_PULL=tcp://127.0.0.1:$PULL_PORT T_PUB=tcp://127.0.0.1:$PUB_PORT
}

# e2e_curl NAME URL [CURL ARGS...]: one request from the client namespace. Sets E2E_CODE to the
# status code (000: no answer) and E2E_CURL_RC to curl's exit status; headers go to
# $E2E_TMP/NAME.h, the body to $E2E_TMP/NAME.b.
e2e_curl() {
	local name=$1 url=$2
	shift 2
	E2E_CURL_RC=0
	: >"$E2E_TMP/$name.h"
	: >"$E2E_TMP/$name.b"
	E2E_CODE=$(fg_ns_exec curl -s --connect-timeout 3 --max-time 5 -D "$E2E_TMP/$name.h" \
		-o "$E2E_TMP/$name.b" -w '%{http_code}' "$@" "$url") || E2E_CURL_RC=$?
}

# e2e_has_header NAME REGEX: true when a header line of response NAME matches (case-insensitive).
e2e_has_header() {
	tr -d '\r' <"$E2E_TMP/$1.h" | grep -Eiq -- "$2"
}

# e2e_json_field NAME FIELD: prints a top-level field of response NAME's JSON body.
e2e_json_field() {
	python3 - "$E2E_TMP/$1.b" "$2" 2>/dev/null <<'EOF'
import json, sys
v = json.load(open(sys.argv[1])).get(sys.argv[2])
print("" if v is None else v)
EOF
}

# e2e_stats FILE: saves the reply of /flashgate/stats to FILE; fails when there is none.
e2e_stats() {
	fg_telemetry "$E2E_PREFIX" /flashgate/stats >"$1" 2>"$1.err"
}

# e2e_sale_end: the end of a sale test: the order writer (OW_PID), the control plane (CP_PID) and
# the data plane stopped with SIGTERM, each checked to exit 0, then tap_done.
e2e_sale_end() {
	fg_stop_pid "$OW_PID" 10
	tap_is "$FG_STOP_RC" 0 "order writer exits with status 0 on SIGTERM"
	OW_PID=
	fg_stop_pid "$CP_PID" 10
	tap_is "$FG_STOP_RC" 0 "control plane exits with status 0 on SIGTERM"
	CP_PID=
	e2e_stop_dataplane
	tap_done
}

# e2e_stop_dataplane: SIGTERM; checks that the data plane exits 0 and prints final counters.
e2e_stop_dataplane() {
	local log=$E2E_TMP/dataplane.log lines
	lines=$(wc -l <"$log")
	fg_stop_pid "$E2E_DP_PID" 20
	E2E_DP_PID=
	tap_is "$FG_STOP_RC" 0 "data plane exits with status 0 on SIGTERM"
	# After SIGTERM: a "final counters" line, then counts.
	tap_run "data plane prints its final counters on SIGTERM" \
		awk 'f && /[0-9]/ { n++ } /final counters/ { f = 1 } END { exit !(n > 0) }' \
		<(tail -n "+$((lines + 1))" "$log")
	[ "$tap_failed" -eq 0 ] || e2e_show_log
}

# e2e_telemetry_field COMMAND FIELD: prints one field of the data plane's telemetry reply to
# COMMAND (e.g. /flashgate/bridge ready); fails when there is no reply or no such field.
e2e_telemetry_field() {
	local reply
	reply=$(fg_telemetry "$E2E_PREFIX" "$1" 2>/dev/null) || return 1
	python3 -c '
import json, sys
v = json.loads(sys.argv[1]).get(sys.argv[2], {}).get(sys.argv[3])
if v is None:
    sys.exit(1)
print(v)' "$reply" "$1" "$2"
}

# e2e_peer_start EXE ARGS...: starts the test peer (a stand-in control plane) with its standard
# input on a FIFO that this shell holds open, so that it runs until e2e_peer_stop, and waits up to
# 10 s for its "ready" line. Sets E2E_PEER_PID. Its output goes to $E2E_TMP/peer.out (the replies
# to e2e_peer_cmd) and $E2E_TMP/peer.err. Returns 1 when it did not become ready.
e2e_peer_start() {
	local fifo=$E2E_TMP/peer.in
	rm -f "$fifo"
	mkfifo -m 600 "$fifo"
	: >"$E2E_TMP/peer.out"
	"$@" <"$fifo" >"$E2E_TMP/peer.out" 2>"$E2E_TMP/peer.err" &
	E2E_PEER_PID=$!
	# Read-write: the open does not wait for the reader, and the peer sees end-of-file (and
	# exits) once this descriptor is closed.
	exec {E2E_PEER_FD}<>"$fifo"
	fg_wait_line "$E2E_TMP/peer.out" '^ready$' "$E2E_PEER_PID" 10
}

# e2e_peer_cmd COMMAND: sends one command line to the test peer and sets E2E_PEER_REPLY to its
# one-line answer ("ok ..." or "err ..."). Returns 0 when the answer starts with "ok", 1 otherwise
# (also when none came within 5 s).
e2e_peer_cmd() {
	local before deadline=$((SECONDS + 5))
	E2E_PEER_REPLY=
	[ -n "$E2E_PEER_FD" ] || return 1
	before=$(wc -l <"$E2E_TMP/peer.out")
	printf '%s\n' "$1" >&"$E2E_PEER_FD"
	while (($(wc -l <"$E2E_TMP/peer.out") <= before)); do
		((SECONDS < deadline)) || return 1
		sleep 0.05
	done
	E2E_PEER_REPLY=$(sed -n "$((before + 1))p" "$E2E_TMP/peer.out")
	[[ $E2E_PEER_REPLY == ok* ]]
}

# e2e_peer_stat NAME: prints one counter of the peer's "stats" answer (reserves, dups, batches,
# queries, snapshot_requests, results); fails when there is no answer.
e2e_peer_stat() {
	e2e_peer_cmd stats || return 1
	sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$E2E_PEER_REPLY" | grep .
}

# e2e_peer_stop: asks the peer to quit, closes its standard input and waits for it, with SIGTERM
# then SIGKILL after 5 s. Sets E2E_PEER_RC to its exit status.
e2e_peer_stop() {
	E2E_PEER_RC=
	[ -n "$E2E_PEER_PID" ] || return 0
	if [ -n "$E2E_PEER_FD" ]; then
		# "quit" rather than end-of-file alone: fg_testpeer polls its input with zmq_poll(),
		# which reports a closed pipe as an error, not as input, so EOF alone may go unseen.
		e2e_peer_cmd quit || true
		exec {E2E_PEER_FD}>&-
		E2E_PEER_FD=
	fi
	local deadline=$((SECONDS + 5))
	while kill -0 "$E2E_PEER_PID" 2>/dev/null && ((SECONDS < deadline)); do
		sleep 0.1
	done
	fg_stop_pid "$E2E_PEER_PID" 5
	E2E_PEER_RC=$FG_STOP_RC
	E2E_PEER_PID=
}

# e2e_sale_open EVENT: true when the data plane shows sale EVENT open (for e2e_wait_until).
e2e_sale_open() {
	e2e_curl ev "$E2E_BASE/api/v1/events/$1"
	grep -q '"state":"open"' "$E2E_TMP/ev.b"
}

# e2e_open_sale EVENT NAME STOCK AUTH_HEX: through the test's ctl function (flashgatectl on its
# admin socket): the shop's auth key AUTH_HEX as key 1, a sale key, limits no honest buyer
# reaches, and event EVENT of STOCK items created, preheated and opened. Fails when a step does.
e2e_open_sale() {
	ctl keys auth-set 1 <<<"$4" >/dev/null && ctl keys rotate >/dev/null &&
		ctl limits set ip 100000/4000 user 20/20 device 20/20 forward 100000 >/dev/null &&
		ctl event create "$1" --name "$2" --stock "$3" --starts-at 2026-01-01T00:00:00Z \
			--ends-at 2036-01-01T00:00:00Z --pay-window 15m >/dev/null &&
		ctl event preheat "$1" >/dev/null && ctl event open "$1" >/dev/null
}

# e2e_buy EVENT USER...: for each user, a session token (ctlj session-token), a purchase token
# and a reserve from the client namespace, answered 202; fails at the first user that is not.
e2e_buy() {
	local ev=$1 u s tok path
	shift
	for u in "$@"; do
		s=$(ctlj session-token "$u" | jget token)
		e2e_curl tok$u "$E2E_BASE/api/v1/events/$ev/token" -X POST -H "Authorization: Bearer $s"
		[ "$E2E_CODE" = 200 ] || return 1
		tok=$(jget token <"$E2E_TMP/tok$u.b")
		path=$(jget reserve_path <"$E2E_TMP/tok$u.b")
		e2e_curl res$u "$E2E_BASE$path" -X POST -H "X-Flash-Token: $tok"
		[ "$E2E_CODE" = 202 ] || return 1
	done
}

# e2e_relay PID FILE ERRFILE WHAT: follows FILE, the output of a helper script (process PID, a
# child of this shell, e.g. run in the client namespace), until PID exits: each of its lines
# "ok DESC" or "not ok DESC" is one check here, "skip DESC # SKIP REASON" one passed check,
# "# ..." a comment printed as it is; a number after "ok " or "not ok " (tests/lib/fgtest.py's
# TAP) is left out. Then one check that it exited 0 ("WHAT ran to its end"),
# with the end of ERRFILE, its standard error, when it did not.
e2e_relay() {
	local line rc=0
	while IFS= read -r line; do
		case $line in
		"ok "*)
			line=${line#ok }
			[[ $line =~ ^[0-9]+\ -\ (.*)$ ]] && line=${BASH_REMATCH[1]}
			tap_ok 0 "$line"
			;;
		"not ok "*)
			line=${line#not ok }
			[[ $line =~ ^[0-9]+\ -\ (.*)$ ]] && line=${BASH_REMATCH[1]}
			tap_ok 1 "$line"
			;;
		"skip "*)
			tap_n=$((tap_n + 1))
			printf 'ok %d - %s\n' "$tap_n" "${line#skip }"
			;;
		"# "*) printf '%s\n' "$line" ;;
		esac
	done < <(tail -n +1 -f --pid="$1" "$2")
	wait "$1" || rc=$?
	tap_is "$rc" 0 "$4 ran to its end"
	[ "$rc" -eq 0 ] || tap_diag "$(tail -n 30 "$3")"
}

# e2e_invariants ARGS...: runs scripts/check-invariants ARGS, its output in $E2E_TMP/inv.out,
# and prints one TAP line for each check it must print given ARGS: ok for its PASS line, not ok
# for its FAIL line or for no line at all (it stopped early); then one for its exit status 0. A
# PASS or FAIL line not in the list below (a check added since) is one TAP line too.
e2e_invariants() {
	local out=$E2E_TMP/inv.out rc=0 name line found
	local -a want=(
		"1 orders (pending + paid) <= stock"
		"1 Redis stock >= 0"
		"1 PostgreSQL available >= 0"
		"2 users with two orders"
		"3 PostgreSQL: initial == available + pending + paid"
		"3 Redis: stock + buyers - released == initial"
		"2 users with two outbox entries"
		"4 outbox users without an order"
		"4 Redis buyers without an order"
		"4 orders without a Redis buyer"
	)
	case " $* " in *" --users "* | *" --users-file "*)
		want+=("5 orders of users without a valid token") ;;
	esac
	case " $* " in *" --told "*) want+=("users told they hold an item == users with an order") ;; esac
	case " $* " in *" --admin-socket "*) want+=("3 reconcile: Redis agrees with PostgreSQL") ;; esac
	"$FG_ROOT/scripts/check-invariants" "$@" >"$out" 2>&1 || rc=$?
	for name in "${want[@]}"; do
		found=
		while IFS= read -r line; do
			case $line in "PASS  $name "* | "FAIL  $name "*)
				found=$line
				break
				;;
			esac
		done <"$out"
		case $found in
		PASS*) tap_ok 0 "invariant: $name" ;;
		FAIL*) tap_ok 1 "invariant: ${found#FAIL  }" ;;
		*) tap_ok 1 "invariant: $name (never checked: check-invariants printed no line for it)" ;;
		esac
	done
	while IFS= read -r line; do
		case $line in
		PASS\ * | FAIL\ *) ;;
		*)
			tap_diag "$line"
			continue
			;;
		esac
		for name in "${want[@]}"; do
			case $line in "PASS  $name "* | "FAIL  $name "*) continue 2 ;; esac
		done
		if [ "${line%% *}" = PASS ]; then
			tap_ok 0 "invariant: ${line#PASS  }"
		else
			tap_ok 1 "invariant: ${line#FAIL  }"
		fi
	done <"$out"
	tap_is "$rc" 0 "scripts/check-invariants exits 0 (every invariant holds)"
}
