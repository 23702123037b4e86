-- SPDX-License-Identifier: BSD-3-Clause
-- release.lua: returns one cancelled or expired reservation's stock, exactly once, to the
-- draw's waiting list first.
--
-- KEYS[1] fg:{ev}:stock  KEYS[2] fg:{ev}:released  KEYS[3] fg:{ev}:result
-- KEYS[4] fg:{ev}:draw   KEYS[5] fg:{ev}:wait  KEYS[6] fg:{ev}:outbox  KEYS[7] fg:{ev}:window
--         (KEYS[4..7] optional: with 3 keys there is no waiting list)
-- ARGV[1] reservation id  ARGV[2] user  ARGV[3] n, the stock to return (1..1000000)
-- ARGV[4] (optional) the user's result from now on: "X:<rid>:<order id>:<deadline>" (expired),
--         "C:<rid>:<order id>:<deadline>" (cancelled) or "S:<rid>" (a reservation that never
--         became an order: PostgreSQL had no stock left for it); "X:<rid>" without it
-- ARGV[5] (optional, with KEYS[4..7]) the most items to hand to the waiting list (0..1000)
-- ARGV[6] (optional, with ARGV[5]) now, Unix ms: a window "<starts_ms> <ends_ms>" past its end
--         counts as closed
--
-- Returns {1, user, rid, rank, ...} (the three as decimal strings) when the stock went back, with one (user, rid, rank) per
-- item handed to the waiting list; {0} when this reservation was released before, or is released
-- as "S:" while the user's field holds something else (nothing changes); {-1} when the user is
-- not a buyer of the event, i.e. has no field in the result hash (nothing changes: returning
-- stock that was never taken would oversell).
--
-- The waiting list (reserve.lua's draw batches append the entrants beyond the stock in rank
-- order): while it holds entrants and the sale is not closed or over, each returned item goes to the
-- list's head instead of the stock, in this same script: the entrant becomes a buyer (its
-- result "<rid>", the entrant's reservation) and its reservation goes to the outbox, so the
-- order writer makes its order as any other's; the draw key's "served" becomes its rank. An
-- entrant who is a buyer already (never, but cheap to check) is skipped. So a returned item
-- goes to the next entrant by rank, exactly once whoever releases it, never to a first-come
-- reserve (the stock stays 0 while anyone waits).
--
-- The released set holds "<rid>:<user>": a reservation id alone is unique per data plane, and
-- two data planes misconfigured with one dp id make the same id for two buyers; each buyer's
-- stock must still go back once (a bare "<rid>" member is an older build's and counts too).
--
-- The user stays a buyer (its field becomes ARGV[4]): a sale allows one order per user
-- (orders has UNIQUE (event_id, user_id)), so a user whose order expired cannot reserve
-- again; a second reservation could never become an order. The invariant is therefore
-- stock + HLEN(result) - |released| == preheated stock (an item handed to the list adds a
-- buyer instead of stock).
local n = tonumber(ARGV[3])
if not n or n < 1 or n > 1000000 or n % 1 ~= 0 then
	return redis.error_reply('ERR release.lua: n must be an integer in 1..1000000')
end
if redis.call('HEXISTS', KEYS[3], ARGV[2]) == 0 then
	return {-1}
end
-- A reservation that never became an order ("S:...") goes back only while the user's field is
-- still that reservation: a repair may have written the user's order's field over it (reconcile's
-- orphan reservations), and that order holds the item; its field must stay.
if ARGV[4] and string.sub(ARGV[4], 1, 2) == 'S:' and
	redis.call('HGET', KEYS[3], ARGV[2]) ~= ARGV[1] then
	return {0}
end
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 or
	redis.call('SADD', KEYS[2], ARGV[1] .. ':' .. ARGV[2]) == 0 then
	return {0}
end
-- A paid buyer's item coming back (never expected: PostgreSQL's pay is final) leaves the
-- draw key's count of the buyers paid (store_results_paid()), which tells when no item can
-- come back to the waiting list.
if KEYS[4] and string.sub(redis.call('HGET', KEYS[3], ARGV[2]) or '', 1, 2) == 'P:' and
	redis.call('HEXISTS', KEYS[4], 'paid') == 1 then
	redis.call('HINCRBY', KEYS[4], 'paid', -1)
end
redis.call('HSET', KEYS[3], ARGV[2], ARGV[4] or ('X:' .. ARGV[1]))
local out, cap = {1}, tonumber(ARGV[5] or '0') or 0
-- A missing window key (GET answers false) is no window recorded: the list goes on.
local list = KEYS[7] and cap > 0
if list then
	local window = redis.call('GET', KEYS[7])
	local ends = window and string.match(window, '^%d+ (%d+)$')
	if window == 'closed' or (ends and ARGV[6] and tonumber(ARGV[6]) >= tonumber(ends)) then
		list = false
	end
end
if list then
	while n > 0 and cap > 0 do
		local head = redis.call('LPOP', KEYS[5])
		if not head then
			break
		end
		local user, rid, rank = string.match(head, '^(%d+):(%d+):(%d+)$')
		if user and redis.call('HSETNX', KEYS[3], user, rid) == 1 then
			redis.call('XADD', KEYS[6], '*', 'u', user, 'r', rid)
			redis.call('HSET', KEYS[4], 'served', rank)
			out[#out + 1] = user
			out[#out + 1] = rid
			out[#out + 1] = rank
			n = n - 1
			cap = cap - 1
		end
	end
end
if n > 0 then
	redis.call('INCRBY', KEYS[1], n)
end
return out
