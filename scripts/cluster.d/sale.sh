# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# shellcheck disable=SC2034 # FGC_SHOP_PID is for the scripts that source this
#
# A sale across scripts/cluster's hosts, shared by `scripts/demo --cluster` and
# tests/e2e/test_cluster.sh. Source it after scripts/lib.sh with FGC_DIR set to a cluster that
# is up (scripts/cluster up); every function returns non-zero with a message on stderr when a
# step fails.
#
# fgc_sale_env: the cluster's current primaries and admin socket (scripts/cluster env) into
#   the shell: FG_REDIS_SOCK, FG_PG_HOST, FG_PG_PORT, FGC_ADMIN, FGC_EDGE_URL, FGC_BUILD, ...
# fgc_sale_ctl ARGS...: flashgatectl ARGS on $FGC_ADMIN (the running control plane's socket).
# fgc_sale_open EVENT STOCK AUTH_FILE: the shop's auth key (AUTH_FILE, hex, mode 0600) as key 1,
#   a sale key, limits that let every buyer through the one edge address, event EVENT of STOCK
#   items created, preheated and opened on $FGC_ADMIN's control plane (cp1); waits until cp2
#   holds it too (it follows cp1's changes) and the edge shows the sale open.
# fgc_sale_sessions AUTH_FILE FIRST_USER N: prints N lines "USER SESSION_TOKEN", minted as the
#   shop's login service does (docs/tokens.md).
# fgc_sale_shop EVENT SESSIONS OUT LOG PARALLEL DEADLINE_S: the buyers (scripts/demo-shopper.py)
#   on the client host through the edge, in the background; sets FGC_SHOP_PID.
# fgc_sale_decided EVENT: the buyers decided so far (the Redis primary's result hash).
# fgc_sale_invariants EVENT SESSIONS SHOP_JSON: scripts/check-invariants against the cluster's
#   Redis and PostgreSQL primaries (the told buyers: the shop's reserved users; reconcile on
#   the running control plane); its status.

FGC_SALE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

fgc_sale_env() {
	local e
	e=$("$FGC_SALE_DIR/../cluster" env) || return 1
	eval "$e"
	export FG_REDIS_SOCK FG_PG_HOST FG_PG_PORT
}

fgc_sale_ctl() {
	timeout 60 "$FGC_BUILD/flashgatectl/flashgatectl" --socket "$FGC_ADMIN" "$@"
}

fgc_sale_is_open() {
	"$FGC_SALE_DIR/../cluster" exec client curl -s --max-time 3 \
		"$FGC_EDGE_URL/api/v1/events/$1" 2>/dev/null | grep -q '"state":"open"'
}

fgc_sale_open() {
	local ev=$1 stock=$2 auth=$3 deadline=$((SECONDS + 30))
	if ! { fgc_sale_ctl keys auth-set 1 --key-file "$auth" >/dev/null &&
		fgc_sale_ctl keys rotate >/dev/null &&
		fgc_sale_ctl limits set ip 100000/4000 user 20/20 device 20/20 forward 100000 >/dev/null &&
		fgc_sale_ctl event create "$ev" --name "Cluster sale: $stock items" --stock "$stock" \
			--starts-at 2026-01-01T00:00:00Z --ends-at 2036-01-01T00:00:00Z --pay-window 15m \
			>/dev/null &&
		fgc_sale_ctl event preheat "$ev" >/dev/null && fgc_sale_ctl event open "$ev" >/dev/null; }; then
		printf 'sale: setting event %s up failed\n' "$ev" >&2
		return 1
	fi
	# cp2, where the data planes move when cp1 is lost, learns this sale and its key from
	# PostgreSQL's NOTIFY (docs/ha.md, "Several control planes"): no restart; it holds the
	# event (event show says sold_out only then) within a moment.
	until timeout 60 "$FGC_BUILD/flashgatectl/flashgatectl" --socket "$FGC_DIR/cp2/admin.sock" \
		--json event show "$ev" 2>/dev/null | grep -q '"sold_out":false'; do
		((SECONDS < deadline)) || { printf 'sale: cp2 does not hold event %s\n' "$ev" >&2; return 1; }
		sleep 0.3
	done
	# Both data planes behind the edge must show it: each request may reach either.
	until fgc_sale_is_open "$ev" && fgc_sale_is_open "$ev"; do
		((SECONDS < deadline)) || { printf 'sale: the edge does not show event %s open\n' "$ev" >&2; return 1; }
		sleep 0.3
	done
}

fgc_sale_sessions() {
	python3 - "$FG_ROOT/tests/lib" "$(cat "$1")" "$2" "$3" <<'PY'
import sys, time
sys.path.insert(0, sys.argv[1])
import fgtest
key, first, n = bytes.fromhex(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
exp = int(time.time()) + 3600
for u in range(first, first + n):
    print(u, fgtest.session(key, 1, u, exp))
PY
}

fgc_sale_shop() {
	"$FGC_SALE_DIR/../cluster" exec client python3 "$FG_ROOT/scripts/demo-shopper.py" \
		--base "$FGC_EDGE_URL" --event "$1" --sessions "$2" --out "$3" --parallel "$5" \
		--deadline "$6" --double-every 10 >"$4" 2>&1 &
	FGC_SHOP_PID=$!
}

fgc_sale_decided() {
	timeout 5 redis-cli -s "$FG_REDIS_SOCK" HLEN "fg:{$1}:result" 2>/dev/null || echo 0
}

fgc_sale_invariants() {
	local told rc=0
	told=$(mktemp)
	python3 -c 'import json,sys; print("\n".join(map(str, json.load(open(sys.argv[1]))["reserved_users"])))' \
		"$3" >"$told" || { rm -f "$told"; return 1; }
	FG_BUILD_DIR=$FGC_BUILD "$FG_ROOT/scripts/check-invariants" --event "$1" --users-file "$2" \
		--told "$told" --admin-socket "$FGC_ADMIN" --ctl "$FGC_BUILD/flashgatectl/flashgatectl" \
		--wait 60 || rc=$?
	rm -f "$told"
	return $rc
}
