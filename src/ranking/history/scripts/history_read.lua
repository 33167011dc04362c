-- requires: archive, reader, shown, snapshot_kept
-- history_read: the snapshot of a window at or before a time (default: the latest), taking the
-- snapshot of a boundary this call is the first to cross, and which of its items the window's listing
-- leaves out now (left_out_rows).
-- Keys: cfg (board config hash: holds the config version and which windows keep snapshots), slots
--       (the window's slots index zset; its snapshot keys are its siblings: snapshot_lib), top (the
--       window's results zset)
-- Args (reader.read_call, CALLS.history_read): the header with the one window (its budget unused: a
--   history read expires nothing), then at_sec: the time (unix s) the snapshot must be at or before
--   ("" for the latest)
-- Reply (reader.answer, CALLS.history_read): keeps (0|1: the window keeps snapshots), found (0|1),
--   boundary (unix s; 0: none found), rows ("\30<item>\31<score>\31<n>" best first, as stored; "": none
--   found), left_out (the items of the rows the listing leaves out now: left_out_rows), pending (the
--   oldest period start, unix s, whose archive this shard has not written out yet (archive_lib writes
--   them oldest first, in chunks, over later calls: every older period it scored in is archived); 0:
--   none pending)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG
-- The items of a snapshot's rows the board's exceptions leave out now (shown.history_asked,
-- moderation: the hidden items, or on a review board all but the allowed ones): the app leaves them
-- out once it has cut the rows to the board's `top` (a sharded board's shards each keep their own top
-- rows), as top leaves them out. Hiding an item takes its rows out of every kept snapshot at once, and
-- allowing it again answers them as stored (snapshots store every row). One step per row (at most a
-- snapshot's top) on a moderated board; none on another.
local function left_out_rows(top_key, rows)
  local exceptions, left_out = shown.history_asked(top_key), {}
  if not exceptions or rows == '' then return left_out end
  local listed = {}
  for _, item in ipairs(exceptions.items) do listed[item] = true end
  for item in string.gmatch(rows, archive.SNAP_ROW .. '([^' .. archive.SNAP_FIELD .. ']*)') do
    if (listed[item] == true) ~= exceptions.only then left_out[#left_out + 1] = item end
  end
  return left_out
end

local function history_read(keys, args)
  local slots_key, top_key = keys[2], keys[3]
  local refused, header, arg, conf, rule, now_sec = shown.begin_history(keys, args, CALLS.history_read)
  if refused then return refused end
  local boundary, rows
  if conf then
    boundary, rows = snapshot_kept.find_snapshot(slots_key, conf, rule.interval_sec, now_sec, tonumber(arg.at_sec), rule.origin_sec)
  end
  local pending
  for at in pairs(archive.archives_pending(slots_key) or {}) do pending = math.min(pending or math.huge, tonumber(at)) end
  return reader.answer(CALLS.history_read, {
    keeps = conf and 1 or 0,
    found = boundary and 1 or 0,
    boundary = boundary or 0,
    rows = rows or '',
    left_out = rows and left_out_rows(top_key, rows) or {},
    pending = pending or 0,
  })
end
