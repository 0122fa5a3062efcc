-- release_claim.lua: ends one generation's claim now, whoever holds it (an
-- operator's `async-worker admin release`): the member goes back to pending
-- at its original score, for any replica to claim at once.
--
-- KEYS[1] pending zset   KEYS[2] <queue>:claimed hash
-- KEYS[3] <queue>:claim-owners hash   KEYS[4] <queue>:claims-idx zset
-- KEYS[5] <queue>:deliveries hash
-- ARGV[1] claim key
-- Returns the owner token whose claim ended, or false when none was held.
--
-- Correctness: as release.lua without the owner check, in one atomic step:
-- the claim leaves the claimed hash, the owners hash and the index and the
-- member enters pending at the score kept in the owner entry (a Go claim,
-- a bare token: Go's score formula on the member, as our reclaimer), so it
-- is in exactly one place. Not a delivery: a count above zero moves to the
-- deliveries hash unchanged, as release.lua keeps it. The former owner's
-- renew then finds no claim (lost) and its late ack, a non-holder's, pushes
-- only while the pending copy is there and removes it (ack.lua), so one
-- record results. A claim without its member (never written by these
-- scripts) is left for the reclaimer's repair. One queue's keys: one
-- cluster slot. Type checks precede the first write.

need(#ARGV == 1 and #KEYS == 5, 'release_claim: expects 5 KEYS and 1 ARGV')
local gen = ARGV[1]
local entry = redis.call('HGET', KEYS[3], gen)
if not entry then
  return false
end
local member = redis.call('HGET', KEYS[2], gen)
if not member then
  return false
end
local owner, score, r
if is_foreign(entry) then
  owner, score, r = entry, member_score(member), 0
else
  owner, score, r = unpack_owner(entry)
  need(owner, 'release_claim: the claim-owners entry is malformed')
end

check_types({ KEYS[5] }, { KEYS[1], KEYS[4] })
redis.call('ZADD', KEYS[1], score, member)
local drops, counts = {}, {}
note_drop(drops, counts, gen, r)
drop_claims(KEYS[2], KEYS[3], KEYS[4], KEYS[5], drops, counts)
return owner
