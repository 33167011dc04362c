-- requires: call_state, order, snapshot, window
-- count_above: for a sharded board, how many items of this shard score above given scores, per window,
-- after expiring what fell out (the other shards' share of a rank).
-- KEYS: dynamic
-- KEYS[1]        the shard's config hash (holds the config version)
-- KEYS[2w], KEYS[2w+1] (w = 1..W): window w's slots index zset and results zset on this shard
-- ARGV[1]        config version the caller built its keys from
-- ARGV[2]        now, unix milliseconds
-- ARGV[3]        expiry budget: most expired-slot fields drained by this call
-- ARGV[4]        W, number of windows
-- ARGV[5+4(w-1)] .. ARGV[8+4(w-1)]: window w's period (s), interval (s), creation time (unix ms), origin (window_lib)
-- ARGV[5+4W+(w-1)] score of window w to count above (one not listed, a sum <= 0: count nothing)
-- ARGV[5+5W+(w-1)] a tie mark for window w's score (a sharded `ties: first` board), or "" (absent
--                  args: ""): with one, items of an equal score and an earlier mark count too (tie_ahead)
-- Reply: { draining (0|1), above_1, ranked_1, ..., above_W, ranked_W }: items ahead of the score (and
--        mark), and items listed (order_lib), in each window
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function count_above(keys, args)
  call_state.begin_call(keys, args)
  local err = window.version_error(KEYS[1], ARGV[1])
  if err then return redis.error_reply(err) end
  local now_sec = math.floor(tonumber(ARGV[2]) / 1000)
  local window_count = tonumber(ARGV[4])
  snapshot.cross_all(2, window_count, 5, now_sec)
  local reply = { window.expire_all(2, window_count, 5, now_sec, tonumber(ARGV[3])) }
  for w = 0, window_count - 1 do
    local top_key = KEYS[3 + 2 * w]
    local score = tonumber(ARGV[5 + window.WINDOW_ARGS * window_count + w])
    local mark = ARGV[5 + (window.WINDOW_ARGS + 1) * window_count + w] or ''
    reply[#reply + 1] = order.listed(top_key, score) and order.ahead(top_key, score, mark) or 0
    reply[#reply + 1] = order.listed_count(top_key)
  end
  return reply
end
