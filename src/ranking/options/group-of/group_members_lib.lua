-- module: group_members
-- requires: order, shown
-- group_members_lib: which of a group's members count for it (group_of_lib): its best `top` members in
-- the member board's order, past the ones the member board's listing leaves out (moderation).
-- KEYS: 0

-- The best `top` rows of `key` (best first) that `keep` keeps, a page at a time; and the rows read.
local function shown_rows(key, keep, top, first_page)
  local rows, read, from, count = {}, 0, 0, first_page
  while count > 0 do
    local page = order.score_page(key, from, from + count - 1)
    read = read + #page / 2
    for i = 1, #page, 2 do
      if keep(page[i]) and #rows < 2 * top then rows[#rows + 1], rows[#rows + 2] = page[i], page[i + 1] end
    end
    if #page < 2 * count then break end
    from, count = from + count, top - #rows / 2
  end
  return rows, read
end

-- The best `top` listed members of a group's zset `key`, best first in the member board's order:
-- [member, score, ...], and the member rows read: past its hidden members (at most the shard's exceptions more), or on a
-- review board its allowed ones (a group larger than them: their scores, sorted here).
local function best_rows(key, top, ex)
  if not ex then return shown_rows(key, function() return true end, top, top) end
  if not ex.only then return shown_rows(key, function(item) return not ex.items[item] end, top, top) end
  local size = redis.call('ZCARD', key)
  if size <= #ex.list then return shown_rows(key, function(item) return ex.items[item] end, top, size) end
  local rows, held = {}, #ex.list > 0 and redis.call('ZMSCORE', key, unpack(ex.list)) or {}
  for i, item in ipairs(ex.list) do
    if held[i] then rows[#rows + 1] = { item, tonumber(held[i]) } end
  end
  local sign = order.ascending(key) and -1 or 1
  table.sort(rows, function(x, y) return sign * x[2] > sign * y[2] end)
  local flat = {}
  for i = 1, math.min(top, #rows) do flat[2 * i - 1], flat[2 * i] = rows[i][1], string.format('%.17g', rows[i][2]) end
  return flat, #ex.list
end

-- The member window's exceptions (hidden items, or on a review board the only ones allowed), which
-- count for no group, as snapshot_shown_lib reads them. Equal scores add the same, so which of them a
-- group counts needs no tie rule (ties: first).
group_members.exceptions_of = shown.listing_exceptions_of
group_members.best_rows = best_rows
