-- module: order
-- requires: call_state, order_base
-- order_lib: the order of a window's results as reads, lookups and counts across shards see it: order_base_lib's (Redis'
-- or a board option's hooks': `order: asc` the ascending order, `ties: first` the strict one; hooks_lib append_marks).
-- Among equal scores across shards the greater mark comes first ('': none, the order of ids). Listed: on a max / min / last board every recorded
-- score; on a sum board those above 0. Exceptions (hooks_lib `exceptions`: moderation's hidden items, or on a review board
-- the only ones allowed) are outside the listing: pages, places, counts and ranks close their gaps after one ZMSCORE (the
-- option bounds them); a count places only the exceptions of its very score, a page from the top none (head_rows).
-- KEYS: 0

local ask, strict, ascending, score_page = order_base.ask, order_base.strict, order_base.ascending, order_base.score_page
local base_page, base_position, base_ahead = order_base.base_page, order_base.base_position, order_base.base_ahead
local mark_of, any_sign, listed, base_listed_count = order_base.mark_of, order_base.any_sign, order_base.listed, order_base.base_listed_count
local hooks_of_top = call_state.hooks_of_top

-- The exceptions of the results `top_key` (hooks_lib `exceptions`), kept for the call (call_cache): false, or { only, items
-- (id -> true), asked (their list), held (its ZMSCORE), scores (listed ones: id -> score; nil till scored), listed (how
-- many), placed (id -> base position, as asked), positions (ascending base positions of the listed ones, once a page
-- asks), index (score_index) }, bounded by the option's limit. A write of the results drops their record (window_lib's
-- results_changed, board_write's unwatched adds); a change of exceptions, every record.
local exceptions_of = { seq = 0, by = {}, sets = { seq = 0, by = {} } }

-- A change in the results `top_key` (window_lib's results_changed, board_write's unwatched adds): their exceptions
-- record goes.
local function note_written(top_key)
  exceptions_of.by[top_key] = nil
end

-- The exceptions record of `items` (only: the only ones listed; else: those left out), unscored; a set of a list per call.
local function exceptions_record(only, items)
  local sets = call_state.call_cache(exceptions_of.sets)
  if not sets[items] then sets[items] = {} for _, item in ipairs(items) do sets[items][item] = true end end
  return { only = only, items = sets[items], asked = items, listed = 0, placed = {} }
end

-- `ex` with the scores of its listed exceptions in `top_key` (one ZMSCORE, the first time asked).
local function scored(top_key, ex)
  if ex.scores then return ex end
  local items = ex.asked
  local held = ex.held or (#items > 0 and redis.call('ZMSCORE', top_key, unpack(items)) or {})
  ex.scores = {}
  for i, item in ipairs(items) do
    local score = held[i] and tonumber(held[i])
    if score and listed(top_key, score) and not ex.scores[item] then
      ex.scores[item], ex.listed = score, ex.listed + 1
    end
  end
  return ex
end

-- The base position of the exception `item` of `ex` (placed once per call).
local function placed(top_key, ex, item)
  if ex.placed[item] == nil then ex.placed[item] = base_position(top_key, item) end
  return ex.placed[item]
end

-- The ascending base positions of the listed exceptions of `ex` (each placed once per call; all at
-- once when an option answers hooks_lib `positions`).
local function positions_of(top_key, ex)
  if ex.positions then return ex.positions end
  scored(top_key, ex)
  local unplaced = {}
  for item in pairs(ex.scores) do
    if ex.placed[item] == nil then unplaced[#unplaced + 1] = item end
  end
  local places = ask(hooks_of_top(top_key).positions, top_key, unplaced)
  for _, item in ipairs(places and unplaced or {}) do ex.placed[item] = places[item] end
  local positions = {}
  for item in pairs(ex.scores) do positions[#positions + 1] = placed(top_key, ex, item) end
  table.sort(positions)
  ex.positions = positions
  return positions
end

local function exceptions(top_key)
  -- No option of the board leaves items out (most boards): nothing to ask or keep.
  local asked = hooks_of_top(top_key).exceptions
  if #asked == 0 then return false end
  local by = call_state.call_cache(exceptions_of)
  local known = by[top_key]
  if known ~= nil then return known end
  -- Only a window's results ("...top") leave items out here: a previous listing ("...prev",
  -- previousRank) is ranked by score, its left-out rows taken out by previous_ranks_lib.
  local answer = string.sub(top_key, -3) == 'top' and ask(asked, top_key)
  known = answer and exceptions_record(answer.only, answer.items) or false
  by[top_key] = known
  return known
end

-- The exceptions an option answers for the listing `key` (hooks_lib `exceptions`: { only, items }),
-- asked afresh: a view's listing (view_except_lib) places them in its own order.
local function exceptions_asked(key)
  return ask(hooks_of_top(key).exceptions, key)
end

-- A read placing an item of another shard among these results (read_neighbours inserts it for the call): the
-- exceptions are read again with it held, and it counts as listed here.
local function count_as_shown(top_key, item)
  call_state.call_cache(exceptions_of)[top_key] = nil
  local ex = exceptions(top_key)
  if not ex or not ex.only or ex.items[item] then return end
  scored(top_key, ex)
  -- Its set is the call's, shared with the board's other windows (the hook answers each the same list).
  ex.items = setmetatable({ [item] = true }, { __index = ex.items })
  ex.scores[item], ex.listed = tonumber(redis.call('ZSCORE', top_key, item)), ex.listed + 1
end

-- How many of the ascending `positions` are below `place` (a binary search).
local function count_below(positions, place)
  local low, high = 0, #positions
  while low < high do
    local middle = math.floor((low + high) / 2)
    if positions[middle + 1] < place then low = middle + 1 else high = middle end
  end
  return low
end

-- The listed exceptions of `ex` by score, once per record: `keys` (order keys, ascending: better first, for count_below)
-- and `at` (score -> items): a count pays a binary search and its very score's exceptions, not a pass over them all.
local function score_index(top_key, ex)
  if ex.index then return ex.index end
  local sign, index = ascending(top_key) and 1 or -1, { keys = {}, at = {} }
  for item, held in pairs(ex.scores) do
    index.keys[#index.keys + 1] = sign * held
    index.at[held] = index.at[held] or {}
    table.insert(index.at[held], item)
  end
  table.sort(index.keys)
  ex.index = index
  return index
end

-- below_of's count ahead of a record of `score`: an option's (hooks_lib exceptions_ahead), else one pass over the
-- exceptions' scores (a hook names an item once: a hash's fields), kept (ex.held) for scored should the call ask again.
local function first_below(top_key, ex, count, score)
  local counted = ask(hooks_of_top(top_key).exceptions_ahead, top_key, ex, count, score)
  if counted then return counted end
  local items, sign, every_sign, below = ex.asked, ascending(top_key) and -1 or 1, any_sign(top_key), 0
  ex.held = #items > 0 and redis.call('ZMSCORE', top_key, unpack(items)) or {}
  for i = 1, #items do
    local held = ex.held[i] and tonumber(ex.held[i])
    if held and (every_sign or held > 0) and (sign * held > sign * score or held == score
      and placed(top_key, ex, items[i]) < count) then below = below + 1 end
  end
  return below
end

-- How many listed exceptions of `ex` sit in the first `count` places of every item held: those ahead of a record of
-- `score` (nil: unknown, every one placed). A better score is ahead, a worse one not; only that very score's are placed.
local function below_of(top_key, ex, count, score)
  score = tonumber(score)
  -- A record's first count (a write's rank: an add drops its record) pays no table or sort (first_below).
  if score and not ex.scores and not ex.held then return first_below(top_key, ex, count, score) end
  scored(top_key, ex)
  if score == nil then return count_below(positions_of(top_key, ex), count) end
  local index = score_index(top_key, ex)
  local below, same = count_below(index.keys, (ascending(top_key) and 1 or -1) * score), index.at[score]
  if not same then return below end
  for _, item in ipairs(same) do
    if placed(top_key, ex, item) < count then below = below + 1 end
  end
  return below
end

-- How many of the first `count` places of every item held (those ahead of a record of `score`, when known) it shows.
local function shown_of(top_key, ex, count, score)
  local below = below_of(top_key, ex, count, score)
  return ex.only and below or count - below
end

-- Whether the listing of `top_key` shows `item` (held and listed there: callers check).
local function shown(top_key, item)
  local ex = exceptions(top_key)
  if not ex then return true end
  return (ex.items[item] == true) == ex.only
end

-- A page of the only items `ex` lists: one row read at each of their places.
local function only_page(top_key, ex, first, last, marks)
  local rows, read_marks, positions = {}, {}, positions_of(top_key, ex)
  for i = first + 1, math.min(last + 1, #positions) do
    local row = base_page(top_key, positions[i], positions[i], read_marks)
    rows[#rows + 1], rows[#rows + 2] = row[1], row[2]
  end
  for i = 1, marks and #read_marks or 0 do marks[#marks + 1] = read_marks[i] end
  return rows
end

local HEAD_EXTRA_ROWS = 128 -- rows a page from the top reads past those still wanted after its first read

-- The first `wanted` rows without `hidden`'s items, read from the top by `read` (as base_page) till enough are shown (then
-- the rest and HEAD_EXTRA_ROWS more) or the rows end (nil: a read's nil); no exception scored. Counters, not #rows.
local function head_rows(read, key, hidden, wanted, marks)
  local rows, kept, from, count = {}, 0, 0, wanted
  while true do
    local read_marks = {}
    local page = read(key, from, from + count - 1, read_marks)
    if not page then return nil end
    for i = 1, #page, 2 do
      if not hidden[page[i]] then
        rows[kept + 1], rows[kept + 2], kept = page[i], page[i + 1], kept + 2
        if marks and read_marks[1] then marks[#marks + 1] = read_marks[(i + 1) / 2] end
        if kept == 2 * wanted then return rows end
      end
    end
    if #page < 2 * count then return rows end
    from, count = from + count, wanted - kept / 2 + HEAD_EXTRA_ROWS
  end
end

-- A page without the items `ex` leaves out: from the top, head_rows; else the rows held from `first` on, reading at most
-- the listed exceptions' count more, less as many shown rows as exceptions ahead of `first` (below_of the first row read).
local function except_page(top_key, ex, first, last, marks)
  local rows, read_marks, wanted = {}, {}, last - first + 1
  if wanted <= 0 then return rows end
  if first == 0 then return head_rows(base_page, top_key, ex.items, wanted, marks) end
  scored(top_key, ex)
  local read = base_page(top_key, first, last + ex.listed, read_marks)
  if #read == 0 then return rows end
  local skip = below_of(top_key, ex, first, read[2])
  for i = 1, #read, 2 do
    if #rows == 2 * wanted then break end
    local shown = not ex.items[read[i]]
    if shown and skip > 0 then
      skip = skip - 1
    elseif shown then
      rows[#rows + 1], rows[#rows + 2] = read[i], read[i + 1]
      local mark = read_marks[(i + 1) / 2]
      if marks and mark then marks[#marks + 1] = mark end
    end
  end
  return rows
end

-- Whether the results hold and would list `item` but the listing leaves it out (an exception: hidden).
local function left_out(top_key, item)
  local held = not shown(top_key, item) and redis.call('ZSCORE', top_key, item)
  return held ~= false and listed(top_key, tonumber(held))
end

-- Positions first..last (0-based) of the listing as ZREVRANGE WITHSCORES answers them (item, score, ...); an option
-- deciding the order adds each row's mark to `marks` on a sharded board. Exceptions leave no gap.
local function page(top_key, first, last, marks)
  local ex = exceptions(top_key)
  if not ex then return base_page(top_key, first, last, marks) end
  if ex.only then return only_page(top_key, ex, first, last, marks) end
  return except_page(top_key, ex, first, last, marks)
end

-- Positions first..last of the listing of every item held but `items` (a review queue: every item no one moderated), as
-- page answers them; the exceptions option (moderation) bounds `items`.
local function page_except(top_key, items, first, last)
  return except_page(top_key, exceptions_record(false, items), first, last, nil)
end

-- The item's 0-based place in the listing (nil: not listed, or left out).
local function position(top_key, item)
  local at = base_position(top_key, item)
  local ex = at and exceptions(top_key)
  if not ex then return at or nil end
  if not shown(top_key, item) then return nil end
  return shown_of(top_key, ex, at, tonumber(redis.call('ZSCORE', top_key, item)))
end

-- Items of the listing ahead of a listed item of `score` and mark `mark` (another shard's or this one's; '': better scores).
local function ahead(top_key, score, mark)
  local count = base_ahead(top_key, score, mark)
  local ex = exceptions(top_key)
  if not ex then return count end
  return shown_of(top_key, ex, count, score)
end

-- How many leading places of every item held (the items ahead of a record, counted by Redis) the listing shows.
local function shown_ahead(top_key, count)
  local ex = exceptions(top_key)
  if not ex then return count end
  return shown_of(top_key, ex, count, nil)
end

-- An item's rank among every item held (0: none) as a rank of the listing (0: left out); `score`: its own, when known.
local function shown_rank(top_key, item, rank, score)
  local ex = exceptions(top_key)
  if not ex or rank == 0 then return rank end
  if not shown(top_key, item) then return 0 end
  return shown_of(top_key, ex, rank - 1, score or tonumber(redis.call('ZSCORE', top_key, item))) + 1
end

-- How many items the results `top_key` list.
local function listed_count(top_key)
  local count = base_listed_count(top_key)
  local ex = exceptions(top_key)
  if not ex then return count end
  -- The listed items hold the first places (an ascending board lists every score).
  scored(top_key, ex)
  if ex.only then return ex.listed end
  return count - ex.listed
end

-- Appends a write's marks of the item in each window (results keys at first_top, first_top + 2, ...
-- of `keys`) to its reply, when an option keeps marks; else nothing.
local function append_marks(reply, keys, first_top, window_count, item)
  if window_count == 0 then return end
  local appenders = hooks_of_top(keys[first_top]).append_marks
  for i = 1, #appenders do appenders[i](reply, keys, first_top, window_count, item) end
end

order.ascending = ascending
order.score_page = score_page
order.strict = strict
order.page = page
order.position = position
order.mark_of = mark_of
order.ahead = ahead
order.base_ahead = base_ahead
order.append_marks = append_marks
order.listed = listed
order.listed_count = listed_count
order.shown = shown
order.left_out = left_out
order.count_as_shown = count_as_shown
order.EXCEPTIONS = exceptions_of
order.note_written = note_written
order.shown_ahead = shown_ahead
order.shown_rank = shown_rank
order.placed = placed
order.page_except = page_except
order.head_rows = head_rows
order.exceptions_asked = exceptions_asked
