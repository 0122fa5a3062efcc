-- park_retry.lua: moves claims one owner holds into the retry set. A claim
-- whose generation is answered (a live terminal marker) is dropped
-- instead: nothing is parked.
--
-- KEYS[1] <queue>:claimed hash   KEYS[2] <queue>:claim-owners hash
-- KEYS[3] <queue>:claims-idx zset   KEYS[4] <queue>:deliveries hash
-- KEYS[5] retry zset
-- KEYS[5+i] (i = 1..n) item i's terminal marker (hash-tagged: its copy in
-- the queue's slot, Keys::marker_for with the pending key)
-- plain only: KEYS[5+n+i] item i's payload key
-- (request-payload:<id>:<token>), KEYS[6+2n] the explicit-time side hash
-- ARGV[1] owner token   ARGV[2] now in ms, or "" for the server's TIME
-- ARGV[3i] claim key, ARGV[3i+1] stamped member, ARGV[3i+2] due score of
-- item i; hash-tagged only, ARGV[2+3n+i] item i's marker value read
-- before from its candidate keys in other slots ('' = none; ops/release.rs)
-- Returns one integer per item: 1 if the caller's claim ended parked, 3 if
-- it ended dropped as answered (plain: its payload key deleted here;
-- hash-tagged: the caller deletes it), 0 if the caller held no claim.
--
-- Correctness: owner-checked inside the script, and the claim is dropped in
-- the same step that parks the member, so no claim lives beside the parked
-- copy (a crash cannot duplicate the request). The redelivery count moves
-- to the deliveries hash when above zero, as in the model. A generation
-- with a live marker was answered while this owner held it (a stale
-- owner's ack landed first): parked, it would be promoted and served
-- again, so its claim is dropped with its count and nothing is parked, as
-- the model's park does; its payload key goes too (the stale ack left it
-- to this holder; the key is the generation's own, from the claim key). A marker written after the hash-tagged pre-read
-- is missed: the entry is parked and promotion drops it as answered (or
-- the claim script does): never a second record. Due scores are checked
-- to be numbers and every written key is type-checked before the first
-- write.

-- Plain: 6 + 2n KEYS and 2 + 3n ARGV; hash-tagged: 5 + n KEYS and 2 + 4n
-- ARGV (no count fits both).
local tagged = #ARGV - 2 == 4 * (#KEYS - 5)
local n = tagged and #KEYS - 5 or (#ARGV - 2) / 3
need(n >= 1 and (tagged or #KEYS == 6 + 2 * n),
  'park_retry: expects 6 + 2n KEYS and 2 + 3n ARGV (hash-tagged: 5 + n and 2 + 4n)')
-- The explicit-time side hash (plain only): payload keys' expiries.
local side, explicit = not tagged and KEYS[6 + 2 * n], ARGV[2] ~= ''
need(ARGV[2] == '' or tonumber(ARGV[2]), 'park_retry: time must be a number')
local owner = ARGV[1]
local gens = {}
for i = 1, n do
  gens[i] = ARGV[3 * i]
  local due = tonumber(ARGV[3 * i + 2])
  need(due and due == due, 'park_retry: due score is not a number')
end
local owners = redis.call('HMGET', KEYS[2], unpack(gens))
local markers = redis.call('MGET', unpack(KEYS, 6, 5 + n))
local now = clock_ms(ARGV[2])

local out, seen, drops, counts, parked, unpayload = {}, {}, {}, {}, {}, {}
for i = 1, n do
  local gen = gens[i]
  local who, _, r = unpack_owner(owners[i])
  if not seen[gen] and who == owner then
    seen[gen] = true
    local value = tagged and ARGV[2 + 3 * n + i] or ''
    if is_live(markers[i], now) or (value ~= '' and is_live(value, now)) then
      out[i] = drop_answered(drops, unpayload, gen, not tagged and KEYS[5 + n + i])
    else
      note_drop(drops, counts, gen, r)
      push(parked, ARGV[3 * i + 2], ARGV[3 * i + 1])
      out[i] = 1
    end
  else
    out[i] = 0
  end
end
if #drops == 0 then
  return out
end

check_types({ KEYS[1], KEYS[4], explicit and #unpayload > 0 and side },
  { KEYS[3], #parked > 0 and KEYS[5] })
drop_claims(KEYS[1], KEYS[2], KEYS[3], KEYS[4], drops, counts)
write_any('ZADD', KEYS[5], parked)
del_keys(unpayload, side, explicit)
return out
