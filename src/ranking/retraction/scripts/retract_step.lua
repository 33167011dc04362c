-- requires: actor_blocks, actor_log, board_write, call_state, keyspace, reader, seg_views, segmentation, snapshot, window
-- retract_step: one bounded chunk of a retraction on one shard (an actor's events out of every
-- window, view and unique count; see actor_lib). A retraction is a record under the board's hash tag,
-- "<tag>:ret:<id>" (hash: actor, state, events, amount, startedMs), created by its first step; each
-- step does at most `most` units of work, removing each contribution from the indexes in the same call
-- that subtracts it, so a step repeated (a retry, a second instance, a restart) finds nothing twice.
-- A unit is about one Redis command (actor_lib's STEP): looking into a window, visiting a segment and
-- each contribution taken out (with each view reading its window) weigh what they run; what the step
-- drains first spends as many units at most (segment_lib's step_drain). The board's windows are looked
-- into by every step;
-- the segments' through "<tag>:ret:<id>:segs", the shard's segments as the first step found them,
-- each left there until every window of it is empty, so a step never looks into more than `most`
-- windows however many segments the shard holds. The record turns "done" on the first step that finds
-- nothing left in the board's windows and no segment left to look into.
-- Keys: cfg (board config hash: holds the config version), the windows' (slots, top) pairs, then the
--   retraction's record hash (last)
-- Args (reader.read_call, CALLS.retract_step): the header with every window, then target (the actor),
--   most (units of work this step does over every window, about a command each, at least actor_lib's
--   step_units; see above), ledger (0-based window: events
--   and amount are counted from its contributions only, so an event counts once however many windows
--   held it), block_until_ms (0: no block; the actor's new events are refused until then), block_key
--   (what the block binds: the actor's block key, the service's blockKeyOf; actor_lib)
-- Reply (reader.answer, CALLS.retract_step): done (0|1), taken (contributions taken by this step),
--   events, amount (the record's totals), grouped (0: retract_item's, an actor's listings go no further)
-- Keys derived: "<tag>:ret:<id>:segs" (zset, the segments still to look into, expiring with the record)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
-- Takes up to `most` of `actor`'s contributions out of one window (the board's or a segment's): out of
-- the index and its slot's contributions first, then subtracted from the slot, the results, the views
-- (as expiry does) and the unique counts. Returns how many it took and their events and amount.
local function retract_window(slots_key, top_key, actor, most)
  local byactor, pairs_key, byitem = actor_log.ACTORS.window_keys(slots_key)
  local prefix = actor .. actor_log.ACTORS.SEP
  local members = redis.call('ZRANGE', byactor, '[' .. prefix, '(' .. actor .. '\32', 'BYLEX', 'LIMIT', 0, most)
  if #members == 0 then return 0, 0, 0 end
  redis.call('ZREM', byactor, unpack(members))
  local events, amount = 0, 0
  for _, member in ipairs(members) do
    local start, item = string.match(string.sub(member, #prefix + 1), '^(%d+)\31(.*)$')
    redis.call('ZREM', byitem, item .. actor_log.ACTORS.SEP .. start .. actor_log.ACTORS.SEP .. actor)
    -- A like of the actor's goes with it, so that taking it back later subtracts nothing twice.
    actor_log.ACTORS.forget_like(item .. actor_log.ACTORS.SEP .. actor)
    local act_key = actor_log.ACTORS.slot_key(slots_key, start)
    local sum, count = actor_log.ACTORS.figures(redis.call('HGET', act_key, prefix .. item))
    redis.call('HDEL', act_key, prefix .. item)
    if sum ~= 0 then
      actor_log.ACTORS.moved(slots_key, actor, item, sum, 0)
      local score = window.add_amount(window.slot_key_of(slots_key, start), top_key, item, -sum)
      seg_views.view_window_changed(top_key, tonumber(start), item, -sum, score, nil)
    end
    actor_log.ACTORS.pair_moved(pairs_key, top_key, actor, item, -1)
    events, amount = events + count, amount + sum
  end
  return #members, events, amount
end

-- The units of one contribution taken out of window w (0-based) of the board or of a segment: its own
-- and the views reading it (a segment's windows have the views of the board's window).
local function retract_weight(keys, first_key, w)
  return actor_log.ACTORS.view_step_weight(actor_log.ACTORS.STEP.CONTRIBUTION, #(seg_views.views_reading(keys[first_key + 1 + 2 * w]) or {}))
end

-- Takes the actor's contributions out of the windows of the board (segment nil) or of one segment,
-- within `left` units. Answers the units left, whether the windows hold none of the actor's any more,
-- and the contributions taken, events and amount counted in the ledger window (the board's only).
local function retract_windows(step, window_count, segment, left)
  local empty, taken, events, amount = true, 0, 0, 0
  for w = 0, window_count - 1 do
    if left <= 0 then return left, false, taken, events, amount end
    local slots_key, top_key = step.keys[2 + 2 * w], step.keys[3 + 2 * w]
    if segment then
      slots_key, top_key = segmentation.segment_window_key(slots_key, 'slots', segment), segmentation.segment_window_key(top_key, 'top', segment)
    end
    local look, weight = actor_log.ACTORS.STEP.LOOK, retract_weight(step.keys, 2, w)
    local limit = math.max(1, math.floor((left - look) / weight))
    local count, e, a = retract_window(slots_key, top_key, step.id, limit)
    left, taken = left - look - count * weight, taken + count
    if count >= limit then empty = false end
    if segment == nil and w == step.ledger then events, amount = events + e, amount + a end
  end
  return left, empty, taken, events, amount
end

-- The segments' windows, one segment at a time from the retraction's own list (copied from the
-- shard's segdue by the first step), each drained first where due as segment_add does before a write.
local function retract_segments(step, window_count, now_ms, left)
  local pending = step.record .. ':segs'
  if redis.call('HSETNX', step.record, 'segs', 1) == 1 then
    redis.call('ZRANGESTORE', pending, keyspace.sibling_key(step.keys[1], 'cfg', 'segdue'), 0, -1)
    redis.call('EXPIRE', pending, actor_log.ACTORS.KEEP_SEC)
  end
  return segmentation.walk_pending_segments(step.keys[1], pending, step.windows, now_ms, step.budget, left,
    function(name, units) return retract_windows(step, window_count, name, units - actor_log.ACTORS.STEP.SEGMENT) end)
end

local function retract_step(keys, args)
  local cfg_key = keys[1]
  local refused, header, arg = board_write.begin_board_call(keys, args, CALLS.retract_step)
  if refused then return refused end
  local now_ms, window_count = header.now_ms, #header.windows
  local windows = call_state.bind_windows(2, window_count)
  local step = actor_blocks.begin_retraction('actor', now_ms, keys, windows, { id = arg.target, most = arg.most,
    ledger = arg.ledger, block_until_ms = arg.block_until_ms, block_key = arg.block_key })
  local record = step.record
  actor_log.ACTORS.bound_rebase(step.most)
  snapshot.cross_all(windows, header.now_sec)
  snapshot.leave_apart()
  -- What expired drains first, within as many units as the step's; the board's windows, then each segment's.
  step.budget = segmentation.step_drain(windows, header.now_sec, header.budget, step.most, actor_log.ACTORS.drained_weight)
  local left, board_empty, taken, events, amount = retract_windows(step, window_count, nil, step.most)
  if events ~= 0 or amount ~= 0 then
    redis.call('HINCRBY', record, 'events', events)
    redis.call('HINCRBY', record, 'amount', amount)
  end
  local segments_empty, segment_taken = false, 0
  if left > 0 then left, segments_empty, segment_taken = retract_segments(step, window_count, now_ms, left) end
  taken = taken + segment_taken
  if taken > 0 then snapshot.bump_version(cfg_key, 1) end
  local done = board_empty and segments_empty
  local events, amount = actor_blocks.end_retraction(record, done, now_ms)
  return reader.answer(CALLS.retract_step, { done = done and 1 or 0, taken = taken, events = events, amount = amount, grouped = 0 })
end
