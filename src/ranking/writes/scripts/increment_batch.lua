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
-- ARGV[10+4W]    segments.max, most live segments on this shard (0: the board takes none)
-- ARGV[11+4W ...] sextuples of item id, amount (integer, non-zero; a score, a decimal integer, on a
--                max / min / last board), the event's time (unix ms, not after now), the item's
--                creation time (unix ms, or "" for none), the segments it also counts in (joined by
--                commas, "" for none; sum boards only), the actor ("" for none; actor_lib): each entry lands in the slot of its time in
--                every window (and each of its segments' windows) whose live span still holds that slot
--                (creation time: see increment.lua)
-- Reply: { outcome, context, [new items created, due time for the index (unix ms, 0: none; see
--        due_to_index): applied only], draining (0|1), entries applied } (outcome, context and the
--        counts: see idem_lib)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG, TB_BOARD_FULL, TB_QUOTA (see admit_items), TB_SEGMENT_LIMIT (the
--        entries' new segments together, see segment_refusal), TB_RETRACTED <actor|item> <until ms>
--        (an entry's actor or item is blocked, see actor_refusal), TB_AT_OUT_OF_SPAN
--        <entry> (1-based: no window holds that entry's slot any more): the whole batch is refused,
--        nothing applied
-- Adds each entry from ARGV[first] to its segments (segment_add, with its actor: the board's windows
-- kept the actor's part in the pass before), in the windows `holding` it; returns the earliest due
-- time (unix ms) of a slot it created, or nil.
local function batch_segments_add(first, window_count, holding)
  local new_due_ms = nil
  for i = first, #ARGV, 6 do
    local at_ms = tonumber(ARGV[i + 2])
    local seen_sec = math.min(at_ms, tonumber(ARGV[i + 3]) or math.huge) / 1000
    local segment_due = segment_add(2, window_count, segment_names(ARGV[i + 4]), ARGV[i], tonumber(ARGV[i + 1]),
      math.floor(at_ms / 1000), holding[i], seen_sec, ARGV[i + 5])
    new_due_ms = earliest_due(new_due_ms, segment_due)
  end
  return new_due_ms
end

local function increment_batch(keys, args)
  begin_call(keys, args)
  local answer, now_ms, window_count, idem = begin_board_write(5)
  if answer then return answer end
  local now_sec = math.floor(now_ms / 1000)
  cross_all(2, window_count, 5, now_sec)
  local draining = expire_all(2, window_count, 5, now_sec, tonumber(ARGV[3]))
  settle_slot_due()
  local first = 11 + WINDOW_ARGS * window_count
  local items, holding, named = {}, {}, {}
  -- Entries mostly share a time (now): the windows holding a second are worked out once per second.
  local holding_at = {}
  for i = first, #ARGV, 6 do
    local blocked = ACTORS.refusal(KEYS[1], ARGV[i + 5], now_ms, ARGV[i])
    if blocked then return redis.error_reply(blocked) end
    items[#items + 1] = ARGV[i]
    for _, name in ipairs(segment_names(ARGV[i + 4])) do named[name] = true end
    local at_sec = math.floor(tonumber(ARGV[i + 2]) / 1000)
    if holding_at[at_sec] == nil then holding_at[at_sec] = window_holds(at_sec, now_sec, window_count) or false end
    holding[i] = holding_at[at_sec]
    if not holding[i] then return redis.error_reply('TB_AT_OUT_OF_SPAN ' .. #items) end
  end
  local segments = {}
  for name in pairs(named) do segments[#segments + 1] = name end
  local refusal = segment_refusal(KEYS[1], segments, tonumber(ARGV[10 + WINDOW_ARGS * window_count]), now_sec)
  if refusal then return redis.error_reply(refusal) end
  local created
  created, refusal = admit_items(2, window_count, items, tonumber(ARGV[9 + WINDOW_ARGS * window_count]))
  if refusal then return redis.error_reply(refusal) end
  bump_version(KEYS[1])
  -- Each entry into its slot (indexed, and its key made, once per window and slot), then the views.
  -- The slot of an entry's time is worked out once per window and time (entries mostly share now).
  local new_due_ms = nil
  for w = 0, window_count - 1 do
    local win, slot_at = batch_window(w), {}
    for i = first, #ARGV, 6 do
      if holding[i][w] then
        local at_arg = ARGV[i + 2]
        local slot_start = slot_at[at_arg]
        if not slot_start then
          slot_start = current_slot(math.floor(tonumber(at_arg) / 1000), win.interval_sec, win.origin_sec)
          slot_at[at_arg] = slot_start
        end
        local due
        if BOARD.aggregate == 'sum' then
          local seen_sec = win.watched and math.min(tonumber(at_arg), tonumber(ARGV[i + 3]) or math.huge) / 1000
          due = add_batch_entry(win, slot_start, ARGV[i], tonumber(ARGV[i + 1]), seen_sec, ARGV[i + 5])
        else
          due = record_batch_score(win, slot_start, ARGV[i], ARGV[i + 1], at_arg)
        end
        if due then new_due_ms = math.min(new_due_ms or math.huge, due) end
      end
    end
  end
  -- A batch naming no segment (most) skips this pass: it would do nothing for each of its entries.
  if #segments > 0 then new_due_ms = earliest_due(new_due_ms, batch_segments_add(first, window_count, holding)) end
  local due_ms = due_to_index(2, window_count, with_snapshot_due(new_due_ms, 2, window_count, now_sec))
  return idem_finish(KEYS[1], 'cfg', idem, now_ms, { draining, (#ARGV - first + 1) / 6 }, { created, due_ms })
end
