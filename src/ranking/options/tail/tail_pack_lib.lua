-- requires: call_state, hooks, keyspace, tail, window
-- tail_pack_lib: the packed closed slots of `tail` boards (src/ranking/options/tail/), hooks only (no
-- table of its own: the library's main chunk is short of names). Once tail_lib has pruned a closed
-- slot, its kept fields move out of the slot hash (a hashtable of ~76 bytes a field)
-- into "<base>tailpk:<start>", a list of packed strings: per field a 2-byte id length, the id, a 1-byte
-- count length and the count in decimal (~14 bytes a field for 10-byte ids). Nothing reads a closed
-- slot's fields one by one on a tail board: pruning is done before packing, and expiry reads them all.
-- So the slot's counts are the slot hash's (late events land there again) plus its packed records.
-- KEYS: 0 (siblings of the window's slots key)
-- "<base>tailpack" hash: upto: the newest slot packed; pk, pkcursor: the slot being packed and its HSCAN
-- cursor; p:<start>: the records the slot's packed list holds (drops find the list there once the
-- slots index is gone). tail_lib's "<base>tail" upto tells which slots are pruned.

-- Records per list element (an expiry pass that stops inside one pushes its rest back).
local RECORDS_PER_PART = 32
-- Fields one HSCAN step asks for at most; a step asks no more than the call's expiry budget has left.
local SCAN_COUNT = 64

local function packed_key(base, start)
  return base .. 'tailpk:' .. start
end

local function record_of(item, count)
  return string.char(math.floor(#item / 256), #item % 256) .. item .. string.char(#count) .. count
end

-- The (item, count) pairs of one packed part, flat (HGETALL shape), counts as numbers; and where
-- each record ends in the part (its last byte).
local function records_in(part)
  local entries, ends, at = {}, {}, 1
  while at <= #part do
    local high, low = string.byte(part, at, at + 1)
    local length = high * 256 + low
    local item = string.sub(part, at + 2, at + 1 + length)
    local count_length = string.byte(part, at + 2 + length)
    entries[#entries + 1] = item
    entries[#entries + 1] = tonumber(string.sub(part, at + 3 + length, at + 2 + length + count_length))
    at = at + 3 + length + count_length
    ends[#ends + 1] = at - 1
  end
  return entries, ends
end

-- Appends the scanned (field, count) pairs to the packed list, RECORDS_PER_PART records an element.
local function append_parts(list_key, entries)
  local parts, records = {}, {}
  for i = 1, #entries, 2 do
    records[#records + 1] = record_of(entries[i], entries[i + 1])
    if #records == RECORDS_PER_PART or i + 1 == #entries then
      parts[#parts + 1] = table.concat(records)
      records = {}
    end
  end
  redis.call('RPUSH', list_key, unpack(parts))
end

local function tail_on(key)
  return call_state.config_field(call_state.cfg_key_of_top(key), 'tailExact')
end

-- The oldest slot pruned but not packed, now being packed; nil when there is none.
local function next_slot(base, slots_key, state_key)
  local pruned = redis.call('HGET', base .. 'tail', 'upto')
  if not pruned then return nil end
  local packed = redis.call('HGET', state_key, 'upto')
  local start = redis.call('ZRANGEBYSCORE', slots_key, packed and '(' .. packed or '-inf', pruned, 'LIMIT', 0, 1)[1]
  if start then redis.call('HSET', state_key, 'pk', start, 'pkcursor', '0', 'p:' .. start, '0') end
  return start
end

-- One HSCAN step of the slot being packed, of about `wanted` fields: they move to the list and leave
-- the hash together, so a later step never sees them again. Answers the fields moved and the cursor.
-- A small slot (a listpack) answers whole whatever COUNT asks: its fields past `wanted` wait for the
-- next step, which scans it from 0 again (cursor "again").
local function pack_step(base, state_key, start, cursor, wanted)
  local slot_key = base .. 'slot:' .. start
  local asked = math.max(1, math.min(SCAN_COUNT, wanted))
  local scan = redis.call('HSCAN', slot_key, cursor == 'again' and '0' or cursor, 'COUNT', asked)
  local entries, fields, next_cursor = scan[2], {}, scan[1]
  if next_cursor == '0' and #entries > 2 * asked then
    entries, next_cursor = { unpack(entries, 1, 2 * asked) }, 'again'
  end
  for i = 1, #entries, 2 do fields[#fields + 1] = entries[i] end
  if #fields > 0 then
    append_parts(packed_key(base, start), entries)
    redis.call('HDEL', slot_key, unpack(fields))
    redis.call('HINCRBY', state_key, 'p:' .. start, #fields)
  end
  return #fields, next_cursor
end

-- Hook window_settled (after tail_lib's pruning, with what budget it left): packs the pruned slots,
-- oldest first, within `budget` fields. Answers the budget left and its due (false: work is left).
local function settle_pack(slots_key, top_key, _now_sec, _interval_sec, budget)
  if not tail_on(top_key) or string.find(slots_key, '~', 1, true) then return budget, nil end
  local base = keyspace.sibling_key(slots_key, 'slots', '')
  local state_key = base .. 'tailpack'
  while true do
    local state = redis.call('HMGET', state_key, 'pk', 'pkcursor')
    local start, cursor = state[1], state[2] or '0'
    if not start then
      start = next_slot(base, slots_key, state_key)
      if not start then return budget, nil end
      if budget <= 0 then return budget, false end
    end
    while budget > 0 and cursor ~= 'done' do
      local moved
      moved, cursor = pack_step(base, state_key, start, cursor, budget)
      budget, cursor = budget - math.max(1, moved), cursor == '0' and 'done' or cursor
    end
    if cursor ~= 'done' then
      -- "again" is kept as "0", what it scans: a library version before this one scans what it reads.
      redis.call('HSET', state_key, 'pkcursor', cursor == 'again' and '0' or cursor)
      return budget, false
    end
    redis.call('HSET', state_key, 'upto', start)
    redis.call('HDEL', state_key, 'pk', 'pkcursor')
  end
end

-- The first `taken` records of a packed part leave the results of the slot starting at `start`.
local function subtract_records(top_key, start, entries, taken)
  local summed = hooks.sum_changed
  for i = 1, 2 * taken, 2 do
    local item, count = entries[i], entries[i + 1]
    local left = tonumber(redis.call('ZINCRBY', top_key, -count, item))
    if left == 0 then redis.call('ZREM', top_key, item) end
    window.results_changed(top_key, item, left)
    for j = 1, #summed do summed[j](top_key, tonumber(start), item, -count, left, nil) end
  end
end

-- Hook slot_leaving: the expiring slot's packed counts leave the results first (as expire_window's own
-- drain does with the slot hash), `budget` records at most: a part is popped before its records are
-- subtracted, and the records past the budget go back to the list's head, unchanged.
local function slot_leaving(slots_key, top_key, start, budget)
  if not tail_on(top_key) then return budget, true end
  local base = keyspace.sibling_key(slots_key, 'slots', '')
  local list_key = packed_key(base, start)
  while budget >= 1 do
    local part = redis.call('LPOP', list_key)
    if not part then return budget, true end
    local entries, ends = records_in(part)
    local taken = math.min(#ends, math.floor(budget))
    if taken < #ends then redis.call('LPUSH', list_key, string.sub(part, ends[taken] + 1)) end
    subtract_records(top_key, start, entries, taken)
    budget = budget - taken
  end
  return budget, redis.call('EXISTS', list_key) == 0
end

-- Hook slot_packed: the slot's packed records on a tail board (a span read sums them with its hash).
local function slot_packed(slots_key, start, read)
  if not tail_on(slots_key) then return nil end
  local base = keyspace.sibling_key(slots_key, 'slots', '')
  if read == 'key' then return packed_key(base, start) end
  if not read then return tonumber(redis.call('HGET', base .. 'tailpack', 'p:' .. start)) end
  local entries = {}
  for _, part in ipairs(redis.call('LRANGE', packed_key(base, start), 0, -1)) do
    for _, value in ipairs(records_in(part)) do entries[#entries + 1] = value end
  end
  return entries
end

-- Hook packed_take: whole parts off the front of `key` (span_stage's copy of a packed list), enough
-- for about `records` records: their pairs, flat, and their number.
local function packed_take(key, records)
  local parts = redis.call('LPOP', key, math.max(1, math.ceil(records / RECORDS_PER_PART)))
  local entries = {}
  for _, part in ipairs(parts or {}) do
    for _, value in ipairs((records_in(part))) do entries[#entries + 1] = value end
  end
  return entries, #entries / 2
end

-- Hook slot_expired: the slot's packed list goes with it (drained by slot_leaving by then).
local function pack_expired(slots_key, start)
  local base = keyspace.sibling_key(slots_key, 'slots', '')
  local state_key = base .. 'tailpack'
  if redis.call('EXISTS', state_key) == 0 then return end
  redis.call('DEL', packed_key(base, start))
  redis.call('HDEL', state_key, 'p:' .. start)
  if redis.call('HGET', state_key, 'pk') == tostring(start) then redis.call('HDEL', state_key, 'pk', 'pkcursor') end
end

-- The packed lists and state of the window "<base>".
local function window_keys(base)
  local keys = {}
  for _, field in ipairs(redis.call('HKEYS', base .. 'tailpack')) do
    local start = string.match(field, '^p:(.*)$')
    if start then keys[#keys + 1] = packed_key(base, start) end
  end
  keys[#keys + 1] = base .. 'tailpack'
  return keys
end

local function pack_window_dropped(base)
  redis.call('UNLINK', unpack(window_keys(base)))
end

local function holds_packs(base)
  return redis.call('EXISTS', base .. 'tailpack') == 1
end

-- Hook board_dropped: a deleted board's packed slots (a key per live slot).
local function pack_board_dropped(cfg_key, drop_key, budget)
  return tail.drop_board_windows(cfg_key, drop_key, budget, holds_packs, window_keys)
end

hooks.register_all('tail', { 'window_settled', settle_pack, 'slot_leaving', slot_leaving, 'slot_packed', slot_packed,
  'packed_take', packed_take,
  'slot_expired', pack_expired, 'window_dropped', pack_window_dropped, 'board_dropped', pack_board_dropped })
