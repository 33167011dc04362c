-- module: item_data
-- requires: call_state, chunks, hooks, keyspace, prune, stored_windows
-- item_data_lib: per-item JSON data of a board shard (the option item-data), removed once no window of
-- the shard holds the item (hooks item_left, windows_dropped and its prune steps, board_dropped).
-- KEYS: 0
-- Keys: <tag>:data  hash  item -> JSON object (at most 1 024 bytes; only items some window holds)

-- "<tag>:cfg" -> "<tag>:data"
local item_data_key = keyspace.sibling_of('cfg', 'data')

-- Whether some window of the shard of `cfg_key` holds `item` (its results zset has it, any score).
local function item_held(cfg_key, item)
  for _, w in ipairs(stored_windows.decode_windows(redis.call('HGET', cfg_key, 'windows'))) do
    if redis.call('ZSCORE', keyspace.sibling_key(cfg_key, 'cfg', w.name .. ':top'), item) then return true end
  end
  return false
end

-- Which of `items` some window of the shard of `cfg_key` holds (item_held of each): a ZMSCORE a window
-- a chunks.CHUNK of them.
local function items_held(cfg_key, items)
  local held = {}
  for _, w in ipairs(stored_windows.decode_windows(redis.call('HGET', cfg_key, 'windows'))) do
    local scores = chunks.per_chunk('ZMSCORE', keyspace.sibling_key(cfg_key, 'cfg', w.name .. ':top'), items)
    for i = 1, #items do held[i] = held[i] or scores[i] ~= false end
  end
  return held
end

-- The data of each of `items` (false where none). While a reset's prune steps walk the data (pruneData),
-- data of an item no window holds is one the reset let go: shown as none (one more command, asked
-- only when some data was found, and the windows read only then).
local function item_data_of(cfg_key, items)
  local data, found = redis.call('HMGET', item_data_key(cfg_key), unpack(items)), {}
  for i = 1, #items do
    if data[i] then found[#found + 1] = i end
  end
  if #found == 0 or redis.call('HEXISTS', cfg_key, 'pruneData') == 0 then return data end
  local asked = {}
  for k, i in ipairs(found) do asked[k] = items[i] end
  local held = items_held(cfg_key, asked)
  for k, i in ipairs(found) do
    if not held[k] then data[i] = false end
  end
  return data
end

-- Hook item_left: `item` just left the window of `top_key`. Its data goes when no other window holds it; the
-- windows are read only when it has data, so items without data cost one HEXISTS.
local function item_data_left(top_key, item)
  local cfg_key = call_state.cfg_key_of_top(top_key)
  local data_key = item_data_key(cfg_key)
  if redis.call('HEXISTS', data_key, item) == 0 then return end
  if not item_held(cfg_key, item) then redis.call('HDEL', data_key, item) end
end


-- Data entries one HSCAN of a prune step asks for at most: each value is up to 1 024 bytes, all of
-- them read into the call (Redis 7.0's HSCAN has no NOVALUES), so a step holds about 50 KB (more
-- when the hash rehashes: a scan then walks both its tables). 100 a step ran 5.5 ms at the worst-case
-- harness's full size (100 000 items with 1 KB each, their hashes and zsets far apart in memory).
local PRUNE_SCAN = 50

-- Hook windows_dropped: after windows were dropped (a reset), the data of every item no window holds
-- any more goes, in prune steps (prune_lib): the write only starts the walk of the data hash.
local function data_prune_begun(cfg_key)
  if redis.call('EXISTS', item_data_key(cfg_key)) == 0 then return end
  redis.call('HSET', cfg_key, 'pruneData', '0')
  prune.mark(cfg_key)
end

-- Which of `items` no window of the shard holds (items_held), and their data goes.
local function data_forgotten(cfg_key, items)
  local held, gone = items_held(cfg_key, items), {}
  for i, item in ipairs(items) do
    if not held[i] then gone[#gone + 1] = item end
  end
  chunks.per_chunk('HDEL', item_data_key(cfg_key), gone)
end

-- Hook prune_step: one HSCAN of the data hash of about `entries` fields (PRUNE_SCAN at most), the
-- data of those no window holds gone; the cursor kept in the config (pruneData) until it is back at 0.
local function data_prune_step(cfg_key, entries)
  local cursor = redis.call('HGET', cfg_key, 'pruneData')
  if not cursor then return entries, true end
  local scan = redis.call('HSCAN', item_data_key(cfg_key), cursor, 'COUNT', math.max(1, math.min(entries, PRUNE_SCAN)))
  local items, flat = {}, scan[2]
  for i = 1, #flat, 2 do items[#items + 1] = flat[i] end
  if #items > 0 then data_forgotten(cfg_key, items) end
  if scan[1] == '0' then
    redis.call('HDEL', cfg_key, 'pruneData')
    return entries - #items, true
  end
  redis.call('HSET', cfg_key, 'pruneData', scan[1])
  return entries - #items, false
end

-- Hook prune_items: a write adds `items` while the data hash is walked: the data of those no window
-- holds goes first (the reset let them go), a ZMSCORE a window and an HDEL.
local function data_settled(cfg_key, items)
  if redis.call('HEXISTS', cfg_key, 'pruneData') == 1 then data_forgotten(cfg_key, items) end
end

-- Hook board_dropped: a deleted board's data hash, one key of the step's budget.
local function data_dropped(cfg_key, _, budget)
  redis.call('UNLINK', item_data_key(cfg_key))
  return budget - 1, true
end

hooks.register_all('item-data', { 'item_left', item_data_left, 'windows_dropped', data_prune_begun,
  'prune_step', data_prune_step, 'prune_items', data_settled, 'board_dropped', data_dropped })

hooks.export_all(item_data, { 'item_data_key', item_data_key, 'item_held', item_held, 'items_held', items_held,
  'item_data_of', item_data_of })
