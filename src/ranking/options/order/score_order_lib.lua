-- module: score_order
-- requires: call_state, hooks
-- score_order_lib: `order: asc` boards, a board option (src/ranking/options/order/): lower scores rank
-- higher (race times, golf). Its hooks (hooks_lib) answer the order of such a board's results: pages
-- in ascending score (ZRANGE: equal scores in ascending byte order of item id, the exact reverse of
-- the default order), places (ZRANK), the items ahead of a score (those scoring lower) and ranks; on
-- a board of the default order (desc) every hook answers nil and order_lib keeps Redis' order. On an
-- asc board with a tiebreak (tiebreak_lib) the order of its pairs decides: these hooks answer only
-- `ascending` and a count ahead of a score without a mark, tiebreak_lib the others.
-- KEYS: 0
-- Config hash fields: order ("asc"; absent: desc), tiebreak (tiebreak_lib's: present, the pairs decide). Boards whose windows hold sums never have it (the
-- board PUT refuses it there: a sum is listed only above 0, and views weigh sums highest first).

local cfg_key_of_top = call_state.cfg_key_of_top
call_state.config_field_add('order', 'order')

-- Each config hash's order asked in this call (call_state.call_cache): a count over 64 shards asks
-- for every id on every shard, one HGET per shard instead of one per count.
local known = { seq = 0, by = {} }

-- The board's order: false (desc), 'scores' (asc: these hooks decide) or 'pairs' (asc, tiebreak_lib decides).
local function order_of(top_key)
  local cfg_key = cfg_key_of_top(top_key)
  local by = call_state.call_cache(known)
  local asc = by[cfg_key]
  if asc == nil then
    asc = call_state.config_field(cfg_key, 'order') == 'asc'
    if asc then asc = call_state.config_field(cfg_key, 'tiebreak') and 'pairs' or 'scores' end
    by[cfg_key] = asc
  end
  return asc
end

local function ascending(top_key)
  return order_of(top_key) == 'scores'
end

local function exact(score)
  return string.format('%.17g', score)
end

local function page_hook(top_key, first, last)
  if not ascending(top_key) then return nil end
  return redis.call('ZRANGE', top_key, first, last, 'WITHSCORES')
end

-- nil for an absent item too: the next answers (Redis' ZREVRANK) find it absent as well.
local function position_hook(top_key, item)
  if not ascending(top_key) then return nil end
  return redis.call('ZRANK', top_key, item) or nil
end

-- Items ahead of `score`: those scoring lower (a tiebreak's mark: tiebreak_lib answers; ties: first is
-- refused with asc).
local function ahead_hook(top_key, score, mark)
  local asc = order_of(top_key)
  if not asc or (asc == 'pairs' and mark ~= '') then return nil end
  return redis.call('ZCOUNT', top_key, '-inf', '(' .. exact(score))
end

-- Competition rank (0: the item holds no score here).
local function rank_hook(top_key, item)
  if not ascending(top_key) then return nil end
  local score = redis.call('ZSCORE', top_key, item)
  if not score then return 0 end
  return redis.call('ZCOUNT', top_key, '-inf', '(' .. score) + 1
end

-- A board PUT: the order asked (absent: the stored one, desc for a new board). A change keeps the data:
-- the results hold scores, not places; only the next reads list them the other way.
local function order_planned(cfg_key, settings, _, plan)
  local stored = plan and (redis.call('HGET', cfg_key, 'order') or 'desc') or 'desc'
  if settings.order == nil then settings.order = stored end
  if plan and settings.order ~= stored then plan.changed = true end
end

local function order_stored(cfg_key, settings)
  if settings.order == 'asc' then redis.call('HSET', cfg_key, 'order', 'asc') else redis.call('HDEL', cfg_key, 'order') end
  return settings.order == 'asc'
end

hooks.register_all('order', { 'ascending', function(top_key) return order_of(top_key) and true or nil end,
  'page', page_hook, 'position', position_hook, 'ahead', ahead_hook, 'rank', rank_hook, 'config_planned', order_planned,
  'config_stored', order_stored })
