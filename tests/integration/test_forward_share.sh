#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The per-event forward budget is the control plane's, shared by the data planes
# (docs/limits.md "Per-event forward budget"): `limits set forward RATE/BURST` is stored and
# published, and each live data plane is given its share, not the whole budget. Two data-plane
# identities on the wire (tests/peer/fg_feed --watch-limits: counters out, LIMITS in) talk to
# the real control plane with Redis and PostgreSQL from scripts/services.
#
# usage: test_forward_share.sh CONTROLPLANE FLASHGATECTL FG_FEED
set -uo pipefail
CP=$1 CTL=$2 FEED=$3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/testlib.sh
. "$ROOT/tests/lib/testlib.sh"
t_begin fwd
t_services_up "$TMP/svc"
T_CP=$CP T_CTL=$CTL
A_PID='' B_PID=''
fwd_stop() { for p in $A_PID $B_PID; do fg_stop_pid "$p" 10 || true; done; }
T_CLEANUP+=(fwd_stop)
share() { # JSON: "data_planes rate burst" of forward_share, and the stored budget
	python3 -c 'import json,sys
d = json.loads(sys.stdin.read()); s = d["forward_share"]; l = d["limits"]
print("%d/%d %d %d/%d" % (l["forward_per_s"], l["forward_burst"], s["data_planes"],
                          s["rate"], s["burst"]))'
}

t_cp_up
tap_ok $? "the control plane is ready"
tap_is "$(ctlj limits set forward 20000/5000 | share)" "20000/5000 1 20000/5000" \
	"limits set forward 20000/5000: stored, and the only data plane's share is all of it"
out=$(ctlj limits set forward 0/10 2>&1)
rc=$?
[ "$rc" -ne 0 ] && [[ $out == *"a burst needs a rate"* ]]
tap_ok $? "limits set forward 0/10 is refused with a clear message: $out"
fg_stop_pid "$CP_PID" 10
t_cp_up
tap_ok $? "the control plane starts again"
tap_is "$(ctlj limits show | share)" "20000/5000 1 20000/5000" \
	"the burst is kept in PostgreSQL across the restart"

# watch ID MS: a data plane that lives MS milliseconds, its LIMITS in $TMP/dpID.out.
watch() {
	"$FEED" --push "$T_PULL" --sub "$T_PUB" --dp "$1" --watch-limits "$2" >"$TMP/dp$1.out" 2>&1 &
}
watch 1 60000
A_PID=$!
fg_wait_line "$TMP/dp1.out" '^limits forward=20000/5000 ' "$A_PID" 20
tap_ok $? "data plane 1 alone is given the whole budget, 20000/5000"
watch 2 8000
B_PID=$!
fg_wait_line "$TMP/dp2.out" '^limits forward=10000/2500 ' "$B_PID" 20
tap_ok $? "data plane 2 joins: it is given half, 10000/2500"
fg_wait_line "$TMP/dp1.out" '^limits forward=10000/2500 ' "$A_PID" 20
tap_ok $? "and data plane 1's share becomes half too, 10000/2500"
tap_is "$(ctlj limits show | share)" "20000/5000 2 10000/2500" \
	"limits show: the budget 20000/5000, 2 data planes, each 10000/2500"
tap_is "$(ctlj limits set forward 3/1 | share)" "3/1 2 1/1" \
	"a budget smaller than the data planes gives each at least 1 (never 0, no limit)"
fg_wait_line "$TMP/dp1.out" '^limits forward=1/1 ' "$A_PID" 20
tap_ok $? "data plane 1 is given 1/1"
ctlj limits set forward 20000/5000 >/dev/null
wait "$B_PID"
B_PID=
# Data plane 2 stopped: once it is stale (5 s without counters) data plane 1 takes it all.
last_is_whole() { tail -1 "$TMP/dp1.out" | grep -q '^limits forward=20000/5000 '; }
for _ in $(seq 200); do last_is_whole && break; sleep 0.1; done
last_is_whole
tap_ok $? "data plane 2 gone: data plane 1 is given the whole budget again"
sed 's/^/# dp1: /' "$TMP/dp1.out"
fg_stop_pid "$A_PID" 10
A_PID=
tap_done
