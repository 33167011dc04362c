-- module: snaprows
-- requires: archive
-- snapshot_rows_lib: reading a kept listing's text (a snapshot's or a calendar archive's, snapshot_lib's
-- format): a row's fields, an item's row, and how many rows rank ahead of a score or, on a tiebreak
-- board, of a pair (score, mark) in the board's order.
-- KEYS: 0

-- The row starting at byte `at` (a SNAP_ROW): its score, its position (nil in a snapshot taken
-- before positions were stored), the byte after it and its mark (nil but on a tiebreak board).
local function row_at(rows, at)
  local field = string.find(rows, archive.SNAP_FIELD, at + 1, true)
  local next_row = string.find(rows, archive.SNAP_ROW, field + 1, true) or (#rows + 1)
  local second = string.find(rows, archive.SNAP_FIELD, field + 1, true)
  if not second or second > next_row then
    return tonumber(string.sub(rows, field + 1, next_row - 1)), nil, next_row
  end
  local score = tonumber(string.sub(rows, field + 1, second - 1))
  local third = string.find(rows, archive.SNAP_FIELD, second + 1, true)
  if not third or third > next_row then
    return score, tonumber(string.sub(rows, second + 1, next_row - 1)), next_row
  end
  return score, tonumber(string.sub(rows, third + 1, next_row - 1)), next_row, string.sub(rows, second + 1, third - 1)
end

-- Whether string `a` sorts after `b` in byte order (Lua's `<` on strings follows the locale's collation).
local function bytes_after(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x > y end
  end
  return #a > #b
end

-- Whether a row (held, held_mark) ranks ahead of (score, mark) (ascending: lower scores first). Marks
-- (tiebreak_lib's) follow the board's order as scores do; a row or a score without one: by score.
local function row_ahead(held, held_mark, score, mark, ascending)
  if held ~= score then
    if ascending then return held < score end
    return held > score
  end
  if not mark or not held_mark or held_mark == mark then return false end
  return bytes_after(held_mark, mark) ~= ascending
end

-- The position of the last row (nil when the snapshot stores none): found from the end, a row being
-- at most an id and a score long.
local function row_count(rows)
  local last, from = nil, #rows
  while not last and from > 1 do
    from = math.max(1, from - 512)
    last = string.find(rows, archive.SNAP_ROW, from, true)
  end
  while last do
    local following = string.find(rows, archive.SNAP_ROW, last + 1, true)
    if not following then break end
    last = following
  end
  if not last then return 0 end
  local _, position = row_at(rows, last)
  return position
end

-- How many rows of a listing's text rank ahead, `ahead(rows, at, a, b, c)` answering whether the row starting at byte
-- `at` does (and the byte after it) for the caller's target a, b, c. Rows are best first, so a binary search over byte
-- offsets finds the first row not ahead (about 15 string.find calls in C for 1 000 rows) and that row's stored position
-- answers (`known_count`: the row count, when the caller has it): neither a Lua loop over the rows nor a gsub over the
-- string, each of which made a page of a long history cost milliseconds (issue #22, row 7).
local function count_ahead(rows, known_count, ahead, a, b, c)
  -- Rows starting before `lo` are ahead; rows starting at or after `hi` are not; `lo` starts a row.
  local lo, hi = 1, #rows + 1
  while lo < hi do
    local row = string.find(rows, archive.SNAP_ROW, math.floor((lo + hi) / 2), true)
    if not row or row >= hi then row = lo end
    local is_ahead, after = ahead(rows, row, a, b, c)
    if is_ahead then lo = after else hi = row end
  end
  local position
  if lo <= #rows then
    local _, at_lo = row_at(rows, lo)
    position = at_lo and at_lo - 1
  else
    position = known_count or row_count(rows)
  end
  return position or select(2, string.gsub(string.sub(rows, 1, lo - 1), archive.SNAP_ROW, ''))
end

-- count_ahead's question for a (score, mark): whether the row at byte `at` ranks ahead of it (row_ahead).
local function row_ahead_of(rows, at, score, mark, ascending)
  local listed, _, after, listed_mark = row_at(rows, at)
  return row_ahead(listed, listed_mark, score, mark, ascending), after
end

-- How many rows of a snapshot score strictly better than `score` (above it; `ascending`: below it);
-- with `mark` (a tiebreak board's), rank strictly ahead of the pair (row_ahead).
local function count_above(rows, score, ascending, mark)
  return count_ahead(rows, nil, row_ahead_of, score, mark, ascending)
end

-- An item's score and mark (nil but on a tiebreak board) in a snapshot's rows, or nil when it is not listed.
local function score_of(rows, item)
  local at = string.find(rows, archive.SNAP_ROW .. item .. archive.SNAP_FIELD, 1, true)
  if not at then return nil end
  local score, _, _, mark = row_at(rows, at)
  return score, mark
end

snaprows.row_at = row_at
snaprows.row_ahead = row_ahead
snaprows.count_above = count_above
snaprows.count_ahead = count_ahead
snaprows.score_of = score_of
snaprows.row_count = row_count
