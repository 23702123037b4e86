#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# scripts/demo at a large size, 500,000 buyers and 2,500,000 requests, whose order backlog
# outlasts the pay window (2,000 orders at 100 a second, a 10 s window): its verdict must follow
# what the sale did. Each PASS or FAIL line the demo prints is one check here, then its exit
# status, the report (each sale's written by flashgatectl report, the demo's page linking them)
# and the browser buyer's screenshots; the two sales (a draw, first come) with the bots' shares
# printed and checked, in the report too, the browser buyer in the draw's line, flashgatectl top
# during the sale and the audit log checked. The demo runs as a person runs it in tmux with
# --top: its window split, the live view of each sale beside it, captured (capture-pane) during
# the sale. Its own test network names, so it runs beside nothing else's.
#
# usage: test_demo_size.sh DEMO BUILD_DIR
set -euo pipefail
DEMO=${1:-} BUILD=${2:-}
if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP the demo needs root (network namespaces, DPDK)"
	exit 0
fi
n=0 failed=0
ok() { # RC DESCRIPTION
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else failed=$((failed + 1)) && echo "not ok $n - $2"; fi
}
if [ ! -x "$DEMO" ] || [ ! -d "$BUILD" ]; then
	echo "Bail out! usage: $0 DEMO BUILD_DIR"
	exit 1
fi
command -v tmux >/dev/null || { echo "Bail out! tmux is installed (scripts/install-deps)"; exit 1; }
out=$(mktemp /tmp/fg-e2e-demo.XXXXXX)
session=fg-e2e-demo-$$
trap 'tmux kill-session -t "$session" 2>/dev/null || true; rm -f "$out" "$out.rc"' EXIT
env=(FG_NS=fg-e2e-dm-$$ FG_DP_IF=fgddm$$ FG_CL_IF=fgcdm$$ FG_CL_ADDR=198.18.20.1
	FG_DP_ADDR=198.18.20.2 FG_PREFIX_LEN=24 "FG_BUILD_DIR=$BUILD"
	FG_DEMO_LEAD_S="${FG_DEMO_LEAD_S:-60}")
# In a tmux session of its own (its environment given here: a tmux server that runs already
# has its own), as a person would type it there; a lead of 60 s to set the sales up (a loaded
# host took 34 s of the 20 s default).
tmux new-session -d -s "$session" -x 220 -y 50 -c "$PWD" \
	"$(printf '%q ' env "${env[@]}" "$DEMO" --top --users 500000 --requests 2500000 \
		--stock 2000 --commit-cap 100 --pay-window 10) </dev/null >$(printf '%q' "$out") 2>&1;
	echo \$? >$(printf '%q' "$out.rc")"
# The live view during the sale: the panes beside the demo's, once one shows sale 1 with orders.
tops=
top_seen() {
	local p
	tops=
	for p in $(tmux list-panes -t "$session" -F '#{pane_id}' 2>/dev/null); do
		tops+="$(tmux capture-pane -p -t "$p")"$'\n'
	done
	grep -Eq '^flashgate top .* event 1 ' <<<"$tops" && grep -Eq '^orders +[1-9]' <<<"$tops"
}
seen=1
for _ in $(seq 1800); do
	top_seen && seen=0 && break
	[ ! -s "$out.rc" ] || break
	sleep 0.2
done
ok "$seen" "flashgatectl top in tmux beside the demo (--top) showed sale 1 with orders\
 during the sale"
grep -v '^$' <<<"$tops" | sed 's/^/# /'
for _ in $(seq 2000); do
	[ ! -s "$out.rc" ] || break
	sleep 0.2
done
rc=$(cat "$out.rc" 2>/dev/null || echo "none: still running")
checks=0
while IFS= read -r line; do
	case $line in
	"  PASS  "*)
		checks=$((checks + 1))
		ok 0 "demo: ${line#  PASS  }"
		;;
	"  FAIL  "*)
		checks=$((checks + 1))
		ok 1 "demo: ${line#  FAIL  }"
		;;
	esac
done <"$out"
# scripts/demo's own checks (6 with the browser buyer), check-invariants' 12 for each sale, the
# draw's (verify-draw, the bots' shares of the line and of the items against their share of the
# crowd with the draw, and of the items first come) and the audit log's.
ok "$( ((checks >= 34)); echo $?)" "the demo printed its checks ($checks PASS or FAIL lines)"
for want in "sale 1: verify-draw" "sale 1: bots' share of the entrants not above theirs" \
	"sale 1: bots' share of the items not above theirs" \
	"sale 2: bots' items above a fair draw's chance" "sale 2: 3 reconcile" \
	"audit log: every change the demo made is in it"; do
	ok "$(grep -Eq "^  (PASS|FAIL)  $want" "$out"; echo $?)" "the demo checked \"$want\""
done
shares=$(grep -E '^  sale (1, with the draw|2, first come):' "$out" || true)
ok "$([ "$(printf '%s\n' "$shares" | grep -c %)" = 2 ]; echo $?)" \
	"the bots' shares of buyers and items printed for both sales"
[ -z "$shares" ] || printf '%s\n' "$shares" | sed 's/^/# /'

ok "$([ "$rc" = 0 ]; echo $?)" "the demo exits 0 (status $rc)"
page=$(sed -n 's/^the sale report: //p' "$out")
ok "$([ -n "$page" ] && [ -f "$page" ] && grep -q requests.png "$page" &&
	grep -q commits.png "$page"; echo $?)" "the demo wrote its sale report (${page:-none})"
dir=$(dirname "${page:-/nonexistent/x}")
for sale in 1 2; do
	ok "$(grep -q "^\$ flashgatectl report $sale --out .*/sale-$sale\$" "$out" &&
		grep -q "Admin commands of the sale" "$dir/sale-$sale/index.html" &&
		[ -s "$dir/sale-$sale/requests.png" ] && grep -q "sale-$sale/index.html" "$page"
		echo $?)" "sale $sale's report written by flashgatectl report, linked from the demo's page"
done
ok "$(grep -A2 '^\$ flashgatectl top 1 --count [12] ' "$out" |
	grep -q '^  flashgate top .* event 1 '; echo $?)" \
	"flashgatectl top's frame of sale 1 printed during the sale"
ok "$(grep -q 'shots/buyer-.*\.png' "$out"; echo $?)" "the browser buyer's screenshots were saved"
ok "$([ -n "$page" ] && grep -q "Bots and people" "$page"; echo $?)" \
	"the report shows the bots' shares"
ok "$(grep -q "shots/buyer-.*-queueing\.png" "$out" && grep -q "shots/buyer-.*-queued-draw\.png" \
	"$out"; echo $?)" "the browser buyer joined the draw's line (screenshots queueing, queued-draw)"
ok "$(grep -q "shots/buyer-.*-queued-position\.png" "$out"; echo $?)" \
	"the browser buyer was shown its place in line during the draw (screenshot queued-position)"
if [ "$failed" -ne 0 ] || [ "$rc" != 0 ]; then
	tail -n 60 "$out" | sed 's/^/# /'
fi
echo "1..$n"
[ "$failed" -eq 0 ]
