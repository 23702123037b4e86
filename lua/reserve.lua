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
-- ARGV    n users, then their n reservation ids, all decimal; 1 <= n <= 2048 (unpack() below
--         is bounded by Lua's C stack)
--
-- Returns n verdicts and then the stock left: 1 reserved, -1 duplicate (already a buyer,
-- also earlier in this batch), 0 sold out: for every user exactly what the one-user script
-- of the seed answers when the batch is run one user at a time, in order.
--
-- Why it looks like this: the per-user work is what limits the control plane, so the reads
-- are done once per batch (GET, HMGET), the decisions in plain Lua, and the writes once per
-- batch (DECRBY, HSET, XADD). The result hash doubles as the buyers set (a buyer is a user
-- with a field), which saves a set insert per reservation, and one outbox entry holds the
-- whole batch, which saves a stream entry per reservation. Deferring writes to the end of the
-- script changes nothing anyone can see: a script runs alone, and Redis writes its effects to
-- the AOF and replicas as one MULTI/EXEC. One argument per field was measured faster than one
-- packed string per field split here with gmatch.
local n = #ARGV / 2
if n < 1 or n > 2048 or n % 1 ~= 0 then
	return redis.error_reply('ERR reserve.lua: ARGV must be 1..2048 users and their ids')
end
local stock = redis.call('GET', KEYS[1]) or '0'
-- DECRBY below must not fail after a write, so refuse what it would refuse first.
if not string.find(stock, '^%-?%d+$') then
	return redis.error_reply('ERR reserve.lua: the stock key does not hold an integer')
end
stock = tonumber(stock)
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
