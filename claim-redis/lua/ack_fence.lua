-- ack_fence.lua: the read-only first step of an ack whose result list lies
-- in another slot than the queue (hash-tagged layout): may each record be
-- pushed, and does the caller hold each claim?
--
-- KEYS[1] pending zset   KEYS[2] <queue>:claim-owners hash (both in the
-- queue's slot)
-- ARGV[1] owner token; then per item i: ARGV[2i] claim key, ARGV[2i+1]
-- the member as claimed
-- Returns one integer per item: 1 if the caller holds the claim, plus 2 if
-- the generation is ours somewhere (claimed by the caller or another of
-- our owners, or pending as these very bytes): ack.lua's condition for
-- pushing, the model's ours_somewhere.
--
-- Correctness: it writes nothing, so running it twice (a resent call) or
-- not at all changes no state. One atomic read answers every item from one
-- snapshot; the answer is a fence, not a lock: the owner-checked drop
-- (ack_drop.lua) re-reads the claims after the push and acts on what it
-- finds then, and the push itself (push_once.lua) re-checks the marker, so
-- a change between the steps can cost at most a push the model would also
-- have made at the moment of this read, never a second record.

local n = (#ARGV - 1) / 2
need(#KEYS == 2 and n >= 1 and n == math.floor(n), 'ack_fence: expects 2 KEYS and 2 ARGV per item')
local gens, members = {}, {}
for i = 1, n do
  gens[i] = ARGV[2 * i]
  members[i] = ARGV[2 * i + 1]
end
local owners = redis.call('HMGET', KEYS[2], unpack(gens))
local copies = redis.call('ZMSCORE', KEYS[1], unpack(members))
local find = string.find
local bar, rest = ARGV[1] .. '|', #ARGV[1] + 2
local out = {}
for i = 1, n do
  local entry = owners[i]
  local held = entry and find(entry, bar, 1, true) == 1 and find(entry, '^[^|]+|%d+$', rest)
  local code = 0
  if held then
    code = 1
  end
  if held or (entry and not is_foreign(entry)) or copies[i] then
    code = code + 2
  end
  out[i] = code
end
return out
