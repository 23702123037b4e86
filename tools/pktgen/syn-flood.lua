-- SPDX-License-Identifier: BSD-3-Clause
--
-- pktgen-dpdk: a SYN flood against a flashgate data plane, from a range of client addresses and
-- ports (range mode), at a share of the line rate. Every SYN should come back as a SYN-ACK
-- carrying a SYN cookie (the data plane's counter syn_ack); nothing is remembered per SYN.
-- docs/pktgen.md explains the host set-up and what to watch.
--
--   FG_DST_MAC=<data plane port MAC> pktgen -l 0-2 -n 4 -a <PCI> -- -P -m "[1:2].0" \
--       -f tools/pktgen/syn-flood.lua
--
-- Settings come from the environment (defaults in brackets):
--   FG_PORT_LIST   pktgen port(s) to send on [0]
--   FG_DST_MAC     the data plane port's MAC: its log line "port N (...): mac MAC" (required)
--   FG_SRC_MAC     our port's MAC [00:00:00:00:00:00: pktgen keeps the port's own]
--   FG_DST         the data plane's address [198.18.0.2]
--   FG_DPORT       its TCP port [80]
--   FG_SRC_MIN, FG_SRC_MAX   client addresses, one more per packet [198.18.2.1, 198.18.2.254]
--   FG_SPORT_MIN, FG_SPORT_MAX   client ports, one more per packet [1024, 65535]
--   FG_RATE        percent of the line rate [10]
--   FG_SECONDS     how long to send [10]; then the port stops and pktgen stays for reading
--
-- Only functions of pktgen's Lua library (app/lpktgenlib.c) are used. The TCP flags of range
-- packets have no Lua function, so they go through pktgen's "range <ports> tcp flag" command in
-- a small command file loaded with pktgen.load().

package.path = package.path .. ";?.lua;test/?.lua;app/?.lua;"
require "Pktgen"

local function env(name, default)
	local v = os.getenv(name)
	if v == nil or v == "" then
		return default
	end
	return v
end

local ports = env("FG_PORT_LIST", "0")
local dst_mac = env("FG_DST_MAC", nil)
local src_mac = env("FG_SRC_MAC", nil)
local dst = env("FG_DST", "198.18.0.2")
local dport = tonumber(env("FG_DPORT", "80"))
local src_min = env("FG_SRC_MIN", "198.18.2.1")
local src_max = env("FG_SRC_MAX", "198.18.2.254")
local sport_min = tonumber(env("FG_SPORT_MIN", "1024"))
local sport_max = tonumber(env("FG_SPORT_MAX", "65535"))
local rate = tonumber(env("FG_RATE", "10"))
local seconds = tonumber(env("FG_SECONDS", "10"))

if dst_mac == nil then
	error("FG_DST_MAC is not set: give the data plane port's MAC, which flashgate-dataplane "
		.. "logs at start as 'port N (...): mac MAC'")
end
if dport == nil or dport < 1 or dport > 65535 or sport_min == nil or sport_max == nil
	or sport_min < 1 or sport_max > 65535 or sport_min > sport_max then
	error("FG_DPORT, FG_SPORT_MIN and FG_SPORT_MAX must be ports in 1..65535, min <= max")
end
if rate == nil or rate <= 0 or rate > 100 or seconds == nil or seconds <= 0 then
	error("FG_RATE must be in (0, 100] percent and FG_SECONDS above 0")
end

pktgen.stop(ports)
pktgen.reset(ports)

-- Range mode: each packet takes the next source address and port; destination fixed.
pktgen.range.dst_mac(ports, "start", dst_mac)
if src_mac ~= nil then
	pktgen.range.src_mac(ports, "start", src_mac)
end
pktgen.range.ip_proto(ports, "tcp")

pktgen.range.dst_ip(ports, "start", dst)
pktgen.range.dst_ip(ports, "inc", "0.0.0.0")
pktgen.range.dst_ip(ports, "min", dst)
pktgen.range.dst_ip(ports, "max", dst)

pktgen.range.src_ip(ports, "start", src_min)
pktgen.range.src_ip(ports, "inc", "0.0.0.1")
pktgen.range.src_ip(ports, "min", src_min)
pktgen.range.src_ip(ports, "max", src_max)

pktgen.range.dst_port(ports, "start", dport)
pktgen.range.dst_port(ports, "inc", 0)
pktgen.range.dst_port(ports, "min", dport)
pktgen.range.dst_port(ports, "max", dport)

pktgen.range.src_port(ports, "start", sport_min)
pktgen.range.src_port(ports, "inc", 1)
pktgen.range.src_port(ports, "min", sport_min)
pktgen.range.src_port(ports, "max", sport_max)

-- 64-byte frames: the smallest Ethernet frame, as a flood sends them.
pktgen.range.pkt_size(ports, "start", 64)
pktgen.range.pkt_size(ports, "inc", 0)
pktgen.range.pkt_size(ports, "min", 64)
pktgen.range.pkt_size(ports, "max", 64)

-- Only SYN set (RFC 9293 §3.5): the data plane answers SYN-ACK and keeps nothing.
local flags = os.tmpname()
local f = assert(io.open(flags, "w"))
f:write("range " .. ports .. " tcp flag clr all\n")
f:write("range " .. ports .. " tcp flag set syn\n")
f:close()
pktgen.load(flags)
os.remove(flags)

pktgen.set_range(ports, "on")
pktgen.set(ports, "rate", rate)
pktgen.set(ports, "count", 0) -- until stopped

print(string.format("flashgate SYN flood: %s:%d from %s-%s ports %d-%d at %g%% for %d s",
	dst, dport, src_min, src_max, sport_min, sport_max, rate, seconds))
pktgen.clr()
pktgen.start(ports)
pktgen.delay(seconds * 1000)
pktgen.stop(ports)
print("flashgate SYN flood: stopped; compare the data plane's syn_ack with the TX count "
	.. "(docs/pktgen.md)")
