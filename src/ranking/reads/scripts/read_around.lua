-- requires: call_state, order, snapshot, window
-- read_around: an item with up to `radius` neighbours on each side in a window's listing, after expiry.
-- KEYS: 3
-- KEYS[1]        board config hash (holds the config version)
-- KEYS[2]        the window's slots index zset
-- KEYS[3]        the window's results zset
-- ARGV[1]        config version the caller built its keys from
-- ARGV[2]        now, unix milliseconds
-- ARGV[3]        expiry budget: most expired-slot fields drained by this call
-- ARGV[4] .. ARGV[6]: the window's period and interval (s) and origin (window_lib)
-- ARGV[7]        item id
-- ARGV[8]        radius (neighbours on each side)
-- Reply: { draining (0|1), position of the first listed (0-based; -1: item not ranked), items with a
--          higher score than the first listed, { previous rank of each listed (0: absent); empty when
--          the window keeps no snapshots }, { tie mark of each listed (as read_top) }, item_1, score_1,
--          ... } in read_top's order
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function read_around(keys, args)
  call_state.begin_call(keys, args)
  local err = window.version_error(KEYS[1], ARGV[1])
  if err then return redis.error_reply(err) end
  local now_sec = math.floor(tonumber(ARGV[2]) / 1000)
  local keeps = snapshot.cross_window(now_sec, tonumber(ARGV[5]), tonumber(ARGV[6]))
  local _, more = window.expire_window(KEYS[2], KEYS[3], now_sec, tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[3]), tonumber(ARGV[6]))
  local reply = { more and 1 or 0, -1, 0, {}, {} }
  local score = tonumber(redis.call('ZSCORE', KEYS[3], ARGV[7]) or '0')
  if score <= 0 then return reply end
  local position = order.position(KEYS[3], ARGV[7])
  local radius = tonumber(ARGV[8])
  local first = math.max(0, position - radius)
  reply[2] = first
  local page = order.page(KEYS[3], first, position + radius, reply[5])
  return snapshot.add_previous_ranks(window.append_listing(reply, KEYS[3], page), KEYS[3], keeps)
end
