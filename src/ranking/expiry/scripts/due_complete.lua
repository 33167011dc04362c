-- requires: call_state
-- due_complete: ends the claims of visited boards (due_claim) and puts each back into the due index at
-- its next due time. ZADD LT keeps an earlier time a write entered meanwhile (a new slot that became
-- its shard's earliest while the board was claimed), so completing never delays a due board.
-- KEYS: 2
-- KEYS[1]        due index zset: board name -> next due time (unix ms)
-- KEYS[2]        leases zset: board name -> when (unix ms) the claim on it lapses
-- ARGV[1]        when (unix ms) the claim being completed lapses, as due_claim set it: a lease with
--                another time is another instance's later claim (this one lapsed), and stays
-- ARGV[2 + 2i], ARGV[3 + 2i] (i = 0..): a board name and its next due time (unix ms; 0: nothing left
--                to expire, the board leaves the index until a write creates a slot)
-- Reply: the number of boards completed
local function due_complete(keys, args)
  call_state.begin_call(keys, args)
  local lease_end = ARGV[1]
  for i = 2, #ARGV, 2 do
    local name, next_ms = ARGV[i], tonumber(ARGV[i + 1])
    if tonumber(redis.call('ZSCORE', KEYS[2], name)) == tonumber(lease_end) then redis.call('ZREM', KEYS[2], name) end
    if next_ms > 0 then redis.call('ZADD', KEYS[1], 'LT', next_ms, name) end
  end
  return (#ARGV - 1) / 2
end
