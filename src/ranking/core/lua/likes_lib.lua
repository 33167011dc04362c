-- module: likes
-- requires: call_state, keyspace, segmentation, slot_due, window
-- likes_lib: which windows still hold a like, the pruning of likes every window has let go (like,
-- expire), and the take-back of a like over bounded calls (like). A like is a member of the board's
-- likes zset scored by when it was made (unix ms).
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

-- Take-backs: an unlike takes the like out of the board's windows and of at most `most` of the
-- segments it was counted in (the service's share of WRITE_COST_PER_CALL: a like stored past the write
-- bound may name more); the segments left are recorded in the shard's "liketb" hash, "<item><US><user>"
-- -> "<liked ms>,<segment>,...", and taken back by the next calls (an unlike, or the service's resume),
-- `most` each. A member is never both held (likes zset) and recorded: a like is refused while its
-- take-back is recorded (TB_LIKE_TAKE_BACK_PENDING), a take-back is recorded only as the like leaves.
local function take_back_key(likes_key)
  return keyspace.sibling_key(likes_key, 'likes', 'liketb')
end

local function take_back_pending(likes_key, member)
  return redis.call('HEXISTS', take_back_key(likes_key), member) == 1
end

-- The take-back an unlike runs: of the held like made at `liked_ms` (its recorded segments), else of
-- one recorded, nil when there is none. A recorded one whose user or item a retraction blocks
-- (`refused()`) is forgotten: the retraction takes its counts out. { liked_ms, held, chunk (the
-- segments this call takes it out of), rest (those left) }.
local function take_back_plan(likes_key, member, liked_ms, most, refused)
  local names
  local plan = { liked_ms = liked_ms, held = liked_ms ~= nil, chunk = {}, rest = {} }
  if plan.held then
    names = segmentation.segment_names(redis.call('HGET', keyspace.sibling_key(likes_key, 'likes', 'likesegs'), member) or '')
  else
    local record = redis.call('HGET', take_back_key(likes_key), member)
    if not record then return nil end
    if refused() then
      redis.call('HDEL', take_back_key(likes_key), member)
      return nil
    end
    names = segmentation.segment_names(record)
    plan.liked_ms = tonumber(table.remove(names, 1))
  end
  for i, name in ipairs(names) do
    if i <= most then plan.chunk[#plan.chunk + 1] = name else plan.rest[#plan.rest + 1] = name end
  end
  return plan
end

-- Applies the record of `plan` (take_back_plan): the held like leaves the likes zset and its recorded
-- segments; the segments left are recorded, or the record forgotten. The counts are the caller's.
local function record_take_back(likes_key, member, plan)
  local key = take_back_key(likes_key)
  if plan.held then
    redis.call('ZREM', likes_key, member)
    redis.call('HDEL', keyspace.sibling_key(likes_key, 'likes', 'likesegs'), member)
  end
  if #plan.rest > 0 then
    redis.call('HSET', key, member, plan.liked_ms .. ',' .. table.concat(plan.rest, ','))
  elseif not plan.held then
    redis.call('HDEL', key, member)
  end
end

likes.like_windows = like_windows
likes.take_back_pending = take_back_pending
likes.take_back_plan = take_back_plan
likes.record_take_back = record_take_back
likes.prune_likes = prune_likes
likes.likes_due_ms = likes_due_ms
