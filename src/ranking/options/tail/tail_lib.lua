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
-- the pages kept so far, "<base>tailpage:<n>" the rest of a page a read answers part by part (tail_read_lib's best_rows).
-- tail.pruned_seq: the call_state.CALL.seq of the last call that pruned (tail_read_lib asks whether it is its own).

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
  redis.call('HSET', base .. 'tail', 'cur', next_slot, 'cursor', '0', 'skip', 0, 'd:' .. next_slot, '0',
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

-- The fields of one HSCAN step of the slot being pruned, where to begin in them and the fields before
-- that its earlier steps kept (false: none to skip), and the cursor after them. A small slot (a
-- listpack, up to hash-max-listpack-entries fields) answers whole whatever COUNT asks, with cursor 0:
-- such a step goes on where the last stopped, past the `skip` fields earlier steps looked at and kept
-- (HDEL leaves the others in order; a late field lands after them). The cursor stays a cursor ("0")
-- and the skip is a field of its own, so a library version before this one reads a cursor it can
-- scan. A hashtable answered whole may reorder between steps: some fields are then looked at twice
-- or not at all, which only prunes less (a field kept is an exact count).
local function scan_step(ctx, cursor, asked)
  local skip = cursor == '0' and tonumber(redis.call('HGET', ctx.tail_key, 'skip')) or 0
  local scan = redis.call('HSCAN', ctx.slot_key, cursor, 'COUNT', asked)
  local whole = cursor == '0' and scan[1] == '0'
  return scan[2], whole and 2 * skip + 1 or 1, whole and skip, scan[1]
end

-- One step of the slot being pruned: its fields while `wanted` units pay for them (a field looked at 1,
-- a dropped one DROP_UNITS). Answers the units it spent and whether the slot is done.
local function prune_step(ctx, cursor, wanted)
  local asked = math.max(1, math.min(SCAN_COUNT, math.ceil(wanted / DROP_UNITS)))
  local entries, at, kept, next_cursor = scan_step(ctx, cursor, asked)
  local skipped, units = kept, 0
  while at < #entries and not (kept and units >= wanted) do
    local count = tonumber(entries[at + 1])
    local hashes = drops(ctx, entries[at], count)
    if hashes then drop(ctx, entries[at], count, hashes) elseif kept then kept = kept + 1 end
    units = units + (hashes and DROP_UNITS or 1)
    at = at + 2
  end
  if kept and at < #entries then
    redis.call('HSET', ctx.tail_key, 'skip', kept)
    return math.max(1, units), false
  end
  if skipped and skipped > 0 then redis.call('HDEL', ctx.tail_key, 'skip') end
  redis.call('HSET', ctx.tail_key, 'cursor', next_cursor)
  return math.max(1, units), next_cursor == '0'
end

local function finish_slot(ctx)
  if ctx.most == 0 then
    redis.call('HDEL', ctx.tail_key, 'd:' .. ctx.start, 'b:' .. ctx.start)
    redis.call('DEL', ctx.filter_key)
  else
    redis.call('HSET', ctx.tail_key, 'd:' .. ctx.start, ctx.most)
  end
  redis.call('HSET', ctx.tail_key, 'upto', ctx.start)
  redis.call('HDEL', ctx.tail_key, 'cur', 'cursor', 'skip')
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
  if redis.call('HGET', base .. 'tail', 'cur') == tostring(start) then
    redis.call('HDEL', base .. 'tail', 'cur', 'cursor', 'skip')
  end
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

-- No call has pruned yet (settle_window sets it).
tail.pruned_seq = false
tail.base_of = base_of
tail.hashes_of = hashes_of
tail.may_hold = may_hold
tail.drop_board_windows = drop_board_windows

hooks.register_all('tail', { 'window_settled', settle_window, 'slot_expired', slot_expired,
  'window_dropped', window_dropped, 'board_dropped', tail_board_dropped, 'config_planned', tail_planned,
  'config_differs', tail_differs, 'config_stored', tail_stored })
