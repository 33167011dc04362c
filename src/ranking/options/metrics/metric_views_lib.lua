-- module: metric_views
-- requires: board_views, keyspace, metric_formulas
-- metric_views_lib: the views of the metrics option (src/ranking/options/metrics/). `wilson` and
-- `controversial` rank an item by a formula (metric_formulas) of its counts in one window of two
-- metrics, `positive` and `negative`. views_lib keeps them as modes an option adds
-- (board_views.view_modes): such a view reads both metrics' windows (source_top: the positive one's,
-- baseline_top: the negative one's), and every change of the item's sum in either, by a write or an
-- expiry, scores the item again from both. An item is listed while its score is above 0 (wilson: a
-- positive count above 0; controversial: both). A listed item's two counts are kept beside its score
-- (<tag>:<view>:items, item -> "<positive> <negative>"), so a row of a read costs one HGET.
-- A write drains only the windows of the metric it names, so the other metric's window may still
-- index slots that expired and are not drained yet: a count is the window's sum less what those slots
-- still hold of the item (their drain takes it out later and scores the item again), so a score is
-- the formula over the live slots whenever it is written.
-- KEYS: 0
-- View config fields (trending-math.ts): sources (the two metrics' window key stems: "<window>" for
-- the board's first metric, "<window>~@<metric>" for another, as metrics_lib names them),
-- windowPeriodSec, intervalSec.

local VIEWS = board_views.VIEWS

-- Most fields one HMGET of a read asks (a sharded board's page may send 10 000 rows; Lua's unpack
-- takes a few thousand values at most).
local COUNTS_CHUNK = 1000

local FORMULAS = { wilson = metric_formulas.wilson, controversial = metric_formulas.controversy }

local function bind(cfg_key, view)
  local positive, negative = view.sources[1], view.sources[2]
  view.source_top = keyspace.sibling_key(cfg_key, 'cfg', positive .. ':top')
  view.source_slots = keyspace.sibling_key(cfg_key, 'cfg', positive .. ':slots')
  view.baseline_top = keyspace.sibling_key(cfg_key, 'cfg', negative .. ':top')
  view.baseline_slots = keyspace.sibling_key(cfg_key, 'cfg', negative .. ':slots')
end

-- The item's count in a window now: its sum less what the expired slots still indexed hold of it
-- (none, almost always: one ZRANGE answering nothing).
local function live_count(view, slots_key, top_key, item)
  local count = tonumber(redis.call('ZSCORE', top_key, item) or '0')
  local interval_sec = view.intervalSec
  local live_from = math.floor(VIEWS.now_sec / interval_sec) * interval_sec - view.windowPeriodSec + interval_sec
  for _, start in ipairs(redis.call('ZRANGE', slots_key, '-inf', '(' .. live_from, 'BYSCORE')) do
    local slot_key = keyspace.sibling_key(slots_key, 'slots', 'slot:' .. start)
    count = count - tonumber(redis.call('HGET', slot_key, item) or '0')
  end
  return count
end

-- The item's positive and negative counts now.
local function counts(view, item)
  local positive = live_count(view, view.source_slots, view.source_top, item)
  return positive, live_count(view, view.baseline_slots, view.baseline_top, item)
end

local function changed(view, item)
  local positive, negative = counts(view, item)
  local score = FORMULAS[view.mode](positive, negative)
  if score > 0 then
    redis.call('ZADD', view.top, string.format('%.17g', score), item)
    redis.call('HSET', view.items, item, string.format('%.17g %.17g', positive, negative))
  elseif redis.call('ZREM', view.top, item) == 1 then
    redis.call('HDEL', view.items, item)
  end
end

-- Listed items' counts as their last change left them, each "<positive> <negative>": what
-- counts(view, item) answers once a read drained both windows (every change of either count, expiry
-- included, stored them).
local function counts_of(view, items)
  local kept = {}
  for first = 1, #items, COUNTS_CHUNK do
    local chunk = redis.call('HMGET', view.items, unpack(items, first, math.min(#items, first + COUNTS_CHUNK - 1)))
    for k = 1, #chunk do kept[first + k - 1] = chunk[k] end
  end
  for k, item in ipairs(items) do
    if not kept[k] then kept[k] = string.format('%.17g %.17g', counts(view, item)) end
  end
  return kept
end

-- A new or changed view: every item of its two windows scored (one pass over their results).
local function build(view)
  board_views.each_item_of_both(view, changed)
end

-- A change's Redis commands (segment_views_lib's change_commands): each count a ZSCORE, a ZRANGE of the expired slots
-- still indexed and an HGET of the one a drain takes, then the score and counts written or removed.
local MODE = { bind = bind, changed = changed, build = build, counts_of = counts_of, commands = 8 }
board_views.view_modes.wilson = MODE
board_views.view_modes.controversial = MODE

metric_views.counts = counts
