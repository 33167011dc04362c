-- module: leagues
-- requires: call_state, hooks, keyspace, ties
-- leagues_lib: `leagues` boards, a board option (src/ranking/options/leagues/). Each period of one
-- calendar window of the board, an item's first event places it in the last cohort of its tier (the
-- first with room: cohorts of a period only fill, in order), in the same call as the write
-- (results_changed). Its league score is its amount in the period's slot (sum boards), mirrored into
-- its cohort by every change that is not expiry. When the period has ended, the rollover moves each
-- cohort's best `promote` members a tier up and its worst `relegate` a tier down, once: roll_step walks
-- the cohorts in parts within a budget of units from a cursor stored in the same call, and a member
-- moves only while its placement (`at`) still names the cohort, which its move clears in the same call;
-- so steps may repeat, race or resume after a crash. A placement in a later period rolls the item alone
-- out of its previous cohort first (roll_member), so its tier is always the one its rollover gives.
-- A cohort ranks by the board's `ties`; with `first`, equal scores in the order members reached them. The
-- window's marks move on once the period ends (its drain, the next events) while the rollover ranks the
-- closed period, so each mirrored change draws a mark (ties.drawn_mark, in the window's own call: members
-- compare as the window's marks did), kept in the member <mark><item> (ties.marked_page) and placement.
-- On a sharded board each shard keeps the leagues of its own items under its own tag (the keys below,
-- on every shard's copy of the config): an item's placement, its cohort and the cohort's members share
-- one tag, so a placement or a move stays one call; each shard fills its own cohorts and rolls them once
-- per period (its own cursor and `open`); the app numbers them apart (cohortNumber, leagues.store.ts).
-- KEYS: 0
-- Keys: <tag>:lg:tier          hash  item -> tier (1-based; absent: the lowest)
--       <tag>:lg:at            hash  item -> "<period>:<tier>:<cohort>[:<mark>]": its latest placement,
--                                    till rolled (the mark: its cohort member's, on a `ties: first` board)
--       <tag>:lg:open          zset  period starts (unix s) with placements not rolled yet
--       <tag>:lg:kept          zset  rolled periods whose moves are kept (the newest LEAGUE_PERIODS_KEPT)
--       <tag>:lg:<p>:fill      hash  tier -> items placed in it this period
--       <tag>:lg:<p>:c:<t>:<c> zset  item (<mark><item> on a `ties: first` board) -> league score: one
--                                    cohort (gone once rolled)
--       <tag>:lg:<p>:roll      hash  tier, cohort, offset: the rollover's cursor; done: 1 once all rolled
--       <tag>:lg:<p>:moves     list  item<US>fromTier<US>toTier<US>cohort<US>rank, in the order rolled
-- Config hash field: leagues (the setting's JSON; absent: off).

call_state.config_field_add('leagues', 'leagues')

local SEP = '\31'
local PERIODS_KEPT = 12

-- Each config hash's setting asked in this call (false: none).
local known = { seq = 0, by = {} }

-- The board's setting: window, size, tiers (their count), promote, relegate, and its keys' prefix.
local function setting_of(cfg_key)
  local by = call_state.call_cache(known)
  local setting = by[cfg_key]
  if setting == nil then
    local json = call_state.config_field(cfg_key, 'leagues')
    setting = false
    if json then
      setting = cjson.decode(json)
      setting.tier_count = #setting.tiers
      setting.base = keyspace.sibling_key(cfg_key, 'cfg', 'lg:')
      setting.top_key = keyspace.sibling_key(cfg_key, 'cfg', setting.window .. ':top')
      setting.slots_key = keyspace.sibling_key(cfg_key, 'cfg', setting.window .. ':slots')
      setting.width = call_state.config_field(cfg_key, 'ties') == 'first' and ties.mark_width(setting.top_key) or 0
    end
    by[cfg_key] = setting
  end
  return setting
end

local function cohort_key(s, period, tier, cohort)
  return s.base .. period .. ':c:' .. tier .. ':' .. cohort
end

-- "<period>:<tier>:<cohort>[:<mark>]" -> period, tier, cohort (numbers), mark ('': shared ties), or nil.
local function parse_at(at)
  if not at then return nil end
  local p, t, c, mark = string.match(at, '^(%d+):(%d+):(%d+):?(%d*)$')
  return tonumber(p), tonumber(t), tonumber(c), mark
end

-- A placement's value, its member's mark after it on a `ties: first` board.
local function at_of(period, tier, cohort, mark)
  local at = period .. ':' .. tier .. ':' .. cohort
  return (mark and mark ~= '') and at .. ':' .. mark or at
end

-- A new mark for a member reaching a league score now ('' on a board of shared ties).
local function new_mark(s)
  return s.width > 0 and ties.drawn_mark(s.top_key, nil) or ''
end

-- A cohort's bounds for the rollover. Shared ties: its lowest score still promoted (its `promote`th
-- highest) and highest still relegated (its `relegate`th lowest): a member is promoted when it scores
-- at least the first (its rank is within `promote`), else relegated when it scores at most the second
-- (1 + the members below it is within `relegate`); fewer members than `promote`: all of them are.
-- Strict: its size, the places decide. O(log n), so a cohort rolled in parts moves each member as the
-- whole cohort's ranks say.
local function cohort_bounds(s, key)
  if s.width > 0 then return { size = redis.call('ZCARD', key) } end
  local bounds = { promote = math.huge, relegate = -math.huge }
  if s.promote > 0 then
    bounds.promote = tonumber(redis.call('ZRANGE', key, s.promote - 1, s.promote - 1, 'REV', 'WITHSCORES')[2]) or -math.huge
  end
  if s.relegate > 0 then
    bounds.relegate = tonumber(redis.call('ZRANGE', key, s.relegate - 1, s.relegate - 1, 'WITHSCORES')[2]) or math.huge
  end
  return bounds
end

-- A member's tier after the rollover ({ score, rank }; see cohort_bounds): up, else down, else kept.
local function moved_tier(s, tier, member, bounds)
  local up, down = member.rank <= s.promote, member.rank > (bounds.size or 0) - s.relegate
  if not bounds.size then
    up, down = tonumber(member.score) >= bounds.promote, tonumber(member.score) <= bounds.relegate
  end
  if up and tier < s.tier_count then return tier + 1 end
  if down and tier > 1 then return tier - 1 end
  return tier
end

-- Sends each of `commands` (name, key, then its arguments) that holds arguments: one call each, so a
-- part of a cohort costs a few commands, not a few per member.
local function send_all(commands)
  for _, command in ipairs(commands) do
    if #command > 2 then redis.call(unpack(command)) end
  end
end

-- Moves the tiers of `members` ({ item, score, rank } each) of one cohort of a closed period and lists
-- their moves. A member whose placement (`at`) is no longer this cohort was rolled already (alone, by
-- its next placement, or by an earlier part) and is skipped: each member moves exactly once.
local function roll_members(s, period, tier, cohort, members, bounds)
  local items = {}
  for n, member in ipairs(members) do items[n] = member.item end
  local ats = redis.call('HMGET', s.base .. 'at', unpack(items))
  local here = at_of(period, tier, cohort)
  local placed, up, lowest = { 'HDEL', s.base .. 'at' }, { 'HSET', s.base .. 'tier' }, { 'HDEL', s.base .. 'tier' }
  local moves = { 'RPUSH', s.base .. period .. ':moves' }
  for n, member in ipairs(members) do
    if ats[n] and string.match(ats[n], '^%d+:%d+:%d+') == here then
      local to = moved_tier(s, tier, member, bounds)
      placed[#placed + 1] = member.item
      if to > 1 then
        up[#up + 1], up[#up + 2] = member.item, to
      else
        lowest[#lowest + 1] = member.item
      end
      if to ~= tier then moves[#moves + 1] = table.concat({ member.item, tier, to, cohort, member.rank }, SEP) end
    end
  end
  send_all({ placed, up, lowest, moves })
end

-- Rolls the members at places offset.. of one cohort of a closed period (at most `count`, best first):
-- O(log n + count), a few commands. Answers the members read; fewer than `count`: the cohort is done
-- and goes. The cohort does not change once its period closed (league_changed), so the places and
-- ranks hold across parts.
local function roll_part(s, period, tier, cohort, offset, count)
  local key = cohort_key(s, period, tier, cohort)
  local rows, ranks = ties.marked_page(key, offset, count, s.width)
  local members = {}
  for n = 1, #ranks do members[n] = { item = rows[2 * n - 1], score = rows[2 * n], rank = ranks[n] } end
  if #members > 0 then roll_members(s, period, tier, cohort, members, cohort_bounds(s, key)) end
  if #members < count then redis.call('UNLINK', key) end
  return #members
end

-- Rolls one member of a cohort of a closed period ahead of the cohort's parts: its next placement
-- needs its tier now. O(log n).
local function roll_member(s, period, tier, cohort, item, mark)
  local key = cohort_key(s, period, tier, cohort)
  local score, rank = ties.marked_standing(key, mark .. item, s.width)
  if not score then return end
  roll_members(s, period, tier, cohort, { { item = item, score = score, rank = rank } }, cohort_bounds(s, key))
end

-- Places `item` (its first event of `period`, with `amount` so far) in the last cohort of its tier,
-- after rolling it out of its previous cohort when no rollover step has yet.
local function place(s, item, period, at, amount)
  local p0, t0, c0, mark0 = parse_at(at)
  if p0 and p0 < period then roll_member(s, p0, t0, c0, item, mark0) end
  local tier = math.min(tonumber(redis.call('HGET', s.base .. 'tier', item)) or 1, s.tier_count)
  local placed = redis.call('HINCRBY', s.base .. period .. ':fill', tier, 1)
  local cohort = math.floor((placed - 1) / s.size) + 1
  local mark = new_mark(s)
  redis.call('ZADD', cohort_key(s, period, tier, cohort), amount, mark .. item)
  redis.call('HSET', s.base .. 'at', item, at_of(period, tier, cohort, mark))
  redis.call('ZADD', s.base .. 'open', 'NX', period, period)
end

-- Mirrors a placed item's league score into its cohort of the current period (XX, or no member: a
-- rolled cohort stays gone). Strict ties: a new score is reached now, so it takes a new mark (member
-- and placement), an unchanged one keeps its place.
local function mirror(s, period, tier, cohort, item, mark, amount)
  local key = cohort_key(s, period, tier, cohort)
  if s.width == 0 then
    redis.call('ZADD', key, 'XX', amount, item)
    return
  end
  local score = redis.call('ZSCORE', key, mark .. item)
  if not score or tonumber(score) == amount then return end
  local new = new_mark(s)
  redis.call('ZREM', key, mark .. item)
  redis.call('ZADD', key, amount, new .. item)
  redis.call('HSET', s.base .. 'at', item, at_of(period, tier, cohort, new))
end

-- Hook: a change of the league window's results that is not expiry places the item (its first event
-- of the period: the newest slot) or mirrors its amount in that slot into its cohort.
local function league_changed(top_key, item)
  if call_state.CALL.draining then return end
  local s = setting_of(call_state.cfg_key_of_top(top_key))
  if not s or top_key ~= s.top_key then return end
  local newest = redis.call('ZRANGE', s.slots_key, -1, -1)[1]
  if not newest then return end
  local period = tonumber(newest)
  local amount = redis.call('HGET', keyspace.sibling_key(s.slots_key, 'slots', 'slot:' .. newest), item)
  local at = redis.call('HGET', s.base .. 'at', item)
  local p, t, c, mark = parse_at(at)
  if p == period then
    -- A period whose rollover began (an instance whose clock is past its end) keeps its cohorts as they
    -- are: the parts still to roll rank members by the places the first part saw.
    if redis.call('EXISTS', s.base .. p .. ':roll') == 1 then return end
    mirror(s, p, t, c, item, mark, tonumber(amount or 0))
  elseif amount then
    place(s, item, period, at, amount)
  end
end

-- Cohorts of each tier in `period` (placed / size, rounded up; absent: none), from one read of its fill.
local function cohort_counts(s, period)
  local fill, counts = redis.call('HGETALL', s.base .. period .. ':fill'), {}
  for i = 1, #fill, 2 do counts[tonumber(fill[i])] = math.ceil(tonumber(fill[i + 1]) / s.size) end
  return counts
end

-- Ends a period's rollover: its record says done, its moves are kept among the newest PERIODS_KEPT.
local function roll_done(s, period)
  local base = s.base .. period .. ':'
  redis.call('HSET', base .. 'roll', 'done', 1)
  redis.call('UNLINK', base .. 'fill')
  redis.call('ZREM', s.base .. 'open', period)
  redis.call('ZADD', s.base .. 'kept', period, period)
  local old = redis.call('ZRANGE', s.base .. 'kept', 0, -PERIODS_KEPT - 1)
  for _, gone in ipairs(old) do redis.call('UNLINK', s.base .. gone .. ':moves', s.base .. gone .. ':roll') end
  if #old > 0 then redis.call('ZREM', s.base .. 'kept', unpack(old)) end
end

-- One bounded step of a closed period's rollover: about `budget` units from the cursor on, a member one
-- and each part of a cohort `part_units` more (its own commands: page, bounds, the moves' writes), at
-- least one member; stores the cursor (tier, cohort, offset: the next member's place) in the same call,
-- so a step may repeat, race or resume after a crash. Answers whether it is done, and the units left.
local function roll_step(s, period, budget, part_units)
  local record = s.base .. period .. ':roll'
  local cursor = redis.call('HMGET', record, 'done', 'tier', 'cohort', 'offset')
  if cursor[1] or not redis.call('ZSCORE', s.base .. 'open', period) then return true, budget end
  if budget <= 0 then return false, budget end
  local tier, cohort, offset = tonumber(cursor[2]) or 1, tonumber(cursor[3]) or 1, tonumber(cursor[4]) or 0
  local counts = cohort_counts(s, period)
  local count = counts[tier] or 0
  local room = math.max(1, budget - part_units)
  while room > 0 do
    if cohort > count then
      if tier >= s.tier_count then
        roll_done(s, period)
        return true, budget
      end
      tier, cohort, offset = tier + 1, 1, 0
      count = counts[tier] or 0
    else
      local read = roll_part(s, period, tier, cohort, offset, room)
      if read < room then cohort, offset = cohort + 1, 0 else offset = offset + read end
      budget = budget - read - part_units
      room = budget - part_units
    end
  end
  redis.call('HSET', record, 'tier', tier, 'cohort', cohort, 'offset', offset)
  return false, budget
end

-- The keys of one period ("<tag>:lg:<p>:") of a board being dropped, at most about `budget`: each
-- tier's cohorts from the last down, its count in the fill hash lowered in the same call (the progress
-- is the data, as board_drop_step's). Answers the budget left and whether the period is gone.
local function drop_period(base, size, budget)
  local fill = redis.call('HGETALL', base .. 'fill')
  for i = 1, #fill, 2 do
    local count = math.ceil(tonumber(fill[i + 1]) / size)
    local kept = math.max(0, count - math.max(1, budget))
    local names = {}
    for cohort = count, kept + 1, -1 do names[#names + 1] = base .. 'c:' .. fill[i] .. ':' .. cohort end
    if #names > 0 then redis.call('UNLINK', unpack(names)) end
    budget = budget - #names
    if kept > 0 then
      redis.call('HSET', base .. 'fill', fill[i], kept * size)
      return budget, false
    end
    redis.call('HDEL', base .. 'fill', fill[i])
  end
  redis.call('UNLINK', base .. 'fill', base .. 'roll', base .. 'moves')
  return budget - 3, true
end

-- Hook board_dropped: the leagues' keys of a deleted board (its setting in the renamed config), the
-- periods with placements not rolled, then those whose moves are kept, then the item maps.
local function leagues_dropped(cfg_key, drop_key, budget)
  local json = redis.call('HGET', drop_key, 'leagues')
  if not json then return budget, true end
  local size, base = cjson.decode(json).size, keyspace.sibling_key(cfg_key, 'cfg', 'lg:')
  for _, index in ipairs({ base .. 'open', base .. 'kept' }) do
    local period = redis.call('ZRANGE', index, 0, 0)[1]
    while period do
      if budget <= 0 then return budget, false end
      local gone
      budget, gone = drop_period(base .. period .. ':', size, budget)
      if not gone then return budget, false end
      redis.call('ZREM', index, period)
      period = redis.call('ZRANGE', index, 0, 0)[1]
    end
  end
  redis.call('UNLINK', base .. 'tier', base .. 'at', base .. 'open', base .. 'kept')
  return budget - 4, true
end

-- Whether the board's leagues are watched: its window's changes must reach league_changed.
local function watches(top_key)
  local s = setting_of(call_state.cfg_key_of_top(top_key))
  return s ~= false and top_key == s.top_key
end

-- Whether two settings are the same (JSON objects: their fields compared, not their encodings).
local function same_setting(a, b)
  if a.window ~= b.window or a.size ~= b.size or a.promote ~= b.promote or a.relegate ~= b.relegate then return false end
  if #a.tiers ~= #b.tiers then return false end
  for i = 1, #a.tiers do
    if a.tiers[i] ~= b.tiers[i] then return false end
  end
  return true
end

-- The league state is keyed by the window's periods and kept under each item's shard's tag: a PUT that
-- would change the shards of a board holding leagues (items would move between shards, their tiers
-- not), or remove, remake or reset the window (its data dropped, `reset`), is refused even with reset,
-- so no state outlives its window or its shard. Checked here, in the PUT's own call, as well as by the
-- service: a PUT checked before another one stored the leagues would pass that check. `stored`: the
-- leagues were stored before this PUT.
local function leagues_board_problems(s, plan, stored)
  if stored and plan.reshard then
    plan.problems[#plan.problems + 1] = 'leagues keep each item\'s tier in its shard: shards cannot change '
      .. '(delete the board to start again)'
  end
  plan.compared[#plan.compared + 1] = function()
    local kept = false
    for _, w in ipairs(plan.wanted) do
      if w.name == s.window then kept = type(w.calendar) == 'table' end
    end
    for _, name in ipairs(plan.to_drop) do
      if name == s.window then kept = false end
    end
    if not kept then
      plan.problems[#plan.problems + 1] = 'window ' .. s.window .. ' holds the leagues: it cannot be removed, '
        .. 'changed or reset (delete the board to start again)'
    end
  end
end

-- A board PUT: absent, the stored setting; a change of a stored one is refused (its state is keyed by it).
local function leagues_planned(cfg_key, settings, _, plan)
  local stored = plan ~= nil and redis.call('HGET', cfg_key, 'leagues') or false
  if type(settings.leagues) ~= 'table' then
    settings.leagues = stored and cjson.decode(stored) or nil
    if plan and stored then leagues_board_problems(settings.leagues, plan, true) end
    return
  end
  if not plan then return end
  leagues_board_problems(settings.leagues, plan, stored)
  if stored and not same_setting(settings.leagues, cjson.decode(stored)) then
    plan.problems[#plan.problems + 1] = 'leagues cannot change once set (delete the board to start again)'
  elseif not stored then
    plan.changed = true
  end
end

local function leagues_stored(cfg_key, settings)
  call_state.call_cache(known)[cfg_key] = nil
  if type(settings.leagues) ~= 'table' then
    redis.call('HDEL', cfg_key, 'leagues')
    return false
  end
  if not redis.call('HGET', cfg_key, 'leagues') then redis.call('HSET', cfg_key, 'leagues', cjson.encode(settings.leagues)) end
  return true
end

hooks.register_all('leagues', { 'results_changed', league_changed, 'watches', watches,
  'config_planned', leagues_planned, 'config_stored', leagues_stored,
  'board_dropped', leagues_dropped })

hooks.export_all(leagues, { 'setting_of', setting_of, 'cohort_key', cohort_key, 'parse_at', parse_at,
  'roll_step', roll_step })
