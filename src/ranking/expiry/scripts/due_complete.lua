-- requires: call_state, reader
-- due_complete: ends the claims of visited boards (due_claim) and puts each back into the due index at
-- its next due time. ZADD LT keeps an earlier time a write entered meanwhile (a new slot that became
-- its shard's earliest while the board was claimed), so completing never delays a due board.
-- Keys: due (the due index zset: board name -> next due time, unix ms), leases (zset: board name ->
--       when (unix ms) the claim on it lapses)
-- Args (reader.read_call, CALLS.due_complete): the header (no config version, now 0: it reads no clock,
--   no windows), then
--   lease_end_ms  when the claim being completed lapses, as due_claim set it: a lease with another time
--                 is another instance's later claim (this one lapsed), and stays
--   visited       JSON array of [board name, next due time (unix ms; 0: nothing left to expire, the
--                 board leaves the index until a write creates a slot)]
-- Reply (reader.answer, CALLS.due_complete): completed (the number of boards completed)
local function due_complete(keys, args)
  local due_key, leases_key = keys[1], keys[2]
  local header, arg = call_state.begin_named_call(keys, args, CALLS.due_complete)
  local lease_end = tonumber(arg.lease_end_ms)
  local visited = cjson.decode(arg.visited)
  for _, board in ipairs(visited) do
    local name, next_ms = board[1], board[2]
    if tonumber(redis.call('ZSCORE', leases_key, name)) == lease_end then redis.call('ZREM', leases_key, name) end
    if next_ms > 0 then redis.call('ZADD', due_key, 'LT', next_ms, name) end
  end
  return reader.answer(CALLS.due_complete, { completed = #visited })
end
