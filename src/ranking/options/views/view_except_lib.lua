-- module: view_except
-- requires: order
-- view_except_lib: a trending view's listing (views_lib's listing_of: score, count, page, position)
-- without the exceptions of its board (hooks_lib `exceptions`, as order_lib asks them for a window:
-- moderation's hidden items, or on a review board the only ones allowed). Pages, places, counts and
-- ranks close the gaps the exceptions leave, so a view lists exactly what its window lists. The
-- exceptions are bounded per shard by the option (MODERATED_ITEMS_PER_SHARD and
-- MODERATED_GROUP_ITEMS_PER_SHARD): their scores are read once per listing (one ZMSCORE), an
-- exception is placed against a row by its score, and only one of that very score is placed in the
-- view's order (ZREVRANK, or the rebase's merged order). A page from the top reads none of their
-- scores (order.head_rows).
-- KEYS: 0

-- The exceptions' scores in the view (false: not held): one ZMSCORE when one zset holds the view,
-- else the listing's (a decay view under a rebase merges two zsets).
local function scores_of(base, view, items)
  if #items == 0 then return {} end
  if not view.next_landmark then return redis.call('ZMSCORE', view.top, unpack(items)) end
  local scores = {}
  for i, item in ipairs(items) do scores[i] = base.score(item) or false end
  return scores
end

-- The set of every exception, and a function answering those held in the view: { item, score
-- (string as the listing answers it), value }, their scores read the first time it is called.
local function held_exceptions(base, view, asked)
  local items, unique = {}, {}
  for _, item in ipairs(asked) do
    if not items[item] then
      items[item] = true
      unique[#unique + 1] = item
    end
  end
  local held
  return items, function()
    if held then return held end
    local scores = scores_of(base, view, unique)
    held = {}
    for i, item in ipairs(unique) do
      if scores[i] then held[#held + 1] = { item = item, score = scores[i], value = tonumber(scores[i]) } end
    end
    return held
  end
end

-- Whether `value` is in the range from ZCOUNT's `lowest` ('-inf' or an exclusive '(x') to +inf.
local function counted(value, lowest)
  if lowest == '-inf' then return true end
  return value > tonumber(string.sub(lowest, 2))
end

-- The exceptions' places in the view's order, asked for those of a score another row holds.
local function placing(base)
  local placed = {}
  -- The exception's base place (false: a rebase holds it, the caller answers draining).
  local function place(entry)
    local at = placed[entry]
    if at == nil then
      at = base.position(entry.item, entry.score) or false
      placed[entry] = at
    end
    return at
  end
  -- How many exceptions are ahead of the row of `value` at base place `at` (nil: a rebase holds one).
  return function(held, value, at)
    local ahead = 0
    for _, entry in ipairs(held) do
      if entry.value > value then
        ahead = ahead + 1
      elseif entry.value == value then
        local its = place(entry)
        if not its then return nil end
        if its < at then ahead = ahead + 1 end
      end
    end
    return ahead
  end
end

-- A page of the listing leaving out the exceptions: from the top, order.head_rows; else the base rows from
-- `offset` (the exceptions ahead of it shift the page by as many rows), reading at most their count
-- more rows.
local function except_page(base, items, held_of, ahead_of, offset, limit)
  if limit <= 0 then return {} end
  if offset == 0 then
    return order.head_rows(function(_, first, last) return base.page(first, last - first + 1) end, nil, items, limit)
  end
  local held = held_of()
  local read = base.page(offset, limit + #held)
  if not read then return nil end
  if #read == 0 then return {} end
  local shift = ahead_of(held, tonumber(read[2]), offset)
  if not shift then return nil end
  local rows = {}
  for i = 1, #read, 2 do
    if #rows == 2 * limit then break end
    if not items[read[i]] then
      if shift > 0 then
        shift = shift - 1
      else
        rows[#rows + 1], rows[#rows + 2] = read[i], read[i + 1]
      end
    end
  end
  return rows
end

-- A page of the listing of only the exceptions (a review board's allowed items): sorted by score,
-- those of a score another one holds by their places.
local function only_page(base, held, offset, limit)
  local shared, sorted = {}, {}
  for _, entry in ipairs(held) do
    shared[entry.value] = (shared[entry.value] or 0) + 1
    sorted[#sorted + 1] = entry
  end
  for _, entry in ipairs(sorted) do
    if shared[entry.value] > 1 then
      entry.at = base.position(entry.item, entry.score)
      if not entry.at then return nil end
    end
  end
  table.sort(sorted, function(a, b)
    if a.value ~= b.value then return a.value > b.value end
    -- The sort may compare an entry with itself: one of a score no other holds has no place.
    return (a.at or 0) < (b.at or 0)
  end)
  local page = {}
  for i = offset + 1, math.min(offset + limit, #sorted) do
    page[#page + 1], page[#page + 2] = sorted[i].item, sorted[i].score
  end
  return page
end

-- The listing `base` of `view` (its zset view.top), without its board's exceptions (itself when the
-- board has none).
local function except_listing(base, view)
  local answer = order.exceptions_asked(view.top)
  if not answer then return base end
  local only = answer.only
  local items, held_of = held_exceptions(base, view, answer.items)
  local ahead_of = placing(base)
  local function shown(item)
    return (items[item] == true) == only
  end
  local listing = {}
  function listing.score(item)
    if not shown(item) then return nil end
    return base.score(item)
  end
  -- The score of an item held in the view that the exceptions leave out (nil: listed, or not held).
  function listing.left_out(item)
    if shown(item) then return nil end
    return base.score(item)
  end
  function listing.count(lowest)
    local matching = 0
    for _, entry in ipairs(held_of()) do
      if counted(entry.value, lowest) then matching = matching + 1 end
    end
    if only then return matching end
    return base.count(lowest) - matching
  end
  function listing.page(offset, limit)
    if only then return only_page(base, held_of(), offset, limit) end
    return except_page(base, items, held_of, ahead_of, offset, limit)
  end
  function listing.position(item, score)
    if not shown(item) then return nil end
    local at = base.position(item, score)
    local ahead = at and ahead_of(held_of(), tonumber(score), at)
    if not ahead then return nil end
    if only then return ahead end
    return at - ahead
  end
  return listing
end

view_except.except_listing = except_listing
