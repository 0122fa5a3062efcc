-- retry_now.lua: promotes one parked retry now, whatever its due time, by
-- promote.lua's rules (`admin retry-now`, ClaimAdmin::retry_now).
--
-- KEYS[1] the retry set holding the entry   KEYS[2] the dead hash an entry
-- that cannot be promoted goes to   KEYS[3] the destination: its queue's
-- pending zset (KEYS[2] for 'd')   KEYS[4] that queue's deliveries hash
-- (KEYS[2] for 'd')   KEYS[5] plain layout only: the terminal marker of the
-- entry's generation (hash-tagged: ARGV[7] holds its value instead, read
-- just before from the marker's own slot, as promote.lua takes it)
-- ARGV[1] the member   ARGV[2] kind: 'p' (to pending) or 'd' (to the dead
-- hash)   ARGV[3] the pending score (Go's formula, wire::queue_score) or
-- the dead entry JSON   ARGV[4] the claim key ('' for 'd')   ARGV[5] now
-- in ms   ARGV[6] key prefix length   ARGV[7] hash-tagged only: the
-- marker's value ('' = none)
-- Returns 0 not parked, 1 promoted, 2 answered (dropped with its delivery
-- count), 3 dead-lettered.
--
-- Correctness: the same decisions as promote.lua for one item, in the same
-- order, without the due check: an entry no longer in KEYS[1] (promoted,
-- or never parked) changes nothing; an answered generation (live marker)
-- is removed with its delivery count, never returned to pending, where it
-- could be served again once the marker expired; an entry naming the
-- retry set or a key of another type as its queue, or one the caller
-- refused by name (kind 'd': unparsable, a bookkeeping key), goes to the
-- dead hash with the reason; otherwise ZREM and ZADD at the caller's
-- score in one atomic step, so it is never in both places or lost. Every
-- key is one the caller derived from the entry's own generation and queue
-- name (nothing from other member fields), every number and every key
-- type is checked before the first write (a dead hash of another type
-- fails the call, writing nothing), so a failing call writes nothing.

local tagged = #KEYS == 4
need((#KEYS == 5 and #ARGV == 6) or (tagged and #ARGV == 7), 'retry_now: bad arguments')
local member, kind, value, claim_key = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
need(ms_arg(ARGV[5]) and ms_arg(ARGV[6]), 'retry_now: time and prefix length must be numbers in range')
local score = tonumber(value)
need(kind == 'd' or (kind == 'p' and score and score > -math.huge and score < math.huge),
  'retry_now: bad item kind or score')
if not redis.call('ZSCORE', KEYS[1], member) then
  return 0
end
local now, plen = tonumber(ARGV[5]), tonumber(ARGV[6])
local dead_type = redis.call('TYPE', KEYS[2])['ok']
need(dead_type == 'hash' or dead_type == 'none', 'retry_now: the dead hash ' .. KEYS[2] .. ' is not a hash')

if kind == 'p' then
  local marker
  if tagged then
    marker = ARGV[7] ~= '' and ARGV[7]
  else
    marker = redis.call('MGET', KEYS[5])[1]
  end
  local dest = KEYS[3]
  if is_live(marker, now) then
    -- Type-checks the deliveries hash before the first write.
    redis.call('HLEN', KEYS[4])
    redis.call('ZREM', KEYS[1], member)
    redis.call('HDEL', KEYS[4], claim_key)
    return 2
  end
  local t = redis.call('TYPE', dest)['ok']
  if dest == KEYS[1] then
    value = '{"reason":"retry entry names the retry set as its queue","at_ms":' .. ARGV[5] .. '}'
  elseif t ~= 'zset' and t ~= 'none' then
    value = '{"reason":' .. cjson.encode('retry entry\'s queue "' .. string.sub(dest, plen + 1)
      .. '" holds a ' .. t) .. ',"at_ms":' .. ARGV[5] .. '}'
  else
    redis.call('ZREM', KEYS[1], member)
    redis.call('ZADD', dest, value, member)
    return 1
  end
end
redis.call('ZREM', KEYS[1], member)
redis.call('HSET', KEYS[2], member, value)
return 3
