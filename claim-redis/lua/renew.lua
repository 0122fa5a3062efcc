-- renew.lua: extends the leases one owner holds.
--
-- KEYS[1] <queue>:claim-owners hash   KEYS[2] <queue>:claims-idx zset
-- KEYS[3] <queue>:claimed hash (claim key -> member)
-- ARGV[1] owner token   ARGV[2] now in ms, or "" for the server's TIME
-- ARGV[3] lease TTL in ms   ARGV[4..] claim keys
-- Returns one integer per generation: the new lease expiry in ms, or -1
-- when the claim is gone or held by another owner (lost).
--
-- Correctness: the owner is checked against the claim's owner entry inside
-- the script, so a stale owner can never extend a new owner's lease. The
-- expiry is min(now + TTL, deadline + 30 s), the deadline read from the
-- claimed member (lib.lua member_deadline, as the model's
-- wire::member_deadline), never from the pending score the owner entry
-- keeps: a member scored 0 or -inf keeps the lease its deadline allows, so
-- a holder that renews is never reclaimed. A member whose deadline cannot
-- be read (or a claim whose member is missing) gets now + TTL. Time and
-- TTL are range-checked first (whole ms in 0..2^53, TTL positive), so every
-- index score is finite. The only write is one ZADD, so an error cannot
-- leave a partial batch. The index score text of the common expiry now +
-- TTL is made once.
--
-- Cost: one HMGET of the members beside the owners' (renewals come once
-- per heartbeat per claim, not per job) and a cjson decode per renewed
-- claim.

local n = #ARGV - 3
need(n >= 1 and #KEYS == 3, 'renew: expects 3 KEYS and at least one generation')
local owner, ttl = ARGV[1], ms_arg(ARGV[3])
need(ttl and ttl > 0 and (ARGV[2] == '' or ms_arg(ARGV[2])),
  'renew: time and TTL must be whole numbers in range')

local owners = redis.call('HMGET', KEYS[1], unpack(ARGV, 4, #ARGV))
local members = nil
local now, full, full_text = nil, nil, nil
local out, index = {}, {}
local ni = 0
for i = 1, n do
  local who = unpack_owner(owners[i])
  if who == owner then
    if not now then
      now = clock_ms(ARGV[2])
      full = now + ttl
      full_text = index_score(full)
      members = redis.call('HMGET', KEYS[3], unpack(ARGV, 4, #ARGV))
    end
    local deadline = members[i] and member_deadline(members[i]) or 0
    local expiry = lease_expiry(now, ttl, deadline)
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
