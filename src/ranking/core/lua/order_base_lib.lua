-- module: order_base
-- requires: call_state, hooks
-- order_base_lib: the order of a window's results before exceptions (order_lib closes their gaps): Redis' (score desc,
-- then item id desc) unless a board option's hooks decide it (hooks_lib: strict, ascending, page, position, mark_of,
-- ahead; the first answer not nil wins), and which scores are listed (every recorded one on a max / min / last board,
-- those above 0 on a sum board).
-- KEYS: 0

local hooks_of_top = call_state.hooks_of_top

-- The first answer of the hook `list` that is not nil (nil: none answered).
local function ask(list, a, b, c, d)
  for i = 1, #list do
    local answer = list[i](a, b, c, d)
    if answer ~= nil then return answer end
  end
  return nil
end

-- Whether the ranks of the results `top_key` are its order (strict: a row's rank is its position).
local function strict(top_key)
  return ask(hooks_of_top(top_key).strict, top_key) or false
end

-- Whether lower scores come first in the results `top_key` (or a sibling key of its window).
local function ascending(top_key)
  return ask(hooks_of_top(top_key).ascending, top_key) or false
end

-- Positions first..last (0-based) by score alone, best first, as ZREVRANGE WITHSCORES answers them
-- (no option's strict order: what snapshots and archives keep, whose rows carry no marks).
local function score_page(key, first, last)
  if ascending(key) then return redis.call('ZRANGE', key, first, last, 'WITHSCORES') end
  return redis.call('ZREVRANGE', key, first, last, 'WITHSCORES')
end

-- Positions first..last (0-based) of every item held, as ZREVRANGE WITHSCORES answers them.
local function base_page(top_key, first, last, marks)
  return ask(hooks_of_top(top_key).page, top_key, first, last, marks) or redis.call('ZREVRANGE', top_key, first, last, 'WITHSCORES')
end

-- The item's 0-based place among every item held (nil: not held).
local function base_position(top_key, item)
  local list = hooks_of_top(top_key).position
  for i = 1, #list do
    local answer = list[i](top_key, item)
    if answer then return answer end
  end
  return redis.call('ZREVRANK', top_key, item)
end

-- Items held ahead of (score, mark).
local function base_ahead(top_key, score, mark)
  local count = ask(hooks_of_top(top_key).ahead, top_key, score, mark)
  if count then return count end
  return redis.call('ZCOUNT', top_key, '(' .. string.format('%.17g', score), '+inf')
end

-- The mark of an item ('': none).
local function mark_of(top_key, item)
  return ask(hooks_of_top(top_key).mark_of, top_key, item) or ''
end

-- Each config hash's answer to any_sign in this call (call_cache): one HGET per shard, not one per count.
local any_sign_of = { seq = 0, by = {} }

-- Whether the board of `top_key` lists every recorded score (max / min / last), not only those above 0.
local function any_sign(top_key)
  local cfg_key = call_state.cfg_key_of_top(top_key)
  local by = call_state.call_cache(any_sign_of)
  local known = by[cfg_key]
  if known == nil then
    known = false -- hooks_lib any_sign: an option listing every sign (the aggregate's max / min / last)
    for _, every in ipairs(hooks.any_sign) do known = known or every(cfg_key) end
    by[cfg_key] = known
  end
  return known
end

-- Whether an item holding `score` in the results `top_key` is listed.
local function listed(top_key, score)
  return score > 0 or any_sign(top_key)
end

-- How many items the results `top_key` hold above the listing's floor.
local function base_listed_count(top_key)
  if any_sign(top_key) then return redis.call('ZCARD', top_key) end
  return redis.call('ZCOUNT', top_key, '(0', '+inf')
end

order_base.ask = ask
order_base.strict = strict
order_base.ascending = ascending
order_base.score_page = score_page
order_base.base_page = base_page
order_base.base_position = base_position
order_base.base_ahead = base_ahead
order_base.mark_of = mark_of
order_base.any_sign = any_sign
order_base.listed = listed
order_base.base_listed_count = base_listed_count
