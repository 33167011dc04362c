-- module: actor_log
-- requires: call_state, hooks, keyspace, seg_views
-- actor_lib: who contributed what (boards with `actors: true`), a module of the ranking function
-- library after views_lib and segment_views_lib and before window_lib (which calls it on every slot it
-- expires). A segment's windows (segment_lib) keep their contributions the same way, under their keys.
-- KEYS: 0
-- Per window (keys beside its "<base>slots", so in the shard's hash tag):
--   <base>act:<start>  hash  actor<US>item -> "<amount>:<events>" the actor's events in that slot, or
--                            "<amount>:<events>:<sent>" when what they added (amount) is not what they
--                            sent (sent: their amounts as sent; an option's actor_amount hook decided)
--   <base>byactor      zset  actor<US><start><US>item, all scored 0: an actor's contributions by lex range
--   <base>byitem       zset  item<US><start><US>actor, all scored 0: an item's contributions (item retraction)
--   <base>pairs        hash  actor<US>item -> number of live slots holding it (a unique view's count is
--                            the number of pairs of the item, moved on 0 <-> 1 only), and
--                            <US>item -> the item's distinct actors in the window (their pairs; `minActors`
--                            reads it): an actor id is never empty, so no pair's field starts with <US>;
--                            <US> alone -> 1: the counts hold every pair (the hash was made by a version
--                            keeping them; one made before misses the pairs of then: ACTORS.counts_kept)
-- A contribution is kept while its slot lives (expire_window drains the slot's contributions before its
-- items) and until a retraction takes it out (retract_step, retract_item): both remove it from byactor and
-- act:<start> in the same call that subtracts it, so nothing is ever subtracted twice.
-- KEEP_SEC: how long (s) a retraction's record stays readable (retract_step, retract_item).
-- STEP: what each piece of an admin step's work weighs (retract_step, retract_item, reweight_step), in
-- units of about one Redis command each, measured on the sum board of every option (8 windows, 8 views,
-- segments, ties first, capped actors): a window looked into, a segment visited, a contribution taken out
-- or counted again (with each view reading its window: view_step_weight), a slot read, a slot holding
-- the item (with each view), a kept listing rewritten (and a unit per LISTING_ROWS rows it renumbers:
-- renumbering a listing of 1 000 rows in Lua took about 1.6 ms, as long as ~450 commands; at 6 units
-- per 100 rows each a step rewrote five such listings in 8.6 ms), a like forgotten. A step's `most` is then a count
-- of commands, whatever the board's windows, views and segments (write-cost.ts adminStepUnits); what
-- the step drains first spends as many units at most, each expired field weighed at the commands it
-- runs (drained_weight), and a decay view's rebase an eighth of them at most, each member moved
-- REBASED (bound_rebase).

local CALL = call_state.CALL
-- Read with the version on every board (like.lua asks `actors`; every write the end of the latest block).
call_state.config_field_add('actors', 'actors', true)
call_state.config_field_add('blockedUntil', 'actors', true)

local ACTORS = { SEP = '\31', KEEP_SEC = 7 * 86400 }
ACTORS.STEP = { LOOK = 5, SEGMENT = 8, CONTRIBUTION = 16, VIEW = 6, SLOT = 2, HELD = 8, LISTING = 6, LISTING_ROWS = 2, LIKE = 4,
  DRAINED = 2, RESULTS = 4, LEFT = 1, REBASED = 8 }

-- The units an admin step of a board of `window_count` windows runs, asked `most`: at least the looks it
-- may spend before its first piece of work (each window of the board's, of one segment's or sibling's,
-- and of their histories in an item's retraction, and the segment's visit) and one unit more, so that
-- every step takes a contribution, a slot or a listing, or leaves a segment done, whatever `most` the
-- service was set to: a step given less would spend it all looking and the next would do the same.
function ACTORS.step_units(most, window_count)
  return math.max(most, 3 * window_count * ACTORS.STEP.LOOK + ACTORS.STEP.SEGMENT + 1)
end

-- The decay view members a step's call may move to a new landmark (views_lib's rebase, each REBASED
-- units: a chunk of 256 took longer than the step's own work after an idle board, 18 members at 144
-- units keep the costliest step of the harness's board within ~15 M Redis instructions): a share
-- beside its `most` units, the rest left to the next calls (and to writes and reads, a chunk each).
function ACTORS.bound_rebase(most)
  CALL.rebase_chunk = math.max(1, math.floor(most / ACTORS.STEP.REBASED))
end

-- The units of a contribution (or a slot holding the item: `base` HELD) in a window read by `views` views.
function ACTORS.view_step_weight(base, views) return base + ACTORS.STEP.VIEW * views end

-- The units of an expired field (an item's amount or a contribution) a drain takes from the results
-- `top_key` (segment_lib's step_drain): what the board's options run for it, DRAINED (its score), RESULTS
-- a results_changed hook of theirs (ties' order: mark read, entry moved, mark written), LEFT an item_left
-- hook, and its views' change (seg_views): ~14 commands on `wc-rated` (ties first, a wilson view), where
-- a flat 2 + 1 a view let an expire call of 144 units run 704.
function ACTORS.drained_weight(top_key)
  return ACTORS.STEP.DRAINED + ACTORS.STEP.RESULTS * #call_state.hooks_of_top(top_key).results_changed
    + ACTORS.STEP.LEFT * #hooks.item_left + seg_views.change_commands(top_key)
end

-- A window's byactor, pairs and byitem keys, and its last act:<start> key asked (`act`, of slot `start`), by slots key:
-- kept from call to call (a pure function of it), each a sibling_key's three lookups and a call where it is one lookup.
local WINDOW_KEYS = call_state.memo(1024)
local function keys_of(slots_key)
  return WINDOW_KEYS.by[slots_key] or call_state.memo_put(WINDOW_KEYS, slots_key, { keyspace.sibling_key(slots_key,
    'slots', 'byactor'), keyspace.sibling_key(slots_key, 'slots', 'pairs'), keyspace.sibling_key(slots_key, 'slots', 'byitem') })
end
function ACTORS.window_keys(slots_key)
  local keys = keys_of(slots_key)
  return keys[1], keys[2], keys[3]
end

-- A slot start as text, as a concatenation writes it: a number's text (its "%.14g", a few thousand instructions,
-- several a contribution) made once and kept from call to call (emptied when it holds `max`); text as it is.
local START_TEXT = call_state.memo(1024)
local function start_text(start)
  if type(start) ~= 'number' then return start end
  local text = START_TEXT.by[start]
  if text then return text end
  return call_state.memo_put(START_TEXT, start, tostring(start))
end

ACTORS.start_text = start_text

-- The two index members of one contribution: by actor, by item.
function ACTORS.members(actor, start, item)
  start = start_text(start)
  return actor .. ACTORS.SEP .. start .. ACTORS.SEP .. item, item .. ACTORS.SEP .. start .. ACTORS.SEP .. actor
end

function ACTORS.slot_key(slots_key, start)
  local keys = keys_of(slots_key)
  if keys.start ~= start then keys.start, keys.act = start, keyspace.sibling_key(slots_key, 'slots', 'act:' .. start_text(start)) end
  return keys.act
end

-- "<amount>:<events>[:<sent>]" as numbers: amount, events, sent (the amount when not kept; nil: none).
-- The last pair's contribution ACTORS.pair_value read (the actor_amount hook of a cap, just before the same
-- event's ACTORS.add reads it: nothing writes it between): that read is answered from here once, in the same call.
local pair_read = { seq = 0, key = nil, pair = nil, value = nil }

-- The pair's contribution in the slot hash `act_key` (HGET: nil when none), kept for the event's ACTORS.add.
function ACTORS.pair_value(act_key, pair)
  local value = redis.call('HGET', act_key, pair)
  pair_read.seq, pair_read.key, pair_read.pair, pair_read.value = CALL.seq, act_key, pair, value
  return value
end

-- The pairs hash ACTORS.pair_unheld found marked (so existing) in this call without `pair`, and the item's count
-- there, for the same event's ACTORS.pair_moved (taken once): nothing between them writes the hash.
local pairs_seen = { seq = 0, key = nil, pair = nil, count = 0 }

-- Whether the window of `slots_key` holds no contribution of `pair` (actor<US>`item`) in any slot, told by its pairs
-- hash in one read where that hash counts every pair (its mark, ACTORS.counts_kept); then the pair's contribution
-- in the slot hash `act_key` is kept as none for the event's ACTORS.add (as ACTORS.pair_value keeps it) and the
-- hash as existing, with the item's count read in the same HMGET, for its ACTORS.pair_moved: a new actor's event
-- reads one field where it read two and asked EXISTS, and writes the pair and the count in one HSET. false where
-- it does not tell.
function ACTORS.pair_unheld(slots_key, act_key, pair, item)
  local pairs_key = ACTORS.pairs_key(slots_key)
  local got = redis.call('HMGET', pairs_key, pair, ACTORS.SEP, ACTORS.count_field(item))
  if got[1] or not got[2] then return false end
  pair_read.seq, pair_read.key, pair_read.pair, pair_read.value = CALL.seq, act_key, pair, nil
  pairs_seen.seq, pairs_seen.key, pairs_seen.pair, pairs_seen.count = CALL.seq, pairs_key, pair, tonumber(got[3]) or 0
  return true
end

-- The item's count in `pairs_key` where ACTORS.pair_unheld found it without `pair` in this call (taken once).
local function pairs_known(pairs_key, pair)
  local known = pairs_seen.seq == CALL.seq and pairs_seen.key == pairs_key and pairs_seen.pair == pair
  pairs_seen.key = nil
  return known and pairs_seen.count or nil
end

-- The pair's contribution read by ACTORS.pair_value in this call (taken once), else read now.
local function pair_taken(act_key, pair)
  local kept = pair_read
  if kept.key == act_key and kept.pair == pair and kept.seq == CALL.seq then
    kept.key = nil
    return kept.value
  end
  return redis.call('HGET', act_key, pair)
end

function ACTORS.figures(value)
  if not value then return 0, 0, 0 end
  local amount, events, sent = string.match(value, '^(-?%d+):(%d+):?(-?%d*)$')
  amount = tonumber(amount)
  return amount, tonumber(events), tonumber(sent) or amount
end

-- The value of a contribution (figures' format): the sent amounts only when they differ.
function ACTORS.value(amount, events, sent)
  if sent == amount then return call_state.int_text(amount) .. ':' .. call_state.int_text(events) end
  return string.format('%d:%d:%d', amount, events, sent)
end

-- What an event of `actor` sending `amount` adds to `item` in the slot starting at `slot_start` of the window
-- of `slots_key`: the first answer of the options' actor_amount hooks (a weight, a cap), else the amount.
function ACTORS.counted(slots_key, slot_start, actor, item, amount)
  if actor == nil or actor == '' then return amount end
  local hooked = call_state.hooks_of(call_state.CALL.cfg_key).actor_amount
  for i = 1, #hooked do
    local counted = hooked[i](slots_key, slot_start, actor, item, amount)
    if counted then return counted end
  end
  return amount
end

-- Whether some window may count an event of `actor` otherwise than sent (ACTORS.counted). No actor: never.
function ACTORS.weighs(actor)
  if actor == nil or actor == '' then return false end
  local weighs = call_state.hooks_of(call_state.CALL.cfg_key).actor_weighs
  for i = 1, #weighs do
    if weighs[i](actor) then return true end
  end
  return false
end

-- The actor's contribution to the item in one slot of the window of `slots_key` went from adding `before`
-- to adding `after` (added, taken back, expired, retracted, re-weighted): the options' actor_moved hooks.
function ACTORS.moved(slots_key, actor, item, before, after)
  local moved = call_state.hooks_of(call_state.CALL.cfg_key).actor_moved
  for i = 1, #moved do moved[i](slots_key, actor, item, before, after) end
end

-- Moves the item's count in every unique view reading `top_key` by `delta` (one actor more or less):
-- a segment's window's are the segment's unique views (segment_views_lib).
function ACTORS.unique_changed(top_key, item, delta)
  local views = seg_views.views_reading(top_key)
  for i = 1, views and #views or 0 do
    local view = views[i]
    if view.mode == 'unique' then
      if tonumber(redis.call('ZINCRBY', view.top, ACTORS.delta_arg(delta), item)) <= 0 then redis.call('ZREM', view.top, item) end
    end
  end
end

-- A count's move of one as a command's argument: text, which Redis takes as it is, where a Lua number costs it a
-- snprintf("%.17g") (a few thousand instructions, several per contribution); any other move as it is.
local DELTA_ARGS = { [1] = '1', [-1] = '-1' }
function ACTORS.delta_arg(delta) return DELTA_ARGS[delta] or delta end

-- The window's pairs hash (its distinct-actor counts with it).
function ACTORS.pairs_key(slots_key) return keys_of(slots_key)[2] end

-- The field of the pairs hash holding the item's distinct actors in the window.
function ACTORS.count_field(item) return ACTORS.SEP .. item end

-- The item's distinct actors move by `delta`: its count field, and every unique view reading `top_key`.
local function actors_moved(pairs_key, top_key, item, delta)
  local field = ACTORS.count_field(item)
  if tonumber(redis.call('HINCRBY', pairs_key, field, ACTORS.delta_arg(delta))) <= 0 then redis.call('HDEL', pairs_key, field) end
  ACTORS.unique_changed(top_key, item, delta)
end

-- The distinct actors of each of `items` in the window of `pairs_key` (0 where none).
function ACTORS.actor_counts(pairs_key, items)
  if #items == 0 then return {} end
  local fields = {}
  for i = 1, #items do fields[i] = ACTORS.count_field(items[i]) end
  local counts = redis.call('HMGET', pairs_key, unpack(fields))
  for i = 1, #items do counts[i] = tonumber(counts[i]) or 0 end
  return counts
end

-- The actor contributions the slots starting at `starts` of the window of `slots_key` hold: what
-- span_actor_counts reads.
function ACTORS.span_held(slots_key, starts)
  local held = 0
  for _, start in ipairs(starts) do held = held + redis.call('HLEN', ACTORS.slot_key(slots_key, start)) end
  return held
end

-- The distinct actors of each item of the set `wanted` in the slots starting at `starts` (absent: none),
-- from every contribution of those slots: an actor sending to the item in several of them counts once.
function ACTORS.span_actor_counts(slots_key, starts, wanted)
  local seen, counts = {}, {}
  for _, start in ipairs(starts) do
    for _, pair in ipairs(redis.call('HKEYS', ACTORS.slot_key(slots_key, start))) do
      -- An actor id holds no US: the item follows the first one.
      local item = string.sub(pair, string.find(pair, ACTORS.SEP, 1, true) + 1)
      if wanted[item] and not seen[pair] then
        seen[pair], counts[item] = true, (counts[item] or 0) + 1
      end
    end
  end
  return counts
end

-- The quota's actor entries a contribution of `pair` to `item` (slot `slot_start` of the window of
-- `slots_key`) makes new, by `new_field` (segment_lib's GROWTH): its act:<start> field, and with it the
-- item's distinct-actor count when the item has no actor there yet.
function ACTORS.new_entries(new_field, slots_key, slot_start, item, pair)
  if new_field(ACTORS.slot_key(slots_key, slot_start), pair) == 0 then return 0 end
  return 1 + new_field(ACTORS.pairs_key(slots_key), ACTORS.count_field(item))
end

-- Whether the window's distinct-actor counts hold every live pair: its pairs hash is marked (made since
-- the counts are kept), or holds nothing.
function ACTORS.counts_kept(pairs_key)
  return redis.call('HEXISTS', pairs_key, ACTORS.SEP) == 1 or redis.call('EXISTS', pairs_key) == 0
end

-- One live slot more (+1) or less (-1) holds the pair: the item gains an actor at 0 -> 1, loses one at 1 -> 0.
-- A new pairs hash is marked (counts_kept); one left holding only its mark goes, as an empty hash does.
function ACTORS.pair_moved(pairs_key, top_key, actor, item, delta)
  local pair = actor .. ACTORS.SEP .. item
  local count = pairs_known(pairs_key, pair)
  -- A pair the hash did not hold, the item's count read beside it: both written at once (the item gains an actor).
  if count and delta == 1 and count >= 0 then
    redis.call('HSET', pairs_key, pair, '1', ACTORS.count_field(item), call_state.int_text(count + 1))
    ACTORS.unique_changed(top_key, item, 1)
    return
  end
  if delta > 0 and not count and redis.call('EXISTS', pairs_key) == 0 then
    redis.call('HSET', pairs_key, ACTORS.SEP, '1')
  end
  local held = tonumber(redis.call('HINCRBY', pairs_key, pair, ACTORS.delta_arg(delta)))
  if held <= 0 then
    redis.call('HDEL', pairs_key, pair)
    actors_moved(pairs_key, top_key, item, -1)
    if redis.call('HLEN', pairs_key) == 1 and redis.call('HEXISTS', pairs_key, ACTORS.SEP) == 1 then
      redis.call('DEL', pairs_key)
    end
  elseif held == 1 and delta > 0 then
    actors_moved(pairs_key, top_key, item, 1)
  end
end

-- Records one event of `actor` (amount added to the window's slot by the caller, what ACTORS.counted
-- answered; `sent`: the amount sent, nil when the same) in the slot starting at `slot_start` of the
-- window (slots_key, top_key). No actor (""): nothing is kept. `fresh`: the actor most likely holds no
-- contribution to the item in the window (a like counts only once its user's earlier one left every
-- window), so the pairs hash is asked first (ACTORS.pair_unheld: one read where there were three).
function ACTORS.add(slots_key, top_key, slot_start, actor, item, amount, sent, fresh)
  if actor == '' then return end
  local act_key = ACTORS.slot_key(slots_key, slot_start)
  local pair = actor .. ACTORS.SEP .. item
  if fresh then ACTORS.pair_unheld(slots_key, act_key, pair, item) end
  local old = pair_taken(act_key, pair)
  local sum, events, sent_sum = ACTORS.figures(old)
  redis.call('HSET', act_key, pair, ACTORS.value(sum + amount, events + 1, sent_sum + (sent or amount)))
  if amount ~= 0 then ACTORS.moved(slots_key, actor, item, sum, sum + amount) end
  if old then return end
  local byactor, pairs_key, byitem = ACTORS.window_keys(slots_key)
  local by_actor, by_item = ACTORS.members(actor, slot_start, item)
  redis.call('ZADD', byactor, '0', by_actor)
  redis.call('ZADD', byitem, '0', by_item)
  ACTORS.pair_moved(pairs_key, top_key, actor, item, 1)
end

-- Takes one event of `amount` back from the actor's contribution in the slot starting at `slot_start`
-- (an unlike): the contribution goes with its last event. No actor (nil or ""): nothing.
function ACTORS.take_back(slots_key, top_key, slot_start, actor, item, amount)
  if actor == nil or actor == '' then return end
  local act_key = ACTORS.slot_key(slots_key, slot_start)
  local pair = actor .. ACTORS.SEP .. item
  local sum, events, sent = ACTORS.figures(redis.call('HGET', act_key, pair))
  if events == 0 then return end
  ACTORS.moved(slots_key, actor, item, sum, sum - amount)
  if events > 1 then
    redis.call('HSET', act_key, pair, ACTORS.value(sum - amount, events - 1, sent - amount))
    return
  end
  redis.call('HDEL', act_key, pair)
  local byactor, pairs_key, byitem = ACTORS.window_keys(slots_key)
  local by_actor, by_item = ACTORS.members(actor, slot_start, item)
  redis.call('ZREM', byactor, by_actor)
  redis.call('ZREM', byitem, by_item)
  ACTORS.pair_moved(pairs_key, top_key, actor, item, -1)
end

-- Expiry of the slot starting at `slot_start`: drains its contributions (at most `budget` fields),
-- deleting before anything else (a full Redis still expires). Returns the budget left and whether
-- none is left (only then may the caller drain the slot's items).
function ACTORS.slot_expire(slots_key, top_key, slot_start, budget)
  local act_key = ACTORS.slot_key(slots_key, slot_start)
  local size = redis.call('HLEN', act_key)
  if size == 0 then return budget, true end
  local whole = size <= budget
  local entries
  if whole then entries = redis.call('HGETALL', act_key) else entries = redis.call('HRANDFIELD', act_key, budget, 'WITHVALUES') end
  local fields, members, item_members = {}, {}, {}
  for i = 1, #entries, 2 do
    local pair = entries[i]
    local actor, item = string.match(pair, '^([^\31]*)\31(.*)$')
    fields[#fields + 1] = pair
    members[#members + 1], item_members[#item_members + 1] = ACTORS.members(actor, slot_start, item)
    local amount = ACTORS.figures(entries[i + 1])
    if amount ~= 0 then ACTORS.moved(slots_key, actor, item, amount, 0) end
  end
  if whole then redis.call('DEL', act_key) else redis.call('HDEL', act_key, unpack(fields)) end
  local byactor, pairs_key, byitem = ACTORS.window_keys(slots_key)
  redis.call('ZREM', byactor, unpack(members))
  redis.call('ZREM', byitem, unpack(item_members))
  for _, pair in ipairs(fields) do
    local actor, item = string.match(pair, '^([^\31]*)\31(.*)$')
    ACTORS.pair_moved(pairs_key, top_key, actor, item, -1)
  end
  return budget - #fields, whole
end

-- Unlinks the contributions of a window whose keys go (drop_window): `base` is "<tag>:<window>:".
function ACTORS.drop_window(base, starts)
  for _, start in ipairs(starts) do redis.call('UNLINK', base .. 'act:' .. start) end
  redis.call('UNLINK', base .. 'byactor', base .. 'pairs', base .. 'byitem')
end

actor_log.ACTORS = ACTORS

-- Stores the setting (config field `actors`, absent when off); the option has no hot hook to enable.
local function actors_stored(cfg_key, settings)
  if settings.actors == true then redis.call('HSET', cfg_key, 'actors', '1') else redis.call('HDEL', cfg_key, 'actors') end
  return false
end

hooks.register_all('actors', { 'config_planned', hooks.flag_planned('actors'), 'config_stored', actors_stored,
  'actor_counted', ACTORS.counted, 'actor_added', ACTORS.add, 'slot_leaving', ACTORS.slot_expire,
  'window_dropped', ACTORS.drop_window })
