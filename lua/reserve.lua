-- SPDX-License-Identifier: BSD-3-Clause
-- reserve.lua: decides a batch of reservations of one event, in order, atomically.
--
-- KEYS[1] fg:{ev}:stock    string, an integer; missing counts as 0 (not preheated)
-- KEYS[2] fg:{ev}:buyers   set of user ids
-- KEYS[3] fg:{ev}:outbox   stream: one entry per reservation, u=<user> r=<rid> t=<admitted_ms>
-- KEYS[4] fg:{ev}:result   hash: user -> "<rid>" (reserved; later states use a prefix)
-- ARGV    n users, then their n reservation ids, then their n admission times (ms), all
--         decimal; 1 <= n <= 2048 (unpack() below is bounded by Lua's C stack)
--
-- Returns n verdicts and then the stock left: 1 reserved, -1 duplicate (already a buyer,
-- also earlier in this batch), 0 sold out: for every user exactly what the one-user script
-- of the seed answers when the batch is run one user at a time, in order.
--
-- Why it looks like this: the per-user work is what limits the control plane, so the reads
-- are done once per batch (GET, SMISMEMBER), the decisions in plain Lua, and the writes once
-- per batch (SADD, HSET, DECRBY) except XADD, which makes one outbox entry per reservation.
-- Deferring writes to the end of the script changes nothing anyone can see: a script runs
-- alone, and Redis writes its effects to the AOF and replicas as one MULTI/EXEC. One argument
-- per field was measured faster than one packed string per field split here with gmatch.
-- Needs Redis >= 6.2 (SMISMEMBER).
local n = #ARGV / 3
if n < 1 or n > 2048 or n % 1 ~= 0 then
	return redis.error_reply('ERR reserve.lua: ARGV must be 1..2048 users, ids and times')
end
local stock = redis.call('GET', KEYS[1]) or '0'
-- DECRBY below must not fail after the first XADD, so refuse what it would refuse first.
if not string.find(stock, '^%-?%d+$') then
	return redis.error_reply('ERR reserve.lua: the stock key does not hold an integer')
end
stock = tonumber(stock)
local member = redis.call('SMISMEMBER', KEYS[2], unpack(ARGV, 1, n))
local out, seen, hset = {}, {}, {}
local taken, last = 0, 0
local outbox, t0 = KEYS[3], n + n
for i = 1, n do
	local user = ARGV[i]
	if member[i] == 1 or seen[user] then
		out[i] = -1
	elseif stock - taken <= 0 then
		out[i] = 0
	else
		local rid = ARGV[n + i]
		taken = taken + 1
		seen[user] = true
		redis.call('XADD', outbox, '*', 'u', user, 'r', rid, 't', ARGV[t0 + i])
		hset[taken + taken - 1] = user
		hset[taken + taken] = rid
		last = i
		out[i] = 1
	end
end
if taken > 0 then
	-- The writes that keep stock and buyers consistent come first: a script is not rolled
	-- back, and only the result hash could still fail (if its key had another type).
	stock = redis.call('DECRBY', KEYS[1], taken)
	-- Every user up to the last reserved one is reserved or already a buyer (stock was left
	-- for all of them), so adding them all adds exactly the reserved ones.
	redis.call('SADD', KEYS[2], unpack(ARGV, 1, last))
	redis.call('HSET', KEYS[4], unpack(hset))
end
out[n + 1] = stock
return out
