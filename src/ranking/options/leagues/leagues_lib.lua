-- module: leagues
-- requires: call_state, hooks, keyspace
-- leagues_lib: `leagues` boards, a board option (src/ranking/options/leagues/). Each period of one
-- calendar window of the board, an item's first event places it in the last cohort of its tier (the
-- first with room: cohorts of a period only fill, in order), in the same call as the write
-- (results_changed). Its league score is its amount in the period's slot (sum boards), mirrored into
-- its cohort by every change that is not expiry. When the period has ended, roll_cohort moves each
-- cohort's best `promote` members a tier up and its worst `relegate` a tier down, once: a cohort
-- rolled is marked in the same call (the step marker), so steps may repeat, race or resume after a
-- crash. roll_step walks the cohorts from a cursor within a budget; a placement in a later period
-- rolls the item's previous cohort first, so its tier is always the one its rollover gives.
-- Unsharded boards only (leagues.option.ts refuses a sharded one): every key is under the board's tag.
-- KEYS: 0
-- Keys: <tag>:lg:tier          hash  item -> tier (1-based; absent: the lowest)
--       <tag>:lg:at            hash  item -> "<period>:<tier>:<cohort>": its latest placement, till rolled
--       <tag>:lg:open          zset  period starts (unix s) with placements not rolled yet
--       <tag>:lg:kept          zset  rolled periods whose moves are kept (the newest LEAGUE_PERIODS_KEPT)
--       <tag>:lg:<p>:fill      hash  tier -> items placed in it this period
--       <tag>:lg:<p>:c:<t>:<c> zset  item -> league score: one cohort (gone once rolled)
--       <tag>:lg:<p>:rolled    set   "<t>:<c>" of the cohorts rolled (the step markers)
--       <tag>:lg:<p>:roll      hash  tier, cohort: the rollover's cursor; done: 1 once every cohort rolled
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
    end
    by[cfg_key] = setting
  end
  return setting
end

local function cohort_key(s, period, tier, cohort)
  return s.base .. period .. ':c:' .. tier .. ':' .. cohort
end

-- "<period>:<tier>:<cohort>" -> period, tier, cohort (numbers); nil for nil.
local function parse_at(at)
  if not at then return nil end
  local p, t, c = string.match(at, '^(%d+):(%d+):(%d+)$')
  return tonumber(p), tonumber(t), tonumber(c)
end

-- Ranks of `rows` (ZREVRANGE WITHSCORES: item, score, ...), best first: competition ranks (ties share).
local function ranks_of(rows)
  local ranks, rank, previous = {}, 0, nil
  for i = 1, #rows, 2 do
    local score = tonumber(rows[i + 1])
    if score ~= previous then rank, previous = (i + 1) / 2, score end
    ranks[#ranks + 1] = rank
  end
  return ranks
end

-- A member's tier after the rollover: promoted when its rank is within `promote`, else relegated when
-- its place from the bottom (1 + members strictly below) is within `relegate`.
local function moved_tier(s, tier, rank, from_bottom)
  if rank <= s.promote and tier < s.tier_count then return tier + 1 end
  if from_bottom <= s.relegate and tier > 1 then return tier - 1 end
  return tier
end

-- Members' places from the bottom (1 + members strictly below), for `rows` best first.
local function bottom_places(rows)
  local places, count, previous, place = {}, #rows / 2, nil, 0
  for i = #rows - 1, 1, -2 do
    local score = tonumber(rows[i + 1])
    if score ~= previous then place, previous = count - (i - 1) / 2, score end
    places[(i + 1) / 2] = place
  end
  return places
end

-- Sends each of `commands` (name, key, then its arguments) that holds arguments: one call each, so a
-- cohort of LEAGUE_SIZE.max costs a few commands, not a few per member.
local function send_all(commands)
  for _, command in ipairs(commands) do
    if #command > 2 then redis.call(unpack(command)) end
  end
end

-- Rolls one cohort of a closed period, once: its members' tiers move, the moves are listed, the cohort
-- goes. Answers its members (0: rolled before).
local function roll_cohort(s, period, tier, cohort)
  local base = s.base .. period .. ':'
  if redis.call('SADD', base .. 'rolled', tier .. ':' .. cohort) == 0 then return 0 end
  local key = cohort_key(s, period, tier, cohort)
  local rows = redis.call('ZRANGE', key, 0, -1, 'REV', 'WITHSCORES')
  if #rows == 0 then return 0 end
  local ranks, bottoms = ranks_of(rows), bottom_places(rows)
  local items = {}
  for i = 1, #rows, 2 do items[#items + 1] = rows[i] end
  local ats = redis.call('HMGET', s.base .. 'at', unpack(items))
  local here = period .. ':' .. tier .. ':' .. cohort
  local placed, up, lowest, moves = { 'HDEL', s.base .. 'at' }, { 'HSET', s.base .. 'tier' }, { 'HDEL', s.base .. 'tier' }, { 'RPUSH', base .. 'moves' }
  for n, item in ipairs(items) do
    local to = moved_tier(s, tier, ranks[n], bottoms[n])
    if ats[n] == here then placed[#placed + 1] = item end
    if to > 1 then
      up[#up + 1], up[#up + 2] = item, to
    else
      lowest[#lowest + 1] = item
    end
    if to ~= tier then moves[#moves + 1] = table.concat({ item, tier, to, cohort, ranks[n] }, SEP) end
  end
  send_all({ placed, up, lowest, moves })
  redis.call('UNLINK', key)
  return #items
end

-- Places `item` (its first event of `period`, with `amount` so far) in the last cohort of its tier,
-- after rolling its previous cohort when no rollover step has yet.
local function place(s, item, period, at, amount)
  local p0, t0, c0 = parse_at(at)
  if p0 and p0 < period then roll_cohort(s, p0, t0, c0) end
  local tier = math.min(tonumber(redis.call('HGET', s.base .. 'tier', item)) or 1, s.tier_count)
  local placed = redis.call('HINCRBY', s.base .. period .. ':fill', tier, 1)
  local cohort = math.floor((placed - 1) / s.size) + 1
  redis.call('ZADD', cohort_key(s, period, tier, cohort), amount, item)
  redis.call('HSET', s.base .. 'at', item, period .. ':' .. tier .. ':' .. cohort)
  redis.call('ZADD', s.base .. 'open', 'NX', period, period)
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
  local p, t, c = parse_at(at)
  if p == period then
    -- XX: a retraction after a rollover step took the cohort must not make it again.
    redis.call('ZADD', cohort_key(s, p, t, c), 'XX', amount or 0, item)
  elseif amount then
    place(s, item, period, at, amount)
  end
end

-- Cohorts of `tier` in `period` (placed / size, rounded up).
local function cohort_count(s, period, tier)
  local placed = tonumber(redis.call('HGET', s.base .. period .. ':fill', tier)) or 0
  return math.ceil(placed / s.size)
end

-- Ends a period's rollover: its record says done, its moves are kept among the newest PERIODS_KEPT.
local function roll_done(s, period)
  local base = s.base .. period .. ':'
  redis.call('HSET', base .. 'roll', 'done', 1)
  redis.call('UNLINK', base .. 'fill', base .. 'rolled')
  redis.call('ZREM', s.base .. 'open', period)
  redis.call('ZADD', s.base .. 'kept', period, period)
  local old = redis.call('ZRANGE', s.base .. 'kept', 0, -PERIODS_KEPT - 1)
  for _, gone in ipairs(old) do redis.call('UNLINK', s.base .. gone .. ':moves', s.base .. gone .. ':roll') end
  if #old > 0 then redis.call('ZREM', s.base .. 'kept', unpack(old)) end
end

-- One bounded step of a closed period's rollover: rolls cohorts from the cursor till about `budget`
-- members, and stores the cursor in the same call. Answers whether the rollover is done.
local function roll_step(s, period, budget)
  local record = s.base .. period .. ':roll'
  local cursor = redis.call('HMGET', record, 'done', 'tier', 'cohort')
  if cursor[1] then return true end
  if not redis.call('ZSCORE', s.base .. 'open', period) then return true end
  local tier, cohort = tonumber(cursor[2]) or 1, tonumber(cursor[3]) or 1
  local count = cohort_count(s, period, tier)
  while budget > 0 do
    if cohort > count then
      if tier >= s.tier_count then
        roll_done(s, period)
        return true
      end
      tier, cohort = tier + 1, 1
      count = cohort_count(s, period, tier)
    else
      budget = budget - math.max(1, roll_cohort(s, period, tier, cohort))
      cohort = cohort + 1
    end
  end
  redis.call('HSET', record, 'tier', tier, 'cohort', cohort)
  return false
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

-- A board PUT: absent, the stored setting; a change of a stored one is refused (its state is keyed by it).
local function leagues_planned(cfg_key, settings, _, plan)
  local stored = plan ~= nil and redis.call('HGET', cfg_key, 'leagues') or false
  if type(settings.leagues) ~= 'table' then
    settings.leagues = stored and cjson.decode(stored) or nil
    return
  end
  if not plan then return end
  if stored and not same_setting(settings.leagues, cjson.decode(stored)) then
    plan.problems[#plan.problems + 1] = 'leagues cannot change once set (delete the board to start again)'
  elseif not stored then
    plan.changed = true
  end
end

local function leagues_differ()
  return false
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

hooks.register('results_changed', league_changed, 'leagues')
hooks.register('watches', watches, 'leagues')
hooks.register('config_planned', leagues_planned, 'leagues')
hooks.register('config_differs', leagues_differ, 'leagues')
hooks.register('config_stored', leagues_stored, 'leagues')

leagues.setting_of = setting_of
leagues.cohort_key = cohort_key
leagues.parse_at = parse_at
leagues.ranks_of = ranks_of
leagues.roll_step = roll_step
