-- requires: actor_blocks, actor_caps, actor_log, board_write, call_state, keyspace, prune, reader, seg_views, segmentation, slot_due, snapshot, window
-- alias_step: one bounded step of an alias merge (PUT .../aliases/:alias): the alias's live counts
-- moved into the canonical item's, slot by slot, in every window, view, segment and unique count, as
-- if its events had named the canonical item. The alias and the canonical item may live on two
-- shards (two hash tags), so a step is two calls, each safe to repeat:
--   take (on the alias's shard): takes up to `most` units of the alias's slot amounts and actor
--     contributions out of this shard (subtracted as an item retraction does) into a chunk kept in
--     the merge's record, "<tag>:al:<digest>" (hash: alias, item, run, state, seq, acked, chunk,
--     entries, startedMs, board (done once the board's windows are), and a cursor "c:<slots key>" per
--     window). A chunk not yet acknowledged
--     (its seq past `acked`) is answered again instead of a new one. The first take (`fresh`) starts
--     the record and blocks the alias's events for good (actor_lib's block): a write naming it from
--     an instance whose alias map is stale is refused, and that instance resolves it and writes the
--     canonical item instead. With `here` (the canonical item is on this shard) the chunk is given
--     in the same call.
--   give (on the canonical item's shard): adds a chunk's entries to the canonical item, once per
--     seq ("<tag>:alin:<digest>": run, seq given), into the slots still live (a slot expired since the
--     take is the canonical item's no more either), once every window of the shard, the board's and
--     each sibling's, has drained what expired (until then it gives nothing and answers seq 0).
-- A unit of work is a window looked into or a slot looked at (1), an amount or contribution moved
-- (1 + the views reading its window), about UNIT_COMMANDS Redis commands (aliases.service.ts
-- ALIAS_STEP_UNITS); what expired drains first (take and give) within as many commands (segment_lib's
-- step_drain). The windows an option keeps beside the board's (hooks' window_siblings: each metric's
-- but the first, "<window>~@<metric>", metrics_lib) follow the board's, one suffix ("@<metric>") at a
-- time from "<tag>:al:<digest>:sibs" (as the first take found them), each drained first as a call of
-- that metric does; their entries are given as the board's are (their slots indexed for expiry), and
-- both calls cross their snapshot boundaries before changing anything, as a call of each metric does.
-- The segments follow, one at a time from "<tag>:al:<digest>:segs" (the shard's segments as the
-- first take found them).
-- Keys: cfg (config hash of this shard), the windows' (slots, top) pairs, then the record (take: the
--   merge's record; give: the given-seq record)
-- Args (reader.read_call, CALLS.alias_step): the header with every window, then mode (take | give),
--   alias, item (canonical), run, most (units), fresh (1: the PUT's first take), here (1: give in the
--   take's call), acked (take: the seq the caller saw given), seq (give: the chunk's), chunk (give:
--   the chunk as JSON)
-- Reply (reader.answer, CALLS.alias_step): done (0|1: take: nothing left and every chunk given),
--   seq (the chunk's, 0: none; give: 0 while this shard's windows still hold expired data, nothing given:
--   give again), chunk (JSON array of entries, "" when none or given in the call), entries (the record's
--   total of entries taken), due (unix ms: a slot the give indexed earlier than the shard's due, or
--   any a sibling window's give indexed, 0: none)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG

local ALIAS = { KEEP_SEC = 7 * 86400, FOREVER_MS = 99999999999999, SEP = '\31', UNIT_COMMANDS = 6 }

-- The (slots, top) keys of window w (0-based) of the board (segment ''), of a sibling ('@<metric>')
-- or of a segment.
local function alias_window_keys(keys, w, segment)
  local slots_key, top_key = keys[2 + 2 * w], keys[3 + 2 * w]
  if segment == '' then return slots_key, top_key end
  return segmentation.segment_window_key(slots_key, 'slots', segment), segmentation.segment_window_key(top_key, 'top', segment)
end

-- The units of an amount or contribution moved in a window read by `views` views.
local function alias_unit_weight(views)
  return 1 + views
end

-- Whether entry suffix `s` names a sibling's windows (a segment's name holds no "@").
local function is_sibling(s)
  return string.sub(s, 1, 1) == '@'
end

-- Every sibling's windows crossed before the call changes anything, as cross_all does the board's
-- (a boundary left for the next call is then a CROSSING_ERROR with nothing changed).
local function cross_siblings(keys, windows, now_sec)
  for _, suffix in ipairs(segmentation.sibling_suffixes(keys, windows.count)) do
    for w = 0, windows.count - 1 do
      local slots_key, top_key = alias_window_keys(keys, w, suffix)
      local _, interval_sec, origin_sec = window.window_rule(windows, w)
      snapshot.cross_window_of(keys[1], slots_key, top_key, now_sec, interval_sec, origin_sec)
    end
  end
end

-- A sibling's windows drained, as a call of that metric does before it changes them, from what
-- `drain` (step_drain's) has left, each field weighed by actor_lib's drained_weight. Answers false
-- while expired data remains (its take then waits for the next step).
local function drain_sibling(keys, windows, now_sec, suffix, drain)
  for w = 0, windows.count - 1 do
    local slots_key, top_key = alias_window_keys(keys, w, suffix)
    if segmentation.drain_window(drain, windows, w, slots_key, top_key, now_sec) then return false end
  end
  return true
end

-- Takes up to `most` of the alias's contributions of one window (actor_lib) into `chunk`: out of the
-- indexes and the unique counts (their amounts go with the slots). Answers how many it took.
local function take_contributions(slots_key, top_key, alias, most, chunk, w, segment)
  local byactor, pairs_key, byitem = actor_log.ACTORS.window_keys(slots_key)
  local prefix = alias .. ALIAS.SEP
  local members = redis.call('ZRANGE', byitem, '[' .. prefix, '(' .. alias .. '\32', 'BYLEX', 'LIMIT', 0, most)
  if #members == 0 then return 0 end
  redis.call('ZREM', byitem, unpack(members))
  for _, member in ipairs(members) do
    local start, actor = string.match(string.sub(member, #prefix + 1), '^(%d+)\31(.*)$')
    local act_key = actor_log.ACTORS.slot_key(slots_key, start)
    local sum, count, sent = actor_log.ACTORS.figures(redis.call('HGET', act_key, actor .. ALIAS.SEP .. alias))
    redis.call('HDEL', act_key, actor .. ALIAS.SEP .. alias)
    if sum ~= 0 then actor_log.ACTORS.moved(slots_key, actor, alias, sum, 0) end
    redis.call('ZREM', byactor, actor .. ALIAS.SEP .. start .. ALIAS.SEP .. alias)
    actor_log.ACTORS.pair_moved(pairs_key, top_key, actor, alias, -1)
    -- Figures as decimal strings: cjson writes a number with 14 digits only.
    chunk[#chunk + 1] = { k = 'c', w = w, s = segment, t = tonumber(start), a = actor, n = string.format('%d', sum), e = count,
      x = string.format('%d', sent) }
  end
  return #members
end

-- Takes the alias's amounts out of the slots of one window after the record's cursor, oldest first,
-- into `chunk`, within `budget` units (a slot 1, an amount 1 + the views). Answers the units left and
-- whether every slot is done.
local function take_slots(record, slots_key, top_key, alias, budget, chunk, w, segment)
  local cursor = 'c:' .. slots_key
  local after = redis.call('HGET', record, cursor)
  local starts = redis.call('ZRANGE', slots_key, after and '(' .. after or '-inf', '+inf', 'BYSCORE', 'LIMIT', 0, budget)
  local last, views = nil, nil
  for _, start in ipairs(starts) do
    if budget <= 0 then break end
    local slot_key = window.slot_key_of(slots_key, start)
    local raw = redis.call('HGET', slot_key, alias)
    local held = tonumber(raw)
    budget, last = budget - 1, start
    if held then
      views = views or seg_views.views_reading(top_key) or {}
      local score = window.add_amount(slot_key, top_key, alias, -held)
      seg_views.view_window_changed(top_key, tonumber(start), alias, -held, score, nil)
      chunk[#chunk + 1] = { k = 'a', w = w, s = segment, t = tonumber(start), n = raw }
      budget = budget - #views
    end
  end
  if last then redis.call('HSET', record, cursor, last) end
  return budget, last == starts[#starts] and budget > 0
end

-- The windows of the board (segment '') or of one segment within `left` units: contributions, then
-- slots. Answers the units left, whether every window is done, and the entries taken.
local function take_windows(step, window_count, segment, left)
  local empty, before = true, #step.chunk
  for w = 0, window_count - 1 do
    if left <= 0 then return left, false, #step.chunk - before end
    local slots_key, top_key = alias_window_keys(step.keys, w, segment)
    local weight = alias_unit_weight(#(seg_views.views_reading(top_key) or {}))
    local limit = math.max(1, math.floor((left - 1) / weight))
    local count = take_contributions(slots_key, top_key, step.alias, limit, step.chunk, w, segment)
    left = left - 1 - count * weight
    local slots_done = false
    if left > 0 and count < limit then left, slots_done = take_slots(step.record, slots_key, top_key, step.alias, left, step.chunk, w, segment) end
    if not slots_done then empty = false end
  end
  return left, empty, #step.chunk - before
end

-- The contribution of entry `e` (take_contributions') joined to the canonical item's in its slot, within
-- the board's capPerItem (actor_caps.merged: the canonical item's own contributions count first).
-- Answers what the cap cut from it (0: none), which the caller takes out of the slot's amount.
local function give_contribution(slots_key, top_key, item, e)
  local act_key = actor_log.ACTORS.slot_key(slots_key, e.t)
  local field = e.a .. ALIAS.SEP .. item
  local old = redis.call('HGET', act_key, field)
  local sum, events, sent = actor_log.ACTORS.figures(old)
  local amount = tonumber(e.n)
  local counted = actor_caps.merged(slots_key, e.a, item, amount, sum)
  redis.call('HSET', act_key, field, actor_log.ACTORS.value(sum + counted, events + e.e, sent + tonumber(e.x)))
  if counted ~= 0 then actor_log.ACTORS.moved(slots_key, e.a, item, sum, sum + counted) end
  if old then return amount - counted end
  local byactor, pairs_key, byitem = actor_log.ACTORS.window_keys(slots_key)
  local by_actor, by_item = actor_log.ACTORS.members(e.a, e.t, item)
  redis.call('ZADD', byactor, 0, by_actor)
  redis.call('ZADD', byitem, 0, by_item)
  actor_log.ACTORS.pair_moved(pairs_key, top_key, e.a, item, 1)
  return amount - counted
end

-- `amount` added to the canonical item in entry `e`'s slot as an event of the slot adds it (a segment's
-- through segment_add, which indexes the segment); 0 only indexes the slot. Answers the due time of a
-- board's or sibling's slot it indexed.
local function give_amount(windows, slots_key, top_key, period_sec, item, e, amount)
  if e.s ~= '' and not is_sibling(e.s) then
    segmentation.segment_add(windows, { e.s }, item, amount, e.t, { [e.w] = true }, nil, nil, false)
    return nil
  end
  if amount == 0 then return slot_due.index_slot(slots_key, e.t, period_sec) end
  return select(2, window.add_event(slots_key, top_key, e.t, period_sec, item, amount, nil))
end

-- One entry given to the canonical item when its slot is still live: an amount added (give_amount), a
-- contribution joined (its slot indexed first, as an event's would be: once a chunk, `indexed` holding
-- the slots it did), less what the cap cut from it. Answers the due time of a board's or sibling's
-- slot it indexed.
local function give_entry(keys, windows, now_sec, item, e, indexed)
  local holding = window.window_holds(e.t, now_sec, windows)
  if not (holding and holding[e.w]) then return nil end
  local slots_key, top_key = alias_window_keys(keys, e.w, e.s)
  local period_sec = window.window_rule(windows, e.w)
  local due_ms, slot = nil, e.s .. ALIAS.SEP .. e.w .. ALIAS.SEP .. e.t
  if e.k == 'a' then
    due_ms = give_amount(windows, slots_key, top_key, period_sec, item, e, tonumber(e.n))
  elseif not indexed[slot] then
    due_ms = give_amount(windows, slots_key, top_key, period_sec, item, e, 0)
  end
  indexed[slot] = true
  if e.k == 'c' then
    local cut = give_contribution(slots_key, top_key, item, e)
    if cut ~= 0 then give_amount(windows, slots_key, top_key, period_sec, item, e, -cut) end
  end
  return due_ms
end

-- Gives a chunk's entries to the canonical item. Answers what the due index is told (due_to_index
-- over the board's windows; a sibling's new slot is not covered by their oldest slots: always told).
local function give_chunk(keys, windows, now_sec, item, entries)
  local due_ms, sibling_ms, indexed = nil, math.huge, {}
  prune.settle(keys[1], item)
  for _, e in ipairs(entries) do
    local due = give_entry(keys, windows, now_sec, item, e, indexed)
    if due and is_sibling(e.s) then
      sibling_ms = math.min(sibling_ms, due)
    elseif due then
      due_ms = math.min(due_ms or math.huge, due)
    end
  end
  local told = slot_due.due_to_index(windows, due_ms)
  if sibling_ms == math.huge then return told end
  return math.min(sibling_ms, due_ms or math.huge)
end

-- The merge's record at a take: started again by a fresh take of another run (cursors, sibling and
-- segment lists reset, the alias blocked); a later take of no record of its run finds nothing to do (nil).
local function take_begin(keys, window_count, record, arg, now_ms)
  local cfg_key = keys[1]
  local run = redis.call('HGET', record, 'run')
  if arg.fresh == '1' and run ~= arg.run then
    redis.call('DEL', record, record .. ':segs', record .. ':sibs')
    redis.call('HSET', record, 'alias', arg.alias, 'item', arg.item, 'run', arg.run, 'state', 'running', 'seq', 0, 'acked', 0,
      'entries', 0, 'startedMs', now_ms)
    redis.call('ZRANGESTORE', record .. ':segs', keyspace.sibling_key(cfg_key, 'cfg', 'segdue'), 0, -1)
    redis.call('EXPIRE', record .. ':segs', ALIAS.KEEP_SEC)
    local members = {}
    for _, suffix in ipairs(segmentation.sibling_suffixes(keys, window_count)) do members[#members + 1], members[#members + 2] = 0, suffix end
    if #members > 0 then
      redis.call('ZADD', record .. ':sibs', unpack(members))
      redis.call('EXPIRE', record .. ':sibs', ALIAS.KEEP_SEC)
    end
    actor_blocks.block_until(cfg_key, 'i' .. ALIAS.SEP .. arg.alias, ALIAS.FOREVER_MS)
  elseif run ~= arg.run then
    return nil
  end
  redis.call('EXPIRE', record, ALIAS.KEEP_SEC)
  actor_blocks.hold_record(cfg_key, record, ALIAS.KEEP_SEC, now_ms)
  local acked = math.max(tonumber(redis.call('HGET', record, 'acked')), tonumber(arg.acked))
  redis.call('HSET', record, 'acked', acked)
  return { record = record, alias = arg.alias, chunk = {}, keys = nil, acked = acked, seq = tonumber(redis.call('HGET', record, 'seq')) }
end

-- The siblings' windows from the merge's list ("<record>:sibs"), first to last within `left` units,
-- each drained first (drain_sibling), a sibling costing a window's look more. Answers the units left
-- and whether the list is done.
local function take_siblings(step, windows, now_sec, drain, left)
  local pending = step.record .. ':sibs'
  while left > 0 do
    local suffix = redis.call('ZRANGE', pending, 0, 0)[1]
    if not suffix then return left, true end
    if not drain_sibling(step.keys, windows, now_sec, suffix, drain) then return 0, false end
    local empty
    left, empty = take_windows(step, windows.count, suffix, left - 1)
    if empty then redis.call('ZREM', pending, suffix) end
  end
  return left, false
end

local function alias_answer(done, seq, chunk, record, due)
  return reader.answer(CALLS.alias_step, { done = done and 1 or 0, seq = seq, chunk = chunk,
    entries = tonumber(redis.call('HGET', record, 'entries')) or 0, due = due or 0 })
end

local function alias_take(keys, header, arg, windows, drain)
  local record, window_count = keys[#keys], windows.count
  local step = take_begin(keys, window_count, record, arg, header.now_ms)
  if not step or redis.call('HGET', record, 'state') == 'done' then return alias_answer(true, 0, '', record) end
  if step.seq > step.acked then return alias_answer(false, step.seq, redis.call('HGET', record, 'chunk'), record) end
  step.keys = keys
  -- The board's windows once done stay so (the alias's events are refused): the record says so.
  local left, board_empty = tonumber(arg.most), redis.call('HGET', record, 'board') == 'done'
  if not board_empty then
    left, board_empty = take_windows(step, window_count, '', left)
    if board_empty then redis.call('HSET', record, 'board', 'done') end
  end
  local siblings_empty, segments_empty = false, false
  if left > 0 and board_empty then left, siblings_empty = take_siblings(step, windows, header.now_sec, drain, left) end
  if left > 0 and siblings_empty then
    left, segments_empty = segmentation.walk_pending_segments(keys[1], record .. ':segs', windows, header.now_ms, drain, left,
      function(name, units) return take_windows(step, window_count, name, units) end)
  end
  local done, due = board_empty and segments_empty, nil
  if #step.chunk == 0 then
    if done then redis.call('HSET', record, 'state', 'done') end
    return alias_answer(done, 0, '', record)
  end
  local seq, json = step.seq + 1, ''
  redis.call('HINCRBY', record, 'entries', #step.chunk)
  snapshot.bump_version(keys[1], 1)
  -- Given in this call: acknowledged with it, so no copy is kept or answered.
  if arg.here == '1' then
    due = give_chunk(keys, windows, header.now_sec, arg.item, step.chunk)
    redis.call('HSET', record, 'seq', seq, 'acked', seq)
  else
    json = cjson.encode(step.chunk)
    redis.call('HSET', record, 'seq', seq, 'chunk', json)
  end
  return alias_answer(false, seq, json, record, due)
end

-- Every sibling's windows drained (drain_sibling), as the take drains the alias's before it takes from
-- them: a give changes them as a call of each metric would. Answers false while expired data remains.
local function drain_siblings(keys, windows, now_sec, drain)
  for _, suffix in ipairs(segmentation.sibling_suffixes(keys, windows.count)) do
    if not drain_sibling(keys, windows, now_sec, suffix, drain) then return false end
  end
  return true
end

local function alias_give(keys, header, arg, windows, drain)
  local given = keys[#keys]
  if redis.call('HGET', given, 'run') ~= arg.run then redis.call('HSET', given, 'run', arg.run, 'seq', 0) end
  redis.call('EXPIRE', given, ALIAS.KEEP_SEC)
  actor_blocks.hold_record(keys[1], given, ALIAS.KEEP_SEC, header.now_ms)
  local seq = tonumber(arg.seq)
  if tonumber(redis.call('HGET', given, 'seq')) >= seq then return reader.answer(CALLS.alias_step, { done = 0, seq = seq, chunk = '', entries = 0, due = 0 }) end
  -- Expired data left on this shard's windows (the board's or a sibling's): nothing given yet (seq 0).
  if drain.more or not drain_siblings(keys, windows, header.now_sec, drain) then
    return reader.answer(CALLS.alias_step, { done = 0, seq = 0, chunk = '', entries = 0, due = 0 })
  end
  local due = give_chunk(keys, windows, header.now_sec, arg.item, cjson.decode(arg.chunk))
  redis.call('HSET', given, 'seq', seq)
  snapshot.bump_version(keys[1], 1)
  return reader.answer(CALLS.alias_step, { done = 0, seq = seq, chunk = '', entries = 0, due = due })
end

local function alias_step(keys, args)
  local cfg_key = keys[1]
  local refused, header, arg = board_write.begin_board_call(keys, args, CALLS.alias_step)
  if refused then return refused end
  local windows = call_state.bind_windows(2, #header.windows)
  if snapshot.cross_all(windows, header.now_sec) then cross_siblings(keys, windows, header.now_sec) end
  -- What expired drains first, within about as many commands as the step's units run.
  local drain = segmentation.step_drain(windows, header.now_sec, header.budget, tonumber(arg.most) * ALIAS.UNIT_COMMANDS,
    actor_log.ACTORS.drained_weight)
  if arg.mode == 'give' then return alias_give(keys, header, arg, windows, drain) end
  return alias_take(keys, header, arg, windows, drain)
end
