-- requires: order, reader, shown, snaprows, snapshot_kept
-- history_count: for a sharded board, how many rows of this shard's snapshots rank above given
-- scores, pairs on a tiebreak board (the other shards' share of an item's rank in a snapshot), taking
-- the snapshot of a boundary this call is the first to cross.
-- Keys: cfg (the shard's config hash), slots (the window's slots index zset on this shard; snapshot
--       keys are its siblings), top (the window's results zset on this shard)
-- Args (reader.read_call, CALLS.history_count): the header with the one window (its budget unused),
--   then points: JSON array of [boundary (unix s), score, mark ('' but on a tiebreak board)]: count the
--   rows ranking ahead in this shard's snapshot at or before it
-- Reply (reader.answer, CALLS.history_count): counts (one per point; 0 where the shard has no snapshot),
--   left_out (one per point: of those rows, the ones the board's exceptions leave out now; one step per
--   row counted on a board with exceptions, none on another: snapshot_shown_lib)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function history_count(keys, args)
  local slots_key, top_key = keys[2], keys[3]
  local refused, header, arg, conf, rule, now_sec = shown.begin_history(keys, args, CALLS.history_count)
  if refused then return refused end
  local counts, left_out = {}, {}
  local ex = shown.exceptions_of(top_key)
  for i, point in ipairs(cjson.decode(arg.points)) do
    counts[i], left_out[i] = 0, 0
    if conf then
      local _, rows = snapshot_kept.find_snapshot(slots_key, conf, rule.interval_sec, now_sec, point[1], rule.origin_sec)
      if rows then
        local ascending = order.ascending(slots_key)
        counts[i] = snaprows.count_above(rows, point[2], ascending, point[3] ~= '' and point[3] or nil)
        left_out[i] = shown.left_out_ahead(ex, rows, point[2], ascending, counts[i])
      end
    end
  end
  return reader.answer(CALLS.history_count, { counts = counts, left_out = left_out })
end
