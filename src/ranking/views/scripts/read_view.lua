-- requires: actor_log, board_views, board_write, call_state, groups, keyspace, reader, seg_views, snapshot, view_except, window
-- read_view: reads a trending view (see views_lib) after taking the snapshots of the boundaries crossed
-- (before anything expires, as every script does), expiring what fell out of the windows it reads
-- (which updates the view) and rebasing a decay view's landmark to now.
-- Keys: cfg (board config hash: holds the config version and the views), then the (slots, top) pair of
--   each window the view reads (its window first; a rising view's baseline second; a wilson or
--   controversial view's: its window of the positive metric, then of the negative one)
-- Args (reader.read_call, CALLS.read_view): the header with the view's windows (1 or 2), then
--   segment     whose view to read ("" for the board's; the window keys are then the segment's)
--   view        the view's name
--   op          what to read: top (offset, limit) | item (item) | around (item, radius) | count
--               (rank_score: items scoring above it, for a sharded board's rank) | filter (offset: the
--               place to scan from, limit: most rows scanned, want: most rows answered, and the rows
--               that pass, as group_page's: min_actors (0: no floor) distinct actors at least in the
--               view's window (actor_lib), not an item of exclude_items nor of a group of
--               exclude_groups (JSON arrays), at most per_group (0: no cap) rows of a group counting
--               `seen` (JSON object: group -> rows of it listed ahead of offset)); the other args ""
--   offset, limit, item, radius, rank_score, want, min_actors, per_group, seen, exclude_items, exclude_groups
-- Reply (reader.answer, CALLS.read_view):
--   draining    1: expired data remains, or a page deeper than a decay view's rebase lets it merge
--   landmark    decay: unix s; else 0
--   first, second
--               top, around: the position (0-based) of the first row (around: -1 when the item is not
--                            listed), and the items scoring above the first row
--               item:        the rank (0: not listed; -1: left out by the board's exceptions, its
--                            row answered), and the listed items
--               count:       the items scoring above the rank score, and the listed items
--               filter:      the place after the last row scanned, and 1 when the listing ended there
--   rows        { item, rank score, ... } (a %.17g string: decay's forward-decayed sum, hot's or
--               rising's score; filter: the rows that pass); a rising row adds observed, baseline sum, since (unix s), its count in
--               the window's current slot and in the slot before; a wilson or controversial row its
--               positive and negative counts as one string, "<positive> <negative>" (metric_views_lib). Decay and rising rows stop at the
--               first rank score <= 0; every member of a hot view is listed (it holds only items whose
--               sum is positive, and a hot score is negative for an item first seen before the view's
--               epoch); ties in descending byte order of item id (ZREVRANGE order). The item read: the
--               item's row when listed or left out.
--   skipped, last, last_score
--               filter: the rank scores of the scanned rows that did not pass, and the last row scanned
--               ("" and 0: none); the other reads: {}, "" and 0
--   groups      filter: the group of each row of `rows` ("": none); the other reads: {}
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG, TB_ACTOR_COUNTS_PENDING (filter: see group_page)
-- Deepest merged page a read answers while a decay view's rebase runs (views_lib): a deeper one
-- answers draining, and the service's next calls move more of the rebase first.

-- The running call's views (views_lib): the same tables for every call.
local VIEWS = board_views.VIEWS

local REBASE_MERGE_DEPTH = 2000
-- Rows of one page read of a filter scan.
local FILTER_CHUNK = 250

-- A read of one view: what the helpers below share. Membership is what lists a hot item; decay and
-- rising list what scores above 0. The slot keys of now and before: a rising row's only (false: another mode).
local function view_read(view, listing, header, slots_key)
  local every_member = view.mode == 'hot'
  local interval_sec = header.windows[1].interval_sec
  local current = view.mode == 'rising' and window.current_slot(header.now_sec, interval_sec)
  return {
    view = view,
    listing = listing,
    out = { draining = 0, landmark = 0, first = 0, second = 0, rows = {}, skipped = {}, last = '', last_score = 0,
      groups = {} },
    every_member = every_member,
    listed_from = every_member and '-inf' or '(0',
    slots_key = slots_key,
    current_slot_key = current and window.slot_key_of(slots_key, current),
    previous_slot_key = current and window.slot_key_of(slots_key, current - interval_sec),
  }
end

local function view_listed(read, score)
  return read.every_member or score > 0
end

local function view_rank(read, score)
  return read.listing.count(window.above(score)) + 1
end

local function view_add_row(read, item, score)
  local rows, view = read.out.rows, read.view
  rows[#rows + 1] = item
  rows[#rows + 1] = score
  if view.mode == 'rising' then
    rows[#rows + 1] = redis.call('ZSCORE', view.source_top, item) or '0'
    rows[#rows + 1] = redis.call('ZSCORE', view.baseline_top, item) or '0'
    rows[#rows + 1] = redis.call('HGET', view.items, item) or '0'
    rows[#rows + 1] = redis.call('HGET', read.current_slot_key, item) or '0'
    rows[#rows + 1] = redis.call('HGET', read.previous_slot_key, item) or '0'
  elseif board_views.view_modes[view.mode] then
    rows[#rows + 1] = false -- the counts: every row's at once (view_counts)
  end
end

-- A wilson or controversial view's rows: their counts, asked of the view in one HMGET.
local function view_counts(read)
  local mode = board_views.view_modes[read.view.mode]
  local rows = read.out.rows
  if not mode or #rows == 0 then return end
  local items = {}
  for i = 1, #rows, 3 do items[#items + 1] = rows[i] end
  local kept = mode.counts_of(read.view, items)
  for k = 1, #items do rows[3 * k] = kept[k] end
end

-- A page of the listing from `offset`, or draining when it is deeper than a rebase lets it merge.
local function view_add_page(read, offset, limit)
  local page = read.listing.page(offset, limit)
  if not page then
    read.out.draining = 1
    return
  end
  for i = 1, #page, 2 do
    if not view_listed(read, tonumber(page[i + 1])) then break end
    -- From the top, no listed item scores above the first row: nothing to count.
    if i == 1 then read.out.second = offset == 0 and 0 or view_rank(read, tonumber(page[i + 1])) - 1 end
    view_add_row(read, page[i], page[i + 1])
  end
end

local function view_around(read, item, radius)
  local out = read.out
  local score = read.listing.score(item)
  out.first = -1
  if not (score and view_listed(read, tonumber(score))) then return end
  local position = read.listing.position(item, score)
  if not position then
    out.draining = 1
    return
  end
  out.first = math.max(0, position - radius)
  view_add_page(read, out.first, position + radius + 1 - out.first)
end

-- Scans one chunk of a filter read from `at` (at most `count` rows) into read.out; answers the rows
-- scanned, whether the listing ended inside the chunk, or nil when a rebase holds the page (draining).
local function filter_chunk(read, scan, at, count)
  local page = read.listing.page(at, count)
  if not page then return nil end
  local items = {}
  for i = 1, #page, 2 do items[#items + 1] = page[i] end
  local actors = scan.min_actors > 0 and actor_log.ACTORS.actor_counts(scan.pairs_key, items) or {}
  -- A board without groups names none: no lookup of its rows' groups.
  local named = scan.grouped and groups.groups_of(scan.cfg_key, items) or {}
  local out = read.out
  for i = 1, #items do
    local score = page[2 * i]
    if not view_listed(read, tonumber(score)) then return i - 1, true end
    out.last, out.last_score = items[i], score
    if scan.kept < scan.want and groups.filter_passes(scan, items[i], named[i] or '', actors[i] or 0) then
      view_add_row(read, items[i], score)
      out.groups[#out.groups + 1] = named[i] or ''
      scan.kept = scan.kept + 1
      if scan.kept == scan.want then return i, false end
    else
      out.skipped[#out.skipped + 1] = score
    end
  end
  return #items, #items < count
end

-- A filter read: from `offset`, at most `limit` rows scanned in chunks, up to `want` rows answered.
local function view_filter(read, arg, cfg_key, pairs_key)
  local scan = groups.filters_of(cfg_key, arg)
  scan.pairs_key, scan.want, scan.kept = pairs_key, tonumber(arg.want), 0
  local at, left, ended = tonumber(arg.offset), tonumber(arg.limit), false
  while left > 0 and not ended and scan.kept < scan.want do
    local scanned
    scanned, ended = filter_chunk(read, scan, at, math.min(left, FILTER_CHUNK))
    if not scanned then
      read.out.draining = 1
      break
    end
    at, left = at + scanned, left - scanned
  end
  read.out.first, read.out.second = at, ended and 1 or 0
end

-- What the call's op asks of the view, into read.out; answers an error (a filter on counts not kept), or nil.
local function view_answer(read, arg)
  local out, listing, op = read.out, read.listing, arg.op
  if op == 'top' then
    out.first = tonumber(arg.offset)
    view_add_page(read, out.first, tonumber(arg.limit))
  elseif op == 'item' then
    -- An item the board's exceptions leave out (moderation) answers its row with rank -1, as a window's.
    local score = listing.score(arg.item)
    local left_out = not score and listing.left_out and listing.left_out(arg.item)
    out.second = listing.count(read.listed_from)
    if (score or left_out) and view_listed(read, tonumber(score or left_out)) then
      out.first = score and view_rank(read, tonumber(score)) or -1
      view_add_row(read, arg.item, score or left_out)
    end
  elseif op == 'around' then
    view_around(read, arg.item, tonumber(arg.radius))
  elseif op == 'filter' then
    local pairs_key = actor_log.ACTORS.pairs_key(read.slots_key)
    -- While expired data drains the answer is read again: its pairs may be the last ones of before.
    local kept = tonumber(arg.min_actors) == 0 or read.out.draining == 1 or actor_log.ACTORS.counts_kept(pairs_key)
    if not kept then return 'TB_ACTOR_COUNTS_PENDING counts began after live pairs' end
    view_filter(read, arg, read.cfg_key, pairs_key)
  elseif op == 'count' then
    local score = tonumber(arg.rank_score)
    out.first = view_listed(read, score) and listing.count(window.above(score)) or 0
    out.second = listing.count(read.listed_from)
  end
end

-- What a segment holding no data lists: nothing (read without registering its views, which would
-- store a decay landmark for any name a reader sends; its landmark is the board's view's).
local EMPTY_LISTING = {
  score = function() return nil end,
  count = function() return 0 end,
  page = function() return {} end,
  position = function() return nil end,
}

-- The views a read answers from: the board's, or a held segment's (nil: a segment holding no data).
-- The windows read (the board's or the segment's: the call's keys name them) first cross their boundaries, so a
-- window keeping snapshots takes the one due before anything of it expires (a segment's own history).
local function views_read(cfg_key, segment, now_sec, windows)
  if segment == '' then
    snapshot.cross_all(windows, now_sec)
    return VIEWS.by_name
  end
  if not redis.call('ZSCORE', keyspace.sibling_key(cfg_key, 'cfg', 'segdue'), segment) then return nil end
  snapshot.cross_all(windows, now_sec)
  return seg_views.segment_views(cfg_key, segment)
end

local function read_view(keys, args)
  local cfg_key, slots_key = keys[1], keys[2]
  local refused, header, arg = board_write.begin_board_call(keys, args, CALLS.read_view)
  if refused then return refused end
  local windows = call_state.bind_windows(2, #header.windows)
  board_views.views_load(cfg_key, header.now_ms)
  local views = views_read(cfg_key, arg.segment, header.now_sec, windows)
  local view = (views or VIEWS.by_name)[arg.view]
  if not view then return redis.error_reply('TB_STALE_CONFIG view not in the stored config') end
  local draining = 0
  if views then draining = window.expire_all(windows, header.now_sec, header.budget) end
  -- An empty segment answers the board's landmark: the one every shard's rows of the read are scaled to.
  local listing, landmark = board_views.view_listing(view, REBASE_MERGE_DEPTH)
  -- A view lists what its window lists: its board's exceptions (moderation) are left out.
  listing = views and view_except.except_listing(listing, view) or EMPTY_LISTING
  local read = view_read(view, listing, header, slots_key)
  read.out.draining, read.out.landmark = draining, landmark
  read.cfg_key = cfg_key
  local refusal = view_answer(read, arg)
  if refusal then return redis.error_reply(refusal) end
  view_counts(read)
  return reader.answer(CALLS.read_view, read.out)
end
