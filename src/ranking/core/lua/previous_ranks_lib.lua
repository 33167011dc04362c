-- module: previous
-- requires: keyspace, order
-- previous_ranks_lib: each listed row's rank in the latest snapshot of its window (previousRank), for
-- a page of a listing (read_top, read_around), in few commands whatever the page's size: one ZMSCORE
-- of the page's ids in the previous listing ("<base>prev", the snapshot's rows, at most
-- SNAPSHOT_TOP_ITEMS), then every rank from one read of that listing when it holds at most
-- PREVIOUS.ROWS_PER_COUNT rows per id found (a read of that many rows costs about one count), else
-- one count per id found (a short page of a long listing).
-- KEYS: 0

local PREVIOUS = { ROWS_PER_COUNT = 8, NONE = {} }

-- Competition rank of the first row of each score of the listing `prev` (score -> rank): the rows
-- ahead of it, as order.ahead counts them, plus one.
local function first_ranks(prev)
  local rows, firsts = order.score_page(prev, 0, -1), {}
  for i = #rows, 2, -2 do firsts[tonumber(rows[i])] = i / 2 end
  return firsts
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
  local scores, held = redis.call('ZMSCORE', prev, unpack(items)), 0
  for i = 1, #items do
    scores[i] = scores[i] and tonumber(scores[i])
    if scores[i] then held = held + 1 end
  end
  local firsts = held > 0 and redis.call('ZCARD', prev) <= held * PREVIOUS.ROWS_PER_COUNT and first_ranks(prev) or nil
  for i = 1, #items do
    local score = scores[i]
    if not score then
      ranks[i] = 0
    elseif firsts then
      ranks[i] = firsts[score]
    else
      ranks[i] = order.ahead(prev, score, '') + 1
    end
  end
  return ranks
end

previous.ranks_of = ranks_of
