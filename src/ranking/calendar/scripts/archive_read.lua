-- requires: archive, archive_shown, drains, keyspace, order, reader, shown, snaprows, tiebreak, window
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
--   and archive rows this call drains, fewer fields on a board keeping pairs: drain_budget), then
--   latest_sec    only periods starting at or before this time (unix s); "" for the newest
--   most_periods  most periods answered
--   skip_rows     rows of each period to skip (best first)
--   most_rows     most rows of each period answered after them
--   shown_page    1: answer, on a moderated board, each period's page of the rows shown now (skip and
--                 most count those rows; a one-shard board's read): archive_shown_page
--   shard_rows    most rows of each period a shard of a moderated sharded board answers (its rows from
--                 the top through its (skip + most + 1)-th shown one, hidden ones too): more is then 1
--   index_rows    most rows this call's passes over periods' texts read for their exception positions
--                 (a plain find counts 1 / FIND_SHARE of the text's rows)
--   seam          "" but on a later call of one read of a period in several (skip_rows > 0, one shard):
--                 the last row of the page before, as its reply gave it; while the row skip_rows (shown
--                 ones with shown_page) is no longer it (the text or the exceptions changed between the
--                 calls: seam_holds), the period is not answered and the app begins its read again
-- Reply (reader.answer, CALLS.archive_read): keeps (0|1: the window keeps archives; 0: the rest empty),
--   draining (0|1: an archive of this shard is still being taken: its period is not listed yet), indexing
--   (0|1: shown_page asked and a period's pass for its exception positions stopped before its page: that
--   period is not answered, the next call goes on), kept
--   (the start of every period this shard keeps, unix s, oldest first), periods (per period, newest
--   first, six entries: its start, its rows ("\30<item>\31<score>\31<position>" best first), the rows
--   skipped before them, the rows ranked strictly ahead of the first (its competition rank - 1),
--   whether rows follow (0|1), its seam (its last row as stored when rows follow, else "": the next
--   call's `seam`)). A shard keeps the newest `keep` periods it scored in, so on a sharded
--   board one shard may still hold a period the board no longer keeps: the app keeps the newest `keep`
--   of all shards' periods (ArchivesStore); moderated (0|1: the board's exceptions leave items out
--   now and the app is to leave them out: 0 when shown_page asked), left_out (their items among the
--   rows answered). On a moderated board each period's rows are answered, unless shown_page, from its
--   top through the (skip + most + 1)-th row shown now, at most shard_rows (0 skipped, 0 ahead, more 1
--   when cut at shard_rows): the app (a sharded board's) cuts the board's rows to its top, leaves those
--   items out, and pages what is left.
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG

-- The byte where row `n` (from 1) of an archive's text ends, found by its stored position ("\31<n>"
-- then the next row's "\30") in one plain string.find (C) from byte `from`; nil when no row follows it
-- (the last row, or fewer rows). The find stops at every field mark it passes: `from` is near the row
-- (a run's end from its start, a run's start from the run before); a page's ends, row_end_searched.
local function archive_row_end(rows, n, from)
  local mark = string.find(rows, archive.SNAP_FIELD .. n .. archive.SNAP_ROW, from, true)
  return mark and mark + #tostring(n)
end

-- archive_row_end over a whole positioned text by a binary search over its bytes, each probe the stored
-- position of the row it lands in (snaprows.row_at): about 15 probes for 10 000 rows, where a find
-- passed every row ahead of it (a page's start, or its end, of a 10 000-row period: ~3 M instructions).
local function row_end_searched(rows, n)
  local lo, hi = 1, #rows + 1
  while lo < hi do
    local row = string.find(rows, archive.SNAP_ROW, math.floor((lo + hi) / 2), true)
    if not row or row >= hi then row = lo end
    local _, position, after = snaprows.row_at(rows, row)
    if position == n then return after <= #rows and after - 1 or nil end
    if position < n then lo = after else hi = row end
  end
  return nil
end

-- Whether the stored row at `position` is still `seam` (archive.seam_of of the page before): else a
-- retraction, a cut or a moderation change between two calls of one read moved the rows up to the
-- page, and joining its pages would lose or repeat a row at the seam. A position past the rows shown
-- now (nil: a review board's allowed rows fewer than it) holds no seam either.
local function seam_holds(rows, position, seam)
  local ends = position and position > 0 and row_end_searched(rows, position)
  return ends and string.sub(rows, ends - #seam + 1, ends) == seam or false
end

-- The stored position of the first row that ties with the row opening `page` (its score, on a
-- tiebreak board its score and mark): that row's competition rank among every stored row, from the
-- rows ranked strictly ahead of it (snaprows.count_above: a binary search, not a find from the top).
local function first_tied(rows, page, ascending)
  local score, _, _, mark = snaprows.row_at(page, 1)
  return snaprows.count_above(rows, score, ascending, mark) + 1
end

-- Rows skip+1 .. skip+most of an archive's text, with the rows skipped, the rows ranked strictly ahead
-- of the first and whether rows follow; false for the page when row `skip` is no longer `seam` (when
-- not ""). Text stored before rows held positions is answered whole.
local function archive_page(rows, skip, most, ascending, seam)
  if rows == '' then return seam == '' and rows, skip, skip, false end
  local _, positioned = snaprows.row_at(rows, 1)
  if not positioned then return rows, 0, 0, false end
  if seam ~= '' and not seam_holds(rows, skip, seam) then return false, 0, 0, false end
  local from = 1
  if skip > 0 then
    local skipped_end = row_end_searched(rows, skip)
    if not skipped_end then return '', skip, skip, false end
    from = skipped_end + 1
  end
  local to = row_end_searched(rows, skip + most)
  -- The whole text answered as it is: Redis' Lua hashes every byte of each string it makes (~8
  -- instructions a byte: 1.6 M for a copy of a 10 000-row text).
  local page = (from == 1 and not to) and rows or string.sub(rows, from, to or #rows)
  return page, skip, first_tied(rows, page, ascending) - 1, to ~= nil
end

-- A moderated archive page without a scan from the top (issue #49): the positions of the exceptions'
-- rows in a period's text (its "exception positions", sorted) map a shown row to its stored position by
-- a binary search, and the page is cut out by its rows' stored positions (archive_row_end), the
-- exceptions' rows within it left out. They are kept per period in <base>archshown (archive_lib's
-- shown_index_key): period start -> "<stamp> <text bytes> <rows scanned> <next byte> <position>,...",
-- where the stamp names the exceptions they were found for (a review board's allowed items, else the
-- hidden ones). A period's text is never rewritten but shorter (a retraction or a cut takes rows out)
-- and a new archive of the same start drops its entry, so an entry of the same stamp and length is
-- exact for the rows it scanned, and complete once its next byte is past the text; any other is found
-- again: by one plain find per exception when few and a call's step holds them all (a find costs about
-- FIND_SHARE of a pass), else by a pass over the rows from the top taken in steps of at most the call's
-- index_rows, each kept where it stopped, so whichever read comes next (this request's next call, or
-- another's) goes on from there. A page is answered once the rows scanned hold its last shown row and
-- the one after it; a deep page waits for the pass (the reply's `indexing`: the app calls again).
-- A moderation change of one item or group updates the kept entries of the newest periods itself
-- (snapshot_shown_lib's index_change_end), so they stay of the stamp a read asks.
local FIND_SHARE = archive_shown.FIND_SHARE

-- The exceptions `ex` (shown_lib's) as one stamp (archive_lib's).
local function exceptions_stamp(ex)
  return archive_shown.exceptions_stamp(ex.only, ex.list)
end

-- The last row's stored position: how many rows the text holds.
local function rows_held(rows)
  return tonumber(string.match(string.sub(rows, -12), archive.SNAP_FIELD .. '(%d+)$'))
end

-- The exceptions' positions found by one plain find each, sorted.
local function positions_found(rows, ex)
  local found = {}
  for _, item in ipairs(ex.list) do
    local position = archive_shown.position_of(rows, item)
    if position then found[#found + 1] = position end
  end
  table.sort(found)
  return found
end

-- The rows shown now among those a scan read (review board: the allowed ones it found).
local function shown_scanned(scan, only)
  return only and #scan.found or scan.scanned - #scan.found
end

-- One step of the pass: reads on from `scan.next_byte`, at most `budget` rows, stopping once the rows
-- read hold `want` shown rows; each exception's position is added to `scan.found`. Returns the rows
-- read. (One gmatch over the rest of the text: a copy of it costs less than a match per row.)
local function scan_step(rows, ex, scan, want, budget)
  local offset, found, items, only = scan.next_byte - 1, scan.found, ex.items, ex.only
  local rest = offset > 0 and string.sub(rows, scan.next_byte) or rows
  local read, shown_count = 0, shown_scanned(scan, only)
  for at, item in string.gmatch(rest, '()' .. archive.SNAP_ROW .. '([^' .. archive.SNAP_FIELD .. ']*)') do
    if read >= budget or shown_count >= want then
      scan.next_byte = offset + at
      return read
    end
    scan.scanned, read = scan.scanned + 1, read + 1
    if items[item] then found[#found + 1] = scan.scanned end
    if (items[item] == true) == only then shown_count = shown_count + 1 end
  end
  scan.next_byte = #rows + 1
  return read
end

-- The kept scan of the period at `start` (`ex.entries`: the entries read for the call's periods at
-- once) when it was made for these exceptions and this text; nil otherwise.
local function kept_scan(ex, start, bytes)
  local scan = archive_shown.entry_read(ex.entries[start])
  if not scan or scan.stamp ~= ex.stamp or scan.bytes ~= bytes then return nil end
  return scan
end

-- The exception positions of the period at `start` for a page ending at its `want`-th shown row,
-- within `budget` rows of work: the positions, whether they are all of them, whether they reach past
-- the page (else the pass goes on in the next call), and the budget spent. Every step is kept.
local function exception_positions(base, start, rows, ex, want, budget)
  local bytes, held = #rows, rows_held(rows)
  local scan, spent, changed = kept_scan(ex, start, bytes), 0, false
  if not scan then
    local finds_cost = held * #ex.list / FIND_SHARE
    changed = #ex.list < FIND_SHARE and finds_cost <= budget and want + #ex.list >= finds_cost / 2
    if changed then
      scan, spent = { found = positions_found(rows, ex), bytes = bytes, scanned = held, next_byte = bytes + 1 }, finds_cost
    else
      scan = { found = {}, bytes = bytes, scanned = 0, next_byte = 1 }
    end
  end
  if scan.next_byte <= bytes then
    -- One more than the page: the row after it tells whether shown rows follow.
    local read = scan_step(rows, ex, scan, want + 1, budget)
    spent, changed = spent + read, changed or read > 0
  end
  if changed then archive_shown.entry_write(base, start, ex.stamp, scan) end
  local complete = scan.next_byte > bytes
  return scan.found, complete, complete or shown_scanned(scan, ex.only) > want, spent
end

local count_below = archive_shown.count_below

-- The stored position of the `k`-th shown row: on a review board the k-th allowed row's; else the
-- k-th row of no hidden item, after the most hidden rows j with fewer than k shown rows ahead of them
-- (positions[j] - j, which never falls as j grows: binary search).
local function shown_position(positions, only, k)
  if only then return positions[k] end
  local low, high = 0, #positions
  while low < high do
    local middle = math.floor((low + high + 1) / 2)
    if positions[middle] - middle < k then low = middle else high = middle - 1 end
  end
  return k + low
end

-- The text of the stored rows `from` .. `to` (positions), searched from byte `at`; and the byte after it.
local function rows_between(rows, from, to, at)
  local first = 1
  -- The marker of row from - 1 may end just before `at` (the run before ended with that row); the
  -- first run's is searched from the top.
  if from > 1 and at == 1 then first = row_end_searched(rows, from - 1) + 1 end
  if from > 1 and at > 1 then first = archive_row_end(rows, from - 1, math.max(1, at - 8)) + 1 end
  local last = archive_row_end(rows, to, first) or #rows
  return string.sub(rows, first, last), last + 1
end

-- Shown rows skip+1 .. skip+most of a positioned text under the exceptions `ex`, their `positions`
-- (complete: every one; else those through the (skip + most + 1)-th shown row): the page (its hidden
-- rows left out, each run between them cut by its stored positions), the shown rows skipped, those
-- ranked strictly ahead of the first, whether shown rows follow.
local function shown_page(rows, ex, positions, complete, skip, most)
  local total = ex.only and #positions or rows_held(rows) - #positions
  if complete and skip >= total then return '', skip, skip, false end
  local last_shown = complete and math.min(skip + most, total) or skip + most
  local from, to = shown_position(positions, ex.only, skip + 1), shown_position(positions, ex.only, last_shown)
  local parts, run_from, at = {}, from, 1
  local function cut(run_to)
    if run_to >= run_from then parts[#parts + 1], at = rows_between(rows, run_from, run_to, at) end
  end
  for i = count_below(positions, from) + 1, #positions do
    local position = positions[i]
    if position > to then break end
    if ex.only then
      run_from = position
      cut(position)
    else
      cut(position - 1)
      run_from = position + 1
    end
  end
  if not ex.only then cut(to) end
  local page = table.concat(parts)
  local tied = first_tied(rows, page, ex.ascending)
  local ahead = count_below(positions, tied)
  if not ex.only then ahead = tied - 1 - ahead end
  return page, skip, ahead, not complete or skip + most < total
end

-- A text stored before rows held positions, its rows left out now taken out: answered whole.
local function shown_rows(rows, ex)
  local kept = {}
  for row, item in string.gmatch(rows, '(' .. archive.SNAP_ROW .. '([^' .. archive.SNAP_FIELD .. ']*)[^' .. archive.SNAP_ROW .. ']*)') do
    if shown.visible(ex, item) then kept[#kept + 1] = row end
  end
  return table.concat(kept), 0, 0, false
end

-- A one-shard board's page of a period under its exceptions: the shown rows asked, ranked among the
-- rows shown now (the exception positions of the period: exception_positions).
-- Also returns the index budget it spent; nil for the page while the period's pass has not reached it,
-- false when the `skip`-th shown row is no longer `seam` (when not "").
local function archive_shown_page(base, start, rows, ex, skip, most, budget, seam)
  if rows == '' then return seam == '' and rows, skip, skip, false, 0 end
  local _, positioned = snaprows.row_at(rows, 1)
  if not positioned then
    local page, skipped, ahead, more = shown_rows(rows, ex)
    return page, skipped, ahead, more, 0
  end
  local positions, complete, covered, spent = exception_positions(base, start, rows, ex, skip + most, budget)
  if not covered then return nil, 0, 0, false, spent end
  if seam ~= '' and not seam_holds(rows, shown_position(positions, ex.only, skip), seam) then
    return false, 0, 0, false, spent
  end
  local page, skipped, ahead, more = shown_page(rows, ex, positions, complete, skip, most)
  return page, skipped, ahead, more, spent
end

-- A sharded board's rows of a period under its exceptions (the app merges every shard's and leaves the
-- exceptions out): from the top through the `count`-th shown row, the items left out up to there added
-- to `left_out`, at most `most_read` rows; and whether it stopped at that bound first (rows the app then
-- knows nothing of follow the last one answered: it answers only what ranks ahead of them).
local function through_shown_within(ex, rows, count, most_read, left_out)
  local shown_count, read = 0, 0
  for at, item in string.gmatch(rows, '()' .. archive.SNAP_ROW .. '([^' .. archive.SNAP_FIELD .. ']*)') do
    if shown_count >= count then return string.sub(rows, 1, at - 1), false end
    if read >= most_read then return string.sub(rows, 1, at - 1), true end
    read = read + 1
    if shown.visible(ex, item) then shown_count = shown_count + 1 else left_out[item] = true end
  end
  return rows, false
end

-- Each period's page (six fields: start, rows, skipped, ahead, more, seam), the left-out items
-- (`left_out`, when the app leaves them out) added; and whether a period's pass has not reached its
-- page yet (its page then not answered: the app calls again), the pass taking at most `index_rows`
-- rows in all. A period whose `seam` no longer holds is not answered.
local function period_pages(base, starts, ex, arg, left_out, ascending)
  local skip, most, budget = tonumber(arg.skip_rows), tonumber(arg.most_rows), tonumber(arg.index_rows)
  local seam = arg.seam
  local periods, indexing = {}, false
  for _, start in ipairs(starts) do
    local rows = redis.call('GET', base .. 'snap:' .. start)
    if rows then
      local page, skipped, ahead, more, spent = '', 0, 0, false, 0
      if ex and ex.stamp then
        page, skipped, ahead, more, spent = archive_shown_page(base, start, rows, ex, skip, most, budget, seam)
        budget = math.max(budget - spent, 0)
      elseif ex then
        page, more = through_shown_within(ex, rows, skip + most + 1, tonumber(arg.shard_rows), left_out)
      else
        page, skipped, ahead, more = archive_page(rows, skip, most, ascending, seam)
      end
      if page then
        local fields = { tonumber(start), page, skipped, ahead, more and 1 or 0, more and archive.seam_of(page) or '' }
        for _, field in ipairs(fields) do periods[#periods + 1] = field end
      end
      indexing = indexing or page == nil
    end
  end
  return periods, indexing
end

-- The fields or rows this call drains of the calendar window of `slots_key`: on a board keeping pairs, while a closed
-- period's slot is left (one starting before the current period, `origin_sec`), its fields weighed by what the
-- board's options run for each (drains.read_fields: each field's member of the pair order taken for the archive, the
-- item out of the pair order, its marks; ~130 k instructions a field with `ties: first`, 100 a call were 13 M); then,
-- and on other boards, the header's budget (archive_lib writes a row a unit).
local function drain_budget(slots_key, top_key, header, origin_sec)
  if not tiebreak.keeps_pairs(top_key) then return header.budget end
  local oldest = redis.call('ZRANGE', slots_key, 0, 0)[1]
  if oldest and tonumber(oldest) < origin_sec then return drains.read_fields(header.budget, top_key) end
  return header.budget
end

local function archive_read(keys, args)
  local slots_key, top_key = keys[2], keys[3]
  local refused, header, arg, conf, rule, now_sec = shown.begin_history(keys, args, CALLS.archive_read)
  if refused then return refused end
  if not conf then
    return reader.answer(CALLS.archive_read, { keeps = 0, draining = 0, indexing = 0, kept = {}, periods = {}, moderated = 0, left_out = {} })
  end
  local budget = drain_budget(slots_key, top_key, header, rule.origin_sec)
  local _, draining = window.expire_window(slots_key, top_key, now_sec, rule.period_sec, rule.interval_sec, budget, rule.origin_sec)
  local base = keyspace.sibling_key(slots_key, 'slots', '')
  local latest = arg.latest_sec == '' and '+inf' or arg.latest_sec
  local starts = redis.call('ZRANGE', base .. 'snaps', latest, '-inf', 'BYSCORE', 'REV', 'LIMIT', 0, tonumber(arg.most_periods))
  local kept = redis.call('ZRANGE', base .. 'snaps', 0, -1)
  for i, start in ipairs(kept) do kept[i] = tonumber(start) end
  local ex, left_out = shown.exceptions_of(top_key), {}
  local shown_asked, ascending = arg.shown_page == '1', order.ascending(top_key)
  if ex and shown_asked then
    ex.stamp, ex.entries, ex.ascending = exceptions_stamp(ex), {}, ascending
    archive_shown.index_pruned(base, kept)
    local entries = #starts > 0 and redis.call('HMGET', archive_shown.index_key(base), unpack(starts)) or {}
    for i, start in ipairs(starts) do ex.entries[start] = entries[i] end
  end
  local periods, indexing = period_pages(base, starts, ex, arg, left_out, ascending)
  local items = {}
  for item in pairs(left_out) do items[#items + 1] = item end
  return reader.answer(CALLS.archive_read, {
    keeps = 1,
    draining = draining and 1 or 0,
    indexing = indexing and 1 or 0,
    kept = kept,
    periods = periods,
    moderated = (ex and not shown_asked) and 1 or 0,
    left_out = items,
  })
end
