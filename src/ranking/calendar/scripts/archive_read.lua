-- archive_read: a calendar window's archives (its closed periods' final standings, snapshot_lib keeps
-- them under each period's start), newest first, taking the archive of a period end this call is the
-- first to cross and draining one chunk of the window, which writes its pending archive on (archive_lib).
-- KEYS: 3
-- KEYS[1]        board config hash (holds the config version and which windows keep archives)
-- KEYS[2]        the window's slots index zset (its archive keys are its siblings: snapshot_lib)
-- KEYS[3]        the window's results zset
-- ARGV[1]        config version the caller built its keys from
-- ARGV[2]        now, unix milliseconds
-- ARGV[3]        expiry budget: most expired-slot fields (and archive rows) this call drains
-- ARGV[4] .. ARGV[6]: the window's current period length (s, twice) and start (window_lib)
-- ARGV[7]        only periods starting at or before this time (unix s); "" for the newest
-- ARGV[8]        most periods answered
-- Reply: { keeps (0|1): the window keeps archives, draining (0|1): an archive of this shard is still
--          being taken (its period is not listed yet), { the start of every period this shard keeps
--          (unix s, oldest first) },
--          period start_1, rows_1 ("\30<item>\31<score>\31<position>" best first), ... newest first }, or
--          { 0 } when the window keeps none. A shard keeps the newest `keep` periods it scored in, so on a
--          sharded board one shard may still hold a period the board no longer keeps: the app keeps the
--          newest `keep` of all shards' periods (ArchivesStore).
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function archive_read(keys, args)
  begin_call(keys, args)
  local err = version_error(KEYS[1], ARGV[1])
  if err then return redis.error_reply(err) end
  local now_sec = math.floor(tonumber(ARGV[2]) / 1000)
  local conf = cross_window(now_sec, tonumber(ARGV[5]), tonumber(ARGV[6]))
  if not conf then return { 0 } end
  local _, draining = expire_window(KEYS[2], KEYS[3], now_sec, tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[3]), tonumber(ARGV[6]))
  local base = sibling_key(KEYS[2], 'slots', '')
  local latest = ARGV[7] == '' and '+inf' or ARGV[7]
  local starts = redis.call('ZRANGE', base .. 'snaps', latest, '-inf', 'BYSCORE', 'REV', 'LIMIT', 0, tonumber(ARGV[8]))
  local kept = redis.call('ZRANGE', base .. 'snaps', 0, -1)
  for i, start in ipairs(kept) do kept[i] = tonumber(start) end
  local reply = { 1, draining and 1 or 0, kept }
  for _, start in ipairs(starts) do
    local rows = redis.call('GET', base .. 'snap:' .. start)
    if rows then
      reply[#reply + 1] = tonumber(start)
      reply[#reply + 1] = rows
    end
  end
  return reply
end
