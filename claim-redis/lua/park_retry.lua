-- park_retry.lua: moves claims one owner holds into the retry set.
--
-- KEYS[1] <queue>:claimed hash   KEYS[2] <queue>:claim-owners hash
-- KEYS[3] <queue>:claims-idx zset   KEYS[4] <queue>:deliveries hash
-- KEYS[5] retry zset
-- ARGV[1] owner token
-- ARGV[3i-1] claim key, ARGV[3i] stamped member, ARGV[3i+1] due score of item i
-- Returns one integer per item: 1 if parked, 0 if the caller held no claim.
--
-- Correctness: owner-checked inside the script, and the claim is dropped in
-- the same step that parks the member, so no claim lives beside the parked
-- copy (a crash cannot duplicate the request). The redelivery count moves
-- to the deliveries hash when above zero, as in the model. Due scores are
-- checked to be numbers and every written key is type-checked before the
-- first write.

local n = (#ARGV - 1) / 3
need(n >= 1 and n == math.floor(n) and #KEYS == 5, 'park_retry: expects 5 KEYS and 3 ARGV per item')
local owner = ARGV[1]
local gens = {}
for i = 1, n do
  gens[i] = ARGV[3 * i - 1]
  local due = tonumber(ARGV[3 * i + 1])
  need(due and due == due, 'park_retry: due score is not a number')
end
local owners = redis.call('HMGET', KEYS[2], unpack(gens))

local out, seen, drops, counts, parked = {}, {}, {}, {}, {}
for i = 1, n do
  local gen = gens[i]
  local who, _, r = unpack_owner(owners[i])
  if not seen[gen] and who == owner then
    seen[gen] = true
    note_drop(drops, counts, gen, r)
    push(parked, ARGV[3 * i + 1], ARGV[3 * i])
    out[i] = 1
  else
    out[i] = 0
  end
end
if #drops == 0 then
  return out
end

check_types({ KEYS[1], KEYS[4] }, { KEYS[3], KEYS[5] })
drop_claims(KEYS[1], KEYS[2], KEYS[3], KEYS[4], drops, counts)
redis.call('ZADD', KEYS[5], unpack(parked))
return out
