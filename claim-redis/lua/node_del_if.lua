-- node_del_if.lua: del_if.lua for many keys on one cluster node, in many
-- slots, in one call: producer keys (request-active:<id>,
-- request-cancel:<id>) deleted only where they hold the expected token,
-- payload keys (request-payload:) whatever they hold (the deletes of
-- ops/cluster/node_keys.rs, server time only). scripts.rs puts the Redis 7
-- shebang `#!lua flags=allow-cross-slot-keys` in front (then lib.lua): the
-- one documented exception to "a script declares every key it touches"
-- (docs/ARCHITECTURE.md, key rules).
--
-- KEYS[1] the routing key, which the cluster sends the call by: the first
--   key of ARGV (checked). No other key is declared: a cluster refuses
--   declared keys of two slots (CROSSSLOT).
-- ARGV[1] the store's key prefix
-- ARGV[2..] pairs: a key, then the value it must hold ('' deletes
--   whatever it holds; allowed for payload keys only)
-- Returns, per pair: 1 deleted, 0 left (missing, another value, another
-- type), 2 refused here (not served by this node: a stale slot map, a
-- slot migrating, a failover): the caller deletes it per slot.
--
-- Correctness: every key must be a per-request key of this store, the
-- prefix then `request-active:` or `request-cancel:` with a token to
-- compare, or `request-payload:`, and at least one byte more; anything
-- else fails the whole call before the first command (the Rust side sends
-- only such keys, this is the second check): the exception reaches no
-- queue, list or marker, nor any other tenant's key, and never deletes a
-- producer key without comparing. Compare and delete of one key are one
-- atomic step, as in del_if.lua, so a producer that resubmitted the id (a
-- new token) keeps its key; a key of another type is left alone (GET
-- fails on it) unless nothing is to be compared. Each command names one
-- key, which the node runs only when it serves the key's slot; a key it
-- does not serve fails that command alone (redis.pcall) and comes back as
-- refused, before its delete: the caller sends it the per-slot way
-- (del_if.lua). Safe to run twice, and with a per-slot del_if of the same
-- key before or after it: the later run finds the key gone (or another
-- value) and does nothing.

local PRODUCER = { 'request-active:', 'request-cancel:' }
local PAYLOAD = 'request-payload:'
local prefix = ARGV[1]
need(#KEYS == 1 and #ARGV >= 3 and #ARGV % 2 == 1 and KEYS[1] == ARGV[2],
  'node_del_if: KEYS[1] must be the first key, then pairs')

local function has_shape(key, shape)
  local head = prefix .. shape
  return #key > #head and string.sub(key, 1, #head) == head
end
for i = 2, #ARGV, 2 do
  local key, expected = ARGV[i], ARGV[i + 1]
  local ok = has_shape(key, PAYLOAD)
  for _, shape in ipairs(PRODUCER) do
    ok = ok or (expected ~= '' and has_shape(key, shape))
  end
  need(ok, 'node_del_if: not a per-request key of this store (or no token to compare): ' .. key)
end

local out = {}
for i = 2, #ARGV, 2 do
  local key, expected = ARGV[i], ARGV[i + 1]
  local code = 0
  local now = expected == '' or redis.pcall('GET', key)
  if type(now) == 'table' and now.err then
    code = string.sub(now.err, 1, 9) == 'WRONGTYPE' and 0 or 2
  elseif now == true or now == expected then
    local gone = redis.pcall('DEL', key)
    if type(gone) == 'table' then
      code = 2
    else
      code = gone
    end
  end
  out[#out + 1] = code
end
return out
