-- SPDX-License-Identifier: BSD-3-Clause
-- release.lua: returns one cancelled or expired reservation's stock, exactly once.
--
-- KEYS[1] fg:{ev}:stock  KEYS[2] fg:{ev}:released  KEYS[3] fg:{ev}:result
-- ARGV[1] reservation id  ARGV[2] user  ARGV[3] n, the stock to return (1..1000000)
-- ARGV[4] (optional) the user's result from now on: "X:<rid>:<order id>:<deadline>" (expired),
--         "C:<rid>:<order id>:<deadline>" (cancelled) or "S:<rid>" (a reservation that never
--         became an order: PostgreSQL had no stock left for it); "X:<rid>" without it
--
-- Returns 1 when the stock went back, 0 when this reservation was released before (nothing
-- changes), -1 when the user is not a buyer of the event, i.e. has no field in the result
-- hash (nothing changes: returning stock that was never taken would oversell).
--
-- The released set holds "<rid>:<user>": a reservation id alone is unique per data plane, and
-- two data planes misconfigured with one dp id make the same id for two buyers; each buyer's
-- stock must still go back once (a bare "<rid>" member is an older build's and counts too).
--
-- The user stays a buyer (its field becomes ARGV[4]): a sale allows one order per user
-- (orders has UNIQUE (event_id, user_id)), so a user whose order expired cannot reserve
-- again; a second reservation could never become an order. The invariant is therefore
-- stock + HLEN(result) - |released| == preheated stock.
local n = tonumber(ARGV[3])
if not n or n < 1 or n > 1000000 or n % 1 ~= 0 then
	return redis.error_reply('ERR release.lua: n must be an integer in 1..1000000')
end
if redis.call('HEXISTS', KEYS[3], ARGV[2]) == 0 then
	return -1
end
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 or
	redis.call('SADD', KEYS[2], ARGV[1] .. ':' .. ARGV[2]) == 0 then
	return 0
end
redis.call('INCRBY', KEYS[1], n)
redis.call('HSET', KEYS[3], ARGV[2], ARGV[4] or ('X:' .. ARGV[1]))
return 1
