-- module: groups
-- requires: call_state, hooks, item_data, keyspace
-- groups_lib: `groups: true` boards, a board option (src/ranking/options/groups/): an item's group (its
-- author, channel or domain), named by the latest write that carried one. The map lives on the item's
-- shard, beside its windows (one hash tag), and holds only items some window of the shard holds: an
-- item leaving its last window leaves the map (results_changed), so the map is bounded by the items
-- quota (one entry of at most two ids per item). Its reverse, by group, lets moderation find a
-- group's items on the shard in O(log n + its items).
-- KEYS: 0
-- Keys: <tag>:groups   hash  item -> group (only items some window of the shard holds)
--       <tag>:bygroup  zset  group<US>item, all scored 0: the same entries by group (lex ranges)
-- Config hash field: groups ("1"; absent: off).

call_state.config_field_add('groups', 'groups')

-- Each config hash's setting asked in this call (call_state.call_cache).
local known = { seq = 0, by = {} }

local SEP = '\31'

-- "<tag>:cfg" -> "<tag>:groups"
local groups_key = keyspace.sibling_of('cfg', 'groups')

-- "<tag>:cfg" -> "<tag>:bygroup"
local by_group_key = keyspace.sibling_of('cfg', 'bygroup')

-- The options following an item's group (hooks_lib group_changed) learn it is now `group` (false: none).
local function changed(cfg_key, item, group)
  local list = call_state.hooks_of(cfg_key).group_changed
  for i = 1, #list do list[i](cfg_key, item, group) end
end

-- The item leaves its group `group` (false: it had none) in the map and its reverse.
local function forget(cfg_key, item, group)
  if not group then return end
  redis.call('HDEL', groups_key(cfg_key), item)
  redis.call('ZREM', by_group_key(cfg_key), group .. SEP .. item)
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
    redis.call('UNLINK', key, by_group_key(cfg_key))
    return false
  end
  redis.call('HSET', cfg_key, 'groups', '1')
  local map = redis.call('HGETALL', key)
  for i = 1, #map, 2 do
    if not item_data.item_held(cfg_key, map[i]) then forget(cfg_key, map[i], map[i + 1]) end
  end
  return true
end

hooks.register_all('groups', { 'results_changed', group_left, 'watches', watches,
  'config_planned', hooks.flag_planned('groups'), 'config_stored', groups_stored })

groups.groups_key = groups_key
groups.assign = assign
groups.groups_of = groups_of
groups.grouped = grouped
groups.items_in = items_in
groups.count_in = count_in
