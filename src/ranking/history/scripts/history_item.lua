-- requires: call_state, keyspace, order, snapshot, window
-- history_item: an item's score and the rows above it in each kept snapshot of a window within a
-- time range, taking the snapshot of a boundary this call is the first to cross.
-- KEYS: 3
-- KEYS[1]        board config hash (holds the config version and which windows keep snapshots)
-- KEYS[2]        the window's slots index zset (its snapshot keys are its siblings: snapshot_lib)
-- KEYS[3]        the window's results zset
-- ARGV[1]        config version the caller built its keys from
-- ARGV[2]        now, unix milliseconds
-- ARGV[3]        expiry budget (unused: a history read expires nothing)
-- ARGV[4] .. ARGV[6]: the window's period and interval (s) and origin (window_lib)
-- ARGV[7]        item id
-- ARGV[8], ARGV[9]: from, to (unix s, inclusive): the boundaries to answer
-- ARGV[10]        most snapshots to answer: each costs a scan of its rows, so the caller pages a long
--                history (the read budget of one call, HISTORY_ROWS_PER_CALL)
-- Reply: { keeps (0|1): the window keeps snapshots, next: the boundary the next page starts at (0:
--          none left in range), then per snapshot oldest first: boundary (unix s), the item's score (0
--          when not listed), rows scoring above it (-1 when not listed) }
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function history_item(keys, args)
  call_state.begin_call(keys, args)
  local err = window.version_error(KEYS[1], ARGV[1])
  if err then return redis.error_reply(err) end
  local now_sec = math.floor(tonumber(ARGV[2]) / 1000)
  local interval_sec = tonumber(ARGV[5])
  local conf = snapshot.cross_window(now_sec, interval_sec, tonumber(ARGV[6]))
  if not conf then return { 0, 0 } end
  local base = keyspace.sibling_key(KEYS[2], 'slots', '')
  local oldest_kept = window.current_slot(now_sec, interval_sec, tonumber(ARGV[6])) - snapshot.snapshot_lifetime_sec(conf, interval_sec)
  local from = math.max(tonumber(ARGV[8]), oldest_kept + 1)
  local reply = { 1, 0 }
  if from > tonumber(ARGV[9]) then return reply end
  local most = tonumber(ARGV[10])
  local boundaries = redis.call('ZRANGE', base .. 'snaps', from, ARGV[9], 'BYSCORE', 'LIMIT', 0, most + 1)
  if #boundaries > most then reply[2] = tonumber(table.remove(boundaries)) end
  for _, boundary in ipairs(boundaries) do
    local rows = redis.call('GET', base .. 'snap:' .. boundary)
    if rows then
      local score = snapshot.snapshot_score(rows, ARGV[7])
      reply[#reply + 1] = tonumber(boundary)
      reply[#reply + 1] = score or 0
      reply[#reply + 1] = score and snapshot.snapshot_count_above(rows, score, order.ascending(KEYS[2])) or -1
    end
  end
  return reply
end
