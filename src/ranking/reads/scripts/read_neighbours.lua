-- requires: order, reader, snapshot
-- read_neighbours: for a sharded board's around read, this shard's items just before and just after
-- the place a (score, item) pair takes in the board order, after expiring what fell out. On the
-- item's own shard that place is the item's; on another shard the pair is inserted, ranked and
-- removed again inside this script, so nobody ever sees it.
-- Keys: cfg (the shard's config hash: holds the config version), slots (the window's slots index
--       zset on this shard), top (the window's results zset on this shard)
-- Args (reader.read_call, CALLS.read_neighbours): the header with the one window, then item (its id),
--       score (a listed one, read from its own shard), radius (most neighbours wanted on each side), tie (the
--       item's tie mark on a sharded `ties: first` board, "": none; the place is then the (score, mark)
--       pair's in the strict order: order_lib's ahead and page)
-- Reply (reader.answer, CALLS.read_neighbours): draining (0|1), position (items of this shard before
--   the place), above (items scoring above the score), before (how many rows are before the place),
--   tie_marks ({ each row's tie mark, with a mark; else empty }), rows ({ item_1, score_1, ... }: up
--   to radius items before the place, then up to radius items after it, in board order)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG

-- Appends the (item, score) pairs of `before` then `after` to `rows`.
local function concat_rows(rows, before, after)
  for _, value in ipairs(before) do rows[#rows + 1] = value end
  for _, value in ipairs(after) do rows[#rows + 1] = value end
  return rows
end

-- read_neighbours' reply in the strict order: the place of (score, mark) is after the items ahead of
-- it (on the item's own shard, the item's own place: it is left out of the rows after).
-- A tiebreak's mark is shared by equal pairs: the place is then that of the member <mark><item> (equal
-- pairs in descending byte order of item id, on every shard).
local function tie_neighbours(draining, top_key, item, score, radius, mark)
  local position = order.ahead(top_key, score, order.strict(top_key) and mark or mark .. item)
  local skip = order.mark_of(top_key, item) == mark and 1 or 0
  local marks = {}
  local before = position > 0 and order.page(top_key, math.max(0, position - radius), position - 1, marks) or {}
  local after = order.page(top_key, position + skip, position + skip + radius - 1, marks)
  return reader.answer(CALLS.read_neighbours, {
    draining = draining,
    position = position,
    above = order.ahead(top_key, score, ''),
    before = #before / 2,
    tie_marks = marks,
    rows = concat_rows({}, before, after),
  })
end

local function read_neighbours(keys, args)
  local top_key = keys[3]
  local refused, header, arg, draining = snapshot.begin_read(keys, args, CALLS.read_neighbours)
  if refused then return refused end
  local item, score, radius = arg.item, tonumber(arg.score), tonumber(arg.radius)
  if arg.tie ~= '' then return tie_neighbours(draining, top_key, item, score, radius, arg.tie) end
  local inserted = redis.call('ZSCORE', top_key, item) == false
  if inserted then
    -- A write first (a no-op: the item is not here) lets the ZADD through on a full Redis: Redis refuses
    -- commands that can grow memory only while a script has written nothing, and this one removes what
    -- it adds before it ends.
    redis.call('ZREM', top_key, item)
    redis.call('ZADD', top_key, arg.score, item)
    order.count_as_shown(top_key, item)
  end
  local position = order.position(top_key, item)
  local before = {}
  if position > 0 then before = order.page(top_key, math.max(0, position - radius), position - 1) end
  local after = order.page(top_key, position + 1, position + radius)
  if inserted then redis.call('ZREM', top_key, item) end
  return reader.answer(CALLS.read_neighbours, {
    draining = draining,
    position = position,
    above = order.ahead(top_key, score, ''),
    before = #before / 2,
    tie_marks = {},
    rows = concat_rows({}, before, after),
  })
end
