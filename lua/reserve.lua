-- SPDX-License-Identifier: BSD-3-Clause
-- reserve.lua: decides a batch of reservations of one event, in order, atomically.
--
-- KEYS[1] fg:{ev}:stock    string, an integer; missing counts as 0 (not preheated)
-- KEYS[2] fg:{ev}:result   hash: user -> "<rid>" (reserved; later states use a prefix). It has
--                          exactly one field per buyer, so it is also the set of buyers.
-- KEYS[3] fg:{ev}:outbox   stream: one entry per batch (per 1024 reservations of a batch) with
--                          the fields u=<user> r=<rid> repeated once per reservation, in the
--                          batch's order; the entry's id is when Redis decided, an order's
--                          reserved_at (docs/order-writer.md)
-- KEYS[4] fg:{ev}:window   string: "<starts_ms> <ends_ms>" (the sale is open in [starts, ends)
--                          by the control plane's clock), "held" (not opened yet) or "closed";
--                          missing: no window recorded (the control plane's own check stands)
-- ARGV    n users, then their n reservation ids, then now_ms (the control plane's clock), all
--         decimal; 1 <= n <= 2048 (unpack() below is bounded by Lua's C stack)
--
-- Returns n verdicts and then the stock left: 1 reserved, -1 duplicate (already a buyer,
-- also earlier in this batch), 0 sold out: for every user exactly what the one-user script
-- of the seed answers when the batch is run one user at a time, in order. Outside the sale
-- (window "closed" or now >= ends: -2 closed; "held" or now < starts: -3 not started) every
-- verdict is the same and nothing is written: closing the sale is one SET of the window key,
-- so a batch runs wholly before a close or is refused wholly after it.
--
-- Why it looks like this: the per-user work is what limits the control plane, so the reads
-- are done once per batch (GET, HMGET), the decisions in plain Lua, and the writes once per
-- batch (DECRBY, HSET, XADD). The result hash doubles as the buyers set (a buyer is a user
-- with a field), which saves a set insert per reservation, and one outbox entry holds the
-- whole batch, which saves a stream entry per reservation. Deferring writes to the end of the
-- script changes nothing anyone can see: a script runs alone, and Redis writes its effects to
-- the AOF and replicas as one MULTI/EXEC. One argument per field was measured faster than one
-- packed string per field split here with gmatch.
local n = (#ARGV - 1) / 2
if n < 1 or n > 2048 or n % 1 ~= 0 or not string.find(ARGV[#ARGV], '^%d+$') then
	return redis.error_reply('ERR reserve.lua: ARGV must be 1..2048 users, their ids and now_ms')
end
local stock = redis.call('GET', KEYS[1]) or '0'
-- DECRBY below must not fail after a write, so refuse what it would refuse first.
if not string.find(stock, '^%-?%d+$') then
	return redis.error_reply('ERR reserve.lua: the stock key does not hold an integer')
end
stock = tonumber(stock)
local window = redis.call('GET', KEYS[4])
if window then
	local refuse
	if window == 'closed' then
		refuse = -2
	elseif window == 'held' then
		refuse = -3
	else
		local s, e = string.match(window, '^(%d+) (%d+)$')
		if not s then
			return redis.error_reply('ERR reserve.lua: the window key holds neither ' ..
				'"<starts_ms> <ends_ms>", "held" nor "closed"')
		end
		local now = tonumber(ARGV[#ARGV])
		if now >= tonumber(e) then
			refuse = -2
		elseif now < tonumber(s) then
			refuse = -3
		end
	end
	if refuse then
		local out = {}
		for i = 1, n do
			out[i] = refuse
		end
		out[n + 1] = stock
		return out
	end
end
local have = redis.call('HMGET', KEYS[2], unpack(ARGV, 1, n))
local out, seen, hset, xadd = {}, {}, {}, {}
local taken, x = 0, 0
for i = 1, n do
	local user = ARGV[i]
	if have[i] or seen[user] then
		out[i] = -1
	elseif stock - taken <= 0 then
		out[i] = 0
	else
		local rid = ARGV[n + i]
		taken = taken + 1
		seen[user] = true
		hset[taken + taken - 1] = user
		hset[taken + taken] = rid
		xadd[x + 1] = 'u'
		xadd[x + 2] = user
		xadd[x + 3] = 'r'
		xadd[x + 4] = rid
		x = x + 4
		out[i] = 1
	end
end
if taken > 0 then
	-- A script is not rolled back, so no write may fail after another: HMGET above has shown
	-- that the result hash is a hash and the pattern that the stock is an integer, so only
	-- the first XADD can fail (the outbox key of another type), and it comes first. At most
	-- 1024 reservations (4096 values) go in one entry: unpack() is bounded by Lua's C stack
	-- (about 8000 values).
	for a = 1, x, 4096 do
		local b = a + 4095
		if b > x then
			b = x
		end
		redis.call('XADD', KEYS[3], '*', unpack(xadd, a, b))
	end
	stock = redis.call('DECRBY', KEYS[1], taken)
	redis.call('HSET', KEYS[2], unpack(hset))
end
out[n + 1] = stock
return out
