-- requires: call_state, segmentation, window
-- segment_page: one page of a shard's live segments (segment_lib's segment_rows), each drained first
-- where due, the page's work bounded by its units.
-- KEYS: dynamic
-- KEYS[1]        board config hash (holds the config version)
-- KEYS[2w], KEYS[2w+1] (w = 1..W): window w's slots index zset and results zset (the board's: the
--                segments' keys are derived from them)
-- ARGV[1]        config version the caller built its keys from
-- ARGV[2]        now, unix milliseconds
-- ARGV[3]        expiry budget: most expired-slot fields drained by this call
-- ARGV[4]        W, number of windows
-- ARGV[5+4(w-1)] .. ARGV[8+4(w-1)]: window w's period (s), interval (s), creation time (unix ms), origin (window_lib)
-- ARGV[5+4W]     list the segments after this name ("" from the first)
-- ARGV[6+4W]     most segments to list
-- ARGV[7+4W]     most units of work (segment_rows: a name looked at 1, a window counted 1, drained 5)
-- Reply: { draining (0|1), ended (0|1), last name looked at ("": none), name_1, items_1_1 .. items_1_W,
--        ..., name_n, items_n_1 .. items_n_W } in byte order of name, items per window; ended 1: no
--        name follows the last looked at; draining 1: the page stopped before a segment still holding
--        expired data (the budget spent), to be asked again after the last name looked at
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function segment_page(keys, args)
  call_state.begin_call(keys, args)
  local err = window.version_error(KEYS[1], ARGV[1])
  if err then return redis.error_reply(err) end
  local window_count = tonumber(ARGV[4])
  local at = 5 + window.WINDOW_ARGS * window_count
  local after, limit, units = ARGV[at], tonumber(ARGV[at + 1]), tonumber(ARGV[at + 2])
  return segmentation.segment_rows(2, window_count, tonumber(ARGV[2]), after, limit, tonumber(ARGV[3]), units)
end
