-- requires: reader, snapshot, tail_read
-- tail_top: one part of one shard's best rows of a window on a `tail` board (src/ranking/options/tail/),
-- each with the most it may have lost to pruned slots, and the shard's hidden mass H (the bound of any
-- item it does not list); after expiry and this call's share of pruning. A call answers ROWS_PER_CALL
-- rows at most (fewer on a window of many pruned slots: tail_read_lib's rows_per_call), and with
-- `looks` above 0 stops before the first row its `looks` filter bits (GETBIT) did not reach (what it
-- learnt stays cached); a row the bits did not reach with `looks` 0 answers H. The caller calls again
-- from `page` and `next` while `more` says so: each row is read, bounded and answered once, from the
-- page as the read's first call read it.
-- Keys: cfg (the board config hash: holds the config version), slots (the window's slots index zset),
--       top (the window's results zset)
-- Args (reader.read_call, CALLS.tail_top): the header with the one window, then limit (rows, >= 1),
--   looks (filter bits the call may read, >= 0), from (the row of `page` to go on from), page (what the
--   last call answered; '' begins a read)
-- Reply (reader.answer, CALLS.tail_top): draining (0|1), hidden (H), more (0|1: the read goes on), page,
--   next (the next call's `page` and `from`), rows (item, score, dropped, ...)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG (also when the page a read began is gone: read again)
local function tail_top(keys, args)
  local slots_key, top_key = keys[2], keys[3]
  local refused, header, arg, draining = snapshot.begin_read(keys, args, CALLS.tail_top)
  if refused then return refused end
  local read = { limit = tonumber(arg.limit), looks = tonumber(arg.looks), from = tonumber(arg.from), page = arg.page }
  local rows, hidden, page, next_row = tail_read.best_rows(slots_key, top_key, read)
  return reader.answer(CALLS.tail_top, {
    draining = draining, hidden = hidden, more = page and 1 or 0, page = page or '', next = next_row, rows = rows,
  })
end
