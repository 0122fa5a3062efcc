-- redrive_dead.lua: moves dead entries of one queue back to pending (an
-- operator's `async-worker admin dead redrive`).
--
-- KEYS[1] pending zset   KEYS[2] <queue>:dead hash   KEYS[3] <queue>:deliveries hash
-- ARGV[3i-2] member   ARGV[3i-1] its pending score (wire::queue_score, as
-- ZADD text)   ARGV[3i] its claim key
-- Returns one integer per item: 1 if moved back to pending, 0 if it was
-- not (or no longer) in the dead hash.
--
-- Correctness: each entry is checked to be in the dead hash and, in the
-- same atomic step, removed from it and added to pending at the score the
-- producer gave it (computed by the caller from the member itself, as the
-- model does), with its delivery count dropped, so it is in exactly one
-- place before and after and none is lost. A repeated member finds its
-- entry already moved. The caller leaves out answered generations (a live
-- terminal marker): while a generation sits only in the dead hash no ack
-- can answer it (a non-holder's ack pushes only for a claimed or pending
-- copy), so that read cannot go stale, and a pending copy of an answered
-- generation would still be dropped by claim.lua. Every key is one queue's:
-- one cluster slot. Type checks precede the first write.

local n = #ARGV / 3
need(n >= 1 and n == math.floor(n) and #KEYS == 3, 'redrive_dead: expects 3 KEYS and 3 ARGV per item')
for i = 1, n do
  local score = tonumber(ARGV[3 * i - 1])
  need(score and score == score, 'redrive_dead: a score is not a number')
end
check_types({ KEYS[2], KEYS[3] }, { KEYS[1] })

local out, seen = {}, {}
for i = 1, n do
  local member = ARGV[3 * i - 2]
  out[i] = 0
  if not seen[member] then
    seen[member] = true
    if redis.call('HDEL', KEYS[2], member) == 1 then
      redis.call('ZADD', KEYS[1], ARGV[3 * i - 1], member)
      redis.call('HDEL', KEYS[3], ARGV[3 * i])
      out[i] = 1
    end
  end
end
return out
