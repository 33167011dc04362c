-- requires: order, previous, reader, snapshot, window
-- read_top: one page of a window's listing, highest score first, after expiring what fell out.
-- Keys: cfg (the board config hash: holds the config version), slots (the window's slots index zset),
--       top (the window's results zset)
-- Args (reader.read_call, CALLS.read_top: READS_FUNCTIONS' contract): the header with the one window,
--       then offset (0-based), limit and previous_ranks (1: answer the rows' previous ranks; 0: none, a
--       sharded board's page, whose board-wide previous ranks the service reads apart)
-- Reply (reader.answer, the listing contract of reads.functions.ts):
--   draining           1: expired data remains (the budget ran out), else 0
--   first_position     position of the first listed (0-based)
--   higher_than_first  items with a higher score than the first listed
--   previous_ranks     { each listed's rank in the latest snapshot (0: absent) }; empty when the window
--                      keeps no snapshots or none were asked
--   tie_marks          { each listed's tie mark (a sharded `ties: first` board; else empty) }
--   rows               { item_1, score_1, ... }: a score as Redis wrote it, or a number (listing_rows);
--                      ties in descending byte order of item id (ZREVRANGE's), on a `ties: first` board
--                      in the strict order (order_lib)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function read_top(keys, args)
  local top_key = keys[3]
  local refused, header, arg, draining, keeps = snapshot.begin_read(keys, args, CALLS.read_top)
  if refused then return refused end
  local offset = tonumber(arg.offset)
  local last = offset + tonumber(arg.limit) - 1
  local marks = {}
  local page = order.page(top_key, offset, last, marks)
  local rows, higher = window.listing_rows(top_key, page, offset == 0, order.strict(top_key) and '' or marks[1])
  return reader.answer(CALLS.read_top, {
    draining = draining,
    first_position = offset,
    higher_than_first = higher or 0,
    previous_ranks = previous.ranks_of(top_key, arg.previous_ranks == '1' and keeps, rows),
    tie_marks = marks,
    rows = rows,
  })
end
