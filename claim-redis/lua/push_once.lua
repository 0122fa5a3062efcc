-- push_once.lua: pushes terminal records onto one result list, at most one
-- per generation, with each generation's terminal marker, in the list's
-- slot (the cross-slot half of an ack, and the reclaimer's DELIVERY_LIMIT
-- record when the list lives in another slot than the queue).
--
-- KEYS[1] the result list
-- KEYS[1+i] (i = 1..n) item i's terminal marker, in the list's slot
-- (Keys::marker_for)
-- ARGV[1] now in ms, or "" for the server's TIME   ARGV[2] result dedup TTL
-- in ms   ARGV[3] slack added to the markers' PX (explicit-time mode), in ms
-- ARGV[4] the list's EXPIRE in seconds after a push (0: none)
-- ARGV[5] why the list is refused by its name ('' when the name is free)
-- ARGV[6] length of the key prefix (for the reason's list name)
-- then 4 per item, at b = 6 + 4(i-1): ARGV[b+1] record, ARGV[b+2] record
-- digest, ARGV[b+3] the deadline in Unix seconds of a claim the marker
-- must outlive: the member's data.deadline (claim_core::wire::
-- member_deadline; never the pending score) where another owner may hold
-- the generation's claim; 0 where the caller's own claim, the only one,
-- is dropped next (the ack's ack_drop.lua, the reclaimer's script) or the
-- deadline cannot be read: the marker then lives the dedup TTL, and a
-- crash before that drop leaves a lapsing claim the reclaimer ends on
-- this marker (it reads it here), ARGV[b+4] '1' if the
-- record may be pushed, '0' to only report the marker (the caller's fence
-- found the generation no longer ours to answer)
-- Returns n codes, then the list's refusal ('' when usable), then n
-- marker values: per item code 1 pushed, 2 its own record landed already
-- (a live marker with this record's digest), 3 suppressed (a live marker
-- of another record), 4 the list cannot take a record (nothing written
-- for it), 0 nothing to do (a '0' item without a live marker); its value
-- is the live marker's `<expiry>:<digest>` after the call ('' for 0 and
-- 4), which the ack copies into the queue's slot (ack_drop.lua).
--
-- Correctness: per item, as the model's ack: a generation with a live
-- marker is answered already, so this record is suppressed (first record
-- wins) and the digest says whether the marker is this record's own. Else a
-- list refused by name or holding another type than a list can reach no
-- consumer: the item is answered 4 and nothing is written for it, no marker
-- either, so a redrive after the fix gets its record. Else, when allowed,
-- the record is LPUSHed (in item order, one LPUSH for the batch) and the
-- marker `<expiry>:<digest>` written, expiring the dedup TTL after the
-- later of now and that deadline + 30 s (ack.lua's rule: no claim of it
-- outlives that; lib.lua marker_expiry_beside_a_claim, now + dedup TTL for
-- 0). A generation repeated in the batch sees the marker of
-- its earlier item. The list gets its EXPIRE only when something was
-- pushed. Reads and the one TYPE come first, then the writes, so an error
-- leaves nothing written. Every number is range-checked before the first
-- read (lib.lua ms_arg, deadline_arg): time, dedup TTL, slack, prefix
-- length and each deadline must be whole numbers in range, or the call
-- fails with nothing written; the marker's PXAT (PX on an explicit clock,
-- lib.lua set_markers) is then a whole number in 1..2^53, so its
-- SET cannot fail after the LPUSH. A list TTL above
-- MAX_DEADLINE_SECS is clamped to it (EXPIRE cannot fail after the push). Marker and push are one atomic step in one slot,
-- so a record without its marker (or the reverse) is never visible.
--
-- Safe to run twice: a second run of the same call finds every marker the
-- first one wrote, with its digest, and answers 2 without pushing; the
-- items the first run left alone meet the same state and are left alone
-- again. So a resent call (a cluster client retrying after a connection
-- drop) never makes a second record.

need(#ARGV >= 6 and #KEYS >= 2, 'push_once: missing arguments')
local n = #KEYS - 1
need(#ARGV == 6 + 4 * n, 'push_once: expects 4 ARGV per marker key')
local ttl, slack, expire = ms_arg(ARGV[2]), ms_arg(ARGV[3]), ttl_secs_arg(ARGV[4])
local plen = ms_arg(ARGV[6])
need(ttl and slack and expire and plen and ttl + slack <= MAX_MS
  and (ARGV[1] == '' or ms_arg(ARGV[1])),
  'push_once: time, TTLs and prefix length must be whole numbers in range')
local deadlines = {}
for i = 1, n do
  deadlines[i] = deadline_arg(ARGV[6 + 4 * (i - 1) + 3])
  need(deadlines[i], 'push_once: deadlines must be whole Unix seconds in 0..253402300799')
end
local plen = tonumber(ARGV[6])
need(ttl and ttl >= 0 and slack and expire and expire >= 0 and plen
  and (ARGV[1] == '' or tonumber(ARGV[1])),
  'push_once: time, TTLs and prefix length must be numbers')
for i = 1, n do
  local b = 6 + 4 * (i - 1)
  need(tonumber(ARGV[b + 3]), 'push_once: pending scores must be numbers')
  need(ARGV[b + 4] == '0' or ARGV[b + 4] == '1', 'push_once: push flags must be 0 or 1')
end

local vals = redis.call('MGET', unpack(KEYS, 2, n + 1))
local refusal = ARGV[5]
if refusal == '' then
  local kind = redis.call('TYPE', KEYS[1])['ok']
  if kind ~= 'list' and kind ~= 'none' then
    refusal = 'result list "' .. string.sub(KEYS[1], plen + 1) .. '" holds a ' .. kind
  end
end
local now = clock_ms(ARGV[1])

local out, live, marked = {}, {}, {}
local records, markers, values, expiries = {}, {}, {}, {}
for i = 1, n do
  local b = 6 + 4 * (i - 1)
  local key, digest = KEYS[1 + i], ARGV[b + 2]
  local seen = marked[key]
  if not seen and is_live(vals[i], now) then
    seen = vals[i]
  end
  local code
  if seen then
    code = (marker_digest(seen) or '') == digest and 2 or 3
  elseif refusal ~= '' then
    code = 4
  elseif ARGV[b + 4] == '0' then
    code = 0
  else
    code = 1
    records[#records + 1] = ARGV[b + 1]
    local m = #markers + 1
    local expiry = marker_expiry_beside_a_claim(now, ttl, deadlines[i])
    markers[m] = key
    local expiry_text = ms_string(expiry)
    expiries[m] = expiry_text
    values[m] = expiry_text .. ':' .. digest
    marked[key] = values[m]
    seen = values[m]
  end
  out[i] = code
  live[i] = seen or ''
end

if #records > 0 then
  redis.call('LPUSH', KEYS[1], unpack(records))
  if expire > 0 then
    redis.call('EXPIRE', KEYS[1], ms_string(expire))
  end
end
set_markers(markers, values, expiries, ARGV[1], now, slack)
out[n + 1] = refusal
for i = 1, n do
  out[n + 1 + i] = live[i]
end
return out
