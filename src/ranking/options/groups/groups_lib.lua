-- module: groups
-- requires: archive_held, call_state, chunks, hooks, item_data, keyspace, prune
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
--                              still store them in a snapshot or an archive (forget_all), and
--                              <tag>:lagends (zset) when that ends: at most the items leaving within
--                              keep + 1 intervals
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

-- HMGET of `fields` of the hash `key`, in chunks that unpack takes.
local function hmget(key, fields)
  return chunks.per_chunk('HMGET', key, fields)
end

-- Moves on at each change of an archived map (what a call kept of one is asked again).
local ARCHIVED = { changes = 0 }

-- The archived rows of each of `items` are of the group in `groups`: an HMGET, and at most a ZREM, an
-- HSET and a ZADD a chunks.CHUNK of them.
local function archived_set_all(cfg_key, items, groups)
  local before = hmget(archived_key(cfg_key), items)
  local set, added, removed = {}, {}, {}
  for i, item in ipairs(items) do
    if before[i] ~= groups[i] then
      set[#set + 1], set[#set + 2] = item, groups[i]
      added[#added + 1], added[#added + 2] = 0, groups[i] .. SEP .. item
      if before[i] then removed[#removed + 1] = before[i] .. SEP .. item end
    end
  end
  if #set == 0 then return end
  ARCHIVED.changes = ARCHIVED.changes + 1
  chunks.per_chunk('ZREM', by_archived_key(cfg_key), removed)
  chunks.per_chunk('HSET', archived_key(cfg_key), set)
  chunks.per_chunk('ZADD', by_archived_key(cfg_key), added)
end

-- The options following an item's group (hooks_lib group_changed) learn it is now `group` (false: none).
local function changed(cfg_key, item, group)
  local list = call_state.hooks_of(cfg_key).group_changed
  for i = 1, #list do list[i](cfg_key, item, group) end
end

-- "<tag>:cfg" -> "<tag>:grouplag", "<tag>:lagends"
local lag_key = keyspace.sibling_of('cfg', 'grouplag')
local lag_ends_key = keyspace.sibling_of('cfg', 'lagends')

-- `items` leave their groups (`groups`: the group each leaves) in the map and its reverse, in a few
-- commands a chunks.CHUNK of them: those a kept listing still holds a row of (held_of) keep their group in the
-- archived map. An item leaving every window may still be stored by a segment's snapshot taken later
-- (archive_held's segment_lag_until): the lag map keeps its group that long, for lag_joined.
local function forget_all(cfg_key, items, groups)
  local entries = {}
  for i, item in ipairs(items) do entries[i] = groups[i] .. SEP .. item end
  chunks.per_chunk('HDEL', groups_key(cfg_key), items)
  chunks.per_chunk('ZREM', by_group_key(cfg_key), entries)
  local held, kept, kept_groups = archive_held.held_of(cfg_key, items), {}, {}
  for i, item in ipairs(items) do
    if held[i] then kept[#kept + 1], kept_groups[#kept_groups + 1] = item, groups[i] end
  end
  archived_set_all(cfg_key, kept, kept_groups)
  local until_sec = archive_held.segment_lag_until(cfg_key)
  if until_sec then
    local lagged, ends = {}, {}
    for i, item in ipairs(items) do
      lagged[#lagged + 1], lagged[#lagged + 2], ends[#ends + 1], ends[#ends + 2] = item, groups[i], until_sec, item
    end
    chunks.per_chunk('HSET', lag_key(cfg_key), lagged)
    chunks.per_chunk('ZADD', lag_ends_key(cfg_key), ends)
  end
  for _, item in ipairs(items) do changed(cfg_key, item, false) end
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
  chunks.per_chunk('ZREM', by_archived_key(cfg_key), entries)
  chunks.per_chunk('HDEL', archived_key(cfg_key), gone)
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
  local joined, joined_groups = {}, {}
  for i, item in ipairs(items) do
    if lagged[i] and not live[i] then joined[#joined + 1], joined_groups[#joined_groups + 1] = item, lagged[i] end
  end
  archived_set_all(cfg_key, joined, joined_groups)
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
  if group and not item_data.item_held(cfg_key, item) then forget_all(cfg_key, { item }, { group }) end
end

-- Hook drained_weight: an expired field's item leaving its last window goes out of the map, its reverse, the
-- kept listings' check, the archived and lag maps (forget_all): ~12 commands where group_left's share is 4.
local function left_weight()
  return 8
end

-- Hook: a groups board's results changes must reach group_left (the unwatched write path skips hooks).
local function watches(top_key)
  return grouped(call_state.cfg_key_of_top(top_key))
end

-- Stores the setting; turned off, the map and its reverse go. On, the option's hooks are enabled. A
-- write dropping no window lets no item go (the map keeps only held items: group_left), so the map is
-- not read here: a config write is as cheap on a board of many items as on one of few.
local function groups_stored(cfg_key, settings)
  call_state.call_cache(known)[cfg_key] = nil
  local key = groups_key(cfg_key)
  if settings.groups ~= true then
    redis.call('HDEL', cfg_key, 'groups', 'pruneGroups', 'pruneArch')
    redis.call('UNLINK', key, by_group_key(cfg_key), archived_key(cfg_key), by_archived_key(cfg_key),
      archive_held.history_key(cfg_key), archive_held.segment_key(cfg_key),
      archive_held.segment_text_key(cfg_key), lag_key(cfg_key), lag_ends_key(cfg_key))
    return false
  end
  redis.call('HSET', cfg_key, 'groups', '1')
  return true
end

-- Hook windows_dropped: a config write (a reset) dropped windows and their archives; the archived map
-- keeps only the items some listing still holds, the map only those some window still holds
-- (forget_all). The write only starts the walk of both maps (pruneGroups, pruneArch: their HSCAN
-- cursors in the config); prune steps (prune_lib) take them a few commands a chunks.CHUNK of entries.
local function windows_pruned(cfg_key)
  if redis.call('HGET', cfg_key, 'groups') ~= '1' then return end
  redis.call('HSET', cfg_key, 'pruneGroups', '0', 'pruneArch', '0')
  prune.mark(cfg_key)
end

-- Of `items` (their groups in the map: `groups`), those no window holds leave it (forget_all).
local function live_pruned(cfg_key, items, groups)
  local held, gone, gone_groups = item_data.items_held(cfg_key, items), {}, {}
  for i, item in ipairs(items) do
    if not held[i] then gone[#gone + 1], gone_groups[#gone_groups + 1] = item, groups[i] end
  end
  if #gone > 0 then forget_all(cfg_key, gone, gone_groups) end
end

-- The maps a prune step walks, in turn: the config field of its cursor, its key, what a scanned chunk
-- of its entries (items, groups) is given to.
local PRUNED = {
  { field = 'pruneGroups', key = groups_key, pruned = live_pruned },
  { field = 'pruneArch', key = archived_key, pruned = archived_left },
}

-- One HSCAN of about `entries` entries (at most chunks.CHUNK) of the map `part`, from `cursor`: the
-- entries it answers pruned, the cursor kept (gone back at 0). Answers the entries left and the cursor
-- (nil once the map is walked).
local function scanned_once(cfg_key, part, cursor, entries)
  local scan = redis.call('HSCAN', part.key(cfg_key), cursor, 'COUNT', math.max(1, math.min(entries, chunks.CHUNK)))
  local items, groups, flat = {}, {}, scan[2]
  for i = 1, #flat, 2 do items[#items + 1], groups[#groups + 1] = flat[i], flat[i + 1] end
  if #items > 0 then part.pruned(cfg_key, items, groups) end
  if scan[1] == '0' then
    redis.call('HDEL', cfg_key, part.field)
    return entries - math.max(#items, 1), nil
  end
  redis.call('HSET', cfg_key, part.field, scan[1])
  return entries - math.max(#items, 1), scan[1]
end

-- Hook prune_step: the maps walked in turn within about `entries` entries (PRUNED).
local function groups_prune_step(cfg_key, entries)
  for _, part in ipairs(PRUNED) do
    local cursor = redis.call('HGET', cfg_key, part.field)
    while cursor and entries > 0 do
      entries, cursor = scanned_once(cfg_key, part, cursor, entries)
    end
    if cursor then return entries, false end
  end
  return entries, true
end

-- Hook prune_items: a write adds `items` while the map is walked: those of them no window holds (the
-- reset let them go) leave it first, as the walk would have taken them.
local function groups_settled(cfg_key, items)
  if not grouped(cfg_key) or redis.call('HEXISTS', cfg_key, 'pruneGroups') == 0 then return end
  local named, groups, items_named = hmget(groups_key(cfg_key), items), {}, {}
  local seen = {}
  for i, item in ipairs(items) do
    if named[i] and not seen[item] then
      seen[item] = true
      items_named[#items_named + 1], groups[#groups + 1] = item, named[i]
    end
  end
  if #items_named > 0 then live_pruned(cfg_key, items_named, groups) end
end

-- The sets of the JSON arrays set_of decoded last, by their text, a call_state.memo of 4 (the library's Lua
-- state keeps them between calls: up to that many exclusion lists, read only): a
-- filtered read's scan calls send the same exclusions each, so only its first pays their decoding
-- (~1.8 M instructions for 1 000 items, bench/span-filter-instructions.ts).
local SET_MEMO = call_state.memo(4)

-- A JSON array as a set (never written: it may be a memo's).
local function set_of(json)
  local set = SET_MEMO.by[json]
  if set then return set end
  set = {}
  for _, id in ipairs(cjson.decode(json)) do set[id] = true end
  return call_state.memo_put(SET_MEMO, json, set)
end

-- A filtered read's filters (FILTERS_FUNCTIONS' and VIEWS_FUNCTIONS' contract: per_group, seen,
-- exclude_items, exclude_groups, min_actors), its cap's counts starting at `seen`, the rows of each
-- group listed ahead of the scan.
local function filters_of(cfg_key, arg)
  return { cfg_key = cfg_key, grouped = grouped(cfg_key), per_group = tonumber(arg.per_group),
    counts = cjson.decode(arg.seen), items = set_of(arg.exclude_items), groups = set_of(arg.exclude_groups),
    min_actors = tonumber(arg.min_actors) }
end

-- Whether a scanned row of `item` (its group "" when none, `actors` distinct actors) passes `filter`;
-- a passing row of a group counts against its cap.
local function filter_passes(filter, item, group, actors)
  local taken = filter.counts[group] or 0
  local pass = actors >= filter.min_actors and not filter.items[item] and not (group ~= '' and filter.groups[group])
    and (filter.per_group == 0 or group == '' or taken < filter.per_group)
  if pass and group ~= '' then filter.counts[group] = taken + 1 end
  return pass
end

hooks.register_all('groups', { 'results_changed', group_left, 'drained_weight', left_weight,
  'watches', watches, 'config_planned', hooks.flag_planned('groups'), 'config_stored', groups_stored,
  'archives_left', archives_left, 'windows_dropped', windows_pruned, 'prune_step', groups_prune_step,
  'prune_items', groups_settled, 'snapshot_taken', lag_joined,
  'segment_archived', segment_archived })

hooks.export_all(groups, { 'groups_key', groups_key, 'assign', assign, 'groups_of', groups_of, 'grouped', grouped,
  'filters_of', filters_of, 'filter_passes', filter_passes, 'items_in', items_in, 'count_in', count_in,
  'archived_in', archived_in, 'archived_count', archived_count, 'hmget', hmget, 'ARCHIVED', ARCHIVED })
