-- module: board_write
-- requires: call_state, hooks, idempotency, keyspace, order, slot_due, window
-- board_write_lib: the common start of the named functions on a board's shard (begin_board_call) and
-- of every write to a board's items (increment, batch, like), a module of the ranking function library
-- after keys_lib, idem_lib and window_lib, and the admission of new items.
-- KEYS: 0

local CALL = call_state.CALL

-- The running call's state (call_lib): the same tables for every call.
local CONFIG = call_state.CONFIG
-- order_lib's exceptions kept for the call, by results key: an add drops its results' record.
local EXCEPTIONS = order.EXCEPTIONS

-- The start of a named function on a board's shard (keys[1] its config hash): binds the call and reads
-- its header and arguments by `contract` (call_lib's begin_named_call: the shared modules read the
-- call's state), then refuses a stale or missing config. Returns the error reply to answer at once
-- (nil: none), the header, the arguments and where the contract's records start.
local function begin_board_call(keys, args, contract)
  local header, arg, records_at = call_state.begin_named_call(keys, args, contract)
  local err = window.version_error(keys[1], header.version)
  return err and redis.error_reply(err), header, arg, records_at
end

-- begin_board_call for a write retried safely: then idem_lib's entry of its idempotency arguments
-- (idem_key "": none) and its replay. Returns the reply to answer at once (a refusal or a replay; nil:
-- none), the header, the arguments, the entry (for idem_finish) and where the records start.
local function begin_board_write(keys, args, contract)
  local refused, header, arg, records_at = begin_board_call(keys, args, contract)
  if refused then return refused end
  CALL.writes = true
  local idem = idempotency.idem_of(arg, '')
  return idempotency.idem_begin(keys[1], 'cfg', idem, header.now_ms), header, arg, idem, records_at
end

-- The results keys of the windows `window_keys` (rules `rules`, the header's) on the shard of `cfg_key`,
-- for a call reading several shards of one node (lookups, count_above_shards); nil while expired slots
-- wait to drain in one of them (the shard's own calls drain them first). The cutoff is exclusive, as
-- expire_window's: a calendar window's previous period may be shorter than its current.
local function settled_tops(cfg_key, window_keys, rules, now_sec)
  local tops = {}
  for w, rule in ipairs(rules) do
    local cutoff = '(' .. window.live_from_sec(now_sec, rule.period_sec, rule.interval_sec, rule.origin_sec)
    local base = keyspace.sibling_key(cfg_key, 'cfg', window_keys[w] .. ':')
    if #redis.call('ZRANGE', base .. 'slots', '-inf', cutoff, 'BYSCORE', 'LIMIT', 0, 1) > 0 then return nil end
    tops[w] = base .. 'top'
  end
  return tops
end

-- Each shard of a call over several shards of one node (`shards`: their config keys, as the call's
-- JSON): its config version checked, then `visit(tops, s, cfg_key)` with its windows' results keys
-- (settled_tops), its position in `shards` and its config key; its position is added to `pending`
-- instead while expired slots wait to drain there, or when `visit` answers false (the shard has more
-- to drain first: it read nothing). The version check reads the shard's own config, so its listing
-- asks that board's hooks (order_lib). Answers the error reply of a stale config (nil: none).
local function visit_settled(shards, header, window_keys, pending, visit)
  for s, cfg_key in ipairs(cjson.decode(shards)) do
    local err = window.version_error(cfg_key, header.version)
    if err then return redis.error_reply(err) end
    local tops = settled_tops(cfg_key, window_keys, header.windows, header.now_sec)
    if not tops or visit(tops, s, cfg_key) == false then pending[#pending + 1] = s end
  end
end

-- A list of a write's answer: one value as it is, several joined by commas (numbers as integers).
local function joined(values, count)
  if count == 1 then return values[1] end
  local texts = {}
  for i = 1, count do
    local value = values[i]
    texts[i] = type(value) == 'number' and string.format('%d', value) or value
  end
  return table.concat(texts, ',')
end

-- The lists pair_fields and standing_fields join, kept from call to call: every write answers through
-- them, and a table allocated per answer costs Lua's collector, which steps as calls allocate, several
-- times its own making (joined reads `count` entries: what an earlier call left past them is unread).
local LISTS = { scores = {}, ranks = {}, previous = {}, marks = {} }

-- The scores and ranks a write appended to `flat` from entry `first` (score_1, rank_1, ..., score_W,
-- rank_W) as its answer's named fields (joined): scores, ranks.
local function pair_fields(flat, first, window_count)
  if window_count == 1 then return flat[first], flat[first + 1] end
  local scores, ranks = LISTS.scores, LISTS.ranks
  for w = 0, window_count - 1 do scores[w + 1], ranks[w + 1] = flat[first + 2 * w], flat[first + 2 * w + 1] end
  return joined(scores, window_count), joined(ranks, window_count)
end

-- pair_fields, then the previous ranks and marks following the pairs in `flat` (previous_rank_1, ...,
-- previous_rank_W[, mark_1, ..., mark_W]): scores, ranks, previous_ranks and marks (0: the board keeps none).
local function standing_fields(flat, first, window_count)
  local previous, marks = LISTS.previous, LISTS.marks
  local from_previous, from_marks = first + 2 * window_count, first + 3 * window_count
  for w = 0, window_count - 1 do previous[w + 1], marks[w + 1] = flat[from_previous + w], flat[from_marks + w] end
  local scores, ranks = pair_fields(flat, first, window_count)
  return scores, ranks, joined(previous, window_count), marks[1] == nil and 0 or joined(marks, window_count)
end

-- Growth. An item is new on a shard when none of its windows' results hold it; a shard holds as many
-- items as its largest results zset (an item stays in every window that still counts it). The cap is
-- the board's maxItems split over its shards (ceil(maxItems / shards)), read from the shard's config
-- so it is always the stored one; 0 when the board has none.
local function item_cap(cfg_key)
  -- The call's own config (every write's first ask): its copy read in place.
  local most
  if cfg_key == CONFIG.cfg_key then most = CONFIG.maxItems else most = call_state.config_field(cfg_key, 'maxItems') end
  most = most and tonumber(most)
  if not most then return 0 end
  return math.ceil(most / tonumber(call_state.config_field(cfg_key, 'shards') or '1'))
end

-- How many of `items` (repeats allowed) this shard holds in none of the call's `windows`
-- (call_state.bind_windows).
local function new_items(windows, items)
  local tops, window_count = windows.tops, windows.count
  local seen, new = {}, 0
  for _, item in ipairs(items) do
    if not seen[item] then
      seen[item] = true
      local held = false
      for w = 0, window_count - 1 do
        if redis.call('ZSCORE', tops[w], item) then
          held = true
          break
        end
      end
      if not held then new = new + 1 end
    end
  end
  return new
end

-- Admits a write of `items` before it changes anything: returns the new items it creates (0 when no
-- limit applies: nothing is charged then) and nil, or an error refusing the whole write:
-- TB_BOARD_FULL <held> <cap> <new> past the shard's cap, TB_QUOTA items <new> past `allowance` (the
-- client's; -1: unlimited). Existing items are never refused. `known_cap`: item_cap's answer when the
-- caller has it already (nil: read it).
local function admit_items(windows, items, allowance, known_cap)
  local cap = known_cap or item_cap(CALL.cfg_key)
  if cap == 0 and allowance < 0 then return 0, nil end
  local new = new_items(windows, items)
  if new == 0 then return 0, nil end
  if cap > 0 then
    local held = 0
    for w = 0, windows.count - 1 do held = math.max(held, redis.call('ZCARD', windows.tops[w])) end
    if held + new > cap then return new, 'TB_BOARD_FULL ' .. held .. ' ' .. cap .. ' ' .. new end
  end
  if allowance >= 0 and new > allowance then return new, 'TB_QUOTA items ' .. new end
  return new, nil
end

-- Whether a change of the results `top_key` has anyone to tell: an option watching it (hooks_lib
-- `watches`) or an option reading its sums (hooks_lib `reads_sums`).
-- Asked once per window per call (a call never changes either), so the events of a plain window (most)
-- skip the hooks and their lookups.
local function results_watched(top_key)
  local watches = call_state.hooks_of_top(top_key).watches
  for i = 1, #watches do
    if watches[i](top_key) then return true end
  end
  local readers = hooks.reads_sums
  for i = 1, #readers do
    if readers[i](top_key) then return true end
  end
  return false
end

-- What an event of `actor` (nil or "": none) sending `amount` adds to the item in that slot of the
-- window (hooks_lib actor_counted: the actors option's, a weight or a cap), else the amount.
local function actor_counted(slots_key, slot_start, actor, item, amount)
  if actor == nil or actor == '' then return amount end
  local counted = hooks.actor_counted
  for i = 1, #counted do amount = counted[i](slots_key, slot_start, actor, item, amount) end
  return amount
end

-- The actor's event (nil or "": none) added `counted` of the `sent` amount to the item in that slot of
-- the window: hooks_lib actor_added (the actors option keeps who contributed what).
local function actor_added(slots_key, top_key, slot_start, actor, item, counted, sent)
  if actor == nil or actor == '' then return end
  local added = hooks.actor_added
  for i = 1, #added do added[i](slots_key, top_key, slot_start, actor, item, counted, sent) end
end

-- add_amount on a window no one watches (results_watched): its steps without the hooks, then the
-- actor's contribution (actor_added; nil or "": none) as a watched window's add keeps it, an actor's
-- amount being what actor_counted answers (a weight, a cap). `amount`: a
-- number, or the amount's argument as the caller sent it (a decimal integer), which goes to the
-- commands as it is: Redis formats a Lua number with snprintf("%.17g") for each command. Answers the
-- new score, and the score as Redis wrote it.
local function add_unwatched(slots_key, slot_key, top_key, slot_start, item, amount, actor)
  local sent = amount
  if actor and actor ~= '' then amount = actor_counted(slots_key, slot_start, actor, item, amount) end
  if redis.call('HINCRBY', slot_key, item, amount) == 0 then redis.call('HDEL', slot_key, item) end
  local written = redis.call('ZINCRBY', top_key, amount, item)
  -- Most calls keep none: nothing written.
  if EXCEPTIONS.by[top_key] then order.note_written(top_key) end
  -- Redis wrote a number: an arithmetic's coercion parses it once, tonumber twice (a check, then the parse).
  local score = written + 0
  if score == 0 then
    redis.call('ZREM', top_key, item)
    for _, left in ipairs(hooks.item_left) do left(top_key, item) end
  end
  if actor and actor ~= '' then actor_added(slots_key, top_key, slot_start, actor, item, amount, sent) end
  return score, written
end

-- Item increments of one call on its `windows` (call_state.bind_windows). A window's slot is indexed once per call (again only when an
-- event lands in another slot of it), not at all when the shard's indexed second names it (slot_known). `add(reply, item, amount, at_sec, seen_sec, covering, actor)` adds to
-- the slot of `at_sec` in the windows of `covering` (see window_holds; views told, with `seen_sec`
-- the event's time for hot's firstSeen; the actor's contribution kept, actor_added, unless actor is nil or ""), appends the per-window figures score_1, rank_1, ...,
-- score_W, rank_W to `reply`, ranks as of this addition (a window not covering the event answers the
-- item's standing), and returns the earliest due time (unix ms) of the slots it indexed, or nil.
-- The adders built so far, by window count, kept from call to call: a call takes its count's with
-- the slots it indexed forgotten and each window's results_watched asked again, and builds no
-- closure or table (one call runs at a time). An adder keeps the `windows` it was built with: the one
-- record bind_windows refills for every call.
local EVENT_ADDERS = {}

local function event_adder(windows)
  local window_count, tops = windows.count, windows.tops
  local known = EVENT_ADDERS[window_count]
  if known then
    for w = 0, window_count - 1 do known.indexed[w], known.watched[w] = nil, results_watched(tops[w]) end
    return known.add
  end
  local indexed, slot_keys, watched = {}, {}, {}
  for w = 0, window_count - 1 do watched[w] = results_watched(tops[w]) end
  local add = function(reply, item, amount, at_sec, seen_sec, covering, actor)
    local new_due_ms, unknown = nil, false
    for w = 0, window_count - 1 do
      local slots_key, top_key = windows.slots[w], tops[w]
      local score
      if covering[w] then
        local period_sec, interval_sec, origin_sec = window.window_rule(windows, w)
        local slot_start = window.current_slot(at_sec, interval_sec, origin_sec)
        if indexed[w] ~= slot_start then
          indexed[w] = slot_start
          slot_keys[w] = window.slot_key_of(slots_key, slot_start)
          local due_ms, rolling = slot_due.index_unless_known(slots_key, slot_start, period_sec, interval_sec, origin_sec)
          unknown = unknown or rolling
          if due_ms then new_due_ms = math.min(new_due_ms or math.huge, due_ms) end
        end
        if watched[w] then
          local counted = actor_counted(slots_key, slot_start, actor, item, amount)
          local slot_sum
          score, slot_sum = window.add_amount(slot_keys[w], top_key, item, counted)
          actor_added(slots_key, top_key, slot_start, actor, item, counted, amount)
          local summed = hooks.sum_changed
          for i = 1, #summed do summed[i](top_key, slot_start, item, counted, score, seen_sec, slot_sum) end
        else
          score = add_unwatched(slots_key, slot_keys[w], top_key, slot_start, item, amount, actor)
        end
      else
        score = window.standing(top_key, item)
      end
      reply[#reply + 1] = score
      -- Unwatched: no option decides the rank, so the competition rank (item_rank without the rank hooks).
      reply[#reply + 1] = watched[w] and window.item_rank(top_key, item, score) or (order.shown(top_key, item) and window.rank_of(top_key, score) or 0)
    end
    -- An event at now (every window holds it) indexed its slots in every window: kept (slot_due_lib).
    if unknown and covering == window.EVERY_WINDOW[window_count] then slot_due.note_indexed(at_sec) end
    return new_due_ms
  end
  EVENT_ADDERS[window_count] = { add = add, indexed = indexed, watched = watched, slot_keys = slot_keys }
  return add
end

-- The slot keys (by 0-based window) plain_add writes to, for the call's `windows` of which none is
-- watched, once the slot of `now_sec` is indexed in every window: by an add of the running call, or
-- before the call, as the shard's indexed second says (slot_known; the call's first request then needs
-- no add); else nil. A call's events at now land in those slots, so they need no indexing. A window
-- found known is noted as its add would note it, so a later add of the call does not index it either.
local function plain_slots(windows, now_sec)
  local adder = EVENT_ADDERS[windows.count]
  if not adder then return nil end
  local slots = windows.slots
  for w = 0, windows.count - 1 do
    local _, interval_sec, origin_sec = window.window_rule(windows, w)
    local slot_start = window.current_slot(now_sec, interval_sec, origin_sec)
    if adder.watched[w] then return nil end
    if adder.indexed[w] ~= slot_start then
      if not slot_due.slot_known(slot_start, interval_sec, origin_sec, slots[w]) then return nil end
      adder.indexed[w], adder.slot_keys[w] = slot_start, window.slot_key_of(slots[w], slot_start)
    end
  end
  return adder.slot_keys
end

-- The add of an event at now with no actor into `slot_keys` (plain_slots), as add does it there
-- (add_unwatched): writes score_w, rank_w to `reply` from its first entry (what follows them is left as
-- it is: the caller reads 2 per window); answers 1 when every window's
-- new score is the amount (the item was in none), else 0. `amount_arg`: the amount as sent, a decimal
-- integer: it goes to the commands as it is, and a score goes to the rank's ZCOUNT as Redis wrote it
-- (it reads back as the same number), so neither is formatted again; a score (a sum of integers) is
-- written as an integer, so it equals `amount_arg` exactly when it equals the amount.
local function plain_add(reply, slot_keys, windows, item, amount_arg)
  local created, tops = 1, windows.tops
  for w = 0, windows.count - 1 do
    local top_key = tops[w]
    local score, written = add_unwatched(nil, slot_keys[w], top_key, nil, item, amount_arg, nil)
    if written ~= amount_arg then created = 0 end
    local rank = score > 0 and redis.call('ZCOUNT', top_key, '(' .. written, '+inf') + 1 or 0
    -- No option leaves items out of the board's listing (most boards): the rank as counted, unasked.
    if #call_state.hooks_of_top(top_key).exceptions > 0 then rank = order.shown_rank(top_key, item, rank) end
    reply[2 * w + 1], reply[2 * w + 2] = score, rank
  end
  return created
end

-- One window of a batch call (the batch increment, stream ingest), planned once per call: its keys,
-- rule, the slots indexed so far (slot start -> slot key) and whether a change of its results has
-- anyone to tell (an option watching it, views reading it), so that the entries of a plain board (most)
-- skip both hooks with one check each instead of a hook call and its lookups per entry.
local function batch_window(windows, w)
  local top_key = windows.tops[w]
  local period_sec, interval_sec, origin_sec = window.window_rule(windows, w)
  return { slots_key = windows.slots[w], top_key = top_key, period_sec = period_sec, interval_sec = interval_sec,
    origin_sec = origin_sec, indexed = {}, watched = results_watched(top_key) }
end

-- One entry of a batch into the slot starting at `slot_start` of the window planned by batch_window:
-- the slot is indexed once per call, the amount added (add_amount's steps; the hooks only when the
-- window is watched), the actor's contribution kept (actor_added; nil or "": none) and the views told
-- (`seen_sec`: the event's time for hot's firstSeen; unused when not watched). Answers the due time
-- of a slot this created (nil when it was indexed already), for the due index, and the item's new
-- score in the window.
local function add_batch_entry(win, slot_start, item, amount, seen_sec, actor)
  local slot_key = win.indexed[slot_start]
  local new_due_ms = nil
  if not slot_key then
    slot_key = window.slot_key_of(win.slots_key, slot_start)
    win.indexed[slot_start] = slot_key
    new_due_ms = slot_due.index_slot(win.slots_key, slot_start, win.period_sec)
  end
  local top_key = win.top_key
  if win.watched then
    local counted = actor_counted(win.slots_key, slot_start, actor, item, amount)
    local score, slot_sum = window.add_amount(slot_key, top_key, item, counted)
    actor_added(win.slots_key, top_key, slot_start, actor, item, counted, amount)
    local summed = hooks.sum_changed
    for i = 1, #summed do summed[i](top_key, slot_start, item, counted, score, seen_sec, slot_sum) end
    return new_due_ms, score
  end
  return new_due_ms, (add_unwatched(win.slots_key, slot_key, top_key, slot_start, item, amount, actor))
end

board_write.begin_board_call = begin_board_call
board_write.begin_board_write = begin_board_write
board_write.settled_tops = settled_tops
board_write.visit_settled = visit_settled
board_write.standing_fields = standing_fields
board_write.pair_fields = pair_fields
board_write.item_cap = item_cap
board_write.new_items = new_items
board_write.admit_items = admit_items
board_write.add_unwatched = add_unwatched
board_write.event_adder = event_adder
board_write.plain_slots = plain_slots
board_write.plain_add = plain_add
board_write.batch_window = batch_window
board_write.add_batch_entry = add_batch_entry
