-- module: previous
-- requires: call_state, keyspace, order, shown
-- previous_ranks_lib: each listed row's rank in the latest snapshot of its window (previousRank), for
-- a page of a listing (read_top, read_around), in few commands whatever the page's size: every rank
-- from one read of the previous listing ("<base>prev", the snapshot's rows, at most
-- SNAPSHOT_TOP_ITEMS) when it holds at most PREVIOUS.ROWS_PER_COUNT rows per id asked (a read of that
-- many rows costs about one count, and answers each row's score with it: no lookup of the ids), else
-- one ZMSCORE of the page's ids there and one count per id found (a short page of a long listing).
-- The ranks are among the rows a read shows now (snapshot_shown_lib): an item hidden now has none,
-- and the rows of hidden items ahead of a row are not counted (one ZMSCORE of the board's exceptions
-- in the listing, on a board with exceptions only).
-- KEYS: 0

-- NEAR_ROWS: most rows of a better score rank_of reads instead of the exceptions' scores in the listing (one ZMSCORE
-- of them all, up to MODERATED_ITEMS_PER_SHARD and the moderated groups' items, then a sort).
local PREVIOUS = { ROWS_PER_COUNT = 8, NONE = {}, NEAR_ROWS = 64 }

-- Each previous listing's exceptions asked in this call (call_state.call_cache): false, or { ex (the
-- window's exceptions), scores (theirs in the listing) }; a lookup of many ids asks once.
local asked = { seq = 0, by = {} }

-- The exceptions of the window of `top_key` and their scores in its previous listing `prev`.
local function exceptions_in(top_key, prev)
  local by = call_state.call_cache(asked)
  local known = by[prev]
  if known == nil then
    local ex = shown.exceptions_of(top_key)
    known = ex and { ex = ex, scores = shown.held_scores(prev, ex) } or false
    by[prev] = known
  end
  return known or nil
end

-- Competition rank of each item of the listing `prev` shown now (item -> rank): the shown rows ahead
-- of its score's first shown row, plus one.
local function listing_ranks(prev, ex)
  local rows, ranks, first_of, count = order.score_page(prev, 0, -1), {}, {}, 0
  -- shown.visible inlined: a call a row was a third of this loop.
  local items, only = ex and ex.items or PREVIOUS.NONE, ex and ex.only or false
  for i = 1, #rows, 2 do
    local item = rows[i]
    if (items[item] == true) == only then
      count = count + 1
      local score = rows[i + 1]
      local rank = first_of[score]
      if not rank then
        rank = count
        first_of[score] = rank
      end
      ranks[item] = rank
    end
  end
  return ranks
end

-- An item's rank among the shown rows of the listing `prev`, from its score there (nil: absent: 0).
local function shown_rank_of(prev, known, item, score)
  if not score then return 0 end
  local rank = order.ahead(prev, score, '') + 1
  if not known then return rank end
  return shown.shown_rank(known.ex, known.scores, item, score, rank, order.ascending(prev))
end

-- Each listed item's previous rank (0: absent), for the (item, score, ...) rows of a listing.
-- `keeps`: the window's snapshot setting (cross_window_of's answer); a window that keeps no snapshots
-- answers an empty list (no row has one) without a lookup or a table per call.
local function ranks_of(top_key, keeps, rows)
  if not keeps then return PREVIOUS.NONE end
  local ranks, items = {}, {}
  for i = 1, #rows, 2 do items[#items + 1] = rows[i] end
  if #items == 0 then return ranks end
  local prev = keyspace.sibling_key(top_key, 'top', 'prev')
  if redis.call('ZCARD', prev) <= #items * PREVIOUS.ROWS_PER_COUNT then
    local held = listing_ranks(prev, shown.exceptions_of(top_key))
    for i = 1, #items do ranks[i] = held[items[i]] or 0 end
    return ranks
  end
  local scores, known = redis.call('ZMSCORE', prev, unpack(items)), false
  for i = 1, #items do
    local score = scores[i] and tonumber(scores[i])
    -- The exceptions' scores there (a ZMSCORE of them all) only once an id is found.
    if score and known == false then known = exceptions_in(top_key, prev) end
    ranks[i] = shown_rank_of(prev, known or nil, items[i], score)
  end
  return ranks
end

-- Each exceptions list's set (id -> true) in this call (call_state.call_cache): the hook answers every window one list.
local sets = { seq = 0, by = {} }

-- shown_rank_of's answer for a row of `prev` few rows (PREVIOUS.NEAR_ROWS) precede in score on a board with
-- exceptions: the rows of a better score read, the exceptions among them counted (a write ranking a leading item);
-- nil when more rows are ahead, the board has no exceptions, or their scores were read for this listing already.
local function near_top_rank(top_key, prev, item, score)
  local ex = call_state.call_cache(asked)[prev] == nil and shown.history_asked(top_key)
  if not ex then return nil end
  local by = call_state.call_cache(sets)
  if not by[ex.items] then
    by[ex.items] = {}
    for _, one in ipairs(ex.items) do by[ex.items][one] = true end
  end
  local items = by[ex.items]
  if (items[item] == true) ~= ex.only then return 0 end
  local low, high = '(' .. string.format('%.17g', score), '+inf'
  if order.ascending(prev) then low, high = '-inf', low end
  if redis.call('ZCOUNT', prev, low, high) > PREVIOUS.NEAR_ROWS then return nil end
  local found = 0
  for _, row in ipairs(redis.call('ZRANGE', prev, low, high, 'BYSCORE')) do
    if items[row] then found = found + 1 end
  end
  if ex.only then return found + 1 end
  return order.ahead(prev, score, '') + 1 - found
end

-- Competition rank of an item in the latest snapshot of the window of `top_key` among the rows a read
-- shows now, 0 when absent or left out.
local function rank_of(top_key, item)
  local prev = keyspace.sibling_key(top_key, 'top', 'prev')
  local score = redis.call('ZSCORE', prev, item)
  if not score then return 0 end
  score = tonumber(score)
  return near_top_rank(top_key, prev, item, score) or shown_rank_of(prev, exceptions_in(top_key, prev), item, score)
end

previous.ranks_of = ranks_of
previous.rank_of = rank_of
