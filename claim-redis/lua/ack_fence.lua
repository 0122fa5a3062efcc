-- ack_fence.lua: the read-only first step of an ack whose result list lies
-- in another slot than the queue (hash-tagged layout): is each generation
-- answered already, may its record be pushed, does the caller hold it?
--
-- KEYS[1] pending zset   KEYS[2] <queue>:claim-owners hash
-- KEYS[2+i] (i = 1..n) item i's terminal marker in the queue's slot
-- (Keys::marker_for with the pending key), all in the queue's slot
-- ARGV[1] owner token   ARGV[2] now in ms, or "" for the server's TIME
-- then per item i, at b = 2 + 3(i-1): ARGV[b+1] claim key, ARGV[b+2] the
-- member as claimed, ARGV[b+3] the record's digest
-- Returns one integer per item: 1 if the caller holds the claim, plus 2 if
-- the generation is ours somewhere (claimed by the caller or another of
-- our owners, or pending as these very bytes: ack.lua's condition for
-- pushing, the model's ours_somewhere), plus 4 if its queue-slot marker is
-- live (answered: nothing may be pushed), plus 8 if that marker holds this
-- record's digest (its own record landed), plus 16 if another owner (ours
-- or a Go processor) holds the claim: a marker written for this ack must
-- then outlive that claim (claim_core::lease::marker_expiry_beside_a_claim).
--
-- Correctness: it writes nothing, so running it twice (a resent call) or
-- not at all changes no state. One atomic read answers every item from one
-- snapshot; the answer is a fence, not a lock: the owner-checked drop
-- (ack_drop.lua) re-reads the claims after the push and acts on what it
-- finds then, and the push itself (push_once.lua) re-checks the marker in
-- the list's slot, so a change between the steps can cost at most a push
-- the model would also have made at the moment of this read, never a
-- second record. The queue-slot marker stops a second record on another
-- list: an answered generation is answered whichever list a late ack names.

local n = (#ARGV - 2) / 3
need(n >= 1 and n == math.floor(n) and #KEYS == 2 + n,
  'ack_fence: expects 2 + n KEYS and 2 + 3n ARGV')
need(ARGV[2] == '' or tonumber(ARGV[2]), 'ack_fence: time must be a number')
local gens, members = {}, {}
for i = 1, n do
  gens[i] = ARGV[3 * i]
  members[i] = ARGV[3 * i + 1]
end
local owners = redis.call('HMGET', KEYS[2], unpack(gens))
local copies = redis.call('ZMSCORE', KEYS[1], unpack(members))
local markers = redis.call('MGET', unpack(KEYS, 3, 2 + n))
local now = clock_ms(ARGV[2])
local bar, rest = ARGV[1] .. '|', #ARGV[1] + 2
local out = {}
for i = 1, n do
  local entry = owners[i]
  local held = held_by(entry, bar, rest)
  local code = 0
  if held then
    code = 1
  elseif entry then
    code = 16
  end
  if held or (entry and not is_foreign(entry)) or copies[i] then
    code = code + 2
  end
  if is_live(markers[i], now) then
    code = code + 4
    if marker_digest(markers[i]) == ARGV[3 * i + 2] then
      code = code + 8
    end
  end
  out[i] = code
end
return out
