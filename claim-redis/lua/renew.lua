-- renew.lua: extends the leases one owner holds.
--
-- KEYS[1] <queue>:claim-owners hash   KEYS[2] <queue>:claims-idx zset
-- ARGV[1] owner token   ARGV[2] now in ms, or "" for the server's TIME
-- ARGV[3] lease TTL in ms   ARGV[4..] claim keys
-- Returns one integer per generation: the new lease expiry in ms, or -1
-- when the claim is gone or held by another owner (lost).
--
-- Correctness: the owner is checked against the claim's owner entry inside
-- the script, so a stale owner can never extend a new owner's lease. The
-- expiry is recomputed from the claim's original score (its deadline), as
-- the model does. The only write is one ZADD, so an error cannot leave a
-- partial batch. The index score text of the common expiry now + TTL is
-- made once.

local n = #ARGV - 3
need(n >= 1 and #KEYS == 2, 'renew: expects 2 KEYS and at least one generation')
local owner, ttl = ARGV[1], tonumber(ARGV[3])
need(ttl and (ARGV[2] == '' or tonumber(ARGV[2])), 'renew: time and TTL must be numbers')

local owners = redis.call('HMGET', KEYS[1], unpack(ARGV, 4, #ARGV))
local now, full, full_text = nil, nil, nil
local out, index = {}, {}
local ni = 0
for i = 1, n do
  local who, score = unpack_owner(owners[i])
  if who == owner then
    if not now then
      now = clock_ms(ARGV[2])
      full = now + ttl
      full_text = index_score(full)
    end
    local expiry = lease_expiry(now, ttl, score)
    index[ni + 1] = expiry == full and full_text or index_score(expiry)
    index[ni + 2] = ARGV[3 + i]
    ni = ni + 2
    out[i] = expiry
  else
    out[i] = -1
  end
end
if ni > 0 then
  redis.call('ZADD', KEYS[2], unpack(index))
end
return out
