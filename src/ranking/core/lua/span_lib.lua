-- module: span
-- requires: hooks, keyspace, window
-- span_lib: reads of a window's newest slots, summed per item in the script (read_span). Board
-- order as everywhere: higher score first, equal scores in descending byte order of the item id.
-- KEYS: 0

-- Whether id `a` sorts after id `b` in byte order. Lua's own `<` on strings follows the C locale's
-- collation (strcoll), which need not be byte order: compare bytes.
local function id_after(a, b)
  local length = math.min(#a, #b)
  for i = 1, length do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x > y end
  end
  return #a > #b
end

-- Whether row (score, item) comes before row (other_score, other_item) in board order.
local function comes_before(score, item, other_score, other_item)
  if score ~= other_score then return score > other_score end
  return id_after(item, other_item)
end

-- What options hold of a slot beside its hash (hooks_lib slot_packed: a tail board's packed
-- records): their count, or (`read`) their (item, count) pairs.
local function packed_of(slots_key, start, read)
  local packed = hooks.slot_packed
  for i = 1, #packed do
    local held = packed[i](slots_key, start, read)
    if held then return held end
  end
  return read and {} or 0
end

-- The list holding the slot's packed records (hooks_lib slot_packed's 'key'), nil when none does.
local function packed_key_of(slots_key, start)
  local packed = hooks.slot_packed
  for i = 1, #packed do
    local key = packed[i](slots_key, start, 'key')
    if key then return key end
  end
  return nil
end

-- About `records` records off the front of `key`, a copy of a packed list (hooks_lib packed_take):
-- their (item, count) pairs, flat, and their number.
local function packed_take(key, records)
  local take = hooks.packed_take
  for i = 1, #take do
    local entries, taken = take[i](key, records)
    if entries then return entries, taken end
  end
  return {}, 0
end

-- The starts of the window's live slots starting in (now's slot - span, now's slot].
local function span_starts(slots_key, now_sec, interval_sec, span_sec)
  local current = window.current_slot(now_sec, interval_sec)
  return redis.call('ZRANGE', slots_key, '(' .. (current - span_sec), current, 'BYSCORE')
end

-- The fields the slots starting at `starts` hold: their hashes' and what options pack beside them.
local function span_fields(slots_key, starts)
  local fields = 0
  for _, start in ipairs(starts) do
    fields = fields + redis.call('HLEN', window.slot_key_of(slots_key, start)) + packed_of(slots_key, start, false)
  end
  return fields
end

-- The keys of a span staged by span_stage under `token` (one filtered read's), beside the window's slots
-- in its hash tag: its state hash, the summed listing, its items' distinct actors, the pairs counted,
-- and copies of the span's slots and contributions (unit k);
-- and the window's registry of staged reads (token -> when it lapses, ms).
local function staged_keys(slots_key, token)
  local base = keyspace.sibling_key(slots_key, 'slots', 'staged:' .. token .. ':')
  return { state = base .. 'state', sums = base .. 'sums', counts = base .. 'counts', pairs = base .. 'pairs',
    unit = function(k) return base .. 'u:' .. k end,
    registry = keyspace.sibling_key(slots_key, 'slots', 'staged') }
end

-- Per item, the sum of the span's slots (`starts`, else span_starts), and the fields read; nil (and
-- the fields the span holds) when they are more than `most_fields`.
local function span_sums(slots_key, now_sec, interval_sec, span_sec, most_fields, starts)
  starts = starts or span_starts(slots_key, now_sec, interval_sec, span_sec)
  local fields = span_fields(slots_key, starts)
  if fields > most_fields then return nil, fields end
  local sums = {}
  for _, start in ipairs(starts) do
    for _, entries in ipairs({ redis.call('HGETALL', window.slot_key_of(slots_key, start)), packed_of(slots_key, start, true) }) do
      for i = 1, #entries, 2 do sums[entries[i]] = (sums[entries[i]] or 0) + tonumber(entries[i + 1]) end
    end
  end
  return sums, fields
end

-- The sums a span lists: without its board's exceptions (order_lib's exceptions_asked, moderation:
-- the hidden items, or on a review board all but the allowed ones), so pages, counts and ranks close
-- the gaps they leave exactly as a window's do. `exceptions` nil (nobody moderated): `sums` itself.
-- Costs one step per exception (the option bounds how many a shard holds), never one per summed item.
local function span_shown(sums, exceptions)
  if not exceptions then return sums end
  if exceptions.only then
    local shown = {}
    for _, item in ipairs(exceptions.items) do shown[item] = sums[item] end
    return shown
  end
  for _, item in ipairs(exceptions.items) do sums[item] = nil end
  return sums
end

-- Whether (score, item) is placed before (other_score, other_item): in board order, or in its
-- reverse when `reverse`.
local function placed_before(score, item, other_score, other_item, reverse)
  if reverse then return comes_before(other_score, other_item, score, item) end
  return comes_before(score, item, other_score, other_item)
end

-- Inserts (item, score) into `rows` (kept in board order, or its reverse when `reverse`), keeping at
-- most `most` rows: a bounded selection, so a page of a span costs n log(page), not a sort of n rows;
-- a row that does not make it is refused before anything is allocated for it.
local function keep_best(rows, item, score, most, reverse)
  local last = rows[#rows]
  if #rows >= most and not placed_before(score, item, last.score, last.item, reverse) then return end
  local lo, hi = 1, #rows + 1
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if placed_before(rows[mid].score, rows[mid].item, score, item, reverse) then lo = mid + 1 else hi = mid end
  end
  table.insert(rows, lo, { item = item, score = score })
  if #rows > most then rows[#rows] = nil end
end

-- How many listed items score above `score`; sets figures.listed to how many are listed.
local function count_listed(figures, sums, score)
  local above, listed = 0, 0
  for _, sum in pairs(sums) do
    if sum > 0 then
      listed = listed + 1
      if sum > score then above = above + 1 end
    end
  end
  figures.listed = listed
  return above
end

-- Rows as (item, score) pairs, flat.
local function flat_rows(rows)
  local flat = {}
  for _, row in ipairs(rows) do
    flat[#flat + 1] = row.item
    flat[#flat + 1] = row.score
  end
  return flat
end

-- The first `most` listed rows of `sums` in board order, flat (item, score, ...). The distinct sums are sorted as numbers (by
-- table.sort's own comparison, no Lua function called per step) and only the items sharing a sum are
-- sorted by id: a page of a span costs one sort of its sums, not a place found and made in a page-long
-- list for each item (keep_best, whose shifts made a page of 1 000 over 2 000 items cost ~20 ms).
local function best_rows(sums, most)
  local by_sum, distinct = {}, {}
  for item, sum in pairs(sums) do
    if sum > 0 then
      local held = by_sum[sum]
      if held == nil then
        by_sum[sum], distinct[#distinct + 1] = item, sum
      elseif type(held) == 'table' then
        held[#held + 1] = item
      else
        by_sum[sum] = { held, item }
      end
    end
  end
  table.sort(distinct)
  local rows, count = {}, 0
  for i = #distinct, 1, -1 do
    if count >= most then break end
    local sum, held = distinct[i], by_sum[distinct[i]]
    -- Most sums are one item's: its row without a table of its own.
    if type(held) ~= 'table' then
      rows[2 * count + 1], rows[2 * count + 2], count = held, sum, count + 1
    else
      table.sort(held, id_after)
      for k = 1, math.min(#held, most - count) do
        rows[2 * count + 1], rows[2 * count + 2], count = held[k], sum, count + 1
      end
    end
  end
  return rows
end

-- The figures (read_span's named reply) of a page of the span's listing.
local function span_head(figures, sums, offset, count)
  local best, page = best_rows(sums, offset + count), {}
  for i = 2 * offset + 1, #best do page[#page + 1] = best[i] end
  figures.higher_than_first = count_listed(figures, sums, page[2] or math.huge)
  figures.rows = page
  return figures
end

local function span_count(figures, sums, item, score)
  figures.above = count_listed(figures, sums, score)
  figures.score = sums[item] or 0 -- as a window's read answers it: a sum at or below 0 is not ranked
  return figures
end

-- The `radius` rows just before (score, item) in board order and the `radius` just after it.
local function span_near(figures, sums, pivot, radius)
  local before, after, position = {}, {}, 0
  for item, sum in pairs(sums) do
    if sum > 0 and item ~= pivot.item then
      if comes_before(sum, item, pivot.score, pivot.item) then
        position = position + 1
        keep_best(before, item, sum, radius, true)
      else
        keep_best(after, item, sum, radius, false)
      end
    end
  end
  local first = before[#before]
  figures.score, figures.position = pivot.score, position
  figures.above = count_listed(figures, sums, pivot.score)
  figures.above_first = first and count_listed(figures, sums, first.score) or figures.above
  figures.before = #before
  local rows = {}
  for i = #before, 1, -1 do rows[#rows + 1] = before[i] end
  for _, row in ipairs(after) do rows[#rows + 1] = row end
  figures.rows = flat_rows(rows)
  return figures
end

span.comes_before = comes_before
span.span_starts = span_starts
span.span_sums = span_sums
span.span_fields = span_fields
span.staged_keys = staged_keys
span.packed_of = packed_of
span.packed_key_of = packed_key_of
span.packed_take = packed_take
span.span_shown = span_shown
span.best_rows = best_rows
span.span_head = span_head
span.span_count = span_count
span.span_near = span_near
