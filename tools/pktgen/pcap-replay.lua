-- SPDX-License-Identifier: BSD-3-Clause
--
-- pktgen-dpdk: replays a request stream written by flashgate-pcapgen (-s P:FILE on pktgen's
-- command line) at a share of the line rate for a while, then stops. pktgen sends the file's
-- frames as they are, over and over, so the file must carry the data plane's MAC
-- (flashgate-pcapgen --dst-mac). docs/pktgen.md explains the host set-up and what to watch.
--
--   flashgate-pcapgen --stream bad-ack --count 100000 --dst-mac <MAC> --out bad-ack.pcap
--   pktgen -l 0-2 -n 4 -a <PCI> -- -P -m "[1:2].0" -s 0:bad-ack.pcap \
--       -f tools/pktgen/pcap-replay.lua
--
-- Settings come from the environment (defaults in brackets):
--   FG_PORT_LIST   pktgen port(s) given a file with -s [0]
--   FG_RATE        percent of the line rate [10]
--   FG_SECONDS     how long to send [10]; then the port stops and pktgen stays for reading

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
local rate = tonumber(env("FG_RATE", "10"))
local seconds = tonumber(env("FG_SECONDS", "10"))

if rate == nil or rate <= 0 or rate > 100 or seconds == nil or seconds <= 0 then
	error("FG_RATE must be in (0, 100] percent and FG_SECONDS above 0")
end

pktgen.stop(ports)
pktgen.pcap(ports, "on") -- send the -s file's frames, not the single or range packet
pktgen.set(ports, "rate", rate)
pktgen.set(ports, "count", 0) -- until stopped

print(string.format("flashgate pcap replay: port(s) %s at %g%% for %d s", ports, rate, seconds))
pktgen.clr()
pktgen.start(ports)
pktgen.delay(seconds * 1000)
pktgen.stop(ports)
print("flashgate pcap replay: stopped; compare the data plane's counters with the TX count "
	.. "(docs/pktgen.md)")
