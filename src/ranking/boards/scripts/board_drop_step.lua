-- requires: board_views, call_state, hooks, keyspace, metrics, reader, stored_windows
-- board_drop_step: unlinks at most about `budget` keys of a shard detached by board_delete, so no call
-- holds Redis long however many slots, segments and snapshots the board had. The progress is the data
-- itself: each index (a window's slots and snapshots, the segment indexes) loses the members whose keys
-- went in the same call, so a step is safe to repeat, to run on two instances at once and to resume
-- after a restart. Segments go first (each segment's windows, history and views, then its entries in
-- the segment indexes), then the board's windows, then the options' own keys (hooks_lib's
-- board_dropped: the groups of the group boards over its windows among them), then the shard's own keys
-- and last the renamed config.
-- Keys: cfg (board config hash; its renamed copy "<tag>:dropcfg" names the windows and views)
-- Args (reader.read_call, CALLS.board_drop_step): the header (no config version, now 0: a step reads no
--   clock, no windows), then budget_keys: the call's budget, each key unlinked and each window looked
--   into (DROP_WINDOW_LOOK) spending it (a few more when a window's last keys go together)
-- Reply (reader.answer, CALLS.board_drop_step): done (1: nothing of the shard is left), unlinked (the
--   budget spent: keys and looks)

local DROP_UNLINK_CHUNK = 500

-- Answers how many of `names` existed: a step is charged the keys it removed, so keys an earlier step
-- removed cost a later one nothing and every step gets further than the last.
local function drop_unlink(names)
  local removed = 0
  for from = 1, #names, DROP_UNLINK_CHUNK do
    removed = removed + redis.call('UNLINK', unpack(names, from, math.min(from + DROP_UNLINK_CHUNK - 1, #names)))
  end
  return removed
end

-- Pops up to budget / #prefixes members of the zset `index_key` and unlinks prefix .. member for each
-- prefix. Answers the budget left and whether the index is empty.
local function drop_indexed(index_key, prefixes, budget)
  local want = math.max(1, math.floor(budget / #prefixes))
  local popped = redis.call('ZPOPMIN', index_key, want)
  local names = {}
  for i = 1, #popped, 2 do
    for _, prefix in ipairs(prefixes) do names[#names + 1] = prefix .. popped[i] end
  end
  drop_unlink(names)
  return budget - #names, #popped / 2 < want
end

-- A calendar window's pending archives (a hash, a few fields): each field's rows, ranks (a tiebreak
-- board's: archive_lib), snapshot and record.
local function drop_archive_fields(base, budget)
  local fields = redis.call('HKEYS', base .. 'arch')
  local names, taken = {}, {}
  for i = 1, math.min(#fields, math.max(1, math.floor(budget / 4))) do
    local at = fields[i]
    names[#names + 1], names[#names + 2], names[#names + 3] = base .. 'archrows:' .. at, base .. 'archrank:' .. at, base .. 'snap:' .. at
    names[#names + 1] = base .. 'archidx:' .. at
    taken[#taken + 1] = fields[i]
  end
  if #taken > 0 then
    drop_unlink(names)
    redis.call('HDEL', base .. 'arch', unpack(taken))
  end
  return budget - #names, #taken == #fields
end

-- What a look into one window weighs beside the keys it removes: its two ZPOPMINs and HKEYS, and the
-- UNLINK of its 20 fixed names, most of them absent (a key that exists is charged once removed). A
-- board of many small segments (the worst-case harness's, 1 500 a shard at full size: ~110 keys and
-- 64 window looks each) ran ~2 000 names and 515 commands a step of 1 000 keys removed; the looks
-- charged, a step's names and commands follow its budget whatever the segments hold. A segment leaves
-- the indexes once its windows are gone, so a step looks again only into the one it stopped in (8
-- windows at most); the board's windows and its metrics' a step emptied are noted in the renamed
-- config (drop_windows_of), so no step looks into them again (a board of 8 metrics looked into its 64
-- windows and tried ~1 300 names every step until the options' keys were gone).
local DROP_WINDOW_LOOK = 12

-- Every key of one window ("<tag>:<window>:" or a segment's "<tag>:<window>~<segment>:"): its slot
-- hashes and contributions, its snapshots and archives, then its fixed keys. Answers budget, done.
local function drop_window_keys(base, budget)
  local empty
  budget, empty = drop_indexed(base .. 'slots', { base .. 'slot:', base .. 'act:' }, budget)
  if not empty or budget <= 0 then return budget, false end
  budget, empty = drop_indexed(base .. 'snaps', { base .. 'snap:', base .. 'archidx:' }, budget)
  if not empty or budget <= 0 then return budget, false end
  budget, empty = drop_archive_fields(base, budget)
  if not empty then return budget, false end
  local removed = drop_unlink({ base .. 'top', base .. 'byactor', base .. 'pairs', base .. 'byitem', base .. 'order',
    base .. 'marks', base .. 'prev', base .. 'mark', base .. 'arch', base .. 'newest', base .. 'held',
    base .. 'tborder', base .. 'tbkept', base .. 'drain', base .. 'archshown', base .. 'archheld', base .. 'archpend',
    base .. 'exheld', base .. 'snapnext', base .. 'prevnext' })
  return budget - removed, true
end

-- The windows of `suffix` ('' for the board's, '~<segment>' for a segment's, '~@<metric>' for a metric's),
-- then its views' keys. Those of the board and its metrics go in order, how many of them went (their views
-- too: one more) noted in the renamed config's field "dropped<suffix>".
local function drop_windows_of(cfg_key, windows, views, suffix, budget)
  local drop_key, noted = keyspace.sibling_key(cfg_key, 'cfg', 'dropcfg'), 'dropped' .. suffix
  local segment = suffix ~= '' and string.sub(suffix, 1, 2) ~= '~@'
  local gone = segment and 0 or tonumber(redis.call('HGET', drop_key, noted) or '0')
  if gone > #windows then return budget, true end
  for w = gone + 1, #windows do
    local base, done = keyspace.sibling_key(cfg_key, 'cfg', windows[w].name .. suffix .. ':'), nil
    budget, done = drop_window_keys(base, budget - DROP_WINDOW_LOOK)
    if not done then return budget, false end
    if not segment then redis.call('HSET', drop_key, noted, w) end
  end
  for _, view in ipairs(views) do board_views.views_api().drop_keys(cfg_key, view.name .. suffix) end
  if not segment then redis.call('HSET', drop_key, noted, #windows + 1) end
  return budget - 4 * #views, true
end

-- Segments of the segment indexes, one at a time: removed from every index once its keys are gone.
local function drop_segments(cfg_key, windows, views, budget)
  local indexes = { keyspace.sibling_key(cfg_key, 'cfg', 'segdue'), keyspace.sibling_key(cfg_key, 'cfg', 'seghist'), keyspace.sibling_key(cfg_key, 'cfg', 'segs'),
    keyspace.sibling_key(cfg_key, 'cfg', 'segnames') }
  for _, index in ipairs(indexes) do
    while budget > 0 do
      local segment = redis.call('ZRANGE', index, 0, 0)[1]
      if not segment then break end
      local done
      budget, done = drop_windows_of(cfg_key, windows, views, '~' .. segment, budget)
      if not done then return budget, false end
      for _, each in ipairs(indexes) do redis.call('ZREM', each, segment) end
    end
    if budget <= 0 then return budget, false end
  end
  return budget, true
end

local function board_drop_step(keys, args)
  local cfg_key = keys[1]
  local header, arg = call_state.begin_named_call(keys, args, CALLS.board_drop_step)
  local drop_key = keyspace.sibling_key(cfg_key, 'cfg', 'dropcfg')
  local budget = tonumber(arg.budget_keys)
  if redis.call('EXISTS', drop_key) == 0 then return reader.answer(CALLS.board_drop_step, { done = 1, unlinked = 0 }) end
  local windows = stored_windows.decode_windows(redis.call('HGET', drop_key, 'windows'))
  local views = cjson.decode(redis.call('HGET', drop_key, 'views') or '[]')
  local left, done = drop_segments(cfg_key, windows, views, budget)
  -- A metric but the first keeps the windows as "<window>~@<metric>:" keys (metrics_lib).
  local metric_names = metrics.names_of(redis.call('HGET', drop_key, 'metrics'))
  for i = 2, #metric_names do
    if done then left, done = drop_windows_of(cfg_key, windows, {}, '~@' .. metric_names[i], left) end
  end
  if done then left, done = drop_windows_of(cfg_key, windows, views, '', left) end
  for _, dropped in ipairs(hooks.board_dropped) do
    if done then left, done = dropped(cfg_key, drop_key, left) end
  end
  if not done then return reader.answer(CALLS.board_drop_step, { done = 0, unlinked = budget - left }) end
  drop_unlink({ keyspace.sibling_key(cfg_key, 'cfg', 'likes'), keyspace.sibling_key(cfg_key, 'cfg', 'likesegs'),
    keyspace.sibling_key(cfg_key, 'cfg', 'liketb'), keyspace.sibling_key(cfg_key, 'cfg', 'segs'), keyspace.sibling_key(cfg_key, 'cfg', 'segdue'), keyspace.sibling_key(cfg_key, 'cfg', 'seghist'),
    keyspace.sibling_key(cfg_key, 'cfg', 'segnames'), keyspace.sibling_key(cfg_key, 'cfg', 'blocked'), keyspace.sibling_key(cfg_key, 'cfg', 'segclaims'),
    keyspace.sibling_key(cfg_key, 'cfg', 'weights'), keyspace.sibling_key(cfg_key, 'cfg', 'groups'), keyspace.sibling_key(cfg_key, 'cfg', 'aliases'),
    keyspace.sibling_key(cfg_key, 'cfg', 'aliasruns'), keyspace.sibling_key(cfg_key, 'cfg', 'aliasof'),
    keyspace.sibling_key(cfg_key, 'cfg', 'bygroup'), keyspace.sibling_key(cfg_key, 'cfg', 'modgroups'),
    keyspace.sibling_key(cfg_key, 'cfg', 'modeff'), keyspace.sibling_key(cfg_key, 'cfg', 'grouparch'),
    keyspace.sibling_key(cfg_key, 'cfg', 'bygrouparch'), keyspace.sibling_key(cfg_key, 'cfg', 'histheld'),
    keyspace.sibling_key(cfg_key, 'cfg', 'segheld'), keyspace.sibling_key(cfg_key, 'cfg', 'segtext'),
    keyspace.sibling_key(cfg_key, 'cfg', 'grouplag'), keyspace.sibling_key(cfg_key, 'cfg', 'lagends'),
    keyspace.sibling_key(cfg_key, 'cfg', 'exidx'), drop_key })
  return reader.answer(CALLS.board_drop_step, { done = 1, unlinked = budget - left + 21 })
end
