-- lib.lua: helpers prepended to every claim-redis script; never run alone.
--
-- KEYS: none.  ARGV: none.  Returns: nothing; defines the locals below.
--
-- Correctness: every helper is a pure function of its arguments (clock_ms
-- may read TIME, which writes nothing), so prepending them changes no
-- script's effects. score_ms, lease_expiry and is_live mirror claim-core's
-- Score::as_millis, lease::lease_expiry and the model's marker liveness,
-- so the scripts compute the same numbers as the reference model;
-- index_score writes a ms value as the seconds text that Redis reads back
-- to the double ms / 1000, which score_ms turns back into the same ms.
-- PLACEHOLDER is a constant only claim.lua writes, and removes again in
-- the same script. is_foreign tells a Go processor's bare owner token from
-- our packed entry; member_score is Go's score formula (pure, on a decoded
-- copy of the member). The helpers that write (note_drop fills a Lua table
-- only; write_any, drop_claims, del_keys and finish_generations call
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

-- min(now + ttl, deadline + 30 s), the deadline being the pending score
-- (claim_core::lease::lease_expiry).
local function lease_expiry(now, ttl, score)
  return math.min(now + ttl, score_ms(score) + 30000)
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

-- The writes that finish generations: each terminal marker markers[m] set
-- to values[m] (`<expiry ms>` or `<expiry ms>:<digest>`), which Redis keeps
-- `slack` ms past expiries[m], that expiry as a number (passed beside the
-- value, not parsed back out of it: this runs once per acked item); then
-- the producer keys `dels` deleted (del_keys).
local function finish_generations(markers, values, expiries, dels, side, explicit, now, slack)
  for m = 1, #markers do
    redis.call('SET', markers[m], values[m], 'PX', ms_string(expiries[m] - now + slack))
  end
  del_keys(dels, side, explicit)
end
