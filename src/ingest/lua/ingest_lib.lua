-- module: ingest
-- requires: actor_blocks, actor_log, board_write, call_state, prune, segmentation, slot_due, snapshot, window
-- ingest_lib: what the ingest functions share (ingest_apply, its general path, and ingest_groups, its
-- fast path), a module of the tb_ingest function library after the ranking's shared modules. Handler
-- modules are blocks of their own (src/redis/function-library.ts), so a helper both call lives here.
-- KEYS: 0
-- Conventions: the keys as ingest_apply.lua documents them (the window modules take the call's windows
-- as call_state.bind_windows names them: ingest_begin binds them); an event is a table of named fields (item, amount, at_ms,
-- segments, actor; an entry of ingest_apply also its id), as the call's JSON list decodes.

-- Message ids "<hi>-<lo>" as two numbers (exact up to 2^53: stream ids' milliseconds and sequences are).
local function id_of(text)
  local hi, lo = string.match(text, '^(%d+)-(%d+)$')
  return tonumber(hi), tonumber(lo)
end

local function after(a_hi, a_lo, b_hi, b_lo)
  return a_hi > b_hi or (a_hi == b_hi and a_lo > b_lo)
end

-- Growth on this shard: new items are admitted in order until the board's cap (see board_write_lib).
-- Answers admit(item, take): whether the item may be written (true for an item the shard already
-- holds); with `take` it is counted as admitted.
local function ingest_admitter(windows)
  local cap = board_write.item_cap(call_state.CALL.cfg_key)
  local held = nil
  local admitted = {}
  return function(item, take)
    if cap == 0 or admitted[item] then return true end
    if board_write.new_items(windows, { item }) == 0 then
      admitted[item] = true
      return true
    end
    if held == nil then
      held = 0
      for w = 0, windows.count - 1 do held = math.max(held, redis.call('ZCARD', windows.tops[w])) end
    end
    if held + 1 > cap then return false end
    if take then
      held = held + 1
      admitted[item] = true
    end
    return true
  end
end

-- Segments on this shard: new segments are admitted in order until segments.max (as segment_refusal
-- counts them: a segment is live while its newest slot has not expired). Answers admit(names, take).
local function ingest_segment_admitter(max, now_sec)
  local segs = segmentation.segment_indexes(call_state.CALL.cfg_key)
  local live, known = nil, {}
  return function(names, take)
    local fresh = {}
    for _, name in ipairs(names) do
      if known[name] == nil then
        local live_until = tonumber(redis.call('ZSCORE', segs, name))
        known[name] = live_until ~= nil and live_until > now_sec
      end
      if not known[name] then fresh[#fresh + 1] = name end
    end
    if #fresh == 0 then return true end
    live = live or redis.call('ZCOUNT', segs, '(' .. now_sec, '+inf')
    if live + #fresh > max then return false end
    if take then
      live = live + #fresh
      for _, name in ipairs(fresh) do known[name] = true end
    end
    return true
  end
end

-- Checks one event (its actor with its block key when that differs: ACTORS.split) against the
-- windows, the blocks, segments.max and the item cap, in that
-- order (as an HTTP increment does), and takes its share of both limits when it passes. Answers nil
-- (accepted) or the refusal's reason ("RETRACTED <actor|item> <until ms>" for a block).
-- `checks`: { holding_at (second -> windows holding it, or false), admit, admit_segments, now_ms, now_sec, windows }.
local function ingest_check(checks, event)
  local at_sec = math.floor(event.at_ms / 1000)
  local holding_at = checks.holding_at
  if holding_at[at_sec] == nil then holding_at[at_sec] = window.window_holds(at_sec, checks.now_sec, checks.windows) or false end
  if not holding_at[at_sec] then return 'AT_OUT_OF_SPAN' end
  local blocked = actor_blocks.refusal(call_state.CALL.cfg_key, select(2, actor_log.ACTORS.split(event.actor)), checks.now_ms, event.item)
  if blocked then return string.sub(blocked, 4) end
  -- Most events name no segment: no list is made for them.
  local names = event.segments ~= '' and segmentation.segment_names(event.segments) or nil
  if names and not checks.admit_segments(names, false) then return 'SEGMENT_LIMIT' end
  if not checks.admit(event.item, true) then return 'BOARD_FULL' end
  if names then checks.admit_segments(names, true) end
  prune.settle(call_state.CALL.cfg_key, event.item)
  return nil
end

local function ingest_checks(now_ms, now_sec, windows, segments_max)
  return { holding_at = {}, admit = ingest_admitter(windows), now_ms = now_ms, now_sec = now_sec,
    windows = windows, admit_segments = ingest_segment_admitter(segments_max, now_sec) }
end

-- What a call does before its events, once its lease is checked (ingest_begin's `call`): the windows
-- cross their snapshot boundaries and drain what expired (within the header's budget), the due slots
-- settle. Answers whether a window is still draining, and the events' checks (ingest_checks).
local function ingest_prepare(call, header, segments_max)
  local _, draining = snapshot.open_write(call.windows, header)
  return draining, ingest_checks(header.now_ms, header.now_sec, call.windows, segments_max)
end

-- One window's part of the accepted events, event by event (add_batch_entry: ties and views told of
-- each change, in order, the actor's contribution kept as an HTTP increment keeps it). Answers the
-- earliest due time of a slot it created, or nil.
local function ingest_add_window(windows, w, accepted, holding_at)
  local win, slot_at, new_due_ms = board_write.batch_window(windows, w), {}, nil
  for _, event in ipairs(accepted) do
    local at_ms = event.at_ms
    local at_sec = math.floor(at_ms / 1000)
    if holding_at[at_sec][w] then
      slot_at[at_sec] = slot_at[at_sec] or window.current_slot(at_sec, win.interval_sec, win.origin_sec)
      local due = board_write.add_batch_entry(win, slot_at[at_sec], event.item, event.amount, at_ms / 1000,
        (actor_log.ACTORS.split(event.actor)))
      if due then new_due_ms = math.min(new_due_ms or math.huge, due) end
    end
  end
  return new_due_ms
end

-- Adds the accepted events to the windows holding them, then to their segments; answers the earliest
-- due time of a slot this created, or nil.
local function ingest_add(accepted, holding_at, windows)
  local new_due_ms = nil
  for w = 0, windows.count - 1 do
    new_due_ms = segmentation.earliest_due(new_due_ms, ingest_add_window(windows, w, accepted, holding_at))
  end
  for _, event in ipairs(accepted) do
    if event.segments ~= '' then
      local at_sec = math.floor(event.at_ms / 1000)
      -- The event's time as the board's views saw it (hot's firstSeen): the segment's views see the same.
      local due = segmentation.segment_add(windows, segmentation.segment_names(event.segments), event.item, event.amount, at_sec,
        holding_at[at_sec], event.at_ms / 1000, (actor_log.ACTORS.split(event.actor)))
      new_due_ms = segmentation.earliest_due(new_due_ms, due)
    end
  end
  return new_due_ms
end

-- The start every ingest call shares: board_write's begin_board_call (the call bound, its args read by
-- `contract`, the config version checked), then the caller's lease epoch (arg.epoch) checked. Answers an
-- error reply (nil: none), the header, the arguments and the call's state { windows
-- (call_state.bind_windows), progress, epoch, last, stored_epoch }.
local function ingest_begin(keys, args, contract)
  local refused, header, arg = board_write.begin_board_call(keys, args, contract)
  if refused then return refused end
  local window_count, epoch = #header.windows, tonumber(arg.epoch)
  local progress = keys[2 * window_count + 2]
  local stored = redis.call('HMGET', progress, 'last', 'epoch')
  if stored[2] and tonumber(stored[2]) > epoch then return redis.error_reply('TB_INGEST_FENCED ' .. stored[2]) end
  return nil, header, arg, { windows = call_state.bind_windows(2, window_count), progress = progress, epoch = epoch,
    last = stored[1] or '0-0', stored_epoch = tonumber(stored[2]) }
end

-- Adds `accepted` and records the progress with it: events applied, the highest id (nil: none new)
-- and the epoch. Answers the due time for the index (0: none).
local function ingest_write(cfg_key, call, accepted, events, holding_at, new_last, now_sec)
  local new_due_ms = nil
  for _, event in ipairs(accepted) do
    if event.segments ~= '' then segmentation.cross_named_segments(call.windows, segmentation.segment_names(event.segments)) end
  end
  if events > 0 then
    snapshot.bump_version(cfg_key)
    new_due_ms = ingest_add(accepted, holding_at, call.windows)
    redis.call('HINCRBY', call.progress, 'applied', events)
  end
  if new_last then redis.call('HSET', call.progress, 'last', new_last) end
  if not call.stored_epoch or call.stored_epoch < call.epoch then redis.call('HSET', call.progress, 'epoch', call.epoch) end
  return slot_due.due_to_index(call.windows, snapshot.with_snapshot_due(new_due_ms, call.windows, now_sec))
end

ingest.id_of = id_of
ingest.after = after
ingest.ingest_check = ingest_check
ingest.ingest_prepare = ingest_prepare
ingest.ingest_begin = ingest_begin
ingest.ingest_write = ingest_write
