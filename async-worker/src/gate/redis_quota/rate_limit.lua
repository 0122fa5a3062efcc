-- redis-quota, rate-limit mode: admit one request of one attribute value
-- unless `limit` were admitted within the trailing window.
--
-- KEYS[1]  the value's admissions: a sorted set scored by admission time (ns)
-- ARGV[1]  the window's start (now - window, ns): admissions at or before it
--          no longer count and are removed
-- ARGV[2]  the limit, an integer > 0
-- ARGV[3]  now (ns), the new admission's score
-- ARGV[4]  the new admission's member, unique per admission
-- ARGV[5]  the set's TTL in seconds, > 0
-- Returns  1 when admitted (`reserved`), 0 when the limit is reached
--          (`overflow`; only expired admissions are removed).
--
-- Why it is correct: the trim, the count and the add are one atomic step,
-- so two processors can never both count `limit - 1` and both admit. The
-- member is unique, so two admissions in the same nanosecond are counted
-- twice, not merged into one. Times are the callers' clocks, as in Go: the
-- window is only as exact as the processors' clocks agree. The TTL (twice
-- the window) outlives every admission that still counts, so an idle
-- value's set disappears by itself. A key of another type makes a command
-- raise an error, which the gate reports.
redis.call("ZREMRANGEBYSCORE", KEYS[1], 0, ARGV[1])
if redis.call("ZCARD", KEYS[1]) >= tonumber(ARGV[2]) then
  return 0
end
redis.call("ZADD", KEYS[1], ARGV[3], ARGV[4])
redis.call("EXPIRE", KEYS[1], ARGV[5])
return 1
