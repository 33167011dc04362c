-- requires: call_state, span, window
-- read_span: a window read over only its newest slots (a span chosen at read time), summed from the
-- slot hashes themselves: exact, and no temporary key. The sum costs one step per slot field, so a
-- span holding more than `max fields` refuses before summing (SPAN_TOO_COSTLY: declare a window).
-- Expires nothing: every slot of a span lies inside the window's period.
-- KEYS: 3
-- KEYS[1]        board config hash (holds the config version)
-- KEYS[2]        the window's slots index zset (its slot hashes are siblings: window_lib)
-- KEYS[3]        the window's results zset (unused: the span is summed from the slots)
-- ARGV[1]        config version the caller built its keys from
-- ARGV[2]        now, unix milliseconds
-- ARGV[3]        expiry budget (unused)
-- ARGV[4] .. ARGV[6]: the window's period and interval (s) and origin (window_lib; spans read rolling windows only: 0)
-- ARGV[7]        span, seconds (a multiple of the interval, at most the period)
-- ARGV[8]        most slot fields this call may sum
-- ARGV[9]        'head' (ARGV[10] offset, ARGV[11] count): a page of the span's listing
--                'count' (ARGV[10] item, ARGV[11] score): the item's score here and how many score above
--                `score` (the item's own score when ARGV[11] is '')
--                'near' (ARGV[10] item, ARGV[11] score or '', ARGV[12] radius): the rows just before and
--                just after the place of (score, item) in board order
-- Reply: { 1, fields summed, items listed (score > 0), then per mode:
--          head:  items scoring above the first row, item_1, score_1, ...
--          count: the item's score (0: absent), items scoring above the score asked
--          near:  the score of the pivot, items before the place, items scoring above it, items
--                 scoring above the first row before it, rows before, then (item, score) pairs: the
--                 rows before in board order, then the rows after }
--        or { 0, fields the span holds } when it holds more than ARGV[8]
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function read_span(keys, args)
  call_state.begin_call(keys, args)
  local err = window.version_error(KEYS[1], ARGV[1])
  if err then return redis.error_reply(err) end
  local sums, fields = span.span_sums(KEYS[2], math.floor(tonumber(ARGV[2]) / 1000), tonumber(ARGV[5]), tonumber(ARGV[7]), tonumber(ARGV[8]))
  if not sums then return { 0, fields } end
  local reply = { 1, fields, 0 }
  local mode = ARGV[9]
  if mode == 'head' then return span.span_head(reply, sums, tonumber(ARGV[10]), tonumber(ARGV[11])) end
  local score = ARGV[11] == '' and (sums[ARGV[10]] or 0) or tonumber(ARGV[11])
  if mode == 'count' then return span.span_count(reply, sums, ARGV[10], score) end
  return span.span_near(reply, sums, { item = ARGV[10], score = score }, tonumber(ARGV[12]))
end
