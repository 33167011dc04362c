-- module: groups
-- requires: archive_held, call_state, hooks, item_data, keyspace
-- groups_lib: `groups: true` boards, a board option (src/ranking/options/groups/): an item's group (its
-- author, channel or domain), named by the latest write that carried one. The map lives on the item's
-- shard, beside its windows (one hash tag), and holds only items some window of the shard holds: an
-- item leaving its last window leaves the map (results_changed), so the map is bounded by the items
-- quota (one entry of at most two ids per item). Its reverse, by group, lets moderation find a
-- group's items on the shard in O(log n + its items).
-- An item leaving its last window while an archive of the shard's calendar windows (a segment's too)
-- or a snapshot of its rolling windows (a segment's too) holds a row of it (archive_held_lib) keeps its
-- latest group in the archived map instead, until none holds one (hook archives_left): moderating the
-- group later still finds those rows (moderation_lib's history_exceptions). So the archived map holds
-- at most the kept archives' rows (keep x top per calendar window and segment; a segment's expired
-- ones until pruned), the pending ones' and the kept snapshots' (keep x top per rolling window and
-- segment). An item some window holds again is the live map's: its entry here only names its archived
-- rows' group once it leaves again (then its latest group). A segment's snapshot or archive taken
-- after the board's windows let an item go finds its group in the lag map (lag_joined_items).
-- KEYS: 0
-- Keys: <tag>:groups     hash  item -> group (only items some window of the shard holds)
--       <tag>:bygroup    zset  group<US>item, all scored 0: the same entries by group (lex ranges)
--       <tag>:grouparch  hash  item -> group, items that left every window with archived rows
--       <tag>:bygrouparch zset group<US>item: the same by group
--       <tag>:grouplag   hash  item -> group, items that left every window while a segment's window may
--                              still store them in a snapshot or an archive (lag_kept), and <tag>:lagends (zset) when
--                              that ends: at most the items leaving within keep + 1 intervals
-- Config hash field: groups ("1"; absent: off).

call_state.config_field_add('groups', 'groups')

-- Each config hash's setting asked in this call (call_state.call_cache).
local known = { seq = 0, by = {} }

local SEP = '\31'

-- "<tag>:cfg" -> "<tag>:groups"
local groups_key = keyspace.sibling_of('cfg', 'groups')

-- "<tag>:cfg" -> "<tag>:bygroup"
local by_group_key = keyspace.sibling_of('cfg', 'bygroup')

-- "<tag>:cfg" -> "<tag>:grouparch", "<tag>:bygrouparch"
local archived_key = keyspace.sibling_of('cfg', 'grouparch')
local by_archived_key = keyspace.sibling_of('cfg', 'bygrouparch')

-- Moves on at each change of an archived map (what a call kept of one is asked again).
local ARCHIVED = { changes = 0 }

-- The item's archived rows are of `group` (false: of none, it leaves the archived map).
local function archived_set(cfg_key, item, group)
  local before = redis.call('HGET', archived_key(cfg_key), item)
  if before == group then return end
  ARCHIVED.changes = ARCHIVED.changes + 1
  if before then redis.call('ZREM', by_archived_key(cfg_key), before .. SEP .. item) end
  if not group then return redis.call('HDEL', archived_key(cfg_key), item) end
  redis.call('HSET', archived_key(cfg_key), item, group)
  redis.call('ZADD', by_archived_key(cfg_key), 0, group .. SEP .. item)
end

-- The options following an item's group (hooks_lib group_changed) learn it is now `group` (false: none).
local function changed(cfg_key, item, group)
  local list = call_state.hooks_of(cfg_key).group_changed
  for i = 1, #list do list[i](cfg_key, item, group) end
end

-- "<tag>:cfg" -> "<tag>:grouplag", "<tag>:lagends"
local lag_key = keyspace.sibling_of('cfg', 'grouplag')
local lag_ends_key = keyspace.sibling_of('cfg', 'lagends')

-- The item leaving every window with `group` may still be stored by a segment's snapshot taken later
-- (archive_held's segment_lag_until): the lag map keeps its group that long, for lag_joined.
local function lag_kept(cfg_key, item, group)
  local until_sec = archive_held.segment_lag_until(cfg_key)
  if not until_sec then return end
  redis.call('HSET', lag_key(cfg_key), item, group)
  redis.call('ZADD', lag_ends_key(cfg_key), until_sec, item)
end

-- The item leaves its group `group` (false: it had none) in the map and its reverse.
-- An archive still holding a row of it keeps its group in the archived map.
local function forget(cfg_key, item, group)
  if not group then return end
  redis.call('HDEL', groups_key(cfg_key), item)
  redis.call('ZREM', by_group_key(cfg_key), group .. SEP .. item)
  if archive_held.holds(cfg_key, item) then archived_set(cfg_key, item, group) end
  lag_kept(cfg_key, item, group)
  changed(cfg_key, item, false)
end

-- The items of `group` the shard holds (every one: callers bound them, see count_in).
local function items_in(cfg_key, group)
  local entries = redis.call('ZRANGE', by_group_key(cfg_key), '[' .. group .. SEP, '(' .. group .. '\32', 'BYLEX')
  local prefix = #group + 2
  for i = 1, #entries do entries[i] = string.sub(entries[i], prefix) end
  return entries
end

-- How many items of `group` the shard holds, in O(log n).
local function count_in(cfg_key, group)
  return redis.call('ZLEXCOUNT', by_group_key(cfg_key), '[' .. group .. SEP, '(' .. group .. '\32')
end

local function grouped(cfg_key)
  local by = call_state.call_cache(known)
  local on = by[cfg_key]
  if on == nil then
    on = call_state.config_field(cfg_key, 'groups') == '1'
    by[cfg_key] = on
  end
  return on
end

-- HMGET of `fields` of the hash `key`, in chunks that unpack takes.
local function hmget(key, fields)
  local values = {}
  for from = 1, #fields, 1000 do
    local chunk = redis.call('HMGET', key, unpack(fields, from, math.min(from + 999, #fields)))
    for i = 1, #chunk do values[from + i - 1] = chunk[i] end
  end
  return values
end

-- The items whose archived rows are of `group` and that no window of the shard holds (those are the
-- live map's): one lex range and one HMGET of the live map.
local function archived_in(cfg_key, group)
  local entries = redis.call('ZRANGE', by_archived_key(cfg_key), '[' .. group .. SEP, '(' .. group .. '\32', 'BYLEX')
  local prefix, items = #group + 2, {}
  for i = 1, #entries do entries[i] = string.sub(entries[i], prefix) end
  local live = hmget(groups_key(cfg_key), entries)
  for i, item in ipairs(entries) do
    if not live[i] then items[#items + 1] = item end
  end
  return items
end

-- How many items of the archived map are of `group` (those some window holds again too), in O(log n).
local function archived_count(cfg_key, group)
  return redis.call('ZLEXCOUNT', by_archived_key(cfg_key), '[' .. group .. SEP, '(' .. group .. '\32')
end

-- `items` of the archived map, of the groups `groups` there, that no kept listing holds any more
-- (archive_held.held_of) leave it: the same few commands for any number of them.
local function archived_left(cfg_key, items, groups)
  local held, gone, entries = archive_held.held_of(cfg_key, items), {}, {}
  for i, item in ipairs(items) do
    if not held[i] then gone[#gone + 1], entries[#entries + 1] = item, groups[i] .. SEP .. item end
  end
  if #gone == 0 then return end
  ARCHIVED.changes = ARCHIVED.changes + 1
  redis.call('ZREM', by_archived_key(cfg_key), unpack(entries))
  redis.call('HDEL', archived_key(cfg_key), unpack(gone))
end

-- Hook archives_left: `items` may no longer have a row in any archive of the shard: those of the
-- archived map no archive holds leave it.
local function archives_left(cfg_key, items)
  if not grouped(cfg_key) then return end
  local before, named, groups = hmget(archived_key(cfg_key), items), {}, {}
  for i, item in ipairs(items) do
    if before[i] then named[#named + 1], groups[#groups + 1] = item, before[i] end
  end
  if #named > 0 then archived_left(cfg_key, named, groups) end
end

-- Lag entries one snapshot prunes (as many as the rows a snapshot holds at most, SNAPSHOT_TOP_ITEMS).
local LAG_PRUNED = 1000

-- The lag map's entries whose end passed (up to LAG_PRUNED) go; then those of `items` no window holds
-- join the archived map under the group they left with, as if the listing holding them now had held
-- them then: one HMGET of each map, one HSET and one ZADD (a listing's rows at once).
local function lag_joined_items(cfg_key, items)
  local ended = redis.call('ZRANGE', lag_ends_key(cfg_key), '-inf', math.floor(call_state.now_ms() / 1000), 'BYSCORE',
    'LIMIT', 0, LAG_PRUNED)
  if #ended > 0 then
    redis.call('ZREM', lag_ends_key(cfg_key), unpack(ended))
    redis.call('HDEL', lag_key(cfg_key), unpack(ended))
  end
  if #items == 0 then return end
  local lagged, live = hmget(lag_key(cfg_key), items), hmget(groups_key(cfg_key), items)
  local before = hmget(archived_key(cfg_key), items)
  local set, added, removed = {}, {}, {}
  for i, item in ipairs(items) do
    if lagged[i] and not live[i] and before[i] ~= lagged[i] then
      set[#set + 1], set[#set + 2] = item, lagged[i]
      added[#added + 1], added[#added + 2] = 0, lagged[i] .. SEP .. item
      if before[i] then removed[#removed + 1] = before[i] .. SEP .. item end
    end
  end
  if #set == 0 then return end
  -- archived_set for each, in one HSET and one ZADD.
  ARCHIVED.changes = ARCHIVED.changes + 1
  if #removed > 0 then redis.call('ZREM', by_archived_key(cfg_key), unpack(removed)) end
  redis.call('HSET', archived_key(cfg_key), unpack(set))
  redis.call('ZADD', by_archived_key(cfg_key), unpack(added))
end

-- Hook snapshot_taken: a segment's snapshot may hold items the board's windows let go before the
-- segment was visited (lag_joined_items).
local function lag_joined(base, _, rows)
  local cfg_key = archive_held.cfg_of(base)
  if not string.find(string.sub(base, #cfg_key - 3), '^:[^~]*~[^@]') or not grouped(cfg_key) then return end
  local items = {}
  for i, row in ipairs(rows) do items[i] = string.match(row, '^\30([^\31]*)') end
  lag_joined_items(cfg_key, items)
end

-- Hook segment_archived: rows of `items` were written into a segment's calendar archive; the board's
-- windows may have let some go before the segment's period was drained (lag_joined_items).
local function segment_archived(cfg_key, items)
  if grouped(cfg_key) then lag_joined_items(cfg_key, items) end
end

-- Names `group` the group of `item` (a write that carried one, after it applied): kept only while
-- some window holds the item (a write taking a sum to 0 leaves nothing to name).
local function assign(cfg_key, item, group)
  if group == '' or not grouped(cfg_key) then return end
  if not item_data.item_held(cfg_key, item) then return end
  local key = groups_key(cfg_key)
  local before = redis.call('HGET', key, item)
  if before == group then return end
  if before then redis.call('ZREM', by_group_key(cfg_key), before .. SEP .. item) end
  redis.call('HSET', key, item, group)
  redis.call('ZADD', by_group_key(cfg_key), 0, group .. SEP .. item)
  changed(cfg_key, item, group)
end

-- The group of each of `items` (false where none).
local function groups_of(cfg_key, items)
  if #items == 0 then return {} end
  return redis.call('HMGET', groups_key(cfg_key), unpack(items))
end

-- Hook: an item that left a window (its score there is 0) leaves the map once no window of the shard
-- holds it (at any score: 0 is one on a max / min / last board).
local function group_left(top_key, item, score)
  if score ~= 0 then return end
  local cfg_key = call_state.cfg_key_of_top(top_key)
  if not grouped(cfg_key) then return end
  local group = redis.call('HGET', groups_key(cfg_key), item)
  if group and not item_data.item_held(cfg_key, item) then forget(cfg_key, item, group) end
end

-- Hook: a groups board's results changes must reach group_left (the unwatched write path skips hooks).
local function watches(top_key)
  return grouped(call_state.cfg_key_of_top(top_key))
end

-- Stores the setting; turned off, the map and its reverse go; on, entries of items no window holds any
-- more (a reset dropped windows) go. On, the option's hooks are enabled.
local function groups_stored(cfg_key, settings)
  call_state.call_cache(known)[cfg_key] = nil
  local key = groups_key(cfg_key)
  if settings.groups ~= true then
    redis.call('HDEL', cfg_key, 'groups')
    redis.call('UNLINK', key, by_group_key(cfg_key), archived_key(cfg_key), by_archived_key(cfg_key),
      archive_held.history_key(cfg_key), archive_held.segment_key(cfg_key),
      archive_held.segment_text_key(cfg_key), lag_key(cfg_key), lag_ends_key(cfg_key))
    return false
  end
  redis.call('HSET', cfg_key, 'groups', '1')
  local map = redis.call('HGETALL', key)
  for i = 1, #map, 2 do
    if not item_data.item_held(cfg_key, map[i]) then forget(cfg_key, map[i], map[i + 1]) end
  end
  return true
end

-- Hook windows_dropped: a config write dropped windows and their archives; the archived map keeps
-- only the items some archive still holds (each read once).
local function archived_pruned(cfg_key)
  if redis.call('HGET', cfg_key, 'groups') ~= '1' then return end
  local map = redis.call('HGETALL', archived_key(cfg_key))
  for i = 1, #map, 2 do
    if not archive_held.holds(cfg_key, map[i]) then archived_set(cfg_key, map[i], false) end
  end
end

hooks.register_all('groups', { 'results_changed', group_left, 'watches', watches,
  'config_planned', hooks.flag_planned('groups'), 'config_stored', groups_stored,
  'archives_left', archives_left, 'windows_dropped', archived_pruned, 'snapshot_taken', lag_joined,
  'segment_archived', segment_archived })

groups.groups_key = groups_key
groups.assign = assign
groups.groups_of = groups_of
groups.grouped = grouped
groups.items_in = items_in
groups.count_in = count_in
groups.archived_in = archived_in
groups.archived_count = archived_count
groups.hmget = hmget
groups.ARCHIVED = ARCHIVED
