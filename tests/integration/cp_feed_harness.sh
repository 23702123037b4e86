# SPDX-License-Identifier: BSD-3-Clause
# Sourced by the integration tests that drive one real control plane with stand-in data planes
# (tests/peer/fg_feed): test_sale_window.sh, test_dp_ids.sh. Skips without root (PostgreSQL runs
# as the postgres user), starts scripts/services' Redis and PostgreSQL and one control plane in
# a temporary directory, and stops them at exit.
#
# Needs CP and ROOT set. Gives TMP, P (PULL, PUB and metrics ports), CP_PID, R (redis-cli) and
# the TAP helpers of tests/e2e/harness.sh.
#   cpf_start [SECTION.KEY=VALUE...]   starts the control plane (extra settings) and checks it
#   cpf_stat SECTION KEY               one number of flashgatectl --json stats
#   cpf_field OUT KEY                  KEY=N of an fg_feed output file in TMP
# shellcheck source=scripts/lib.sh
. "$ROOT/scripts/lib.sh"
# TAP: tap_ok, tap_is, tap_diag, tap_done (the end-to-end tests' harness).
. "$ROOT/tests/e2e/harness.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root (PostgreSQL runs as the postgres user)"
	exit 0
fi
TMP=$(mktemp -d /tmp/fg-cpfeed.XXXXXX)
chmod o+x "$TMP"
CP_PID=
cpf_cleanup() {
	[ -z "$CP_PID" ] || fg_stop_pid "$CP_PID" 10 || true
	"$ROOT/scripts/services" down "$TMP/svc" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cpf_cleanup EXIT

fg_test_services_up "$TMP/svc"
mapfile -t P < <(fg_free_ports 3)
R="redis-cli -s $FG_REDIS_SOCK"

cpf_start() {
	local extra=() s
	for s in "$@"; do extra+=(-s "$s"); done
	"$CP" -s "controlplane.pull_endpoint=tcp://127.0.0.1:${P[0]}" \
		-s "controlplane.pub_endpoint=tcp://127.0.0.1:${P[1]}" \
		-s "controlplane.admin_socket=$TMP/admin.sock" \
		-s "controlplane.metrics_port=${P[2]}" \
		-s "redis.socket=$FG_REDIS_SOCK" -s "postgres.conninfo=$FG_PG_CONNINFO" \
		"${extra[@]}" >"$TMP/cp.log" 2>&1 &
	CP_PID=$!
	fg_wait_line "$TMP/cp.log" 'ready:' "$CP_PID" 20
	tap_ok $? "the control plane is ready ${*:-}"
}

cpf_stat() {
	"$CTL" --socket "$TMP/admin.sock" --json stats | python3 -c 'import json,sys
d = json.load(sys.stdin)[sys.argv[1]]
print(d.get(sys.argv[2], 0))' "$1" "$2"
}

cpf_field() { grep -oE "(^| )$2=[0-9]+" "$TMP/$1" | cut -d= -f2; }
