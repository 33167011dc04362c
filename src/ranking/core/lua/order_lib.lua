-- module: order
-- requires: call_state, hooks
-- order_lib: the order of a window's results as reads, lookups and counts across shards see it:
-- Redis' (score descending, then item id descending) unless a board option's hooks decide it
-- (hooks_lib: strict, page, position, mark_of, ahead, append_marks; the first answer that is not nil
-- wins: `order: asc` answers the ascending order, `ties: first` the strict one). A mark places an item
-- among equal scores across shards: among equal scores the greater mark comes first ('': none, the
-- order of item ids).
-- Which scores are listed: on a max / min / last board every recorded one, whatever its sign; on a
-- sum board those above 0 (an item whose increments sum to 0 or less is held but not listed).
-- KEYS: 0

local ASK = { ascending = hooks.ascending, strict = hooks.strict, page = hooks.page, position = hooks.position, mark_of = hooks.mark_of, ahead = hooks.ahead }

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
  return ask(ASK.strict, top_key) or false
end

-- Whether lower scores come first in the results `top_key` (or a sibling key of its window).
local function ascending(top_key)
  return ask(ASK.ascending, top_key) or false
end

-- Positions first..last (0-based) by score alone, best first, as ZREVRANGE WITHSCORES answers them
-- (no option's strict order: what snapshots and archives keep, whose rows carry no marks).
local function score_page(key, first, last)
  if ascending(key) then return redis.call('ZRANGE', key, first, last, 'WITHSCORES') end
  return redis.call('ZREVRANGE', key, first, last, 'WITHSCORES')
end

-- Positions first..last (0-based) as ZREVRANGE WITHSCORES answers them (item, score, ...); an
-- option deciding the order adds each row's mark to `marks` on a sharded board.
local function page(top_key, first, last, marks)
  return ask(ASK.page, top_key, first, last, marks) or redis.call('ZREVRANGE', top_key, first, last, 'WITHSCORES')
end

-- The item's 0-based place in the order (nil: not listed). A hook answers nil or false when it does
-- not decide (an absent item: Redis' answer is nil too).
local function position(top_key, item)
  local list = ASK.position
  for i = 1, #list do
    local answer = list[i](top_key, item)
    if answer then return answer end
  end
  return redis.call('ZREVRANK', top_key, item)
end

-- The item's mark ('': none).
local function mark_of(top_key, item)
  return ask(ASK.mark_of, top_key, item) or ''
end

-- Items ahead of an item of `score` (a listed one) and mark `mark` (another shard's, or this one's;
-- '': items of a better score only).
local function ahead(top_key, score, mark)
  local count = ask(ASK.ahead, top_key, score, mark)
  if count then return count end
  return redis.call('ZCOUNT', top_key, '(' .. string.format('%.17g', score), '+inf')
end

-- Each config hash's answer to any_sign in this call (forgotten at call_began): a count over 64
-- shards asks for every id on every shard, one HGET per shard instead of one per count.
local any_sign_of = {}

hooks.register('call_began', function()
  any_sign_of = {}
end)

-- Whether the board of `top_key` lists every recorded score (max / min / last), not only those above 0.
local function any_sign(top_key)
  local cfg_key = call_state.cfg_key_of_top(top_key)
  local known = any_sign_of[cfg_key]
  if known == nil then
    local aggregate = call_state.config_field(cfg_key, 'aggregate')
    known = aggregate ~= false and aggregate ~= nil and aggregate ~= 'sum'
    any_sign_of[cfg_key] = known
  end
  return known
end

-- Whether an item holding `score` in the results `top_key` is listed.
local function listed(top_key, score)
  return score > 0 or any_sign(top_key)
end

-- How many items the results `top_key` list.
local function listed_count(top_key)
  if any_sign(top_key) then return redis.call('ZCARD', top_key) end
  return redis.call('ZCOUNT', top_key, '(0', '+inf')
end

-- Appends a write's marks of the item in each window (results keys at first_top, first_top + 2, ...
-- of `keys`) to its reply, when an option keeps marks; else nothing.
local function append_marks(reply, keys, first_top, window_count, item)
  local appenders = hooks.append_marks
  for i = 1, #appenders do appenders[i](reply, keys, first_top, window_count, item) end
end

order.ascending = ascending
order.score_page = score_page
order.strict = strict
order.page = page
order.position = position
order.mark_of = mark_of
order.ahead = ahead
order.append_marks = append_marks
order.listed = listed
order.listed_count = listed_count
