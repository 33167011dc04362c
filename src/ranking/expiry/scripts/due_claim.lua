-- requires: call_state, reader
-- due_claim: claims the boards whose due time has come, so that instances share the scheduler's work:
-- each claimed board moves from the due index to the leases, where it stays until the claiming
-- instance completes it (due_complete) or its lease lapses. A lapsed lease (the instance crashed or
-- lost Redis) puts the board back into the index as due now, so another instance visits it.
-- Keys: due (the due index zset: board name -> when (unix ms) one of its shards next has a slot or a
--       like to expire; written by the service with ZADD LT after a write, by due_complete), leases
--       (zset: board name -> when (unix ms) the claim on it lapses)
-- Args (reader.read_call, CALLS.due_claim): the header (no config version, now, no windows), then
--   lease_ms   how long the claims hold
--   most       most boards to claim (and most lapsed leases to return to the index)
--   due_by_ms  only boards due at or before it are claimed (a pass claims what was due when it
--              began, so a board it puts back as due again waits for the next)
-- Reply (reader.answer, CALLS.due_claim): lease_end_ms (when these claims lapse), boards (the names
--   claimed, earliest due first)
local function due_claim(keys, args)
  local due_key, leases_key = keys[1], keys[2]
  local header, arg = call_state.begin_named_call(keys, args, CALLS.due_claim)
  local now_ms, lease_ms = header.now_ms, tonumber(arg.lease_ms)
  local most, due_by = tonumber(arg.most), tonumber(arg.due_by_ms)
  for _, name in ipairs(redis.call('ZRANGE', leases_key, '-inf', now_ms, 'BYSCORE', 'LIMIT', 0, most)) do
    redis.call('ZREM', leases_key, name)
    redis.call('ZADD', due_key, 'LT', now_ms, name)
  end
  local due = redis.call('ZRANGE', due_key, '-inf', due_by, 'BYSCORE', 'LIMIT', 0, most)
  for _, name in ipairs(due) do
    redis.call('ZREM', due_key, name)
    redis.call('ZADD', leases_key, now_ms + lease_ms, name)
  end
  return reader.answer(CALLS.due_claim, { lease_end_ms = now_ms + lease_ms, boards = due })
end
