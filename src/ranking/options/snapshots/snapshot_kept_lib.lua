-- module: snapshot_kept
-- requires: hooks, keyspace, snapshot, window
-- snapshot_kept_lib: a window's kept history (snapshot_lib takes it at slot boundaries) as history reads
-- find it and a config change keeps or drops it.
-- KEYS: 0

-- The windows kept beside the board's `window_name` (window_siblings): their history goes with its.
local function sibling_windows(cfg_key, window_name)
  local names = {}
  for _, siblings_of in ipairs(hooks.window_siblings) do
    for _, name in ipairs(siblings_of(cfg_key, window_name)) do names[#names + 1] = name end
  end
  return names
end

-- The boundary of the snapshot of the window of `slots_key` at or before `at` (unix s; nil: the latest)
-- still kept at `now_sec`, and its text's key (which may be gone), or nil. A calendar window's archives
-- (origin_sec > 0) are kept by count, not time.
local function find_boundary(slots_key, conf, interval_sec, now_sec, at, origin_sec)
  local base = keyspace.sibling_key(slots_key, 'slots', '')
  local found = redis.call('ZRANGE', base .. 'snaps', at or '+inf', '-inf', 'BYSCORE', 'REV', 'LIMIT', 0, 1)
  if #found == 0 then return nil end
  local boundary = tonumber(found[1])
  local expired = boundary <= window.current_slot(now_sec, interval_sec) - snapshot.snapshot_lifetime_sec(conf, interval_sec)
  if (origin_sec or 0) == 0 and expired then return nil end
  return boundary, base .. 'snap:' .. boundary
end

-- find_boundary's snapshot: its boundary and rows, or nil.
local function find_snapshot(slots_key, conf, interval_sec, now_sec, at, origin_sec)
  local boundary, key = find_boundary(slots_key, conf, interval_sec, now_sec, at, origin_sec)
  if not boundary then return nil end
  local rows = redis.call('GET', key)
  if not rows then return nil end
  return boundary, rows
end

-- Unlinks a window's history (snapshots, index, previous listing) and forgets its slot mark, so a
-- remade or reconfigured window starts its history afresh; the same for each segment's and sibling's.
local function drop_snapshots(cfg_key, window_name)
  local bases = { keyspace.sibling_key(cfg_key, 'cfg', window_name .. ':') }
  for _, sibling in ipairs(sibling_windows(cfg_key, window_name)) do
    bases[#bases + 1] = keyspace.sibling_key(cfg_key, 'cfg', sibling .. ':')
    redis.call('HDEL', cfg_key, 'snapMark:' .. sibling)
  end
  for _, segment in ipairs(redis.call('ZRANGE', keyspace.sibling_key(cfg_key, 'cfg', 'seghist'), 0, -1)) do
    bases[#bases + 1] = keyspace.sibling_key(cfg_key, 'cfg', window_name .. '~' .. segment .. ':')
  end
  for _, base in ipairs(bases) do
    for _, at in ipairs(redis.call('ZRANGE', base .. 'snaps', 0, -1)) do
      redis.call('UNLINK', base .. 'snap:' .. at, base .. 'archidx:' .. at)
    end
    redis.call('UNLINK', base .. 'snaps', base .. 'prev', base .. 'mark', base .. 'snapnext', base .. 'prevnext')
    for _, dropped in ipairs(hooks.history_dropped) do dropped(base) end
  end
  redis.call('HDEL', cfg_key, 'snapMark:' .. window_name)
end

-- Whether two windows' snapshot settings (decoded JSON; absent or null: none) are the same.
local function same_snapshots(a, b)
  if type(a) ~= 'table' or type(b) ~= 'table' then return type(a) ~= 'table' and type(b) ~= 'table' end
  return a.keep == b.keep and a.top == b.top
end

hooks.export_all(snapshot_kept, { 'find_boundary', find_boundary, 'find_snapshot', find_snapshot, 'drop_snapshots', drop_snapshots,
  'same_snapshots', same_snapshots })
