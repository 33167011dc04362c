-- requires: actor_blocks, actor_caps, actor_log, board_write, call_state, keyspace, prune, reader, seg_views, segmentation, snapshot, window
-- reweight_step: one bounded chunk of an actor's re-weighting on one shard (PUT .../actors/:actor): its
-- live contributions (actor_lib) counted again at its new weight, within the board's cap
-- (actor_caps_lib), in every window, view and segment. A re-weighting is a record under the board's
-- hash tag, "<tag>:rw:<digest of the actor>" (hash: actor, weight, state, events, startedMs, and a cursor
-- "c:<slots key>" per window: the last contribution counted again there). The first step of a PUT
-- (`fresh` 1) stores the weight (the shard's "<tag>:weights"), so every event after it counts at the
-- new weight; a PUT of the weight the record already holds changes nothing. Each contribution is
-- counted again from the amounts its events sent (figures' sent), so a step repeated, a second
-- instance or a restart only counts some contributions again to what they already add: the result
-- is the same. Contributions go oldest slot first (byactor's order), each within the cap against the
-- pair's other live contributions as they stand. A unit of work is about one Redis command (actor_lib's
-- STEP): a window looked into, a segment visited, a contribution with each view reading its window
-- weigh what they run. The segments' windows follow, one segment at a
-- time from "<tag>:rw:<digest>:segs" (the shard's segments as the first step found them).
-- Keys: cfg (board config hash), the windows' (slots, top) pairs, then the record (last)
-- Args (reader.read_call, CALLS.reweight_step): the header with every window, then actor, weight
--   (integer 0..100), most (units of work, at least actor_lib's step_units; what expired drains first
--   within as many), ledger (0-based window whose contributions count the
--   events), fresh (1: the PUT's first step on this shard), places (weighed actors the board may hold,
--   counted on this shard; 0: not counted here)
-- Reply (reader.answer, CALLS.reweight_step): done (0|1), taken (contributions looked at by this
--   step), events (the record's total: live events of the actor counted again, in the ledger window),
--   weight (the record's)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG, TB_ACTOR_WEIGHTS_FULL <held> <places> (nothing stored)

local REWEIGHT = { KEEP_SEC = 7 * 86400 }

-- Counts again up to `most` of the actor's contributions in one window after the record's cursor.
-- Answers how many it looked at, their events, and whether the window has none left after them.
local function reweight_window(record, slots_key, top_key, actor, weight, most)
  local byactor = actor_log.ACTORS.window_keys(slots_key)
  local prefix = actor .. actor_log.ACTORS.SEP
  local cursor_field = 'c:' .. slots_key
  local after = redis.call('HGET', record, cursor_field)
  local from = after and '(' .. after or '[' .. prefix
  local members = redis.call('ZRANGE', byactor, from, '(' .. actor .. '\32', 'BYLEX', 'LIMIT', 0, most)
  local events = 0
  for _, member in ipairs(members) do
    local start, item = string.match(string.sub(member, #prefix + 1), '^(%d+)\31(.*)$')
    local act_key = actor_log.ACTORS.slot_key(slots_key, start)
    local counted, count, sent = actor_log.ACTORS.figures(redis.call('HGET', act_key, prefix .. item))
    local target = actor_caps.reweighted(slots_key, actor, item, counted, sent, weight)
    if target ~= counted and count > 0 then
      redis.call('HSET', act_key, prefix .. item, actor_log.ACTORS.value(target, count, sent))
      prune.settle(call_state.CALL.cfg_key, item)
      local score = window.add_amount(window.slot_key_of(slots_key, start), top_key, item, target - counted)
      seg_views.view_window_changed(top_key, tonumber(start), item, target - counted, score, nil)
      actor_log.ACTORS.moved(slots_key, actor, item, counted, target)
    end
    events = events + count
  end
  if #members > 0 then redis.call('HSET', record, cursor_field, members[#members]) end
  return #members, events, #members < most
end

-- The windows of the board (segment nil) or of one segment within `left` units. Answers the units
-- left, whether every window is done, the contributions looked at and the events counted in the
-- ledger window (the board's only).
local function reweight_windows(step, window_count, segment, left)
  local empty, taken, events = true, 0, 0
  for w = 0, window_count - 1 do
    if left <= 0 then return left, false, taken, events end
    local slots_key, top_key = step.keys[2 + 2 * w], step.keys[3 + 2 * w]
    if segment then
      slots_key, top_key = segmentation.segment_window_key(slots_key, 'slots', segment), segmentation.segment_window_key(top_key, 'top', segment)
    end
    local look = actor_log.ACTORS.STEP.LOOK
    local weight = actor_log.ACTORS.view_step_weight(actor_log.ACTORS.STEP.CONTRIBUTION, #(seg_views.views_reading(top_key) or {}))
    local limit = math.max(1, math.floor((left - look) / weight))
    local count, e, done = reweight_window(step.record, slots_key, top_key, step.actor, step.weight, limit)
    left, taken = left - look - count * weight, taken + count
    if not done then empty = false end
    if segment == nil and w == step.ledger then events = events + e end
  end
  return left, empty, taken, events
end

-- The segments' windows, one segment at a time from the record's list (copied from the shard's segdue
-- by the first step), each drained first where due.
local function reweight_segments(step, window_count, now_ms, left)
  return segmentation.walk_pending_segments(step.keys[1], step.record .. ':segs', step.windows, now_ms, step.budget, left,
    function(name, units) return reweight_windows(step, window_count, name, units - actor_log.ACTORS.STEP.SEGMENT) end)
end

-- The record, started again by a PUT of another weight than it holds (its cursors and segment list
-- reset, the weight stored; refused, nothing stored, when the weight would take a place the board no
-- longer has); a PUT of the same weight and every later step leave it as it is. A later step finding
-- no record (one back at weight 1 is dropped once done) has nothing left to do.
local function reweight_begin(cfg_key, record, arg, now_ms)
  local weight = tonumber(arg.weight)
  if arg.fresh ~= '1' and redis.call('EXISTS', record) == 0 then return { gone = true, weight = 1 } end
  if arg.fresh == '1' and tonumber(redis.call('HGET', record, 'weight')) ~= weight then
    local refusal = actor_caps.weight_refusal(cfg_key, arg.actor, weight, tonumber(arg.places))
    if refusal then return nil, refusal end
    redis.call('DEL', record, record .. ':segs')
    redis.call('HSET', record, 'actor', arg.actor, 'weight', weight, 'state', 'running', 'events', 0, 'startedMs', now_ms)
    redis.call('ZRANGESTORE', record .. ':segs', keyspace.sibling_key(cfg_key, 'cfg', 'segdue'), 0, -1)
    redis.call('EXPIRE', record .. ':segs', REWEIGHT.KEEP_SEC)
    actor_caps.set_weight(cfg_key, arg.actor, weight)
  end
  redis.call('EXPIRE', record, REWEIGHT.KEEP_SEC)
  actor_blocks.hold_record(cfg_key, record, REWEIGHT.KEEP_SEC, now_ms)
  return { record = record, actor = arg.actor, weight = tonumber(redis.call('HGET', record, 'weight')) or weight,
    ledger = tonumber(arg.ledger), budget = 0, keys = nil }
end

local function reweight_step(keys, args)
  local cfg_key = keys[1]
  local refused, header, arg = board_write.begin_board_call(keys, args, CALLS.reweight_step)
  if refused then return refused end
  local window_count, now_ms = #header.windows, header.now_ms
  local windows = call_state.bind_windows(2, window_count)
  local record = keys[#keys]
  local step, refusal = reweight_begin(cfg_key, record, arg, now_ms)
  if refusal then return redis.error_reply(refusal) end
  step.keys, step.windows = keys, windows
  if step.gone or redis.call('HGET', record, 'state') == 'done' then
    return reader.answer(CALLS.reweight_step, { done = 1, taken = 0, events = tonumber(redis.call('HGET', record, 'events')) or 0, weight = step.weight })
  end
  local most = actor_log.ACTORS.step_units(tonumber(arg.most), window_count)
  actor_log.ACTORS.bound_rebase(most)
  snapshot.cross_all(windows, header.now_sec)
  snapshot.leave_apart()
  -- What expired drains first, within as many units as the step's.
  step.budget = segmentation.step_drain(windows, header.now_sec, header.budget, most, actor_log.ACTORS.drained_weight)
  local left, board_done, taken, events = reweight_windows(step, window_count, nil, most)
  if events > 0 then redis.call('HINCRBY', record, 'events', events) end
  local segments_done, segment_taken = false, 0
  if left > 0 and board_done then left, segments_done, segment_taken = reweight_segments(step, window_count, now_ms, left) end
  taken = taken + segment_taken
  if taken > 0 then snapshot.bump_version(cfg_key, 1) end
  local done = board_done and segments_done
  local events_total = tonumber(redis.call('HGET', record, 'events'))
  -- Back at the default weight, a finished record holds nothing worth keeping: its place is freed whole.
  if done and step.weight == 1 then redis.call('DEL', record) elseif done then redis.call('HSET', record, 'state', 'done') end
  return reader.answer(CALLS.reweight_step, {
    done = done and 1 or 0,
    taken = taken,
    events = events_total,
    weight = step.weight,
  })
end
