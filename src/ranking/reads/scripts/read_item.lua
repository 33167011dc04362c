-- requires: order, reader, snapshot, window
-- read_item: one item's score and rank in a window plus the number of ranked items, after expiry.
-- Keys: cfg (the board config hash: holds the config version), slots (the window's slots index zset),
--       top (the window's results zset)
-- Args (reader.read_call, CALLS.read_item): the header with the one window, then item (its id)
-- Reply (reader.answer, CALLS.read_item): draining (0|1), score (as a string: a group board's hold
--   fractions, which an integer reply would truncate), rank (0: not ranked; -1: held at a score the
--   window lists, but left out of the listing: moderation, order_lib's left_out), ranked (items
--   listed: order_lib), tie (the item's tie mark on a sharded `ties: first` board; else "")
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function read_item(keys, args)
  local top_key = keys[3]
  local refused, header, arg, draining = snapshot.begin_read(keys, args, CALLS.read_item)
  if refused then return refused end
  local score, rank = window.standing(top_key, arg.item)
  if rank == 0 and order.left_out(top_key, arg.item) then rank = -1 end
  return reader.answer(CALLS.read_item, {
    draining = draining,
    score = string.format('%.17g', score),
    rank = rank,
    ranked = order.listed_count(top_key),
    tie = order.mark_of(top_key, arg.item),
  })
end
