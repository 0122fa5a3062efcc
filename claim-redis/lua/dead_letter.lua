-- dead_letter.lua: moves a pending member that cannot be parsed to the dead hash.
--
-- KEYS[1] pending zset   KEYS[2] <queue>:dead hash
-- ARGV[1] member   ARGV[2] dead entry JSON {"reason":..,"at_ms":..}
-- Returns 1 if moved, 0 if the member was no longer pending.
--
-- Correctness: only a member still pending is moved, in one atomic step, so
-- a member another replica claimed meanwhile is never dead-lettered behind
-- its owner, and nothing is deleted without a dead entry. The dead hash is
-- type-checked before the first write.

need(#ARGV == 2 and #KEYS == 2, 'dead_letter: expects 2 KEYS and 2 ARGV')
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return 0
end
redis.call('HLEN', KEYS[2])
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1
