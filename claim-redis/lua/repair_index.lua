-- repair_index.lua: repairs the claims index where it disagrees with the claims.
--
-- The caller noticed ZCARD <queue>:claims-idx differs from HLEN
-- <queue>:claim-owners and listed the differences.
-- KEYS[1] <queue>:claim-owners hash   KEYS[2] <queue>:claims-idx zset
-- KEYS[3] <queue>:claimed hash (claim key -> member)
-- ARGV[1] now in ms, or "" for the server's TIME   ARGV[2] lease TTL in ms
-- ARGV[3] d = how many claim keys follow as index entries to drop
-- ARGV[4..3+d] index entries without a claim; ARGV[4+d..] claims without an index entry
-- Returns the number of entries repaired.
--
-- Correctness: each listed generation is re-checked here, since the list
-- came from an earlier read: an index entry is removed only if its claim is
-- still absent; a claim is indexed only if it still has no entry, with the
-- lease a fresh claim would get (min(now + ttl, deadline + 30 s), the
-- deadline read from the claimed member as claim.lua's caller reads it,
-- now + ttl when it cannot be read; never the owner entry's score), so a
-- live owner keeps renewing it and a dead owner's claim is reclaimed after
-- one lease. An unreadable owner entry is indexed as already expired so the
-- reclaimer deals with it. ZREM and ZADD are the only writes.

need(#ARGV >= 3 and #KEYS == 3, 'repair_index: missing arguments')
local ttl, d = ms_arg(ARGV[2]), ms_arg(ARGV[3])
need(ttl and d and 3 + d <= #ARGV and (ARGV[1] == '' or ms_arg(ARGV[1])),
  'repair_index: bad arguments')
local repaired = 0

if d > 0 then
  local drop = { unpack(ARGV, 4, 3 + d) }
  local owners = redis.call('HMGET', KEYS[1], unpack(drop))
  local indexed = redis.call('ZMSCORE', KEYS[2], unpack(drop))
  local gone = {}
  for i, gen in ipairs(drop) do
    if indexed[i] and not owners[i] then
      gone[#gone + 1] = gen
    end
  end
  if #gone > 0 then
    repaired = repaired + redis.call('ZREM', KEYS[2], unpack(gone))
  end
end

if 3 + d < #ARGV then
  local add = { unpack(ARGV, 4 + d, #ARGV) }
  local owners = redis.call('HMGET', KEYS[1], unpack(add))
  local indexed = redis.call('ZMSCORE', KEYS[2], unpack(add))
  local members = redis.call('HMGET', KEYS[3], unpack(add))
  local now = clock_ms(ARGV[1])
  local index = {}
  for i, gen in ipairs(add) do
    if owners[i] and not indexed[i] then
      local _, score = unpack_owner(owners[i])
      local expiry = now
      if score then
        expiry = lease_expiry(now, ttl, members[i] and member_deadline(members[i]) or 0)
      end
      push(index, expiry / 1000, gen)
      repaired = repaired + 1
    end
  end
  if #index > 0 then
    redis.call('ZADD', KEYS[2], unpack(index))
  end
end
return repaired
