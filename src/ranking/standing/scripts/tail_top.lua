-- requires: reader, snapshot, tail
-- tail_top: one shard's best rows of a window on a `tail` board (src/ranking/options/tail/), each with
-- the most it may have lost to pruned slots, and the shard's hidden mass H (the bound of any item it
-- does not list); after expiry and this call's share of pruning. At most `looks` filter bits (GETBIT)
-- a call, plus a cached lookup a row: a row the bits did not reach answers H and `complete` 0, and the
-- caller calls again (what a call learnt stays cached).
-- Keys: cfg (the board config hash: holds the config version), slots (the window's slots index zset),
--       top (the window's results zset)
-- Args (reader.read_call, CALLS.tail_top): the header with the one window, then limit (rows, >= 1),
--   looks (filter bits the call may read, >= 1)
-- Reply (reader.answer, CALLS.tail_top): draining (0|1), hidden (H), complete (0|1: every row's bound
--   reached), rows (item, score, dropped, ...)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function tail_top(keys, args)
  local slots_key, top_key = keys[2], keys[3]
  local refused, header, arg, draining = snapshot.begin_read(keys, args, CALLS.tail_top)
  if refused then return refused end
  local rows, hidden, complete = tail.best_rows(slots_key, top_key, tonumber(arg.limit), tonumber(arg.looks))
  return reader.answer(CALLS.tail_top, { draining = draining, hidden = hidden, complete = complete and 1 or 0, rows = rows })
end
