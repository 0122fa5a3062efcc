-- release.lua: returns claims one owner holds to pending at their original
-- score (a cancelled hand-off, or the shutdown sweep). Not a delivery.
--
-- KEYS[1] pending zset   KEYS[2] <queue>:claimed hash
-- KEYS[3] <queue>:claim-owners hash   KEYS[4] <queue>:claims-idx zset
-- KEYS[5] <queue>:deliveries hash
-- ARGV[1] owner token   ARGV[2..] claim keys
-- Returns one integer per generation: 1 if returned to pending, else 0.
--
-- Correctness: owner-checked inside the script; the member goes back with
-- the exact score string ZSCORE gave at claim time, so earliest-deadline-
-- first order is restored; a redelivery count above zero moves to the
-- deliveries hash so the next claim sees it, as in the model. A repeated
-- generation finds its claim already returned. A claim whose member is
-- missing (never written by these scripts) is left for the reclaimer's
-- repair. Writes follow all decisions and type checks.

local n = #ARGV - 1
need(n >= 1 and #KEYS == 5, 'release: expects 5 KEYS and at least one generation')
local owner = ARGV[1]
local owners = redis.call('HMGET', KEYS[3], unpack(ARGV, 2, #ARGV))

local out, mine, slot, seen = {}, {}, {}, {}
for i = 1, n do
  out[i] = 0
  local gen = ARGV[1 + i]
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

local back, drops, counts = {}, {}, {}
for j, gen in ipairs(mine) do
  local member = members[j]
  if member then
    local i = slot[j]
    local _, score, r = unpack_owner(owners[i])
    push(back, score, member)
    note_drop(drops, counts, gen, r)
    out[i] = 1
  end
end
if #drops == 0 then
  return out
end

check_types({ KEYS[5] }, { KEYS[1], KEYS[4] })
redis.call('ZADD', KEYS[1], unpack(back))
drop_claims(KEYS[2], KEYS[3], KEYS[4], KEYS[5], drops, counts)
return out
