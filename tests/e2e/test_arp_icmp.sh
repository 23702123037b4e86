#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# ARP and ICMP echo from the client namespace's kernel: the data plane answers ARP for its
# address with the MAC of the port it runs on, and answers ping without loss.
# usage: test_arp_icmp.sh DATAPLANE_EXECUTABLE   (prints TAP; needs root)
set -euo pipefail
# shellcheck source=tests/e2e/harness.sh
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

E2E_TOOLS=(ping)
e2e_begin arp "$@"

dp_mac=$(cat "/sys/class/net/$FG_DP_IF/address")

# No stale entry: the answer seen below must come from this data plane.
fg_ns_exec ip neigh flush dev "$FG_CL_IF" >/dev/null 2>&1 || true
out=$(fg_ns_exec timeout 20 ping -n -c 3 -i 0.2 -W 2 "$FG_DP_ADDR" 2>&1) || true
tap_diag "$out"
tap_run "ping $FG_DP_ADDR: 3 packets transmitted, 3 received, 0% loss" \
	grep -Eq '^3 packets transmitted, 3 received, 0% packet loss' <<<"$out"

neigh=$(fg_ns_exec ip neigh show "$FG_DP_ADDR" dev "$FG_CL_IF")
tap_diag "neighbour entry: $neigh (port $FG_DP_IF has $dp_mac)"
mac=$(awk '{ for (i = 1; i < NF; i++) if ($i == "lladdr") print $(i + 1) }' <<<"$neigh")
tap_is "$mac" "$dp_mac" "ARP: the client resolves $FG_DP_ADDR to the MAC of $FG_DP_IF"
tap_run "ARP: the neighbour entry is usable (not FAILED or INCOMPLETE)" \
	grep -Eqv 'FAILED|INCOMPLETE' <<<"${neigh:-FAILED}"

# An address the data plane does not own gets no ARP answer, so the ping fails.
other=198.18.10.3
out=$(fg_ns_exec timeout 10 ping -n -c 1 -W 1 "$other" 2>&1) || true
tap_run "no answer for $other, an address the data plane does not own" \
	grep -Eq ' 0 received' <<<"$out"

e2e_stop_dataplane
tap_done
