-- requires: board_write, call_state, reader, segment_list
-- segment_page: one page of a shard's live segments (segment_list_lib's segment_rows), each drained first
-- where due, the page's work bounded by its units.
-- Keys: cfg (board config hash: holds the config version), then each window's (slots, top) pair (the
--   board's: the segments' keys are derived from them)
-- Args (reader.read_call, CALLS.segment_page): the header with every window, then after (list the
--   segments after this name; "" from the first), limit (most segments to list), units (most units of
--   work: segment_rows: a name looked at 1, a window counted 1, drained 5)
-- Reply (reader.answer, CALLS.segment_page): draining (0|1), ended (0|1), last (name looked at, "":
--   none), rows { name_1, items_1_1 .. items_1_W, ..., name_n, items_n_1 .. items_n_W } in byte order
--   of name, items per window; ended 1: no name follows the last looked at; draining 1: the page
--   stopped before a segment still holding expired data (the budget spent), to be asked again after
--   the last name looked at
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function segment_page(keys, args)
  local refused, header, arg = board_write.begin_board_call(keys, args, CALLS.segment_page)
  if refused then return refused end
  local page = segment_list.segment_rows(call_state.bind_windows(2, #header.windows), header.now_ms, arg.after, tonumber(arg.limit), header.budget,
    tonumber(arg.units))
  return reader.answer(CALLS.segment_page, { draining = page.draining, ended = page.ended, last = page.last, rows = page.rows })
end
