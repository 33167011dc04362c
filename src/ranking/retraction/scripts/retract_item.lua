-- requires: actor_blocks, actor_log, archive, archive_held, board_write, call_state, hooks, item_data, keyspace, order, reader, seg_views, segmentation, snaprows, snapshot, window
-- retract_item: one bounded step of an item's retraction on the item's shard: the item out of every
-- slot, window, view and unique count of the board, of each window an option keeps beside the board's
-- (hooks' window_siblings: each metric's but the first, metrics_lib) and of each segment, then out of
-- every kept snapshot and archive (the board's, each sibling's and each segment's, archives still being
-- taken included) and of the listings options keep from them (a group board's: hook item_history_out),
-- and its data removed. The record ("<tag>:ret:<id>", as retract_step's: item, state, events, amount,
-- startedMs) keeps a cursor per window (`c:<slots key>`: the last slot start done) and per history
-- (`s:<window>`, a segment's `s:<window>~<segment>`: the last boundary rewritten), so a step goes on
-- where the last one ended; what a step takes out it removes in the same call, so a step repeated
-- finds nothing twice.
-- Keys: cfg (board config hash: holds the config version), the windows' (slots, top) pairs, then the
--   retraction's record hash (last)
-- Args (reader.read_call, CALLS.retract_item): the header with every window, then target (the item),
--   most (units of work this step does, at least actor_lib's step_units, about a Redis command each (actor_lib's STEP; what expired
--   drains first within as many): a window looked into, a segment visited, a contribution, a slot (more where it holds the item, with each view
--   reading its window), a kept listing (more per LISTING_ROWS rows renumbered), a like; a step visits
--   the sibling windows' suffixes ("@<metric>") and the segments of the shard's indexes as its first
--   step found them ("<tag>:ret:<id>:sibs", ":hsibs", ":segs" and ":hsegs", expiring with the record),
--   each once, so its work stays within `most` however many metrics and segments the shard holds),
--   ledger (0-based window: the amount is the item's sum there, every metric's, events its
--   contributions' events, those that carried an actor), block_until_ms (0: no block; the item's new
--   events are refused until then), block_key (what the block binds: the item again; actor_lib)
-- Reply (reader.answer, CALLS.retract_item): done (0|1), taken (units of work done by this step),
--   events, amount (the record's totals), grouped (1: the shard's config names group boards over the
--   board's windows, groupedBy; 0: the item is in no group, so no group board's listing counts it)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG

-- The item's contributions in one window (actor_lib): forgotten, and each actor out of the unique
-- counts; their slot amounts go with the slots (item_out_of_slots). Returns the work left and the
-- events counted.
local function item_contributions_out(slots_key, top_key, item, budget)
  local byactor, pairs_key, byitem = actor_log.ACTORS.window_keys(slots_key)
  local prefix = item .. actor_log.ACTORS.SEP
  local weight = actor_log.ACTORS.STEP.CONTRIBUTION
  local most = math.max(1, math.floor(budget / weight))
  local members = redis.call('ZRANGE', byitem, '[' .. prefix, '(' .. item .. '\32', 'BYLEX', 'LIMIT', 0, most)
  if #members == 0 then return budget, 0 end
  redis.call('ZREM', byitem, unpack(members))
  local events = 0
  for _, member in ipairs(members) do
    local start, actor = string.match(string.sub(member, #prefix + 1), '^(%d+)\31(.*)$')
    local act_key = actor_log.ACTORS.slot_key(slots_key, start)
    local sum, count = actor_log.ACTORS.figures(redis.call('HGET', act_key, actor .. actor_log.ACTORS.SEP .. item))
    redis.call('HDEL', act_key, actor .. actor_log.ACTORS.SEP .. item)
    if sum ~= 0 then actor_log.ACTORS.moved(slots_key, actor, item, sum, 0) end
    redis.call('ZREM', byactor, actor .. actor_log.ACTORS.SEP .. start .. actor_log.ACTORS.SEP .. item)
    actor_log.ACTORS.pair_moved(pairs_key, top_key, actor, item, -1)
    events = events + count
  end
  return budget - #members * weight, events
end

-- The item out of the slots of one window after the record's cursor, oldest first, each subtracted
-- from the results and the views as expiry does. Returns the work left and the amount taken from the
-- live slots (from `live_from`: an expired slot not drained yet holds none of the window's sum).
-- A slot costs SLOT units, and HELD with each view reading the window more where it holds the item.
-- Also answers whether the window's slots are all done: a page shorter than asked, each slot of it
-- visited (a full page may have more slots after it).
local function item_out_of_slots(record, slots_key, top_key, item, budget, live_from)
  local cursor = 'c:' .. slots_key
  local after = redis.call('HGET', record, cursor) or '-inf'
  local from = after == '-inf' and after or '(' .. after
  local step_weights = actor_log.ACTORS.STEP
  local most = math.max(1, math.floor(budget / step_weights.SLOT))
  local starts = redis.call('ZRANGE', slots_key, from, '+inf', 'BYSCORE', 'LIMIT', 0, most)
  local amount, last, views = 0, nil, nil
  for _, start in ipairs(starts) do
    if budget <= 0 then break end
    local held = tonumber(redis.call('HGET', window.slot_key_of(slots_key, start), item))
    budget, last = budget - step_weights.SLOT, start
    if held then
      -- Asked only where the item is: a segment's views are registered on first use (segment_views).
      views = views or seg_views.views_reading(top_key) or {}
      local score = window.add_amount(window.slot_key_of(slots_key, start), top_key, item, -held)
      seg_views.view_window_changed(top_key, tonumber(start), item, -held, score, nil)
      if tonumber(start) >= live_from then amount = amount + held end
      budget = budget - actor_log.ACTORS.view_step_weight(step_weights.HELD, #views)
    end
  end
  if last then redis.call('HSET', record, cursor, last) end
  return budget, amount, #starts < most and last == starts[#starts] and budget > 0
end

-- The item's row out of one stored listing (a snapshot or an archive): the rows after it move up one
-- position, and an archive's record forgets it (its EXISTS and HDEL within STEP.LISTING's units).
-- Returns the rows it had to renumber.
local function item_out_of_listing(key, item)
  local rows = redis.call('GET', key)
  if not rows then return 0 end
  local at = string.find(rows, archive.SNAP_ROW .. item .. archive.SNAP_FIELD, 1, true)
  if not at then return 0 end
  local _, position, after = snaprows.row_at(rows, at)
  local tail, moved = string.sub(rows, after), 0
  -- Rows stored before positions were (no third field) are counted on read: nothing to renumber.
  if position then
    tail = string.gsub(tail .. archive.SNAP_ROW, '\31(%d+)\30', function(n)
      moved = moved + 1
      return archive.SNAP_FIELD .. (tonumber(n) - 1) .. archive.SNAP_ROW
    end)
    tail = string.sub(tail, 1, -2)
  end
  redis.call('SET', key, string.sub(rows, 1, at - 1) .. tail, 'KEEPTTL')
  archive.record_forget(key, archive.SNAP_ROW .. item .. archive.SNAP_FIELD)
  return moved
end

-- The item out of a calendar window's archives still being taken (archive_lib): out of the rows kept
-- so far and, when its row was written out already, out of the archive's text (the rows after it move
-- up, and the rows still to write follow on). Their members are items, as on every sum board: only sum
-- boards retract items, and a tiebreak board (never a sum board) keeps pair-order members there.
local function item_out_of_pending(slots_key, base, item)
  for at, state in pairs(archive.archives_pending(slots_key) or {}) do
    local rows_key = base .. 'archrows:' .. at
    -- Its place in the order the rows are written out (archive_lib: order_lib's score order).
    local rank = redis.call(order.ascending(rows_key) and 'ZRANK' or 'ZREVRANK', rows_key, item)
    if rank then
      redis.call('ZREM', rows_key, item)
      -- A row not written yet leaves the pending archive (archive_held_lib counts it there).
      if rank >= state.written then archive_held.pending_left(slots_key, { item }) end
      if rank < state.written then
        item_out_of_listing(base .. 'snap:' .. at, item)
        redis.call('HSET', base .. 'arch', at, table.concat({ state.top, state.keep, state.written - 1, state.expire_sec }, ' '))
      end
    end
  end
end

-- The item out of the kept snapshots (or archives) of one window after the record's cursor, out of
-- its archives still being taken and out of its previous listing. Returns the work left.
local function item_out_of_history(step, slots_key, budget)
  local record, item = step.record, step.id
  local base = keyspace.sibling_key(slots_key, 'slots', '')
  redis.call('ZREM', base .. 'prev', item)
  item_out_of_pending(slots_key, base, item)
  local cursor = 's:' .. snapshot.window_name_of(step.keys[1], slots_key)
  local after = redis.call('HGET', record, cursor)
  local from = after and '(' .. after or '-inf'
  for _, at in ipairs(redis.call('ZRANGE', base .. 'snaps', from, '+inf', 'BYSCORE', 'LIMIT', 0, budget)) do
    local step_weights = actor_log.ACTORS.STEP
    budget = budget - step_weights.LISTING - math.floor(item_out_of_listing(base .. 'snap:' .. at, item) / step_weights.LISTING_ROWS)
    redis.call('HSET', record, cursor, at)
    if budget <= 0 then return 0 end
  end
  return budget
end

-- The names a retraction still has to visit ("<record>:<field>"): `fill(pending)` lists them at its
-- first step only, so each is then visited once, however many the shard holds.
local function item_pending(step, field, fill)
  local pending = step.record .. ':' .. field
  if redis.call('HSETNX', step.record, field, 1) == 1 then fill(pending) end
  return pending
end

-- The segments still to visit: a copy of the shard's index `index`.
local function item_pending_segments(step, field, index)
  return item_pending(step, field, function(pending)
    redis.call('ZRANGESTORE', pending, keyspace.sibling_key(step.keys[1], 'cfg', index), 0, -1)
    redis.call('EXPIRE', pending, actor_log.ACTORS.KEEP_SEC)
  end)
end

-- The sibling suffixes still to visit.
local function item_pending_siblings(step, field, window_count)
  return item_pending(step, field, function(pending)
    local members = {}
    for _, suffix in ipairs(segmentation.sibling_suffixes(step.keys, window_count)) do
      members[#members + 1], members[#members + 2] = 0, suffix
    end
    if #members > 0 then
      redis.call('ZADD', pending, unpack(members))
      redis.call('EXPIRE', pending, actor_log.ACTORS.KEEP_SEC)
    end
  end)
end

-- Visits the names of `pending` first to last while units last, each costing SEGMENT units:
-- `visit(name, units)` answers the units left (0: not done with it), and a name done leaves the list.
-- Answers the units left (0: not done).
local function walk_pending(pending, budget, visit)
  while budget > 0 do
    local name = redis.call('ZRANGE', pending, 0, 0)[1]
    if not name then return budget end
    budget = visit(name, budget - actor_log.ACTORS.STEP.SEGMENT)
    if budget <= 0 then return 0 end
    redis.call('ZREM', pending, name)
  end
  return 0
end

-- The item out of window w of the board (segment nil) or of a segment: its contributions, then its
-- slots. Looking into the window costs LOOK units. Answers the units left, whether the window is done,
-- and the events and amount taken.
local function item_out_of_window(step, w, segment, budget)
  local record, item = step.record, step.id
  local slots_key, top_key = step.keys[2 + 2 * w], step.keys[3 + 2 * w]
  if segment then
    slots_key, top_key = segmentation.segment_window_key(slots_key, 'slots', segment), segmentation.segment_window_key(top_key, 'top', segment)
  end
  budget = budget - actor_log.ACTORS.STEP.LOOK
  if budget <= 0 then return budget, false, 0, 0 end
  local counted, taken, slots_done
  budget, counted = item_contributions_out(slots_key, top_key, item, budget)
  -- Every unit went on contributions: more may be left.
  if budget <= 0 then return budget, false, counted, 0 end
  local live_from = window.live_from_sec(step.now_sec, window.window_rule(step.windows, w))
  budget, taken, slots_done = item_out_of_slots(record, slots_key, top_key, item, budget, live_from)
  return budget, slots_done, counted, taken
end

-- The (slots, top) keys of a sibling's window w.
local function sibling_keys(step, w, suffix)
  return segmentation.segment_window_key(step.keys[2 + 2 * w], 'slots', suffix),
    segmentation.segment_window_key(step.keys[3 + 2 * w], 'top', suffix)
end

-- The windows of the siblings still to visit crossed before the step changes anything, as cross_all
-- does the board's (a boundary left for the next call is then a CROSSING_ERROR with nothing changed): a
-- snapshot or archive of a window still holding the item lists it, and the history walk takes it out.
local function cross_siblings(step, window_count)
  local pending = item_pending_siblings(step, 'sibs', window_count)
  for _, suffix in ipairs(redis.call('ZRANGE', pending, 0, -1)) do
    for w = 0, window_count - 1 do
      local slots_key, top_key = sibling_keys(step, w, suffix)
      local _, interval_sec, origin_sec = window.window_rule(step.windows, w)
      snapshot.cross_window_of(step.keys[1], slots_key, top_key, step.now_sec, interval_sec, origin_sec)
    end
  end
end

-- A sibling's windows drained first, as a call on that metric does before it changes them (from what
-- the step's drain has left, each field weighed by drained_weight for its window), so a closed
-- period's archive takes the item's row before the item leaves its slots, as on a board of that metric
-- alone. Answers false while expired data remains (the item then stays for the next step).
local function drain_sibling(step, window_count, suffix)
  for w = 0, window_count - 1 do
    local slots_key, top_key = sibling_keys(step, w, suffix)
    if segmentation.drain_window(step.budget, step.windows, w, slots_key, top_key, step.now_sec) then return false end
  end
  return true
end

-- The windows of the board, then each sibling's and each segment's from the retraction's own lists
-- (a segment drained first where due, as segment_add does before a write). Answers the units left,
-- events and amount counted in the ledger window (the board's and each sibling's).
local function item_out_of_windows(step, window_count, now_ms, budget)
  local events, amount = 0, 0
  local function visit(suffix, units)
    if suffix and not drain_sibling(step, window_count, suffix) then return 0 end
    for w = 0, window_count - 1 do
      local done, counted, taken
      units, done, counted, taken = item_out_of_window(step, w, suffix, units)
      if w == step.ledger then events, amount = events + counted, amount + taken end
      if not done then return 0 end
    end
    return units
  end
  budget = visit(nil, budget)
  if budget > 0 then budget = walk_pending(item_pending_siblings(step, 'sibs', window_count), budget, visit) end
  if budget <= 0 then return 0, events, amount end
  local pending = item_pending_segments(step, 'segs', 'segdue')
  budget = segmentation.walk_pending_segments(step.keys[1], pending, step.windows, now_ms, step.budget, budget,
    function(name, units)
      units = units - actor_log.ACTORS.STEP.SEGMENT
      for w = 0, window_count - 1 do
        local done
        units, done = item_out_of_window(step, w, name, units)
        if not done then return 0, false, 0 end
      end
      return units, true, 0
    end)
  return budget, events, amount
end

-- The item out of the history of window w of the board (segment nil) or of a segment, when it keeps
-- one; looking costs LOOK units. Answers the units left (0: not done).
local function item_out_of_window_history(step, confs, w, segment, budget)
  local slots_key = step.keys[2 + 2 * w]
  if segment then slots_key = segmentation.segment_window_key(slots_key, 'slots', segment) end
  if not snapshot.snapshot_conf_of(confs, step.keys[1], slots_key) then return budget end
  budget = budget - actor_log.ACTORS.STEP.LOOK
  if budget <= 0 then return 0 end
  return item_out_of_history(step, slots_key, budget)
end

-- The item out of every kept history (`confs`: snapshot_lib's settings, nil: none): the board's
-- windows', each sibling's, then each segment's that may hold some (snapshot_lib's "<tag>:seghist"),
-- from the retraction's own lists. Answers the units left (0: not done).
local function item_out_of_histories(step, window_count, confs, budget)
  if not confs then return budget end
  local function visit(suffix, units)
    for w = 0, window_count - 1 do
      units = item_out_of_window_history(step, confs, w, suffix, units)
      if units <= 0 then return 0 end
    end
    return units
  end
  budget = visit(nil, budget)
  if budget > 0 then budget = walk_pending(item_pending_siblings(step, 'hsibs', window_count), budget, visit) end
  if budget > 0 then budget = walk_pending(item_pending_segments(step, 'hsegs', 'seghist'), budget, visit) end
  return budget
end

-- The item out of the listings options derive from the board's windows and keep (hook
-- item_history_out: a group board's kept listings, group_history_out_lib). Answers the units left (0: not done).
local function item_out_of_derived(step, window_count, budget)
  local costs = { listing = actor_log.ACTORS.STEP.LISTING, rows = actor_log.ACTORS.STEP.LISTING_ROWS }
  for w = 0, window_count - 1 do
    for _, out in ipairs(hooks.item_history_out) do
      budget = out(step.keys[1], step.keys[3 + 2 * w], step.record, step.id, budget, costs)
      if budget <= 0 then return 0 end
    end
  end
  return budget
end

-- The item's likes out of the shard's likes (their counts went with the slots), a ZSCAN page per call
-- from the record's cursor (`likes`: "done" once a scan came round). Returns the work left.
local function item_likes_out(step, budget)
  local record, item = step.record, step.id
  local cursor = redis.call('HGET', record, 'likes') or '0'
  if cursor == 'done' then return budget end
  local pattern = string.gsub(item, '[%*%?%[%]\\]', '\\%0') .. actor_log.ACTORS.SEP .. '*'
  local like = actor_log.ACTORS.STEP.LIKE
  local page = redis.call('ZSCAN', keyspace.sibling_key(step.keys[1], 'cfg', 'likes'), cursor, 'MATCH', pattern, 'COUNT', math.max(1, math.floor(budget / like)))
  for i = 1, #page[2], 2 do actor_log.ACTORS.forget_like(page[2][i]) end
  if cursor == '0' then
    -- Take-backs an unlike left midway (likes_lib): their counts go with the slots too. Only a stopped
    -- instance leaves one, so the hash is small (one listpack page).
    local left = redis.call('HSCAN', keyspace.sibling_key(step.keys[1], 'cfg', 'liketb'), 0, 'MATCH', pattern, 'COUNT', 100)
    for i = 1, #left[2], 2 do actor_log.ACTORS.forget_like(left[2][i]) end
  end
  redis.call('HSET', record, 'likes', page[1] == '0' and 'done' or page[1])
  budget = budget - actor_log.ACTORS.STEP.LOOK - like * #page[2] / 2
  return page[1] == '0' and math.max(budget, 0) or 0
end

local function retract_item(keys, args)
  local cfg_key = keys[1]
  local refused, header, arg = board_write.begin_board_call(keys, args, CALLS.retract_item)
  if refused then return refused end
  local now_ms, now_sec, window_count = header.now_ms, header.now_sec, #header.windows
  local windows = call_state.bind_windows(2, window_count)
  local step = actor_blocks.begin_retraction('item', now_ms, keys, windows, { id = arg.target, most = arg.most,
    ledger = arg.ledger, block_until_ms = arg.block_until_ms, block_key = arg.block_key })
  step.now_sec = now_sec
  local record, item, most = step.record, step.id, step.most
  actor_log.ACTORS.bound_rebase(most)
  local confs = snapshot.cross_all(windows, now_sec)
  if confs then cross_siblings(step, window_count) end
  snapshot.leave_apart()
  -- What expired drains first, within as many units as the step's; the board's windows, then each
  -- segment's, the likes, then every kept history.
  step.budget = segmentation.step_drain(windows, now_sec, header.budget, most, actor_log.ACTORS.drained_weight)
  local budget, events, amount = item_out_of_windows(step, window_count, now_ms, most)
  if budget > 0 then budget = item_likes_out(step, budget) end
  if budget > 0 then budget = item_out_of_histories(step, window_count, confs, budget) end
  if budget > 0 and confs then budget = item_out_of_derived(step, window_count, budget) end
  redis.call('HINCRBY', record, 'events', events)
  redis.call('HINCRBY', record, 'amount', amount)
  if most - budget > 0 then snapshot.bump_version(cfg_key, 1) end
  local done = budget > 0
  if done then redis.call('HDEL', item_data.item_data_key(cfg_key), item) end
  local events, amount = actor_blocks.end_retraction(record, done, now_ms)
  local grouped = call_state.config_field(cfg_key, 'groupedBy') and 1 or 0
  return reader.answer(CALLS.retract_item, { done = done and 1 or 0, taken = most - budget, events = events, amount = amount, grouped = grouped })
end
