-- ack.lua: delivers terminal records; drops the claims the caller owns;
-- dead-letters items whose result list cannot take a record.
--
-- KEYS[1] pending zset   KEYS[2] <queue>:claimed hash
-- KEYS[3] <queue>:claim-owners hash   KEYS[4] <queue>:claims-idx zset
-- KEYS[5] <queue>:deliveries hash   KEYS[6] <queue>:dead hash
-- KEYS[7] explicit-time side hash
-- KEYS[7+r] result list of run r (r = 1..R; a run is consecutive items
-- with the same list, so a batch for one list is one run)
-- with base k = 7 + R: KEYS[k+i] terminal marker of item i, and
-- KEYS[k+n+2i-1] request-active:<id>, KEYS[k+n+2i] request-cancel:<id>,
-- then KEYS[k+3n+j] (j = 1..P) the payload key (request-payload:<id>:<token>)
-- of the j-th item that has one (P = 0 when none has)
-- ARGV[1] owner token   ARGV[2] now in ms, or "" for the server's TIME
-- ARGV[3] result dedup TTL in ms   ARGV[4] slack added to the markers' PX
-- (explicit-time mode), in ms   ARGV[5] R   ARGV[6] length of the key prefix
-- ARGV[3r+4] items in run r, ARGV[3r+5] why run r's list is refused by its
-- name ('' when the name is free), ARGV[3r+6] the list's EXPIRE in seconds
-- after a push (0: none; a run is also cut where this changes)
-- then n claim keys, n request tokens, n records, n members, n deadlines
-- (the member's data.deadline, Unix seconds, as claim_core::wire::
-- member_deadline reads it, 0 when it cannot be read: never the pending
-- score), n record digests, each group in item order (base a = 6 + 3R):
-- ARGV[a+i], ARGV[a+n+i], ARGV[a+2n+i], ARGV[a+3n+i], ARGV[a+4n+i],
-- ARGV[a+5n+i]; then ARGV[a+6n+j] the item index of payload key j
-- Hash-tagged layout (the script is built with TAGGED = true, see
-- scripts.rs; Plain builds it with TAGGED = false): every key must lie in
-- the queue's slot, so the producer keys and payload keys are not passed:
-- KEYS[k+i] are the markers (in the lists' slot, which is the queue's) and
-- nothing follows them; ARGV ends with the six groups (no payload indexes).
-- The caller deletes those keys afterwards, from the reply's bits 1 and 16.
-- Returns one string of an integer per item, in item order, separated by
-- spaces (one bulk reply: the caller's parser costs per value): 1 if its
-- record was pushed, plus 2 if the caller's claim was dropped, plus 4 if
-- it was dead-lettered, plus 8 if nothing was pushed because the live
-- marker was written by this same record (digest equal: an earlier
-- attempt of this ack landed), plus 16 if the item's payload key (if it
-- has one) goes (deleted here when passed).
--
-- Correctness: per item, as the model: a generation with a live marker is
-- answered already and this record is suppressed (first record wins); the
-- marker's digest says whether it was this record's. Else,
-- if its run's list is refused by name or holds another type than a list,
-- no record can reach a consumer: the member goes to the dead hash with the
-- reason and no marker is written, so a redrive after the key is fixed gets
-- its record; but only the claim's holder does that: for a caller that
-- does not hold the claim the item changes nothing (the generation is
-- claimed by another owner, back in pending or parked, and whoever takes it
-- meets the same list), so a generation is never in two places. Else, when
-- the generation is no longer ours to answer, the record is suppressed and
-- nothing written: not claimed by one of ours (the caller, or another
-- packed owner entry) and not pending as these bytes means a Go processor
-- holds it (a bare owner token) or answered it (Go writes no marker), or it
-- is parked under new bytes and will be served again, so a record here
-- would be a second one (the model's ours_somewhere). Else the record is
-- pushed and the marker `<expiry>:<digest>` written. Where another owner
-- holds the claim (the caller is stale), that holder may still ack, renew
-- or lapse: the marker expires the dedup TTL after the later of now and
-- deadline + 30 s (no claim outlives that; lib.lua
-- marker_expiry_beside_a_claim). Otherwise this call drops the only claim
-- (the caller's) and takes every pending copy, so nothing is left that
-- could answer the generation again: a later stale ack finds it neither
-- claimed nor pending and is suppressed by the rule above, and the marker
-- only guards a retry of this call whose outcome was unknown (code 8) and
-- a resubmission of the same bytes, for the dedup TTL after now (lib.lua
-- marker_expiry), whatever the deadline. The producer's active/cancel keys are deleted only where
-- they hold this generation's token. In every case a pending copy of the
-- member (the reclaimer's, while a stale owner worked) is removed with its
-- delivery count, and the claim is dropped only if the caller owns it (its
-- owner entry is `<caller>|<score>|<count>`). A repeated generation in one
-- batch sees the marker and the drop of its earlier item. Reads and type
-- checks (TYPE per run, one read per other key written) come first, then
-- the writes, so an error leaves no partial batch: the queue's own keys
-- holding the wrong type fail the whole call, writing nothing.
--
-- Numbers: time, dedup TTL, slack and every deadline are range-checked
-- (lib.lua ms_arg, deadline_arg) before anything is read, so a marker's
-- expiry (PXAT on the server's TIME, PX on an explicit clock: lib.lua
-- set_markers) is always a whole number in 1..2^53 and its SET
-- cannot fail after the LPUSH (which would leave a record without a
-- marker and the claim not dropped). A list TTL (a member's result_ttl_seconds) above
-- MAX_DEADLINE_SECS is clamped to it, not refused: one member's number
-- never fails its batch-mates' acks, and EXPIRE cannot fail after a push.
--
-- Payload keys and list TTLs (Go's payload references and
-- result_ttl_seconds): the payload key of an item is deleted only where the
-- caller's claim was dropped and the item was not dead-lettered (the owner
-- ended the generation; a dead-lettered member keeps its payload for a
-- redrive; a stale owner's ack leaves it to the holder), and where the ack
-- took the generation's pending copy while no claim exists (nobody is left
-- to delete it). DEL accepts any type, so it needs no check; in
-- explicit-time mode the key's side-hash expiry goes with it. A run's list gets its EXPIRE right after its
-- LPUSH, only when something was pushed.
--
-- Safe to run twice: a second run of the same call finds the markers the
-- first one wrote (code 8, nothing pushed), the caller's claims and the
-- pending copies gone and the dead entries written (their claims dropped,
-- so it writes none again): the same end state.
--
-- Cost (see docs/PERFORMANCE.md): one call per step for the whole batch,
-- one TYPE per run, except the marker SETs: a marker is a key of its own
-- with its own expiry, and Redis has no multi-key SET with expiry. Payload
-- keys add one DEL for the batch, and TTLs one EXPIRE per pushed run, only
-- when some item has them.

need(#ARGV >= 6 and ms_arg(ARGV[5]) and ms_arg(ARGV[6]), 'ack: missing arguments')
local runs = ms_arg(ARGV[5])
local a = 6 + 3 * runs
-- Plain: #ARGV - a = 6n + P and #KEYS - 7 - R = 3n + P. Hash-tagged:
-- #KEYS - 7 - R = n (markers only) and P = 0.
local per_item = TAGGED and 1 or 3
local n = TAGGED and (#KEYS - 7 - runs) or ((#ARGV - a) - (#KEYS - 7 - runs)) / 3
local np = #ARGV - a - 6 * n
need(runs >= 1 and n >= 1 and n == math.floor(n) and np >= 0 and not (TAGGED and np > 0)
  and #KEYS == 7 + runs + per_item * n + np,
  'ack: expects 6 ARGV and 3 KEYS (hash-tagged: 1) per item, one list per run and a key per payload')
local total = 0
for r = 1, runs do
  local count = ms_arg(ARGV[3 * r + 4])
  local expire = ttl_secs_arg(ARGV[3 * r + 6])
  need(count and count >= 1, 'ack: run sizes must be positive numbers')
  need(expire, 'ack: list TTLs must be whole non-negative numbers')
  total = total + count
end
need(total == n, 'ack: run sizes must add up to the items')
local owner, ttl, slack = ARGV[1], ms_arg(ARGV[3]), ms_arg(ARGV[4])
local explicit = ARGV[2] ~= ''
need(ttl and slack and ttl + slack <= MAX_MS and (not explicit or ms_arg(ARGV[2])),
  'ack: time and TTLs must be whole numbers in range')
local g0, t0, r0, m0, s0, k0 = a, a + n, a + 2 * n, a + 3 * n, a + 4 * n, 7 + runs
local d0 = a + 5 * n
local deadlines = {}
for i = 1, n do
  deadlines[i] = deadline_arg(ARGV[s0 + i])
  need(deadlines[i], 'ack: deadlines must be whole Unix seconds in 0..253402300799')
end
-- payload[i]: item i's payload key, if it has one.
local payload = {}
for j = 1, np do
  local i = tonumber(ARGV[a + 6 * n + j])
  need(i and i >= 1 and i <= n, 'ack: payload key indexes must name items')
  payload[i] = KEYS[k0 + 3 * n + j]
end

-- vals[i]: the marker of item i; vals[n + 2i - 1], vals[n + 2i]: its
-- active and cancel values.
local vals = redis.call('MGET', unpack(KEYS, k0 + 1, k0 + per_item * n))
local owners = redis.call('HMGET', KEYS[3], unpack(ARGV, g0 + 1, g0 + n))
local copies = redis.call('ZMSCORE', KEYS[1], unpack(ARGV, m0 + 1, m0 + n))
local plen = tonumber(ARGV[6])
local unusable = {}
for r = 1, runs do
  local refusal = ARGV[3 * r + 5]
  if refusal ~= '' then
    unusable[r] = refusal
  else
    local kind = redis.call('TYPE', KEYS[7 + r])['ok']
    if kind ~= 'list' and kind ~= 'none' then
      unusable[r] = 'result list "' .. string.sub(KEYS[7 + r], plen + 1) .. '" holds a ' .. kind
    end
  end
end
local now = clock_ms(ARGV[2])

local bar, rest = owner .. '|', #owner + 2
local out = {}
local marked, dropped, deleted, removed = {}, {}, {}, {}
local pushes, markers, values, expiries, dels, drops = {}, {}, {}, {}, {}, {}
local dead, zrem, forget = {}, {}, {}
local nm, nd, ndr = 0, 0, 0
local at = ',"at_ms":' .. ms_string(now) .. '}'
local unpayload = {}
local own_expiry
local run, left = 1, tonumber(ARGV[7])
for i = 1, n do
  while left == 0 do
    run = run + 1
    left = tonumber(ARGV[3 * run + 4])
  end
  left = left - 1
  local gen, member, digest = ARGV[g0 + i], ARGV[m0 + i], ARGV[d0 + i]
  local entry = owners[i]
  local ours = held_by(entry, bar, rest)
  local deferred = false
  local code = 0
  if marked[gen] then
    if marked[gen] == digest then
      code = 8
    end
  elseif is_live(vals[i], now) then
    if marker_digest(vals[i]) == digest then
      code = 8
    end
  elseif unusable[run] and not ours then
    deferred = true
  elseif unusable[run] then
    code = 4
    push(dead, member, '{"reason":' .. cjson.encode(unusable[run]) .. at)
  elseif not (ours or (entry and not is_foreign(entry)) or (copies[i] and not removed[member])) then
    -- Not ours to answer (see the header): suppressed, nothing written.
    code = 0
  else
    marked[gen] = digest
    code = 1
    local records = pushes[run]
    if not records then
      records = {}
      pushes[run] = records
    end
    records[#records + 1] = ARGV[r0 + i]
    nm = nm + 1
    markers[nm] = KEYS[k0 + i]
    local expiry_text
    if entry and not ours then
      expiry_text = ms_string(marker_expiry_beside_a_claim(now, ttl, deadlines[i]))
    else
      -- The same for every item of the call: formatted once.
      own_expiry = own_expiry or ms_string(marker_expiry(now, ttl))
      expiry_text = own_expiry
    end
    expiries[nm] = expiry_text
    values[nm] = expiry_text .. ':' .. digest
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
  local gone = false
  if copies[i] and not removed[member] and not deferred then
    removed[member] = true
    zrem[#zrem + 1] = member
    forget[#forget + 1] = gen
    -- The last copy taken while nobody holds a claim: answered now, and no
    -- later ack would delete the payload (a holder's own drop does below).
    gone = code ~= 4 and not entry
  end
  if ours and not dropped[gen] then
    dropped[gen] = true
    ndr = ndr + 1
    drops[ndr] = gen
    gone = code ~= 4
    code = code + 2
  end
  if gone then
    code = code + 16
    if payload[i] then
      unpayload[#unpayload + 1] = payload[i]
    end
  end
  out[i] = code
end

check_types({
  ndr > 0 and KEYS[2], #forget > 0 and KEYS[5],
  #dead > 0 and KEYS[6], explicit and (nd > 0 or #unpayload > 0) and KEYS[7],
}, { ndr > 0 and KEYS[4] })

for r = 1, runs do
  if pushes[r] then
    redis.call('LPUSH', KEYS[7 + r], unpack(pushes[r]))
    local expire = ttl_secs_arg(ARGV[3 * r + 6])
    if expire > 0 then
      redis.call('EXPIRE', KEYS[7 + r], ms_string(expire))
    end
  end
end
del_keys(unpayload, KEYS[7], explicit)
set_markers(markers, values, expiries, ARGV[2], now, slack)
del_keys(dels, KEYS[7], explicit)
write_any('ZREM', KEYS[1], zrem)
write_any('HDEL', KEYS[5], forget)
write_any('HSET', KEYS[6], dead)
if ndr > 0 then
  drop_claims(KEYS[2], KEYS[3], KEYS[4], KEYS[5], drops, {})
end
return table.concat(out, ' ')
