# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
#
# scripts/cluster's network: one network namespace per host ($FGC_PREFIX-HOST), each joined by a
# veth to one Linux bridge that lives in its own namespace ($FGC_PREFIX-br): nothing in the root
# namespace, no route out, addresses from 198.19.0.0/24 (inside RFC 2544's 198.18.0.0/15). A data
# plane's host has a second veth (dpdk0, no kernel address) that the data plane owns through
# net_af_packet. Sourced by scripts/cluster after lib.sh; it runs nothing by itself.

# The hosts: NAME ADDRESS ROLE, in the order "up" starts them (and "down" stops them backwards).
FGC_HOSTS=(
	"redis1 198.19.0.51 redis"
	"redis2 198.19.0.52 redis"
	"redis3 198.19.0.53 redis"
	"pg1 198.19.0.61 postgres"
	"pg2 198.19.0.62 postgres"
	"cp1 198.19.0.41 controlplane"
	"cp2 198.19.0.42 controlplane"
	"ow 198.19.0.71 order-writer"
	"dp1 198.19.0.21 dataplane"
	"dp2 198.19.0.22 dataplane"
	"edge 198.19.0.10 edge"
	"client 198.19.0.81 client"
)
FGC_PREFIX_LEN=24

# fgc_host_names: every host's name, one a line.
fgc_host_names() {
	local h
	for h in "${FGC_HOSTS[@]}"; do printf '%s\n' "${h%% *}"; done
}

# fgc_host_field HOST N: field N (2: address, 3: role) of HOST; fails for an unknown host.
fgc_host_field() {
	local h f
	for h in "${FGC_HOSTS[@]}"; do
		if [ "${h%% *}" = "$1" ]; then
			read -ra f <<<"$h"
			printf '%s\n' "${f[$2 - 1]}"
			return 0
		fi
	done
	return 1
}
fgc_addr() { fgc_host_field "$1" 2; }
fgc_role() { fgc_host_field "$1" 3; }
fgc_is_host() { fgc_host_field "$1" 1 >/dev/null; }

# fgc_dp_addr HOST: the address a data plane answers HTTP on (its DPDK port): .2N -> .3N.
fgc_dp_addr() {
	local a
	a=$(fgc_addr "$1")
	printf '198.19.0.%d\n' $((${a##*.} + 10))
}

fgc_ns() { printf '%s-%s\n' "$FGC_PREFIX" "$1"; }
FGC_BR_NS_SUFFIX=br

fgc_ns_exists() {
	ip netns list 2>/dev/null | awk '{ print $1 }' | grep -qx -- "$1"
}

# fgc_ns_sysctl NS PATH VALUE: writes /proc/sys/PATH inside NS when the kernel has it.
fgc_ns_sysctl() {
	# shellcheck disable=SC2016 # expanded by the inner shell
	ip netns exec "$1" sh -c '[ ! -e "$1" ] || printf "%s\n" "$2" >"$1"' sh "/proc/sys/$2" "$3"
}

# fgc_ports HOST: the host's bridge ports (the bridge side of its veths), one a line.
fgc_ports() {
	printf 'v-%s\n' "$1"
	[ "$(fgc_role "$1")" != dataplane ] || printf 'd-%s\n' "$1"
}

# fgc_host_net HOST: the host's side, in one shell inside its namespace (a process start costs
# much on a loaded machine): IPv6 off (no DAD, router or MLD packet ever sent), offloads off
# (veth leaves checksums to an offload that AF_PACKET never does), its address on eth0; on a data
# plane's host dpdk0 too, without a kernel address: the kernel neither answers ARP there nor
# forwards what arrives (as scripts/testnet's fg-dp).
fgc_host_net() {
	local h=$1 dp=0
	[ "$(fgc_role "$h")" != dataplane ] || dp=1
	# shellcheck disable=SC2016 # expanded by the inner shell
	ip netns exec "$(fgc_ns "$h")" sh -ec '
		w() { [ ! -e "/proc/sys/$1" ] || printf "%s\n" "$2" >"/proc/sys/$1"; }
		w net/ipv6/conf/all/disable_ipv6 1
		w net/ipv6/conf/default/disable_ipv6 1
		# A peer whose SYN gets no answer (a host cut off) gives up in seconds, not minutes.
		w net/ipv4/tcp_syn_retries 3
		ip link set dev lo up
		ifs=eth0
		[ "$3" = 0 ] || ifs="eth0 dpdk0"
		for i in $ifs; do
			w "net/ipv6/conf/$i/disable_ipv6" 1
			ethtool -K "$i" rx off tx off tso off gso off gro off >/dev/null 2>&1 || true
			ip link set dev "$i" up
		done
		ip addr replace "$1/$2" dev eth0
		if [ "$3" = 1 ]; then
			w net/ipv4/conf/dpdk0/forwarding 0
			w net/ipv4/conf/dpdk0/rp_filter 1
			w net/ipv4/conf/dpdk0/arp_ignore 8
			ip addr flush dev dpdk0
		fi' sh "$(fgc_addr "$h")" "$FGC_PREFIX_LEN" "$dp"
}

# fgc_net_up: the bridge's namespace and every host's, linked and addressed. Idempotent.
fgc_net_up() {
	local br h ns p batch='' ports=()
	br=$(fgc_ns "$FGC_BR_NS_SUFFIX")
	for h in "$FGC_BR_NS_SUFFIX" $(fgc_host_names); do
		fgc_ns_exists "$(fgc_ns "$h")" || ip netns add "$(fgc_ns "$h")"
	done
	ip -n "$br" link show dev br0 >/dev/null 2>&1 ||
		batch+="link add br0 type bridge stp_state 0 forward_delay 0 mcast_snooping 0"$'\n'
	for h in $(fgc_host_names); do
		ns=$(fgc_ns "$h")
		for p in $(fgc_ports "$h"); do
			ports+=("$p")
			ip -n "$br" link show dev "$p" >/dev/null 2>&1 && continue
			# A host side left without its peer (a half-made up) goes first.
			ip -n "$ns" link del dev "$([ "${p%%-*}" = v ] && echo eth0 || echo dpdk0)" 2>/dev/null || true
			batch+="link add $p type veth peer name $([ "${p%%-*}" = v ] && echo eth0 || echo dpdk0) netns $ns"$'\n'
		done
	done
	[ -z "$batch" ] || printf '%s' "$batch" | ip -n "$br" -batch -
	# shellcheck disable=SC2016 # expanded by the inner shell
	ip netns exec "$br" sh -ec '
		w() { [ ! -e "/proc/sys/$1" ] || printf "%s\n" "$2" >"/proc/sys/$1"; }
		w net/ipv6/conf/all/disable_ipv6 1
		w net/ipv6/conf/default/disable_ipv6 1
		ip link set dev lo up
		ip link set dev br0 up
		for p in "$@"; do
			w "net/ipv6/conf/$p/disable_ipv6" 1
			ethtool -K "$p" rx off tx off tso off gso off gro off >/dev/null 2>&1 || true
			ip link set dev "$p" master br0
			ip link set dev "$p" up
		done' sh "${ports[@]}"
	for h in $(fgc_host_names); do fgc_host_net "$h"; done
}

# fgc_net_down: every namespace of the cluster deleted (their veths and the bridge with them).
# The caller has stopped their processes first (a process left inside would keep a namespace).
fgc_net_down() {
	local ns
	for ns in $(ip netns list 2>/dev/null | awk '{ print $1 }' | grep -E "^$FGC_PREFIX-" || true); do
		fgc_is_host "${ns#"$FGC_PREFIX"-}" || [ "${ns#"$FGC_PREFIX"-}" = "$FGC_BR_NS_SUFFIX" ] ||
			continue
		ip netns del "$ns" 2>/dev/null || true
	done
}

# fgc_cut HOST / fgc_heal HOST: the host's bridge ports down (its links lose their carrier, its
# processes stay) / up again.
fgc_cut() {
	local p
	for p in $(fgc_ports "$1"); do ip -n "$(fgc_ns "$FGC_BR_NS_SUFFIX")" link set dev "$p" down; done
}
fgc_heal() {
	local p
	for p in $(fgc_ports "$1"); do ip -n "$(fgc_ns "$FGC_BR_NS_SUFFIX")" link set dev "$p" up; done
}

# fgc_link_state HOST: "up" when every bridge port of HOST is up, "cut" when one is down,
# "absent" when one is missing.
fgc_link_state() {
	local p st out=up
	for p in $(fgc_ports "$1"); do
		st=$(ip -n "$(fgc_ns "$FGC_BR_NS_SUFFIX")" -o link show dev "$p" 2>/dev/null) ||
			{ out=absent; break; }
		[[ $st =~ [\<,]UP[,\>] ]] || out='cut'
	done
	printf '%s\n' "$out"
}

# fgc_pids HOST: the pids of every process in the host's namespace, one a line.
fgc_pids() {
	local ns
	ns=$(fgc_ns "$1")
	fgc_ns_exists "$ns" || return 0
	ip netns pids "$ns" 2>/dev/null || true
}

# fgc_kill_all HOST SIGNAL TIMEOUT_S: sends SIGNAL once to every process of HOST, then SIGKILL
# to every one left after TIMEOUT_S seconds (at once for SIGNAL KILL), again and again until none
# is left (a process may fork meanwhile). Returns 0 when none is left, 1 after 10 s more.
fgc_kill_all() {
	local h=$1 sig=$2 deadline=$((SECONDS + $3)) pids
	pids=$(fgc_pids "$h")
	# shellcheck disable=SC2086 # one pid per word
	[ -z "$pids" ] || kill "-$sig" $pids 2>/dev/null || true
	while pids=$(fgc_pids "$h") && [ -n "$pids" ]; do
		if [ "$sig" = KILL ] || ((SECONDS >= deadline)); then
			((SECONDS < deadline + 10)) || return 1
			# shellcheck disable=SC2086
			kill -KILL $pids 2>/dev/null || true
		fi
		sleep 0.1
	done
	return 0
}
