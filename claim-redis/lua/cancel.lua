-- cancel.lua: cancels as the Go producer does: the active token becomes the
-- cancel marker.
--
-- KEYS[1] request-active:<id>   KEYS[2] request-cancel:<id>
-- KEYS[3] explicit-time side hash
-- ARGV[1] now in ms, or "" (server time: Redis expiry alone decides)
-- ARGV[2] the cancel key's PX in ms   ARGV[3] its expiry in ms (explicit time only)
-- Returns 1 if the id had an active generation (now cancelled), else 0.
--
-- Correctness: reading the active token and writing the cancel marker in
-- one atomic step means a resubmission (which deletes the cancel key and
-- replaces the token in one MULTI) either happens before, and is the one
-- cancelled, or after, and clears this marker: a cancel never lands on a
-- generation it did not read. GET type-checks KEYS[1]; SET overwrites any
-- type; the side hash is type-checked before the first write.

need(#KEYS == 3 and #ARGV == 3 and tonumber(ARGV[2]), 'cancel: bad arguments')
local explicit = ARGV[1] ~= ''
local token = redis.call('GET', KEYS[1])
if not token then
  return 0
end
if explicit then
  local now = tonumber(ARGV[1])
  need(now and tonumber(ARGV[3]), 'cancel: time must be a number')
  if not side_live(redis.call('HGET', KEYS[3], KEYS[1]), now) then
    return 0
  end
end
redis.call('SET', KEYS[2], token, 'PX', ARGV[2])
if explicit then
  redis.call('HSET', KEYS[3], KEYS[2], ARGV[3])
end
return 1
