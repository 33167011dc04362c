-- requires: call_state, prune, reader
-- prune_step: one bounded step of what a reset left the options to prune on a shard (prune_lib): the
-- entries of items no window holds any more, about `entries` of them a call, so a reset of a shard of
-- many items is many short calls rather than one long one. Safe to repeat, to run on two instances at
-- once and to resume after a restart: the cursors are in the config hash.
-- Keys: cfg (board config hash)
-- Args (reader.read_call, CALLS.prune_step): the header (no config version, now, no windows), then
--   entries: about how many entries the step walks (the options bound each scan below it)
-- Reply (reader.answer, CALLS.prune_step): done (1: nothing left to prune on the shard)
local function prune_step(keys, args)
  local cfg_key = keys[1]
  local _, arg = call_state.begin_named_call(keys, args, CALLS.prune_step)
  local done = prune.step(cfg_key, tonumber(arg.entries))
  return reader.answer(CALLS.prune_step, { done = done and 1 or 0 })
end
