-- requires: order, reader, shown, snaprows, window
-- history_count: for a sharded board, how many rows of this shard's snapshots rank above given
-- scores, pairs on a tiebreak board (the other shards' share of an item's rank in a snapshot), taking
-- the snapshot of a boundary this call is the first to cross. On a calendar window it drains one chunk
-- first, as archive_read does (a period archived on the item's shard may still be archived here, in
-- chunks: archive_lib), and counts only the archive of the point's own period.
-- Keys: cfg (the shard's config hash), slots (the window's slots index zset on this shard; snapshot
--       keys are its siblings), top (the window's results zset on this shard)
-- Args (reader.read_call, CALLS.history_count): the header with the one window (a calendar window's
--   budget: most fields and archive rows this call drains), then points: JSON array of [boundary
--   (unix s), score, mark ('' but on a tiebreak board)]: count the rows ranking ahead in this shard's
--   snapshot at or before it (a calendar window's: its archive of the period starting there)
-- Reply (reader.answer, CALLS.history_count): draining (0|1: this shard's archive of a point's period
--   is still being taken: that point's count is short, the caller reads again), counts (one per point;
--   0 where the shard has no snapshot), left_out (one per point: of those rows, the ones the board's
--   exceptions leave out now; one step per row counted on a board with exceptions, none on another:
--   snapshot_shown_lib)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function history_count(keys, args)
  local slots_key, top_key = keys[2], keys[3]
  local refused, header, arg, conf, rule, now_sec = shown.begin_history(keys, args, CALLS.history_count)
  if refused then return refused end
  if conf and (rule.origin_sec or 0) > 0 then
    window.expire_window(slots_key, top_key, now_sec, rule.period_sec, rule.interval_sec, header.budget, rule.origin_sec)
  end
  local counts, left_out, draining = {}, {}, false
  local ex = shown.exceptions_of(top_key)
  for i, point in ipairs(cjson.decode(arg.points)) do
    counts[i], left_out[i] = 0, 0
    local rows, pending
    if conf then rows, pending = shown.point_rows(slots_key, conf, rule, now_sec, point[1]) end
    draining = draining or pending
    if rows then
      local ascending = order.ascending(slots_key)
      counts[i] = snaprows.count_above(rows, point[2], ascending, point[3] ~= '' and point[3] or nil)
      left_out[i] = shown.left_out_ahead(ex, rows, point[2], ascending, counts[i])
    end
  end
  return reader.answer(CALLS.history_count, { draining = draining and 1 or 0, counts = counts, left_out = left_out })
end
