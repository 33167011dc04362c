-- requires: archive, reader, shown, snapshot_kept
-- history_read: the snapshot of a window at or before a time (default: the latest), taking the
-- snapshot of a boundary this call is the first to cross, and which of its items the window's listing
-- leaves out now (left_out_rows).
-- Keys: cfg (board config hash: holds the config version and which windows keep snapshots), slots
--       (the window's slots index zset; its snapshot keys are its siblings: snapshot_lib), top (the
--       window's results zset)
-- Args (reader.read_call, CALLS.history_read): the header with the one window (its budget unused: a
--   history read expires nothing), then
--   at_sec      the time (unix s) the snapshot must be at or before ("" for the latest)
--   from_byte   where the page starts in the snapshot's text (0: its first page; else a next_byte answered)
--   text_bytes  with from_byte > 0: the text's length its first page answered (another length, or another
--               boundary found at at_sec: the snapshot changed between pages, answered as not found)
--   seam        with from_byte > 0: the last row of the page before, as its reply gave it (the text no
--               longer holding it just before from_byte: rewritten between pages, answered as not found)
--   page_bytes  the most bytes of the text a call reads (more than any row holds)
-- Reply (reader.answer, CALLS.history_read): keeps (0|1: the window keeps snapshots), found (0|1),
--   boundary (unix s; 0: none found), rows (the page's rows, "\30<item>\31<score>\31<n>" best first, as
--   stored; "": none found), next_byte (where the next page starts; 0: this one is the last), bytes (the
--   text's length), seam (the page's last row, as stored: the next page's `seam`), left_out (the items of the page's rows the listing leaves out now: left_out_rows), pending (the
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

-- The page of the text at `key` (`total` bytes) starting at byte `from` (0-based, a row's start): its whole
-- rows within `page_bytes`, and where the next page starts (0: none left). By GETRANGE: GET would copy the
-- whole text into Lua, which hashes every byte of a string it makes (a snapshot of 1 000 rows is ~25 KB).
local function page_of(key, from, page_bytes, total)
  local chunk = redis.call('GETRANGE', key, from, from + page_bytes - 1)
  if from + #chunk >= total then return chunk, 0 end
  local last = string.match(chunk, '.*()' .. archive.SNAP_ROW)
  -- page_bytes exceeds any row: the chunk holds a row's start past its first.
  if not last or last == 1 then return redis.call('GETRANGE', key, from, -1), 0 end
  return string.sub(chunk, 1, last - 1), from + last - 1
end

-- The snapshot at or before `at` (find_boundary): its boundary, its text's key and length, or nil; with
-- `from` > 0, nil unless it is the one at `at` and still `bytes` long (a later page of the same text).
local function snapshot_read(slots_key, conf, rule, now_sec, arg)
  local at, from = tonumber(arg.at_sec), tonumber(arg.from_byte)
  local boundary, key = snapshot_kept.find_boundary(slots_key, conf, rule.interval_sec, now_sec, at, rule.origin_sec)
  if not boundary or redis.call('EXISTS', key) == 0 then return nil end
  local total = redis.call('STRLEN', key)
  if from > 0 and (boundary ~= at or total ~= tonumber(arg.text_bytes)) then return nil end
  if from > 0 and redis.call('GETRANGE', key, from - #arg.seam, from - 1) ~= arg.seam then return nil end
  return boundary, key, total
end

local function history_read(keys, args)
  local slots_key, top_key = keys[2], keys[3]
  local refused, header, arg, conf, rule, now_sec = shown.begin_history(keys, args, CALLS.history_read)
  if refused then return refused end
  local boundary, key, total, rows, next_byte
  if conf then boundary, key, total = snapshot_read(slots_key, conf, rule, now_sec, arg) end
  if boundary then rows, next_byte = page_of(key, tonumber(arg.from_byte), tonumber(arg.page_bytes), total) end
  local pending
  for at in pairs(archive.archives_pending(slots_key) or {}) do pending = math.min(pending or math.huge, tonumber(at)) end
  return reader.answer(CALLS.history_read, {
    keeps = conf and 1 or 0,
    found = boundary and 1 or 0,
    boundary = boundary or 0,
    rows = rows or '',
    next_byte = next_byte or 0,
    bytes = total or 0,
    seam = next_byte and next_byte > 0 and archive.seam_of(rows) or '',
    left_out = rows and left_out_rows(top_key, rows) or {},
    pending = pending or 0,
  })
end
