-- like: counts a user's like of an item once in every window, unless the same user's earlier like is
-- still inside any window of the board (dedupe); with `undo`, takes the like back out of every window
-- whose live slot still holds it. Also prunes likes that left every window.
-- KEYS: dynamic
-- KEYS[1]        board config hash (holds the config version)
-- KEYS[2]        likes zset: "<item>\31<user>" -> like time (unix ms)
-- KEYS[1+2w], KEYS[2+2w] (w = 1..W): window w's slots index zset and results zset
-- ARGV[1]        config version the caller built its keys from
-- ARGV[2]        now, unix milliseconds
-- ARGV[3]        expiry budget: most expired-slot fields (and likes) removed by this call
-- ARGV[4]        W, number of windows
-- ARGV[5+3(w-1)] .. ARGV[7+3(w-1)]: window w's period (s), interval (s), creation time (unix ms)
-- ARGV[5+3W]     item id
-- ARGV[6+3W]     user id
-- ARGV[7+3W]     undo: 1 to take the like back, 0 to like
-- ARGV[8+3W] .. ARGV[11+3W]: idempotency key ("" for none), request fingerprint, context, retention (ms)
-- Reply: { outcome, context, draining (0|1), counted (0|1): this call changed the counts,
--          score_1, rank_1, ..., score_W, rank_W } (rank 0: not ranked; outcome, context: idem_lib)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local answer, now_ms, window_count, idem = begin_board_write(8)
if answer then return answer end
local now_sec = math.floor(now_ms / 1000)
local budget = tonumber(ARGV[3])
local draining = expire_all(3, window_count, 5, 3, now_sec, budget)
prune_likes(KEYS[2], window_count, now_sec, budget)
local item = ARGV[5 + 3 * window_count]
local member = item .. '\31' .. ARGV[6 + 3 * window_count]
local undo = ARGV[7 + 3 * window_count] == '1'
local liked = redis.call('ZSCORE', KEYS[2], member)
local liked_ms = liked and tonumber(liked) or nil

-- Which windows this call changes, and by how much, at which time's slot.
local changed, delta, at_sec = {}, 1, now_sec
if undo then
  if liked_ms then
    redis.call('ZREM', KEYS[2], member)
    for _, w in ipairs(like_windows(liked_ms, window_count, now_sec)) do changed[w] = true end
  end
  delta, at_sec = -1, math.floor((liked_ms or now_ms) / 1000)
elseif not (liked_ms and #like_windows(liked_ms, window_count, now_sec) > 0) then
  redis.call('ZADD', KEYS[2], now_ms, member)
  for w = 0, window_count - 1 do changed[w] = true end
end

local reply = { draining, 0 }
for w = 0, window_count - 1 do
  local slots_key, top_key = KEYS[3 + 2 * w], KEYS[4 + 2 * w]
  local score, rank
  if changed[w] then
    reply[2] = 1
    score = add_to_window(slots_key, top_key, current_slot(at_sec, tonumber(ARGV[6 + 3 * w])), item, delta)
    rank = rank_of(top_key, score)
  else
    score, rank = standing(top_key, item)
  end
  reply[#reply + 1] = score
  reply[#reply + 1] = rank
end
return idem_finish(KEYS[1], 'cfg', idem, now_ms, reply)
