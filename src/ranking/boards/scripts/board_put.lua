-- requires: board_views, call_state, hooks, keyspace, reader, snapshot, snapshot_kept, stored_windows, window_drop
-- board_put: creates a board or changes its windows, atomically. A window whose period or interval
-- would change, a window that would be removed, or a change of shards is refused unless `reset`,
-- which drops that window's data (a change of shards drops every window's data: items move between
-- shards). An identical config leaves everything (and the version) as is. On a sharded board this runs
-- on shard 0, which holds the authoritative config; shard_sync copies it to the other shards.
-- Likes stay: a window remade by a reset is newer than any like before it, so unlike skips it.
-- A window's `snapshots` ({ keep, top }) may change freely: its history then starts afresh; any other
-- window option's field (src/ranking/options/window-registry.ts) too, the window kept as it is.
-- Every change bumps `revision` (so shard_sync never applies an older config over a newer one) and
-- `maxShards` remembers the most shards the board ever had (so leftover shards can always be found).
-- A change of maxItems (most items the board holds; kept when not given) is a change like any other
-- (a new version and revision); the write scripts read it from the config hash, never from a cache.
-- Keys: cfg (board config hash: version, revision, windows (call_lib), shards, maxShards, createdAtMs,
--       maxItems (absent: no cap))
-- Args (reader.read_call, CALLS.board_put): the header (no config version, now, no windows), then
--   windows       requested windows, JSON array of { name, periodSec, intervalSec } and each window option's fields
--   shards        requested shards, or "" to keep the stored count (1 for a new board)
--   new_version   version to store if anything changes (unique per change)
--   reset         1 to drop the data of changed or removed windows, else 0
--   max_items     requested maxItems, or "" to keep the stored one (none for a new board)
--   views         views, JSON array (see views_lib; "[]": none), checked against the windows by the app
--   options       the board options' settings, JSON object by field (src/ranking/options/; a field
--                 absent keeps the stored setting, the default for a new board); each option plans,
--                 refuses and stores its own through the config hooks (hooks_lib)
--   aggregate     requested aggregate (sum, max, min, last), or "" to keep the stored one (sum for a new
--                 board; stored only when not sum, so a sum board's config is as before aggregates). A
--                 change drops every window's data (the slots hold another kind of value), so it is
--                 refused unless `reset`, like a change of shards.
-- Reply (reader.answer, CALLS.board_put): status (created | updated | unchanged | conflict | dropping:
--   a deleted board of the name is still being dropped (board_delete)), message (a conflict's), and for
--   the first three the stored config: version, windows (JSON), shards, revision, most_shards (ever),
--   max_items (0: none), views (JSON), options (settings JSON), aggregate; a refusal answers them empty.
-- Views: a new view, one whose definition changed, or one whose window loses its data is (re)built
-- from its windows' live slots in this call (views_reconcile); a removed view's keys go.
-- The request, read from the call's args.
local function board_request(cfg_key, header, arg)
  return {
    cfg_key = cfg_key,
    wanted = cjson.decode(arg.windows),
    shards = arg.shards,
    new_version = arg.new_version,
    reset = arg.reset == '1',
    now_ms = header.now_ms,
    max_items = arg.max_items,
    views_json = arg.views,
    options = cjson.decode(arg.options),
    aggregate = arg.aggregate,
  }
end

-- The stored config as board_put answers it.
local function board_answer(r, status, version, windows_json, shards, revision, most_shards)
  return reader.answer(CALLS.board_put, {
    status = status,
    message = '',
    version = version,
    windows = windows_json,
    shards = shards,
    revision = revision,
    most_shards = most_shards,
    max_items = tonumber(r.max_items) or 0,
    views = r.views_json,
    options = cjson.encode(r.options),
    aggregate = r.aggregate,
  })
end

-- A PUT that wrote nothing (conflict, dropping): its status and message, the config fields empty.
local function board_refusal(status, message)
  return reader.answer(CALLS.board_put, { status = status, message = message, version = '', windows = '',
    shards = 0, revision = 0, most_shards = 0, max_items = 0, views = '', options = '', aggregate = '' })
end

local function board_store_aggregate(r)
  if r.aggregate == 'sum' then redis.call('HDEL', r.cfg_key, 'aggregate') else redis.call('HSET', r.cfg_key, 'aggregate', r.aggregate) end
end

-- Each option's part of a PUT (hooks_lib config_planned; plan nil: a new board).
local function board_plan_options(r, plan)
  local planned = hooks.config_planned
  for i = 1, #planned do planned[i](r.cfg_key, r.options, r.reset, plan) end
end

local function board_store_options(r)
  call_state.store_options(r.cfg_key, r.options, r.new_version)
end

-- Stores the views and brings their data in line with them (`dropped`: names of windows whose data went).
local function board_store_views(request, old_views, dropped)
  if request.views_json == '[]' then
    redis.call('HDEL', request.cfg_key, 'views')
  else
    redis.call('HSET', request.cfg_key, 'views', request.views_json)
  end
  board_views.views_reconcile(request.cfg_key, old_views, dropped, request.now_ms)
end

local function board_create(r)
  local shards = r.shards == '' and '1' or r.shards
  board_plan_options(r, nil)
  board_store_options(r)
  for _, w in ipairs(r.wanted) do w.createdAtMs = r.now_ms end
  local json = cjson.encode(r.wanted)
  redis.call('HSET', r.cfg_key, 'version', r.new_version, 'shards', shards, 'maxShards', shards, 'createdAtMs', r.now_ms)
  stored_windows.store_windows(r.cfg_key, r.wanted)
  -- A hash kept from before (a reset) may hold a slot due and indexed second of other periods (slot_due_lib).
  redis.call('HDEL', r.cfg_key, 'slotDueSec', 'indexedSec')
  if r.max_items ~= '' then redis.call('HSET', r.cfg_key, 'maxItems', r.max_items) end
  if r.aggregate == '' then r.aggregate = 'sum' end
  board_store_aggregate(r)
  snapshot.store_snapshot_confs(r.cfg_key, r.wanted)
  board_store_views(r, nil, {})
  return board_answer(r, 'created', r.new_version, json, shards, redis.call('HINCRBY', r.cfg_key, 'revision', 1), shards)
end

-- What a window counts, as a string to compare: "<period>s/<interval>s", or a calendar window's
-- period, zone and week start (the same nominal period may be another zone's).
local function window_span_of(w)
  if type(w.calendar) == 'table' then
    return w.calendar.calendar .. ' in ' .. w.calendar.timeZone .. ' from ' .. w.calendar.weekStart
  end
  return w.periodSec .. 's/' .. w.intervalSec .. 's'
end

-- Whether two windows' settings are the same (every field but createdAtMs, a table's field by field):
-- a window option's setting changed alone changes the config.
local function same_settings(a, b)
  if type(a) ~= 'table' or type(b) ~= 'table' then return a == b end
  for field, value in pairs(a) do
    if field ~= 'createdAtMs' and not same_settings(value, b[field]) then return false end
  end
  for field, _ in pairs(b) do
    if field ~= 'createdAtMs' and a[field] == nil then return false end
  end
  return true
end

-- Compares the wanted windows with the stored ones (`plan.by_name`: the stored windows by name) into
-- `plan`: changed, problems (refusals without reset), to_drop (with reset) and resnapshot; sets each
-- wanted window's createdAtMs (kept, or now for a new or remade one).
local function board_compare_windows(r, plan, current)
  for i, w in ipairs(r.wanted) do
    local old = plan.by_name[w.name]
    if current[i] == nil or current[i].name ~= w.name then plan.changed = true end
    if old == nil then
      w.createdAtMs = r.now_ms
      plan.changed = true
    elseif plan.reshard or plan.drop_all or plan.reaggregate or window_span_of(old) ~= window_span_of(w) then
      plan.changed = true
      if r.reset then
        plan.to_drop[#plan.to_drop + 1] = w.name
        w.createdAtMs = r.now_ms
      elseif window_span_of(old) ~= window_span_of(w) then
        plan.problems[#plan.problems + 1] = 'window ' .. w.name .. ' would change from ' .. window_span_of(old) .. ' to ' .. window_span_of(w)
      end
    else
      w.createdAtMs = old.createdAtMs
    end
    if old ~= nil and not snapshot_kept.same_snapshots(old.snapshots, w.snapshots) then
      plan.changed = true
      plan.resnapshot[#plan.resnapshot + 1] = w.name
    end
    if old ~= nil and not same_settings(old, w) then plan.changed = true end
    plan.by_name[w.name] = nil
  end
  for name, _ in pairs(plan.by_name) do
    plan.changed = true
    if r.reset then plan.to_drop[#plan.to_drop + 1] = name else plan.problems[#plan.problems + 1] = 'window ' .. name .. ' would be removed' end
  end
end

-- What changing the stored config `stored` (its windows field, call_lib) into the request
-- takes (see board_compare_windows).
local function board_plan(r, stored)
  local cfg_key = r.cfg_key
  local current = stored_windows.decode_windows(stored)
  local plan = { by_name = {}, problems = {}, to_drop = {}, resnapshot = {}, wanted = r.wanted, compared = {} }
  for _, w in ipairs(current) do plan.by_name[w.name] = w end
  local stored_shards = redis.call('HGET', cfg_key, 'shards')
  if r.shards == '' then r.shards = stored_shards end
  plan.max_shards = math.max(tonumber(redis.call('HGET', cfg_key, 'maxShards') or stored_shards), tonumber(r.shards))
  plan.reshard = stored_shards ~= r.shards
  plan.shards = tonumber(r.shards)
  local stored_aggregate = redis.call('HGET', cfg_key, 'aggregate') or 'sum'
  if r.aggregate == '' then r.aggregate = stored_aggregate end
  plan.reaggregate = stored_aggregate ~= r.aggregate
  local stored_max_items = redis.call('HGET', cfg_key, 'maxItems') or ''
  if r.max_items == '' then r.max_items = stored_max_items end
  plan.stored_views = redis.call('HGET', cfg_key, 'views')
  plan.changed = #current ~= #r.wanted or plan.reshard or plan.reaggregate or r.max_items ~= stored_max_items
    or (plan.stored_views or '[]') ~= r.views_json
  if plan.reshard and not r.reset then
    plan.problems[#plan.problems + 1] = 'shards would change from ' .. stored_shards .. ' to ' .. r.shards
  end
  if plan.reaggregate and not r.reset then
    plan.problems[#plan.problems + 1] = 'aggregate would change from ' .. stored_aggregate .. ' to ' .. r.aggregate
  end
  board_plan_options(r, plan)
  board_compare_windows(r, plan, current)
  for _, check in ipairs(plan.compared) do check(plan) end
  return plan
end

local function board_update(r, plan)
  local cfg_key = r.cfg_key
  local dropped = {}
  for _, name in ipairs(plan.to_drop) do
    window_drop.drop_window(cfg_key, name)
    snapshot_kept.drop_snapshots(cfg_key, name)
    dropped[name] = true
  end
  for _, name in ipairs(plan.resnapshot) do snapshot_kept.drop_snapshots(cfg_key, name) end
  snapshot.store_snapshot_confs(cfg_key, r.wanted)
  local json = cjson.encode(r.wanted)
  redis.call('HSET', cfg_key, 'version', r.new_version, 'shards', r.shards, 'maxShards', plan.max_shards)
  stored_windows.store_windows(cfg_key, r.wanted)
  redis.call('HDEL', cfg_key, 'slotDueSec', 'indexedSec')
  if r.max_items ~= '' then redis.call('HSET', cfg_key, 'maxItems', r.max_items) end
  board_store_aggregate(r)
  board_store_views(r, plan.stored_views, dropped)
  if #plan.to_drop > 0 then for _, dropped_all in ipairs(hooks.windows_dropped) do dropped_all(cfg_key) end end
  board_store_options(r)
  return board_answer(r, 'updated', r.new_version, json, r.shards, redis.call('HINCRBY', cfg_key, 'revision', 1), plan.max_shards)
end

local function board_put(keys, args)
  local cfg_key = keys[1]
  local header, arg = call_state.begin_named_call(keys, args, CALLS.board_put)
  local r = board_request(cfg_key, header, arg)
  -- A board of the same name deleted and not yet dropped (board_drop_step): its keys would show through.
  if redis.call('EXISTS', keyspace.sibling_key(r.cfg_key, 'cfg', 'dropcfg')) == 1 then return board_refusal('dropping', '') end
  local stored = redis.call('HGET', r.cfg_key, 'windows')
  if not stored then return board_create(r) end
  local plan = board_plan(r, stored)
  if #plan.problems > 0 then
    table.sort(plan.problems)
    -- With reset the problems are ones a reset does not lift (an option's refusal): no hint.
    return board_refusal('conflict', table.concat(plan.problems, '; ') .. (r.reset and '' or ' (use ?reset=true to drop that data)'))
  end
  if not plan.changed then
    call_state.keep_options(r.cfg_key)
    -- A config stored before call_lib's text takes it now: the same windows, in less memory.
    local windows = stored_windows.decode_windows(stored)
    if stored_windows.windows_are_json(stored) then stored_windows.store_windows(r.cfg_key, windows) end
    return board_answer(r, 'unchanged', redis.call('HGET', r.cfg_key, 'version'), cjson.encode(windows), r.shards,
      tonumber(redis.call('HGET', r.cfg_key, 'revision') or '0'), plan.max_shards)
  end
  return board_update(r, plan)
end
