-- requires: board_write, order, reader, span
-- read_span: a window read over only its newest slots (a span chosen at read time), summed from the
-- slot hashes themselves: exact, and no temporary key. The sum costs one step per slot field, so a
-- span holding more than `max fields` refuses before summing (SPAN_TOO_COSTLY: declare a window).
-- Expires nothing: every slot of a span lies inside the window's period. A span lists what its window
-- lists: its board's exceptions (moderation's hidden items, or on a review board all but the allowed
-- ones) are left out of every page, count and rank (span_shown).
-- Keys: cfg (board config hash: holds the config version), slots (the window's slots index zset; its
--       slot hashes are siblings: window_lib), top (the window's results zset: names the listing whose
--       exceptions the span leaves out; the span itself is summed from the slots)
-- Args (reader.read_call, CALLS.read_span): the header with the one window (spans read rolling windows
--   only: origin 0; its budget unused), then
--   span_sec     the span (a multiple of the interval, at most the period)
--   most_fields  most slot fields this call may sum
--   mode         'head' (offset, count): a page of the span's listing
--                'count' (item, score): the item's score here and how many score above `score` (the
--                item's own score when score is '')
--                'near' (item, score or '', radius): the rows just before and just after the place of
--                (score, item) in board order
--   item, score, offset, count, radius  as the mode takes them ("" where it takes none)
-- Reply (reader.answer, CALLS.read_span): summed (0 when the span holds more than most_fields: then
--   only fields is set), fields (summed, or that the span holds), listed (items with a score > 0), and
--   per mode (0 or empty where the mode sets none):
--     head:  higher_than_first (items scoring above the first row), rows (item, score pairs)
--     count: score (the item's, listed or not; 0: absent), hidden (1: the item holds a score above 0
--            that the listing leaves out), above (items listed scoring above the score asked)
--     near:  score (of the pivot), position (items before the place), above (items scoring above it),
--            above_first (items scoring above the first row before it), before (rows before), rows
--            ((item, score) pairs: the rows before in board order, then the rows after)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function read_span(keys, args)
  local slots_key, top_key = keys[2], keys[3]
  local refused, header, arg = board_write.begin_board_call(keys, args, CALLS.read_span)
  if refused then return refused end
  local sums, fields = span.span_sums(slots_key, header.now_sec, header.windows[1].interval_sec, tonumber(arg.span_sec),
    tonumber(arg.most_fields))
  local figures = { summed = sums and 1 or 0, fields = fields, listed = 0, higher_than_first = 0, score = 0,
    hidden = 0, position = 0, above = 0, above_first = 0, before = 0, rows = {} }
  if sums then
    local own = sums[arg.item] or 0
    sums = span.span_shown(sums, order.exceptions_asked(top_key))
    local mode = arg.mode
    if mode == 'head' then
      span.span_head(figures, sums, tonumber(arg.offset), tonumber(arg.count))
    else
      local score = arg.score == '' and (sums[arg.item] or 0) or tonumber(arg.score)
      if mode == 'count' then
        span.span_count(figures, sums, arg.item, score)
        -- A left-out item answers its own sum, as a window's read does.
        if arg.item ~= '' and not sums[arg.item] then
          figures.score, figures.hidden = own, own > 0 and 1 or 0
        end
      else
        span.span_near(figures, sums, { item = arg.item, score = score }, tonumber(arg.radius))
      end
    end
  end
  return reader.answer(CALLS.read_span, figures)
end
