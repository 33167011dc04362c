-- requires: call_state, group_of, reader
-- group_board_drop: a deleted group board's part under its member board's tag (group_of_lib): takes it
-- out of the member board's groupedBy, so member writes stop keeping its groups, then unlinks its
-- memberships, groups and scores, at most about `budget_keys` group zsets a call. Safe to repeat (a
-- drop resumed after a restart, two instances at once); run by the group board's drop before its
-- renamed config goes (BoardDrops), which names the member board and window (groupOf).
-- Keys: cfg (the member board's config hash; it may be gone: its own drop then takes what is left)
-- Args (reader.read_call, CALLS.group_board_drop): the header (no config version, now 0, no windows), then
--   board        the group board
--   window       the member board's window it ranks
--   budget_keys  most group zsets to unlink in this call
-- Reply (reader.answer, CALLS.group_board_drop): done (1: nothing of the group board is left), unlinked (keys)
local function group_board_drop(keys, args)
  local cfg_key = keys[1]
  local _, arg = call_state.begin_named_call(keys, args, CALLS.group_board_drop)
  local budget = tonumber(arg.budget_keys)
  group_of.GROUP_OF.detach(cfg_key, arg.window, arg.board)
  local left, done = group_of.GROUP_OF.drop_keys(cfg_key, arg.window, arg.board, budget)
  return reader.answer(CALLS.group_board_drop, { done = done and 1 or 0, unlinked = budget - left })
end
