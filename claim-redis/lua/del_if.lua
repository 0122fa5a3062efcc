-- del_if.lua: deletes one key, only if it holds the expected value: the
-- producer keys (request-active:<id>, request-cancel:<id>) and payload keys
-- after a hash-tagged ack, one key (and its slot's side hash) per call.
--
-- KEYS[1] the key   KEYS[2] the explicit-time side hash of KEYS[1]'s slot
-- ARGV[1] the value the key must hold ('' deletes whatever it holds)
-- ARGV[2] '1' in explicit-time mode (the key's side-hash entry goes too)
-- Returns 1 if the key was deleted, else 0.
--
-- Correctness: compare and delete are one atomic step, so a producer that
-- resubmitted the id meanwhile (a new token) keeps its key: only this
-- generation's token is ever deleted, as ack.lua does inline. MGET reads
-- a key of another type as nil, so such a key is left alone; the side
-- hash is type-checked before the first write. Safe to run twice: the
-- second run finds the key gone (or another value) and does nothing.

need(#KEYS == 2 and #ARGV == 2, 'del_if: expects 2 KEYS and 2 ARGV')
if ARGV[1] ~= '' and redis.call('MGET', KEYS[1])[1] ~= ARGV[1] then
  return 0
end
local explicit = ARGV[2] == '1'
if explicit then
  check_types({ KEYS[2] }, {})
end
local gone = redis.call('DEL', KEYS[1])
if explicit then
  redis.call('HDEL', KEYS[2], KEYS[1])
end
return gone
