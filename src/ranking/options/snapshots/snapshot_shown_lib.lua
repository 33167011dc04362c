-- module: shown
-- requires: archive, board_write, order, snapshot, snapshot_kept
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

-- The exceptions of the window of `top_key` now: nil (every row shown), or { only (the items are the
-- only ones shown; else the ones left out), items (id -> true), list (their ids) }.
local function exceptions_of(top_key)
  local asked = order.exceptions_asked(top_key)
  if not asked then return nil end
  local items = {}
  for _, item in ipairs(asked.items) do items[item] = true end
  return { only = asked.only, items = items, list = asked.items }
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
-- begin_board_call, then the window's snapshot boundary crossed (snapshot.cross_window_of). Returns the
-- error reply to answer at once (nil: none), the header, the arguments, the window's snapshot
-- setting (nil: it keeps none), the window's rule and the call's time in seconds.
local function begin_history(keys, args, contract)
  local refused, header, arg = board_write.begin_board_call(keys, args, contract)
  if refused then return refused end
  local rule, now_sec = header.windows[1], header.now_sec
  local conf = snapshot.cross_window_of(keys[1], keys[2], keys[3], now_sec, rule.interval_sec, rule.origin_sec)
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

shown.exceptions_of = exceptions_of
shown.FIND_ROWS = FIND_ROWS
shown.begin_history = begin_history
shown.point_rows = point_rows
shown.visible = visible
shown.left_out_ahead = left_out_ahead
shown.through_shown = through_shown
shown.held_scores = held_scores
shown.shown_rank = shown_rank
