#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# tests/package/test_package.sh: flashgate as a shop installs it. Builds the Debian packages
# (scripts/package: dpkg-buildpackage, lintian), installs them with apt into a fresh Debian 12
# root made by debootstrap (apt takes their dependencies from the mirror), checks the units with
# `systemd-analyze verify`, then boots the root under systemd-nspawn and runs a sale from the
# installed files alone: PostgreSQL and Redis of the root, the migrations unit, the control
# plane, the order writer and the data plane started by systemd (Type=notify), the data plane on
# a veth through net_af_packet, flashgatectl and curl of the root, orders counted in PostgreSQL.
# Prints TAP. Needs root (debootstrap, nspawn); without it the whole test is skipped, saying so.
#
# The debootstrap root is kept in build/package/root-base (and apt's downloads in
# build/package/apt-cache), so a second run starts from a copy of it: remove them to start over.
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP not root: the package test needs root for debootstrap and systemd-nspawn"
	exit 0
fi
work=$repo/build/package
base=$work/root-base
root=$work/root
cache=$work/apt-cache
debs=$work/debs
# What the base root holds besides minbase: systemd to boot, the services a single-host install
# uses, and the tools the test drives the sale with.
base_packages=systemd,systemd-sysv,dbus,postgresql,redis-server,curl,python3,iproute2,procps,ethtool

n=0
failed=0
ok() {
	n=$((n + 1))
	echo "ok $n - $*"
}
not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $*"
}
# check DESC CMD...: one TAP line for CMD's status.
check() {
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}
diag() {
	sed 's/^/# /'
}
bail() {
	echo "Bail out! $*"
	exit 1
}

nspawn_pid=
cleanup() {
	if [ -n "$nspawn_pid" ] && kill -0 "$nspawn_pid" 2>/dev/null; then
		# SIGRTMIN+4 to the container's systemd: poweroff; then the hard way.
		kill -s RTMIN+4 "$leader" 2>/dev/null
		for _ in $(seq 60); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 1; done
		kill -KILL "$nspawn_pid" 2>/dev/null
		wait "$nspawn_pid" 2>/dev/null
	fi
	# The root's systemd outlives a killed nspawn (it was left running once, parented to PID 1):
	# killing it, its PID namespace's first process, ends every process of the root.
	if [ -n "${leader:-}" ] && [ "$(cat "/proc/$leader/comm" 2>/dev/null)" = systemd ]; then
		kill -KILL "$leader" 2>/dev/null
	fi
}
trap cleanup EXIT

# --- the packages ---------------------------------------------------------------------------
if "$repo/scripts/package" --no-check >"$work.log" 2>&1; then
	ok "packages built, lintian without errors ($(grep -c '^W:' "$work/lintian.log" 2>/dev/null || echo 0) warning(s))"
else
	diag <"$work.log"
	bail "scripts/package failed"
fi
grep '^[EW]:' "$work/lintian.log" 2>/dev/null | diag

# --- the Debian 12 root ---------------------------------------------------------------------
mkdir -p "$cache"
# root-base.tmp/.debootstrapped: debootstrap finished (a run stopped half way starts again).
if [ ! -d "$base" ] && [ ! -f "$base.tmp/.debootstrapped" ]; then
	mirror=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null)
	rm -rf "$base.tmp"
	debootstrap --variant=minbase --include="$base_packages" bookworm "$base.tmp" \
		"${mirror:-http://deb.debian.org/debian}" >"$work/debootstrap.log" 2>&1 ||
		{ tail -n 20 "$work/debootstrap.log" | diag; bail "debootstrap failed"; }
	touch "$base.tmp/.debootstrapped"
fi
if [ -d "$base.tmp" ]; then
	# The host's sources (bookworm, its updates and security): the packages' dependencies
	# may need a version from the updates.
	if [ -f /etc/apt/sources.list.d/debian.sources ]; then
		rm -f "$base.tmp/etc/apt/sources.list"
		cp /etc/apt/sources.list.d/debian.sources "$base.tmp/etc/apt/sources.list.d/"
	fi
	systemd-nspawn -q --register=no --keep-unit -D "$base.tmp" \
		--bind="$cache:/var/cache/apt/archives" \
		sh -c "apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
			--no-install-recommends $(echo $base_packages | tr , ' ')" >"$work/base.log" 2>&1 ||
		{ tail -n 20 "$work/base.log" | diag; bail "the base root's apt-get failed"; }
	mv "$base.tmp" "$base"
fi
rm -rf "$root"
cp -a "$base" "$root" || bail "cannot copy $base"
ok "a fresh Debian 12 root (copied from build/package/root-base)"

# in_chroot CMD...: CMD in the root, not booted (nspawn runs it as its only process).
in_chroot() {
	# nspawn's "cannot remove the propagation directory" note at exit is no TAP line.
	systemd-nspawn -q --register=no --keep-unit -D "$root" \
		--bind="$cache:/var/cache/apt/archives" --bind-ro="$debs:/debs" "$@" \
		2> >(grep -v 'Attempted to remove disk file system' >&2)
}

mapfile -t pkgs < <(cd "$debs" && ls *.deb | grep -v dbgsym)
# Without recommends, as a small install would be: then the PMD of the port is named, here
# DPDK's AF_PACKET driver (apt's default, recommends, brings every PMD through dpdk).
if in_chroot env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
	$(printf '/debs/%s ' "${pkgs[@]}") librte-mempool-ring23 librte-net-af-packet23 \
	>"$work/install.log" 2>&1; then
	ok "apt-get installs ${pkgs[*]}"
else
	tail -n 30 "$work/install.log" | diag
	bail "apt-get install failed"
fi
check "the flashgate user exists" grep -q '^flashgate:' "$root/etc/passwd"
check "/etc/flashgate/flashgate.conf is a conffile" \
	grep -q '^ /etc/flashgate/flashgate.conf ' <(in_chroot dpkg-query -W -f='${Conffiles}\n' flashgate-common)
check "/etc/default/flashgate-dataplane is a conffile" \
	grep -q '^ /etc/default/flashgate-dataplane ' <(in_chroot dpkg-query -W -f='${Conffiles}\n' flashgate-dataplane)
check "the sale page is in /usr/share/flashgate/web" test -f "$root/usr/share/flashgate/web/index.html"
check "flashgate-db-setup is in /usr/sbin (docs/install.md's roles)" \
	test -x "$root/usr/sbin/flashgate-db-setup"
check "the packages install nothing from this checkout" \
	sh -c "! grep -rqs '$repo' '$root/usr/bin' '$root/lib/systemd/system' '$root/etc/flashgate'"

units=(flashgate-migrate.service flashgate-controlplane.service flashgate-order-writer.service
	flashgate-dataplane.service flashgate-dpdk-setup.service)
if out=$(in_chroot systemd-analyze verify $(printf '/lib/systemd/system/%s ' "${units[@]}") 2>&1); then
	ok "systemd-analyze verify ${units[*]}"
else
	not_ok "systemd-analyze verify ${units[*]}"
fi
[ -z "$out" ] || echo "$out" | diag

# --- the operator's set-up for one host (docs/install.md) -----------------------------------
# The database and its owner, as install.md says, in a unit before the migrations; and a veth
# pair for the data plane's port (fgdp, through AF_PACKET) and a client beside it (fgcl).
cat >"$root/etc/systemd/system/fgtest-db.service" <<'UNIT'
[Unit]
After=postgresql.service
Before=flashgate-migrate.service
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/sbin/runuser -u postgres -- psql -q -c "CREATE ROLE flashgate LOGIN"
ExecStart=/usr/sbin/runuser -u postgres -- createdb -O flashgate flashgate
[Install]
WantedBy=multi-user.target
UNIT
# Redis as flashgate needs it (docs/install.md): the append-only file, synced before each reply.
grep -q '^appendfsync always' "$root/etc/redis/redis.conf" ||
	printf 'appendonly yes\nappendfsync always\nmaxmemory-policy noeviction\n' \
		>>"$root/etc/redis/redis.conf"
cat >"$root/etc/systemd/system/fgtest-net.service" <<'UNIT'
[Unit]
Before=flashgate-dataplane.service
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/sbin/ip link add fgdp type veth peer name fgcl
ExecStart=/sbin/ip link set fgdp up
ExecStart=/sbin/ip addr add 198.18.0.1/24 dev fgcl
ExecStart=/sbin/ip link set fgcl up
ExecStart=/sbin/ethtool -K fgdp rx off tx off tso off gso off gro off
ExecStart=/sbin/ethtool -K fgcl tx off tso off gso off gro off
[Install]
WantedBy=multi-user.target
UNIT
cat >"$root/etc/default/flashgate-dataplane" <<'CONF'
FG_EAL_ARGS="--no-huge -m 512 --no-pci -l 0-1 --main-lcore 0 --vdev net_af_packet0,iface=fgdp --file-prefix fgpkg"
FG_HUGEPAGES=""
FG_BIND_PCI=""
CONF
systemctl --root="$root" enable fgtest-db.service fgtest-net.service "${units[@]}" >/dev/null 2>&1 ||
	bail "systemctl enable failed"
# Debian's own dpdk.service (the dpdk package's, from /etc/dpdk/) sets vm.max_map_count, which a
# container may not: it would only leave the boot degraded here.
systemctl --root="$root" mask dpdk.service >/dev/null 2>&1

# --- boot ------------------------------------------------------------------------------------
# /sys/module from the host: nspawn hides it, and DPDK's EAL refuses to start without it (it
# looks there for vfio).
systemd-nspawn --register=no --keep-unit -D "$root" -M "fgpkg$$" --private-network \
	--bind-ro=/sys/module --console=passive --boot >"$work/boot.log" 2>&1 </dev/null &
nspawn_pid=$!
# The root's systemd, not nspawn's outer child: that one is nspawn's child first and exits once
# it has started the root's init (which nspawn, a subreaper, then parents); taken by mistake, it
# left every later nsenter failing ("cannot open /proc/PID/ns/ipc") on a loaded host.
leader=
for _ in $(seq 200); do
	for p in $(pgrep -P "$nspawn_pid"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = systemd ] && leader=$p && break
	done
	[ -n "$leader" ] && break
	sleep 0.1
done
[ -n "$leader" ] || bail "systemd-nspawn did not start the root's systemd"
in_root() {
	nsenter -t "$leader" -m -u -i -n -p -r -w -- \
		env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}
state=
for _ in $(seq 120); do
	state=$(in_root systemctl is-system-running 2>/dev/null)
	case $state in running | degraded) break ;; esac
	sleep 1
done
check "the root boots under systemd-nspawn (state: $state)" test "$state" = running
[ "$state" = running ] || in_root systemctl --failed --no-legend | diag

for u in fgtest-db flashgate-migrate flashgate-controlplane flashgate-order-writer \
	flashgate-dpdk-setup flashgate-dataplane; do
	if [ "$(in_root systemctl is-active "$u")" = active ]; then
		ok "$u.service is active"
	else
		not_ok "$u.service is active"
		in_root journalctl -u "$u" --no-pager -n 30 | diag
	fi
done
for u in controlplane:deciding order-writer:"writing orders" dataplane:answering; do
	check "flashgate-${u%%:*} told systemd it is ready (STATUS=${u#*:})" \
		test "$(in_root systemctl show -P StatusText "flashgate-${u%%:*}")" = "${u#*:}"
done

# --- a sale, from the installed files alone ----------------------------------------------------
ctl() { in_root flashgatectl "$@"; }
# json KEY: KEY of the JSON object on stdin, empty when it is not one or has no KEY.
json() {
	python3 -c 'import json, sys
try:
	print(json.load(sys.stdin).get(sys.argv[1], ""))
except ValueError:
	print("")' "$1"
}
FG=http://198.18.0.2
key=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
now=$(date +%s)
check "flashgatectl sets up sale 9 (3 items)" sh -c "
	printf '%s\n' $key | nsenter -t $leader -m -u -i -n -p -r -w -- flashgatectl keys auth-set 1 - >/dev/null &&
	nsenter -t $leader -m -u -i -n -p -r -w -- flashgatectl keys rotate >/dev/null &&
	nsenter -t $leader -m -u -i -n -p -r -w -- flashgatectl event create 9 --name Packaged --stock 3 \
		--starts-at $((now + 3)) --ends-at $((now + 3600)) --pay-window 10m >/dev/null &&
	nsenter -t $leader -m -u -i -n -p -r -w -- flashgatectl event preheat 9 >/dev/null &&
	nsenter -t $leader -m -u -i -n -p -r -w -- flashgatectl event open 9 >/dev/null"
sleep 4
check "GET /healthz of the data plane answers 200" \
	test "$(in_root curl -s -o /dev/null -w '%{http_code}' --max-time 5 $FG/healthz)" = 200
ready=$(in_root curl -s -w ' %{http_code}' --max-time 5 $FG/readyz)
check "GET /readyz answers 200, ready to sell ($ready)" \
	test "$ready" = '{"status":"ready","events":1} 200'

admitted=0
for user in 1001 1002 1003 1004; do
	s=$(ctl --json session-token "$user" --ttl 10m | json token)
	t=$(in_root curl -s --max-time 5 -X POST -H "Authorization: Bearer $s" $FG/api/v1/events/9/token)
	tok=$(echo "$t" | json token)
	path=$(echo "$t" | json reserve_path)
	code=$(in_root curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST \
		-H "X-Flash-Token: $tok" "$FG$path")
	[ "$code" = 202 ] && admitted=$((admitted + 1))
	echo "user $user: token $(echo "$t" | head -c 80), reserve $code" | diag
done
# The fourth may already be told sold out by the data plane (410) or queued and then sold out.
check "at least three buyers' reserves answered 202 (got $admitted)" test "$admitted" -ge 3
orders=0
for _ in $(seq 30); do
	orders=$(in_root runuser -u postgres -- psql -qtA flashgate \
		-c "SELECT count(*) FROM orders WHERE event_id = 9" 2>/dev/null)
	[ "$orders" = 3 ] && break
	sleep 1
done
check "PostgreSQL holds 3 orders of sale 9, its whole stock (got $orders)" test "$orders" = 3

# --- the stop ---------------------------------------------------------------------------------
declare -A was
for u in dataplane order-writer controlplane; do
	was[$u]=$(in_root systemctl show -P MainPID "flashgate-$u")
done
in_root systemctl stop flashgate-dataplane flashgate-order-writer flashgate-controlplane
for u in dataplane order-writer controlplane; do
	# It ran (a main pid before the stop) and exited 0 on SIGTERM within its TimeoutStopSec.
	check "flashgate-$u stopped cleanly (pid ${was[$u]}, Result=success, exit status 0)" \
		test "${was[$u]}" != 0 -a \
		"$(in_root systemctl show -P Result "flashgate-$u")" = success -a \
		"$(in_root systemctl show -P ExecMainStatus "flashgate-$u")" = 0
done
check "the data plane's final counters are in the journal" \
	sh -c "nsenter -t $leader -m -u -i -n -p -r -w -- journalctl -u flashgate-dataplane --no-pager | grep -q 'final counters'"

echo "1..$n"
[ "$failed" = 0 ]
