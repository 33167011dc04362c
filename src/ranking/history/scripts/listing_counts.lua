-- requires: archive, keyspace, order, reader, shown, snaprows, span, window
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
-- Reply (reader.answer, CALLS.listing_counts): draining (0|1), listings (per boundary asked, five
--   entries: found (0|1: a listing kept at exactly that boundary), recorded (0|1: its archive's record
--   exists; 0 for a snapshot, or an archive kept before records were), rows (its row count), values
--   (per item: "<score>" or "<score>\31<mark>", '' when the record does not hold it), ahead (per found
--   item then per row asked: the rows strictly ahead of it; -1 for an item not found or not ranked;
--   0 for a row where no listing is kept))
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG

-- Whether row `r` comes strictly ahead of row `t` in the board's order (`ascending`: its reverse):
-- by score, then on a tiebreak board by mark, then by the byte order of ids (span_lib's, never Lua's
-- locale-bound `<`), as the app merges shards' rows (shard-math compareListed).
local function ahead_of(r, t, ascending)
  if r.mark and t.mark and r.score == t.score and r.mark ~= t.mark then
    return snaprows.row_ahead(r.score, r.mark, t.score, t.mark, ascending)
  end
  if ascending then return span.comes_before(t.score, t.item, r.score, r.item) end
  return span.comes_before(r.score, r.item, t.score, t.item)
end

-- snaprows.count_ahead's question for row `t`: whether the row starting at byte `at` comes strictly ahead of it
-- (ahead_of), and the byte after it.
local function row_ahead_of(rows, at, t, ascending)
  local field = string.find(rows, archive.SNAP_FIELD, at + 1, true)
  local score, _, after, mark = snaprows.row_at(rows, at)
  return ahead_of({ item = string.sub(rows, at + 1, field - 1), score = score, mark = mark }, t, ascending), after
end

-- The rows of a listing's text strictly ahead of row `t` (snaprows.count_ahead).
local function count_ahead(rows, t, ascending, row_count)
  return snaprows.count_ahead(rows, row_count, row_ahead_of, t, ascending)
end

-- Items one HMGET of a record asks.
local HMGET_ITEMS = 1000

-- A value of the archive's record as a row to count ahead of: "<score>" or "<score>\31<mark>".
local function row_of(value, item)
  local score, mark = string.match(value, '^([^\31]*)\31?(.*)$')
  return { item = item, score = tonumber(score), mark = mark ~= '' and mark or nil }
end

-- The five reply entries of one boundary asked (see the header).
local function counts_at(base, asked, ascending)
  local at, items, wanted, rank_items = tostring(asked[1]), asked[2], asked[3], asked[4]
  local rows = redis.call('GET', base .. 'snap:' .. at)
  if not rows then
    local values, ahead = {}, {}
    for i = 1, #items do values[i], ahead[i] = '', -1 end
    for _ = 1, #wanted do ahead[#ahead + 1] = 0 end
    return { 0, 0, 0, values, ahead }
  end
  local row_count = snaprows.row_count(rows) or select(2, string.gsub(rows, archive.SNAP_ROW, ''))
  local recorded = redis.call('EXISTS', base .. 'archidx:' .. at) == 1
  local values, ahead = {}, {}
  -- HMGET in slices: unpack takes at most a few thousand values.
  for from = 1, recorded and #items or 0, HMGET_ITEMS do
    local slice = { unpack(items, from, math.min(#items, from + HMGET_ITEMS - 1)) }
    for i, value in ipairs(redis.call('HMGET', base .. 'archidx:' .. at, unpack(slice))) do values[from + i - 1] = value end
  end
  for i, item in ipairs(items) do
    values[i] = values[i] or ''
    ahead[i] = (values[i] == '' or not rank_items) and -1 or count_ahead(rows, row_of(values[i], item), ascending, row_count)
  end
  for _, row in ipairs(wanted) do
    local t = { score = tonumber(row[1]), mark = row[2] ~= '' and row[2] or nil, item = row[3] }
    ahead[#ahead + 1] = count_ahead(rows, t, ascending, row_count)
  end
  return { 1, recorded and 1 or 0, row_count, values, ahead }
end

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
      for _, entry in ipairs(counts_at(base, asked, ascending)) do listings[#listings + 1] = entry end
    end
  end
  return reader.answer(CALLS.listing_counts, { draining = draining and 1 or 0, listings = listings })
end
