-- enqueue.lua: enqueues as the Go producer does, in one atomic step: the
-- next sequence for the queue and deadline stamped into the member.
--
-- KEYS[1] request-seq:<queue>:<deadline>   KEYS[2] request-cancel:<id>
-- KEYS[3] request-active:<id>   KEYS[4] the pending set <queue>
-- KEYS[5] explicit-time side hash   KEYS[6] request-payload:<id>:<token> (only with a payload)
-- ARGV[1] member prefix   ARGV[2] member suffix (member = prefix .. seq .. suffix)
-- ARGV[3] deadline, Unix seconds   ARGV[4] 'EXPIREAT' or 'PEXPIRE'   ARGV[5] its argument for KEYS[1]
-- ARGV[6] request token   ARGV[7] the active key's PX in ms
-- ARGV[8] the active key's logical expiry in ms, or "" (server time)
-- ARGV[9] now in ms   ARGV[10] KEYS[1]'s logical expiry in ms (both "" on server time)
-- ARGV[11] payload bytes   ARGV[12] the payload key's PX in ms
-- ARGV[13] its logical expiry in ms, or "" (server time) (11-13 only with a payload)
-- Hash-tagged layout: KEYS[1] the sequence key, KEYS[2] the pending set,
-- KEYS[3] the side hash of their slot, all in the queue's slot; ARGV 1-10
-- as above (6 and 7 unused). The caller wrote the per-request keys first
-- (ops/producer.rs, producer_keys, says why that order is safe).
-- Returns the sequence stamped (an integer, at least 1).
--
-- Correctness: INCR, the stamp and the ZADD happen in one script, so two
-- producers enqueueing to one queue and deadline get distinct sequences in
-- the order their scripts run, and each member's score
-- deadline + min(seq, 2^21-1)/2^21 orders ties by submission. The score is
-- written with 17 significant digits, so Redis stores exactly the double
-- claim-core's queue_score computes (exact for deadlines below 2^32). The
-- caller split the member where the sequence goes (claim_core::wire::
-- seq_template), so the member enqueued is prefix .. seq .. suffix, the
-- bytes the caller returns. Every check runs before the first write: INCR
-- on a non-integer fails before anything else is written, and the other
-- keys are overwritten (SET) or type-checked first (ZADD's target, the
-- side hash). With an explicit clock Redis still expires keys on its own
-- clock, so the side hash holds each producer key's logical expiry; a
-- counter whose logical expiry has passed is deleted before the INCR, so
-- the sequence restarts at 1 as it would once Redis expired the key.
--
-- Numbers: the deadline must be a finite whole number, and every expiry
-- argument a number, checked before the first write; the expiries are then
-- clamped here, so none of the writes after the INCR can fail on them: the
-- counter's EXPIREAT to 0..MAX_DEADLINE_SECS + 1 h (a member due after
-- 9999-12-31 is answered INVALID_REQUEST; its counter still expires), its
-- PEXPIRE to 0..2^53 ms, the active and payload keys' PX to 1..2^53 ms (PX
-- 0 is refused by Redis). A deadline of 9223372036854775807 or -inf thus
-- leaves no counter without an expiry and no INCR without its ZADD.
--
-- Safe to run twice (a cluster client may resend after a connection
-- drop): when the member stamped with the counter's current value is
-- pending already, this call is that enqueue again (the same bytes, the
-- same generation): it answers that sequence and neither INCRs nor adds a
-- second member; the producer keys are written again with the same values.
-- Any other call stamps the next value, as before.

local n = #KEYS
local tagged = n == 3
need((n == 5 and #ARGV == 10) or (n == 6 and #ARGV == 13) or (tagged and #ARGV == 10),
  'enqueue: bad arguments')
local seq_key, cancel, active, pending, side, payload = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
if tagged then
  pending, side = KEYS[2], KEYS[3]
end
local deadline = tonumber(ARGV[3])
-- A number (not nan) clamped to lo..hi and written as whole digits; nil
-- for anything else.
local function clamped(text, lo, hi)
  local x = tonumber(text)
  if not x or x ~= x then
    return nil
  end
  return ms_string(math.max(lo, math.min(hi, math.floor(x))))
end
need(deadline and deadline == math.floor(deadline) and deadline > -math.huge
  and deadline < math.huge, 'enqueue: the deadline must be a finite whole number')
need(ARGV[4] == 'EXPIREAT' or ARGV[4] == 'PEXPIRE', 'enqueue: bad expiry command')
local seq_expire = ARGV[4] == 'EXPIREAT' and clamped(ARGV[5], 0, MAX_DEADLINE_SECS + 3600)
  or clamped(ARGV[5], 0, MAX_MS)
local active_px = clamped(ARGV[7], 1, MAX_MS)
local payload_px = n == 6 and clamped(ARGV[12], 1, MAX_MS)
need(seq_expire and active_px and (n ~= 6 or payload_px), 'enqueue: bad numbers')
local explicit = ARGV[8] ~= ''
local pending_type = redis.call('TYPE', pending)['ok']
need(pending_type == 'none' or pending_type == 'zset',
  'enqueue: ' .. pending .. ' holds a ' .. tostring(pending_type))
local lapsed = false
if explicit then
  local side_type = redis.call('TYPE', side)['ok']
  need(side_type == 'none' or side_type == 'hash', 'enqueue: side hash has the wrong type')
  local now = tonumber(ARGV[9])
  need(now and tonumber(ARGV[10]), 'enqueue: explicit time must be a number')
  lapsed = not side_live(redis.call('HGET', side, seq_key), now)
end
local seq_type = redis.call('TYPE', seq_key)['ok']
need(seq_type == 'none' or seq_type == 'string', 'enqueue: ' .. seq_key .. ' is not a counter')

local seq = not lapsed and redis.call('GET', seq_key)
if seq and redis.call('ZSCORE', pending, ARGV[1] .. seq .. ARGV[2]) then
  seq = tonumber(seq)
else
  if lapsed then
    redis.call('DEL', seq_key)
  end
  seq = redis.call('INCR', seq_key)
  redis.call(ARGV[4], seq_key, seq_expire)
end
if tagged then
  if explicit then
    redis.call('HSET', side, seq_key, ARGV[10])
  end
else
  redis.call('DEL', cancel)
  redis.call('SET', active, ARGV[6], 'PX', active_px)
  if explicit then
    redis.call('HDEL', side, cancel)
    redis.call('HSET', side, active, ARGV[8], seq_key, ARGV[10])
  end
end
if n == 6 then
  redis.call('SET', payload, ARGV[11], 'PX', payload_px)
  if explicit then
    redis.call('HSET', side, payload, ARGV[13])
  end
end
local score = deadline + math.min(seq, 2097151) / 2097152
local member = ARGV[1] .. string.format('%d', seq) .. ARGV[2]
redis.call('ZADD', pending, string.format('%.17g', score), member)
return seq
