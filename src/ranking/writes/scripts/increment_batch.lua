-- requires: actor_log, board_write, call_state, groups, idempotency, segment_growth, segmentation, slot_due, snapshot, window
-- increment_batch: adds amounts to many items in every window of a board, in one atomic step; on a
-- max / min / last board each entry's value is a score instead, recorded as record_score does
-- (best_record; the caller checked the aggregate against the config version).
-- KEYS: dynamic
-- KEYS[1]        board config hash (holds the config version)
-- KEYS[2w], KEYS[2w+1] (w = 1..W): window w's slots index zset and results zset
-- ARGV[1]        config version the caller built its keys from
-- ARGV[2]        now, unix milliseconds
-- ARGV[3]        expiry budget: most expired-slot fields drained by this call
-- ARGV[4]        W, number of windows
-- ARGV[5+4(w-1)] .. ARGV[8+4(w-1)]: window w's period (s), interval (s), creation time (unix ms), origin (window_lib)
-- ARGV[5+4W] .. ARGV[8+4W]: idempotency key ("" for none), request fingerprint, context, retention (ms)
-- ARGV[9+4W]     new items the client may create (-1: no quota)
-- ARGV[10+4W]    new actor contributions the client may create (-1: no quota; see GROWTH, segment_lib)
-- ARGV[11+4W]    new segment entries the client may create (-1: no quota; see GROWTH, segment_lib)
-- ARGV[12+4W]    segments.max, most live segments on this shard (0: the board takes none)
-- ARGV[13+4W]    entry stride: 6, the entries are sextuples (below); 2, pairs of item id and amount,
--                each at now with no creation time, segments or actor (what most batches send: a third
--                of the arguments to pass and to turn into Lua strings); 7, sextuples and the item's
--                group ("" none: unchanged; groups_lib) last
-- ARGV[14+4W ...] the entries: item id, amount (integer, non-zero, written as a decimal integer with no
--                sign but '-', no leading zero or exponent; a score, a decimal integer, on a
--                max / min / last board), the event's time (unix ms, not after now), the item's
--                creation time (unix ms, or "" for none), the segments it also counts in (joined by
--                commas, "" for none; sum boards only), the actor ("" for none; with its block key when that
--                differs, ACTORS.split): each entry lands in the slot of its time in
--                every window (and each of its segments' windows) whose live span still holds that slot
--                (creation time: see increment.lua)
-- Reply: { outcome, context, [new items created, due time for the index (unix ms, 0: none; see
--        due_to_index), new actor contributions, new segment entries: applied only], draining (0|1),
--        entries applied } (outcome, context and the counts: see idem_lib)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG, TB_BOARD_FULL, TB_QUOTA (see admit_items; actorEntries,
--        segmentEntries: GROWTH.refusal), TB_SEGMENT_LIMIT (the
--        entries' new segments together, see segment_refusal), TB_RETRACTED <actor|item> <until ms>
--        (an entry's actor or item is blocked, see actor_refusal), TB_AT_OUT_OF_SPAN
--        <entry> (1-based: no window holds that entry's slot any more): the whole batch is refused,
--        nothing applied

-- The running call's state (call_lib): the same tables for every call.
local BOARD = call_state.BOARD

local ENTRY_FULL = 6
local ENTRY_GROUPED = 7

-- The entries' checks and what the call keeps of them, before anything changes: a refusal of the whole
-- batch (an entry's blocked actor or item, an event time no window holds), else { items (in order),
-- holding (sextuples: the windows holding each entry, by its first ARGV index), at_now (the windows
-- holding now: every pair's), named (the segments named), first_of (each item's first entry, by ARGV
-- index), distinct (items), full (sextuples) }.
local function batch_entries(first, stride, now_ms, window_count)
  local full, now_sec = stride >= ENTRY_FULL, math.floor(now_ms / 1000)
  local blocks = actor_log.ACTORS.blocking(KEYS[1], now_ms)
  local at_now = window.window_holds(now_sec, now_sec, window_count)
  local batch = { items = {}, holding = {}, at_now = at_now, named = {}, first_of = {}, distinct = 0, full = full,
    stride = stride }
  local items, first_of, count = batch.items, batch.first_of, 0
  -- Entries mostly share a time (now): the windows holding a second are worked out once per second.
  local holding_at = {}
  for i = first, #ARGV, stride do
    local item = ARGV[i]
    local blocked = blocks and actor_log.ACTORS.refusal(KEYS[1], select(2, actor_log.ACTORS.split(full and ARGV[i + 5] or '')), now_ms, item)
    if blocked then return nil, blocked end
    count = count + 1
    items[count] = item
    if not first_of[item] then first_of[item], batch.distinct = i, batch.distinct + 1 end
    if full then
      for _, name in ipairs(segmentation.segment_names(ARGV[i + 4])) do batch.named[name] = true end
      local at_sec = math.floor(tonumber(ARGV[i + 2]) / 1000)
      if holding_at[at_sec] == nil then holding_at[at_sec] = window.window_holds(at_sec, now_sec, window_count) or false end
      batch.holding[i] = holding_at[at_sec]
      if not batch.holding[i] then return nil, 'TB_AT_OUT_OF_SPAN ' .. count end
    end
  end
  return batch, nil
end

-- Whether the batch's growth can be told by its own adds instead of a ZSCORE per item and window
-- before them (admit_items): pairs (every window holds every entry) on a sum board without an item cap,
-- with an allowance no count of new items can pass. An item is then new when its first entry finds no
-- score in any window: its new score is its amount (amounts are at most 10^6, MAX_ABS_AMOUNT; a sum
-- reaching 0 is removed, never kept).
local function counted_by_adds(batch, allowance)
  return not batch.full and BOARD.aggregate == 'sum' and allowance >= batch.distinct and board_write.item_cap(KEYS[1]) == 0
end

-- The batch's growth in actor contributions and segment entries (GROWTH) against the allowances from
-- ARGV[first_allowance], counted only for sextuples (pairs name neither) when some quota is on: the
-- refusal, or nil.
local function batch_growth_refusal(batch, first, first_allowance, window_count)
  segment_growth.GROWTH.begin()
  local actors, segments = tonumber(ARGV[first_allowance]), tonumber(ARGV[first_allowance + 1])
  if not batch.full or not segment_growth.GROWTH.counted(actors, segments) then return nil end
  for i = first, #ARGV, batch.stride do
    segment_growth.GROWTH.of_entry(2, window_count, batch.holding[i], math.floor(tonumber(ARGV[i + 2]) / 1000), ARGV[i],
      (actor_log.ACTORS.split(ARGV[i + 5])), segmentation.segment_names(ARGV[i + 4]))
  end
  return segment_growth.GROWTH.refusal(actors, segments)
end

-- Each entry into its slot (indexed, and its key made, once per window and slot), in every window
-- holding it; answers the earliest due time (unix ms) of a slot it created, or nil. The slot of an
-- entry's time is worked out once per window and time (entries mostly share now).
local function batch_add(batch, first, stride, window_count)
  local new_due_ms, full = nil, batch.full
  for w = 0, window_count - 1 do
    local win, slot_at = board_write.batch_window(w), {}
    for i = first, #ARGV, stride do
      if (full and batch.holding[i] or batch.at_now)[w] then
        local at_arg = full and ARGV[i + 2] or ARGV[2]
        local slot_start = slot_at[at_arg]
        if not slot_start then
          slot_start = window.current_slot(math.floor(tonumber(at_arg) / 1000), win.interval_sec, win.origin_sec)
          slot_at[at_arg] = slot_start
        end
        local due
        if BOARD.aggregate == 'sum' then
          local seen_sec = win.watched and math.min(tonumber(at_arg), full and tonumber(ARGV[i + 3]) or math.huge) / 1000
          due = board_write.add_batch_entry(win, slot_start, ARGV[i], tonumber(ARGV[i + 1]), seen_sec,
            full and (actor_log.ACTORS.split(ARGV[i + 5])) or '')
        else
          due = board_write.record_batch_score(win, slot_start, ARGV[i], ARGV[i + 1], at_arg)
        end
        if due then new_due_ms = math.min(new_due_ms or math.huge, due) end
      end
    end
  end
  return new_due_ms
end

-- batch_add for pairs on a sum board (most batches): every entry is at now, so each window's slot is
-- indexed once before its entries (not at all when the shard's indexed second names it, slot_known, as
-- for single increments; a call that indexed a rolling window's slot notes now as that second), and an
-- entry of an unwatched window goes straight to add_unwatched,
-- without the general loop's lookups per entry, its amount's argument passed on as it is (see
-- add_unwatched). Answers the earliest due time as batch_add does, and how many distinct items some
-- window held before (when `counting`: see counted_by_adds). An item is counted at its first entry,
-- in the first window that finds it held, and its first_of turned negative, so no other window counts
-- it again (first_of is read by nothing after this).
local function batch_add_pairs(batch, first, window_count, counting)
  local now_ms = tonumber(ARGV[2])
  local now_sec = math.floor(now_ms / 1000)
  local new_due_ms, held, first_of, unknown = nil, 0, batch.first_of, false
  for w = 0, window_count - 1 do
    local win = board_write.batch_window(w)
    local slot_start = window.current_slot(now_sec, win.interval_sec, win.origin_sec)
    local slot_key = window.slot_key_of(win.slots_key, slot_start)
    win.indexed[slot_start] = slot_key
    local due_ms, rolling = slot_due.index_unless_known(win.slots_key, slot_start, win.period_sec, win.interval_sec,
      win.origin_sec)
    unknown = unknown or rolling
    new_due_ms = segmentation.earliest_due(new_due_ms, due_ms)
    for i = first, #ARGV, 2 do
      local item, amount = ARGV[i], tonumber(ARGV[i + 1])
      local score
      if win.watched then
        score = select(2, board_write.add_batch_entry(win, slot_start, item, amount, now_ms / 1000, ''))
      else
        score = board_write.add_unwatched(win.slots_key, slot_key, win.top_key, slot_start, item, ARGV[i + 1], nil)
      end
      if counting and score ~= amount and first_of[item] == i then
        first_of[item] = -i
        held = held + 1
      end
    end
  end
  if unknown then slot_due.note_indexed(now_sec) end
  return new_due_ms, held
end

-- Adds each entry (sextuples from ARGV[first]) to its segments (segment_add, with its actor: the
-- board's windows kept the actor's part in the pass before), in the windows `holding` it; returns the
-- earliest due time (unix ms) of a slot it created, or nil.
local function batch_segments_add(first, stride, window_count, holding)
  local new_due_ms = nil
  for i = first, #ARGV, stride do
    local at_ms = tonumber(ARGV[i + 2])
    local seen_sec = math.min(at_ms, tonumber(ARGV[i + 3]) or math.huge) / 1000
    local segment_due = segmentation.segment_add(2, window_count, segmentation.segment_names(ARGV[i + 4]), ARGV[i], tonumber(ARGV[i + 1]),
      math.floor(at_ms / 1000), holding[i], seen_sec, (actor_log.ACTORS.split(ARGV[i + 5])))
    new_due_ms = segmentation.earliest_due(new_due_ms, segment_due)
  end
  return new_due_ms
end

-- Names each septuple's group (groups_lib), in order: the latest entry of an item names its group.
local function batch_groups(first)
  for i = first, #ARGV, ENTRY_GROUPED do groups.assign(KEYS[1], ARGV[i], ARGV[i + 6]) end
end

local function increment_batch(keys, args)
  call_state.begin_call(keys, args)
  local answer, now_ms, window_count, idem = board_write.begin_board_write(5)
  if answer then return answer end
  local now_sec = math.floor(now_ms / 1000)
  snapshot.cross_all(2, window_count, 5, now_sec)
  local draining = window.expire_all(2, window_count, 5, now_sec, tonumber(ARGV[3]))
  slot_due.settle_slot_due()
  local stride = tonumber(ARGV[13 + window.WINDOW_ARGS * window_count])
  local first = 14 + window.WINDOW_ARGS * window_count
  local batch, refusal = batch_entries(first, stride, now_ms, window_count)
  if refusal then return redis.error_reply(refusal) end
  local segments = {}
  for name in pairs(batch.named) do segments[#segments + 1] = name end
  refusal = segmentation.segment_refusal(KEYS[1], segments, tonumber(ARGV[12 + window.WINDOW_ARGS * window_count]), now_sec)
    or batch_growth_refusal(batch, first, 10 + window.WINDOW_ARGS * window_count, window_count)
  if refusal then return redis.error_reply(refusal) end
  segmentation.cross_named_segments(2, window_count, segments)
  local allowance = tonumber(ARGV[9 + window.WINDOW_ARGS * window_count])
  local counting, created = counted_by_adds(batch, allowance), 0
  if not counting then
    created, refusal = board_write.admit_items(2, window_count, batch.items, allowance)
    if refusal then return redis.error_reply(refusal) end
  end
  snapshot.bump_version(KEYS[1])
  local new_due_ms, held
  if batch.full or BOARD.aggregate ~= 'sum' then
    new_due_ms = batch_add(batch, first, stride, window_count)
  else
    new_due_ms, held = batch_add_pairs(batch, first, window_count, counting)
  end
  if counting then created = batch.distinct - held end
  -- A batch naming no segment (most) skips this pass: it would do nothing for each of its entries.
  if #segments > 0 then new_due_ms = segmentation.earliest_due(new_due_ms, batch_segments_add(first, stride, window_count, batch.holding)) end
  if stride == ENTRY_GROUPED then batch_groups(first) end
  local due_ms = window.due_to_index(2, window_count, snapshot.with_snapshot_due(new_due_ms, 2, window_count, now_sec))
  return idempotency.idem_finish(KEYS[1], 'cfg', idem, now_ms, { draining, #batch.items },
    { created, due_ms, segment_growth.GROWTH.actors, segment_growth.GROWTH.segments })
end
