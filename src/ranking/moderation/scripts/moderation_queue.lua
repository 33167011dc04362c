-- requires: moderation, order, reader, snapshot
-- moderation_queue: one shard's items waiting for review in a window (listed there, neither hidden nor
-- allowed), best first, after expiring what fell out. O(m log n + rows): m the shard's states (the
-- board's limit), skipped at their places.
-- Keys: cfg (the board config hash: holds the config version), slots (the window's slots index zset),
--       top (the window's results zset)
-- Args (reader.read_call, CALLS.moderation_queue): the header with the one window, then offset
--   (0-based, in the queue) and limit
-- Reply (reader.answer, CALLS.moderation_queue): draining (1: expired data remains), rows (item_1,
--   score_1, ...: scores as Redis wrote them)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function moderation_queue(keys, args)
  local cfg_key, top_key = keys[1], keys[3]
  local refused, header, arg, draining = snapshot.begin_read(keys, args, CALLS.moderation_queue)
  if refused then return refused end
  local offset = tonumber(arg.offset)
  local page = order.page_except(top_key, moderation.MODERATION.moderated(cfg_key), offset, offset + tonumber(arg.limit) - 1)
  local rows = {}
  for i = 1, #page, 2 do
    if not order.listed(top_key, tonumber(page[i + 1])) then break end
    rows[#rows + 1], rows[#rows + 2] = page[i], page[i + 1]
  end
  return reader.answer(CALLS.moderation_queue, { draining = draining, rows = rows })
end
