-- release_claim.lua: ends one generation's claim now, whoever holds it (an
-- operator's `async-worker admin release`): the member goes back to pending
-- at its original score, for any replica to claim at once; a generation
-- that is answered (a live terminal marker) has its claim dropped instead.
--
-- KEYS[1] pending zset   KEYS[2] <queue>:claimed hash
-- KEYS[3] <queue>:claim-owners hash   KEYS[4] <queue>:claims-idx zset
-- KEYS[5] <queue>:deliveries hash
-- KEYS[6] the generation's terminal marker (hash-tagged: its copy in the
-- queue's slot, Keys::marker_for with the pending key)
-- plain only: KEYS[7] the generation's payload key
-- (request-payload:<id>:<token>), KEYS[8] the explicit-time side hash
-- ARGV[1] claim key   ARGV[2] now in ms, or "" for the server's TIME
-- ARGV[3] (hash-tagged only) the marker value read before from its
-- candidate keys in other slots ('' = none; ops/release.rs)
-- Returns {owner token whose claim ended, 1 if it was dropped as answered
-- (plain: its payload key deleted here; hash-tagged: the caller deletes
-- it) else 0}, or false when none was held.
--
-- Correctness: as release.lua without the owner check, in one atomic step:
-- the claim leaves the claimed hash, the owners hash and the index and the
-- member enters pending at the score kept in the owner entry (a Go claim,
-- a bare token: Go's score formula on the member, as our reclaimer), so it
-- is in exactly one place. Not a delivery: a count above zero moves to the
-- deliveries hash unchanged, as release.lua keeps it. An answered
-- generation (a stale owner's ack landed while this claim was held) is
-- dropped with its count and its payload key (the stale ack left the
-- payload to the holder, and nobody acks this claim now) and goes
-- nowhere: back in pending it would be
-- served again once its marker expired (a marker written after the
-- hash-tagged pre-read is missed: claim.lua then drops the copy as
-- answered). The former owner's renew then finds no claim (lost) and its
-- late ack, a non-holder's, pushes only while the pending copy is there
-- and removes it (ack.lua), so one record results. A claim without its
-- member (never written by these scripts) is left for the reclaimer's
-- repair. One queue's keys: one cluster slot. Type checks precede the
-- first write.

local tagged = #ARGV == 3
need((#ARGV == 2 and #KEYS == 8) or (tagged and #KEYS == 6),
  'release_claim: expects 8 KEYS and 2 ARGV (hash-tagged: 6 KEYS and 3 ARGV)')
need(ARGV[2] == '' or tonumber(ARGV[2]), 'release_claim: time must be a number')
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
local now = clock_ms(ARGV[2])
local value = ARGV[3] or ''
local answered = is_live(redis.call('GET', KEYS[6]), now) or (value ~= '' and is_live(value, now))

local explicit = ARGV[2] ~= ''
local unpayload = answered and not tagged and { KEYS[7] } or {}
check_types({ KEYS[5], explicit and #unpayload > 0 and KEYS[8] }, { KEYS[1], KEYS[4] })
local drops, counts = { gen }, {}
if not answered then
  redis.call('ZADD', KEYS[1], score, member)
  note_drop({}, counts, gen, r)
end
drop_claims(KEYS[2], KEYS[3], KEYS[4], KEYS[5], drops, counts)
del_keys(unpayload, KEYS[8], explicit)
return { owner, answered and 1 or 0 }
