-- promote.lua: returns due retries to their queues (second phase of promote_due).
--
-- The destination queue is named inside each member, so the caller first
-- reads due entries (ZRANGEBYSCORE), parses them, and passes the keys here.
-- KEYS[1] retry zset   KEYS[2] the default queue's dead hash
-- KEYS[3i] destination of item i: its queue's pending zset, or KEYS[2]
-- KEYS[3i+1] the terminal marker of item i's generation, KEYS[3i+2] the
-- destination queue's deliveries hash (both KEYS[2] for 'd')
-- ARGV[1] now as a score (s)   ARGV[2] now in ms   ARGV[3] key prefix length
-- ARGV[4i] member, ARGV[4i+1] kind ('p' to pending, 'd' to the dead hash),
-- ARGV[4i+2] the pending score (Go's formula, wire::queue_score) or the
-- dead entry JSON,
-- ARGV[4i+3] its claim key ('' for 'd')
-- Hash-tagged layout (ops/retries_cluster.rs): KEYS[1] the queue's own
-- retry set, KEYS[2] its dead hash, then per item only KEYS[2i+1]
-- destination (the queue's pending zset, or KEYS[2]) and KEYS[2i+2] its
-- deliveries hash (KEYS[2] for 'd'), all in the queue's slot; ARGV as
-- above plus ARGV[5i+3] the value of the item's terminal marker ('' =
-- none), read just before from the marker's own slot. A marker written
-- in between is missed: the copy goes back to pending, where the claim
-- script drops it as answered (or its holder's record is suppressed by
-- the marker): never a second record.
-- Returns the number of entries that left the retry set.
--
-- Correctness: the score is the one Go's mover and producer give the same
-- member (deadline + min(enqueue_seq, 2^21 - 1) / 2^21, computed by the
-- caller), so a promoted retry keeps its place among its peers whoever
-- moved it. Each entry is re-checked to be still in the retry set and
-- due (another promoter may have moved it since the read), then removed
-- and added to its destination in the same atomic step, so it is never in
-- both places or lost. An entry whose generation has a live marker was
-- answered while parked (a stale owner's ack): it is only removed, with its
-- delivery count, since a copy back in pending could be served again once
-- the marker expired. An
-- entry whose queue the caller refused by name (a bookkeeping key, the
-- retry set: kind 'd') or whose queue key holds another type goes to the
-- dead hash with the reason instead of failing the batch; if the dead hash
-- itself has the wrong type the entry stays parked and the server log says
-- why. All decisions and type checks precede the first write, and every
-- number is checked first (times and prefix length in range, each 'p'
-- score finite: ZADD would refuse an overflowing one after the ZREM).

local tagged = (#ARGV - 3) % 5 == 0 and #KEYS == 2 + 2 * (#ARGV - 3) / 5
local per_arg, per_key = 4, 3
if tagged then
  per_arg, per_key = 5, 2
end
local n = (#ARGV - 3) / per_arg
need(n >= 1 and n == math.floor(n) and #KEYS == 2 + per_key * n,
  'promote: expects 4 ARGV and 3 KEYS per item (hash-tagged: 5 ARGV and 2 KEYS)')
-- Item i's member, kind, value, claim key; its destination and deliveries keys.
local function a(i, j)
  return ARGV[3 + per_arg * (i - 1) + j]
end
local function k(i, j)
  return KEYS[2 + per_key * (i - 1) + j]
end
local due_by, plen = tonumber(ARGV[1]), tonumber(ARGV[3])
need(due_by and due_by == due_by and ms_arg(ARGV[2]) and ms_arg(ARGV[3]),
  'promote: time and prefix length must be numbers in range')
local now = tonumber(ARGV[2])
local members, marker_keys, markers = {}, {}, {}
for i = 1, n do
  members[i] = a(i, 1)
  local kind, score = a(i, 2), tonumber(a(i, 3))
  -- Finite: ZADD refuses a score that overflows (1e400) after the ZREM.
  need(kind == 'd' or (kind == 'p' and score and score > -math.huge and score < math.huge),
    'promote: bad item kind or score')
  if tagged then
    markers[i] = a(i, 5) ~= '' and a(i, 5)
  else
    marker_keys[i] = k(i, 2)
  end
end
local scores = redis.call('ZMSCORE', KEYS[1], unpack(members))
if not tagged then
  markers = redis.call('MGET', unpack(marker_keys))
end

local types = {}
local function type_of(key)
  local t = types[key]
  if not t then
    t = redis.call('TYPE', key)['ok']
    types[key] = t
  end
  return t
end
local dead_ok = type_of(KEYS[2])
dead_ok = dead_ok == 'hash' or dead_ok == 'none'

local moved, zrem, adds, order, dead, forget, forget_order = 0, {}, {}, {}, {}, {}, {}
local seen = {}
for i = 1, n do
  local member, kind, value = members[i], a(i, 2), a(i, 3)
  if scores[i] and tonumber(scores[i]) <= due_by and not seen[member] then
    seen[member] = true
    local dest = k(i, 1)
    if kind == 'p' then
      local t = type_of(dest)
      if is_live(markers[i], now) then
        kind = 'answered'
      elseif dest == KEYS[1] then
        kind = 'd'
        value = '{"reason":"retry entry names the retry set as its queue","at_ms":' .. ARGV[2] .. '}'
      elseif t ~= 'zset' and t ~= 'none' then
        kind = 'd'
        value = '{"reason":' .. cjson.encode('retry entry\'s queue "' .. string.sub(dest, plen + 1)
          .. '" holds a ' .. t) .. ',"at_ms":' .. ARGV[2] .. '}'
      end
    end
    if kind == 'answered' then
      local counts = k(i, per_key)
      if not forget[counts] then
        forget[counts] = {}
        forget_order[#forget_order + 1] = counts
        redis.call('HLEN', counts)
      end
      push(forget[counts], a(i, 4))
      zrem[#zrem + 1] = member
      moved = moved + 1
    elseif kind == 'p' then
      if not adds[dest] then
        adds[dest] = {}
        order[#order + 1] = dest
      end
      push(adds[dest], value, member)
      zrem[#zrem + 1] = member
      moved = moved + 1
    elseif dead_ok then
      push(dead, member, value)
      zrem[#zrem + 1] = member
      moved = moved + 1
    else
      redis.log(redis.LOG_WARNING, 'claim-redis: retry entry left parked: ' .. KEYS[2]
        .. ' is not a hash')
    end
  end
end
if moved == 0 then
  return 0
end

redis.call('ZREM', KEYS[1], unpack(zrem))
for _, dest in ipairs(order) do
  redis.call('ZADD', dest, unpack(adds[dest]))
end
write_any('HSET', KEYS[2], dead)
for _, counts in ipairs(forget_order) do
  redis.call('HDEL', counts, unpack(forget[counts]))
end
return moved
