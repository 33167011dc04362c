-- module: tail
-- requires: call_state, hooks, keyspace, stored_windows
-- tail_lib: `tail` boards, a board option (src/ranking/options/tail/): the long tail in bounded memory.
-- Once a slot of a rolling window has closed (the current slot is later), its items counting less than
-- `below` there (and more than 0, outside the window's `exact` best) leave the slot and the results:
-- the slot keeps D, the most any one item lost there, and a Bloom filter of the items it dropped. So an
-- item's true count lies in [listed, listed + the D of the live slots whose filter may hold it], and
-- the shard's hidden mass H (the sum of the live slots' D) bounds the count of any item it lists not.
-- docs/scaling.md states the bound and when a row is exact.
-- KEYS: 0 (siblings of the window's slots key: "<base>tail" hash, "<base>tailbf:<start>", "<base>tailpage:<n>")
-- Config hash fields: tailExact (K), tailBelow (T); absent: the option is off.
-- "<base>tail": d:<start> -> D of a pruned (or being pruned) slot; cur, cursor: the slot being pruned
-- and its HSCAN cursor; upto: the newest slot pruned to its end (tail_pack_lib then packs it); pages:
-- the pages kept so far, "<base>tailpage:<n>" the rest of a page a read answers part by part (best_rows).
-- tail.pruned_seq: the call_state.CALL.seq of the last call that pruned (best_rows asks whether it is its own).

call_state.config_field_add('tailExact', 'tail')
call_state.config_field_add('tailBelow', 'tail')

-- Bits of a slot's filter per field the slot held when its pruning began, and bits set per item:
-- a false "may hold" about 2.4 % of the time with every field dropped, less otherwise.
local BITS_PER_FIELD = 8
local HASHES = 4
-- Fields one HSCAN step asks for at most; a step asks no more than the call's expiry budget has left
-- (a hashtable answers about that many; a listpack slot, small, answers whole).
local SCAN_COUNT = 64
-- Budget units a dropped field weighs: its ~12 commands (ZREVRANK, the filter's GETBITs, HDEL, 4 SETBITs,
-- ZINCRBY, ZREM, the results hooks) against the 0-5 (ZREVRANK, GETBITs) of a field only looked at (1 unit).
local DROP_UNITS = 3

local function base_of(slots_key)
  return keyspace.sibling_key(slots_key, 'slots', '')
end

local function settings_of(cfg_key)
  local exact = call_state.config_field(cfg_key, 'tailExact')
  if not exact then return nil end
  return tonumber(exact), tonumber(call_state.config_field(cfg_key, 'tailBelow'))
end

-- The item's four 32-bit hashes (from one SHA-1 of the id); a filter of `bits` bits sets them mod bits.
local function hashes_of(item)
  local digest = redis.sha1hex(item)
  local at = {}
  for h = 0, HASHES - 1 do at[h + 1] = tonumber(string.sub(digest, 8 * h + 1, 8 * h + 8), 16) end
  return at
end

-- Whether the filter may hold the item, and the bits read (each a GETBIT; it stops at the first 0).
local function may_hold(filter_key, bits, hashes)
  for read, hash in ipairs(hashes) do
    if redis.call('GETBIT', filter_key, hash % bits) == 0 then return false, read end
  end
  return true, #hashes
end

-- Starts pruning the oldest closed slot not yet pruned (before `current`); false when there is none.
local function begin_slot(base, slots_key, current)
  local upto = redis.call('HGET', base .. 'tail', 'upto') or '-inf'
  local after = upto == '-inf' and upto or '(' .. upto
  local next_slot = redis.call('ZRANGEBYSCORE', slots_key, after, '(' .. current, 'LIMIT', 0, 1)[1]
  if not next_slot then return false end
  local size = redis.call('HLEN', base .. 'slot:' .. next_slot)
  redis.call('HSET', base .. 'tail', 'cur', next_slot, 'cursor', '0', 'd:' .. next_slot, '0',
    'b:' .. next_slot, math.max(64, BITS_PER_FIELD * size))
  return next_slot
end

-- Whether `item`, counting `count` in the slot, leaves it: a tail count, not among the window's `exact`
-- best now, and not possibly dropped here before (a late event re-added it: D bounds one drop). Answers
-- its hashes when it leaves (one SHA-1 for the look and the drop).
local function drops(ctx, item, count)
  if count <= 0 or count >= ctx.below then return false end
  local rank = redis.call('ZREVRANK', ctx.top_key, item)
  if rank and rank < ctx.exact then return false end
  local hashes = hashes_of(item)
  return not may_hold(ctx.filter_key, ctx.bits, hashes) and hashes
end

local function drop(ctx, item, count, hashes)
  redis.call('HDEL', ctx.slot_key, item)
  for _, hash in ipairs(hashes) do redis.call('SETBIT', ctx.filter_key, hash % ctx.bits, 1) end
  local left = tonumber(redis.call('ZINCRBY', ctx.top_key, -count, item))
  if left == 0 then redis.call('ZREM', ctx.top_key, item) end
  local changed = call_state.hooks_of_top(ctx.top_key).results_changed
  for i = 1, #changed do changed[i](ctx.top_key, item, left) end
  if count > ctx.most then ctx.most = count end
end

-- One HSCAN step of the slot being pruned, of as many fields as `wanted` units pay when all are dropped;
-- answers the units it spent (a field looked at 1, a dropped one DROP_UNITS) and whether the slot is done.
local function prune_step(ctx, cursor, wanted)
  local asked = math.max(1, math.min(SCAN_COUNT, math.ceil(wanted / DROP_UNITS)))
  local scan = redis.call('HSCAN', ctx.slot_key, cursor, 'COUNT', asked)
  local entries, units = scan[2], 0
  for i = 1, #entries, 2 do
    local count = tonumber(entries[i + 1])
    local hashes = drops(ctx, entries[i], count)
    if hashes then drop(ctx, entries[i], count, hashes) end
    units = units + (hashes and DROP_UNITS or 1)
  end
  redis.call('HSET', ctx.tail_key, 'cursor', scan[1])
  return math.max(1, units), scan[1] == '0'
end

local function finish_slot(ctx)
  if ctx.most == 0 then
    redis.call('HDEL', ctx.tail_key, 'd:' .. ctx.start, 'b:' .. ctx.start)
    redis.call('DEL', ctx.filter_key)
  else
    redis.call('HSET', ctx.tail_key, 'd:' .. ctx.start, ctx.most)
  end
  redis.call('HSET', ctx.tail_key, 'upto', ctx.start)
  redis.call('HDEL', ctx.tail_key, 'cur', 'cursor')
end

local function context(base, top_key, start, exact, below)
  local tail_key = base .. 'tail'
  local stored = redis.call('HMGET', tail_key, 'd:' .. start, 'b:' .. start)
  return { tail_key = tail_key, top_key = top_key, slot_key = base .. 'slot:' .. start, start = start,
    filter_key = base .. 'tailbf:' .. start, bits = tonumber(stored[2]), most = tonumber(stored[1]) or 0,
    exact = exact, below = below }
end

-- Hook window_settled: prunes closed slots of a tail board's rolling window within `budget` fields.
-- Answers the budget left and when it is next due (unix s; false: pruning goes on at the next call).
local function settle_window(slots_key, top_key, now_sec, interval_sec, budget)
  local exact, below = settings_of(call_state.cfg_key_of_top(top_key))
  if not exact or string.find(slots_key, '~', 1, true) then return budget, nil end
  local current = now_sec - now_sec % interval_sec
  local base = base_of(slots_key)
  while budget > 0 do
    local cur = redis.call('HMGET', base .. 'tail', 'cur', 'cursor')
    local start, cursor = cur[1], cur[2]
    if not start then
      start, cursor = begin_slot(base, slots_key, current), '0'
      if not start then return budget, current + interval_sec end
    end
    local ctx = context(base, top_key, start, exact, below)
    local done = false
    tail.pruned_seq = call_state.CALL.seq
    while budget > 0 and not done do
      local looked
      looked, done = prune_step(ctx, cursor, budget)
      budget, cursor = budget - looked, redis.call('HGET', ctx.tail_key, 'cursor')
    end
    if ctx.most > 0 then redis.call('HSET', ctx.tail_key, 'd:' .. start, ctx.most) end
    if done then finish_slot(ctx) end
  end
  return budget, false
end

-- Hook slot_expired: the slot's bound and filter go with it.
local function slot_expired(slots_key, start)
  local base = base_of(slots_key)
  if redis.call('EXISTS', base .. 'tail') == 0 then return end
  redis.call('HDEL', base .. 'tail', 'd:' .. start, 'b:' .. start)
  redis.call('DEL', base .. 'tailbf:' .. start)
  if redis.call('HGET', base .. 'tail', 'cur') == tostring(start) then redis.call('HDEL', base .. 'tail', 'cur', 'cursor') end
end

-- The keys tail_lib keeps of the window "<base>": its filters, row cache and state.
local function window_keys(base)
  local keys = {}
  for _, field in ipairs(redis.call('HKEYS', base .. 'tail')) do
    local start = string.match(field, '^b:(.*)$')
    if start then keys[#keys + 1] = base .. 'tailbf:' .. start end
  end
  keys[#keys + 1], keys[#keys + 2] = base .. 'tail', base .. 'tailrows'
  return keys
end

local function window_dropped(base)
  redis.call('UNLINK', unpack(window_keys(base)))
end

-- A deleted board's keys of one kind, one window at a time within `budget` (a board_dropped step):
-- `held(base)` tells whether the window "<base>" holds any, `keys_of(base)` names them. Answers the
-- budget left and whether none is left.
local function drop_board_windows(cfg_key, drop_key, budget, held, keys_of)
  for _, w in ipairs(stored_windows.decode_windows(redis.call('HGET', drop_key, 'windows'))) do
    local base = keyspace.sibling_key(cfg_key, 'cfg', w.name .. ':')
    if held(base) then
      if budget <= 0 then return budget, false end
      local keys = keys_of(base)
      redis.call('UNLINK', unpack(keys))
      budget = budget - #keys
    end
  end
  return budget, true
end

local function holds_tail(base)
  return redis.call('EXISTS', base .. 'tail', base .. 'tailrows') > 0
end

-- Hook board_dropped: a deleted board's windows' tail keys (a few per live slot).
local function tail_board_dropped(cfg_key, drop_key, budget)
  return drop_board_windows(cfg_key, drop_key, budget, holds_tail, window_keys)
end

-- The live pruned slots of a window (start, D, filter, whether its pruning is done), oldest first, H
-- (their D summed) and the newest slot pruned to its end.
local function pruned_slots(slots_key)
  local base = base_of(slots_key)
  local flat = redis.call('HGETALL', base .. 'tail')
  local fields = {}
  for i = 1, #flat, 2 do fields[flat[i]] = flat[i + 1] end
  local upto = tonumber(fields.upto) or -1
  local slots, hidden = {}, 0
  for i = 1, #flat, 2 do
    local start = string.match(flat[i], '^d:(.*)$')
    local most = tonumber(flat[i + 1])
    if start and most > 0 then
      slots[#slots + 1] = { start = tonumber(start), key = base .. 'tailbf:' .. start, bits = tonumber(fields['b:' .. start]),
        most = most, done = tonumber(start) <= upto }
      hidden = hidden + most
    end
  end
  table.sort(slots, function(a, b) return a.start < b.start end)
  return slots, hidden, upto
end

-- A row cache entry ("<newest finished slot looked at>|<starts of the finished slots that may hold
-- the item>", or false): a finished slot's filter no longer changes, so only slots finished since,
-- and the one being pruned, are looked at again.
local function cached_hits(kept)
  local hits = {}
  if not kept then return -1, hits end
  local at, list = string.match(kept, '^([^|]*)|(.*)$')
  for start in string.gmatch(list, '[^,]+') do hits[tonumber(start)] = true end
  return tonumber(at), hits
end

-- What `item` may have lost to the pruned slots: the D of each whose filter may hold it (nil when the
-- call's filter bits, `looks.left`, ran out first), and its new cache entry (nil: unchanged). Slots
-- are looked at oldest first, so the next call goes on from what this one learnt.
local function dropped_bound(slots, upto, kept, item, looks)
  local seen, hits = cached_hits(kept)
  local bound, hashes, found, learnt, stopped = 0, nil, {}, seen, false
  for _, slot in ipairs(slots) do
    local hit = hits[slot.start]
    if not slot.done or slot.start > seen then
      stopped = looks.left <= 0
      if stopped then break end
      hashes = hashes or hashes_of(item)
      local read
      hit, read = may_hold(slot.key, slot.bits, hashes)
      looks.left = looks.left - read
      if slot.done then learnt = slot.start end
    end
    if hit then
      bound = bound + slot.most
      if slot.done then found[#found + 1] = slot.start end
    end
  end
  if not stopped then learnt = upto end
  local entry = learnt ~= seen and learnt .. '|' .. table.concat(found, ',') or nil
  if stopped then return nil, entry end
  return bound, entry
end

local CACHE_CHUNK = 1000 -- values one HMGET or HSET of the row cache takes (Lua's unpack takes a few thousand)
-- Rows one call reads, bounds and answers at most: a page deeper than that is answered part by part,
-- each row once, so no call pays for the whole page (2 064 rows: 5 calls or more).
local ROWS_PER_CALL = 256
local PAGE_KEPT_MS = 60000 -- a kept page's life: the read's next calls follow at once

-- The row cache entries of `items` (false or nil: none), the cache holding `cached` entries: read whole while
-- a listpack (hash-max-listpack-entries, 512), where an HMGET scans it all a field, else in HMGETs of CACHE_CHUNK.
local function cache_entries(cache_key, items, cached)
  local kept = {}
  if cached == 0 then return kept end
  if redis.call('OBJECT', 'ENCODING', cache_key) == 'listpack' then
    local flat, entries = redis.call('HGETALL', cache_key), {}
    for i = 1, #flat, 2 do entries[flat[i]] = flat[i + 1] end
    for i, item in ipairs(items) do kept[i] = entries[item] or false end
    return kept
  end
  for first = 1, #items, CACHE_CHUNK do
    local chunk = redis.call('HMGET', cache_key, unpack(items, first, math.min(#items, first + CACHE_CHUNK - 1)))
    for j, entry in ipairs(chunk) do kept[first + j - 1] = entry end
  end
  return kept
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

-- The part's rows (item, score, dropped, ...) with their bounds, up to the first row whose bound the
-- call's `looks` filter bits did not reach (with `looks` 0, every row: H where the cache knows no bound).
-- What the call learnt is cached in HSETs of CACHE_CHUNK. Answers the rows and the page rows answered.
local function bound_rows(part, items, win, looks)
  local kept = #win.slots > 0 and cache_entries(win.cache_key, items, win.cached) or {}
  local rows, n, learnt, budget, answered = {}, 0, {}, { left = looks }, #items
  for i, item in ipairs(items) do
    local dropped, entry = 0, nil
    if #win.slots > 0 then dropped, entry = dropped_bound(win.slots, win.upto, kept[i], item, budget) end
    if entry then learnt[#learnt + 1], learnt[#learnt + 2] = item, entry end
    if dropped == nil and looks > 0 then answered = i - 1; break end
    rows[n + 1], rows[n + 2], rows[n + 3], n = item, part[2 * i], dropped or win.hidden, n + 3
  end
  for first = 1, #learnt, CACHE_CHUNK do
    redis.call('HSET', win.cache_key, unpack(learnt, first, math.min(#learnt, first + CACHE_CHUNK - 1)))
  end
  return rows, answered
end

-- The window's pruned slots, H and row cache, the cache emptied beyond 4 reads' rows.
local function window_of(slots_key, limit)
  local slots, hidden, upto = pruned_slots(slots_key)
  local base = base_of(slots_key)
  local cache_key = base .. 'tailrows'
  local cached = redis.call('HLEN', cache_key)
  if cached > 4 * limit then cached = redis.call('DEL', cache_key) - 1 end
  return { base = base, slots = slots, hidden = hidden, upto = upto, cache_key = cache_key, cached = cached }
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
-- from. A page of more than ROWS_PER_CALL rows is kept whole by the first call, which answers none; a
-- part ends at ROWS_PER_CALL rows or before the first row whose bound the call's `read.looks` filter bits
-- did not reach (a first call then keeps the rest). Answers the rows, H, and the page and row the next
-- call goes on from (page nil: the read is done). A first call that pruned (settle_window: `tail.pruned_seq`
-- is the call's) keeps the page too when its rows would need looks, so no call pays for pruning and looks.
local function best_rows(slots_key, top_key, read)
  local win = window_of(slots_key, read.limit)
  local pruned = tail.pruned_seq == call_state.CALL.seq and read.looks > 0 and #win.slots > 0
  if read.page == '' and (pruned or math.min(read.limit, redis.call('ZCARD', top_key)) > ROWS_PER_CALL) then
    return {}, win.hidden, keep_page(win, top_key, 0, read.limit), 0
  end
  local page_key = read.page ~= '' and win.base .. 'tailpage:' .. read.page or nil
  if page_key and redis.call('EXISTS', page_key) == 0 then error({ err = 'TB_STALE_CONFIG the tail page read is gone' }) end
  local part = page_key and redis.call('ZREVRANGE', page_key, read.from, read.from + ROWS_PER_CALL - 1, 'WITHSCORES')
    or redis.call('ZREVRANGE', top_key, 0, math.min(read.limit, ROWS_PER_CALL) - 1, 'WITHSCORES')
  local items, ended = listed_of(part)
  local rows, answered = bound_rows(part, items, win, read.looks)
  if not page_key then
    if ended or answered * 2 == #part then return rows, win.hidden, nil, 0 end
    return rows, win.hidden, keep_page(win, top_key, answered, read.limit), 0
  end
  local next_row = read.from + answered
  if not ended and next_row < redis.call('ZCARD', page_key) then return rows, win.hidden, read.page, next_row end
  redis.call('UNLINK', page_key)
  return rows, win.hidden, nil, 0
end

local function tail_planned(cfg_key, settings, reset, plan)
  local stored = nil
  local exact = plan and redis.call('HGET', cfg_key, 'tailExact')
  if exact then stored = { exact = tonumber(exact), below = tonumber(redis.call('HGET', cfg_key, 'tailBelow')) } end
  if settings.tail == nil then settings.tail = stored end
  local now = settings.tail
  local same = (now == nil and stored == nil) or (now and stored and now.exact == stored.exact and now.below == stored.below)
  if not plan or same then return end
  plan.changed, plan.drop_all = true, true
  if not reset then plan.problems[#plan.problems + 1] = 'tail would change' end
end

local function tail_differs(cfg_key, settings)
  local exact = redis.call('HGET', cfg_key, 'tailExact')
  local now = settings.tail
  if not now then return exact ~= false end
  return tonumber(exact) ~= now.exact or tonumber(redis.call('HGET', cfg_key, 'tailBelow')) ~= now.below
end

local function tail_stored(cfg_key, settings)
  local now = settings.tail
  if now then
    redis.call('HSET', cfg_key, 'tailExact', now.exact, 'tailBelow', now.below)
  else
    redis.call('HDEL', cfg_key, 'tailExact', 'tailBelow')
  end
  return now ~= nil
end

tail.best_rows = best_rows
tail.drop_board_windows = drop_board_windows

hooks.register_all('tail', { 'window_settled', settle_window, 'slot_expired', slot_expired,
  'window_dropped', window_dropped, 'board_dropped', tail_board_dropped, 'config_planned', tail_planned,
  'config_differs', tail_differs, 'config_stored', tail_stored })
