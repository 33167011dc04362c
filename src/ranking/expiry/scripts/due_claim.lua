-- requires: call_state
-- due_claim: claims the boards whose due time has come, so that instances share the scheduler's work:
-- each claimed board moves from the due index to the leases, where it stays until the claiming
-- instance completes it (due_complete) or its lease lapses. A lapsed lease (the instance crashed or
-- lost Redis) puts the board back into the index as due now, so another instance visits it.
-- KEYS: 2
-- KEYS[1]        due index zset: board name -> when (unix ms) one of its shards next has a slot or a
--                like to expire (written by the service with ZADD LT after a write, by due_complete)
-- KEYS[2]        leases zset: board name -> when (unix ms) the claim on it lapses
-- ARGV[1]        now, unix milliseconds
-- ARGV[2]        lease, milliseconds
-- ARGV[3]        most boards to claim (and most lapsed leases to return to the index)
-- ARGV[4]        due by, unix milliseconds: only boards due at or before it are claimed (a pass claims
--                what was due when it began, so a board it puts back as due again waits for the next)
-- Reply: { when (unix ms) these claims lapse, the names claimed, earliest due first... }
local function due_claim(keys, args)
  call_state.begin_call(keys, args)
  local now_ms = tonumber(ARGV[1])
  local lease_ms = tonumber(ARGV[2])
  local most = tonumber(ARGV[3])
  local due_by = tonumber(ARGV[4])
  for _, name in ipairs(redis.call('ZRANGE', KEYS[2], '-inf', now_ms, 'BYSCORE', 'LIMIT', 0, most)) do
    redis.call('ZREM', KEYS[2], name)
    redis.call('ZADD', KEYS[1], 'LT', now_ms, name)
  end
  local due = redis.call('ZRANGE', KEYS[1], '-inf', due_by, 'BYSCORE', 'LIMIT', 0, most)
  for _, name in ipairs(due) do
    redis.call('ZREM', KEYS[1], name)
    redis.call('ZADD', KEYS[2], now_ms + lease_ms, name)
  end
  table.insert(due, 1, now_ms + lease_ms)
  return due
end
