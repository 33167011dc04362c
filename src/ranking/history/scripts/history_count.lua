-- requires: call_state, order, snapshot, window
-- history_count: for a sharded board, how many rows of this shard's snapshots score above given
-- scores (the other shards' share of an item's rank in a snapshot), taking the snapshot of a
-- boundary this call is the first to cross.
-- KEYS: 3
-- KEYS[1]        the shard's config hash
-- KEYS[2]        the window's slots index zset on this shard (snapshot keys are its siblings)
-- KEYS[3]        the window's results zset on this shard
-- ARGV[1]        config version the caller built its keys from
-- ARGV[2]        now, unix milliseconds
-- ARGV[3]        expiry budget (unused)
-- ARGV[4] .. ARGV[6]: the window's period and interval (s) and origin (window_lib)
-- ARGV[7 ...]    pairs of boundary (unix s), score: count in this shard's snapshot at or before it
-- Reply: { count_1, ... } one per pair (0 where the shard has no snapshot)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function history_count(keys, args)
  call_state.begin_call(keys, args)
  local err = window.version_error(KEYS[1], ARGV[1])
  if err then return redis.error_reply(err) end
  local now_sec = math.floor(tonumber(ARGV[2]) / 1000)
  local interval_sec = tonumber(ARGV[5])
  local conf = snapshot.cross_window(now_sec, interval_sec, tonumber(ARGV[6]))
  local reply = {}
  for i = 7, #ARGV, 2 do
    local count = 0
    if conf then
      local _, rows = snapshot.find_snapshot(KEYS[2], conf, interval_sec, now_sec, tonumber(ARGV[i]), tonumber(ARGV[6]))
      if rows then count = snapshot.snapshot_count_above(rows, tonumber(ARGV[i + 1]), order.ascending(KEYS[2])) end
    end
    reply[#reply + 1] = count
  end
  return reply
end
