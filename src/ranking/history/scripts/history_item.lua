-- requires: keyspace, order, reader, shown, snaprows, snapshot, window
-- history_item: an item's score and the rows above it in each kept snapshot of a window within a
-- time range, taking the snapshot of a boundary this call is the first to cross.
-- Keys: cfg (board config hash: holds the config version and which windows keep snapshots), slots
--       (the window's slots index zset; its snapshot keys are its siblings: snapshot_lib), top (the
--       window's results zset)
-- Args (reader.read_call, CALLS.history_item): the header with the one window (its budget unused: a
--   history read expires nothing), then
--   item            the item id
--   from_sec, to_sec  the boundaries to answer (unix s, inclusive)
--   most_snapshots  most snapshots to answer: each costs a scan of its rows, so the caller pages a long
--                   history (the read budget of one call, HISTORY_ROWS_PER_CALL)
-- Reply (reader.answer, CALLS.history_item): keeps (0|1: the window keeps snapshots), next_sec (the
--   boundary the next page starts at; 0: none left in range), points (per snapshot oldest first:
--   boundary (unix s), the item's score (0 when not listed), rows ranking above it (-1 when not listed)),
--   hidden (0|1: the board's exceptions leave the item out now: snapshot_shown_lib), left_out (per
--   point: of the rows above it, those left out now; 0 when hidden or not listed: one step per row
--   above it on a board with exceptions, none on another), marks (per point: the item's mark, what the
--   other shards count ahead of on a tiebreak board: snapshot_lib; '' elsewhere or not listed)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function history_item(keys, args)
  local slots_key, top_key = keys[2], keys[3]
  local refused, header, arg, conf, rule, now_sec = shown.begin_history(keys, args, CALLS.history_item)
  if refused then return refused end
  local interval_sec, origin_sec = rule.interval_sec, rule.origin_sec
  local next_sec, points, left_out, marks = 0, {}, {}, {}
  local ex = shown.exceptions_of(top_key)
  local hidden = not shown.visible(ex, arg.item)
  local base = keyspace.sibling_key(slots_key, 'slots', '')
  local oldest_kept = conf and window.current_slot(now_sec, interval_sec, origin_sec) - snapshot.snapshot_lifetime_sec(conf, interval_sec)
  local from = conf and math.max(tonumber(arg.from_sec), oldest_kept + 1)
  if conf and from <= tonumber(arg.to_sec) then
    local most = tonumber(arg.most_snapshots)
    local boundaries = redis.call('ZRANGE', base .. 'snaps', from, arg.to_sec, 'BYSCORE', 'LIMIT', 0, most + 1)
    if #boundaries > most then next_sec = tonumber(table.remove(boundaries)) end
    for _, boundary in ipairs(boundaries) do
      local rows = redis.call('GET', base .. 'snap:' .. boundary)
      if rows then
        local score, mark = snaprows.score_of(rows, arg.item)
        points[#points + 1] = tonumber(boundary)
        -- As text: a Lua number crosses as an integer (a group board's scores have fractions).
        points[#points + 1] = score and string.format('%.17g', score) or 0
        local ascending = order.ascending(slots_key)
        local above = score and snaprows.count_above(rows, score, ascending, mark)
        points[#points + 1] = above or -1
        marks[#marks + 1] = mark or ''
        left_out[#left_out + 1] = above and not hidden and shown.left_out_ahead(ex, rows, score, ascending, above) or 0
      end
    end
  end
  return reader.answer(CALLS.history_item, {
    keeps = conf and 1 or 0,
    next_sec = next_sec,
    points = points,
    hidden = hidden and 1 or 0,
    left_out = left_out,
    marks = marks,
  })
end
