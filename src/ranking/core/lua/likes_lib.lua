-- module: likes
-- requires: call_state, keyspace, slot_due, window
-- likes_lib: which windows still hold a like, and the pruning of likes every window has let go (like,
-- expire). A like is a member of the board's likes zset scored by when it was made (unix ms). The
-- take-back of a like's segments over bounded calls is the segments option's (segment_growth_lib).
-- KEYS: 0

-- Likes: window w (0-based) still holds a like made at `liked_ms` when the like's slot is live there
-- and the window existed when the like was made. The call's `windows` (call_state.bind_windows).
local function like_windows(liked_ms, windows, now_sec)
  local holding = {}
  for w = 0, windows.count - 1 do
    local live_from_ms = window.live_from_sec(now_sec, window.window_rule(windows, w)) * 1000
    if liked_ms >= live_from_ms and liked_ms >= windows.created_ms[w] then holding[#holding + 1] = w end
  end
  return holding
end

-- Removes (at most `budget`) likes older than the start of every window's live span; true when it
-- removed a whole budget (more may remain).
local function prune_likes(likes_key, windows, now_sec, budget)
  local oldest_live_ms = nil
  for w = 0, windows.count - 1 do
    local live_from_ms = window.live_from_sec(now_sec, window.window_rule(windows, w)) * 1000
    if oldest_live_ms == nil or live_from_ms < oldest_live_ms then oldest_live_ms = live_from_ms end
  end
  local stale = redis.call('ZRANGE', likes_key, '-inf', '(' .. oldest_live_ms, 'BYSCORE', 'LIMIT', 0, budget)
  if #stale > 0 then
    redis.call('ZREM', likes_key, unpack(stale))
    -- The segments recorded with them (segment_lib, like.lua) go too.
    redis.call('HDEL', keyspace.sibling_key(likes_key, 'likes', 'likesegs'), unpack(stale))
  end
  return #stale >= budget
end

-- When (unix ms) the oldest like leaves every window (prune_likes may remove it), or nil when there is
-- none: a like at t leaves window w when w's slot of t expires, at slot_due_ms(slot of t, period).
local function likes_due_ms(likes_key, windows)
  local oldest = redis.call('ZRANGE', likes_key, 0, 0, 'WITHSCORES')
  if #oldest == 0 then return nil end
  local liked_sec = math.floor(tonumber(oldest[2]) / 1000)
  local due = 0
  for w = 0, windows.count - 1 do
    local period_sec, interval_sec, origin_sec = window.window_rule(windows, w)
    due = math.max(due, slot_due.slot_due_ms(window.current_slot(liked_sec, interval_sec, origin_sec), period_sec))
  end
  return due
end

likes.like_windows = like_windows
likes.prune_likes = prune_likes
likes.likes_due_ms = likes_due_ms
