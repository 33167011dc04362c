-- requires: actor_blocks, actor_log, aggregate, board_write, call_state, groups, idempotency, prune, reader, segment_growth, segmentation, slot_due, snapshot, window
-- increment_batch: adds amounts to many items in every window of a board, in one atomic step; on a
-- max / min / last board each entry's value is a score instead, recorded as record_score does
-- (best_record; the caller checked the aggregate against the config version).
-- Keys: cfg (the board config hash: holds the config version), then per window slots (its slots index
--       zset) and top (its results zset)
-- Args (reader.read_call, CALLS.increment_batch): the board header, then idem_lib's idem_key,
--       idem_fingerprint, idem_context, idem_retention; new_items, new_actor_entries, new_segment_entries
--       (what the client may create: -1, no quota; actor contributions and segment entries: GROWTH,
--       segment_lib); segments_max (most live segments on this shard; 0: the board takes none); shape
--       (the entries' record shape, RECORD_FIELDS: batch_pair, an item id and amount at now with no
--       creation time, segments or actor, what most batches send: a third of the arguments to pass and
--       to turn into Lua strings; batch_full; batch_grouped, batch_full and the item's group, "" none:
--       unchanged, groups_lib); then the entries as records (reader.record_count): item, amount
--       (integer, non-zero, written as a decimal integer with no sign but '-', no leading zero or
--       exponent; a score, a decimal integer, on a max / min / last board), at_ms (the event's time,
--       unix ms, not after now), created_ms (the item's creation time, unix ms, or "" for none),
--       segments (the segments it also counts in, joined by commas, "" for none; sum boards only), actor
--       ("" for none; with its block key when that differs, ACTORS.split): each entry lands in the slot
--       of its time in every window (and each of its segments' windows) whose live span still holds that
--       slot (creation time: see increment.lua)
-- Reply (reader.answer, CALLS.increment_batch, after idem_lib's outcome, context and, applied only, new
--       items created, due time for the index (unix ms, 0: none; see due_to_index), new actor
--       contributions, new segment entries): draining (0|1), applied (entries applied)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG, TB_BOARD_FULL, TB_QUOTA (see admit_items; actorEntries,
--        segmentEntries: GROWTH.refusal), TB_SEGMENT_LIMIT (the
--        entries' new segments together, see segment_refusal), TB_RETRACTED <actor|item> <until ms>
--        (an entry's actor or item is blocked, see actor_refusal), TB_AT_OUT_OF_SPAN
--        <entry> (1-based: no window holds that entry's slot any more): the whole batch is refused,
--        nothing applied

-- The entries' checks and what the call keeps of them, before anything changes: a refusal of the whole
-- batch (an entry's blocked actor or item, an event time no window holds), else { items (in order),
-- holding (full entries: the windows holding each entry, by its index), at_now (the windows holding
-- now: every pair's), named (the segments named), first_of (each item's first entry, by index),
-- distinct (items), full (full entries) }.
local function batch_entries(cfg_key, entries, full, now_ms, windows)
  local now_sec = math.floor(now_ms / 1000)
  local blocks = actor_blocks.blocking(cfg_key, now_ms)
  local at_now = window.window_holds(now_sec, now_sec, windows)
  local batch = { items = {}, holding = {}, at_now = at_now, named = {}, first_of = {}, distinct = 0, full = full }
  local items, first_of = batch.items, batch.first_of
  -- Entries mostly share a time (now): the windows holding a second are worked out once per second.
  local holding_at = {}
  for e = 1, #entries do
    local entry = entries[e]
    local item = entry.item
    local blocked = blocks and actor_blocks.refusal(cfg_key, select(2, actor_log.ACTORS.split(entry.actor or '')), now_ms, item)
    if blocked then return nil, blocked end
    items[e] = item
    if not first_of[item] then first_of[item], batch.distinct = e, batch.distinct + 1 end
    if full then
      for _, name in ipairs(segmentation.segment_names(entry.segments)) do batch.named[name] = true end
      local at_sec = math.floor(tonumber(entry.at_ms) / 1000)
      if holding_at[at_sec] == nil then holding_at[at_sec] = window.window_holds(at_sec, now_sec, windows) or false end
      batch.holding[e] = holding_at[at_sec]
      if not batch.holding[e] then return nil, 'TB_AT_OUT_OF_SPAN ' .. e end
    end
  end
  return batch, nil
end

-- Whether the batch's growth can be told by its own adds instead of a ZSCORE per item and window
-- before them (admit_items): pairs (every window holds every entry) on a sum board without an item cap,
-- with an allowance no count of new items can pass. An item is then new when its first entry finds no
-- score in any window: its new score is its amount (amounts are at most 10^6, MAX_ABS_AMOUNT; a sum
-- reaching 0 is removed, never kept).
local function counted_by_adds(cfg_key, batch, allowance)
  return not batch.full and aggregate.mode() == 'sum' and allowance >= batch.distinct and board_write.item_cap(cfg_key) == 0
end

-- The batch's growth in actor contributions and segment entries (GROWTH) against the allowances
-- `actors` and `segments`, counted only for full entries (pairs name neither) when some quota is on:
-- the refusal, or nil.
local function batch_growth_refusal(batch, entries, actors, segments, windows)
  segment_growth.GROWTH.begin()
  if not batch.full or not segment_growth.GROWTH.counted(actors, segments) then return nil end
  for e = 1, #entries do
    local entry = entries[e]
    segment_growth.GROWTH.of_entry(windows, batch.holding[e], math.floor(tonumber(entry.at_ms) / 1000), entry.item,
      (actor_log.ACTORS.split(entry.actor)), segmentation.segment_names(entry.segments))
  end
  return segment_growth.GROWTH.refusal(actors, segments)
end

-- Each entry into its slot (indexed, and its key made, once per window and slot), in every window
-- holding it; answers the earliest due time (unix ms) of a slot it created, or nil. The slot of an
-- entry's time is worked out once per window and time (entries mostly share now).
local function batch_add(batch, entries, now_ms, windows)
  local new_due_ms, full = nil, batch.full
  local now_arg = string.format('%d', now_ms)
  for w = 0, windows.count - 1 do
    local win, slot_at = board_write.batch_window(windows, w), {}
    for e = 1, #entries do
      if (full and batch.holding[e] or batch.at_now)[w] then
        local entry = entries[e]
        local at_arg = full and entry.at_ms or now_arg
        local slot_start = slot_at[at_arg]
        if not slot_start then
          slot_start = window.current_slot(math.floor(tonumber(at_arg) / 1000), win.interval_sec, win.origin_sec)
          slot_at[at_arg] = slot_start
        end
        local due
        if aggregate.mode() == 'sum' then
          local seen_sec = win.watched and math.min(tonumber(at_arg), full and tonumber(entry.created_ms) or math.huge) / 1000
          due = board_write.add_batch_entry(win, slot_start, entry.item, tonumber(entry.amount), seen_sec,
            full and (actor_log.ACTORS.split(entry.actor)) or '')
        else
          due = aggregate.record_batch_score(win, slot_start, entry.item, entry.amount, at_arg)
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
local function batch_add_pairs(batch, entries, now_ms, windows, counting)
  local now_sec = math.floor(now_ms / 1000)
  local new_due_ms, held, first_of, unknown = nil, 0, batch.first_of, false
  for w = 0, windows.count - 1 do
    local win = board_write.batch_window(windows, w)
    local slot_start = window.current_slot(now_sec, win.interval_sec, win.origin_sec)
    local slot_key = window.slot_key_of(win.slots_key, slot_start)
    win.indexed[slot_start] = slot_key
    local due_ms, rolling = slot_due.index_unless_known(win.slots_key, slot_start, win.period_sec, win.interval_sec,
      win.origin_sec)
    unknown = unknown or rolling
    new_due_ms = segmentation.earliest_due(new_due_ms, due_ms)
    for e = 1, #entries do
      local entry = entries[e]
      local item, amount = entry.item, tonumber(entry.amount)
      local score
      if win.watched then
        score = select(2, board_write.add_batch_entry(win, slot_start, item, amount, now_ms / 1000, ''))
      else
        score = board_write.add_unwatched(win.slots_key, slot_key, win.top_key, slot_start, item, entry.amount, nil)
      end
      if counting and score ~= amount and first_of[item] == e then
        first_of[item] = -e
        held = held + 1
      end
    end
  end
  if unknown then slot_due.note_indexed(now_sec) end
  return new_due_ms, held
end

-- Adds each full entry to its segments (segment_add, with its actor: the board's windows kept the
-- actor's part in the pass before), in the windows `holding` it; returns the earliest due time (unix
-- ms) of a slot it created, or nil.
local function batch_segments_add(entries, windows, holding)
  local new_due_ms = nil
  for e = 1, #entries do
    local entry = entries[e]
    local at_ms = tonumber(entry.at_ms)
    local seen_sec = math.min(at_ms, tonumber(entry.created_ms) or math.huge) / 1000
    local segment_due = segmentation.segment_add(windows, segmentation.segment_names(entry.segments), entry.item,
      tonumber(entry.amount), math.floor(at_ms / 1000), holding[e], seen_sec, (actor_log.ACTORS.split(entry.actor)))
    new_due_ms = segmentation.earliest_due(new_due_ms, segment_due)
  end
  return new_due_ms
end

-- The batch's entries applied (the checks passed): its windows, then its segments and groups. Answers
-- the earliest due time of a slot it created (or nil), and how many items it created (`counting`:
-- told by the adds, counted_by_adds; else `created`, admit_items').
local function batch_apply(batch, entries, now_ms, windows, counting, created, segments)
  local new_due_ms, held
  -- A tie mark at most for each entry in each window (ties_lib takes their sequence numbers at once).
  call_state.CALL.marks_ahead = windows.count * #entries
  if batch.full or aggregate.mode() ~= 'sum' then
    new_due_ms = batch_add(batch, entries, now_ms, windows)
  else
    new_due_ms, held = batch_add_pairs(batch, entries, now_ms, windows, counting)
  end
  if counting then created = batch.distinct - held end
  -- A batch naming no segment (most) skips this pass: it would do nothing for each of its entries.
  if #segments > 0 then new_due_ms = segmentation.earliest_due(new_due_ms, batch_segments_add(entries, windows, batch.holding)) end
  return new_due_ms, created
end

-- Names each grouped entry's group (groups_lib), in order: the latest entry of an item names its group.
local function batch_groups(cfg_key, entries)
  for e = 1, #entries do groups.assign(cfg_key, entries[e].item, entries[e].group) end
end

local function increment_batch(keys, args)
  local cfg_key = keys[1]
  local answer, header, arg, idem, records_at = board_write.begin_board_write(keys, args, CALLS.increment_batch)
  if answer then return answer end
  local now_ms, now_sec, window_count = header.now_ms, header.now_sec, #header.windows
  local windows = call_state.bind_windows(2, window_count)
  local _, draining = snapshot.open_write(windows, header)
  local entries = reader.read_records(args, records_at, RECORD_FIELDS[arg.shape])
  local batch, refusal = batch_entries(cfg_key, entries, arg.shape ~= 'batch_pair', now_ms, windows)
  if refusal then return redis.error_reply(refusal) end
  local segments = {}
  for name in pairs(batch.named) do segments[#segments + 1] = name end
  refusal = segmentation.segment_refusal(cfg_key, segments, tonumber(arg.segments_max), now_sec)
    or batch_growth_refusal(batch, entries, tonumber(arg.new_actor_entries), tonumber(arg.new_segment_entries), windows)
  if refusal then return redis.error_reply(refusal) end
  prune.settle(cfg_key, batch.items)
  segmentation.cross_named_segments(windows, segments)
  local allowance = tonumber(arg.new_items)
  local counting, created = counted_by_adds(cfg_key, batch, allowance), 0
  if not counting then
    created, refusal = board_write.admit_items(windows, batch.items, allowance)
    if refusal then return redis.error_reply(refusal) end
  end
  snapshot.bump_version(cfg_key)
  local new_due_ms
  new_due_ms, created = batch_apply(batch, entries, now_ms, windows, counting, created, segments)
  if arg.shape == 'batch_grouped' then batch_groups(cfg_key, entries) end
  local due_ms = slot_due.due_to_index(windows, snapshot.with_snapshot_due(new_due_ms, windows, now_sec))
  local reply = reader.answer(CALLS.increment_batch, { draining = draining, applied = #batch.items })
  local growth = segment_growth.GROWTH
  return idempotency.idem_finish(cfg_key, 'cfg', idem, now_ms, reply, reader.record_of(CALLS.increment_batch.created,
    { items = created, due_ms = due_ms, actor_entries = growth.actors, segment_entries = growth.segments }, {}))
end
