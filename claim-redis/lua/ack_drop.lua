-- ack_drop.lua: the last step of an ack whose result list lies in another
-- slot than the queue (hash-tagged layout), after push_once.lua ran in the
-- list's slot: drops the caller's claims, takes pending copies with their
-- delivery counts, dead-letters items whose list cannot take a record.
--
-- KEYS[1] pending zset   KEYS[2] <queue>:claimed hash
-- KEYS[3] <queue>:claim-owners hash   KEYS[4] <queue>:claims-idx zset
-- KEYS[5] <queue>:deliveries hash   KEYS[6] <queue>:dead hash
-- KEYS[6+i] (i = 1..n) item i's terminal marker in the queue's slot
-- ARGV[1] owner token   ARGV[2] now in ms, or "" for the server's TIME
-- ARGV[3] slack added to the markers' PX (explicit-time mode), in ms
-- ARGV[4] result dedup TTL in ms
-- then per item i, at b = 4 + 5(i-1): ARGV[b+1] claim key, ARGV[b+2] the
-- member as claimed, ARGV[b+3] why its list cannot take a record ('' when
-- it can: push_once answered anything but "unusable"), ARGV[b+4] the live
-- marker push_once answered in the list's slot ('' when none, or when its
-- push is not yet on replica_acks replicas), ARGV[b+5] '1' when the
-- generation is answered for this ack (push_once answered 1, 2 or 3, or
-- the fence found the queue-slot marker live; with replica_acks > 0, a
-- record this ack pushed only once a WAIT saw it replicated), else '0'
-- Returns one integer per item: 2 if the caller's claim was dropped, plus 4
-- if it was dead-lettered, plus 16 if its payload key (if any) goes (the
-- caller deletes it): ack.lua's bits.
--
-- Correctness: this is ack.lua after its push, item by item, with the
-- claims as they are now. A claim or pending copy is taken only when the
-- generation is answered (ARGV[b+5], or a live queue-slot marker now): the
-- fence ran earlier, so a copy found here may be one another reclaimer
-- returned after a fence that said "not ours" (nothing pushed): taking it
-- then would lose the request, so it stays, as does a claim the caller
-- took again since. Only the caller's own claim is dropped (its owner
-- entry `<caller>|<score>|<count>`); a pending copy of the member (the
-- reclaimer's, while a stale owner worked) is removed with its delivery
-- count, since the generation is answered (or dead-lettered); an unusable
-- list dead-letters the member only for the claim's holder (anyone else
-- is stale and the generation is elsewhere: nothing is changed, as ack.lua
-- and the model defer), with no marker, so a redrive after the fix gets
-- its record. The payload goes where ack.lua deletes it: the owner ended
-- the generation, or the last copy was taken while nobody holds a claim;
-- never for a dead-lettered member. The list-slot marker is copied (same
-- value, same expiry) into the queue's slot unless a live one is there:
-- claim, reclaim and promotion read it in their own slot, and
-- ack_fence.lua stops a late ack to another list with it. A list-slot
-- marker written for the caller's own claim lives only the dedup TTL
-- (claim_core::lease::marker_expiry: this script drops that claim, the only
-- copy); if the claim is held by another owner now (the caller's lease
-- lapsed between its fence and its push, and someone claimed it again),
-- that holder may still ack or lapse, so the copy lives as long as its
-- claim can: marker_expiry_beside_a_claim from the member's deadline, the
-- later of the two expiries, with the marker's digest. A push not yet
-- replicated is neither answered nor copied: its claim stays and lapses,
-- and the reclaimer finds the list-slot marker (answered: dropped) or, if
-- a failover lost record and marker, redelivers it.
-- Crash window: if the caller dies after the push and before this script,
-- the claim stays until its lease lapses; the reclaimer puts it back, the
-- next holder's record meets the live marker in the list's slot
-- (push_once.lua: suppressed) and that ack drops the claim: still exactly
-- one record. Reads and type checks precede the first write.
-- Safe to run twice: a second run finds the claims dropped, the copies
-- taken and the queue-slot markers live, so it changes nothing (and
-- writes no dead entry again).

need(#ARGV >= 9 and (#ARGV - 4) % 5 == 0 and #KEYS == 6 + (#ARGV - 4) / 5,
  'ack_drop: expects 6 + n KEYS and 4 + 5n ARGV')
local n = (#ARGV - 4) / 5
local owner, slack, ttl = ARGV[1], ms_arg(ARGV[3]), ms_arg(ARGV[4])
need(slack and ttl and ttl + slack <= MAX_MS and (ARGV[2] == '' or ms_arg(ARGV[2])),
  'ack_drop: time, slack and dedup TTL must be whole numbers in range')
local gens, members = {}, {}
for i = 1, n do
  local b = 4 + 5 * (i - 1)
  gens[i] = ARGV[b + 1]
  members[i] = ARGV[b + 2]
  need(ARGV[b + 5] == '0' or ARGV[b + 5] == '1', 'ack_drop: answered flags must be 0 or 1')
end
local owners = redis.call('HMGET', KEYS[3], unpack(gens))
local copies = redis.call('ZMSCORE', KEYS[1], unpack(members))
local queue_markers = redis.call('MGET', unpack(KEYS, 7, 6 + n))
local now = clock_ms(ARGV[2])
local at = ',"at_ms":' .. ms_string(now) .. '}'

local bar, rest = owner .. '|', #owner + 2
local out = {}
local dropped, removed, copied, copies_of = {}, {}, {}, {}
local drops, dead, zrem, forget = {}, {}, {}, {}
for i = 1, n do
  local b = 4 + 5 * (i - 1)
  local gen, member, reason = gens[i], members[i], ARGV[b + 3]
  local marker = ARGV[b + 4]
  local answered = ARGV[b + 5] == '1' or is_live(queue_markers[i], now)
  local key = KEYS[6 + i]
  local entry = owners[i]
  local callers = held_by(entry, bar, rest)
  if marker ~= '' and not copied[key] and not is_live(queue_markers[i], now) then
    local expiry = tonumber(string.match(marker, '^(%d+)'))
    if expiry and expiry > now then
      if entry and not callers then
        local guard = marker_expiry_beside_a_claim(now, ttl, member_deadline(member))
        if guard > expiry then
          expiry = guard
          local digest = marker_digest(marker)
          marker = digest and (ms_string(expiry) .. ':' .. digest) or ms_string(expiry)
        end
      end
      copied[key] = true
      push(copies_of, key, marker, expiry)
    end
  end
  local held = entry and not dropped[gen] and callers
  local unheld = not entry or dropped[gen]
  local burying = reason ~= '' and held
  -- What this ack may end: an answered generation, or one it dead-letters.
  local ends = answered or burying
  local code, gone = 0, false
  if burying then
    code = 4
    push(dead, member, '{"reason":' .. cjson.encode(reason) .. at)
  end
  if copies[i] and not removed[member] and ends then
    removed[member] = true
    zrem[#zrem + 1] = member
    forget[#forget + 1] = gen
    gone = code ~= 4 and unheld
  end
  if held and ends then
    dropped[gen] = true
    drops[#drops + 1] = gen
    gone = code ~= 4
    code = code + 2
  end
  if gone then
    code = code + 16
  end
  out[i] = code
end

check_types({ #drops > 0 and KEYS[2], #forget > 0 and KEYS[5], #dead > 0 and KEYS[6] },
  { #drops > 0 and KEYS[4] })
write_any('ZREM', KEYS[1], zrem)
write_any('HDEL', KEYS[5], forget)
write_any('HSET', KEYS[6], dead)
if #drops > 0 then
  drop_claims(KEYS[2], KEYS[3], KEYS[4], KEYS[5], drops, {})
end
for m = 1, #copies_of, 3 do
  redis.call('SET', copies_of[m], copies_of[m + 1], 'PX', ms_string(copies_of[m + 2] - now + slack))
end
return out
