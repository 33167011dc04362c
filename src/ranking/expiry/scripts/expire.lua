-- requires: call_state, likes, segmentation, slot_due, snapshot, window
-- expire: drains the expired slots of every window of a board and prunes old likes (scheduled job).
-- KEYS: dynamic
-- KEYS[1]        board config hash (holds the config version)
-- KEYS[2]        likes zset: "<item>\31<user>" -> like time (unix ms)
-- KEYS[1+2w], KEYS[2+2w] (w = 1..W): window w's slots index zset and results zset
-- ARGV[1]        config version the caller built its keys from
-- ARGV[2]        now, unix milliseconds
-- ARGV[3]        expiry budget: most expired-slot fields (and likes) removed by this call
-- ARGV[4]        W, number of windows
-- ARGV[5+4(w-1)] .. ARGV[8+4(w-1)]: window w's period (s), interval (s), creation time (unix ms), origin (window_lib)
-- ARGV[5+4W]     most segments due whose windows this call drains (segment_lib; each within the budget)
-- Reply: { draining (0|1): 1 when expired data (slots or likes) remains (call again), next due time
--        (unix ms): when the oldest slot left, or the oldest like, falls out, or the next snapshot
--        boundary of a window keeping snapshots and holding data; 0 when there is none }
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function expire(keys, args)
  call_state.begin_call(keys, args)
  local err = window.version_error(KEYS[1], ARGV[1])
  if err then return redis.error_reply(err) end
  local now_sec = math.floor(tonumber(ARGV[2]) / 1000)
  local budget = tonumber(ARGV[3])
  local window_count = tonumber(ARGV[4])
  snapshot.cross_all(3, window_count, 5, now_sec)
  local more_likes = likes.prune_likes(KEYS[2], window_count, now_sec, budget)
  local draining = window.expire_all(3, window_count, 5, now_sec, budget)
  slot_due.settle_slot_due()
  local segments_draining, segments_due_ms = segmentation.expire_segments(3, window_count, tonumber(ARGV[2]), budget, tonumber(ARGV[5 + window.WINDOW_ARGS * window_count]))
  if more_likes or segments_draining == 1 then draining = 1 end
  local next_ms = math.min(window.earliest_slot_due_ms(3, window_count) or math.huge, likes.likes_due_ms(KEYS[2], window_count) or math.huge,
    snapshot.snapshot_due_ms(3, window_count, now_sec) or math.huge, segments_due_ms or math.huge)
  if next_ms == math.huge then next_ms = 0 end
  return { draining, next_ms }
end
