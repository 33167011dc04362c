-- module: window
-- requires: call_state, hooks, keyspace, order, slot_due
-- window_lib: a window's slots, expiry, writes and ranks, shared by the ranking functions, a module of their
-- function library (and of the ingest one); a window's drop is window_drop_lib's, the due index's slot_due_lib's.
-- KEYS: 0
-- Conventions: a call's windows come as the record call_state.bind_windows fills (`windows`: count, and
-- by 0-based window its slots index zset, results zset and rule). A window's slot hashes are named
-- <base>slot:<start>, where <base> is the slots key without its trailing "slots" (sibling_key, from
-- keys_lib, a module before this one), so they always share the hash tag of the window's keys. Times
-- are passed in (unix s or ms); no TIME call.

-- The running call's state (call_lib): the same tables for every call.
local CONFIG = call_state.CONFIG

-- Refuses a write made with a cached config that is no longer the stored one; reads the board's
-- config for the call (read_config: every function on a board's windows starts here).
local function version_error(cfg_key, version)
  local stored = call_state.read_config(cfg_key)
  if not stored[1] then return 'TB_NO_BOARD board does not exist' end
  if stored[1] ~= version then return 'TB_STALE_CONFIG board config changed' end
  return nil
end

-- Hook: the score of `item` in the window results `top_key` is now `score` (0: it left the window, or,
-- on a max / min / last board, holds 0 there: the hooks deciding a leave ask the results, item_held).
-- Every change of a window's results calls it (order_lib's EXCEPTIONS drop theirs; the options' results_changed
-- hooks; item_left when it left: item_data_lib; a script changing a results zset another way must call it too).
local function results_changed(top_key, item, score, tiebreak)
  order.note_written(top_key)
  local changed = call_state.hooks_of_top(top_key).results_changed
  for i = 1, #changed do changed[i](top_key, item, score, tiebreak) end
  if score == 0 then for _, left in ipairs(hooks.item_left) do left(top_key, item) end end
end

-- The slot key of the last slot start asked for each slots key, kept from call to call (a pure function
-- of both), so a call in a known slot builds no string; emptied when it holds `max` slots keys.
local slot_key_memo = { by_slots = {}, size = 0, max = 1024 }

local function slot_key_of(slots_key, start)
  local known = slot_key_memo.by_slots[slots_key]
  if known and known.start == start then return known.key end
  local key = keyspace.sibling_key(slots_key, 'slots', 'slot:' .. start)
  if not known then
    if slot_key_memo.size >= slot_key_memo.max then slot_key_memo.by_slots, slot_key_memo.size = {}, 0 end
    known = {}
    slot_key_memo.by_slots[slots_key], slot_key_memo.size = known, slot_key_memo.size + 1
  end
  known.start, known.key = start, key
  return key
end

-- A window's rule (call_state.bind_windows binds it from the header by name): period_sec, interval_sec,
-- created_ms, origin_sec. A rolling window's slots start at multiples of its interval (origin 0). A
-- calendar window (origin > 0) is one slot per period: the caller passes, for its `now`, the current
-- period's start as the origin and its length as both period and interval (periods differ in length:
-- the time-zone rules live in the app, src/ranking/core/calendar-math.ts).
-- The start of the slot holding `t` (unix s): an event before a calendar window's origin lands in a
-- slot before its live span, which every caller then skips.
local function current_slot(t, interval_sec, origin_sec)
  return t - ((t - (origin_sec or 0)) % interval_sec)
end

-- Window w's (0-based) period, interval and origin, of the call's `windows` (bind_windows).
local function window_rule(windows, w)
  return windows.period_sec[w], windows.interval_sec[w], windows.origin_sec[w]
end

-- Takes `entries` (item, value pairs, HGETALL shape), just deleted from the expired slot starting at
-- `slot_start`, out of the results; answers the budget they cost beyond their fields. A window whose
-- slots an option keeps otherwise (`kept`, hook slots_kept: a max / min / last board's) is settled by
-- it instead (its reads count in the budget).
local function subtract_drained(slots_key, top_key, slot_start, live_from, entries, kept)
  if kept then return kept.settle(slots_key, top_key, slot_start, live_from, entries, results_changed) end
  for i = 1, #entries, 2 do
    local item = entries[i]
    local left = tonumber(redis.call('ZINCRBY', top_key, -tonumber(entries[i + 1]), item))
    if left == 0 then redis.call('ZREM', top_key, item) end
    results_changed(top_key, item, left)
    local summed = hooks.sum_changed
    for j = 1, #summed do summed[j](top_key, slot_start, item, -tonumber(entries[i + 1]), left, nil) end
  end
  return 0
end

-- The options' upkeep of a rolling window with no expired slot left (hooks_lib window_settled); keeps
-- their earliest due in CONFIG.option_due (false: due again at the next call). Answers the budget left.
local function settle_options(slots_key, top_key, now_sec, interval_sec, budget, origin_sec)
  local settled = call_state.hooks_of_top(top_key).window_settled
  if #settled == 0 or (origin_sec or 0) > 0 then return budget end
  for i = 1, #settled do
    local due
    budget, due = settled[i](slots_key, top_key, now_sec, interval_sec, budget)
    if due == false or CONFIG.option_due == false then
      CONFIG.option_due = false
    elseif due and (CONFIG.option_due == nil or due < CONFIG.option_due) then
      CONFIG.option_due = due
    end
  end
  return budget
end

-- Subtracts the oldest expired slots (starting before the live span) from the results and deletes them,
-- together (never subtracted twice), touching at most `budget` fields: a bigger slot drains in part. A
-- window whose slots an option keeps (hook slots_kept) takes what its per_pass answers in one pass.
-- An option draining along (hook slots_draining: a calendar window's archive) is handed what each pass
-- drains, its rows written within the same budget. Returns the budget left and whether expired data (or rows) remains.
-- expire_window's answer when its budget ran out before the expired slots did: the window's first live
-- slot start, noted in CONFIG.draining_from (by slots key, for this call) for what must tell the expired
-- slots still indexed from the live ones (actor_caps_lib).
local function draining_from(slots_key, live_from)
  CONFIG.draining_from = CONFIG.draining_from or {}
  CONFIG.draining_from[slots_key] = live_from
  return 0, true
end

local function expire_window(slots_key, top_key, now_sec, period_sec, interval_sec, budget, origin_sec)
  CONFIG.oldest_live = nil
  if slot_due.nothing_due(slots_key, now_sec, origin_sec) then return budget, false end
  -- Exclusive: a calendar window's previous period may be shorter than the current one.
  local live_from = current_slot(now_sec, interval_sec, origin_sec) - period_sec + interval_sec
  local drain, kept -- the first answers of slots_draining and slots_kept, mostly none
  for _, draining in ipairs(hooks.slots_draining) do drain = drain or draining(slots_key, origin_sec) end
  for _, keeps in ipairs(hooks.slots_kept) do kept = kept or keeps(top_key) end
  while true do
    -- The oldest slot (members are their own start, as scores): the cheapest question a call asks
    -- every time, and almost always answered "still live".
    local oldest = redis.call('ZRANGE', slots_key, '0', '0')
    if #oldest == 0 or tonumber(oldest[1]) >= live_from then
      CONFIG.oldest_live = tonumber(oldest[1]) or false
      break
    end
    if budget <= 0 then return draining_from(slots_key, live_from) end
    -- What options keep of the slot goes first (hooks_lib slot_leaving: who contributed to it): its
    -- items are drained only once none is left.
    local drained, leaving, done = true, hooks.slot_leaving, nil
    for i = 1, #leaving do budget, done = leaving[i](slots_key, top_key, oldest[1], budget); drained = drained and done end
    if not drained or budget <= 0 then return draining_from(slots_key, live_from) end
    local slot_key = slot_key_of(slots_key, oldest[1])
    local size = redis.call('HLEN', slot_key)
    local take = kept and kept.per_pass(slots_key, budget) or budget
    local whole = size <= take
    local entries
    if whole then
      entries = redis.call('HGETALL', slot_key)
    else
      entries = redis.call('HRANDFIELD', slot_key, take, 'WITHVALUES')
    end
    -- Deletes before it subtracts: on a full Redis (maxmemory, noeviction) a script may run commands
    -- that can grow memory (ZINCRBY) only once it has written, and DEL/HDEL/ZREM never grow it. So
    -- expiry, the one thing that frees memory, still runs on a full Redis.
    if whole then
      redis.call('DEL', slot_key)
      redis.call('ZREM', slots_key, oldest[1])
      slot_due.forget_indexed(slots_key)
      local expired = call_state.hooks_of_top(top_key).slot_expired
      for i = 1, #expired do expired[i](slots_key, oldest[1]) end
      budget = budget - math.max(size, 1)
    else
      local fields = {}
      for i = 1, #entries, 2 do fields[#fields + 1] = entries[i] end
      redis.call('HDEL', slot_key, unpack(fields))
      budget = budget - #fields
    end
    if drain then drain.take(oldest[1], entries) end
    call_state.CALL.draining = oldest[1] -- hooks told of these changes know their expired slot (leagues_lib, ties_lib)
    budget, call_state.CALL.draining = budget - subtract_drained(slots_key, top_key, tonumber(oldest[1]), live_from, entries, kept), false
  end
  if drain then return drain.finish(budget) end
  return settle_options(slots_key, top_key, now_sec, interval_sec, budget, origin_sec), false
end

-- Whether the shard's slot due tells that no window of the call holds an expired slot at `now_sec`
-- (nothing_due for each of `windows`): most calls. expire_all then asks nothing and settles nothing,
-- exactly as its loop would; a call on no window runs the loop.
local function nothing_due_all(windows, now_sec)
  local slots, origins, window_count = windows.slots, windows.origin_sec, windows.count
  for w = 0, window_count - 1 do
    if not slot_due.nothing_due(slots[w], now_sec, origins[w]) then return false end
  end
  return window_count > 0
end

-- Expires every window of the call's `windows` (bind_windows). Returns 1 if data remains, and the budget
-- left. When it checked every rolling window and none holds expired data, keeps the earliest due of their
-- oldest slots in CONFIG.settle_due (settle_slot_due stores it when the windows were all the board's).
-- `drain` (drain_lib's weighed drain: a write's call_drain, an admin step's step_drain_state; nil: `budget`
-- fields) gives each window its fields; what it has left is the call's (CALL.drain) for the segments the
-- call drains next, their fields weighed as their board windows' (segment_lib's drain_segment).
local function expire_all(windows, now_sec, budget, drain)
  call_state.CALL.drain = drain
  if nothing_due_all(windows, now_sec) then
    CONFIG.settle_due, CONFIG.oldest_live = nil, nil
    return 0, budget
  end
  local draining = 0
  local settle = slot_due.NO_SLOT_DUE
  CONFIG.option_due = nil
  local window_count = windows.count
  for w = 0, window_count - 1 do
    local period_sec, interval_sec, origin_sec = window_rule(windows, w)
    local top_key = windows.tops[w]
    local given, more = drain and drain.fields(drain, top_key) or budget, nil
    budget, more = expire_window(windows.slots[w], top_key, now_sec, period_sec, interval_sec, given, origin_sec)
    if drain then budget = drain.spent(drain, top_key, given, budget) end
    if more then draining = 1 end
    local oldest = CONFIG.oldest_live
    if (origin_sec or 0) == 0 then
      if oldest == nil or more then settle = nil end
      if settle and oldest then settle = math.min(settle, oldest + period_sec) end
    end
  end
  if window_count > 0 and string.find(windows.slots[0], '~', 1, true) then settle = nil end
  if CONFIG.option_due == false then settle = nil end
  if settle and CONFIG.option_due then settle = math.min(settle, CONFIG.option_due) end
  CONFIG.settle_due = settle
  return draining, budget
end

-- Adds `amount` to an item in the slot hash `slot_key` and the results `top_key` of one window (the slot indexed);
-- answers the new score, then the item's new sum in the slot (what sum_changed passes on as `slot_sum`, so a decay
-- view does not read it back). A score reaching exactly 0 is removed; a negative one stays (later increments stay
-- exact), read as absent. Views are not told (callers call sum_changed). A whole amount goes as text made once, not a
-- %.17g a command.
local function add_amount(slot_key, top_key, item, amount)
  local whole = type(amount) == 'number' and amount ~= 0 and amount % 1 == 0 and math.abs(amount) < 2 ^ 53
  local arg = whole and call_state.int_text(amount) or amount
  local slot_sum = tonumber(redis.call('HINCRBY', slot_key, item, arg))
  if slot_sum == 0 then redis.call('HDEL', slot_key, item) end
  local score = tonumber(redis.call('ZINCRBY', top_key, arg, item))
  if score == 0 then redis.call('ZREM', top_key, item) end
  results_changed(top_key, item, score)
  return score, slot_sum
end

-- Adds `amount` to an item in the current slot and the results of one window (period `period_sec`);
-- returns the new score, the slot's due time (unix ms) when the slot is new to the window's index, and
-- the item's new sum in the slot. With the window's `interval_sec` (and `origin_sec`), a slot the shard's
-- indexed second names is not indexed again (slot_due.index_unless_known).
local function add_to_window(slots_key, top_key, slot_start, period_sec, item, amount, interval_sec, origin_sec)
  local new_due_ms
  if interval_sec then
    new_due_ms = slot_due.index_unless_known(slots_key, slot_start, period_sec, interval_sec, origin_sec)
  else
    new_due_ms = slot_due.index_slot(slots_key, slot_start, period_sec)
  end
  local score, slot_sum = add_amount(slot_key_of(slots_key, slot_start), top_key, item, amount)
  return score, new_due_ms, slot_sum
end

-- Timestamped events: the first slot start (unix s) a window still counts at `now_sec`; an event at
-- `at_sec` lands in a window only when its slot starts there or later.
local function live_from_sec(now_sec, period_sec, interval_sec, origin_sec)
  return current_slot(now_sec, interval_sec, origin_sec) - period_sec + interval_sec
end

-- window_holds' answer for an event at now, which every window holds (its current slot is live),
-- by window count: shared by every call, so never written by one.
local EVERY_WINDOW = {}

-- The windows (0-based index -> true) whose live span still holds the slot of `at_sec`, or nil when
-- none does, of the call's `windows` (bind_windows). The answer is read-only.
local function window_holds(at_sec, now_sec, windows)
  local window_count = windows.count
  if at_sec == now_sec then
    local every = EVERY_WINDOW[window_count]
    if not every then
      every = {}
      for w = 0, window_count - 1 do every[w] = true end
      EVERY_WINDOW[window_count] = every
    end
    return window_count > 0 and every or nil
  end
  local holding, any = {}, false
  for w = 0, window_count - 1 do
    local period_sec, interval_sec, origin_sec = window_rule(windows, w)
    if current_slot(at_sec, interval_sec, origin_sec) >= live_from_sec(now_sec, period_sec, interval_sec, origin_sec) then
      holding[w] = true
      any = true
    end
  end
  return any and holding or nil
end

-- add_to_window at the slot of `at_sec` (the event's time, unix s, may hold a fraction), then sum_changed.
-- `rule` (nil: none): the window's, whose interval and origin let a known slot go unindexed (add_to_window).
local function add_event(slots_key, top_key, slot_start, period_sec, item, amount, at_sec, rule)
  local interval_sec, origin_sec = rule and rule.interval_sec, rule and rule.origin_sec
  local score, new_due_ms, slot_sum = add_to_window(slots_key, top_key, slot_start, period_sec, item, amount,
    interval_sec, origin_sec)
  local summed = hooks.sum_changed
  for i = 1, #summed do summed[i](top_key, slot_start, item, amount, score, at_sec, slot_sum) end
  return score, new_due_ms
end

-- A score as an exclusive lower bound for ZCOUNT: %.17g keeps every digit (plain concatenation
-- would print 14 significant digits).
local function above(score)
  return '(' .. string.format('%.17g', score)
end

-- Competition rank (1, 2, 2, 4) of a score held in the window, or 0 when it is not listed (order_lib:
-- a sum at most 0); the items ahead of it are those of a better score (order_lib's order), and with a
-- mark (a tiebreak's: a row's of the page) those of an equal score and a greater mark too.
local function rank_of(top_key, score, mark)
  if not order.listed(top_key, score) then return 0 end
  return order.ahead(top_key, score, mark or '') + 1
end

-- A listing page (order_lib's page: item, score, ...) as rows up to the first score not listed (a sum
-- at most 0), and how many items are ahead of the first row (nil: no row): none when the page starts
-- at position 0 (`from_top`), else counted (`first_mark`: the first row's mark when ranks compare
-- marks, a tiebreak's). Scores go as Redis wrote them (strings); a page whose last score is listed (the
-- unlisted ones come last) is answered as it is, without a copy.
local function listing_rows(top_key, page, from_top, first_mark)
  local count = #page
  if count > 0 and order.listed(top_key, tonumber(page[count])) then
    return page, from_top and 0 or rank_of(top_key, tonumber(page[2]), first_mark) - 1
  end
  local rows, higher = {}, nil
  for i = 1, count, 2 do
    local score = tonumber(page[i + 1])
    if not order.listed(top_key, score) then break end
    if i == 1 then higher = from_top and 0 or rank_of(top_key, score, first_mark) - 1 end
    rows[#rows + 1] = page[i]
    rows[#rows + 1] = score
  end
  return rows, higher
end

-- Rank of an item of `score` in one window: the first option's that decides it (hooks_lib `rank`:
-- strict on a `ties: first` board), else competition.
-- An item the listing leaves out (order_lib's exceptions) has none; the others rank among the shown.
local function item_rank(top_key, item, score)
  local rankers = call_state.hooks_of_top(top_key).rank
  for i = 1, #rankers do
    local rank = rankers[i](top_key, item)
    if rank then return order.shown_rank(top_key, item, rank, score) end
  end
  if not order.shown(top_key, item) then return 0 end
  return rank_of(top_key, score)
end

-- Current score and rank of an item in one window.
local function standing(top_key, item)
  local held = redis.call('ZSCORE', top_key, item)
  if not held then return 0, 0 end
  local score = tonumber(held)
  return score, item_rank(top_key, item, score)
end

window.version_error = version_error
window.results_changed = results_changed
window.slot_key_of = slot_key_of
window.current_slot = current_slot
window.window_rule = window_rule
window.expire_window = expire_window
window.expire_all = expire_all
window.add_amount = add_amount
window.live_from_sec = live_from_sec
window.window_holds = window_holds
window.add_event = add_event
window.above = above
window.rank_of = rank_of
window.listing_rows = listing_rows
window.item_rank = item_rank
window.standing = standing
window.EVERY_WINDOW = EVERY_WINDOW
