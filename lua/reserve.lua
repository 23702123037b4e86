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
-- KEYS[5] fg:{ev}:draw     hash: the event's draw (enter.lua, draw_freeze.lua): state
--                          (open|frozen|done; missing: no draw), n, next, served
-- KEYS[6] fg:{ev}:wait     list: the waiting list, "<user>:<rid>:<rank>" in rank order
-- KEYS[7] fg:{ev}:wrank    hash: user -> rank of every entrant a draw batch appended to KEYS[6]
-- ARGV    n users, then their n reservation ids, then now_ms (the control plane's clock), all
--         decimal, then the cursor: "-" for a first-come batch, or the draw's index of the
--         batch's first entrant; 1 <= n <= 2048 (unpack() below is bounded by Lua's C stack)
--
-- Returns n verdicts and then the stock left: 1 reserved, -1 duplicate (already a buyer,
-- also earlier in this batch), 0 sold out, 2 waiting (a draw batch's entrant beyond the stock,
-- appended to the waiting list): for every user exactly what the one-user script
-- of the seed answers when the batch is run one user at a time, in order. Outside the sale
-- (window "closed" or now >= ends: -2 closed; "held" or now < starts: -3 not started) every
-- verdict is the same and nothing is written: closing the sale is one SET of the window key,
-- so a batch runs wholly before a close or is refused wholly after it.
--
-- The draw (docs/fairness.md): while the draw key exists and its state is not done, a
-- first-come batch is refused whole (every verdict -4: retry, nothing written). A draw batch
-- (cursor = an index) runs only when the state is frozen and "next" equals the cursor (else
-- every verdict is -5 and nothing is written: another control plane decided it, or it is not
-- this batch's turn); it advances next by n in the same script, and sets state done when
-- next reaches the draw's n. So each entrant is decided exactly once, in rank order, whoever
-- runs the batches and however often they are retried. A draw batch outside the window: a
-- closed sale advances the cursor too (its entrants are answered closed once), a held one
-- does not.
--
-- The waiting list (docs/fairness.md): a draw batch's entrant beyond the stock is appended to
-- KEYS[6] in the same script that advances the cursor (so once, in rank order, whoever runs the
-- batch) and answered 2, and its rank is recorded in KEYS[7] in the same script (so exactly
-- once; never removed: it answers a result query of the entrant after the draw is done, on any
-- control plane); release.lua hands returned items to the list's head. The draw key's "served"
-- is the highest rank that holds an item (set here by a draw batch's last reserved entrant, by
-- release.lua for the list): an entrant of rank r waits behind r - 1 - served.
--
-- Why it looks like this: the per-user work is what limits the control plane, so the reads
-- are done once per batch (GET, HMGET), the decisions in plain Lua, and the writes once per
-- batch (DECRBY, HSET, XADD). The result hash doubles as the buyers set (a buyer is a user
-- with a field), which saves a set insert per reservation, and one outbox entry holds the
-- whole batch, which saves a stream entry per reservation. Deferring writes to the end of the
-- script changes nothing anyone can see: a script runs alone, and Redis writes its effects to
-- the AOF and replicas as one MULTI/EXEC. One argument per field was measured faster than one
-- packed string per field split here with gmatch.
local n = (#ARGV - 2) / 2
local cursor = ARGV[#ARGV]
if n < 1 or n > 2048 or n % 1 ~= 0 or not string.find(ARGV[#ARGV - 1], '^%d+$') or
	(cursor ~= '-' and not string.find(cursor, '^%d+$')) then
	return redis.error_reply('ERR reserve.lua: ARGV must be 1..2048 users, their ids, now_ms ' ..
		'and the cursor')
end
local stock = redis.call('GET', KEYS[1]) or '0'
-- DECRBY below must not fail after a write, so refuse what it would refuse first.
if not string.find(stock, '^%-?%d+$') then
	return redis.error_reply('ERR reserve.lua: the stock key does not hold an integer')
end
stock = tonumber(stock)
local function all(v)
	local out = {}
	for i = 1, n do
		out[i] = v
	end
	out[n + 1] = stock
	return out
end
local draw = redis.call('HMGET', KEYS[5], 'state', 'n', 'next')
local draw_next
if cursor == '-' then
	if draw[1] and draw[1] ~= 'done' then
		return all(-4)
	end
else
	if draw[1] ~= 'frozen' or draw[3] ~= cursor then
		return all(-5)
	end
	draw_next = tonumber(cursor) + n
	if draw_next > tonumber(draw[2]) then
		return redis.error_reply('ERR reserve.lua: a draw batch past the last entrant')
	end
end
-- Advances a draw batch's cursor: the last write of the script (the draw key is a hash).
local function advance()
	if draw_next then
		redis.call('HSET', KEYS[5], 'next', draw_next)
		if draw_next == tonumber(draw[2]) then
			redis.call('HSET', KEYS[5], 'state', 'done')
		end
	end
end
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
		local now = tonumber(ARGV[#ARGV - 1])
		if now >= tonumber(e) then
			refuse = -2
		elseif now < tonumber(s) then
			refuse = -3
		end
	end
	if refuse then
		if refuse == -2 then
			advance()
		end
		return all(refuse)
	end
end
local have = redis.call('HMGET', KEYS[2], unpack(ARGV, 1, n))
local out, seen, hset, xadd, wait, wrank = {}, {}, {}, {}, {}, {}
local taken, x, served = 0, 0, nil
for i = 1, n do
	local user = ARGV[i]
	if have[i] or seen[user] then
		out[i] = -1
	elseif stock - taken <= 0 then
		out[i] = 0
		if draw_next then
			out[i] = 2
			wait[#wait + 1] = user .. ':' .. ARGV[n + i] .. ':' .. (tonumber(cursor) + i)
			wrank[#wrank + 1] = user
			wrank[#wrank + 1] = tonumber(cursor) + i
		end
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
		if draw_next then
			served = tonumber(cursor) + i
		end
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
if #wait > 0 then
	redis.call('RPUSH', KEYS[6], unpack(wait))
	redis.call('HSET', KEYS[7], unpack(wrank))
end
if served then
	redis.call('HSET', KEYS[5], 'served', served)
end
advance()
out[n + 1] = stock
return out
