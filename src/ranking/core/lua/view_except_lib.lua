-- module: view_except
-- requires: order
-- view_except_lib: a trending view's listing (views_lib's listing_of: score, count, page, position)
-- without the exceptions of its board (hooks_lib `exceptions`, as order_lib asks them for a window:
-- moderation's hidden items, or on a review board the only ones allowed). Pages, places, counts and
-- ranks close the gaps the exceptions leave, so a view lists exactly what its window lists. The
-- exceptions are bounded per shard by the option (MODERATED_ITEMS_PER_SHARD and
-- MODERATED_GROUP_ITEMS_PER_SHARD): one score each when the listing is made, and one place each (the
-- view's own order, ZREVRANK or the rebase's merged order) once a page or a position asks.
-- KEYS: 0

-- The exceptions held in the view: { item, score (string as the listing answers it), value }.
local function held_exceptions(listing, items)
  local seen, held = {}, {}
  for _, item in ipairs(items) do
    if not seen[item] then
      seen[item] = true
      local score = listing.score(item)
      if score then held[#held + 1] = { item = item, score = score, value = tonumber(score) } end
    end
  end
  return seen, held
end

-- Whether `value` is in the range from ZCOUNT's `lowest` ('-inf' or an exclusive '(x') to +inf.
local function counted(value, lowest)
  if lowest == '-inf' then return true end
  return value > tonumber(string.sub(lowest, 2))
end

-- How many of the ascending `positions` are below `place`.
local function count_below(positions, place)
  local low, high = 0, #positions
  while low < high do
    local middle = math.floor((low + high) / 2)
    if positions[middle + 1].at < place then low = middle + 1 else high = middle end
  end
  return low
end

-- The held exceptions in the view's order, each with its place `at` (placed once per listing); nil
-- while a rebase holds a place (the caller answers draining).
local function placer(base, held)
  local placed
  return function()
    if placed then return placed end
    for _, entry in ipairs(held) do
      entry.at = base.position(entry.item, entry.score)
      if not entry.at then return nil end
    end
    table.sort(held, function(a, b) return a.at < b.at end)
    placed = held
    return placed
  end
end

-- A page of the listing leaving out the exceptions `items`: it skips them, reading at most their
-- count more rows.
local function except_page(base, items, positions, offset, limit)
  local raw = offset
  for _, entry in ipairs(positions) do
    if entry.at <= raw then raw = raw + 1 else break end
  end
  local read = base.page(raw, limit + #positions - count_below(positions, raw))
  if not read then return nil end
  local rows = {}
  for i = 1, #read, 2 do
    if #rows == 2 * limit then break end
    if not items[read[i]] then rows[#rows + 1], rows[#rows + 2] = read[i], read[i + 1] end
  end
  return rows
end

-- A page of the listing of only the exceptions (a review board's allowed items).
local function only_page(positions, offset, limit)
  local rows = {}
  for i = offset + 1, math.min(offset + limit, #positions) do
    rows[#rows + 1], rows[#rows + 2] = positions[i].item, positions[i].score
  end
  return rows
end

-- The listing `base` of the view whose zset is `top_key`, without its board's exceptions (itself
-- when the board has none).
local function except_listing(base, top_key)
  local answer = order.exceptions_asked(top_key)
  if not answer then return base end
  local only, items = answer.only, nil
  local held
  items, held = held_exceptions(base, answer.items)
  local positions_of = placer(base, held)
  local function shown(item)
    return (items[item] == true) == only
  end
  local listing = {}
  function listing.score(item)
    if not shown(item) then return nil end
    return base.score(item)
  end
  function listing.count(lowest)
    local matching = 0
    for _, entry in ipairs(held) do
      if counted(entry.value, lowest) then matching = matching + 1 end
    end
    if only then return matching end
    return base.count(lowest) - matching
  end
  function listing.page(offset, limit)
    local positions = positions_of()
    if not positions then return nil end
    if only then return only_page(positions, offset, limit) end
    return except_page(base, items, positions, offset, limit)
  end
  function listing.position(item, score)
    if not shown(item) then return nil end
    local at = base.position(item, score)
    local positions = at and positions_of()
    if not positions then return nil end
    local ahead = count_below(positions, at)
    if only then return ahead end
    return at - ahead
  end
  return listing
end

view_except.except_listing = except_listing
