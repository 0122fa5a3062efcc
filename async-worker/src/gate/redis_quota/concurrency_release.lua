-- redis-quota, concurrency mode: give back a slot that concurrency_acquire.lua took.
--
-- KEYS[1]  the value's counter
-- ARGV[1]  the counter's TTL in seconds, > 0
-- Returns  the slots still held after this one is given back, or -1 when
--          there was nothing to give back (the counter expired or was reset
--          while the request ran).
--
-- Why it is correct: the read and the DECR are one atomic step, and a
-- counter that is missing or not above 0 is left alone, so a late release
-- (after the counter expired) can never push the count below 0 and hand
-- out slots nobody returned. Each reservation's release runs exactly once
-- (the gate's release list guarantees it), so a slot is given back at most
-- once. The TTL is renewed while slots are still held, so the counter
-- outlives the requests it counts; at 0 it is left to expire.
local held = tonumber(redis.call("GET", KEYS[1]))
if not held or held <= 0 then
  return -1
end
local left = redis.call("DECR", KEYS[1])
if left > 0 then
  redis.call("EXPIRE", KEYS[1], ARGV[1])
end
return left
