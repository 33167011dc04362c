-- requires: call_state, reader, snapshot, window
-- history_read: the snapshot of a window at or before a time (default: the latest), taking the
-- snapshot of a boundary this call is the first to cross.
-- Keys: cfg (board config hash: holds the config version and which windows keep snapshots), slots
--       (the window's slots index zset; its snapshot keys are its siblings: snapshot_lib), top (the
--       window's results zset)
-- Args (reader.read_call, CALLS.history_read): the header with the one window (its budget unused: a
--   history read expires nothing), then at_sec: the time (unix s) the snapshot must be at or before
--   ("" for the latest)
-- Reply (reader.answer, CALLS.history_read): keeps (0|1: the window keeps snapshots), found (0|1),
--   boundary (unix s; 0: none found), rows ("\30<item>\31<score>" best first; "": none found)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
local function history_read(keys, args)
  call_state.begin_call(keys, args)
  local cfg_key, slots_key, top_key = keys[1], keys[2], keys[3]
  local header, arg = reader.read_call(args, CALLS.history_read)
  local err = window.version_error(cfg_key, header.version)
  if err then return redis.error_reply(err) end
  local rule, now_sec = header.windows[1], header.now_sec
  local conf = snapshot.cross_window_of(cfg_key, slots_key, top_key, now_sec, rule.interval_sec, rule.origin_sec)
  local boundary, rows
  if conf then
    boundary, rows = snapshot.find_snapshot(slots_key, conf, rule.interval_sec, now_sec, tonumber(arg.at_sec), rule.origin_sec)
  end
  return reader.answer(CALLS.history_read, {
    keeps = conf and 1 or 0,
    found = boundary and 1 or 0,
    boundary = boundary or 0,
    rows = rows or '',
  })
end
