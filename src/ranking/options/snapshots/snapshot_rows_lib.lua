-- module: snaprows
-- requires: archive, call_state, hooks, order_base, order, tiebreak
-- snapshot_rows_lib: a kept listing's text (a snapshot's or a calendar archive's, snapshot_lib's
-- format): storing a listing as a snapshot at a slot boundary (snapshot_lib's crossing, and
-- group_history_lib's of a group board, whose calendar archives take listing_rows' text); reading a
-- row's fields, an item's row, and how many rows rank ahead of a score or, on a tiebreak board, of a
-- pair (score, mark) in the board's order.
-- KEYS: 0

-- The row starting at byte `at` (a SNAP_ROW): its score, its position (nil in a snapshot taken
-- before positions were stored), the byte after it and its mark (nil but on a tiebreak board).
local function row_at(rows, at)
  local field = string.find(rows, archive.SNAP_FIELD, at + 1, true)
  local next_row = string.find(rows, archive.SNAP_ROW, field + 1, true) or (#rows + 1)
  local second = string.find(rows, archive.SNAP_FIELD, field + 1, true)
  if not second or second > next_row then
    return tonumber(string.sub(rows, field + 1, next_row - 1)), nil, next_row
  end
  local score = tonumber(string.sub(rows, field + 1, second - 1))
  local third = string.find(rows, archive.SNAP_FIELD, second + 1, true)
  if not third or third > next_row then
    return score, tonumber(string.sub(rows, second + 1, next_row - 1)), next_row
  end
  return score, tonumber(string.sub(rows, third + 1, next_row - 1)), next_row, string.sub(rows, second + 1, third - 1)
end

-- Whether string `a` sorts after `b` in byte order (Lua's `<` on strings follows the locale's collation).
local function bytes_after(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x > y end
  end
  return #a > #b
end

-- Whether a row (held, held_mark) ranks ahead of (score, mark) (ascending: lower scores first). Marks
-- (tiebreak_lib's) follow the board's order as scores do; a row or a score without one: by score.
local function row_ahead(held, held_mark, score, mark, ascending)
  if held ~= score then
    if ascending then return held < score end
    return held > score
  end
  if not mark or not held_mark or held_mark == mark then return false end
  return bytes_after(held_mark, mark) ~= ascending
end

-- The position of the last row (nil when the snapshot stores none), found from the end (archive.last_row_at).
local function row_count(rows)
  local last = archive.last_row_at(rows)
  if not last then return 0 end
  local _, position = row_at(rows, last)
  return position
end

-- How many rows of a listing's text rank ahead, `ahead(rows, at, a, b, c)` answering whether the row starting at byte
-- `at` does (and the byte after it) for the caller's target a, b, c. Rows are best first, so a binary search over byte
-- offsets finds the first row not ahead (about 15 string.find calls in C for 1 000 rows) and that row's stored position
-- answers (`known_count`: the row count, when the caller has it): neither a Lua loop over the rows nor a gsub over the
-- string, each of which made a page of a long history cost milliseconds (issue #22, row 7).
local function count_ahead(rows, known_count, ahead, a, b, c)
  -- Rows starting before `lo` are ahead; rows starting at or after `hi` are not; `lo` starts a row.
  local lo, hi = 1, #rows + 1
  while lo < hi do
    local row = string.find(rows, archive.SNAP_ROW, math.floor((lo + hi) / 2), true)
    if not row or row >= hi then row = lo end
    local is_ahead, after = ahead(rows, row, a, b, c)
    if is_ahead then lo = after else hi = row end
  end
  local position
  if lo <= #rows then
    local _, at_lo = row_at(rows, lo)
    position = at_lo and at_lo - 1
  else
    position = known_count or row_count(rows)
  end
  return position or select(2, string.gsub(string.sub(rows, 1, lo - 1), archive.SNAP_ROW, ''))
end

-- count_ahead's question for a (score, mark): whether the row at byte `at` ranks ahead of it (row_ahead).
local function row_ahead_of(rows, at, score, mark, ascending)
  local listed, _, after, listed_mark = row_at(rows, at)
  return row_ahead(listed, listed_mark, score, mark, ascending), after
end

-- How many rows of a snapshot score strictly better than `score` (above it; `ascending`: below it);
-- with `mark` (a tiebreak board's), rank strictly ahead of the pair (row_ahead).
local function count_above(rows, score, ascending, mark)
  return count_ahead(rows, nil, row_ahead_of, score, mark, ascending)
end

-- An item's score and mark (nil but on a tiebreak board) in a snapshot's rows, or nil when it is not listed.
local function score_of(rows, item)
  local at = string.find(rows, archive.SNAP_ROW .. item .. archive.SNAP_FIELD, 1, true)
  if not at then return nil end
  local score, _, _, mark = row_at(rows, at)
  return score, mark
end

-- Whether row `r` comes strictly ahead of row `t` in the board's order (`ascending`: its reverse):
-- by score, then on a tiebreak board by mark, then by the byte order of ids (bytes_after, never Lua's
-- locale-bound `<`), as the app merges shards' rows (shard-math compareListed).
local function ahead_of(r, t, ascending)
  if r.mark and t.mark and r.score == t.score and r.mark ~= t.mark then
    return row_ahead(r.score, r.mark, t.score, t.mark, ascending)
  end
  local first, second = r, t
  if ascending then first, second = t, r end
  if first.score ~= second.score then return first.score > second.score end
  return bytes_after(first.item, second.item)
end

-- count_ahead's question for row `t`: whether the row starting at byte `at` comes strictly ahead of it
-- (ahead_of), and the byte after it.
local function listed_ahead_of(rows, at, t, ascending)
  local field = string.find(rows, archive.SNAP_FIELD, at + 1, true)
  local score, _, after, mark = row_at(rows, at)
  return ahead_of({ item = string.sub(rows, at + 1, field - 1), score = score, mark = mark }, t, ascending), after
end

-- The rows of a listing's text strictly ahead of row `t` (count_ahead).
local function count_ahead_of_row(rows, t, ascending, known_count)
  return count_ahead(rows, known_count, listed_ahead_of, t, ascending)
end

-- Items one HMGET of a record asks.
local HMGET_ITEMS = 1000

-- A value of the archive's record as a row to count ahead of: "<score>" or "<score>\31<mark>".
local function row_of(value, item)
  local score, mark = string.match(value, '^([^\31]*)\31?(.*)$')
  return { item = item, score = tonumber(score), mark = mark ~= '' and mark or nil }
end

-- Bytes of a listing's text its row count is read from: its last row, a row being at most an id and a
-- score long (archive.last_row_at's own step is 512).
local TAIL_BYTES = 1024

-- The row count of the listing at `key` from its last bytes (GETRANGE), not its whole text: a record
-- lookup needs no more, whatever the period's rows. The whole text (`rows`, read when nil) where its
-- rows hold no positions, or its last row is longer than the tail.
local function rows_held_at(key, rows)
  local tail = rows or redis.call('GETRANGE', key, -TAIL_BYTES, -1)
  if string.find(tail, archive.SNAP_ROW, 1, true) then
    local held = row_count(tail)
    if held then return held end
  end
  rows = rows or redis.call('GET', key)
  return row_count(rows) or select(2, string.gsub(rows, archive.SNAP_ROW, ''))
end

-- What a listing of one metric of a board of several, at one boundary, tells about given items (its
-- archive's record) and rows (the rows ahead of each): listing_counts.lua's six reply entries of one
-- boundary asked ([boundary, items, rows, rank_items]; see its header). `base`: the window's keys' prefix.
-- Its text is read only when a row or a found item is counted ahead of (a binary search of it).
local function listing_counts_at(base, asked, ascending)
  local at, items, wanted, rank_items = tostring(asked[1]), asked[2], asked[3], asked[4]
  local key = base .. 'snap:' .. at
  if redis.call('EXISTS', key) == 0 then
    local values, ahead = {}, {}
    for i = 1, #items do values[i], ahead[i] = '', -1 end
    for _ = 1, #wanted do ahead[#ahead + 1] = 0 end
    return { 0, 0, 0, 0, values, ahead }
  end
  local rows = (#wanted > 0 or (rank_items and #items > 0)) and redis.call('GET', key) or nil
  local rows_held = rows_held_at(key, rows)
  local recorded = redis.call('EXISTS', base .. 'archidx:' .. at) == 1
  local values, ahead = {}, {}
  -- HMGET in slices: unpack takes at most a few thousand values.
  for from = 1, recorded and #items or 0, HMGET_ITEMS do
    local slice = { unpack(items, from, math.min(#items, from + HMGET_ITEMS - 1)) }
    for i, value in ipairs(redis.call('HMGET', base .. 'archidx:' .. at, unpack(slice))) do values[from + i - 1] = value end
  end
  for i, item in ipairs(items) do
    values[i] = values[i] or ''
    ahead[i] = (values[i] == '' or not rank_items) and -1 or count_ahead_of_row(rows, row_of(values[i], item), ascending, rows_held)
  end
  for _, row in ipairs(wanted) do
    local t = { score = tonumber(row[1]), mark = row[2] ~= '' and row[2] or nil, item = row[3] }
    ahead[#ahead + 1] = count_ahead_of_row(rows, t, ascending, rows_held)
  end
  local bytes = rows and #rows or redis.call('STRLEN', key)
  return { 1, recorded and 1 or 0, rows_held, bytes, values, ahead }
end

-- A snapshot stays readable for `keep` intervals: its own and the keep - 1 after it.
local function snapshot_lifetime_sec(conf, interval_sec) return conf.keep * interval_sec end

-- Whether the results `top_key` hold (score, tiebreak) pairs (hook tiebreak: an order when they do).
local function keeps_pairs(top_key)
  for _, asked in ipairs(call_state.hooks_of_top(top_key).tiebreak) do
    if asked(top_key, '') then return true end
  end
  return false
end

-- How many of the best `top` rows of the results `top_key` are listed, counted in Redis rather than by
-- reading each row's score: the listed rows lead the order (an ascending board's are all of them, or none
-- when its lowest score is one it does not list).
local function listed_rows(top_key, top)
  local listed = order_base.base_listed_count(top_key)
  if order.ascending(top_key) and not order_base.any_sign(top_key) and listed < redis.call('ZCARD', top_key) then
    listed = 0
  end
  return math.min(top, listed)
end

-- Positions first..last (0-based) of the results `top_key` (a board of scores), as a listing's text holds them:
-- "\30<item>\31<score>\31<n>", best first; with `ranked`, each row's score and item added to it (ZADD's order:
-- the previous listing's entries).
local function score_rows(top_key, first, last, ranked)
  local rows = {}
  local page = last >= first and order.score_page(top_key, first, last) or {}
  local row, field, positions = archive.SNAP_ROW, archive.SNAP_FIELD, archive.POSITION_TEXTS
  for at = 1, #page / 2 do
    local n, item, score = first + at, page[2 * at - 1], page[2 * at]
    rows[at] = row .. item .. field .. score .. field .. (positions[n] or n)
    if ranked then ranked[2 * at - 1], ranked[2 * at] = score, item end
  end
  return rows, ranked
end

-- The listed rows among the best `top` of the results `top_key` (a board of scores), as score_rows writes them.
local function listing_rows(top_key, top)
  return score_rows(top_key, 0, listed_rows(top_key, top) - 1)
end

-- A ZADD that creates a sorted set makes it a listpack unless its first member is longer than
-- zset-max-listpack-value (64 bytes by default), and past zset-max-listpack-entries (128) turns it into a
-- skiplist: the first 128 members cost a scan of the listpack each (0.9 M instructions for a listing of
-- 1 000 rows). A longer first member, no id (ids hold no control characters), makes the skiplist at once
-- and leaves at once; a listing of at most 128 rows stays a listpack.
local PREV_ZSET = { LISTPACK_ROWS = 128, FIRST_BYTES = 65 }

-- The previous listing of a board of scores: the snapshot's rows, a prefix of the results in the
-- page's order, copied inside Redis (ZRANGESTORE), not through Lua.
local function store_previous(prev, top_key, count, ranked)
  -- UNLINK: the listing it replaces (up to 1 000 members) is freed off the call, not in it, as a DEL or the
  -- ZRANGESTORE replacing it would free it (~0.5 M instructions for 1 000 members, issue #45).
  redis.call('UNLINK', prev)
  if count == 0 then return end
  if ranked then
    if count <= PREV_ZSET.LISTPACK_ROWS then
      redis.call('ZADD', prev, unpack(ranked))
    else
      local first = string.rep('\29', PREV_ZSET.FIRST_BYTES)
      redis.call('ZADD', prev, 0, first, unpack(ranked))
      redis.call('ZREM', prev, first)
    end
  elseif order.ascending(top_key) then
    redis.call('ZRANGESTORE', prev, top_key, 0, count - 1)
  else
    redis.call('ZRANGESTORE', prev, top_key, 0, count - 1, 'REV')
  end
end

-- A listing of more than PAGED.ROWS rows is stored in pages, one a call (1 000 rows in one call: a tiebreak board's
-- ~11 M instructions, a board of scores' ~8.5 M, past its ~5 M bound, issue #45): each page's rows and previous
-- listing's entries go to <base>snapnext (string) and <base>prevnext (zset), which no read reads, and the call that
-- stores the last page renames them to the snapshot and the previous listing, so readers see the old listing or the
-- whole new one. The window's mark moves with the last page: every call before it meets the same boundary and stores
-- the next page (each call atomic; nothing changes the window's results before its boundary is crossed).
-- prevnext's first member, no id (ids hold no control characters) and longer than zset-max-listpack-value, makes it a
-- skiplist at once (PREV_ZSET) and holds the boundary the pages belong to (its score); the last page takes it out.
-- PAIR_WEIGHT: a pair row's weight in a call's crossing (crossing_allowed), twice a score row's.
local PAGED = { ROWS = 500, PAIR_WEIGHT = 2 }
-- prevnext's first member (a library's load reaches no global function: made when asked).
local function paged_first() return string.rep('\29', PREV_ZSET.FIRST_BYTES) end

-- The rows of the listing at boundary `at` staged by earlier calls (0: none; staged rows of another boundary, or as
-- many as the whole listing `total`, are dropped).
local function staged_rows(base, at, total)
  local ranks_key = base .. 'prevnext'
  local staged_at = redis.call('ZSCORE', ranks_key, paged_first())
  if staged_at and tonumber(staged_at) == at then
    local staged = redis.call('ZCARD', ranks_key) - 1
    if staged < total then return staged end
  end
  redis.call('UNLINK', ranks_key, base .. 'snapnext')
  return 0
end

-- The next piece of the snapshot at `at` of the results `top_key` keeping `conf.top` rows: its rows, a row's weight
-- (crossing_allowed), and on a listing stored in pages the page { written (rows staged before), rows, last, pairs
-- (whether its rows are a tiebreak board's) }.
local function next_piece(base, top_key, at, conf)
  local pairs_kept = keeps_pairs(top_key)
  local total = pairs_kept and math.min(redis.call('ZCARD', top_key), conf.top) or listed_rows(top_key, conf.top)
  local weight = pairs_kept and PAGED.PAIR_WEIGHT or 1
  if total <= PAGED.ROWS then return total, weight, nil end
  local written = staged_rows(base, at, total)
  local rows = math.min(PAGED.ROWS, total - written)
  return rows, weight, { written = written, rows = rows, last = written + rows >= total, pairs = pairs_kept }
end

-- A page's rows (next_piece's) of the results `top_key` and the ZADD arguments of its previous listing's entries: a
-- tiebreak board's ranks (the row before it tells the first row's rank when they share a pair), else scores.
local function page_rows(top_key, ranks_key, page)
  local last = page.written + page.rows - 1
  if not page.pairs then return score_rows(top_key, page.written, last, {}) end
  return tiebreak.listing_rows(top_key, nil, page.written, last, archive.SNAP_ROW, archive.SNAP_FIELD,
    function(item) return math.abs(tonumber(redis.call('ZSCORE', ranks_key, item))) end)
end

-- Stages page `page` (next_piece's) of the snapshot at `at`: its rows' text and previous listing's entries
-- (page_rows), the hooks snapshot_taken told its rows. Answers its rows, or nil when
-- Redis refused the write (a full Redis: the boundary then goes without a snapshot, as a refused mark does).
local function stage_page(base, top_key, at, conf, interval_sec, page)
  local text_key, ranks_key = base .. 'snapnext', base .. 'prevnext'
  local rows, ranked = page_rows(top_key, ranks_key, page)
  local stored
  if page.written == 0 then
    stored = redis.pcall('ZADD', ranks_key, at, paged_first(), unpack(ranked))
  else
    stored = redis.pcall('ZADD', ranks_key, unpack(ranked))
  end
  if type(stored) == 'table' and stored.err then
    redis.call('UNLINK', ranks_key, text_key)
    return nil
  end
  redis.call('APPEND', text_key, table.concat(rows))
  local lifetime = snapshot_lifetime_sec(conf, interval_sec)
  if page.written == 0 then
    redis.call('EXPIRE', ranks_key, lifetime)
    redis.call('EXPIRE', text_key, lifetime)
  end
  for _, taken in ipairs(hooks.snapshot_taken) do taken(base, at + lifetime + interval_sec, rows) end
  return rows
end

-- The staged pages become the snapshot at `at` (its text's expiry set by the caller) and the previous listing.
local function publish_staged(base, at)
  local ranks_key = base .. 'prevnext'
  redis.call('ZREM', ranks_key, paged_first())
  redis.call('UNLINK', base .. 'prev')
  redis.call('RENAME', ranks_key, base .. 'prev')
  redis.call('RENAME', base .. 'snapnext', base .. 'snap:' .. at)
end

-- Stores the listing of `top_key` as the snapshot at boundary `at` and makes it the previous listing;
-- answers the rows this call stored (`page`: next_piece's last page, the earlier ones staged).
-- (A calendar window's archives are taken by archive_lib instead, in chunks, and kept by count.)
local function take_snapshot(base, top_key, at, conf, interval_sec, page)
  local rows, ranked = {}, nil
  if page then
    rows = stage_page(base, top_key, at, conf, interval_sec, page)
    if not rows then return 0 end
  elseif keeps_pairs(top_key) then
    -- In its pair order with the rows' marks and, for the previous listing, their ranks on the pair, as
    -- its live reads order and rank it (every row it holds, moderated or not, as snapshots keep them).
    rows, ranked = tiebreak.listing_rows(top_key, nil, 0, conf.top - 1, archive.SNAP_ROW, archive.SNAP_FIELD)
  else
    rows = listing_rows(top_key, conf.top)
  end
  local index, lifetime = base .. 'snaps', snapshot_lifetime_sec(conf, interval_sec)
  for _, old in ipairs(redis.call('ZRANGE', index, '-inf', at - lifetime, 'BYSCORE')) do
    redis.call('UNLINK', base .. 'snap:' .. old)
    redis.call('ZREM', index, old)
  end
  local prev = base .. 'prev'
  redis.call('ZADD', index, at, at)
  if page then
    publish_staged(base, at)
    redis.call('EXPIRE', base .. 'snap:' .. at, lifetime)
  else
    store_previous(prev, top_key, #rows, ranked)
    redis.call('SET', base .. 'snap:' .. at, table.concat(rows), 'EX', lifetime)
    -- History reads show it while their slot starts before at + lifetime (snapshot_kept_lib).
    for _, taken in ipairs(hooks.snapshot_taken) do taken(base, at + lifetime + interval_sec, rows) end
  end
  redis.call('EXPIRE', index, lifetime)
  if page or #rows > 0 then redis.call('EXPIRE', prev, lifetime) end
  return #rows
end

hooks.export_all(snaprows, { 'row_at', row_at, 'row_ahead', row_ahead, 'ahead_of', ahead_of,
  'count_above', count_above, 'count_ahead', count_ahead, 'score_of', score_of, 'row_count', row_count,
  'listing_counts_at', listing_counts_at, 'snapshot_lifetime_sec', snapshot_lifetime_sec,
  'listing_rows', listing_rows, 'store_previous', store_previous, 'take_snapshot', take_snapshot,
  'next_piece', next_piece, 'stage_page', stage_page })
