#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# scripts/demo --cluster (run through scripts/demo): the demo's sale across scripts/cluster's
# hosts (docs/ha.md, "A multi-host sale on one machine"). It builds the daemons, brings the
# cluster up (an HAProxy edge, two data planes, two control planes, three Redis with Sentinels,
# a PostgreSQL primary and its synchronous standby, the order writer, a client host), sets one
# first-come sale up, and lets --users buyers (scripts/demo-shopper.py, each token, reserve and
# result poll its own request) rush --stock items from the client host through the edge. A
# quarter of the way through, one host is lost (--lose, cp1 by default: every process SIGKILLed, its disk
# gone); the sale goes on. At the end: the buyers' outcomes, where the data planes went, and
# every invariant (scripts/check-invariants against the cluster's Redis and PostgreSQL
# primaries) PASS or FAIL. The cluster is taken down again, also on failure or Ctrl-C, unless
# --keep.
#
# A smaller sale than the default demo's (300 items, 1,000 buyers by default): the buyers are
# Python threads through one HAProxy and two data planes sharing one core, not the packet
# generator over memif.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "$FG_ROOT"

usage() {
	cat <<EOF
usage: scripts/demo --cluster [--stock N] [--users M] [--lose HOST|none] [--keep]

The demo's sale across scripts/cluster's hosts, buyers through the HAProxy edge; one host lost
a quarter of the way through. Run as root.

  --stock N      items on sale, 1..100000 (default 300)
  --users M      buyers, 1..100000 (default 1000)
  --lose HOST    the host lost when a quarter of the items are decided: cp1 (default), dp1, dp2,
                 ow, or none
  --keep         leave the cluster up at the end (scripts/cluster status, down)

Environment: FGC_DIR (default /var/tmp/fgc-demo), FGC_PREFIX (default fgd), FG_BUILD_DIR.
EOF
}

stock=300 users=1000 lose=cp1 keep=0
number() {
	if ! [[ $2 =~ ^[0-9]{1,6}$ ]] || ((10#$2 < $3 || 10#$2 > $4)); then
		fg_die "$1 must be a whole number in $3..$4, got '$2'"
	fi
	printf '%d\n' "$((10#$2))"
}
while [ $# -gt 0 ]; do
	case $1 in
	--stock | --users | --lose)
		[ $# -ge 2 ] || fg_die "$1 needs a value"
		case $1 in
		--stock) stock=$(number "$1" "$2" 1 100000) ;;
		--users) users=$(number "$1" "$2" 1 100000) ;;
		--lose)
			[[ $2 =~ ^(cp1|dp1|dp2|ow|none)$ ]] || fg_die "--lose: cp1, dp1, dp2, ow or none, got '$2'"
			lose=$2
			;;
		esac
		shift 2
		;;
	--stock=* | --users=* | --lose=*) set -- "${1%%=*}" "${1#*=}" "${@:2}" ;;
	--keep) keep=1 && shift ;;
	-h | --help) usage && exit 0 ;;
	*)
		# Said on one line: the whole usage on stderr would bury what was wrong.
		printf "error: unknown option or argument '%s' (%s --help lists the options)\n" \
			"$1" "scripts/demo --cluster" >&2
		exit 2
		;;
	esac
done

fg_require_root --cluster
export FGC_DIR=${FGC_DIR:-/var/tmp/fgc-demo} FGC_PREFIX=${FGC_PREFIX:-fgd}
export FG_BUILD_DIR=${FG_BUILD_DIR:-build}
cluster=./scripts/cluster
ev=1
tmp=
demo_t0=$SECONDS
heading() { fg_heading "$1   [$((SECONDS - demo_t0)) s]"; }

cleanup() {
	local rc=$?
	trap '' INT TERM
	trap - EXIT
	[ -z "${FGC_SHOP_PID:-}" ] || fg_stop_pid "$FGC_SHOP_PID" 5 || true
	if ((keep)) && [ "$rc" -eq 0 ]; then
		echo "The cluster stays up (--keep): FGC_DIR=$FGC_DIR $cluster status; stop it with:"
		echo "  FGC_DIR=$FGC_DIR $cluster down"
	else
		$cluster down || true
	fi
	[ -z "$tmp" ] || rm -rf "$tmp"
	[ "$rc" -eq 0 ] || echo "demo stopped (status $rc); the cluster was taken down" >&2
	exit "$rc"
}

heading "Build ($FG_BUILD_DIR)"
[ -f "$FG_BUILD_DIR/meson-private/coredata.dat" ] || meson setup "$FG_BUILD_DIR"
ninja -C "$FG_BUILD_DIR" dataplane/flashgate-dataplane controlplane/flashgate-controlplane \
	flashgatectl/flashgatectl order-writer/flashgate-order-writer
if [ -f "$FGC_DIR/cluster.env" ]; then
	fg_die "a cluster is up in $FGC_DIR already; take it down with: FGC_DIR=$FGC_DIR $cluster down"
fi

trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
tmp=$(mktemp -d /tmp/fg-demo-cluster.XXXXXX)

heading "The cluster: one network namespace a host, one bridge ($cluster up)"
$cluster up
$cluster hosts | column -t
$cluster status || true

# shellcheck source=scripts/cluster.d/sale.sh
. "$FG_ROOT/scripts/cluster.d/sale.sh"
fgc_sale_env

heading "The sale, set up on cp1 (flashgatectl --socket $FGC_ADMIN)"
(umask 077 && od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$tmp/auth.key")
fgc_sale_open "$ev" "$stock" "$tmp/auth.key"
$cluster exec client curl -s --max-time 5 "$FGC_EDGE_URL/api/v1/events/$ev"
echo
fgc_sale_sessions "$tmp/auth.key" 1000001 "$users" >"$tmp/sessions"

heading "$users buyers rush $stock items from the client host through the edge ($FGC_EDGE_URL)"
fgc_sale_shop "$ev" "$tmp/sessions" "$tmp/shop.json" "$tmp/shop.log" 8 240
lost_at='' shown=0
while kill -0 "$FGC_SHOP_PID" 2>/dev/null; do
	sleep 0.3
	decided=$(fgc_sale_decided "$ev")
	if ((SECONDS >= shown + 2)); then
		echo "  $((SECONDS - demo_t0)) s: $decided of $stock items decided"
		shown=$SECONDS
	fi
	# A small sale is over in seconds: the host goes when a quarter is decided.
	if [ "$lose" != none ] && [ -z "$lost_at" ] && ((decided * 4 >= stock)); then
		heading "Host $lose lost: every process SIGKILLed, its disk gone ($cluster kill $lose)"
		$cluster kill "$lose"
		lost_at=$decided
		if [ "$lose" = ow ]; then
			# Orders wait in Redis's outbox meanwhile; a new order writer claims them.
			sleep 3
			$cluster replace ow
		fi
		# The admin commands go to a control plane that runs.
		fgc_sale_env
	fi
done
wait "$FGC_SHOP_PID" || fg_die "the buyers did not finish; see $tmp/shop.log"
FGC_SHOP_PID=

heading "Outcome"
python3 - "$tmp/shop.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print("  buyers: %d in %.1f s; holding an item: %d" % (d["buyers"], d["wall_s"], d["holding"]))
print("  outcomes: " + ", ".join("%s %d" % kv for kv in d["outcomes"].items()))
for kind, answers in d["answers"].items():
    print("  %-8s answers: %s" % (kind, " ".join("%s=%d" % kv for kv in answers.items())))
PY
[ -z "$lost_at" ] || echo "  $lost_at items were decided when $lose was lost; $(fgc_sale_decided "$ev") at the end"
for h in dp1 dp2; do
	moved=$(grep -o 'moving to tcp://[0-9.:]*' "$FGC_DIR/logs/$h.log" | tail -n 1 || true)
	echo "  $h: ${moved:-stayed with cp1}"
done
$cluster status || true

heading "Invariants (scripts/check-invariants on the Redis primary $FGC_REDIS_PRIMARY and the PostgreSQL primary $FGC_PG_PRIMARY)"
fgc_sale_ctl event close "$ev" >/dev/null
rc=0
fgc_sale_invariants "$ev" "$tmp/sessions" "$tmp/shop.json" || rc=$?
if [ "$rc" -eq 0 ]; then
	echo "every invariant holds"
else
	echo "an invariant does not hold (above)" >&2
	exit 1
fi
