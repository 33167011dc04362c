-- module: moderation
-- requires: board_write, call_state, groups, hooks, keyspace, order, reader, snapshot
-- moderation_lib: moderation states of a board's items, a board option (src/ranking/options/moderation/).
-- An item an admin hid is outside every listing of its board; on a board with `moderation: { review:
-- true }` only the items an admin allowed are listed. Counts keep accruing either way: the states are
-- read, never written, by the windows, so allowing an item again lists exactly what never hiding it
-- would have. Its hook `exceptions` (hooks_lib) answers order_lib the hidden items of a shard (or, on
-- a review board, its allowed ones), which order_lib leaves out of pages, places, counts and ranks; its hook
-- `exceptions_ahead` counts those ahead of a write's record inside Redis (stored_ahead).
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

-- A write counts the exceptions ahead of its record inside Redis (exceptions_ahead) from this many on: fewer are scored
-- in Lua by order_lib as a read scores them (one ZMSCORE), which costs less than the keys the count writes.
local STORED_COUNT_FLOOR = 16

-- What a write's count of the exceptions ahead weighs (call_state.CALL.work, which a coalesced increment stops at:
-- increment.lua's WORK_BUDGET): a window counted in (PLACE, the request's own write there included), one intersected
-- with the exceptions (INTERSECTION). At the moderation maxima (8 windows, 8 views, 400 exceptions), a coalesced
-- mid-table request of 8 places ~2.1 M Redis instructions, an intersection ~0.8 M (bench/write-instructions.ts).
local WORK = { PLACE = 1, INTERSECTION = 3 }

-- The exceptions each config hash's set (exasked) holds in this call (call_state.call_cache): ex.asked.
local stored_sets = { seq = 0, by = {} }

-- The set of `ex`'s exceptions on the shard of `cfg_key`, stored once a call (every window's count intersects it)
-- and kept till the call answers (reader.keep_till_answer); again when the exceptions changed within the call.
local function asked_set(cfg_key, ex)
  local asked = keyspace.sibling_key(cfg_key, 'cfg', 'exasked')
  local stored = call_state.call_cache(stored_sets)
  if not reader.keep_till_answer(asked) and stored[cfg_key] == ex.asked then return asked end
  -- A set a call that failed left (its members now stale) is freed off the main thread, as every kept key.
  redis.call('UNLINK', asked)
  for from = 1, #ex.asked, 1000 do redis.call('SADD', asked, unpack(ex.asked, from, math.min(from + 999, #ex.asked))) end
  stored[cfg_key] = ex.asked
  return asked
end

-- How many of `ex`'s items the results `top_key` hold at scores within low..high (ZRANGE BYSCORE bounds, both
-- inclusive), read row by row; those of the record's very `score` only when placed before its `count` leading places
-- (`before`), else only when placed after.
local function exceptions_within(top_key, ex, low, high, score, count, before)
  local rows, found = redis.call('ZRANGE', top_key, low, high, 'BYSCORE', 'WITHSCORES'), 0
  for i = 1, #rows, 2 do
    local item = rows[i]
    if ex.items[item] and (tonumber(rows[i + 1]) ~= score or (order.placed(top_key, ex, item) < count) == before) then
      found = found + 1
    end
  end
  return found
end

-- stored_ahead's count of a listed record's score when an end of the results is near it: the exceptions ahead read
-- among the rows from the top down to its score (a like of a leading item), or all the exceptions held (ZINTERCARD)
-- less those among the rows from its score down to the bottom (a new item's small first score); nil when both ends
-- are farther than `#ex.asked` rows, where reading them would cost more than the intersection.
local function near_end_ahead(top_key, ex, count, score, at)
  local ahead, behind = { at, '+inf' }, { '-inf', at }
  if order.ascending(top_key) then ahead, behind = behind, ahead end
  local near = #ex.asked
  -- The rows of a score at least the record's are at least the `count` places before it.
  if count <= near and redis.call('ZCOUNT', top_key, ahead[1], ahead[2]) <= near then
    return exceptions_within(top_key, ex, ahead[1], ahead[2], score, count, true)
  end
  if redis.call('ZCOUNT', top_key, behind[1], behind[2]) > near then return nil end
  local held = redis.call('ZINTERCARD', 2, top_key, asked_set(call_state.cfg_key_of_top(top_key), ex))
  return held - exceptions_within(top_key, ex, behind[1], behind[2], score, count, false)
end

-- The exceptions' scores in the results `top_key` held in `held` (ZINTERSTORE of the results and `asked`, their set)
-- once a call per window and set: a later request of the call (coalesced increments) brings up to date only the
-- exceptions written there since (order_lib's note_written), a ZSCORE each, instead of intersecting them all again.
local function held_scores(top_key, ex, asked, held)
  local kept = call_state.call_cache(order.EXCEPTIONS.held)
  local since = kept[top_key]
  if since and since.asked == ex.asked then
    for i = 1, #since do
      local item = since[i]
      since[i] = nil
      local score = ex.items[item] and redis.call('ZSCORE', top_key, item)
      if score then redis.call('ZADD', held, score, item) elseif ex.items[item] then redis.call('ZREM', held, item) end
    end
    return
  end
  reader.keep_till_answer(held)
  call_state.CALL.work = call_state.CALL.work + WORK.INTERSECTION
  redis.call('ZINTERSTORE', held, 2, top_key, asked, 'WEIGHTS', 1, 0)
  kept[top_key] = { asked = ex.asked }
end

-- hooks_lib `exceptions_ahead` in a write (call_state.CALL.writes; a read is no-writes) of at least STORED_COUNT_FLOOR
-- exceptions: counted near an end of the results (near_end_ahead), else held with their scores (ZINTERSTORE of the
-- results and their set, asked_set, into a key of the window's kept till the call answers), then one ZCOUNT of
-- those listed and better, and those of that very score placed. A ZMSCORE of them read into Lua costs about 6 000
-- instructions an exception (each score written and parsed as text), this a few thousand: ~0.9 M a window of 400
-- exceptions with its counts (bench/write-instructions.ts). The set is the same for every window of the call: stored
-- once (an existing item's increment of 8 windows at the moderation maxima, 400 exceptions: 12.4-14.3 M instructions
-- inside the FCALL, 18.4 M with a SADD a window, 13.8-15.9 M with one key replaced window after window).
local function stored_ahead(top_key, ex, count, score)
  if #ex.asked < STORED_COUNT_FLOOR or not call_state.CALL.writes then return nil end
  call_state.CALL.work = call_state.CALL.work + WORK.PLACE
  local at, every_sign = string.format('%.17g', score), order.listed(top_key, 0)
  -- A listed record where every score the near end reads is listed too (on a sum board the best first and above 0).
  if every_sign or (score > 0 and not order.ascending(top_key)) then
    local near = near_end_ahead(top_key, ex, count, score, at)
    if near then return near end
  end
  local asked, held = asked_set(call_state.cfg_key_of_top(top_key), ex), keyspace.sibling_key(top_key, 'top', 'exheld')
  -- A key of each window's results, all unlinked as the call answers (reader.answer): Redis frees them off its main
  -- thread, where a ZINTERSTORE replacing the last window's would free its rows in the call.
  held_scores(top_key, ex, asked, held)
  local low, high = '(' .. at, '+inf'
  if order.ascending(top_key) then low, high = '-inf', '(' .. at end
  if not every_sign and (low == '-inf' or score < 0) then low = '(0' end
  local below = redis.call('ZCOUNT', held, low, high)
  local same = (every_sign or score > 0) and redis.call('ZRANGE', held, at, at, 'BYSCORE') or {}
  for _, item in ipairs(same) do
    if order.placed(top_key, ex, item) < count then below = below + 1 end
  end
  return below
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

hooks.register_all('moderation', { 'exceptions', exceptions_hook, 'exceptions_ahead', stored_ahead,
  'group_changed', group_changed, 'config_planned', moderation_planned,
  'config_stored', moderation_stored, 'config_kept', states_kept })
