-- module: board_views
-- requires: call_state, keyspace, view_decay
-- views_lib: trending views (decay, hot, rising; unique, kept by actor_lib; modes an option adds). A view is
-- one more results zset of the board, kept by the call that changes a window it reads (view_window_changed
-- after every change of an item's sum in a window, write or expiry): never recomputed by a job; expiry
-- takes out what the expired slot put in.
-- KEYS: 0
-- Conventions: the call's keys[1] (call_state's CALL.cfg_key) is the board shard's config hash, whose field
-- `views` (JSON, by board_put / shard_sync; read with the version on every board) lists the views; the
-- header's now (unix ms) is in every script changing windows (board_put and shard_sync call views_load
-- themselves). A view's keys, named after the config key like a window's: <tag>:<view>:top (zset: its rank
-- score per item), :items (hash: hot's firstSeen, rising's since), :meta (decay's landmark), :next (while a
-- decay landmark moves: the members moved). A segment's views are the same code over the segment's keys
-- (segment_views_lib, which also holds view_window_changed). Scores cross to Redis as %.17g strings.

-- The running call's views (the same tables for every call): `loaded`, the call (CALL.seq) views_load
-- last read them in; segments: segment -> its views by name (segment_views_lib).
local VIEWS = { loaded = false, by_top = {}, by_name = {}, list = {}, segments = {}, now_sec = 0 }
local CALL = call_state.CALL
call_state.config_field_add('views', 'views', true)

local view_num, decay_add, decay_rebase = view_decay.view_num, view_decay.add, view_decay.rebase
local merged_listing = view_decay.merged_listing

local function view_key(cfg_key, view_name, suffix) return keyspace.sibling_key(cfg_key, 'cfg', view_name .. ':' .. suffix) end

-- A board without views (most calls) shares these empty tables: only load_views fills them, fresh.
local NO_VIEWS = { by_top = {}, by_name = {}, list = {} }
local MODES = {} -- modes an option adds (metric_views_lib): bind, changed, build; read_view: counts_of

local views_load -- defined below, after the functions it calls; reconcile calls it too

-- A view's keys and its windows' keys: the board's (segment nil) or a segment's.
local function bind_view(cfg_key, view, segment)
  local suffix = segment and ('~' .. segment) or ''
  local own = view.name .. suffix
  view.top = view_key(cfg_key, own, 'top')
  view.items = view_key(cfg_key, own, 'items')
  view.meta = view_key(cfg_key, own, 'meta')
  view.next_top = view_key(cfg_key, own, 'next')
  view.source_top = keyspace.sibling_key(cfg_key, 'cfg', view.window .. suffix .. ':top')
  view.source_slots = keyspace.sibling_key(cfg_key, 'cfg', view.window .. suffix .. ':slots')
  if view.baseline then view.baseline_top = keyspace.sibling_key(cfg_key, 'cfg', view.baseline .. suffix .. ':top') end
  if MODES[view.mode] then MODES[view.mode].bind(cfg_key, view) end
end

-- Tells the view about changes of its windows (view_window_changed) and brings a decay view to now.
local function register(view)
  for _, top in ipairs({ view.source_top, view.baseline_top }) do
    VIEWS.by_top[top] = VIEWS.by_top[top] or {}
    table.insert(VIEWS.by_top[top], view)
  end
  if view.mode == 'decay' then decay_rebase(view, VIEWS.now_sec) end
end

-- The views load_views decoded and bound last, by config hash: the field's text they came from (`json`), the
-- list and by name, and by window results key (read only: a call copies the index and its lists, which a
-- segment's views join, a metric view's on the board's own keys). A call_state.memo of 256 boards (a pure
-- function of both; every read and write of a board with views loads them), so a call of a known text decodes
-- and builds no key. A view's table is shared by the calls that hit: what a call writes into it (a decay
-- view's landmark, next landmark and factor, decay_rebase's) every load writes again before it is read.
local LOADED = call_state.memo(256)

-- The decoded and bound views of `json`, the views field of `cfg_key` (LOADED's, or decoded and kept).
local function loaded_views(cfg_key, json)
  local known = LOADED.by[cfg_key]
  if known and known.json == json then return known end
  known = { json = json, list = {}, by_name = {}, by_top = {} }
  for _, view in ipairs(cjson.decode(json)) do
    bind_view(cfg_key, view, nil)
    known.list[#known.list + 1] = view
    known.by_name[view.name] = view
    for _, top in ipairs({ view.source_top, view.baseline_top }) do
      known.by_top[top] = known.by_top[top] or {}
      table.insert(known.by_top[top], view)
    end
  end
  return call_state.memo_put(LOADED, cfg_key, known)
end

-- views_load, once it found views: the call's index by window results a copy (segment views join it), each
-- decay view rebased to now.
local function load_views(cfg_key, json)
  local known = loaded_views(cfg_key, json)
  VIEWS.list, VIEWS.by_name = known.list, known.by_name
  for top, views in pairs(known.by_top) do VIEWS.by_top[top] = { unpack(views) } end
  for _, view in ipairs(known.list) do
    if view.mode == 'decay' then decay_rebase(view, VIEWS.now_sec) end
  end
end

-- A copy of the board's view `view` over the windows of `segment`.
local function segment_copy(cfg_key, view, segment)
  local copy = {}
  for field, value in pairs(view) do copy[field] = value end
  copy.landmark, copy.next_landmark, copy.factor = nil, nil, nil
  bind_view(cfg_key, copy, segment)
  return copy
end

-- One zset read as a listing (every view but a decay view under a rebase).
local function zset_listing(top)
  return {
    score = function(item) return redis.call('ZSCORE', top, item) end,
    count = function(lowest) return redis.call('ZCOUNT', top, lowest, '+inf') end,
    page = function(offset, limit) return redis.call('ZREVRANGE', top, offset, offset + limit - 1, 'WITHSCORES') end,
    position = function(item) return redis.call('ZREVRANK', top, item) end,
  }
end

-- The listing a read answers from, and the landmark its decay scores are relative to.
local function listing_of(view, max_depth)
  if view.next_landmark then return merged_listing(view, max_depth), view.next_landmark end
  return zset_listing(view.top), view.landmark or 0
end

-- hot: sign(s) * log10(max(|s|, 1)) + (firstSeen - epoch) / tau, s the item's sum in the window. An
-- item is listed while s > 0; its firstSeen (the earliest event time seen) is kept while s != 0 and
-- forgotten when its sum in the window returns to 0.
local function hot_score(sum, first_seen_sec, view)
  local sign = sum > 0 and 1 or (sum < 0 and -1 or 0)
  return sign * math.log10(math.max(math.abs(sum), 1)) + (first_seen_sec - view.epochSec) / view.tauSec
end

local function hot_update(view, item, sum, at_sec)
  if sum == 0 then
    redis.call('HDEL', view.items, item)
    redis.call('ZREM', view.top, item)
    return
  end
  local first = tonumber(redis.call('HGET', view.items, item) or '')
  -- Only an event's own time moves firstSeen back: a change without one (an unlike, an expiry) keeps
  -- it, and sets it to now only when the item has none.
  local seen = at_sec or (not first and VIEWS.now_sec) or nil
  if seen and (not first or seen < first) then
    first = seen
    redis.call('HSET', view.items, item, view_num(first))
  end
  if sum > 0 then
    redis.call('ZADD', view.top, view_num(hot_score(sum, first, view)), item)
  else
    redis.call('ZREM', view.top, item)
  end
end

-- rising: observed o (sum in the short window), expected e = baseline sum scaled to the short window's
-- period. No baseline yet (nothing in the baseline beyond what the short window holds) floors e at 1.
-- Listed with (o - e)^2 / e when o > e and o >= minCount.
local function rising_score(observed, baseline, view)
  local expected = baseline * view.windowPeriodSec / view.baselinePeriodSec
  if baseline - observed <= 0 then expected = math.max(expected, 1) end
  if observed < view.minCount or observed <= expected or expected <= 0 then return nil end
  return (observed - expected) ^ 2 / expected
end

-- The item's sum in the window results `top` (absent: 0): `known` when that window's change just wrote it
-- (`known_top`: its results key; window.add_amount's score is what the results hold, 0 for absent).
local function sum_in(top, item, known_top, known)
  if top == known_top and known then return known end
  return tonumber(redis.call('ZSCORE', top, item) or '0')
end

local function rising_update(view, item, known_top, known)
  local observed = sum_in(view.source_top, item, known_top, known)
  local baseline = sum_in(view.baseline_top, item, known_top, known)
  local score = rising_score(observed, baseline, view)
  if score then
    if redis.call('ZADD', view.top, view_num(score), item) == 1 then
      redis.call('HSET', view.items, item, VIEWS.now_sec)
    end
  elseif redis.call('ZREM', view.top, item) == 1 then
    redis.call('HDEL', view.items, item)
  end
end

-- view_window_changed's work for the views reading `top_key` (loaded: see below). `slot_sum` (nil: not
-- known) comes only with a change just written by window.add_amount, whose `sum` the results then hold.
local function window_changed(top_key, slot_start, item, delta, sum, at_sec, slot_sum)
  local known = slot_sum and sum
  for _, view in ipairs(VIEWS.by_top[top_key]) do
    if view.mode == 'decay' then
      decay_add(view, item, slot_start, delta, slot_sum)
    elseif view.mode == 'hot' then
      hot_update(view, item, sum, at_sec)
    elseif view.mode == 'rising' then
      rising_update(view, item, top_key, known)
    elseif MODES[view.mode] then
      MODES[view.mode].changed(view, item)
    end
  end
end

-- Unlinks the keys of one view of the board (or, named "<view>~<segment>", of a segment).
local function drop_keys(cfg_key, own_name)
  redis.call('UNLINK', view_key(cfg_key, own_name, 'top'), view_key(cfg_key, own_name, 'items'),
    view_key(cfg_key, own_name, 'meta'), view_key(cfg_key, own_name, 'next'))
end

-- The shard's segments that may hold data (segment_lib's "<tag>:segdue").
local function segments_held(cfg_key)
  return redis.call('ZRANGE', keyspace.sibling_key(cfg_key, 'cfg', 'segdue'), 0, -1)
end

-- Unlinks every key of one view: the board's and every segment's.
local function drop(cfg_key, view_name)
  drop_keys(cfg_key, view_name)
  for _, segment in ipairs(segments_held(cfg_key)) do drop_keys(cfg_key, view_name .. '~' .. segment) end
end

-- Builds a view (new, changed, or whose window was remade) from its windows' slots as they are: decay
-- and hot take each slot oldest first (hot's firstSeen is then the start of the item's oldest slot),
-- rising every item of its two windows. Costs one pass over the window's data, once per change.
-- `visit(view, item)` once for each item of a view's two windows (source and baseline): a view of both built.
local function each_item_of_both(view, visit)
  local seen = {}
  for _, top in ipairs({ view.source_top, view.baseline_top }) do
    for _, item in ipairs(redis.call('ZRANGE', top, 0, -1)) do
      if not seen[item] then seen[item] = true visit(view, item) end
    end
  end
end

local function build_view(cfg_key, view)
  if MODES[view.mode] then return MODES[view.mode].build(view) end
  if view.mode == 'unique' then
    -- One per (actor, item) pair of view.source_slots' window (a board's or a segment's; actor_lib's
    -- fields of no actor, "<US>item" counts and the "<US>" mark, are not pairs).
    for _, pair in ipairs(redis.call('HKEYS', keyspace.sibling_key(view.source_slots, 'slots', 'pairs'))) do
      local item = string.match(pair, '^[^\31]+\31(.*)$')
      if item then redis.call('ZINCRBY', view.top, 1, item) end
    end
    return
  end
  if view.mode == 'rising' then return each_item_of_both(view, rising_update) end
  local slots_key = view.source_slots
  for _, start in ipairs(redis.call('ZRANGE', slots_key, 0, -1)) do
    local entries = redis.call('HGETALL', keyspace.sibling_key(slots_key, 'slots', 'slot:' .. start))
    for i = 1, #entries, 2 do
      local item, amount = entries[i], tonumber(entries[i + 1])
      if view.mode == 'decay' then
        decay_add(view, item, tonumber(start), amount)
      else
        hot_update(view, item, tonumber(redis.call('ZSCORE', view.source_top, item) or '0'), tonumber(start))
      end
    end
  end
end

-- Rebuilds one view (the board's or a segment's copy) from its windows as they are.
local function rebuild(cfg_key, own_name, view)
  drop_keys(cfg_key, own_name)
  if view.mode == 'decay' then decay_rebase(view, VIEWS.now_sec) end
  build_view(cfg_key, view)
end

-- After a config change (board_put, shard_sync): drops the data of views that are gone, and rebuilds
-- views that are new, whose definition changed, or whose window lost its data (`dropped_windows`: set
-- of window names). `old_json`: the views stored before (or nil); the new ones are stored already.
local function reconcile(cfg_key, old_json, dropped_windows, now_ms)
  local old = {}
  for _, view in ipairs(old_json and cjson.decode(old_json) or {}) do old[view.name] = view end
  views_load(cfg_key, now_ms)
  for _, view in ipairs(VIEWS.list) do
    local before = old[view.name]
    old[view.name] = nil
    local stale = dropped_windows[view.window] or (view.baseline and dropped_windows[view.baseline])
    if before == nil or before.spec ~= view.spec or stale then
      rebuild(cfg_key, view.name, view)
      for _, segment in ipairs(segments_held(cfg_key)) do
        rebuild(cfg_key, view.name .. '~' .. segment, segment_copy(cfg_key, view, segment))
      end
    end
  end
  for name, _ in pairs(old) do drop(cfg_key, name) end
end

local API = { load_views = load_views, window_changed = window_changed, drop = drop, reconcile = reconcile,
  listing_of = listing_of, segment_copy = segment_copy, register = register, drop_keys = drop_keys }

-- Reads the board shard's views (and rebases decay views to now). Every script that changes a window
-- or reads a view calls it once, before the first change; view_window_changed calls it when needed.
-- VIEWS.segments is the call's own: a segment's first change in a call writes it, views or none.
function views_load(cfg_key, now_ms)
  if VIEWS.loaded ~= CALL.seq then view_decay.new_call() end -- a call's first load: its rebase chunk is whole
  VIEWS.loaded, VIEWS.segments, VIEWS.now_sec = CALL.seq, {}, math.floor(now_ms / 1000)
  local json = call_state.config_field(cfg_key, 'views')
  if not json then
    VIEWS.by_top, VIEWS.by_name, VIEWS.list = NO_VIEWS.by_top, NO_VIEWS.by_name, NO_VIEWS.list
    return
  end
  VIEWS.by_top = {}
  load_views(cfg_key, json)
end

board_views.views_load = views_load
board_views.view_listing = listing_of
board_views.views_reconcile = reconcile
-- The views' functions other modules call (segment_views_lib, board_drop_step) by name.
board_views.views_api = function() return API end
board_views.view_modes = MODES
board_views.each_item_of_both = each_item_of_both
board_views.VIEWS = VIEWS
