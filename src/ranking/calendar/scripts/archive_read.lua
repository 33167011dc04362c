-- requires: archive, call_state, keyspace, reader, shown, snapshot, window
-- archive_read: a page of rows of a calendar window's archives (its closed periods' final standings,
-- snapshot_lib keeps them under each period's start), newest first, taking the archive of a period end
-- this call is the first to cross and draining one chunk of the window, which writes its pending
-- archive on (archive_lib). Only the rows asked for are answered: they are cut out of each period's
-- text by the positions its rows store (archive_page), never the whole text.
-- Keys: cfg (board config hash: holds the config version and which windows keep archives), slots (the
--       window's slots index zset; its archive keys are its siblings: snapshot_lib), top (the window's
--       results zset)
-- Args (reader.read_call, CALLS.archive_read): the header with the one window (its rule: the current
--   period's length as period and interval, its start as origin; its budget: most expired-slot fields
--   and archive rows this call drains), then
--   latest_sec    only periods starting at or before this time (unix s); "" for the newest
--   most_periods  most periods answered
--   skip_rows     rows of each period to skip (best first)
--   most_rows     most rows of each period answered after them
-- Reply (reader.answer, CALLS.archive_read): keeps (0|1: the window keeps archives; 0: the rest empty),
--   draining (0|1: an archive of this shard is still being taken: its period is not listed yet), kept
--   (the start of every period this shard keeps, unix s, oldest first), periods (per period, newest
--   first, five entries: its start, its rows ("\30<item>\31<score>\31<position>" best first), the rows
--   skipped before them, the rows ranked strictly ahead of the first (its competition rank - 1),
--   whether rows follow (0|1)). A shard keeps the newest `keep` periods it scored in, so on a sharded
--   board one shard may still hold a period the board no longer keeps: the app keeps the newest `keep`
--   of all shards' periods (ArchivesStore); moderated (0|1: the board's exceptions leave items out
--   now, snapshot_shown_lib), left_out (their items among the rows answered). On a moderated board
--   each period's rows are answered from its top through the (skip + most + 1)-th row shown now (0
--   skipped, 0 ahead, 0 more): the app cuts the board's rows to its top, leaves those items out, and
--   pages what is left (one step per row answered).
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG

-- The byte where row `n` (from 1) of an archive's text ends, found by its stored position ("\31<n>"
-- then the next row's "\30") in one plain string.find (C); nil when no row follows it (the last row,
-- or fewer rows).
local function archive_row_end(rows, n, from)
  local mark = string.find(rows, archive.SNAP_FIELD .. n .. archive.SNAP_ROW, from, true)
  return mark and mark + #tostring(n)
end

-- Rows skip+1 .. skip+most of an archive's text, with the rows skipped, the rows ranked strictly ahead
-- of the first (the position before the first row holding its score, on a tiebreak board its pair:
-- "\31<score>\31" or "\31<score>\31<mark>\31" is found only there) and whether rows follow. Text stored before rows held positions is answered whole.
local function archive_page(rows, skip, most)
  if rows == '' then return rows, skip, skip, false end
  local _, positioned = snapshot.snapshot_row_at(rows, 1)
  if not positioned then return rows, 0, 0, false end
  local from = 1
  if skip > 0 then
    local skipped_end = archive_row_end(rows, skip, 1)
    if not skipped_end then return '', skip, skip, false end
    from = skipped_end + 1
  end
  local to = archive_row_end(rows, skip + most, from)
  local page = string.sub(rows, from, to or #rows)
  local field = string.find(page, archive.SNAP_FIELD, 2, true)
  local row_end = (string.find(page, archive.SNAP_ROW, 2, true) or (#page + 1)) - 1
  -- Its score, on a tiebreak board its score and mark: the fields before its position.
  local score = string.match(string.sub(page, field + 1, row_end), '^(.*)' .. archive.SNAP_FIELD)
  local first_tied = string.find(rows, archive.SNAP_FIELD .. score .. archive.SNAP_FIELD, 1, true) + #score + 2
  local tied_end = (string.find(rows, archive.SNAP_ROW, first_tied, true) or (#rows + 1)) - 1
  return page, skip, tonumber(string.sub(rows, first_tied, tied_end)) - 1, to ~= nil
end

local function archive_read(keys, args)
  call_state.begin_call(keys, args)
  local cfg_key, slots_key, top_key = keys[1], keys[2], keys[3]
  local header, arg = reader.read_call(args, CALLS.archive_read)
  local err = window.version_error(cfg_key, header.version)
  if err then return redis.error_reply(err) end
  local rule, now_sec = header.windows[1], header.now_sec
  local conf = snapshot.cross_window_of(cfg_key, slots_key, top_key, now_sec, rule.interval_sec, rule.origin_sec)
  if not conf then
    return reader.answer(CALLS.archive_read, { keeps = 0, draining = 0, kept = {}, periods = {}, moderated = 0, left_out = {} })
  end
  local _, draining = window.expire_window(slots_key, top_key, now_sec, rule.period_sec, rule.interval_sec, header.budget, rule.origin_sec)
  local base = keyspace.sibling_key(slots_key, 'slots', '')
  local latest = arg.latest_sec == '' and '+inf' or arg.latest_sec
  local starts = redis.call('ZRANGE', base .. 'snaps', latest, '-inf', 'BYSCORE', 'REV', 'LIMIT', 0, tonumber(arg.most_periods))
  local kept = redis.call('ZRANGE', base .. 'snaps', 0, -1)
  for i, start in ipairs(kept) do kept[i] = tonumber(start) end
  local periods, ex, left_out = {}, shown.exceptions_of(top_key), {}
  local skip, most = tonumber(arg.skip_rows), tonumber(arg.most_rows)
  for _, start in ipairs(starts) do
    local rows = redis.call('GET', base .. 'snap:' .. start)
    if rows then
      local page, skipped, ahead, more = '', 0, 0, false
      if ex then
        page = shown.through_shown(ex, rows, skip + most + 1, left_out)
      else
        page, skipped, ahead, more = archive_page(rows, skip, most)
      end
      for _, field in ipairs({ tonumber(start), page, skipped, ahead, more and 1 or 0 }) do periods[#periods + 1] = field end
    end
  end
  local items = {}
  for item in pairs(left_out) do items[#items + 1] = item end
  return reader.answer(CALLS.archive_read, {
    keeps = 1,
    draining = draining and 1 or 0,
    kept = kept,
    periods = periods,
    moderated = ex and 1 or 0,
    left_out = items,
  })
end
