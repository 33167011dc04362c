-- module: seg_views
-- requires: board_views, call_state, hooks
-- segment_views_lib: the trending views of segments, a module of the ranking function library right
-- after views_lib (and before actor_lib, which counts unique views through views_reading), and what
-- tells the views of a change of their windows' sums (hooks_lib reads_sums and sum_changed, which
-- window_lib and board_write_lib call). A segment (segment_lib)
-- has each view of the board over its own windows, keyed like a segment's window:
-- <tag>:<view>~<segment>:top|items|meta|next, reading <tag>:<window>~<segment>:top; views_lib's code
-- keeps it, so a segment's view holds exactly what the view of a board of only its events would.
-- A segment's views are registered (VIEWS.segments) on the first change of its windows in a call.
-- KEYS: 0

local CALL = call_state.CALL

-- The running call's views (views_lib): the same tables for every call.
local VIEWS = board_views.VIEWS

-- Each segment's copies of its board's views (views_lib's segment_copy), by "<cfg key><US><segment>": the board's
-- view list they copy (`list`, views_lib's decoded and bound one, replaced when the views field changes) and the
-- copies by name. A call_state.memo of 256 segments (a pure function of both), so a write in a known segment copies
-- and keys no view. A copy is shared by the calls that hit, as views_lib's board views are: what a call writes into
-- it (a decay view's landmark, next landmark and factor) its register writes again before it is read.
local COPIES = call_state.memo(256)

local function segment_copies(cfg_key, segment, api)
  local key = cfg_key .. '\31' .. segment
  local known = COPIES.by[key]
  if known and known.list == VIEWS.list then return known.views end
  local views = {}
  for _, view in ipairs(VIEWS.list) do views[view.name] = api.segment_copy(cfg_key, view, segment) end
  return call_state.memo_put(COPIES, key, { list = VIEWS.list, views = views }).views
end

-- The views of a segment by name (each the board's view over the segment's windows), registered
-- once per call so that changes of the segment's windows in this call reach them. Call before
-- changing its windows.
local function segment_views(cfg_key, segment)
  if VIEWS.loaded ~= CALL.seq then board_views.views_load(cfg_key, call_state.now_ms()) end
  local views = VIEWS.segments[segment]
  if not views then
    views = {}
    if #VIEWS.list > 0 then
      local api = board_views.views_api()
      views = segment_copies(cfg_key, segment, api)
      for _, view in ipairs(VIEWS.list) do api.register(views[view.name]) end
    end
    VIEWS.segments[segment] = views
  end
  return views
end

-- Whether this call registered the segment's views already (segment_views).
local function segment_seen(segment)
  return VIEWS.loaded == CALL.seq and VIEWS.segments[segment] ~= nil
end

-- Unlinks the keys of the views of a segment that holds no data any more and forgets its views
-- registered in this call: a later change registers them anew, from no state (a decay landmark).
local function drop_segment_views(cfg_key, segment)
  if VIEWS.loaded ~= CALL.seq then board_views.views_load(cfg_key, call_state.now_ms()) end
  for _, view in pairs(VIEWS.segments[segment] or {}) do
    VIEWS.by_top[view.source_top] = nil
    if view.baseline_top then VIEWS.by_top[view.baseline_top] = nil end
  end
  for _, view in ipairs(VIEWS.list) do board_views.views_api().drop_keys(cfg_key, view.name .. '~' .. segment) end
  VIEWS.segments[segment] = nil
end

-- The segment whose window results `top_key` is ("<tag>:<window>~<segment>:top"), or nil for a board
-- window or a metric's ("~@<metric>", metrics_lib: only the views reading it, registered by name, read it).
-- Its answers (false: nil) for the call's board, kept from call to call while calls stay on that board (each
-- window is asked twice a write: its sums' views, its unique counts), emptied when they hold `max`.
local top_segments = { cfg_key = nil, by = {}, size = 0, max = 1024 }

local function segment_of_top(top_key)
  local memo = top_segments
  if memo.cfg_key ~= CALL.cfg_key or memo.size >= memo.max then memo.cfg_key, memo.by, memo.size = CALL.cfg_key, {}, 0 end
  local known = memo.by[top_key]
  if known == nil then
    known = string.match(string.sub(top_key, #CALL.cfg_key - 2), '^[^~]*~([^@].*):top$') or false
    memo.by[top_key], memo.size = known, memo.size + 1
  end
  return known or nil
end

-- The views reading the window results `top_key` (nil: none). A segment's window's are registered on
-- its first change in the call (whichever function drains, writes or retracts it): view_window_changed
-- and actor_lib's unique counts both find them here.
local function views_reading(top_key)
  if VIEWS.loaded ~= CALL.seq then board_views.views_load(CALL.cfg_key, call_state.now_ms()) end
  if not VIEWS.by_top[top_key] and #VIEWS.list > 0 then
    local segment = segment_of_top(top_key)
    if segment and not VIEWS.segments[segment] then segment_views(CALL.cfg_key, segment) end
  end
  return VIEWS.by_top[top_key]
end

-- Hook (sum_changed): an item's sum in a window (its results zset `top_key`) changed by `delta` in the
-- slot starting at `slot_start` to `sum`; `at_sec` is the event's time for a write, nil for expiry;
-- `slot_sum` the item's new sum in that slot when the caller just wrote it (nil: not known).
local function view_window_changed(top_key, slot_start, item, delta, sum, at_sec, slot_sum)
  if views_reading(top_key) then
    board_views.views_api().window_changed(top_key, slot_start, item, delta, sum, at_sec, slot_sum)
  end
end

-- Whether some view of the call's board (views_load read them) reads its windows' sums: any but a unique view, which
-- counts with the contributions (actor_lib). A write to a segment whose board has none (`wc-seg`: one unique view)
-- tells its windows' views nothing (view_window_changed would find nothing to do in each of its 32 windows).
local sums_read = { list = nil, read = false }
local function views_read_sums()
  if sums_read.list ~= VIEWS.list then
    sums_read.list, sums_read.read = VIEWS.list, false
    for _, view in ipairs(VIEWS.list) do
      if view.mode ~= 'unique' then sums_read.read = true end
    end
  end
  return sums_read.read
end

-- The Redis commands a change of an item's sum costs a view of each mode (views_lib's window_changed:
-- decay its score, its slot's sum, the new score; hot its first-seen time and score, both removed at 0;
-- rising both windows' sums, its score and time); a mode an option adds declares its own (`commands`
-- of board_views.view_modes); unique views count with the contributions (actor_lib).
local CHANGE_COMMANDS = { decay = 3, hot = 3, rising = 4, unique = 0 }

-- What a change of an item's sum in the window results `top_key` costs the views reading it (0: none),
-- in Redis commands: part of a drained field's weight (actor_lib's drained_weight).
local function change_commands(top_key)
  local commands = 0
  for _, view in ipairs(views_reading(top_key) or {}) do
    local added = board_views.view_modes[view.mode]
    commands = commands + (added and added.commands or CHANGE_COMMANDS[view.mode] or 0)
  end
  return commands
end

hooks.export_all(seg_views, { 'segment_views', segment_views, 'change_commands', change_commands,
  'segment_seen', segment_seen, 'drop_segment_views', drop_segment_views, 'views_reading', views_reading,
  'view_window_changed', view_window_changed, 'views_read_sums', views_read_sums })

-- Hook (reads_sums): whether views read the window results `top_key`. A board without views (told by
-- the call's config copy, call_lib, which reads `views` on every board) has none to load.
local CONFIG = call_state.CONFIG
local function reads_sums(top_key)
  if not CONFIG.views and call_state.cfg_key_of_top(top_key) == CONFIG.cfg_key then return false end
  return views_reading(top_key) ~= nil
end

hooks.register_all('views', { 'reads_sums', reads_sums, 'sum_changed', view_window_changed })
