-- redis-quota, concurrency mode: take one of the `limit` slots of one attribute value.
--
-- KEYS[1]  the value's counter (a string holding an integer; absent means 0)
-- ARGV[1]  the limit, an integer > 0
-- ARGV[2]  the counter's TTL in seconds, > 0
-- Returns  1 when a slot was taken (the request is `reserved`), 0 when all
--          `limit` slots are held (`overflow`; nothing is written).
--
-- Why it is correct: Redis runs a script to its end before any other
-- command, so the read and the INCR are one step; two processors can never
-- both see `limit - 1` and both take the last slot. The counter never goes
-- above `limit` through this script. The TTL is renewed on every take, so
-- the counter expires only after a whole TTL without one: that frees the
-- slots of a processor that died holding them, while a counter in steady
-- use never expires under the requests it counts. A counter that holds
-- something other than an integer makes the comparison or the INCR raise
-- an error before anything is written, and the gate reports it instead of
-- guessing a count.
local held = redis.call("GET", KEYS[1])
if held and tonumber(held) >= tonumber(ARGV[1]) then
  return 0
end
redis.call("INCR", KEYS[1])
redis.call("EXPIRE", KEYS[1], ARGV[2])
return 1
