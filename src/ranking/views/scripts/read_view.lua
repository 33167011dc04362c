-- requires: board_views, call_state, keyspace, seg_views, snapshot, window
-- read_view: reads a trending view (see views_lib) after taking the snapshots of the boundaries crossed
-- (before anything expires, as every script does), expiring what fell out of the windows it reads
-- (which updates the view) and rebasing a decay view's landmark to now.
-- KEYS: dynamic
-- KEYS[1]        board config hash (holds the config version and the views)
-- KEYS[2w], KEYS[2w+1] (w = 1..W): the slots index zset and results zset of each window the view reads
--                (its window first; a rising view's baseline second)
-- ARGV[1]        config version the caller built its keys from
-- ARGV[2]        now, unix milliseconds
-- ARGV[3]        expiry budget: most expired-slot fields drained by this call
-- ARGV[4]        W, number of windows (1 or 2)
-- ARGV[5+4(w-1)] .. ARGV[8+4(w-1)]: window w's period (s), interval (s), creation time (unix ms), origin (window_lib)
-- ARGV[5+4W]     segment whose view to read ("" for the board's; the window keys are then the segment's)
-- ARGV[6+4W]     view name
-- ARGV[7+4W]     what to read: top <offset> <limit> | item <item> | around <item> <radius> | count <rank score>
--                (count: items scoring above a rank score, for a sharded board's rank)
-- Reply: { draining (0|1), landmark (decay: unix s; else 0), a, b, rows... } where
--        top, around: a = position (0-based) of the first row (around: -1 when the item is not listed),
--                     b = items scoring above the first row
--        item:        a = rank (0: not listed), b = listed items; the item's row when listed
--        count:       a = items scoring above the rank score, b = listed items
--        A row is item, rank score (a %.17g string: decay's forward-decayed sum, hot's or rising's score);
--        a rising row adds observed, baseline sum, since (unix s), its count in the window's current
--        slot and in the slot before. Decay and rising rows stop at the first rank score <= 0; every
--        member of a hot view is listed (it holds only items whose sum is positive, and a hot score is
--        negative for an item first seen before the view's epoch); ties in descending byte order of
--        item id (ZREVRANGE order).
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
-- Deepest merged page a read answers while a decay view's rebase runs (views_lib): a deeper one
-- answers draining, and the service's next calls move more of the rebase first.

-- The running call's state (call_lib): the same tables for every call.
local VIEWS = call_state.VIEWS

local REBASE_MERGE_DEPTH = 2000

-- A read of one view: what the helpers below share. Membership is what lists a hot item; decay and
-- rising list what scores above 0.
local function view_read(view, draining, landmark, listing, now_sec)
  local every_member = view.mode == 'hot'
  local interval_sec = tonumber(ARGV[6])
  local current = window.current_slot(now_sec, interval_sec)
  return {
    view = view,
    listing = listing,
    reply = { draining, landmark, 0, 0 },
    every_member = every_member,
    listed_from = every_member and '-inf' or '(0',
    current_slot_key = window.slot_key_of(KEYS[2], current),
    previous_slot_key = window.slot_key_of(KEYS[2], current - interval_sec),
  }
end

local function view_listed(read, score)
  return read.every_member or score > 0
end

local function view_rank(read, score)
  return read.listing.count(window.above(score)) + 1
end

local function view_add_row(read, item, score)
  local reply, view = read.reply, read.view
  reply[#reply + 1] = item
  reply[#reply + 1] = score
  if view.mode == 'rising' then
    reply[#reply + 1] = redis.call('ZSCORE', view.source_top, item) or '0'
    reply[#reply + 1] = redis.call('ZSCORE', view.baseline_top, item) or '0'
    reply[#reply + 1] = redis.call('HGET', view.items, item) or '0'
    reply[#reply + 1] = redis.call('HGET', read.current_slot_key, item) or '0'
    reply[#reply + 1] = redis.call('HGET', read.previous_slot_key, item) or '0'
  end
end

-- A page of the listing from `offset`, or draining when it is deeper than a rebase lets it merge.
local function view_add_page(read, offset, limit)
  local page = read.listing.page(offset, limit)
  if not page then
    read.reply[1] = 1
    return
  end
  for i = 1, #page, 2 do
    if not view_listed(read, tonumber(page[i + 1])) then break end
    if i == 1 then read.reply[4] = view_rank(read, tonumber(page[i + 1])) - 1 end
    view_add_row(read, page[i], page[i + 1])
  end
end

local function view_around(read, item, radius)
  local reply = read.reply
  local score = read.listing.score(item)
  reply[3] = -1
  if not (score and view_listed(read, tonumber(score))) then return end
  local position = read.listing.position(item, score)
  if not position then
    reply[1] = 1
    return
  end
  reply[3] = math.max(0, position - radius)
  view_add_page(read, reply[3], position + radius + 1 - reply[3])
end

-- What `op` asks of the view, from args[first_arg] on, into read.reply.
local function view_answer(read, op, first_arg)
  local reply, listing = read.reply, read.listing
  if op == 'top' then
    reply[3] = tonumber(ARGV[first_arg])
    view_add_page(read, reply[3], tonumber(ARGV[first_arg + 1]))
  elseif op == 'item' then
    local item = ARGV[first_arg]
    local score = listing.score(item)
    reply[4] = listing.count(read.listed_from)
    if score and view_listed(read, tonumber(score)) then
      reply[3] = view_rank(read, tonumber(score))
      view_add_row(read, item, score)
    end
  elseif op == 'around' then
    view_around(read, ARGV[first_arg], tonumber(ARGV[first_arg + 1]))
  elseif op == 'count' then
    local score = tonumber(ARGV[first_arg])
    reply[3] = view_listed(read, score) and listing.count(window.above(score)) or 0
    reply[4] = listing.count(read.listed_from)
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
-- The windows read (the board's or the segment's: KEYS name them) first cross their boundaries, so a
-- window keeping snapshots takes the one due before anything of it expires (a segment's own history).
local function views_read(segment, now_sec, window_count)
  if segment == '' then
    snapshot.cross_all(2, window_count, 5, now_sec)
    return VIEWS.by_name
  end
  if not redis.call('ZSCORE', keyspace.sibling_key(KEYS[1], 'cfg', 'segdue'), segment) then return nil end
  snapshot.cross_all(2, window_count, 5, now_sec)
  return seg_views.segment_views(KEYS[1], segment)
end

local function read_view(keys, args)
  call_state.begin_call(keys, args)
  local err = window.version_error(KEYS[1], ARGV[1])
  if err then return redis.error_reply(err) end
  local now_ms = tonumber(ARGV[2])
  local now_sec = math.floor(now_ms / 1000)
  local window_count = tonumber(ARGV[4])
  local first_arg = 5 + window.WINDOW_ARGS * window_count
  board_views.views_load(KEYS[1], now_ms)
  local views = views_read(ARGV[first_arg], now_sec, window_count)
  local view = (views or VIEWS.by_name)[ARGV[first_arg + 1]]
  if not view then return redis.error_reply('TB_STALE_CONFIG view not in the stored config') end
  local draining = 0
  if views then draining = window.expire_all(2, window_count, 5, now_sec, tonumber(ARGV[3])) end
  -- An empty segment answers the board's landmark: the one every shard's rows of the read are scaled to.
  local listing, landmark = board_views.view_listing(view, REBASE_MERGE_DEPTH)
  if not views then listing = EMPTY_LISTING end
  local read = view_read(view, draining, landmark, listing, now_sec)
  view_answer(read, ARGV[first_arg + 2], first_arg + 3)
  return read.reply
end
