-- module: tail_pack
-- requires: call_state, hooks, keyspace, window
-- tail_pack_lib: the packed closed slots of `tail` boards (src/ranking/options/tail/). Once tail_lib has
-- pruned a closed slot, its kept fields move out of the slot hash (a hashtable of ~76 bytes a field)
-- into "<base>tailpk:<start>", a list of packed strings: per field a 2-byte id length, the id, a 1-byte
-- count length and the count in decimal (~14 bytes a field for 10-byte ids). Nothing reads a closed
-- slot's fields one by one on a tail board: pruning is done before packing, and expiry reads them all.
-- So the slot's counts are the slot hash's (late events land there again) plus its packed records.
-- KEYS: 0 (siblings of the window's slots key)
-- "<base>tail" fields: pk, pkcursor: the slot being packed and its HSCAN cursor; p:<start>: the records
-- the slot's packed list holds (drops find the list there once the slots index is gone).

-- Records per list element: an expiry pass pops whole elements, so it goes at most this far past its budget.
local RECORDS_PER_PART = 32
-- Fields one HSCAN step asks for (the call's expiry budget bounds the steps).
local SCAN_COUNT = 64

local function packed_key(base, start)
  return base .. 'tailpk:' .. start
end

local function record_of(item, count)
  return string.char(math.floor(#item / 256), #item % 256) .. item .. string.char(#count) .. count
end

-- The (item, count) pairs of one packed part, flat (HGETALL shape), counts as numbers.
local function records_in(part)
  local entries, at = {}, 1
  while at <= #part do
    local high, low = string.byte(part, at, at + 1)
    local length = high * 256 + low
    local item = string.sub(part, at + 2, at + 1 + length)
    local count_length = string.byte(part, at + 2 + length)
    entries[#entries + 1] = item
    entries[#entries + 1] = tonumber(string.sub(part, at + 3 + length, at + 2 + length + count_length))
    at = at + 3 + length + count_length
  end
  return entries
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

-- Tells tail_lib's settle step that the slot starting at `start` is pruned: it is packed next.
local function begin(base, start)
  redis.call('HSET', base .. 'tail', 'pk', start, 'pkcursor', '0', 'p:' .. start, '0')
end

-- Packs the slot being packed within `budget` fields (HSCAN steps: a field moves to the list and leaves
-- the hash in the same step, so a later step never sees it again). Answers the budget left and whether
-- packing is done (nothing being packed, or that slot finished).
local function step(base, budget)
  local state = redis.call('HMGET', base .. 'tail', 'pk', 'pkcursor')
  local start, cursor = state[1], state[2]
  if not start then return budget, true end
  local slot_key, list_key = base .. 'slot:' .. start, packed_key(base, start)
  while budget > 0 do
    local scan = redis.call('HSCAN', slot_key, cursor, 'COUNT', SCAN_COUNT)
    local entries, fields = scan[2], {}
    for i = 1, #entries, 2 do fields[#fields + 1] = entries[i] end
    if #fields > 0 then
      append_parts(list_key, entries)
      redis.call('HDEL', slot_key, unpack(fields))
      redis.call('HINCRBY', base .. 'tail', 'p:' .. start, #fields)
    end
    budget, cursor = budget - math.max(1, #fields), scan[1]
    if cursor == '0' then
      redis.call('HDEL', base .. 'tail', 'pk', 'pkcursor')
      return budget, true
    end
  end
  redis.call('HSET', base .. 'tail', 'pkcursor', cursor)
  return budget, false
end

-- Hook slot_leaving: the expiring slot's packed counts leave the results first (as expire_window's own
-- drain does with the slot hash), whole parts within about `budget` records, popped before subtracted.
local function slot_leaving(slots_key, top_key, start, budget)
  if not call_state.config_field(call_state.cfg_key_of_top(top_key), 'tailExact') then return budget, true end
  local base = keyspace.sibling_key(slots_key, 'slots', '')
  local list_key = packed_key(base, start)
  while budget > 0 do
    local part = redis.call('LPOP', list_key)
    if not part then return budget, true end
    local entries = records_in(part)
    for i = 1, #entries, 2 do
      local item, count = entries[i], entries[i + 1]
      local left = tonumber(redis.call('ZINCRBY', top_key, -count, item))
      if left == 0 then redis.call('ZREM', top_key, item) end
      window.results_changed(top_key, item, left)
      local summed = hooks.sum_changed
      for j = 1, #summed do summed[j](top_key, tonumber(start), item, -count, left, nil) end
    end
    budget = budget - #entries / 2
  end
  return budget, redis.call('EXISTS', list_key) == 0
end

-- Hook slot_packed: the slot's packed records on a tail board (a span read sums them with its hash).
local function slot_packed(slots_key, start, read)
  if not call_state.config_field(call_state.cfg_key_of_top(slots_key), 'tailExact') then return nil end
  local base = keyspace.sibling_key(slots_key, 'slots', '')
  if not read then return tonumber(redis.call('HGET', base .. 'tail', 'p:' .. start)) end
  local entries = {}
  for _, part in ipairs(redis.call('LRANGE', packed_key(base, start), 0, -1)) do
    for _, value in ipairs(records_in(part)) do entries[#entries + 1] = value end
  end
  return entries
end

-- The slot's packed list goes with it (drained by then, unless the window itself goes).
local function forget(base, start)
  redis.call('DEL', packed_key(base, start))
  redis.call('HDEL', base .. 'tail', 'p:' .. start)
  if redis.call('HGET', base .. 'tail', 'pk') == tostring(start) then redis.call('HDEL', base .. 'tail', 'pk', 'pkcursor') end
end

-- The packed lists a window "<base>" holds (by the tail hash's p:<start> fields).
local function packed_keys(base, fields)
  local keys = {}
  for _, field in ipairs(fields) do
    local start = string.match(field, '^p:(.*)$')
    if start then keys[#keys + 1] = packed_key(base, start) end
  end
  return keys
end

tail_pack.begin = begin
tail_pack.step = step
tail_pack.forget = forget
tail_pack.packed_keys = packed_keys
tail_pack.records_in = records_in

hooks.register('slot_leaving', slot_leaving, 'tail')
hooks.register('slot_packed', slot_packed, 'tail')
