-- module: actor_caps
-- requires: actor_log, call_state, hooks, keyspace
-- actor_caps_lib: actor weights and caps, a board option (src/ranking/options/actor-caps/). It
-- registers actor_lib's hooks: what an actor's event adds to an item in a window (actor_amount: its
-- amount times the actor's weight, within the board's capPerItem), and what the actor's live
-- contributions to the item may come to hold there (actor_moved: kept while the board has a cap).
-- KEYS: 0
-- Keys (the shard's hash tag):
--   <base>held          hash  actor<US>item -> the positive part of the actor's live contributions to
--                             the item in the window "<base>" (a board with capPerItem only): the sum,
--                             over its slots, of what each slot's contribution (actor_lib's act:<start>)
--                             adds when above 0, moved by every add, take-back, expiry, retraction and
--                             re-weighting in the same call as the contribution
--   <tag>:weights       hash  actor -> weight (integer 0..100; absent: 1), every shard's own copy; at
--                             most the board's WEIGHED_ACTORS_PER_BOARD fields (weight_refusal)
-- Config hash fields: capPerItem (absent: no cap), weighted ("1" once some actor of the shard has had
--   a weight: only then does an event ask its actor's weight).
-- Exact: slots leave a window oldest first, so what a pair adds later is the sum of a run of its newest
-- slots; a pair whose older slot holds a negative amount would pass the cap once that slot left if the
-- cap were held against the net sum. So an event adding amount x weight > 0 adds at most the cap less
-- the positive part of the pair's other slots and less its own slot's contribution: then no run of
-- newest slots ever adds more than the cap. An event adding 0 or less is never cut. held only changes
-- with a contribution's own amount, so a contribution leaving (expiry, retraction) gives back exactly
-- what it added.

local CALL = call_state.CALL
local CONFIG = call_state.CONFIG
local SEP = '\31'

call_state.config_field_add('capPerItem', 'actor_caps')
call_state.config_field_add('weighted', 'actor_caps')

-- The weight last asked in the call `seq`: a call's events mostly share an actor.
local memo = { seq = 0, actor = nil, weight = 1 }

-- The last cap text read and its number: a write asks it twice a window (a strtod each).
local cap_text = { text = false, cap = 0 }

-- The board's cap (0: none), from the call's config copy.
local function cap_of()
  local text = call_state.config_field(CALL.cfg_key, 'capPerItem')
  if text ~= cap_text.text then cap_text.text, cap_text.cap = text, tonumber(text) or 0 end
  return cap_text.cap
end

-- The actor's weight on this shard (1 unless an admin set another).
local function weight_of(actor)
  if call_state.config_field(CALL.cfg_key, 'weighted') ~= '1' then return 1 end
  if memo.seq ~= CALL.seq then memo.seq, memo.actor = CALL.seq, nil end
  if memo.actor == actor then return memo.weight end
  local weight = tonumber(redis.call('HGET', keyspace.sibling_key(CALL.cfg_key, 'cfg', 'weights'), actor)) or 1
  memo.actor, memo.weight = actor, weight
  return weight
end

-- By slots key, kept from call to call (a pure function of it): one lookup where sibling_key makes three and a call.
local HELD_KEYS = call_state.memo(1024)
local function held_key(slots_key)
  return HELD_KEYS.by[slots_key] or call_state.memo_put(HELD_KEYS, slots_key, keyspace.sibling_key(slots_key, 'slots', 'held'))
end

-- What a contribution adding `counted` may add to the pair in the window, its other live contributions
-- adding `others`: all of it when the board has no cap or it is not positive, else what the cap leaves.
local function within_cap(cap, counted, others)
  -- 0 x a negative amount is -0 in Lua, which Redis refuses as an integer argument.
  if counted == 0 then return 0 end
  if cap == 0 or counted < 0 then return counted end
  return math.max(0, math.min(counted, cap - others))
end

-- The positive part of the actor's live contributions to the item in the window of `slots_key`: held,
-- less what the expired slots this call's expiry left indexed still hold (a drain under way: window_lib's
-- CONFIG.draining_from; none for most calls, and a few slots past a long pause).
local function held_of(slots_key, actor, item)
  local pair = actor .. SEP .. item
  local held = tonumber(redis.call('HGET', held_key(slots_key), pair)) or 0
  local live_from = held ~= 0 and CONFIG.draining_from and CONFIG.draining_from[slots_key]
  if not live_from then return held end
  for _, start in ipairs(redis.call('ZRANGE', slots_key, '-inf', '(' .. live_from, 'BYSCORE')) do
    held = held - math.max(0, actor_log.ACTORS.figures(redis.call('HGET', actor_log.ACTORS.slot_key(slots_key, start), pair)))
  end
  return held
end

-- The pairs a window of this call found with no contribution in it (ACTORS.pair_unheld; call_state.call_cache): pair ->
-- true. The pair's next windows ask that first, which tells a new actor's pair absent without reading the cap's held
-- (a pair absent from a window holds nothing there); a pair not found so reads held first, which an actor the item
-- already has answers without the pairs hash. The order changes what is read, never what is answered.
local unheld_pairs = { seq = 0, by = {} }

-- Hook actor_amount: nil (the amount as sent) on a board without a cap for an actor of weight 1. Within
-- the cap, against the positive part of the pair's other slots and its own slot's contribution.
local function actor_amount(slots_key, slot_start, actor, item, amount)
  local cap, weight = cap_of(), weight_of(actor)
  if cap == 0 and weight == 1 then return nil end
  local counted = amount * weight
  if cap == 0 or counted <= 0 then return within_cap(0, counted, 0) end
  local act_key, pair = actor_log.ACTORS.slot_key(slots_key, slot_start), actor .. SEP .. item
  local unheld = call_state.call_cache(unheld_pairs)
  local held = not unheld[pair] and held_of(slots_key, actor, item) or 0
  -- No contribution of the pair anywhere in the window (a new actor's): none in this slot either.
  if held == 0 and actor_log.ACTORS.pair_unheld(slots_key, act_key, pair, item) then
    unheld[pair] = true
    return within_cap(cap, counted, 0)
  end
  if unheld[pair] then held = held_of(slots_key, actor, item) end
  local own = actor_log.ACTORS.figures(actor_log.ACTORS.pair_value(act_key, pair))
  return within_cap(cap, counted, held - math.max(0, own) + own)
end

-- Hook actor_weighs: a board with a cap, an actor of another weight.
local function actor_weighs(actor)
  return cap_of() > 0 or weight_of(actor) ~= 1
end

-- Hook actor_moved: held follows the positive part of every slot's move on a board with a cap (gone at 0).
local function actor_moved(slots_key, actor, item, before, after)
  if cap_of() == 0 then return end
  local delta = (after > 0 and after or 0) - (before > 0 and before or 0)
  if delta == 0 then return end
  local key, pair = held_key(slots_key), actor .. SEP .. item
  -- A whole move as text: a Lua number argument costs Redis a "%.17g".
  local arg = delta % 1 == 0 and math.abs(delta) < 2 ^ 53 and call_state.int_text(delta) or delta
  if tonumber(redis.call('HINCRBY', key, pair, arg)) == 0 then redis.call('HDEL', key, pair) end
end

-- A re-weighting of one contribution adding `counted` from events sent as `sent`: what it adds at
-- `weight` (within the cap, against the positive part of the pair's other live contributions).
local function reweighted(slots_key, actor, item, counted, sent, weight)
  local cap = cap_of()
  local target = sent * weight
  if cap == 0 or target <= 0 then return within_cap(0, target, 0) end
  return within_cap(cap, target, held_of(slots_key, actor, item) - math.max(0, counted))
end

-- What a contribution adding `amount` (its events' weights already applied), merged into the pair's
-- contribution adding `own` in its slot (an alias merge, alias_step), may add: within the cap as an
-- event of that amount would be (actor_amount), against the positive part of the pair's other slots.
local function merged(slots_key, actor, item, amount, own)
  local cap = cap_of()
  if cap == 0 or amount <= 0 then return amount end
  return within_cap(cap, amount, held_of(slots_key, actor, item) - math.max(0, own) + own)
end

-- A weight other than 1 for an actor the shard weighs at 1 takes one of the board's `most` places
-- (0: none counted here; the board's count is shard 0's, where a PUT takes its place first). Answers
-- the refusal when every place is taken (nothing stored), else nil. A weight of 1 frees its place.
local function weight_refusal(cfg_key, actor, weight, most)
  if most == 0 or weight == 1 then return nil end
  local weights = keyspace.sibling_key(cfg_key, 'cfg', 'weights')
  if redis.call('HEXISTS', weights, actor) == 1 then return nil end
  local held = redis.call('HLEN', weights)
  if held < most then return nil end
  return 'TB_ACTOR_WEIGHTS_FULL ' .. held .. ' ' .. most
end

-- Stores the actor's weight on the shard (1: the default, not kept) and marks the shard weighted.
local function set_weight(cfg_key, actor, weight)
  local weights = keyspace.sibling_key(cfg_key, 'cfg', 'weights')
  if weight == 1 then redis.call('HDEL', weights, actor) else redis.call('HSET', weights, actor, weight) end
  if call_state.config_field(cfg_key, 'weighted') ~= '1' then redis.call('HSET', cfg_key, 'weighted', '1') end
  call_state.enable_option(cfg_key, 'actor_caps')
  memo.actor = nil
end

-- A board PUT: the cap asked (absent: the stored one, none for a new board). held is kept only while
-- the board has a cap, so a cap put on or taken off a board that may hold contributions drops every
-- window's data (refused without reset); another cap keeps it (held is the same sum).
local function caps_planned(cfg_key, settings, reset, plan)
  local stored = plan and tonumber(redis.call('HGET', cfg_key, 'capPerItem') or '0') or 0
  if settings.capPerItem == nil then settings.capPerItem = stored end
  if not plan or settings.capPerItem == stored then return end
  plan.changed = true
  if (stored == 0) == (settings.capPerItem == 0) then return end
  plan.drop_all = true
  if not reset then
    plan.problems[#plan.problems + 1] = 'actors.capPerItem would change from ' .. (stored == 0 and 'none' or stored) .. ' to '
      .. (settings.capPerItem == 0 and 'none' or settings.capPerItem)
  end
end

-- shard_sync: a cap put on or taken off drops the shard's data (caps_planned).
local function caps_differ(cfg_key, settings)
  local stored = tonumber(redis.call('HGET', cfg_key, 'capPerItem') or '0')
  return (stored == 0) ~= ((settings.capPerItem or 0) == 0)
end

-- Stores the cap; the option's hooks are enabled by a cap, or once some actor of the shard has a weight.
-- Hook config_kept: some actor of the shard has had a weight.
local function weighs_some(cfg_key)
  return redis.call('HGET', cfg_key, 'weighted') == '1'
end

local function caps_stored(cfg_key, settings)
  local cap = settings.capPerItem or 0
  if cap > 0 then redis.call('HSET', cfg_key, 'capPerItem', cap) else redis.call('HDEL', cfg_key, 'capPerItem') end
  return cap > 0 or weighs_some(cfg_key)
end

local function drop_held(base)
  redis.call('UNLINK', base .. 'held')
end

hooks.register_all('actor_caps', { 'actor_amount', actor_amount, 'actor_weighs', actor_weighs,
  'actor_moved', actor_moved, 'window_dropped', drop_held, 'config_planned', caps_planned,
  'config_differs', caps_differ, 'config_stored', caps_stored, 'config_kept', weighs_some })

hooks.export_all(actor_caps, { 'merged', merged, 'reweighted', reweighted, 'set_weight', set_weight,
  'weight_refusal', weight_refusal, 'weight_of', weight_of })
