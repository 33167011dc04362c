-- requires: order, previous, reader, snapshot, window
-- read_around: an item with up to `radius` neighbours on each side in a window's listing, after expiry.
-- Keys: cfg (the board config hash: holds the config version), slots (the window's slots index zset),
--       top (the window's results zset)
-- Args (reader.read_call, CALLS.read_around): the header with the one window, then item (its id) and
--       radius (neighbours on each side)
-- Reply (reader.answer): read_top's listing fields, first_position -1 (and no rows) when the item is
--       not ranked
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function read_around(keys, args)
  local top_key = keys[3]
  local refused, header, arg, draining, keeps = snapshot.begin_read(keys, args, CALLS.read_around)
  if refused then return refused end
  local item = arg.item
  local reply = { draining = draining, first_position = -1, higher_than_first = 0, previous_ranks = {}, tie_marks = {}, rows = {} }
  local held = redis.call('ZSCORE', top_key, item)
  if not held or not order.listed(top_key, tonumber(held)) then return reader.answer(CALLS.read_around, reply) end
  local position = order.position(top_key, item)
  local radius = tonumber(arg.radius)
  local first = math.max(0, position - radius)
  local page = order.page(top_key, first, position + radius, reply.tie_marks)
  local rows, higher = window.listing_rows(top_key, page, false, order.strict(top_key) and '' or reply.tie_marks[1])
  reply.first_position, reply.higher_than_first, reply.rows = first, higher or 0, rows
  reply.previous_ranks = previous.ranks_of(top_key, keeps, rows)
  return reader.answer(CALLS.read_around, reply)
end
