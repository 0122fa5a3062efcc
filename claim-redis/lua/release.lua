-- release.lua: returns claims one owner holds to pending at their original
-- score (a cancelled hand-off, or the shutdown sweep). Not a delivery. A
-- claim whose generation is answered (a live terminal marker) is dropped
-- instead: nothing goes back to pending.
--
-- KEYS[1] pending zset   KEYS[2] <queue>:claimed hash
-- KEYS[3] <queue>:claim-owners hash   KEYS[4] <queue>:claims-idx zset
-- KEYS[5] <queue>:deliveries hash
-- KEYS[5+i] (i = 1..n) generation i's terminal marker (hash-tagged: its
-- copy in the queue's slot, Keys::marker_for with the pending key)
-- plain only: KEYS[5+n+i] generation i's payload key
-- (request-payload:<id>:<token>), KEYS[6+2n] the explicit-time side hash
-- ARGV[1] owner token   ARGV[2] now in ms, or "" for the server's TIME
-- ARGV[2+i] claim key of generation i; hash-tagged only, ARGV[2+n+i] the
-- marker value read before from the marker's candidate keys in other
-- slots ('' = none; ops/release.rs)
-- Returns one integer per generation: 1 if the caller's claim ended
-- (returned to pending), 3 if it ended dropped as answered (plain: its
-- payload key deleted here; hash-tagged: the caller deletes it), else 0.
--
-- Correctness: owner-checked inside the script; the member goes back with
-- the exact score string ZSCORE gave at claim time, so earliest-deadline-
-- first order is restored; a redelivery count above zero moves to the
-- deliveries hash so the next claim sees it, as in the model. A generation
-- with a live marker was answered while this owner held it (a stale
-- owner's ack landed first): back in pending it would be served again,
-- and once the marker expired it would get a second record, so its claim
-- is dropped with its count, as the model's release does, and so is its
-- payload key: the stale ack left the payload to this holder, which ends
-- its claim without an ack (the key is the generation's own, derived from
-- the claim key's id and token, so no member names another). The hash-tagged
-- pre-read is not atomic with this script: a marker written in between is
-- missed and the copy goes back to pending, where claim.lua drops it as
-- answered (or its holder's record is suppressed): never a second record.
-- A repeated generation finds its claim already ended. A claim whose
-- member is missing (never written by these scripts) is left for the
-- reclaimer's repair. Writes follow all decisions and type checks.

-- Plain: 6 + 2n KEYS and 2 + n ARGV; hash-tagged: 5 + n KEYS and 2 + 2n
-- ARGV (no count fits both).
local tagged = #ARGV - 2 == 2 * (#KEYS - 5)
local n = tagged and #KEYS - 5 or #ARGV - 2
need(n >= 1 and (tagged or #KEYS == 6 + 2 * n),
  'release: expects 6 + 2n KEYS and 2 + n ARGV (hash-tagged: 5 + n and 2 + 2n)')
-- The explicit-time side hash (plain only): payload keys' expiries.
local side, explicit = not tagged and KEYS[6 + 2 * n], ARGV[2] ~= ''
need(ARGV[2] == '' or tonumber(ARGV[2]), 'release: time must be a number')
local owner = ARGV[1]
local owners = redis.call('HMGET', KEYS[3], unpack(ARGV, 3, 2 + n))

local out, mine, slot, seen = {}, {}, {}, {}
for i = 1, n do
  out[i] = 0
  local gen = ARGV[2 + i]
  if not seen[gen] and unpack_owner(owners[i]) == owner then
    seen[gen] = true
    mine[#mine + 1] = gen
    slot[#mine] = i
  end
end
if #mine == 0 then
  return out
end
local members = redis.call('HMGET', KEYS[2], unpack(mine))
local markers = redis.call('MGET', unpack(KEYS, 6, 5 + n))
local now = clock_ms(ARGV[2])

local back, drops, counts, unpayload = {}, {}, {}, {}
for j, gen in ipairs(mine) do
  local member = members[j]
  if member then
    local i = slot[j]
    local _, score, r = unpack_owner(owners[i])
    local answered = is_live(markers[i], now)
      or (tagged and ARGV[2 + n + i] ~= '' and is_live(ARGV[2 + n + i], now))
    if answered then
      out[i] = drop_answered(drops, unpayload, gen, not tagged and KEYS[5 + n + i])
    else
      push(back, score, member)
      note_drop(drops, counts, gen, r)
      out[i] = 1
    end
  end
end
if #drops == 0 then
  return out
end

check_types({ KEYS[5], explicit and #unpayload > 0 and side }, { KEYS[1], KEYS[4] })
write_any('ZADD', KEYS[1], back)
drop_claims(KEYS[2], KEYS[3], KEYS[4], KEYS[5], drops, counts)
del_keys(unpayload, side, explicit)
return out
