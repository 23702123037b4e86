-- SPDX-License-Identifier: BSD-3-Clause
-- enter.lua: makes the users of a batch entrants of one event's draw (docs/fairness.md), in
-- order, atomically. The control plane sends an event's reservations here instead of to
-- reserve.lua while its clock is in [queue_opens_at, draw_at): nothing is decided yet.
--
-- KEYS[1] fg:{ev}:entrants hash: user -> "<rid>", the reservation that made the user an entrant
-- KEYS[2] fg:{ev}:draw     hash: state (open|frozen|done; missing = open), n, next, digest
-- KEYS[3] fg:{ev}:window   the sale window (reserve.lua): "closed" or "held" refuses here too
-- KEYS[4] fg:{ev}:entlog   string: "<user>:<rid>\n" appended for each new entrant, in the same
--                          script as its field (so the two hold the same entrants): the draw
--                          reads it in large slices (GETRANGE) instead of HSCAN
-- ARGV    n users, then their n reservation ids, all decimal; 1 <= n <= 2048
--
-- Returns n verdicts and then the number of entrants: 1 a new entrant (HSETNX), 0 already an
-- entrant (also earlier in this batch: nothing changes, the first reservation stays), or every
-- verdict the same and nothing written: -4 the entrants are frozen (the draw began: retry),
-- -2 the window key says closed, -3 held. The first entrant creates the draw key (state open),
-- so that reserve.lua refuses first-come batches from then until the draw is done.
local n = #ARGV / 2
if n < 1 or n > 2048 or n % 1 ~= 0 then
	return redis.error_reply('ERR enter.lua: ARGV must be 1..2048 users and their ids')
end
local refuse
local state = redis.call('HGET', KEYS[2], 'state')
if state and state ~= 'open' then
	refuse = -4
else
	local window = redis.call('GET', KEYS[3])
	if window == 'closed' then
		refuse = -2
	elseif window == 'held' then
		refuse = -3
	end
end
if refuse then
	local out = {}
	for i = 1, n do
		out[i] = refuse
	end
	out[n + 1] = redis.call('HLEN', KEYS[1])
	return out
end
local have = redis.call('HMGET', KEYS[1], unpack(ARGV, 1, n))
local out, seen, hset, log, k = {}, {}, {}, {}, 0
for i = 1, n do
	local user = ARGV[i]
	if have[i] or seen[user] then
		out[i] = 0
	else
		seen[user] = true
		hset[k + 1] = user
		hset[k + 2] = ARGV[n + i]
		k = k + 2
		log[#log + 1] = user .. ':' .. ARGV[n + i] .. '\n'
		out[i] = 1
	end
end
if not state then
	redis.call('HSET', KEYS[2], 'state', 'open')
end
if k > 0 then
	redis.call('HSET', KEYS[1], unpack(hset))
	redis.call('APPEND', KEYS[4], table.concat(log))
end
out[n + 1] = redis.call('HLEN', KEYS[1])
return out
