-- module: metrics
-- requires: call_state, hooks, keyspace
-- metrics_lib: several counters per item per window, a board option (src/ranking/options/metrics/).
-- A metric other than the first keeps the board's windows as a parallel set of keys,
-- "<tag>:<window>~@<metric>:slots|slot:<start>|top|newest" ("@" is in no segment name), in the shard's
-- hash tag: the service hands a write or read of that metric those keys in place of the window's, so
-- each metric is a board of its own. This module stores the setting and drops those keys with their
-- window.
-- KEYS: 0
-- Config hash field: metrics (the names joined by commas; absent: one counter).

-- The metric names of the config being replaced by the running call (a PUT changing them drops the
-- old metrics' keys with each window): kept from config_planned to window_dropped of the call `seq`.
local METRICS = { replaced = nil, seq = 0 }

local function names_of(joined)
  local names = {}
  for name in string.gmatch(joined or '', '[^,]+') do names[#names + 1] = name end
  return names
end

local function joined_of(setting)
  if type(setting) == 'table' then return table.concat(setting, ',') end
  return setting or ''
end

-- A board PUT: the metrics asked (absent: the stored ones, none for a new board). A change drops the
-- data (the first metric's windows are the board's own: a new first metric cannot keep them).
local function metrics_planned(cfg_key, settings, reset, plan)
  local stored = plan and (redis.call('HGET', cfg_key, 'metrics') or '') or ''
  settings.metrics = settings.metrics == nil and stored or joined_of(settings.metrics)
  if not plan or settings.metrics == stored then return end
  METRICS.replaced, METRICS.seq = stored, call_state.CALL.seq
  plan.changed, plan.drop_all = true, true
  if not reset then
    plan.problems[#plan.problems + 1] = 'metrics would change from [' .. stored .. '] to [' .. settings.metrics .. ']'
  end
end

local function metrics_differ(cfg_key, settings)
  return (redis.call('HGET', cfg_key, 'metrics') or '') ~= joined_of(settings.metrics)
end

-- Stores the metrics (the option has no hooks a call on the board runs: it enables none).
local function metrics_stored(cfg_key, settings)
  local joined = joined_of(settings.metrics)
  if joined ~= '' then redis.call('HSET', cfg_key, 'metrics', joined) else redis.call('HDEL', cfg_key, 'metrics') end
  return false
end

-- Unlinks a metric window's slots, index and results (as drop_window does a board window's).
local function drop_metric_window(base)
  local starts = redis.call('ZRANGE', base .. 'slots', 0, -1)
  for _, start in ipairs(starts) do redis.call('UNLINK', base .. 'slot:' .. start) end
  redis.call('UNLINK', base .. 'slots', base .. 'top', base .. 'newest', base .. 'prev', base .. 'snapnext', base .. 'prevnext')
end

-- The window names "<window>~@<metric>" of every metric but the first (stored, and replaced by the
-- running call), none for a segment's or metric's window.
local function metric_windows(cfg_key, window_name)
  if string.find(window_name, '~', 1, true) then return {} end
  local names = names_of(redis.call('HGET', cfg_key, 'metrics'))
  local replaced = METRICS.seq == call_state.CALL.seq and METRICS.replaced or nil
  for _, name in ipairs(names_of(replaced)) do names[#names + 1] = name end
  local windows = {}
  for i = 2, #names do windows[#windows + 1] = window_name .. '~@' .. names[i] end
  return windows
end

-- The window "<tag>:<window>:" goes: so do its keys of every metric but the first (stored or replaced).
local function metrics_window_dropped(base)
  local cfg_key = string.match(base, '^[^}]*}') .. ':cfg'
  local window_name = string.sub(base, #cfg_key - 2, -2)
  for _, name in ipairs(metric_windows(cfg_key, window_name)) do
    drop_metric_window(keyspace.sibling_key(cfg_key, 'cfg', name .. ':'))
  end
end

hooks.register_all('metrics', { 'config_planned', metrics_planned, 'config_differs', metrics_differ,
  'config_stored', metrics_stored, 'window_dropped', metrics_window_dropped, 'window_siblings', metric_windows })

metrics.names_of = names_of
