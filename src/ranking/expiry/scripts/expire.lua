-- requires: actor_log, board_write, call_state, likes, reader, segmentation, slot_due, snapshot
-- expire: drains the expired slots of every window of a board and prunes old likes (scheduled job).
-- Keys: dynamic: cfg (board config hash: holds the config version), likes (zset: "<item>\31<user>" ->
--       like time, unix ms), then per window w = 1..W of the header its slots index zset and results
--       zset (keys[1+2w], keys[2+2w])
-- Args (reader.read_call, CALLS.expire): the header (its budget: most expired-slot fields and likes
--   removed by this call), then segments_per_call: most segments due whose windows this call drains
--   (segment_lib), units: the work the call's drains may do, about a Redis command each, as an admin
--   step's (write-cost.ts adminStepUnits): expired fields weighed at their options' commands (drained_weight),
--   each segment looked into, a share for a decay view's rebase; the rest is the next call's. A listing
--   of many rows stored at a boundary is a call of its own (snapshot_lib's leave_apart: sent again).
-- Reply (reader.answer, CALLS.expire): draining (0|1: 1 when expired data (slots or likes) remains: call
--   again), next_due_ms (now while draining; else when the oldest slot left, or the oldest like, falls out,
--   or the next snapshot boundary of a window keeping snapshots and holding data; 0 when there is none),
--   pruning (0|1: 1 while a reset's prune of the options' maps has steps left on the shard, prune_lib:
--   the scheduler's visit drives them, prune_step)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function expire(keys, args)
  local likes_key = keys[2]
  local refused, header, arg = board_write.begin_board_call(keys, args, CALLS.expire)
  if refused then return refused end
  local pruning = call_state.config_field(keys[1], 'pruning') and 1 or 0
  local now_sec, budget, units = header.now_sec, header.budget, tonumber(arg.units)
  local windows = call_state.bind_windows(3, #header.windows)
  actor_log.ACTORS.bound_rebase(units)
  snapshot.cross_all(windows, now_sec)
  snapshot.leave_apart()
  local more_likes = likes.prune_likes(likes_key, windows, now_sec, budget)
  local drain = segmentation.step_drain(windows, now_sec, budget, units, actor_log.ACTORS.drained_weight)
  local draining = drain.more and 1 or 0
  slot_due.settle_slot_due()
  local segments_draining, segments_due_ms = segmentation.expire_segments(windows, header.now_ms, drain,
    tonumber(arg.segments_per_call))
  if more_likes or segments_draining == 1 then draining = 1 end
  -- Expired data remains: due now (the service calls again), the oldest slots' due read once none does.
  if draining == 1 then return reader.answer(CALLS.expire, { draining = 1, next_due_ms = header.now_ms, pruning = pruning }) end
  local next_ms = math.min(slot_due.earliest_slot_due_ms(windows) or math.huge, likes.likes_due_ms(likes_key, windows) or math.huge,
    snapshot.snapshot_due_ms(windows, now_sec) or math.huge, segments_due_ms or math.huge)
  if next_ms == math.huge then next_ms = 0 end
  return reader.answer(CALLS.expire, { draining = draining, next_due_ms = next_ms, pruning = pruning })
end
