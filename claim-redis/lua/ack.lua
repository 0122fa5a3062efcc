-- ack.lua: delivers terminal records; drops the claims the caller owns.
--
-- KEYS[1] <queue>:claimed hash   KEYS[2] <queue>:claim-owners hash
-- KEYS[3] <queue>:claims-idx zset   KEYS[4] explicit-time side hash
-- per item i (base b = 4 * i): KEYS[b+1] terminal marker, KEYS[b+2] result
-- list, KEYS[b+3] request-active:<id>, KEYS[b+4] request-cancel:<id>
-- ARGV[1] owner token   ARGV[2] now in ms, or "" for the server's TIME
-- ARGV[3] result dedup TTL in ms (the marker's expiry is now + this)
-- ARGV[4] the marker key's PX in ms
-- ARGV[2+3i] generation key, ARGV[3+3i] request token, ARGV[4+3i] record of item i
-- Returns one integer per item: 1 if its record was pushed, plus 2 if the
-- caller's claim was dropped.
--
-- Correctness: per item, as the model: the record is pushed and the marker
-- written unless a live marker exists (first record wins, whoever sent it);
-- the producer's active/cancel keys are deleted only where they hold this
-- generation's token; the claim is dropped only if the caller owns it. A
-- repeated generation in one batch sees the marker and the drop of its
-- earlier item. Decisions come first, then type checks of every key about
-- to be written, then the writes, so an error leaves no partial batch.
-- Records for one list are pushed in item order by one LPUSH, which is what
-- one LPUSH per item would leave.

local n = (#ARGV - 4) / 3
need(n >= 1 and n == math.floor(n) and #KEYS == 4 + 4 * n,
  'ack: expects 3 ARGV and 4 KEYS per item')
local owner, ttl = ARGV[1], tonumber(ARGV[3])
local explicit = ARGV[2] ~= ''
need(ttl and tonumber(ARGV[4]) and (not explicit or tonumber(ARGV[2])),
  'ack: time and TTLs must be numbers')

local probe, gens = {}, {}
for i = 1, n do
  local b = 4 * i
  push(probe, KEYS[b + 1], KEYS[b + 3], KEYS[b + 4])
  gens[i] = ARGV[2 + 3 * i]
end
local vals = redis.call('MGET', unpack(probe))
local owners = redis.call('HMGET', KEYS[2], unpack(gens))
local now = clock_ms(ARGV[2])

local out = {}
local marked, dropped, deleted = {}, {}, {}
local lists, order, markers, dels, drops = {}, {}, {}, {}, {}
for i = 1, n do
  local b = 4 * i
  local gen, token = gens[i], ARGV[3 + 3 * i]
  local code = 0
  if not marked[gen] and not is_live(vals[3 * i - 2], now) then
    marked[gen] = true
    code = 1
    local list = KEYS[b + 2]
    local records = lists[list]
    if not records then
      records = {}
      lists[list] = records
      order[#order + 1] = list
    end
    records[#records + 1] = ARGV[4 + 3 * i]
    markers[#markers + 1] = KEYS[b + 1]
    for j = 1, 2 do
      local key = KEYS[b + 2 + j]
      if vals[3 * i - 2 + j] == token and not deleted[key] then
        deleted[key] = true
        dels[#dels + 1] = key
      end
    end
  end
  if not dropped[gen] and unpack_owner(owners[i]) == owner then
    dropped[gen] = true
    drops[#drops + 1] = gen
    code = code + 2
  end
  out[i] = code
end

for _, list in ipairs(order) do
  redis.call('LLEN', list)
end
if #drops > 0 then
  redis.call('HLEN', KEYS[1])
  redis.call('ZCARD', KEYS[3])
end
if explicit and #dels > 0 then
  redis.call('HLEN', KEYS[4])
end

for _, list in ipairs(order) do
  redis.call('LPUSH', list, unpack(lists[list]))
end
local expiry = ms_string(now + ttl)
for _, marker in ipairs(markers) do
  redis.call('SET', marker, expiry, 'PX', ARGV[4])
end
if #dels > 0 then
  redis.call('DEL', unpack(dels))
  if explicit then
    redis.call('HDEL', KEYS[4], unpack(dels))
  end
end
if #drops > 0 then
  redis.call('HDEL', KEYS[1], unpack(drops))
  redis.call('HDEL', KEYS[2], unpack(drops))
  redis.call('ZREM', KEYS[3], unpack(drops))
end
return out
