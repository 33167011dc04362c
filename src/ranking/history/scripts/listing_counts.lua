-- requires: keyspace, order, reader, shown, snaprows, window
-- listing_counts: what one shard's kept listings (snapshots, or a calendar window's archives) of one
-- metric of a board of several tell about given items at given boundaries, for the `metrics` of
-- another metric's rows (MetricCounts): each listing's row count, each asked item's score from the
-- archive's record (archive_lib: item -> score, kept beside the text on a board of several metrics),
-- and how many of its rows come strictly ahead of given rows in the board's order. Takes the snapshot
-- of a boundary this call is the first to cross and, on a calendar window, drains one chunk of it as
-- archive_read does (an archive still being taken: draining, nothing else answered).
-- Keys: cfg (board config hash), slots (the window's slots index zset; its listings are its siblings:
--       snapshot_lib), top (the window's results zset)
-- Args (reader.read_call, CALLS.listing_counts): the header with the one window (a calendar window's
--   budget: most fields and archive rows this call drains), then asked: JSON array of
--   [boundary (unix s), items (looked up in the archive's record), rows ([score, mark ('' but on a
--   tiebreak board), item]: count the rows ahead of each), rank_items (true: count the rows ahead of
--   each item found too)]; at most a page's rows in all (the caller's read bound): one HMGET of the
--   items and one binary search of the text per row (and per found item when rank_items)
-- Reply (reader.answer, CALLS.listing_counts): draining (0|1), listings (per boundary asked, six
--   entries: found (0|1: a listing kept at exactly that boundary), recorded (0|1: its archive's record
--   exists; 0 for a snapshot, or an archive kept before records were), rows (its row count), bytes (its
--   text's length: with rows, the state the app's pieces of one ask must agree they read), values
--   (per item: "<score>" or "<score>\31<mark>", '' when the record does not hold it), ahead (per found
--   item then per row asked: the rows strictly ahead of it; -1 for an item not found or not ranked;
--   0 for a row where no listing is kept))
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG

local function listing_counts(keys, args)
  local slots_key, top_key = keys[2], keys[3]
  local refused, header, arg, conf, rule, now_sec = shown.begin_history(keys, args, CALLS.listing_counts)
  if refused then return refused end
  local draining = false
  if conf and (rule.origin_sec or 0) > 0 then
    local _, left = window.expire_window(slots_key, top_key, now_sec, rule.period_sec, rule.interval_sec, header.budget, rule.origin_sec)
    draining = left
  end
  local listings = {}
  if conf and not draining then
    local base, ascending = keyspace.sibling_key(slots_key, 'slots', ''), order.ascending(slots_key)
    for _, asked in ipairs(cjson.decode(arg.asked)) do
      for _, entry in ipairs(snaprows.listing_counts_at(base, asked, ascending)) do listings[#listings + 1] = entry end
    end
  end
  return reader.answer(CALLS.listing_counts, { draining = draining and 1 or 0, listings = listings })
end
