-- node_get.lua: the string values of per-request keys that lie on one
-- cluster node, in many slots, in one call (the reads of
-- ops/cluster/node_keys.rs). scripts.rs puts the Redis 7 shebang
-- `#!lua flags=allow-cross-slot-keys,no-writes` in front (then lib.lua;
-- no-writes: a node refusing writes still serves reads): the one
-- documented exception to "a script declares every key it touches"
-- (docs/ARCHITECTURE.md, key rules).
--
-- KEYS[1] the routing key, which the cluster sends the call by: the first
--   key of ARGV (checked). No other key is declared: a cluster refuses
--   declared keys of two slots (CROSSSLOT).
-- ARGV[1] the store's key prefix
-- ARGV[2] '1' when the type of a key that holds no string is wanted
-- ARGV[3..] groups, each the number of its keys m, then m keys of one slot
-- Returns, per key in ARGV order, two entries, a code and a value: 0 and
-- the string (false when missing or, unless ARGV[2] is '1', of another
-- type); 1 and the name of the key's type (it holds no string); 2 and
-- false: refused here (not served by this node: a stale slot map, a slot
-- migrating, a failover), to be read per slot by the caller.
--
-- Correctness: every key must be a per-request key of this store, its
-- prefix then `request-active:`, `request-cancel:`, `request-payload:` or
-- `result-terminal:` and at least one byte more; anything else fails the
-- whole call before the first read (the Rust side sends only such keys,
-- this is the second check), so the exception reaches no queue, list or
-- other tenant's key. The script only reads. Each command names keys of
-- one slot (a group), which a cluster node runs when it serves that slot;
-- a group it does not serve fails that command alone (redis.pcall), and
-- its keys come back as refused: the caller reads them the per-slot way,
-- so a stale slot map costs a call, never a value. The values are read as
-- the per-slot MGETs read them, at one moment per node instead of per
-- slot; callers already take them as not atomic with their script.

local SHAPES = { 'request-active:', 'request-cancel:', 'request-payload:', 'result-terminal:' }
local prefix, kinds = ARGV[1], ARGV[2] == '1'
need(#KEYS == 1 and #ARGV >= 4 and KEYS[1] == ARGV[4], 'node_get: KEYS[1] must be the first key')

local groups, at = {}, 3
while at <= #ARGV do
  local m = tonumber(ARGV[at])
  need(m and m >= 1 and at + m <= #ARGV, 'node_get: a group is a count and that many keys')
  local keys = {}
  for j = 1, m do
    local key = ARGV[at + j]
    local ok = false
    for _, shape in ipairs(SHAPES) do
      local head = prefix .. shape
      if #key > #head and string.sub(key, 1, #head) == head then
        ok = true
      end
    end
    need(ok, 'node_get: not a per-request key of this store: ' .. key)
    keys[j] = key
  end
  groups[#groups + 1] = keys
  at = at + m + 1
end

local out = {}
local function answer(code, value)
  out[#out + 1] = code
  out[#out + 1] = value
end
for _, keys in ipairs(groups) do
  local got = redis.pcall(#keys == 1 and 'GET' or 'MGET', unpack(keys))
  if type(got) == 'table' and got.err then
    if #keys == 1 and string.sub(got.err, 1, 9) == 'WRONGTYPE' then
      answer(kinds and 1 or 0, kinds and redis.call('TYPE', keys[1]).ok or false)
    else
      for _ = 1, #keys do
        answer(2, false)
      end
    end
  else
    if #keys == 1 then
      got = { got }
    end
    local missing = {}
    for j = 1, #keys do
      if not got[j] then
        missing[#missing + 1] = keys[j]
      end
    end
    -- MGET reads a key of another type as missing: EXISTS tells them
    -- apart, TYPE names the type (both only when some key is another type).
    local others = kinds and #keys > 1 and #missing > 0 and redis.call('EXISTS', unpack(missing)) > 0
    for j = 1, #keys do
      local kind = others and not got[j] and redis.call('TYPE', keys[j]).ok
      if kind and kind ~= 'none' then
        answer(1, kind)
      else
        answer(0, got[j])
      end
    end
  end
end
return out
