-- module: previous
-- requires: keyspace, order
-- previous_ranks_lib: each listed row's rank in the latest snapshot of its window (previousRank), for
-- a page of a listing (read_top, read_around), in few commands whatever the page's size: every rank
-- from one read of the previous listing ("<base>prev", the snapshot's rows, at most
-- SNAPSHOT_TOP_ITEMS) when it holds at most PREVIOUS.ROWS_PER_COUNT rows per id asked (a read of that
-- many rows costs about one count, and answers each row's score with it: no lookup of the ids), else
-- one ZMSCORE of the page's ids there and one count per id found (a short page of a long listing).
-- KEYS: 0

local PREVIOUS = { ROWS_PER_COUNT = 8, NONE = {} }

-- Competition rank of each item of the listing `prev` (item -> rank): the rows ahead of its score's
-- first row, as order.ahead counts them, plus one.
local function listing_ranks(prev)
  local rows, ranks, first_of = order.score_page(prev, 0, -1), {}, {}
  for i = 1, #rows, 2 do
    local score = rows[i + 1]
    local rank = first_of[score]
    if not rank then
      rank = (i + 1) / 2
      first_of[score] = rank
    end
    ranks[rows[i]] = rank
  end
  return ranks
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
    local held = listing_ranks(prev)
    for i = 1, #items do ranks[i] = held[items[i]] or 0 end
    return ranks
  end
  local scores = redis.call('ZMSCORE', prev, unpack(items))
  for i = 1, #items do
    local score = scores[i] and tonumber(scores[i])
    ranks[i] = score and order.ahead(prev, score, '') + 1 or 0
  end
  return ranks
end

previous.ranks_of = ranks_of
