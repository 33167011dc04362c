-- requires: call_state, order, snapshot, window
-- read_top: one page of a window's listing, highest score first, after expiring what fell out.
-- KEYS: 3
-- KEYS[1]        board config hash (holds the config version)
-- KEYS[2]        the window's slots index zset
-- KEYS[3]        the window's results zset
-- ARGV[1]        config version the caller built its keys from
-- ARGV[2]        now, unix milliseconds
-- ARGV[3]        expiry budget: most expired-slot fields drained by this call
-- ARGV[4] .. ARGV[6]: the window's period and interval (s) and origin (window_lib)
-- ARGV[7]        offset (0-based), ARGV[8] limit
-- Reply: { draining (0|1), position of the first listed (0-based), items with a higher score than
--          the first listed, { previous rank of each listed (0: absent); empty when the window keeps no
--          snapshots }, { tie mark of each listed (a sharded `ties: first` board; else empty) }, item_1,
--          score_1, ... } (a score as Redis wrote it, or a number: append_listing)
--        ties are listed in descending byte order of item id (Redis ZREVRANGE order), on a `ties: first`
--        board in the strict order (order_lib)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function read_top(keys, args)
  call_state.begin_call(keys, args)
  local err = window.version_error(KEYS[1], ARGV[1])
  if err then return redis.error_reply(err) end
  local now_sec = math.floor(tonumber(ARGV[2]) / 1000)
  local keeps = snapshot.cross_window(now_sec, tonumber(ARGV[5]), tonumber(ARGV[6]))
  local _, more = window.expire_window(KEYS[2], KEYS[3], now_sec, tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[3]), tonumber(ARGV[6]))
  local offset = tonumber(ARGV[7])
  local last = offset + tonumber(ARGV[8]) - 1
  local marks = {}
  local page = order.page(KEYS[3], offset, last, marks)
  local listing = window.append_listing({ more and 1 or 0, offset, 0, {}, marks }, KEYS[3], page, offset == 0)
  return snapshot.add_previous_ranks(listing, KEYS[3], keeps)
end
