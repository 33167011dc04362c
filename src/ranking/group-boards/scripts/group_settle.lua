-- requires: group_of, reader, snapshot
-- group_settle: makes a group board's scores exact before it is read: drains the member window's
-- expired slots (each drained member moves in its group, group_of_lib's results_changed), then
-- recomputes dirty groups from their best `top` members, at most `rows` member rows. A read of the
-- group board follows once it answers draining 0.
-- Keys: cfg (the member board's config hash), slots (the member window's slots index zset), top (its
--       results zset)
-- Args (reader.read_call, CALLS.group_settle): the header with the member window, then
--   board      the group board
--   top        members a group's score sums
--   decay      the weight ratio of consecutive members (0 < decay <= 1, as sent)
--   rows       member rows this call may read
-- Reply (reader.answer, CALLS.group_settle):
--   draining   1: expired slots or dirty groups remain (call again), else 0
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function group_settle(keys, args)
  local cfg_key, slots_key = keys[1], keys[2]
  local refused, header, arg, draining = snapshot.begin_read(keys, args, CALLS.group_settle)
  if refused then return refused end
  if draining == 1 then return reader.answer(CALLS.group_settle, { draining = 1 }) end
  local window = string.sub(slots_key, #cfg_key - 2, -7)
  local more = group_of.GROUP_OF.settle(cfg_key, window, arg.board, tonumber(arg.top), arg.decay, tonumber(arg.rows))
  return reader.answer(CALLS.group_settle, { draining = more })
end
