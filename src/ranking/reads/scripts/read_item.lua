-- requires: call_state, order, snapshot, window
-- read_item: one item's score and rank in a window plus the number of ranked items, after expiry.
-- KEYS: 3
-- KEYS[1]        board config hash (holds the config version)
-- KEYS[2]        the window's slots index zset
-- KEYS[3]        the window's results zset
-- ARGV[1]        config version the caller built its keys from
-- ARGV[2]        now, unix milliseconds
-- ARGV[3]        expiry budget: most expired-slot fields drained by this call
-- ARGV[4] .. ARGV[6]: the window's period and interval (s) and origin (window_lib)
-- ARGV[7]        item id
-- Reply: { draining (0|1), score, rank (0: not ranked), ranked items (score > 0), the item's tie mark
--          (a sharded `ties: first` board; else "") }
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function read_item(keys, args)
  call_state.begin_call(keys, args)
  local err = window.version_error(KEYS[1], ARGV[1])
  if err then return redis.error_reply(err) end
  local now_sec = math.floor(tonumber(ARGV[2]) / 1000)
  snapshot.cross_window(now_sec, tonumber(ARGV[5]), tonumber(ARGV[6]))
  local _, more = window.expire_window(KEYS[2], KEYS[3], now_sec, tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[3]), tonumber(ARGV[6]))
  local score, rank = window.standing(KEYS[3], ARGV[7])
  return { more and 1 or 0, score, rank, redis.call('ZCOUNT', KEYS[3], '(0', '+inf'), order.mark_of(KEYS[3], ARGV[7]) }
end
