-- lib.lua: helpers prepended to every claim-redis script; never run alone.
--
-- KEYS: none.  ARGV: none.  Returns: nothing; defines the locals below.
--
-- Correctness: every helper is a pure function of its arguments (clock_ms
-- may read TIME, which writes nothing), so prepending them changes no
-- script's effects. score_ms, lease_expiry, marker_expiry,
-- marker_expiry_beside_a_claim, member_deadline and is_live mirror
-- claim-core's Score::as_millis, lease::lease_expiry, lease::marker_expiry,
-- lease::marker_expiry_beside_a_claim, wire::member_deadline and the model's marker
-- liveness, so the scripts compute the same numbers as the reference model:
-- leases and markers from the member's deadline (1..MAX_DEADLINE_SECS, else
-- "cannot be read"), never its score. ms_arg, deadline_arg and ttl_secs_arg
-- are the range checks every script runs on its numeric ARGV through
-- need() before its first write; with them every expiry computed here is a
-- whole number below 2^53 ms, which PX, PXAT, PEXPIREAT and ZADD accept, so no
-- write after the first can fail on a number;
-- index_score writes a ms value as the seconds text that Redis reads back
-- to the double ms / 1000, which score_ms turns back into the same ms.
-- PLACEHOLDER is a constant only claim.lua writes, and removes again in
-- the same script. is_foreign tells a Go processor's bare owner token from
-- our packed entry; member_score is Go's score formula (pure, on a decoded
-- copy of the member). The helpers that write (note_drop fills a Lua table
-- only; write_any, drop_claims, del_keys and set_markers call
-- Redis) do so only when a script calls
-- them, after its reads and type checks, so defining them writes nothing.

-- A field and member no claim key can equal, longer than Redis's 64-byte
-- listpack limit (see claim.lua). A claim key is `<id>\0<token>` or `<id>`
-- (Go's format) with no NUL in id or token (refused when parsed), so it
-- holds at most one NUL; this holds two.
local PLACEHOLDER = '~\000\000claim-redis encoding hint: never a claim key, longer than 64 bytes~'

-- Fails the script with a message. Scripts call it only before their first
-- write: a Lua error does not roll back writes already made.
local function need(ok, what)
  if not ok then
    error('claim-redis: ' .. what, 0)
  end
end

-- The store's time in ms: the explicit time when given, else the server's TIME.
local function clock_ms(arg)
  if arg ~= '' then
    return tonumber(arg)
  end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- A score (Unix seconds) as ms: rounded half away from zero, clamped at 0
-- (claim_core::Score::as_millis).
local function score_ms(score)
  local x = tonumber(score) * 1000
  if x ~= x or x <= 0 then
    return 0
  end
  local f = math.floor(x)
  if x - f >= 0.5 then
    f = f + 1
  end
  return f
end

-- The latest deadline a member may carry, 9999-12-31 (claim_core::wire::
-- MAX_DEADLINE_SECS), and the largest ms value a script takes or computes
-- (2^53: every integer below it is exact in a double, and it is far inside
-- what PX/PEXPIREAT accept). A lease or marker expiry computed from a
-- deadline in range stays below 2.6e14 ms.
local MAX_DEADLINE_SECS = 253402300799
local MAX_MS = 9007199254740992

-- An ARGV value that is a whole number of ms (or seconds) in 0..2^53; nil
-- for anything else (not a number, a fraction, negative, huge, inf, nan).
-- Scripts check every numeric argument with it, through need(), before
-- their first write.
local function ms_arg(text)
  local x = tonumber(text)
  if x and x == math.floor(x) and x >= 0 and x <= MAX_MS then
    return x
  end
  return nil
end

-- An ARGV TTL in seconds that a member chose (result_ttl_seconds): a whole
-- non-negative number, inf included, clamped to MAX_DEADLINE_SECS (an
-- EXPIRE that long is still valid); nil for nan, fractions and negatives.
local function ttl_secs_arg(text)
  local x = tonumber(text)
  if x and x == math.floor(x) and x >= 0 then
    return math.min(x, MAX_DEADLINE_SECS)
  end
  return nil
end

-- An ARGV deadline, Unix seconds: a whole number in 0..MAX_DEADLINE_SECS,
-- 0 meaning "cannot be read" (claim_core::wire::member_deadline gave
-- None); nil for anything else.
local function deadline_arg(text)
  local d = ms_arg(text)
  if d and d <= MAX_DEADLINE_SECS then
    return d
  end
  return nil
end

-- A member's data.deadline as claim_core::wire::member_deadline reads it:
-- any JSON number, floored, in 1..MAX_DEADLINE_SECS; 0 when the member is
-- not JSON, has no data object, or its deadline is missing, not a number
-- or out of range. Only for scripts that hold the member and not a
-- deadline from the caller (renew, reclaim, repair_index): a cjson decode.
local function member_deadline(member)
  local ok, env = pcall(cjson.decode, member)
  if not ok or type(env) ~= 'table' or type(env.data) ~= 'table' then
    return 0
  end
  local d = env.data.deadline
  if type(d) ~= 'number' or d ~= d then
    return 0
  end
  d = math.floor(d)
  if d < 1 or d > MAX_DEADLINE_SECS then
    return 0
  end
  return d
end

-- min(now + ttl, deadline + 30 s), the deadline being the member's
-- data.deadline in seconds (never its pending score), 0 when it cannot be
-- read: then now + ttl (claim_core::lease::lease_expiry).
local function lease_expiry(now, ttl, deadline)
  if deadline < 1 then
    return now + ttl
  end
  return math.min(now + ttl, deadline * 1000 + 30000)
end

-- The expiry of a terminal marker written at now where no other copy of
-- the generation is left (the holder's own ack, the reclaimer's
-- delivery-limit record): the dedup TTL past now
-- (claim_core::lease::marker_expiry).
local function marker_expiry(now, ttl)
  return now + ttl
end

-- The expiry of a terminal marker written at now while another claim of
-- the generation may still end in an ack, a renewal or a lapse (a stale
-- owner answered beside the holder; the cross-slot push before its claim
-- drop): the dedup TTL past the later of now and deadline + 30 s; past now
-- when the deadline cannot be read
-- (claim_core::lease::marker_expiry_beside_a_claim).
local function marker_expiry_beside_a_claim(now, ttl, deadline)
  if deadline < 1 then
    return now + ttl
  end
  return math.max(now, deadline * 1000 + 30000) + ttl
end

-- A terminal marker holds `<expiry ms>:<record digest>` (or, written by an
-- older version, the bare expiry): live while the expiry is after now.
local function is_live(marker, now)
  if not marker then
    return false
  end
  local expiry = tonumber(string.match(marker, '^(%d+)'))
  return expiry == nil or expiry > now
end

-- The digest of the record that wrote a marker (nil for a bare expiry).
local function marker_digest(marker)
  return marker and string.match(marker, ':(%x+)$')
end

-- Explicit-time mode records the expiry of producer keys in a side hash:
-- a key without an entry there lives as long as Redis keeps it.
local function side_live(expiry, now)
  return not expiry or tonumber(expiry) > now
end

-- A claim-owners entry `owner|score|redeliveries` (the owner may itself
-- contain `|`); nil when absent or malformed, and for a Go processor's bare
-- owner token, so no owner check of ours ever matches a Go claim.
local function unpack_owner(entry)
  if not entry then
    return nil
  end
  local owner, score, n = string.match(entry, '^(.*)|([^|]+)|(%d+)$')
  local number = tonumber(score)
  if not owner or not number or number ~= number then
    return nil
  end
  return owner, score, tonumber(n)
end

-- True when a claim-owners entry is `<owner>|<score>|<count>` for the
-- owner whose `bar` is `<owner>|` and `rest` is #owner + 2 (computed once
-- per call by the script): a prefix match plus a shape check of the rest,
-- so an owner token that is a prefix of another never matches it.
local function held_by(entry, bar, rest)
  return entry and string.find(entry, bar, 1, true) == 1
    and string.find(entry, '^[^|]+|%d+$', rest) ~= nil
end

-- True for a claim-owners entry written by a Go processor: a bare owner
-- token (16 hex), never packed, so it holds no `|` (ours holds two).
local function is_foreign(entry)
  return entry and not string.find(entry, '|', 1, true)
end

-- Go's pending score of a member, as ZADD text: deadline +
-- min(enqueue_seq, 2^21 - 1) / 2^21 (the bare deadline when the sequence is
-- missing, 0 or negative), written with 17 significant digits so Redis
-- reads back the exact double; '0' for a member Go could not read (not
-- JSON, no `data`, a deadline that is not a number), as Go's reclaimer does.
local function member_score(member)
  local ok, env = pcall(cjson.decode, member)
  if not ok or type(env) ~= 'table' or type(env.data) ~= 'table'
    or type(env.data.deadline) ~= 'number' then
    return '0'
  end
  local score = env.data.deadline
  local seq = type(env.internal) == 'table' and env.internal.enqueue_seq
  if type(seq) == 'number' and seq > 0 then
    score = score + math.min(seq, 2097151) / 2097152
  end
  return string.format('%.17g', score)
end

-- An integral ms value as decimal digits (tostring would use %.14g).
local function ms_string(ms)
  return string.format('%.0f', ms)
end

-- A lease expiry in ms as a claims-index score: Unix seconds with ms
-- precision, as text (Redis reads it back to the double ms / 1000).
local function index_score(ms)
  return string.format('%.3f', ms / 1000)
end

-- Appends the values to a flat array.
local function push(t, ...)
  local n = #t
  for i = 1, select('#', ...) do
    t[n + i] = select(i, ...)
  end
end


-- Notes claim `gen`, whose redelivery count is `r`, for drop_claims.
local function note_drop(drops, counts, gen, r)
  drops[#drops + 1] = gen
  if r > 0 then
    push(counts, gen, r)
  end
end

-- Ends an owner's claim of an answered generation (release, retry
-- parking): the claim `gen` joins `drops`, nothing goes back, and
-- `payload_key` (the generation's own, when the plain layout passed it)
-- joins `unpayload`. Returns the item's code: 3, ended as answered.
local function drop_answered(drops, unpayload, gen, payload_key)
  drops[#drops + 1] = gen
  if payload_key then
    unpayload[#unpayload + 1] = payload_key
  end
  return 3
end

-- Runs the variadic write `cmd key values...` if there are any values
-- (Redis refuses the command with none).
local function write_any(cmd, key, values)
  if #values > 0 then
    redis.call(cmd, key, unpack(values))
  end
end

-- Drops the claims `drops` from the claimed hash, the owners hash and the
-- claims index, and keeps each one's redelivery count `counts` (gen, n
-- pairs) in the deliveries hash for its next claim.
local function drop_claims(claimed, owners, index, deliveries, drops, counts)
  redis.call('HDEL', claimed, unpack(drops))
  redis.call('HDEL', owners, unpack(drops))
  redis.call('ZREM', index, unpack(drops))
  write_any('HSET', deliveries, counts)
end

-- Deletes the producer keys `dels` and, in explicit-time mode, their
-- entries in the side hash `side`.
local function del_keys(dels, side, explicit)
  if #dels > 0 then
    redis.call('DEL', unpack(dels))
    if explicit then
      redis.call('HDEL', side, unpack(dels))
    end
  end
end

-- Type checks before the first write: HLEN fails (WRONGTYPE) on a key that
-- is not a hash, ZCARD on one that is not a sorted set; a missing key
-- passes. `hashes` and `zsets` list the keys a call will write; a `false`
-- entry (a key this call leaves alone) is skipped.
local function check_types(hashes, zsets)
  for i = 1, #hashes do
    if hashes[i] then
      redis.call('HLEN', hashes[i])
    end
  end
  for i = 1, #zsets do
    if zsets[i] then
      redis.call('ZCARD', zsets[i])
    end
  end
end

-- Sets each terminal marker markers[m] to values[m] (`<expiry ms>` or
-- `<expiry ms>:<digest>`), expiring at expiries[m], that expiry as ms
-- digits: the same string the value begins with (made once per answered
-- item by the caller, ms_string). `clock` is the time argument the script
-- gave clock_ms. When it is '' (now is the server's TIME, read in this
-- very script) the expiry is the SET's PXAT as is: Redis drops the key at
-- the moment its value stops being live, and propagates the command
-- without rewriting a relative PX into an absolute one. Any other time
-- (an explicit logical clock, or a TIME the caller read before the call,
-- possibly on another server) counts relative to now, as PX, plus `slack`
-- ms: Redis expires on its own clock, which an absolute time from
-- elsewhere could place in the past, and a marker must never vanish early.
local function set_markers(markers, values, expiries, clock, now, slack)
  for m = 1, #markers do
    if clock == '' then
      -- A whole number >= now (the caller range-checked the dedup TTL and
      -- computed the expiry from a deadline in range): PXAT accepts it,
      -- and one at or before the script's start only makes the key expire
      -- at once (a zero dedup TTL: its value is not live then either), so
      -- the SET cannot fail after the push.
      redis.call('SET', markers[m], values[m], 'PXAT', expiries[m])
    else
      -- At least 1 ms: PX 0 (a zero dedup TTL) would fail the SET after
      -- the push. The caller range-checked now, ttl and slack, so the
      -- value is a valid PX.
      local px = math.max(1, tonumber(expiries[m]) - now + slack)
      redis.call('SET', markers[m], values[m], 'PX', ms_string(px))
    end
  end
end
