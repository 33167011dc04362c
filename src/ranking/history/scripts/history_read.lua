-- requires: call_state, snapshot, window
-- history_read: the snapshot of a window at or before a time (default: the latest), taking the
-- snapshot of a boundary this call is the first to cross.
-- KEYS: 3
-- KEYS[1]        board config hash (holds the config version and which windows keep snapshots)
-- KEYS[2]        the window's slots index zset (its snapshot keys are its siblings: snapshot_lib)
-- KEYS[3]        the window's results zset
-- ARGV[1]        config version the caller built its keys from
-- ARGV[2]        now, unix milliseconds
-- ARGV[3]        expiry budget (unused: a history read expires nothing)
-- ARGV[4] .. ARGV[6]: the window's period and interval (s) and origin (window_lib)
-- ARGV[7]        time (unix s) the snapshot must be at or before; "" for the latest
-- Reply: { keeps (0|1): the window keeps snapshots, [boundary (unix s), rows ("\30<item>\31<score>"
--          best first): when one is found] }
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function history_read(keys, args)
  call_state.begin_call(keys, args)
  local err = window.version_error(KEYS[1], ARGV[1])
  if err then return redis.error_reply(err) end
  local now_sec = math.floor(tonumber(ARGV[2]) / 1000)
  local interval_sec = tonumber(ARGV[5])
  local conf = snapshot.cross_window(now_sec, interval_sec, tonumber(ARGV[6]))
  if not conf then return { 0 } end
  local at = nil
  if ARGV[7] ~= '' then at = tonumber(ARGV[7]) end
  local boundary, rows = snapshot.find_snapshot(KEYS[2], conf, interval_sec, now_sec, at, tonumber(ARGV[6]))
  if not boundary then return { 1 } end
  return { 1, boundary, rows }
end
