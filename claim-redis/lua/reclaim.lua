-- reclaim.lua: handles expired claims chosen by the caller (second phase of
-- reclaim_expired): redelivers them, or at the delivery limit writes their
-- DELIVERY_LIMIT record and dead-letters them; drops index ghosts.
--
-- KEYS[1] pending zset   KEYS[2] <queue>:claimed hash
-- KEYS[3] <queue>:claim-owners hash   KEYS[4] <queue>:claims-idx zset
-- KEYS[5] <queue>:deliveries hash   KEYS[6] <queue>:dead hash
-- KEYS[7] explicit-time side hash
-- then, per item in order: none for 'g'; its terminal marker for 'r' and
-- 'u'; for 'l' its terminal marker, result list, request-active:<id>,
-- request-cancel:<id>; then, after every item's keys, the payload key
-- (request-payload:<id>:<token>) of each item flagged with one, in item order
-- ARGV[1] now in ms   ARGV[2] result dedup TTL in ms
-- ARGV[3] slack added to the markers' PX (explicit-time mode), in ms
-- ARGV[4] '1' in explicit-time mode, else '0'
-- then per item: claim key, the claim-owners entry read by the caller
-- ('' for an index ghost), kind: 'g' index ghost (nothing follows), else
-- '1' if the item's payload key is among the trailing KEYS (else '0') and
-- then by kind: 'r' redeliver (nothing more), 'l' limit: request token,
-- DELIVERY_LIMIT record, dead entry JSON, the dead reason to use if the
-- list holds another type (the type name is appended), the record's
-- digest and the list's EXPIRE in seconds after the push (0: none; the
-- routing's TTL, claim_core::routing, at most 315360000); 'u' limit whose result list the caller refused by name: its
-- dead entry JSON.
-- Hash-tagged layout (ops/leases_cluster.rs): ARGV[4] is 't1' or 't0'
-- (explicit time or not); KEYS are the first 7 alone, all in the queue's
-- slot; every payload flag is '0'; items are 'g', 'r', 'u' and 'x' (a
-- limit item whose DELIVERY_LIMIT record the caller pushed already, with
-- push_once in the list's slot: only its dead entry JSON follows), never
-- 'l'; and each 'r', 'u' and 'x' item ends with the value of its terminal
-- marker ('' = none), read by the caller from the marker's own slot.
-- Returns {redelivered, dead_lettered, ghosts_repaired}, then (hash-tagged
-- only) the claim key of each item whose generation ended answered here
-- ('x' items, and claims dropped under a live marker), whose payload and
-- producer keys the caller deletes in their own slots.
--
-- Correctness: the caller chose the items from a read, so each is re-checked
-- here: its owner entry must be byte-equal to what the caller saw (same
-- owner, score and count) and its lease still expired; otherwise it is left
-- alone (renewed, acked or reclaimed meanwhile). An expired claim whose
-- generation already has a live marker (a stale owner's ack answered it) is
-- dropped as leftover bookkeeping, as the model does, with its payload key
-- when named (that stale ack left the payload to this holder, which will
-- never ack). Redelivery restores the member at its original score with the
-- count + 1. A Go processor's claim (a bare owner token, see is_foreign)
-- carries no score or count: it is redelivered at the score Go computes from
-- the member (member_score; 0 when unparsable, as Go does), never
-- dead-lettered for its format. At the limit (no live marker, by the check
-- above) the DELIVERY_LIMIT record is pushed (its list then gets the
-- EXPIRE the routing gave, as an ack's push sets it; of several items on
-- one list the last non-zero one, in item order), the marker written, the
-- producer keys holding this token cleared, and the member kept in the dead
-- hash; the marker expires the dedup TTL after now (lib.lua
-- marker_expiry): the claim is dropped and the member dead-lettered in this
-- script, so no copy is left to answer, and a stale owner's late ack finds
-- the generation nowhere (ack.lua suppresses it); the marker only guards
-- a resubmission of the same bytes within the dedup TTL. Nothing from the
-- member or the score the owner entry keeps goes into the expiry: a score
-- of inf or 9.2e18 cannot make the marker's SET fail after the LPUSH. Numbers are range-checked first
-- (time, dedup TTL, slack: whole ms in 0..2^53; list TTLs: whole seconds,
-- clamped as ttl_secs_arg does), so no SET, EXPIRE or ZADD of this script
-- can fail on a value it computes; a pending score restored
-- as the owner entry holds it is one Redis printed, so ZADD takes it back. The record answers the generation, so its payload stored
-- apart is deleted with it (as the owner's ack does). The caller named
-- payload keys from the members it read (every item whose member has one:
-- a marker written after its read still finds the key here), and the
-- claim key re-checked here names the same
-- generation, whose payload key Go's producer derives from id and token. A
-- redelivered item, or one dead-lettered without a record, keeps its
-- payload (the next holder or a redrive needs it). Payload keys come after
-- all other KEYS, so the MGET below never reads their values. At the limit
-- with a result list that cannot take the record (refused by name: 'u';
-- holding another type: TYPE, once per list) only the dead entry is
-- written, saying why, so one bad list never fails the batch and the
-- claims behind it still move. A claim whose bookkeeping is unreadable is
-- not deleted silently: its member goes to the dead hash with the reason.
-- All decisions and type checks precede the first write.

need(#ARGV >= 4, 'reclaim: missing arguments')
local now, ttl = ms_arg(ARGV[1]), ms_arg(ARGV[2])
local slack = ms_arg(ARGV[3])
need(now and ttl and slack and ttl + slack <= MAX_MS,
  'reclaim: time and TTLs must be whole numbers in range')
local explicit = ARGV[4] == '1' or ARGV[4] == 't1'
local tagged = ARGV[4] == 't0' or ARGV[4] == 't1'

local items, gens = {}, {}
local a, k = 5, 7
while a <= #ARGV do
  need(a + 2 <= #ARGV, 'reclaim: truncated item')
  local item = { gen = ARGV[a], expect = ARGV[a + 1], kind = ARGV[a + 2] }
  a = a + 3
  item.keys = k
  if item.kind ~= 'g' then
    need(ARGV[a] == '0' or ARGV[a] == '1', 'reclaim: bad payload flag')
    item.has_payload = ARGV[a] == '1'
    a = a + 1
  end
  if item.kind == 'l' then
    need(not tagged and a + 5 <= #ARGV, 'reclaim: truncated limit item')
    item.token, item.record, item.dead = ARGV[a], ARGV[a + 1], ARGV[a + 2]
    item.unusable, item.digest = ARGV[a + 3], ARGV[a + 4]
    -- A whole number of seconds (EXPIRE runs after the LPUSH, so a TTL it
    -- refuses, a fraction say, must be caught before any write); the
    -- routing gives at most claim_core::routing::MAX_RESULT_TTL_SECONDS.
    item.expire = ttl_secs_arg(ARGV[a + 5])
    need(item.expire, 'reclaim: list TTL must be a whole non-negative number of seconds')
    a = a + 6
    k = k + 4
  elseif item.kind == 'u' then
    need(a <= #ARGV, 'reclaim: truncated limit item')
    item.dead = ARGV[a]
    a = a + 1
    if not tagged then
      k = k + 1
    end
  elseif item.kind == 'x' and tagged then
    need(a <= #ARGV, 'reclaim: truncated limit item')
    item.dead = ARGV[a]
    a = a + 1
  elseif item.kind == 'r' then
    if not tagged then
      k = k + 1
    end
  else
    need(item.kind == 'g', 'reclaim: unknown item kind')
  end
  if tagged and item.kind ~= 'g' then
    need(a <= #ARGV and not item.has_payload, 'reclaim: truncated hash-tagged item')
    item.marker = ARGV[a] ~= '' and ARGV[a]
    a = a + 1
    item.keys = k
  end
  items[#items + 1] = item
  gens[#gens + 1] = item.gen
end
local p = k
for _, item in ipairs(items) do
  if item.has_payload then
    p = p + 1
    item.payload = p
  end
end
need(#items >= 1 and #KEYS == p, 'reclaim: KEYS do not match the items')
-- Hash-tagged: no item names a key outside the queue's slot.
need(not tagged or p == 7, 'reclaim: hash-tagged items name no per-item KEYS')

local expiries = redis.call('ZMSCORE', KEYS[4], unpack(gens))
local owners = redis.call('HMGET', KEYS[3], unpack(gens))
local members = redis.call('HMGET', KEYS[2], unpack(gens))
local vals = {}
if k > 7 then
  vals = redis.call('MGET', unpack(KEYS, 8, k))
end

-- The type of each distinct result list of a limit item, read once.
local kinds = {}
for _, item in ipairs(items) do
  if item.kind == 'l' then
    local list = KEYS[item.keys + 2]
    if not kinds[list] then
      kinds[list] = redis.call('TYPE', list)['ok']
    end
  end
end
local at = ',"at_ms":' .. ms_string(now) .. '}'
local redelivered, dead_lettered, ghosts = 0, 0, 0
local back, counts, dead, drops, unindex, forget = {}, {}, {}, {}, {}, {}
local lists, order, markers, marker_value, marker_expiries, dels, deleted = {}, {}, {}, {}, {}, {}, {}
local expires = {}
local unreadable = '{"reason":"claim bookkeeping unreadable: owner entry malformed","at_ms":'
  .. ms_string(now) .. '}'
-- The item's generation ended answered: its payload key, if named, goes
-- (hash-tagged: its claim key is answered, for the caller).
local ended = {}
local function drop_payload(item)
  if tagged then
    ended[#ended + 1] = item.gen
    return
  end
  local key = item.payload and KEYS[item.payload]
  if key and not deleted[key] then
    deleted[key] = true
    dels[#dels + 1] = key
  end
end
for i, item in ipairs(items) do
  local gen, expiry, entry, member = item.gen, expiries[i], owners[i], members[i]
  if item.kind == 'g' then
    if expiry and not entry then
      unindex[#unindex + 1] = gen
      ghosts = ghosts + 1
    end
  elseif entry and entry == item.expect and expiry and score_ms(expiry) <= now then
    local _, score, r = unpack_owner(entry)
    drops[#drops + 1] = gen
    -- vals is KEYS[8..] read in order: this item's keys start at item.keys + 1.
    local base = item.keys - 7
    local marker = vals[base + 1]
    if tagged then
      marker = item.marker
    end
    if is_live(marker, now) then
      forget[#forget + 1] = gen
      drop_payload(item)
      ghosts = ghosts + 1
    elseif member and is_foreign(entry) then
      -- A Go processor's lapsed claim: back at the member's own score, as
      -- Go's reclaimer puts it; Go counts no deliveries, neither do we.
      push(back, member_score(member), member)
      redelivered = redelivered + 1
    elseif not score or not member then
      if member then
        push(dead, member, unreadable)
      end
      redis.log(redis.LOG_WARNING, 'claim-redis: dropped unreadable claim ' .. gen)
      ghosts = ghosts + 1
    elseif item.kind == 'r' then
      push(back, score, member)
      push(counts, gen, r + 1)
      redelivered = redelivered + 1
    elseif item.kind == 'u' then
      push(dead, member, item.dead)
      dead_lettered = dead_lettered + 1
    elseif item.kind == 'x' then
      drop_payload(item)
      push(dead, member, item.dead)
      dead_lettered = dead_lettered + 1
    elseif kinds[KEYS[item.keys + 2]] ~= 'list' and kinds[KEYS[item.keys + 2]] ~= 'none' then
      local reason = item.unusable .. kinds[KEYS[item.keys + 2]]
      push(dead, member, '{"reason":' .. cjson.encode(reason) .. at)
      dead_lettered = dead_lettered + 1
    else
      local list = KEYS[item.keys + 2]
      if not lists[list] then
        lists[list] = {}
        order[#order + 1] = list
      end
      push(lists[list], item.record)
      if item.expire > 0 then
        expires[list] = item.expire
      end
      markers[#markers + 1] = KEYS[item.keys + 1]
      local expiry_text = ms_string(marker_expiry(now, ttl))
      marker_expiries[#markers] = expiry_text
      marker_value[#markers] = expiry_text .. ':' .. item.digest
      for m = 1, 2 do
        local key = KEYS[item.keys + 2 + m]
        if vals[base + 2 + m] == item.token and not deleted[key] then
          deleted[key] = true
          dels[#dels + 1] = key
        end
      end
      drop_payload(item)
      push(dead, member, item.dead)
      dead_lettered = dead_lettered + 1
    end
  end
end
if #drops == 0 and #unindex == 0 then
  return { 0, 0, 0 }
end

check_types({ KEYS[5], KEYS[6], explicit and #dels > 0 and KEYS[7] }, { KEYS[1] })

for _, list in ipairs(order) do
  redis.call('LPUSH', list, unpack(lists[list]))
  if expires[list] then
    redis.call('EXPIRE', list, ms_string(expires[list]))
  end
end
set_markers(markers, marker_value, marker_expiries, ARGV[1], now, slack)
del_keys(dels, KEYS[7], explicit)
if #back > 0 then
  redis.call('ZADD', KEYS[1], unpack(back))
  write_any('HSET', KEYS[5], counts)
end
write_any('HDEL', KEYS[5], forget)
write_any('HSET', KEYS[6], dead)
if #drops > 0 then
  redis.call('HDEL', KEYS[2], unpack(drops))
  redis.call('HDEL', KEYS[3], unpack(drops))
end
for _, gen in ipairs(drops) do
  unindex[#unindex + 1] = gen
end
redis.call('ZREM', KEYS[4], unpack(unindex))
local out = { redelivered, dead_lettered, ghosts }
for _, gen in ipairs(ended) do
  out[#out + 1] = gen
end
return out
