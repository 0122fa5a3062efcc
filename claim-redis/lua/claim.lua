-- claim.lua: moves pending members into claims held by one owner, item by item.
--
-- KEYS[1] pending zset         KEYS[2] <queue>:claimed hash (claim key -> member)
-- KEYS[3] <queue>:claim-owners hash (claim key -> owner|score|redeliveries)
-- KEYS[4] <queue>:claims-idx zset (claim key, scored by lease expiry in s)
-- KEYS[5] <queue>:deliveries hash (claim key -> redeliveries)
-- KEYS[6] explicit-time side hash (read only when ARGV[2] is a time)
-- KEYS[7] <queue>:dead hash (member -> {"reason":..,"at_ms":..})
-- KEYS[6+2i] terminal marker of item i, KEYS[7+2i] request-cancel:<id> of item i
--   (plain layout only; with the hash-tagged layout KEYS is the first 7
--   alone, all in the queue's slot, and the caller reads the per-request
--   keys first and passes their values: see "Hash-tagged" below)
-- ARGV[1] owner token   ARGV[2] now in ms, or "" for the server's TIME
-- ARGV[3] lease TTL in ms   ARGV[4] length of the key prefix
-- then n members, n claim keys (`<id>\0<token>`, Go's), n request tokens,
-- n deadlines, each group in item order: ARGV[4+i] member, ARGV[4+n+i]
-- claim key, ARGV[4+2n+i] token, ARGV[4+3n+i] the member's data.deadline
-- in Unix seconds as claim_core::wire::member_deadline reads it, 0 when it
-- cannot be read (grouped so each group goes to Redis as one unpack)
-- Hash-tagged (#KEYS == 7): then, in item order, n marker values, n cancel
-- values ('' = absent; a cancel whose explicit-time expiry passed is sent
-- as absent), n reasons why an item's per-request keys are unreadable
-- ('' = readable), as the plain layout's MGET/EXISTS/TYPE reads decide.
-- Returns one string, an entry per item in item order, separated by
-- spaces (one bulk reply, not four values per item: the caller's reply
-- parser costs per value, see docs/PERFORMANCE.md). An entry is the
-- outcome alone (0 not pending, 1 duplicate dropped, 4 dead-lettered,
-- 5 duplicate dropped whose generation is answered and held by nobody) or,
-- for 2 (claimed) and 3 (claimed and cancelled), `<outcome>,<redeliveries>,
-- <the pending score as Redis printed it>,<lease expiry ms>`; no field can
-- hold a comma or a space (scores are Redis's number text, the rest
-- digits).
--
-- Leases: min(now + TTL, deadline + 30 s) from the deadline passed, never
-- the pending score: a member scored 0, -inf or by its creation time gets
-- the lease its deadline allows (it only sorts earlier). A member whose
-- deadline cannot be read (0) gets now + TTL: the runtime answers it
-- INVALID_REQUEST right after this claim, and the TTL is range-checked
-- here, so every index score written is a finite ms value below 2^53 ms.
-- Every numeric argument (time, TTL, prefix length, deadlines) is checked
-- before the first read that decides anything, so a bad one fails the call
-- with nothing written.
--
-- Correctness: items are decided in order against the state read at the
-- start plus what earlier items of this batch did (members already taken,
-- generations already claimed, delivery counts already consumed), which is
-- the model applied item by item. A pending member whose generation is
-- claimed by one of ours is a duplicate (dropped); one whose claim key
-- holds a Go processor's claim (a bare owner token: Go parked a retry and
-- kept its claim, and the parked copy came back) is claimed over it, as
-- Go's claim script does: the Go holder's renew then fails and its ack is
-- fenced, so one owner remains. A pending item whose marker or cancel key
-- holds another type than a string cannot be served safely (its dedup or
-- cancel state is unreadable): it moves to the dead hash with the reason,
-- alone. MGET reads such keys as absent, so one EXISTS over the same keys
-- tells whether any exists unread; only then is each one TYPE-checked. Nothing is written until every decision
-- is made and every key about to be written has been type-checked by a
-- read, so an error leaves no partial batch. The whole script is atomic,
-- so two owners can never both see a member pending.
--
-- Payloads stored apart: a copy dropped as answered while nobody holds its
-- generation (a producer repeated a submit that had landed after the
-- request was answered) leaves a payload key no ack will delete. The
-- script does not parse members, so it answers 5 and the caller deletes
-- the key right after (idempotent: the generation is answered, every later
-- record is suppressed by its marker); a crash in between leaves the key
-- to its own expiry, deadline plus ten minutes.
--
-- Hash-tagged: the per-request values come from reads made just before
-- this script, not inside it (ops/claim.rs says what a write landing in
-- between can cause: a wasted dispatch at most, never a second record);
-- every decision after them is the same as in the plain layout.
--
-- Cost (see docs/PERFORMANCE.md): one call per step for the whole batch.
-- Most items share the lease expiry now + TTL, whose index score and reply
-- texts are made once per batch.

local tagged = #KEYS == 7
local n = (#ARGV - 4) / (tagged and 7 or 4)
need(n >= 1 and n == math.floor(n) and (tagged or #KEYS == 7 + 2 * n),
  'claim: expects 4 ARGV and 2 KEYS per item (hash-tagged: 7 ARGV and no KEYS per item)')
local owner, ttl, plen = ARGV[1], ms_arg(ARGV[3]), ms_arg(ARGV[4])
local explicit = ARGV[2] ~= ''
need(ttl and ttl > 0 and plen and (not explicit or ms_arg(ARGV[2])),
  'claim: time, TTL and prefix length must be whole numbers in range')
local m0, g0, t0, d0 = 4, 4 + n, 4 + 2 * n, 4 + 3 * n
local deadlines = {}
for i = 1, n do
  deadlines[i] = deadline_arg(ARGV[d0 + i])
  need(deadlines[i], 'claim: deadlines must be whole Unix seconds in 0..253402300799')
end

local scores = redis.call('ZMSCORE', KEYS[1], unpack(ARGV, m0 + 1, m0 + n))
local out = {}
local any = false
for i = 1, n do
  if scores[i] then
    any = true
    break
  end
end
if not any then
  for i = 1, n do
    out[i] = '0'
  end
  return table.concat(out, ' ')
end

-- flags[2i-1], flags[2i]: item i's marker and cancel values (false when
-- absent); unreadable[i]: why item i's per-request keys cannot be read.
local flags, unreadable, cancel_expiry = {}, {}, {}
if tagged then
  local v0 = 4 + 4 * n
  for i = 1, n do
    local marker, cancel, why = ARGV[v0 + i], ARGV[v0 + n + i], ARGV[v0 + 2 * n + i]
    flags[2 * i - 1] = marker ~= '' and marker
    flags[2 * i] = cancel ~= '' and cancel
    if why ~= '' then
      unreadable[i] = why
    end
  end
else
  flags = redis.call('MGET', unpack(KEYS, 8, 7 + 2 * n))
  local read = 0
  for j = 1, 2 * n do
    if flags[j] then
      read = read + 1
    end
  end
  if redis.call('EXISTS', unpack(KEYS, 8, 7 + 2 * n)) > read then
    for j = 1, 2 * n do
      if not flags[j] then
        local key = KEYS[7 + j]
        local kind = redis.call('TYPE', key)['ok']
        if kind ~= 'none' and kind ~= 'string' then
          local i = math.floor((j + 1) / 2)
          unreadable[i] = unreadable[i] or ('key "' .. string.sub(key, plen + 1) .. '" holds a '
            .. kind .. ', not a string')
        end
      end
    end
  end
  if explicit then
    local cancel_keys = {}
    for i = 1, n do
      cancel_keys[i] = KEYS[7 + 2 * i]
    end
    cancel_expiry = redis.call('HMGET', KEYS[6], unpack(cancel_keys))
  end
end
local owners = redis.call('HMGET', KEYS[3], unpack(ARGV, g0 + 1, g0 + n))
-- Redelivery counts are rare: look them up only when some exist.
local deliveries = {}
if redis.call('HLEN', KEYS[5]) > 0 then
  deliveries = redis.call('HMGET', KEYS[5], unpack(ARGV, g0 + 1, g0 + n))
end
local now = clock_ms(ARGV[2])
local full = now + ttl
local full_text = index_score(full)
-- Lease expiry by deadline (a batch has few distinct deadlines): the ms,
-- its index score text and the reply's text.
local expiry_of, text_of, reply_of = {}, {}, {}
local bar = owner .. '|'

local taken, held, counted = {}, {}, {}
local zrem, claimed, owned, index, forget, dead = {}, {}, {}, {}, {}, {}
local at = ',"at_ms":' .. ms_string(now) .. '}'
local nz, nc, nf = 0, 0, 0
-- The generation's redelivery count leaves the deliveries hash, once.
local function forget_count(gen)
  counted[gen] = true
  nf = nf + 1
  forget[nf] = gen
end
-- The member leaves pending, once in a batch.
local function take(member)
  taken[member] = true
  nz = nz + 1
  zrem[nz] = member
end
for i = 1, n do
  local member, gen, score = ARGV[m0 + i], ARGV[g0 + i], scores[i]
  if not score or taken[member] then
    out[i] = '0'
  elseif unreadable[i] then
    take(member)
    push(dead, member, '{"reason":' .. cjson.encode(unreadable[i]) .. at)
    if deliveries[i] and not counted[gen] then
      forget_count(gen)
    end
    out[i] = '4'
  else
    take(member)
    local marker = flags[2 * i - 1]
    local terminal = marker and is_live(marker, now)
    local busy = held[gen]
    if busy == nil then
      busy = owners[i] ~= false and not is_foreign(owners[i])
    end
    local count = nil
    if deliveries[i] and not counted[gen] then
      count = deliveries[i]
    end
    if terminal or busy then
      if terminal and count then
        forget_count(gen)
      end
      -- 5: an answered copy nobody holds; the caller deletes its payload
      -- stored apart (no ack is left to), which this script cannot name.
      local code = '1'
      if terminal and not owners[i] then
        code = '5'
      end
      out[i] = code
    else
      -- r_text: the count as the owner entry writes it; the usual 0 as a
      -- literal, since concatenating a Lua number formats it with printf.
      local r_text = '0'
      if count then
        r_text = ms_string(tonumber(count) or 0)
        forget_count(gen)
      end
      held[gen] = true
      local deadline = deadlines[i]
      local expiry = expiry_of[deadline]
      if not expiry then
        expiry = lease_expiry(now, ttl, deadline)
        expiry_of[deadline] = expiry
        text_of[deadline] = expiry == full and full_text or index_score(expiry)
        reply_of[deadline] = ',' .. ms_string(expiry)
      end
      claimed[nc + 1], claimed[nc + 2] = gen, member
      owned[nc + 1], owned[nc + 2] = gen, bar .. score .. '|' .. r_text
      index[nc + 1], index[nc + 2] = text_of[deadline], gen
      nc = nc + 2
      local code = '2,'
      if flags[2 * i] == ARGV[t0 + i] and (not explicit or side_live(cancel_expiry[i], now)) then
        code = '3,'
      end
      out[i] = code .. r_text .. ',' .. score .. reply_of[deadline]
    end
  end
end

check_types({ nc > 0 and KEYS[2], #dead > 0 and KEYS[7] }, { nc > 0 and KEYS[4] })
redis.call('ZREM', KEYS[1], unpack(zrem))
if nc > 0 then
  redis.call('HSET', KEYS[2], unpack(claimed))
  -- Encoding hint: Redis keeps a hash or sorted set of at most 128 short
  -- entries as a listpack, where every field read or write scans the whole
  -- key; a busy queue's owners hash and index hover around that size. A
  -- placeholder over 64 bytes, written first and removed last in this same
  -- atomic step, makes Redis convert them to a hashtable and a skiplist,
  -- which it keeps until the key is emptied. No reader ever sees it, and it
  -- cannot collide with a claim key (it holds two NULs, see lib.lua).
  redis.call('HSET', KEYS[3], PLACEHOLDER, PLACEHOLDER)
  redis.call('ZADD', KEYS[4], 0, PLACEHOLDER)
  redis.call('HSET', KEYS[3], unpack(owned))
  redis.call('ZADD', KEYS[4], unpack(index))
  redis.call('HDEL', KEYS[3], PLACEHOLDER)
  redis.call('ZREM', KEYS[4], PLACEHOLDER)
end
write_any('HDEL', KEYS[5], forget)
write_any('HSET', KEYS[7], dead)
return table.concat(out, ' ')
