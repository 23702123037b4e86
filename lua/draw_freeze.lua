-- SPDX-License-Identifier: BSD-3-Clause
-- draw_freeze.lua: fixes one event's entrants at the draw (docs/fairness.md), atomically with
-- enter.lua: from here on enter.lua refuses (retry) and the entrants hash never changes.
--
-- KEYS[1] fg:{ev}:entrants hash: user -> "<rid>"
-- KEYS[2] fg:{ev}:draw     hash: state (open|frozen|done; missing = open), n, next, digest,
--                          served (reserve.lua's, release.lua's)
--
-- An open (or missing) draw becomes state=frozen, n=HLEN(entrants), next=0; with no entrant at
-- all it is done at once (n=0). A frozen or done draw is left as it is: a second control plane,
-- or one restarted during the draw, gets the same answer and goes on from "next".
-- Returns {state, n, next, digest or false, served or false}.
local state = redis.call('HGET', KEYS[2], 'state')
if not state or state == 'open' then
	local n = redis.call('HLEN', KEYS[1])
	redis.call('HSET', KEYS[2], 'state', n == 0 and 'done' or 'frozen', 'n', n, 'next', 0)
end
return redis.call('HMGET', KEYS[2], 'state', 'n', 'next', 'digest', 'served')
