-- module: segment_board
-- requires: hooks, keyspace
-- segment_board_lib: the segments option's part of the board config (src/ranking/options/segments/):
-- its setting (`segments: { max }`, the config field segmentsMax) planned and stored through the config
-- hooks, and the segments' windows going with the board's (window_copies).
-- KEYS: 0

-- A board PUT: the segments.max asked (absent: the stored one, none for a new board). A change is a new
-- config version (the writes take the max from their args) and keeps every window's data.
local function segments_planned(cfg_key, settings, reset, plan)
  local stored = plan and tonumber(redis.call('HGET', cfg_key, 'segmentsMax') or '') or nil
  if settings.segmentsMax == nil then settings.segmentsMax = stored end
  if plan and settings.segmentsMax ~= stored then plan.changed = true end
end

-- Stores segments.max (config field `segmentsMax`, absent: none); the option has no hot hook to enable.
local function segments_stored(cfg_key, settings)
  local max = settings.segmentsMax or 0
  if max > 0 then redis.call('HSET', cfg_key, 'segmentsMax', max) else redis.call('HDEL', cfg_key, 'segmentsMax') end
  return false
end

-- The bases of the window `window_name` of every segment holding slots ("<tag>:segdue"): they go with
-- the board's window (window_lib's drop_window).
local function segment_windows(cfg_key, window_name)
  local bases = {}
  for _, segment in ipairs(redis.call('ZRANGE', keyspace.sibling_key(cfg_key, 'cfg', 'segdue'), 0, -1)) do
    bases[#bases + 1] = keyspace.sibling_key(cfg_key, 'cfg', window_name .. '~' .. segment .. ':')
  end
  return bases
end

hooks.register('window_copies', segment_windows, 'segments')
hooks.register('config_planned', segments_planned, 'segments')
hooks.register('config_stored', segments_stored, 'segments')
