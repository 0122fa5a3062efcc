-- ack.lua: delivers terminal records; drops the claims the caller owns.
--
-- KEYS[1] <queue>:claimed hash   KEYS[2] <queue>:claim-owners hash
-- KEYS[3] <queue>:claims-idx zset   KEYS[4] explicit-time side hash
-- KEYS[4+r] result list of run r (r = 1..R; a run is consecutive items
-- with the same list, so a batch for one list is one run)
-- then, with base k = 4 + R: KEYS[k+i] terminal marker of item i, and
-- KEYS[k+n+2i-1] request-active:<id>, KEYS[k+n+2i] request-cancel:<id>
-- ARGV[1] owner token   ARGV[2] now in ms, or "" for the server's TIME
-- ARGV[3] result dedup TTL in ms (the marker's expiry is now + this)
-- ARGV[4] the marker key's PX in ms   ARGV[5] R   ARGV[5+r] items in run r
-- then n generation keys, n request tokens, n records, each group in item
-- order (base a = 5 + R): ARGV[a+i], ARGV[a+n+i], ARGV[a+2n+i]
-- Returns one integer per item: 1 if its record was pushed, plus 2 if the
-- caller's claim was dropped.
--
-- Correctness: per item, as the model: the record is pushed and the marker
-- written unless a live marker exists (first record wins, whoever sent it);
-- the producer's active/cancel keys are deleted only where they hold this
-- generation's token; the claim is dropped only if the caller owns it (its
-- owner entry is `<caller>|<score>|<count>`; ack does not parse the score,
-- so an owned entry whose score is unreadable is dropped with the answered
-- claim). A repeated generation in one batch sees the marker and the drop
-- of its earlier item. Decisions come first, then type checks of every key
-- about to be written, then the writes, so an error leaves no partial
-- batch. Records for one list are pushed in item order, one LPUSH per run,
-- which is what one LPUSH per item would leave.
--
-- Cost (see docs/PERFORMANCE.md): one call per step for the whole batch,
-- except the marker SETs: a marker is a key of its own with its own expiry,
-- and Redis has no multi-key SET with expiry. (Writing markers with SET NX
-- instead of reading them first was measured: no gain, so one path serves
-- both clocks.)

need(#ARGV >= 5 and tonumber(ARGV[5]), 'ack: missing arguments')
local runs = tonumber(ARGV[5])
local a = 5 + runs
local n = (#ARGV - a) / 3
need(runs >= 1 and n >= 1 and n == math.floor(n) and #KEYS == 4 + runs + 3 * n,
  'ack: expects 3 ARGV and 3 KEYS per item and one list per run')
local total = 0
for r = 1, runs do
  local count = tonumber(ARGV[5 + r])
  need(count and count >= 1, 'ack: run sizes must be positive numbers')
  total = total + count
end
need(total == n, 'ack: run sizes must add up to the items')
local owner, ttl = ARGV[1], tonumber(ARGV[3])
local explicit = ARGV[2] ~= ''
need(ttl and tonumber(ARGV[4]) and (not explicit or tonumber(ARGV[2])),
  'ack: time and TTLs must be numbers')
local g0, t0, r0, k0 = a, a + n, a + 2 * n, 4 + runs

-- vals[i]: the marker of item i; vals[n + 2i - 1], vals[n + 2i]: its
-- active and cancel values.
local vals = redis.call('MGET', unpack(KEYS, k0 + 1, k0 + 3 * n))
local owners = redis.call('HMGET', KEYS[2], unpack(ARGV, g0 + 1, g0 + n))
local now = clock_ms(ARGV[2])

local find = string.find
local bar, rest = owner .. '|', #owner + 2
local out = {}
local marked, dropped, deleted = {}, {}, {}
local pushes, markers, dels, drops = {}, {}, {}, {}
local nm, nd, ndr = 0, 0, 0
local run, left = 1, tonumber(ARGV[6])
for i = 1, n do
  while left == 0 do
    run = run + 1
    left = tonumber(ARGV[5 + run])
  end
  left = left - 1
  local gen = ARGV[g0 + i]
  local code = 0
  if not marked[gen] and not is_live(vals[i], now) then
    marked[gen] = true
    code = 1
    local records = pushes[run]
    if not records then
      records = {}
      pushes[run] = records
    end
    records[#records + 1] = ARGV[r0 + i]
    nm = nm + 1
    markers[nm] = KEYS[k0 + i]
    local token = ARGV[t0 + i]
    for j = 1, 2 do
      if vals[n + 2 * i - 2 + j] == token then
        local key = KEYS[k0 + n + 2 * i - 2 + j]
        if not deleted[key] then
          deleted[key] = true
          nd = nd + 1
          dels[nd] = key
        end
      end
    end
  end
  local entry = owners[i]
  if entry and not dropped[gen] and find(entry, bar, 1, true) == 1
    and find(entry, '^[^|]+|%d+$', rest) then
    dropped[gen] = true
    ndr = ndr + 1
    drops[ndr] = gen
    code = code + 2
  end
  out[i] = code
end

for r = 1, runs do
  if pushes[r] then
    redis.call('LLEN', KEYS[4 + r])
  end
end
if ndr > 0 then
  redis.call('HLEN', KEYS[1])
  redis.call('ZCARD', KEYS[3])
end
if explicit and nd > 0 then
  redis.call('HLEN', KEYS[4])
end

for r = 1, runs do
  if pushes[r] then
    redis.call('LPUSH', KEYS[4 + r], unpack(pushes[r]))
  end
end
local expiry, px = ms_string(now + ttl), ARGV[4]
for m = 1, nm do
  redis.call('SET', markers[m], expiry, 'PX', px)
end
if nd > 0 then
  redis.call('DEL', unpack(dels))
  if explicit then
    redis.call('HDEL', KEYS[4], unpack(dels))
  end
end
if ndr > 0 then
  redis.call('HDEL', KEYS[1], unpack(drops))
  redis.call('HDEL', KEYS[2], unpack(drops))
  redis.call('ZREM', KEYS[3], unpack(drops))
end
return out
