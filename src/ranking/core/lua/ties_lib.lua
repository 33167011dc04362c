-- ties_lib: the strict order of a `ties: first` board. Prepended before window_lib, whose results
-- changes call tie_order_changed and whose ranks ask tie_rank first.
-- KEYS: 0
-- Keys, siblings of a window's results zset "<base>top" (same hash tag):
--   <base>order      zset  score = the item's score, member = <mark><item> for every item scoring > 0
--   <base>marks      hash  item -> its <mark>
-- Config hash fields: ties ("first"; absent: shared), tieSeq (the board's last sequence number).
-- <mark> is TIE_MARK_MAX - seq in TIE_MARK_DIGITS decimal digits, seq drawn from tieSeq each time an
-- item's score in a window changes. ZREVRANGE lists by score descending, then member descending: equal
-- scores come in ascending seq, the item that reached its score first first. Exact: scores are the
-- results' own (integers, %.17g), seqs integers below 10^15 (a billion changes a day for 2 700 years).

local TIE_MARK_DIGITS = 15
local TIE_MARK_MAX = 999999999999999

-- "<tag>:<window>:top" -> "<tag>:cfg": names hold no braces, so the tag ends at the first "}" (also
-- item_data_lib's, prepended after this library).
-- Kept from call to call (a pure function of the key), so a call on a known window builds no string;
-- emptied when it holds `max` keys.
local cfg_of_top = { keys = {}, size = 0, max = 1024 }

local function cfg_key_of_top(top_key)
  local cfg_key = cfg_of_top.keys[top_key]
  if cfg_key then return cfg_key end
  if cfg_of_top.size >= cfg_of_top.max then cfg_of_top.keys, cfg_of_top.size = {}, 0 end
  cfg_key = string.match(top_key, '^[^}]*}') .. ':cfg'
  cfg_of_top.keys[top_key], cfg_of_top.size = cfg_key, cfg_of_top.size + 1
  return cfg_key
end

-- Asked for every results change and rank: answered from the call's config (call_lib) when it is this
-- board's, and kept for the last results key asked about.
local function ties_first(top_key)
  if top_key == CONFIG.ties_top then return CONFIG.ties_first end
  local cfg_key = cfg_key_of_top(top_key)
  if cfg_key ~= CONFIG.cfg_key then return redis.call('HGET', cfg_key, 'ties') == 'first' end
  CONFIG.ties_top, CONFIG.ties_first = top_key, CONFIG.ties == 'first'
  return CONFIG.ties_first
end

-- Hook: the item's score in the window of `top_key` is now `score`: it takes a new place among the
-- items of its score, after those that reached it before (nothing on a board of shared ties).
local function tie_order_changed(top_key, item, score)
  if not ties_first(top_key) then return end
  local order_key, marks_key = sibling_key(top_key, 'top', 'order'), sibling_key(top_key, 'top', 'marks')
  local old = redis.call('HGET', marks_key, item)
  if old then redis.call('ZREM', order_key, old .. item) end
  if score > 0 then
    local seq = redis.call('HINCRBY', cfg_key_of_top(top_key), 'tieSeq', 1)
    local mark = string.format('%0' .. TIE_MARK_DIGITS .. '.0f', TIE_MARK_MAX - seq)
    redis.call('ZADD', order_key, string.format('%.17g', score), mark .. item)
    redis.call('HSET', marks_key, item, mark)
  elseif old then
    redis.call('HDEL', marks_key, item)
  end
end

-- The item's 0-based place in the strict order (nil: not listed), or false on a board of shared ties.
local function tie_position(top_key, item)
  if not ties_first(top_key) then return false end
  local mark = redis.call('HGET', sibling_key(top_key, 'top', 'marks'), item)
  if not mark then return nil end
  return redis.call('ZREVRANK', sibling_key(top_key, 'top', 'order'), mark .. item)
end

-- Strict rank of an item (0: not ranked), or nil on a board of shared ties.
local function tie_rank(top_key, item)
  local position = tie_position(top_key, item)
  if position == false then return nil end
  return position and position + 1 or 0
end

-- Positions first..last (0-based) of the strict order as ZREVRANGE WITHSCORES answers them (item,
-- score, ...), or nil on a board of shared ties.
local function tie_page(top_key, first, last)
  if not ties_first(top_key) then return nil end
  local page = redis.call('ZREVRANGE', sibling_key(top_key, 'top', 'order'), first, last, 'WITHSCORES')
  for i = 1, #page, 2 do page[i] = string.sub(page[i], TIE_MARK_DIGITS + 1) end
  return page
end

-- Unlinks the strict order of the window `base` ("<tag>:<window>:"), when it goes (drop_window).
local function drop_tie_order(base)
  redis.call('UNLINK', base .. 'order', base .. 'marks')
end
