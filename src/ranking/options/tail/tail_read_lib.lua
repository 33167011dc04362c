-- module: tail_read
-- requires: call_state, tail
-- tail_read_lib: a `tail` board's reads (tail_lib prunes), the rows of a page each with the most it
-- may have lost to pruned slots (tail_read.best_rows, for tail_top). A part is read in chunks of
-- ROWS_PER_CHUNK rows, so a call whose filter bits reach a few rows reads about as many, not a whole part.
-- KEYS: 0 (siblings of the window's slots key: "<base>tail" hash, "<base>tailrows", "<base>tailpage:<n>")

-- The live pruned slots of a window (start, D, filter, whether its pruning is done), oldest first, H
-- (their D summed) and the newest slot pruned to its end.
local function pruned_slots(slots_key)
  local base = tail.base_of(slots_key)
  local flat = redis.call('HGETALL', base .. 'tail')
  local fields = {}
  for i = 1, #flat, 2 do fields[flat[i]] = flat[i + 1] end
  local upto = tonumber(fields.upto) or -1
  local slots, hidden = {}, 0
  for i = 1, #flat, 2 do
    local start = string.match(flat[i], '^d:(.*)$')
    local most = tonumber(flat[i + 1])
    if start and most > 0 then
      slots[#slots + 1] = { start = tonumber(start), id = start, key = base .. 'tailbf:' .. start,
        bits = tonumber(fields['b:' .. start]), most = most, done = tonumber(start) <= upto }
      hidden = hidden + most
    end
  end
  table.sort(slots, function(a, b) return a.start < b.start end)
  return slots, hidden, upto, fields.upto
end

-- A row cache entry ("<newest finished slot looked at>|<starts of the finished slots that may hold
-- the item>", or false): a finished slot's filter no longer changes, so only slots finished since,
-- and the one being pruned, are looked at again. Its starts stay strings, as the tail hash names them
-- (a row may list every live slot: converting each to a number and back cost a call ~2 M instructions).
local function cached_hits(kept)
  local hits = {}
  if not kept then return -1, hits end
  local at, list = string.match(kept, '^([^|]*)|(.*)$')
  for start in string.gmatch(list, '[^,]+') do hits[start] = true end
  return tonumber(at), hits
end

-- What `item` may have lost to the pruned slots: the D of each whose filter may hold it (nil when the
-- call's filter bits, `looks.left`, ran out first), and its new cache entry (nil: unchanged). Slots
-- are looked at oldest first, so the next call goes on from what this one learnt.
local function dropped_bound(win, kept, item, looks)
  local seen, hits = cached_hits(kept)
  local bound, hashes, found, learnt, stopped = 0, nil, {}, nil, false
  for _, slot in ipairs(win.slots) do
    local hit = hits[slot.id]
    if not slot.done or slot.start > seen then
      stopped = looks.left <= 0
      if stopped then break end
      hashes = hashes or tail.hashes_of(item)
      local read
      hit, read = tail.may_hold(slot.key, slot.bits, hashes)
      looks.left = looks.left - read
      if slot.done then learnt = slot.id end
    end
    if hit then
      bound = bound + slot.most
      if slot.done then found[#found + 1] = slot.id end
    end
  end
  if not stopped and win.upto >= 0 and win.upto ~= seen then learnt = win.upto_id end
  local entry = learnt and learnt .. '|' .. table.concat(found, ',') or nil
  if stopped then return nil, entry end
  return bound, entry
end

-- Rows one call reads, bounds and answers at most: a page deeper than that is answered part by part,
-- each row once, so no call pays for the whole page (2 064 rows: 5 calls or more).
local ROWS_PER_CALL = 256
-- Rows one read of a part takes: a call whose filter bits reach a few rows reads about that many.
local ROWS_PER_CHUNK = 32
-- Weight one call bounds at most, a row weighing ROW_WEIGHT plus one a pruned slot of the window: a
-- row's bound parses its cached list of slots, looks up each, and is learnt again (its entry rebuilt
-- and written) whenever pruning finished a slot since. Measured on closed minutes of 300 items seen
-- once each, pruning under way (bench/tail-slots-instructions.ts): 134 rows over 5 pruned slots 10.2 M
-- instructions, 80 over 8 8.4 M, 134 over 19 13.1 M; with no bound walked, 256 rows 4.7 M.
local ROW_WEIGHT = 30
local WEIGHT_PER_CALL = 3000
local PAGE_KEPT_MS = 60000 -- a kept page's life: the read's next calls follow at once

-- The row cache entries of `items` (false or nil: none): read whole while a listpack
-- (hash-max-listpack-entries, 512), where an HMGET scans it all a field, once a call (`win.whole`),
-- else by HMGET. A call's chunks are distinct rows: what an earlier chunk cached is none of theirs.
local function cache_entries(win, items)
  local kept = {}
  if win.cached == 0 or #items == 0 then return kept end
  if win.whole == nil then
    win.whole = false
    if redis.call('OBJECT', 'ENCODING', win.cache_key) == 'listpack' then
      local flat, entries = redis.call('HGETALL', win.cache_key), {}
      for i = 1, #flat, 2 do entries[flat[i]] = flat[i + 1] end
      win.whole = entries
    end
  end
  if win.whole then
    for i, item in ipairs(items) do kept[i] = win.whole[item] or false end
    return kept
  end
  return redis.call('HMGET', win.cache_key, unpack(items))
end

-- A part's listed items (scores above 0: a sum board's rule), and whether the page ended in it.
local function listed_of(part)
  local items = {}
  for i = 1, #part, 2 do
    if tonumber(part[i + 1]) <= 0 then return items, true end
    items[#items + 1] = part[i]
  end
  return items, false
end

-- A chunk's rows (item, score, dropped, ...) with their bounds, up to the first row whose bound the
-- call's filter bits (`budget.left`) did not reach (with `looks` 0, every row: H where the cache knows no
-- bound). What it learnt is cached in one HSET. Answers the rows, the rows answered and whether it stopped.
local function bound_rows(part, items, win, looks, budget)
  local kept = #win.slots > 0 and cache_entries(win, items) or {}
  local rows, n, learnt = {}, 0, {}
  for i, item in ipairs(items) do
    local dropped, entry = 0, nil
    if #win.slots > 0 then dropped, entry = dropped_bound(win, kept[i], item, budget) end
    if entry then learnt[#learnt + 1], learnt[#learnt + 2] = item, entry end
    if dropped == nil and looks > 0 then
      if #learnt > 0 then redis.call('HSET', win.cache_key, unpack(learnt)) end
      return rows, i - 1, true
    end
    rows[n + 1], rows[n + 2], rows[n + 3], n = item, part[2 * i], dropped or win.hidden, n + 3
  end
  if #learnt > 0 then redis.call('HSET', win.cache_key, unpack(learnt)) end
  return rows, #items, false
end

-- Up to `most` rows of a listing from its row `from` (`range(first, last)`: ZREVRANGE WITHSCORES), in
-- chunks while the call's filter bits reach them. Answers the rows, the rows answered, and whether the
-- part ended short: the listing ran out or its scores reached 0 (`out`), or the bits ran out (`stopped`).
local function answer_part(win, range, from, most, looks)
  local rows, answered, budget = {}, 0, { left = looks }
  while answered < most do
    local asked = math.min(ROWS_PER_CHUNK, most - answered)
    local part = range(from + answered, from + answered + asked - 1)
    local items, ended = listed_of(part)
    local chunk, took, stopped = bound_rows(part, items, win, looks, budget)
    for i = 1, #chunk do rows[#rows + 1] = chunk[i] end
    answered = answered + took
    if stopped then return rows, answered, { stopped = true } end
    if ended or #part < 2 * asked then return rows, answered, { out = true } end
  end
  return rows, answered, {}
end

-- Rows one call of this window answers at most (WEIGHT_PER_CALL): 96 over one pruned slot, 31 over 64.
local function rows_per_call(win)
  if #win.slots == 0 then return ROWS_PER_CALL end
  return math.min(ROWS_PER_CALL, math.floor(WEIGHT_PER_CALL / (ROW_WEIGHT + #win.slots)))
end

-- The window's pruned slots, H and row cache, the cache emptied beyond 4 reads' rows.
local function window_of(slots_key, limit)
  local slots, hidden, upto, upto_id = pruned_slots(slots_key)
  local base = tail.base_of(slots_key)
  local cache_key = base .. 'tailrows'
  local cached = redis.call('HLEN', cache_key)
  if cached > 4 * limit then cached = redis.call('DEL', cache_key) - 1 end
  return { base = base, slots = slots, hidden = hidden, upto = upto, upto_id = upto_id, cache_key = cache_key,
    cached = cached }
end

-- Keeps rows `first` to `limit` - 1 of the results (ZRANGESTORE: the page as this call reads it) for
-- the read's next calls; answers the kept page's name (nil: no row left).
local function keep_page(win, top_key, first, limit)
  local token = tostring(redis.call('HINCRBY', win.base .. 'tail', 'pages', 1))
  local page_key = win.base .. 'tailpage:' .. token
  if redis.call('ZRANGESTORE', page_key, top_key, first, limit - 1, 'REV') == 0 then return nil end
  redis.call('PEXPIRE', page_key, PAGE_KEPT_MS)
  return token
end

-- A tail read's call: the next part of the window's `limit` best rows (item, score, dropped bound, ...)
-- and H. `read.page` names the page the read keeps ('': the read begins), `read.from` its row to go on
-- from. A page of more than rows_per_call rows is kept whole by the first call, which answers none; a
-- part ends at rows_per_call rows or before the first row whose bound the call's `read.looks` filter bits
-- did not reach (a first call then keeps the rest). Answers the rows, H, and the page and row the next
-- call goes on from (page nil: the read is done). A first call that pruned (settle_window: `tail.pruned_seq`
-- is the call's) keeps the page too when its rows would need looks, so no call pays for pruning and looks.
local function best_rows(slots_key, top_key, read)
  local win = window_of(slots_key, read.limit)
  local pruned = tail.pruned_seq == call_state.CALL.seq and read.looks > 0 and #win.slots > 0
  local most = rows_per_call(win)
  if read.page == '' and (pruned or math.min(read.limit, redis.call('ZCARD', top_key)) > most) then
    return {}, win.hidden, keep_page(win, top_key, 0, read.limit), 0
  end
  local page_key = read.page ~= '' and win.base .. 'tailpage:' .. read.page or nil
  if page_key and redis.call('EXISTS', page_key) == 0 then error({ err = 'TB_STALE_CONFIG the tail page read is gone' }) end
  local source = page_key or top_key
  local function range(first, last) return redis.call('ZREVRANGE', source, first, last, 'WITHSCORES') end
  if not page_key then
    local rows, answered, short = answer_part(win, range, 0, math.min(read.limit, most), read.looks)
    if not short.stopped then return rows, win.hidden, nil, 0 end
    return rows, win.hidden, keep_page(win, top_key, answered, read.limit), 0
  end
  local rows, answered, short = answer_part(win, range, read.from, most, read.looks)
  local next_row = read.from + answered
  if not short.out and next_row < redis.call('ZCARD', page_key) then return rows, win.hidden, read.page, next_row end
  redis.call('UNLINK', page_key)
  return rows, win.hidden, nil, 0
end

tail_read.best_rows = best_rows
