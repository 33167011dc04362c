-- module: moderation
-- requires: call_state, groups, hooks, keyspace
-- moderation_lib: moderation states of a board's items, a board option (src/ranking/options/moderation/).
-- An item an admin hid is outside every listing of its board; on a board with `moderation: { review:
-- true }` only the items an admin allowed are listed. Counts keep accruing either way: the states are
-- read, never written, by the windows, so allowing an item again lists exactly what never hiding it
-- would have. Its hook `exceptions` (hooks_lib) answers order_lib the hidden items of a shard (or, on
-- a review board, its allowed ones), which order_lib leaves out of pages, places, counts and ranks.
-- KEYS: 0
-- Config hash fields: modreview ("1": a review board; absent: items are listed unless hidden), modheld
-- (the states the shard holds; absent: none), so a call on a board nobody moderates reads no states:
-- every read and write asks for the exceptions, and the config's one HMGET answers it.
-- Per shard: "<tag>:moderation", hash item -> "hidden" | "allowed", the states of that shard's items
-- (bounded by the slice's limit per board, so one call reads at most that many); on a `groups: true`
-- board "<tag>:modgroups", hash group -> state, the board's group states (every shard holds them all,
-- as a group's items live on every shard), and the config field modgroups (how many).
-- An item's state is its own, else its latest group's (groups_lib): an item's own state wins, so an
-- allowed item of a hidden group is listed, and on a review board an allowed group lists its items
-- that hold no state of their own. An item that changes group takes its new group's state at once
-- (the groups' items are read from groups_lib's reverse map by every call, never copied).

call_state.config_field_add('modreview', 'moderation')
call_state.config_field_add('modheld', 'moderation')
call_state.config_field_add('modgroups', 'moderation')

local MODERATION = { HIDDEN = 'hidden', ALLOWED = 'allowed' }

-- Each config hash's exceptions asked in this call (call_state.call_cache).
local known = { seq = 0, by = {} }

local function states_key(cfg_key)
  return keyspace.sibling_key(cfg_key, 'cfg', 'moderation')
end

local function group_states_key(cfg_key)
  return keyspace.sibling_key(cfg_key, 'cfg', 'modgroups')
end

local function reviews(cfg_key)
  return call_state.config_field(cfg_key, 'modreview') == '1'
end

-- The shard's items whose state is `state` (nil: any state): their own, else their group's.
local function items_in(cfg_key, state)
  local items, own = {}, {}
  local states = call_state.config_field(cfg_key, 'modheld') and redis.call('HGETALL', states_key(cfg_key)) or {}
  for i = 1, #states, 2 do
    own[states[i]] = true
    if state == nil or states[i + 1] == state then items[#items + 1] = states[i] end
  end
  if not call_state.config_field(cfg_key, 'modgroups') then return items end
  local group_states = redis.call('HGETALL', group_states_key(cfg_key))
  for i = 1, #group_states, 2 do
    if state == nil or group_states[i + 1] == state then
      for _, item in ipairs(groups.items_in(cfg_key, group_states[i])) do
        if not own[item] then items[#items + 1] = item end
      end
    end
  end
  return items
end

-- hooks_lib `exceptions`: nil on a board of no hidden item that does not review.
local function exceptions_hook(top_key)
  local cfg_key = call_state.cfg_key_of_top(top_key)
  local by = call_state.call_cache(known)
  local answer = by[cfg_key]
  if answer == nil then
    answer = false
    local only = reviews(cfg_key)
    if not only and not call_state.config_field(cfg_key, 'modheld') and not call_state.config_field(cfg_key, 'modgroups') then
      by[cfg_key] = false
      return nil
    end
    local items = items_in(cfg_key, only and MODERATION.ALLOWED or MODERATION.HIDDEN)
    if only or #items > 0 then answer = { only = only, items = items } end
    by[cfg_key] = answer
  end
  return answer or nil
end

-- Every item of the shard of `cfg_key` in a state (its own or its group's): what a review queue skips.
local function moderated(cfg_key)
  return items_in(cfg_key, nil)
end

-- A board PUT: review asked (absent: the stored setting, off for a new board). A change keeps every
-- state and count: only the next reads list otherwise.
local function moderation_planned(cfg_key, settings, _, plan)
  local stored = plan ~= nil and redis.call('HGET', cfg_key, 'modreview') == '1'
  local asked = settings.moderation
  local review = stored
  if type(asked) == 'table' and asked.review ~= nil then review = asked.review == true end
  settings.moderation = { review = review }
  if plan and review ~= stored then plan.changed = true end
end

local function moderation_differs()
  return false
end

-- Stores review; the option's hooks are enabled on a review board and while the shard holds a state.
-- Hook config_kept: the shard holds states.
local function held_states(cfg_key)
  return redis.call('HEXISTS', cfg_key, 'modheld') == 1 or redis.call('HEXISTS', cfg_key, 'modgroups') == 1
end

-- A board without groups (turned off: groups_lib forgot them) holds no group states.
local function moderation_stored(cfg_key, settings)
  if settings.groups ~= true then
    redis.call('HDEL', cfg_key, 'modgroups')
    redis.call('UNLINK', group_states_key(cfg_key))
  end
  if settings.moderation and settings.moderation.review == true then
    redis.call('HSET', cfg_key, 'modreview', '1')
    return true
  end
  redis.call('HDEL', cfg_key, 'modreview')
  return held_states(cfg_key)
end

-- Keeps the config's count `field` (modheld: item states; modgroups: group states) of the states the
-- shard holds (after each change); a state held enables the option's hooks (till a board PUT finds
-- none held).
local function count_held(cfg_key, held, field)
  if held > 0 then
    redis.call('HSET', cfg_key, field or 'modheld', held)
    call_state.enable_option(cfg_key, 'moderation')
  else
    redis.call('HDEL', cfg_key, field or 'modheld')
  end
end

MODERATION.states_key = states_key
MODERATION.group_states_key = group_states_key
MODERATION.count_held = count_held
MODERATION.reviews = reviews
MODERATION.moderated = moderated
moderation.MODERATION = MODERATION

hooks.register('exceptions', exceptions_hook, 'moderation')
hooks.register('config_planned', moderation_planned, 'moderation')
hooks.register('config_differs', moderation_differs, 'moderation')
hooks.register('config_stored', moderation_stored, 'moderation')
hooks.register('config_kept', held_states, 'moderation')
