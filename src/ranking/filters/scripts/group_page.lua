-- requires: actor_log, groups, order, reader, snapshot, span
-- group_page: a filtered page of one shard's window listing (groups_lib), after expiring what fell out:
-- from a place of the shard's listing, in the board's order, the rows that pass the filters (not an
-- excluded item, not of an excluded group, at least min_actors distinct actors in the window or span (actor_lib),
-- at most per_group rows of a group counting `seen`), up to `want` rows, scanning at most `scan` rows
-- (in chunks of GROUP_PAGE.chunk). The cap here keeps a group holding most of the listing from filling
-- `want`; the shards' merge (core/filter-merge.ts place) caps the rows of a group several shards answer.
-- Keys: cfg (the board config hash: holds the config version), slots (the window's slots index zset),
--       top (the window's results zset)
-- Args (reader.read_call, CALLS.group_page: FILTERS_FUNCTIONS' contract): the header with the one
--       window, then start (0-based place to scan from), scan (most rows scanned), want (most rows
--       answered), per_group (0: no cap), seen (JSON object: group -> rows of it already listed ahead of
--       `start`, may be {}), exclude_items and exclude_groups (JSON arrays, may be []), min_actors (0: no
--       floor; else the window's pairs hash, beside its slots, holds each item's distinct actors; a
--       span's come with its sums) and span_token ("": the window's listing; else the listing of its
--       newest slots that span_stage made for the read under this token)
-- Reply (reader.answer, CALLS.group_page):
--   draining  1: expired data remains (the budget ran out), else 0
--   rows      { item_1, score_1, group_1, ... } the rows that pass, in the shard's order (group "": none)
--   skipped   { score of each scanned row that did not pass } (the board ranks count them)
--   next      the place after the last row scanned
--   ended     1: the shard lists nothing after the scanned rows, else 0
--   last, last_score  the last row scanned ("" and 0: none)
--   row_marks, skipped_marks, last_mark  on a board keeping (score, tiebreak) pairs (tiebreak_lib) or
--             strict ranks (ties_lib: its member <mark><item> on a sharded board, the row's place on one
--             shard) outside a span, the mark of each row of `rows`, of each of `skipped` and of `last` (the
--             shards' merge and the board ranks compare it after the score); { }, { } and "" elsewhere
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG, TB_SPAN_NOT_STAGED (span_token names no staged span: it lapsed),
--   TB_ACTOR_COUNTS_PENDING (min_actors on a window, not a span, whose counts miss pairs made before they
--   were kept: actor_lib's counts_kept)

-- last_place: above any place of a listing, so an inverted place is never negative (15 digits).
local GROUP_PAGE = { chunk = 250, last_place = 999999999999999 }

-- Scans one chunk from `at` into `out` (rows, skipped); answers the rows it scanned and whether the
-- listing ended inside it.
local function scan_chunk(filter, out, at, count)
  -- Filled by the pair order's page only (tiebreak_lib's page hook): the marks of the rows answered.
  local marks = {}
  local page = filter.page(at, at + count - 1, marks)
  local items = {}
  for i = 1, #page, 2 do items[#items + 1] = page[i] end
  -- A board without groups names none: no lookup of its rows' groups.
  local named = filter.grouped and groups.groups_of(filter.cfg_key, items) or {}
  local actors = filter.min_actors > 0 and filter.actor_counts(items) or {}
  local scanned = 0
  for i = 1, #items do
    local score = tonumber(page[2 * i])
    if not filter.listed(score) then return scanned, true end
    scanned = scanned + 1
    local item, group = items[i], named[i] or ''
    out.last, out.last_score, out.last_mark = item, page[2 * i], marks[i] or ''
    -- The scan returns once `want` rows passed, so a passing row always has its room.
    if groups.filter_passes(filter, item, group, actors[i] or 0) then
      out.rows[#out.rows + 1], out.rows[#out.rows + 2], out.rows[#out.rows + 3] = item, page[2 * i], group
      out.row_marks[#out.row_marks + 1] = marks[i]
      if #out.rows == 3 * filter.want then return scanned, false end
    else
      out.skipped[#out.skipped + 1] = page[2 * i]
      out.skipped_marks[#out.skipped_marks + 1] = marks[i]
    end
  end
  return scanned, #items < count
end

-- A strict board of one shard marks none of its rows (ties_lib marks them for a merge across shards),
-- yet its ranks are places: `count` rows from `first` are marked by their places, inverted and
-- fixed-width as ties_lib's marks, so the merge's rank counts the rows of equal score listed ahead.
local function place_marks(marks, first, count)
  for i = 1, count do marks[i] = string.format('%015.0f', GROUP_PAGE.last_place - (first + i - 1)) end
end

-- A span's listing as span_stage made it for the read (its token): its sums in board order (a zset's
-- reverse order: higher score first, equal scores in descending byte order of the item id, as span_lib
-- orders them), every row listed, and with min_actors each row's distinct actors over the span.
local function staged_listing(slots_key, token)
  local staged = span.staged_keys(slots_key, token)
  if redis.call('HGET', staged.state, 'done') ~= '1' then
    return nil, redis.error_reply('TB_SPAN_NOT_STAGED the span of read ' .. token .. ' is not staged (or lapsed)')
  end
  local sums_key, counts_key = staged.sums, staged.counts
  local function page(from, to)
    return redis.call('ZRANGE', sums_key, from, to, 'REV', 'WITHSCORES')
  end
  local function actor_counts(items)
    if #items == 0 then return {} end
    local counts = redis.call('ZMSCORE', counts_key, unpack(items))
    for i = 1, #items do counts[i] = tonumber(counts[i]) or 0 end
    return counts
  end
  return { page = page, listed = function() return true end, total = redis.call('ZCARD', sums_key),
    actor_counts = actor_counts }
end

-- How the scan reads its listing: the window's results (order_lib) and its items' distinct actors
-- (actor_lib's counts), or a staged span's (staged_listing: nil and the error when it is not staged).
local function listing_of(slots_key, top_key, arg)
  if arg.span_token ~= '' then return staged_listing(slots_key, arg.span_token) end
  local pairs_key = actor_log.ACTORS.pairs_key(slots_key)
  local strict = order.strict(top_key)
  local function page(first, last, marks)
    local rows = order.page(top_key, first, last, marks)
    if strict and #marks == 0 then place_marks(marks, first, #rows / 2) end
    return rows
  end
  return { page = page,
    listed = function(score) return order.listed(top_key, score) end,
    actor_counts = function(items) return actor_log.ACTORS.actor_counts(pairs_key, items) end }
end

local function group_page(keys, args)
  local cfg_key, slots_key, top_key = keys[1], keys[2], keys[3]
  local refused, header, arg, draining = snapshot.begin_read(keys, args, CALLS.group_page)
  if refused then return refused end
  local listing, lost = listing_of(slots_key, top_key, arg)
  if not listing then return lost end
  local filter = groups.filters_of(cfg_key, arg)
  filter.top_key, filter.want = top_key, tonumber(arg.want)
  filter.page, filter.listed, filter.actor_counts = listing.page, listing.listed, listing.actor_counts
  -- While expired data drains the answer is read again: its pairs may be the last ones of before. A
  -- span counts its slots' contributions themselves, complete whatever version made them.
  local counted = filter.min_actors > 0 and arg.span_token == ''
  if counted and draining == 0 and not actor_log.ACTORS.counts_kept(actor_log.ACTORS.pairs_key(slots_key)) then
    return redis.error_reply('TB_ACTOR_COUNTS_PENDING counts began after live pairs')
  end
  local out = { rows = {}, skipped = {}, last = '', last_score = 0, row_marks = {}, skipped_marks = {}, last_mark = '' }
  local at, left, ended = tonumber(arg.start), tonumber(arg.scan), false
  while left > 0 and not ended and #out.rows < 3 * filter.want do
    local scanned
    scanned, ended = scan_chunk(filter, out, at, math.min(left, GROUP_PAGE.chunk))
    at, left = at + scanned, left - scanned
  end
  ended = ended or (listing.total ~= nil and at >= listing.total)
  return reader.answer(CALLS.group_page, {
    draining = draining, rows = out.rows, skipped = out.skipped, next = at, ended = ended and 1 or 0,
    last = out.last, last_score = out.last_score, row_marks = out.row_marks, skipped_marks = out.skipped_marks,
    last_mark = out.last_mark,
  })
end
