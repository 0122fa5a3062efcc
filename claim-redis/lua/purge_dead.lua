-- purge_dead.lua: deletes dead entries of one queue (an operator's
-- `async-worker admin dead purge`).
--
-- KEYS[1] <queue>:dead hash
-- ARGV[1..] members
-- Returns one integer per member: 1 if its entry was deleted, else 0.
--
-- Correctness: HDEL per member in one atomic step, so each answer says
-- exactly what this call deleted (a repeated member answers 0 the second
-- time) and a concurrent redrive of the same entry either moved it first
-- (0 here) or finds it gone. Nothing but the dead hash is touched: a
-- payload stored apart expires on its own, ten minutes after the
-- deadline. One queue's key: one cluster slot.

need(#ARGV >= 1 and #KEYS == 1, 'purge_dead: expects 1 KEY and at least one member')
redis.call('HLEN', KEYS[1])
local out = {}
for i = 1, #ARGV do
  out[i] = redis.call('HDEL', KEYS[1], ARGV[i])
end
return out
