-- board_put: creates a board or changes its windows, atomically. A window whose period or interval
-- would change, a window that would be removed, or a change of shards is refused unless `reset`,
-- which drops that window's data (a change of shards drops every window's data: items move between
-- shards). An identical config leaves everything (and the version) as is. On a sharded board this runs
-- on shard 0, which holds the authoritative config; shard_sync copies it to the other shards.
-- Likes stay: a window remade by a reset is newer than any like before it, so unlike skips it.
-- A window's `snapshots` ({ keep, top }) may change freely: its history then starts afresh.
-- Every change bumps `revision` (so shard_sync never applies an older config over a newer one) and
-- `maxShards` remembers the most shards the board ever had (so leftover shards can always be found).
-- KEYS: 1
-- A change of maxItems (most items the board holds; kept when not given) is a change like any other
-- (a new version and revision); the write scripts read it from the config hash, never from a cache.
-- KEYS[1]        board config hash: version, revision, windows (JSON), shards, maxShards, createdAtMs,
--                maxItems (absent: no cap)
-- ARGV[1]        requested windows, JSON array of { name, periodSec, intervalSec, snapshots? }
-- ARGV[2]        requested shards, or "" to keep the stored count (1 for a new board)
-- ARGV[3]        version to store if anything changes (unique per change)
-- ARGV[4]        reset: 1 to drop the data of changed or removed windows, else 0
-- ARGV[5]        now, unix milliseconds
-- ARGV[6]        requested maxItems, or "" to keep the stored one (none for a new board)
-- ARGV[7]        views, JSON array (see views_lib; "[]": none), checked against the windows by the app
-- ARGV[8]        ties: "shared" | "first", or "" to keep the stored one (shared for a new board). A
--                change drops every window's data (needs reset); "first" needs a board of 1 shard
-- Reply: { status, version, windows JSON, shards, revision, most shards ever, maxItems (0: none), views
--        JSON, ties } with status created | unchanged | updated, or { "conflict", message }
-- Views: a new view, one whose definition changed, or one whose window loses its data is (re)built
-- from its windows' live slots in this call (views_reconcile); a removed view's keys go.
local cfg_key = KEYS[1]
local wanted = cjson.decode(ARGV[1])
local shards = ARGV[2]
local new_version = ARGV[3]
local reset = ARGV[4] == '1'
local now_ms = tonumber(ARGV[5])
local max_items = ARGV[6]
local views_json = ARGV[7]
local ties = ARGV[8]

-- Ties: stores the mode (config field `ties`, absent for shared; see ties_lib).
local function store_ties()
  if ties == 'first' then redis.call('HSET', cfg_key, 'ties', 'first') else redis.call('HDEL', cfg_key, 'ties') end
end
local function ties_problem(shard_count)
  if ties == 'first' and tonumber(shard_count) > 1 then return 'ties "first" needs a board of 1 shard' end
  return nil
end

-- Stores the views and brings their data in line with them (`dropped`: names of windows whose data went).
local function store_views(old_views, dropped)
  if views_json == '[]' then redis.call('HDEL', cfg_key, 'views') else redis.call('HSET', cfg_key, 'views', views_json) end
  views_reconcile(cfg_key, old_views, dropped, now_ms)
end

local stored = redis.call('HGET', cfg_key, 'windows')
if not stored then
  if shards == '' then shards = '1' end
  if ties == '' then ties = 'shared' end
  if ties_problem(shards) then return { 'conflict', ties_problem(shards) } end
  store_ties()
  for _, w in ipairs(wanted) do w.createdAtMs = now_ms end
  local json = cjson.encode(wanted)
  redis.call('HSET', cfg_key, 'version', new_version, 'windows', json, 'shards', shards, 'maxShards', shards, 'createdAtMs', now_ms)
  if max_items ~= '' then redis.call('HSET', cfg_key, 'maxItems', max_items) end
  store_snapshot_confs(cfg_key, wanted)
  store_views(nil, {})
  return { 'created', new_version, json, shards, redis.call('HINCRBY', cfg_key, 'revision', 1), shards, tonumber(max_items) or 0, views_json, ties }
end

local current = cjson.decode(stored)
local by_name = {}
for _, w in ipairs(current) do by_name[w.name] = w end
local problems, to_drop, resnapshot = {}, {}, {}
local stored_shards = redis.call('HGET', cfg_key, 'shards')
if shards == '' then shards = stored_shards end
local max_shards = math.max(tonumber(redis.call('HGET', cfg_key, 'maxShards') or stored_shards), tonumber(shards))
local reshard = stored_shards ~= shards
local stored_max_items = redis.call('HGET', cfg_key, 'maxItems') or ''
if max_items == '' then max_items = stored_max_items end
local stored_views = redis.call('HGET', cfg_key, 'views')
local stored_ties = redis.call('HGET', cfg_key, 'ties') or 'shared'
if ties == '' then ties = stored_ties end
local reties = ties ~= stored_ties
local changed = #current ~= #wanted or reshard or reties or max_items ~= stored_max_items or (stored_views or '[]') ~= views_json
if reshard and not reset then
  problems[#problems + 1] = 'shards would change from ' .. stored_shards .. ' to ' .. shards
end
if reties and not reset then problems[#problems + 1] = 'ties would change from ' .. stored_ties .. ' to ' .. ties end
problems[#problems + 1] = ties_problem(shards)
for i, w in ipairs(wanted) do
  local old = by_name[w.name]
  if current[i] == nil or current[i].name ~= w.name then changed = true end
  if old == nil then
    w.createdAtMs = now_ms
    changed = true
  elseif reshard or reties or old.periodSec ~= w.periodSec or old.intervalSec ~= w.intervalSec then
    changed = true
    if reset then
      to_drop[#to_drop + 1] = w.name
      w.createdAtMs = now_ms
    elseif old.periodSec ~= w.periodSec or old.intervalSec ~= w.intervalSec then
      problems[#problems + 1] = 'window ' .. w.name .. ' would change from ' .. old.periodSec .. 's/' .. old.intervalSec ..
        's to ' .. w.periodSec .. 's/' .. w.intervalSec .. 's'
    end
  else
    w.createdAtMs = old.createdAtMs
  end
  if old ~= nil and not same_snapshots(old.snapshots, w.snapshots) then
    changed = true
    resnapshot[#resnapshot + 1] = w.name
  end
  by_name[w.name] = nil
end
for name, _ in pairs(by_name) do
  changed = true
  if reset then to_drop[#to_drop + 1] = name else problems[#problems + 1] = 'window ' .. name .. ' would be removed' end
end
if #problems > 0 then
  table.sort(problems)
  return { 'conflict', table.concat(problems, '; ') .. ' (use ?reset=true to drop that data)' }
end
if not changed then
  return { 'unchanged', redis.call('HGET', cfg_key, 'version'), stored, shards, tonumber(redis.call('HGET', cfg_key, 'revision') or '0'), max_shards, tonumber(max_items) or 0, views_json, ties }
end
local dropped = {}
for _, name in ipairs(to_drop) do
  drop_window(cfg_key, name)
  drop_snapshots(cfg_key, name)
  dropped[name] = true
end
for _, name in ipairs(resnapshot) do drop_snapshots(cfg_key, name) end
store_snapshot_confs(cfg_key, wanted)
local json = cjson.encode(wanted)
redis.call('HSET', cfg_key, 'version', new_version, 'windows', json, 'shards', shards, 'maxShards', max_shards)
if max_items ~= '' then redis.call('HSET', cfg_key, 'maxItems', max_items) end
store_views(stored_views, dropped)
if #to_drop > 0 then prune_item_data(cfg_key) end
store_ties()
return { 'updated', new_version, json, shards, redis.call('HINCRBY', cfg_key, 'revision', 1), max_shards, tonumber(max_items) or 0, views_json, ties }
