-- module: segmentation
-- requires: actor_log, call_state, drains, hooks, keyspace, seg_index, seg_views, slot_due, snapshot, window
-- segment_lib: segments. A segment is a sub-board of one shard: the board's windows under keys
-- "<tag>:<window>~<segment>:slots|slot:<start>|top" ("~" is in no name), in the shard's hash tag, so every
-- window function, its views (segment_views_lib) and history (snapshot_lib) work on it when handed those keys.
-- Shard indexes: "<tag>:segs" (segment -> end, unix s, of its newest slot: live while after now; what
-- segments.max counts), "<tag>:segdue" (segment -> when, unix ms, its oldest slot expires or, holding data,
-- its next snapshot boundary: what the expiry visits), "<tag>:seghist" (snapshot_lib: until when it may hold history).
-- KEYS: 0
-- The board's windows (keys and rules) as the record call_state.bind_windows fills (`windows`).

local CALL = call_state.CALL
local ACTORS = actor_log.ACTORS
local segment_indexes, segment_names_key = seg_index.segment_indexes, seg_index.segment_names_key
local segment_window_key, segment_keys = seg_index.segment_window_key, seg_index.segment_keys

-- The segment names of a request, sent joined by commas (names hold none); "" for none.
-- The names of a request naming none (most): shared, so never written by a caller.
local NO_SEGMENTS = {}

local function segment_names(csv)
  if csv == '' then return NO_SEGMENTS end
  local names = {}
  for name in string.gmatch(csv, '[^,]+') do names[#names + 1] = name end
  return names
end

-- The earlier of two due times (unix ms), either nil for none.
local function earliest_due(a, b)
  if a == nil or b == nil then return a or b end
  return math.min(a, b)
end

-- The earliest end (unix ms) of the current slot among the windows of segment `name` that keep
-- snapshots and hold data (their next boundary must be crossed even if nobody writes), or nil.
local function segment_snapshot_due_ms(windows, name, now_sec, confs)
  if not confs then return nil end
  local due = nil
  for w = 0, windows.count - 1 do
    local slots_key, top_key = segment_keys(windows, w, name)
    if snapshot.snapshot_conf_of(confs, CALL.cfg_key, slots_key) and redis.call('ZCARD', top_key) > 0 then
      local _, interval_sec, origin_sec = window.window_rule(windows, w)
      due = math.min(due or math.huge, (window.current_slot(now_sec, interval_sec, origin_sec) + interval_sec) * 1000)
    end
  end
  return due
end

-- Crosses the boundaries of segment `name`'s windows keeping snapshots (snapshot_lib, `confs`: the
-- board's settings, nil for none), as its first write or drain. Answers false when one is left for the
-- next call (snapshot rows per call): nothing of the segment may change before it is crossed. `create`:
-- a segment without history starts it (cross_boundary).
local function cross_segment(windows, name, now_sec, confs, create)
  if not confs then return true end
  for w = 0, windows.count - 1 do
    local _, interval_sec, origin_sec = window.window_rule(windows, w)
    local slots_key, top_key = segment_keys(windows, w, name)
    if not snapshot.cross_boundary(CALL.cfg_key, confs, slots_key, top_key, now_sec, interval_sec, origin_sec, create) then
      return false
    end
  end
  return true
end

-- The segments cross_named_segments left with every window keeping snapshots marked at now's slot, in this call
-- (call_state.call_cache): their first write has no boundary left to cross (first_write).
local CROSSED = { seq = 0, by = {} }

-- What a write does before it changes anything: crosses the boundaries of the segments it names (`names`, repeats
-- allowed) that already hold history, so that none is left for the next call once the write applies (a
-- CROSSING_ERROR then: the service sends the call again, and nothing was applied). A segment new on the shard is
-- marked by its first write (drain_segment): it has no listing to store. A call that stored a listing of many rows
-- leaves the write (8 segments: some 700 commands) to the next call, as a read does (leave_apart).
local function cross_named_segments(windows, names)
  if #names == 0 then return end
  local confs = snapshot.snapshot_confs(CALL.cfg_key)
  if not confs then return end
  local now_sec = math.floor(call_state.now_ms() / 1000)
  local crossed = call_state.call_cache(CROSSED)
  for _, name in ipairs(names) do
    local unmarked = snapshot.unmarked_count()
    if not cross_segment(windows, name, now_sec, confs, false) then error({ err = snapshot.CROSSING_ERROR }) end
    crossed[name] = snapshot.unmarked_count() == unmarked
  end
  snapshot.leave_apart()
end

-- Expires one segment's windows (and so its views), after crossing the boundaries of those keeping
-- snapshots (cross_segment), and moves its due entry to its oldest slot left or its next snapshot
-- boundary (gone, with its views' keys, when it holds none; now while expired data remains), from what
-- `drain` (drain_lib's: a write's, a step's, a segment listing's) has left. Returns the segment's due time
-- (unix ms, nil: none), whether expired data remains, and false when a boundary was left for the next
-- call (then nothing of it changed: it stays due).
local function drain_segment(windows, name, now_ms, drain)
  local _, segdue = segment_indexes(CALL.cfg_key)
  seg_views.segment_views(CALL.cfg_key, name)
  local now_sec = math.floor(now_ms / 1000)
  local confs = snapshot.snapshot_confs(CALL.cfg_key)
  if not cross_segment(windows, name, now_sec, confs, true) then return now_ms, true, false end
  -- A listing of many rows this crossing stored is the call's work: the drain is the next call's (still due).
  if snapshot.stored_apart() then return now_ms, true, true end
  local next_ms, draining = math.huge, false
  for w = 0, windows.count - 1 do
    local period_sec, interval_sec, origin_sec = window.window_rule(windows, w)
    local slots_key, top_key = segment_keys(windows, w, name)
    -- A drain weighs the segment's fields as its board window's: its views and options run the same for them.
    local given = drain.fields(drain, windows.tops[w])
    local rest, more = window.expire_window(slots_key, top_key, now_sec, period_sec, interval_sec, given, origin_sec)
    drain.spent(drain, windows.tops[w], given, rest)
    if more then
      next_ms = now_ms
      draining = true
    end
    -- The oldest slot expire_window found live (false: none), read again only where it asked nothing.
    local oldest = call_state.CONFIG.oldest_live
    if oldest == nil then oldest = tonumber(redis.call('ZRANGE', slots_key, '0', '0')[1]) or false end
    if oldest then next_ms = math.min(next_ms, slot_due.slot_due_ms(oldest, period_sec)) end
  end
  next_ms = math.min(next_ms, segment_snapshot_due_ms(windows, name, now_sec, confs) or math.huge)
  if next_ms == math.huge then
    redis.call('ZREM', segdue, name)
    seg_views.drop_segment_views(CALL.cfg_key, name)
    return nil, false, true
  end
  redis.call('ZADD', segdue, next_ms, name)
  return next_ms, draining, true
end

-- Whether a write must drain segment `name` first: when the board keeps snapshots (its boundaries
-- are crossed by every write, as a board's are) or something of it is due (segdue). A segment with
-- nothing due has nothing expired to drain: one ZSCORE instead of a read of every window.
local function segment_drain_due(name, now_ms, keeps_snapshots)
  if keeps_snapshots then return true end
  local due_ms = tonumber(redis.call('ZSCORE', keyspace.sibling_key(CALL.cfg_key, 'cfg', 'segdue'), name))
  return due_ms ~= nil and due_ms <= now_ms
end

-- A segment's first write in the call: drained where due, else its boundaries crossed (write_drain).
local function first_write(windows, name, now_ms, confs, due_ms)
  local first = seg_index.write_drain(due_ms, now_ms, confs ~= nil)
  -- The write crossed its segments' boundaries before it changed anything (cross_named_segments): again here only
  -- where that left a window without a mark (its history starts with this write).
  if first == 'cross' then
    if call_state.call_cache(CROSSED)[name] then return end
    seg_views.segment_views(CALL.cfg_key, name)
    if not cross_segment(windows, name, math.floor(now_ms / 1000), confs, true) then error({ err = snapshot.CROSSING_ERROR }) end
  elseif first == 'drain' then
    -- What the board's windows left of the call's drain, each field weighed as its board window's.
    local _, _, crossed = drain_segment(windows, name, now_ms, CALL.drain)
    if not crossed then error({ err = snapshot.CROSSING_ERROR }) end
  end
end

-- One event into segment `name`'s windows of `covering` (segment_add); answers the end (unix s) of the newest
-- slot it changed (0: none) and the due time (unix ms) of a slot it created (nil: none).
local function add_to_segment(windows, name, item, amount, at_sec, covering, seen_sec, actor, take_back)
  local live_until, due_ms, views_told = 0, nil, seg_views.views_read_sums()
  for w = 0, windows.count - 1 do
    if covering[w] then
      local period_sec, interval_sec, origin_sec = window.window_rule(windows, w)
      local slots_key, top_key = segment_keys(windows, w, name)
      local slot_start = window.current_slot(at_sec, interval_sec, origin_sec)
      -- The start as text once (actor_lib's, kept from call to call): a Lua number argument costs Redis a
      -- snprintf("%.17g") each.
      local start_arg = ACTORS.start_text(slot_start)
      local counted = take_back and amount or ACTORS.counted(slots_key, slot_start, actor, item, amount)
      local score, slot_sum = window.add_amount(window.slot_key_of(slots_key, slot_start), top_key, item, counted)
      -- A slot whose hash held the item before is indexed (expiry unindexes a slot with its hash deleted): no ZADD.
      if slot_sum == tonumber(counted) and redis.call('ZADD', slots_key, 'NX', start_arg, start_arg) == 1 then
        due_ms = math.min(due_ms or math.huge, slot_due.slot_due_ms(slot_start, period_sec))
      end
      if take_back == true then
        ACTORS.take_back(slots_key, top_key, slot_start, actor, item, -amount)
      else
        ACTORS.add(slots_key, top_key, slot_start, actor or '', item, counted, amount, take_back == 'like')
      end
      if views_told then seg_views.view_window_changed(top_key, slot_start, item, counted, score, seen_sec, slot_sum) end
      live_until = math.max(live_until, slot_start + period_sec)
    end
  end
  return live_until, due_ms
end

-- Adds one event to each named segment, in the windows of `covering` (see window_holds) at the slot of `at_sec`,
-- exactly as the board's windows got it, and to the segment's views (views_lib; `seen_sec` as the board's views got
-- it: the event's time for hot's firstSeen, nil for none). A segment is first drained where due (once per call, within
-- what is left of the drain its board's windows and segments share: call_state.CALL.drain; one cut short leaves it due
-- now, expired slots told apart: draining_from) as a board's windows are before a write: its views then see expiry and
-- events in the order a board of its events would. `actor` (nil or "": none) keeps the actor's contribution in each
-- segment window as the board's windows keep it (actor_lib, so a segment's unique views count it), its amount what
-- ACTORS.counted answers (a weight, a cap); with `take_back` true (an unlike) takes one back; 'like': a like, kept as
-- sent (as the board's windows keep it). The segments' live ends are listed once, after the last (list_segments).
-- Returns the earliest due time (unix ms) of a slot it created, or nil.
local function segment_add(windows, names, item, amount, at_sec, covering, seen_sec, actor, take_back)
  -- An event naming no segment (the common case) reads nothing: no index, no snapshot config.
  if #names == 0 then return nil end
  local segs, segdue = segment_indexes(CALL.cfg_key)
  local new_due_ms, listed = nil, {}
  local now_ms = call_state.now_ms()
  local confs = snapshot.snapshot_confs(CALL.cfg_key)
  local dues = seg_index.unseen_dues(segdue, names)
  -- A tie mark at most for each segment window changed (ties_lib takes their sequence numbers at once).
  CALL.marks_ahead = #names * windows.count
  for _, name in ipairs(names) do
    if not seg_views.segment_seen(name) then
      local ok, failed = pcall(first_write, windows, name, now_ms, confs, seg_index.segment_due_of(dues, segdue, name))
      -- What the segments before it changed is listed as theirs was before a crossing error.
      if not ok then seg_index.list_segments(segs, listed) error(failed, 0) end
    end
    seg_views.segment_views(CALL.cfg_key, name)
    local live_until, due_ms = add_to_segment(windows, name, item, amount, at_sec, covering, seen_sec, actor, take_back)
    -- No window changed (an unlike of a like every window dropped): the segment is left as it is. The end goes to
    -- list_segments' ZADD as text (actor_lib's, kept from call to call): a Lua number costs Redis a "%.17g".
    if live_until > 0 then listed[#listed + 1], listed[#listed + 2] = ACTORS.start_text(live_until), name end
    if due_ms then
      local snapshot_due_ms = segment_snapshot_due_ms(windows, name, math.floor(now_ms / 1000), confs)
      due_ms = math.min(due_ms, snapshot_due_ms or math.huge)
      redis.call('ZADD', segdue, 'LT', due_ms, name)
      new_due_ms = math.min(new_due_ms or math.huge, due_ms)
    end
  end
  seg_index.list_segments(segs, listed)
  return new_due_ms
end

-- An admin step's drain (retract_step, retract_item, reweight_step, alias_step, expire) of what expired on its
-- shard is bounded as its own work is: it may spend `units` (the step's own, about a Redis command
-- each), an expired field of a window weighing what `weigh(top_key)` answers for that window (a
-- segment's window has its board window's views and options, a metric's sibling its own), and at most
-- `chunk` fields (EXPIRE_CHUNK) in all (drain_lib's weighed drain; a listing of many rows is then left
-- to the next call: snapshot_lib's note_drained).
local function step_drain_state(chunk, units, weigh)
  return drains.weighed(chunk, units, weigh, snapshot.note_drained)
end

-- Expires one window (slots_key, top_key: a metric's sibling's, with the rule of the board's window `w`)
-- from what `drain` has left, its fields weighed at its own. Answers whether expired data remains.
local function drain_window(drain, windows, w, slots_key, top_key, now_sec)
  local period_sec, interval_sec, origin_sec = window.window_rule(windows, w)
  local fields = drain.fields(drain, top_key)
  local rest, more = window.expire_window(slots_key, top_key, now_sec, period_sec, interval_sec, fields, origin_sec)
  drain.spent(drain, top_key, fields, rest)
  return more
end

-- Drains segment `name` from what `drain` has left: false when the call's walk must end (a boundary left, a listing stored).
local function drain_segment_within(drain, windows, name, now_ms)
  local _, _, crossed = drain_segment(windows, name, now_ms, drain)
  return crossed and not snapshot.stored_apart()
end

-- An admin step's drain of the board's windows (first, as a write's): answers the drain's state, the
-- rest of it for the segments the step visits (walk_pending_segments), `more` when expired data remains.
local function step_drain(windows, now_sec, chunk, units, weigh)
  local drain = step_drain_state(chunk, units, weigh)
  local draining = window.expire_all(windows, now_sec, chunk, drain)
  drain.more = draining == 1
  return drain
end

-- Walks the segments listed in `pending` (a zset of names: a bounded job's own copy of the shard's
-- segdue) first to last while `left` > 0, each drained first where due (as segment_add does before a
-- write) from what `drain` (step_drain's) has left, then `visit(name, left)` answers the units left,
-- whether the segment has nothing left (it leaves the list) and what it took. Answers the units left,
-- whether the list is done, and the total taken.
local function walk_pending_segments(cfg_key, pending, windows, now_ms, drain, left, visit)
  local keeps_snapshots = snapshot.snapshot_confs(cfg_key) ~= nil
  local taken = 0
  while left > 0 do
    local name = redis.call('ZRANGE', pending, 0, 0)[1]
    if not name then return left, true, taken end
    local due = not seg_views.segment_seen(name) and segment_drain_due(name, now_ms, keeps_snapshots)
    if due and not drain_segment_within(drain, windows, name, now_ms) then return 0, false, taken end
    local empty, count
    left, empty, count = visit(name, left)
    taken = taken + count
    if empty then redis.call('ZREM', pending, name) end
  end
  return left, redis.call('EXISTS', pending) == 0, taken
end

-- The scheduled expiry of a shard's segments: forgets up to 1 000 no longer live (name index and segs), then drains
-- up to `most` due (segdue) within what `drain` (step_drain's) left, each weighing SEGMENT, a LOOK a window and its
-- fields. Returns 1 when expired segment data remains (call again), else 0, and the earliest due (unix ms) or nil.
local function expire_segments(windows, now_ms, drain, most)
  local segs, segdue = segment_indexes(CALL.cfg_key)
  local seghist, now_sec = keyspace.sibling_key(CALL.cfg_key, 'cfg', 'seghist'), math.floor(now_ms / 1000)
  -- A shard that never held a segment (most) answers in one command.
  if redis.call('EXISTS', segs, segdue, seghist) == 0 then return 0, nil end
  redis.call('ZREMRANGEBYSCORE', seghist, '-inf', now_sec)
  local ended = redis.call('ZRANGE', segs, '-inf', now_sec, 'BYSCORE', 'LIMIT', 0, 1000)
  if #ended > 0 then
    redis.call('ZREM', segment_names_key(CALL.cfg_key), unpack(ended))
    redis.call('ZREM', segs, unpack(ended))
    seg_index.forget_ends()
    if #ended == 1000 then return 1, now_ms end
  end
  for _, name in ipairs(redis.call('ZRANGE', segdue, '-inf', now_ms, 'BYSCORE', 'LIMIT', 0, most)) do
    if drain.chunk <= 0 or drain.units <= 0 then break end
    local going_on = drain_segment_within(drain, windows, name, now_ms)
    drain.units = drain.units - ACTORS.STEP.SEGMENT - windows.count * ACTORS.STEP.LOOK
    if not going_on then return 1, now_ms end
  end
  local first = redis.call('ZRANGE', segdue, 0, 0, 'WITHSCORES')
  local due_ms = #first > 0 and tonumber(first[2]) or nil
  -- The history index is emptied by this function only: the scheduler comes back when an entry ends.
  local history = redis.call('ZRANGE', seghist, 0, 0, 'WITHSCORES')
  if #history > 0 then due_ms = math.min(due_ms or math.huge, (tonumber(history[2]) + 1) * 1000) end
  if not due_ms then return 0, nil end
  return due_ms <= now_ms and 1 or 0, due_ms
end

-- The suffixes ("@<metric>") of the windows options keep beside the board's (hooks' window_siblings:
-- "<window>~@<metric>", metrics_lib), over the first `window_count` windows of `keys` (cfg, then each
-- window's slots and top): a sibling's keys are its window's under that suffix, as a segment's are
-- under its name.
local function sibling_suffixes(keys, window_count)
  local seen, suffixes = {}, {}
  for w = 0, window_count - 1 do
    local name = snapshot.window_name_of(keys[1], keys[2 + 2 * w])
    for _, siblings_of in ipairs(hooks.window_siblings) do
      for _, sibling in ipairs(siblings_of(keys[1], name)) do
        local suffix = string.sub(sibling, #name + 2)
        if not seen[suffix] then seen[suffix], suffixes[#suffixes + 1] = true, suffix end
      end
    end
  end
  return suffixes
end

hooks.export_all(segmentation, { 'segment_window_key', segment_window_key, 'sibling_suffixes', sibling_suffixes,
  'segment_indexes', segment_indexes, 'segment_names_key', segment_names_key, 'segment_names', segment_names,
  'earliest_due', earliest_due, 'segment_refusal', seg_index.segment_refusal, 'drain_segment', drain_segment,
  'segment_drain_due', segment_drain_due, 'segment_add', segment_add, 'cross_named_segments', cross_named_segments,
  'walk_pending_segments', walk_pending_segments, 'step_drain', step_drain, 'drain_window', drain_window,
  'expire_segments', expire_segments })
