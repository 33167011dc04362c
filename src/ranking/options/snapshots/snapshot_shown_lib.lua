-- module: shown
-- requires: archive, archive_shown, board_write, hooks, keyspace, order, snapshot, snapshot_kept, stored_windows
-- snapshot_shown_lib: which rows of a kept listing (a snapshot's or an archive's text, the previous
-- listing "<base>prev") the window's reads show now. Kept listings store every row whatever moderation
-- was; a read leaves out the items the board's exceptions leave out now (order_lib's exceptions_asked,
-- moderation: the hidden items, or on a review board all but the allowed ones) and ranks the rest among
-- themselves, so hiding an item takes it out of every kept listing at once and allowing it again
-- answers them as stored. A board without exceptions asks nothing: every answer here is then the
-- listing's own.
-- KEYS: 0

-- "\30<item>\31<score>[\31<position>]": a stored row's item and score.
local ROW = archive.SNAP_ROW .. '([^' .. archive.SNAP_FIELD .. ']*)' .. archive.SNAP_FIELD
  .. '([^' .. archive.SNAP_FIELD .. archive.SNAP_ROW .. ']*)'

-- "\30<item>": where a stored row starts, and its item.
local ROW_START = '()' .. archive.SNAP_ROW .. '([^' .. archive.SNAP_FIELD .. ']*)'

-- The exceptions `asked` ({ only, items } or nil) as nil (every row shown), or { only (the items are
-- the only ones shown; else the ones left out), items (id -> true), list (their ids) }.
local function indexed(asked)
  if not asked then return nil end
  local items = {}
  for _, item in ipairs(asked.items) do items[item] = true end
  return { only = asked.only, items = items, list = asked.items }
end

-- The exceptions of the live listing of the window of `top_key` now (indexed).
local function listing_exceptions_of(top_key)
  return indexed(order.exceptions_asked(top_key))
end

-- The exceptions a read of the kept listings of the window of `top_key` applies now ({ only, items }
-- or nil; exceptions_of: indexed): the live listing's and those of items only kept listings hold (hook
-- history_exceptions: archived items of moderated groups).
local function history_asked(top_key)
  local asked = order.exceptions_asked(top_key)
  for _, extend in ipairs(hooks.history_exceptions) do asked = extend(top_key, asked) end
  return asked
end

local function exceptions_of(top_key)
  return indexed(history_asked(top_key))
end

-- Whether a read shows `item` under the exceptions `ex` (nil: every item).
local function visible(ex, item)
  return not ex or (ex.items[item] == true) == ex.only
end

-- Whether a row scoring `held` ranks ahead of one scoring `score` (ascending: lower scores first).
local function better(held, score, ascending)
  if ascending then return held < score end
  return held > score
end

-- A plain find of one id in a stored text of `top` rows costs about this many rows matched one by one
-- (7.7 us against 0.38 us a row at 1 000 rows): few exceptions are found by id, many by one pass over
-- the rows ahead.
local FIND_ROWS = 20

-- Whether the row whose item field ends just before byte `from` of a stored text is among the first
-- `above` rows: by its position, or (a row stored without one) by its score.
local function row_ahead(rows, from, score, ascending, above)
  local rest = string.match(rows, '^[^' .. archive.SNAP_ROW .. ']*', from)
  local position = string.match(rest, archive.SNAP_FIELD .. '(%d+)$')
  if position then return tonumber(position) <= above end
  return better(tonumber(string.match(rest, '^[^' .. archive.SNAP_FIELD .. ']*')), score, ascending)
end

-- How many of the exceptions' items hold one of the `above` rows of a stored text ahead of `score`.
local function found_ahead(ex, rows, score, ascending, above)
  local count = 0
  for _, item in ipairs(ex.list) do
    local row = archive.SNAP_ROW .. item .. archive.SNAP_FIELD
    local at = string.find(rows, row, 1, true)
    if at and row_ahead(rows, at + #row, score, ascending, above) then count = count + 1 end
  end
  return count
end

-- How many of the `above` rows of a stored text `rows` (best first) ahead of a row scoring `score`
-- (its first rows: on a tiebreak board those ahead of its pair) are left out: the exceptions found by
-- id when few, else one step per row ahead (at most a snapshot's top); nothing without exceptions.
local function left_out_ahead(ex, rows, score, ascending, above)
  if not ex or above == 0 then return 0 end
  if #ex.list * FIND_ROWS < above then
    local found = found_ahead(ex, rows, score, ascending, above)
    if ex.only then return above - found end
    return found
  end
  local count, seen = 0, 0
  for item in string.gmatch(rows, ROW) do
    seen = seen + 1
    if seen > above then break end
    if not visible(ex, item) then count = count + 1 end
  end
  return count
end

-- A stored text (best first) cut after its `count`-th shown row (whole when it shows fewer), and the
-- items it leaves out up to there (added to the set `left_out`): one step per row kept.
local function through_shown(ex, rows, count, left_out)
  local shown_count = 0
  for at, item in string.gmatch(rows, ROW_START) do
    if shown_count >= count then return string.sub(rows, 1, at - 1) end
    if visible(ex, item) then shown_count = shown_count + 1 else left_out[item] = true end
  end
  return rows
end

-- The scores the exceptions' items hold in the listing `key` (one ZMSCORE), in ascending order.
local function held_scores(key, ex)
  local scores = {}
  if #ex.list == 0 then return scores end
  local held = redis.call('ZMSCORE', key, unpack(ex.list))
  for i = 1, #ex.list do
    if held[i] then scores[#scores + 1] = tonumber(held[i]) end
  end
  table.sort(scores)
  return scores
end

-- How many of the ascending `scores` rank ahead of `score` (binary search).
local function ahead_in(scores, score, ascending)
  local low, high = 0, #scores
  while low < high do
    local middle = math.floor((low + high) / 2)
    if scores[middle + 1] < score or (not ascending and scores[middle + 1] == score) then
      low = middle + 1
    else
      high = middle
    end
  end
  if ascending then return low end
  return #scores - low
end

-- An item's rank among the rows a read shows now (0: left out, or absent), from its competition rank
-- among every row of the listing (`rank`, 0: absent) and its score there; `scores`: held_scores of the
-- exceptions in that listing.
local function shown_rank(ex, scores, item, score, rank, ascending)
  if rank == 0 or not ex then return rank end
  if not visible(ex, item) then return 0 end
  local ahead = ahead_in(scores, score, ascending)
  if ex.only then return ahead + 1 end
  return rank - ahead
end

-- The start of a named read of a window's kept listings (keys cfg, slots, top): board_write's
-- begin_board_call, then the window's snapshot boundary crossed (snapshot.cross_window_of); a call that
-- stored a listing of more than a few rows leaves its read to the next call (snapshot.leave_apart: a
-- listing of 1 000 rows to store is a call's work, reading it or counting in it another's). Returns the
-- error reply to answer at once (nil: none), the header, the arguments, the window's snapshot
-- setting (nil: it keeps none), the window's rule and the call's time in seconds.
local function begin_history(keys, args, contract)
  local refused, header, arg = board_write.begin_board_call(keys, args, contract)
  if refused then return refused end
  local rule, now_sec = header.windows[1], header.now_sec
  local conf = snapshot.cross_window_of(keys[1], keys[2], keys[3], now_sec, rule.interval_sec, rule.origin_sec)
  snapshot.leave_apart()
  return nil, header, arg, conf, rule, now_sec
end

-- The rows of this shard that another shard's point at boundary `at` (unix s) ranks among (history
-- counts): a rolling window's snapshot at or before it; a calendar window's archive of exactly that
-- period (an older period's rows are not the board's then). Second answer: true while this shard's
-- archive of that period is still being taken (its rows still in the live slot, none counted yet).
local function point_rows(slots_key, conf, rule, now_sec, at)
  if (rule.origin_sec or 0) > 0 then return archive.period_rows(slots_key, at) end
  local _, rows = snapshot_kept.find_snapshot(slots_key, conf, rule.interval_sec, now_sec, at, rule.origin_sec)
  return rows, false
end

-- A moderation change of one item or one group on a one-shard board moves the exceptions
-- by the items it takes in or out of them, so a period's kept exception positions (archive_read.lua)
-- of the exceptions before it (their stamp) become those of the exceptions after it by those items'
-- positions alone: each found in the period's text (one plain find, C) and put in or taken out of the
-- sorted positions (a binary search), where the entry's scan has reached it. The newest periods of the
-- board's calendar windows go first, at most `periods` of them and `rows` of work a change (a text's
-- copy and each find: COPY_BYTES, FIND_BYTES); an entry left (older periods, a segment's or
-- another metric's window, an entry of other exceptions) keeps its stamp and is found again by the
-- read that next needs it, as after any other change.

-- What a period costs the change, in rows of a pass (a gmatch step each, archive_read.lua): its text
-- copied into Lua by GET about one per COPY_BYTES of it, a plain find one per FIND_BYTES (measured on
-- a 10 000-row text of 157 KB: GET 0.8 ms, a find 0.24 ms, a pass 9.5 ms, at a load of 30).
local COPY_BYTES, FIND_BYTES = 190, 630

-- `position` put in (`joins`) or taken out of the sorted `found`, which holds it exactly when it leaves.
local function moved(found, position, joins)
  local at = archive_shown.count_below(found, position) + 1
  local held = found[at] == position
  if joins and not held then table.insert(found, at, position) end
  if not joins and held then table.remove(found, at) end
end

-- The items whose membership differs between the exceptions `before` and `after` ({ only, items }):
-- { item, joins } each.
local function items_moved(before, after)
  local was, now, changed = {}, {}, {}
  for _, item in ipairs(before.items) do was[item] = true end
  for _, item in ipairs(after.items) do
    now[item] = true
    if not was[item] then changed[#changed + 1] = { item = item, joins = true } end
  end
  for _, item in ipairs(before.items) do
    if not now[item] then changed[#changed + 1] = { item = item, joins = false } end
  end
  return changed
end

-- The entry of the period at `at` made that of the exceptions after the change, when it is the entry
-- of those before it and its text is still the one it was found for. Returns the work spent, or nil
-- when it would pass the `left` budget (nothing done).
local function period_moved(base, at, entry, change, left)
  local scan = archive_shown.entry_read(entry)
  if not scan or scan.stamp ~= change.before then return 0 end
  local cost = math.ceil(scan.bytes / COPY_BYTES + scan.bytes * #change.items / FIND_BYTES)
  if cost > left then return nil end
  local rows = redis.call('GET', base .. 'snap:' .. at)
  if not rows or #rows ~= scan.bytes then return cost end
  for _, move in ipairs(change.items) do
    local position = archive_shown.position_of(rows, move.item)
    if position and position <= scan.scanned then moved(scan.found, position, move.joins) end
  end
  archive_shown.entry_write(base, at, change.after, scan)
  return cost
end

-- The start of a moderation change on the shard of `cfg_key`, `exceptions_of(cfg_key)` answering its
-- exceptions ({ only, items } or nil): the board's windows keeping exception positions and the
-- exceptions before the change; nil when no window keeps any (nothing to update).
local function index_change_begin(cfg_key, exceptions_of)
  local bases = {}
  for _, w in ipairs(stored_windows.decode_windows(redis.call('HGET', cfg_key, 'windows'))) do
    local base = keyspace.sibling_key(cfg_key, 'cfg', w.name .. ':')
    if redis.call('EXISTS', archive_shown.index_key(base)) == 1 then bases[#bases + 1] = base end
  end
  if #bases == 0 then return nil end
  return { bases = bases, exceptions_of = exceptions_of, before = exceptions_of(cfg_key) }
end

-- The end of the change begun as `begun`: the newest kept entries of the exceptions before it become
-- those of the exceptions after it, at most `bound.periods` periods and `bound.rows` of work.
local function index_change_end(cfg_key, begun, bound)
  local after = begun and begun.exceptions_of(cfg_key)
  if not after or not begun.before or begun.before.only ~= after.only then return end
  local change = { before = archive_shown.exceptions_stamp(begun.before.only, begun.before.items),
    after = archive_shown.exceptions_stamp(after.only, after.items), items = items_moved(begun.before, after) }
  if change.before == change.after then return end
  local periods, left = bound.periods, bound.rows
  for _, base in ipairs(begun.bases) do
    local starts = redis.call('ZRANGE', base .. 'snaps', '+inf', '-inf', 'BYSCORE', 'REV', 'LIMIT', 0, periods)
    local entries = #starts > 0 and redis.call('HMGET', archive_shown.index_key(base), unpack(starts)) or {}
    for i, at in ipairs(starts) do
      local spent = entries[i] and period_moved(base, at, entries[i], change, left)
      if spent == nil then return end
      if entries[i] then periods, left = periods - 1, left - spent end
      if periods <= 0 then return end
    end
  end
end

hooks.export_all(shown, { 'exceptions_of', exceptions_of, 'listing_exceptions_of', listing_exceptions_of,
  'history_asked', history_asked, 'index_change_begin', index_change_begin, 'index_change_end', index_change_end,
  'FIND_ROWS', FIND_ROWS, 'begin_history', begin_history, 'point_rows', point_rows, 'visible', visible,
  'left_out_ahead', left_out_ahead, 'through_shown', through_shown, 'held_scores', held_scores,
  'shown_rank', shown_rank })
