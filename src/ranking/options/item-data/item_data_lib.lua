-- module: item_data
-- requires: call_state, chunks, hooks, keyspace, stored_windows
-- item_data_lib: per-item JSON data of a board shard (the option item-data), removed once no window of
-- the shard holds the item (hooks item_left, windows_dropped, board_dropped).
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

-- The data of each of `items` (false where none).
local function item_data_of(cfg_key, items)
  return redis.call('HMGET', item_data_key(cfg_key), unpack(items))
end

-- Hook item_left: `item` just left the window of `top_key`. Its data goes when no other window holds it; the
-- windows are read only when it has data, so items without data cost one HEXISTS.
local function item_data_left(top_key, item)
  local cfg_key = call_state.cfg_key_of_top(top_key)
  local data_key = item_data_key(cfg_key)
  if redis.call('HEXISTS', data_key, item) == 0 then return end
  if not item_held(cfg_key, item) then redis.call('HDEL', data_key, item) end
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

-- Hook windows_dropped: after windows were dropped (a reset), removes the data of every item no window
-- holds any more. Runs in the config write that dropped them, so in batched commands: the items read
-- once, then a ZMSCORE a window and an HDEL a chunks.CHUNK of them (not a few commands an item).
local function prune_item_data(cfg_key)
  local data_key = item_data_key(cfg_key)
  local items = redis.call('HKEYS', data_key)
  if #items == 0 then return end
  local held, gone = items_held(cfg_key, items), {}
  for i, item in ipairs(items) do
    if not held[i] then gone[#gone + 1] = item end
  end
  chunks.per_chunk('HDEL', data_key, gone)
end

-- Hook board_dropped: a deleted board's data hash, one key of the step's budget.
local function data_dropped(cfg_key, _, budget)
  redis.call('UNLINK', item_data_key(cfg_key))
  return budget - 1, true
end

hooks.register_all('item-data', { 'item_left', item_data_left, 'windows_dropped', prune_item_data,
  'board_dropped', data_dropped })

item_data.item_data_key = item_data_key
item_data.item_held = item_held
item_data.items_held = items_held
item_data.item_data_of = item_data_of
