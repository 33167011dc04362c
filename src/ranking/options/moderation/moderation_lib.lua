-- module: moderation
-- requires: board_write, call_state, groups, hooks, keyspace, order, snapshot
-- moderation_lib: moderation states of a board's items, a board option (src/ranking/options/moderation/).
-- An item an admin hid is outside every listing of its board; on a board with `moderation: { review:
-- true }` only the items an admin allowed are listed. Counts keep accruing either way: the states are
-- read, never written, by the windows, so allowing an item again lists exactly what never hiding it
-- would have. Its hook `exceptions` (hooks_lib) answers order_lib the hidden items of a shard (or, on
-- a review board, its allowed ones), which order_lib leaves out of pages, places, counts and ranks;
-- moderation_count_lib counts those ahead of a write's record inside Redis (hook `exceptions_ahead`).
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
-- that hold no state of their own. An item that changes group takes its new group's state at once.
-- Per shard: "<tag>:modeff", hash item -> state, each item's state as just said (its own, else its
-- group's): what every read of the shard asks, in one HGETALL instead of the states, the group states
-- and a lex range per group state. Its writers keep it: moderation_set and moderation_group_set, and
-- groups_lib's assign and forget (hook group_changed); a board PUT builds it whole. It holds at most
-- the item states and the moderated groups' items of the shard (the limits of both). Config field
-- modeff ("1": built); a shard moderated before it existed is read from the states themselves, and
-- builds it at its next moderation write or board PUT.

call_state.config_field_add('modreview', 'moderation')
call_state.config_field_add('modheld', 'moderation')
call_state.config_field_add('modgroups', 'moderation')
call_state.config_field_add('modeff', 'moderation')

local MODERATION = { HIDDEN = 'hidden', ALLOWED = 'allowed' }

-- Each config hash's exceptions asked in this call (call_state.call_cache).
local known = { seq = 0, by = {} }

local states_key = keyspace.sibling_of('cfg', 'moderation')
local group_states_key = keyspace.sibling_of('cfg', 'modgroups')
local effective_key = keyspace.sibling_of('cfg', 'modeff')

local function built(cfg_key)
  return call_state.config_field(cfg_key, 'modeff') == '1'
end

local function reviews(cfg_key)
  return call_state.config_field(cfg_key, 'modreview') == '1'
end

-- The shard's effective states changed in this call for `items` (nil: any; modeff, or the states it is
-- built from): what the call kept of its exceptions (here and order_lib's records) is asked again, so a
-- later request of the call (an item that joined a hidden group) ranks as a call of its own would, and
-- the hooks exceptions_changed follow (group boards recount those items' groups).
local function effective_changed(cfg_key, items)
  call_state.call_cache(known)[cfg_key] = nil
  order.EXCEPTIONS.by = {}
  for _, changed in ipairs(hooks.exceptions_changed) do changed(cfg_key, items) end
end

-- The shard's items whose state is `state` (nil: any state): their own, else their group's, read
-- from the states and each group state's items.
local function states_in(cfg_key, state)
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

-- The shard's items whose state is `state` (nil: any state), from modeff once built.
local function items_in(cfg_key, state)
  if not built(cfg_key) then return states_in(cfg_key, state) end
  local pairs_held, items = redis.call('HGETALL', effective_key(cfg_key)), {}
  for i = 1, #pairs_held, 2 do
    if state == nil or pairs_held[i + 1] == state then items[#items + 1] = pairs_held[i] end
  end
  return items
end

-- HSET of the (item, state, ...) `pairs` into modeff, in chunks that unpack takes.
local function effective_set(cfg_key, pairs_to_set)
  for from = 1, #pairs_to_set, 1000 do
    redis.call('HSET', effective_key(cfg_key), unpack(pairs_to_set, from, math.min(from + 999, #pairs_to_set)))
  end
end

-- modeff built whole from the states (a board PUT; a shard's first moderation write since it exists).
local function build_effective(cfg_key)
  redis.call('DEL', effective_key(cfg_key))
  local states, own = redis.call('HGETALL', states_key(cfg_key)), {}
  for i = 1, #states, 2 do own[states[i]] = true end
  local group_states = redis.call('HGETALL', group_states_key(cfg_key))
  for i = 1, #group_states, 2 do
    for _, item in ipairs(groups.items_in(cfg_key, group_states[i])) do
      if not own[item] then states[#states + 1], states[#states + 2] = item, group_states[i + 1] end
    end
  end
  effective_set(cfg_key, states)
  effective_changed(cfg_key)
  redis.call('HSET', cfg_key, 'modeff', '1')
  call_state.config_field_written(cfg_key, 'modeff', '1')
end

-- The item's own state changed (moderation_set, after it): modeff follows.
local function item_changed(cfg_key, item)
  if not built(cfg_key) then return build_effective(cfg_key) end
  local state = redis.call('HGET', states_key(cfg_key), item)
  if not state then
    local group = redis.call('HGET', groups.groups_key(cfg_key), item)
    state = group and redis.call('HGET', group_states_key(cfg_key), group)
  end
  effective_changed(cfg_key, { item })
  if state then return redis.call('HSET', effective_key(cfg_key), item, state) end
  redis.call('HDEL', effective_key(cfg_key), item)
end

-- The group's state is now `state` ("": none; moderation_group_set, after it): its items of no own
-- state follow in modeff.
local function group_state_changed(cfg_key, group, state)
  if not built(cfg_key) then return build_effective(cfg_key) end
  local items = groups.items_in(cfg_key, group)
  if #items == 0 then return end
  local own, taking = redis.call('HMGET', states_key(cfg_key), unpack(items)), {}
  for i, item in ipairs(items) do
    if not own[i] then taking[#taking + 1] = item end
  end
  if #taking == 0 then return end
  effective_changed(cfg_key, taking)
  if state == '' then
    for from = 1, #taking, 1000 do
      redis.call('HDEL', effective_key(cfg_key), unpack(taking, from, math.min(from + 999, #taking)))
    end
    return
  end
  local pairs_to_set = {}
  for _, item in ipairs(taking) do pairs_to_set[#pairs_to_set + 1], pairs_to_set[#pairs_to_set + 2] = item, state end
  effective_set(cfg_key, pairs_to_set)
end

-- hooks_lib `group_changed`: the item's group is now `group` (false: none); an item of no own state
-- takes its state. Nothing to do where no group holds a state (no modeff entry came from one).
local function group_changed(cfg_key, item, group)
  if not call_state.config_field(cfg_key, 'modgroups') then return end
  -- Read from the states themselves till modeff is built: the item's group there changed too.
  if not built(cfg_key) then return effective_changed(cfg_key) end
  if redis.call('HEXISTS', states_key(cfg_key), item) == 1 then return end
  local state = group and redis.call('HGET', group_states_key(cfg_key), group)
  effective_changed(cfg_key, { item })
  if state then return redis.call('HSET', effective_key(cfg_key), item, state) end
  redis.call('HDEL', effective_key(cfg_key), item)
end

-- The exceptions of the shard of `cfg_key` ({ only, items }), read afresh; nil on a board of no hidden
-- item that does not review.
local function exceptions_of_cfg(cfg_key)
  local only = reviews(cfg_key)
  if not only and not call_state.config_field(cfg_key, 'modheld') and not call_state.config_field(cfg_key, 'modgroups') then
    return nil
  end
  local items = items_in(cfg_key, only and MODERATION.ALLOWED or MODERATION.HIDDEN)
  if only or #items > 0 then return { only = only, items = items } end
  return nil
end

-- hooks_lib `exceptions`: exceptions_of_cfg, once a call per config hash.
local function exceptions_hook(top_key)
  -- A group board's results rank groups: its member board's states are its items' (group_of_lib counts them).
  if call_state.of_group_board(top_key) then return nil end
  local cfg_key = call_state.cfg_key_of_top(top_key)
  local by = call_state.call_cache(known)
  if by[cfg_key] == nil then by[cfg_key] = exceptions_of_cfg(cfg_key) or false end
  return by[cfg_key] or nil
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

-- Stores review; the option's hooks are enabled on a review board and while the shard holds a state.
local function held_states(cfg_key)
  return redis.call('HEXISTS', cfg_key, 'modheld') == 1 or redis.call('HEXISTS', cfg_key, 'modgroups') == 1
end

-- Hook config_kept (a PUT changing nothing): the shard holds states; a shard moderated before modeff
-- existed builds it here.
local function states_kept(cfg_key)
  local held = held_states(cfg_key)
  local wanted = held or redis.call('HGET', cfg_key, 'modreview') == '1'
  if wanted and redis.call('HGET', cfg_key, 'modeff') ~= '1' then build_effective(cfg_key) end
  return held
end

-- A board without groups (turned off: groups_lib forgot them) holds no group states.
local function moderation_stored(cfg_key, settings)
  if settings.groups ~= true then
    redis.call('HDEL', cfg_key, 'modgroups')
    redis.call('UNLINK', group_states_key(cfg_key))
  end
  local review = settings.moderation and settings.moderation.review == true
  if review then
    redis.call('HSET', cfg_key, 'modreview', '1')
  else
    redis.call('HDEL', cfg_key, 'modreview')
  end
  local enabled = review or held_states(cfg_key)
  if enabled then
    build_effective(cfg_key)
  else
    if redis.call('HEXISTS', cfg_key, 'modeff') == 1 then effective_changed(cfg_key) end
    redis.call('HDEL', cfg_key, 'modeff')
    redis.call('UNLINK', effective_key(cfg_key))
  end
  return enabled
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

-- The start of a retry-safe write of one state, an item's (moderation_set: arg.item) or a group's
-- (moderation_group_set: arg.group; each contract's arguments are a table of its own): the board write
-- begun, then the hash of such states and the state it holds for the target now ("": none). Answers
-- the reply to end with at once, else nil, the header, arguments, idempotency, hash and state.
local function begin_state_write(keys, args, contract)
  local refused, header, arg, idem = board_write.begin_board_write(keys, args, contract)
  if refused then return refused end
  local key = arg.group and group_states_key(keys[1]) or states_key(keys[1])
  return nil, header, arg, idem, key, redis.call('HGET', key, arg.group or arg.item) or ''
end

-- Stores `state` under `field` of the hash `key` ("": clears it), moving the shard's version when it
-- changed (live streams answer the change on their next tick).
local function write_state(cfg_key, key, field, state, previous)
  if state == '' then
    redis.call('HDEL', key, field)
  else
    redis.call('HSET', key, field, state)
  end
  if previous ~= state then snapshot.bump_version(cfg_key) end
end

MODERATION.write_state = write_state
MODERATION.states_key = states_key
MODERATION.effective_key = effective_key
MODERATION.item_changed = item_changed
MODERATION.group_state_changed = group_state_changed
MODERATION.group_states_key = group_states_key
MODERATION.count_held = count_held
MODERATION.reviews = reviews
MODERATION.moderated = moderated
MODERATION.exceptions_of_cfg = exceptions_of_cfg
moderation.MODERATION = MODERATION
moderation.begin_state_write = begin_state_write

hooks.register_all('moderation', { 'exceptions', exceptions_hook,
  'group_changed', group_changed, 'config_planned', moderation_planned,
  'config_stored', moderation_stored, 'config_kept', states_kept })
