-- module: aggregate
-- requires: call_state, hooks, keyspace, slot_due, window
-- aggregate_lib: the windows of a max / min / last board (the option aggregate), a module of the
-- function libraries on boards. The board's aggregate is its config field `aggregate` (absent: sum),
-- read with the version on every board (call_lib's every-board fields); expiry asks the hook
-- slots_kept (SLOTS_KEPT) how to drain a window, and the score writes (record_score, the batch
-- increment) call this table. Every change of a window's results is told to `changed` (window_lib's
-- results_changed, passed in by the callers), with the new score, 0 when the item left the window.
-- KEYS: 0
-- A slot hash holds, per item, what the item recorded inside that slot: on max and min its best score
-- there; on last "<at_ms>:<score>" of its latest event there (equal times: the later arrival, since
-- Redis applies writes one at a time). A window's results zset holds, per item, the best over its
-- live slots (last: the newest live slot holding the item). Events of one second share a slot, so on
-- last a later slot always holds later events.
-- On last a window also keeps, per item it holds, the start of the newest slot holding the item (the
-- hash <base>newest): a late event asks it whether a newer slot holds the item, one HGET, where a
-- scan of the newer slots cost up to MAX_AGGREGATE_SLOTS reads per window (issue #45), and expiry
-- asks it whether a drained slot was the item's newest (then no live slot holds the item: it leaves).
-- An item the window holds without an entry there was written before the hash existed: it is found
-- once by the old scan, and entered.
-- On max and min, when expiry drains a slot, the items whose window score equals what they recorded
-- there may have taken it from that slot: only they are recomputed from the live slots, one HGET per
-- live slot (at most MAX_AGGREGATE_SLOTS), counted in the budget.
-- On a board with a tiebreak (the hook `tiebreak`, src/ranking/options/tiebreak/) a record is the pair
-- (score, tiebreak): a score argument reads "<score>,<tiebreak>" (",<tiebreak>" absent: 0), a slot
-- value holds the pair the same way, max / min keep the better pair (score first, then the tiebreak by
-- its order), and every change of a window's pair goes to `changed` with its tiebreak; the window's
-- tiebreak is held by the option (asked with the hook). Expiry recomputes an item whose window pair
-- equals the drained one, exactly as for scores.

-- Score, event time (unix ms; 0 on max and min) and tiebreak (0: none) of a slot hash value.
local function best_decode(mode, value)
  local at_ms, score, tb = 0, nil, nil
  if mode == 'last' then
    at_ms, score, tb = string.match(value, '^(%d+):(-?%d+),?(-?%d*)$')
  else
    score, tb = string.match(value, '^(-?%d+),?(-?%d*)$')
  end
  return tonumber(score), tonumber(at_ms), tonumber(tb) or 0
end

-- Whether tiebreak `tb` beats `held_tb` under `order` (nil: no tiebreak, never).
local function tiebreak_beats(order, tb, held_tb)
  if order == 'desc' then return tb > held_tb end
  if order == 'asc' then return tb < held_tb end
  return false
end

-- Whether a new event (score, at_ms, tb) replaces what an item holds (held_score, held_at, held_tb) in
-- one slot, or in a max / min window (`order`: the tiebreak's, nil when none).
local function best_beats(mode, score, at_ms, held_score, held_at, order, tb, held_tb)
  if mode == 'max' then return score > held_score or (score == held_score and tiebreak_beats(order, tb, held_tb)) end
  if mode == 'min' then return score < held_score or (score == held_score and tiebreak_beats(order, tb, held_tb)) end
  return at_ms >= held_at
end

-- The board's tiebreak order and the item's tiebreak held in the window of `top_key` (hooks_lib
-- `tiebreak`), or nil when the board keeps scores alone.
local function tiebreak_of(top_key, item)
  local asked = call_state.hooks_of_top(top_key).tiebreak
  for i = 1, #asked do
    local order, held = asked[i](top_key, item)
    if order then return order, held end
  end
  return nil, nil
end

local function best_slot_key(slots_key, start)
  return keyspace.sibling_key(slots_key, 'slots', 'slot:' .. start)
end

-- A last window's bookkeeping: the newest slot holding each item, and what a late score takes.
local LAST = {}

-- The hash of a last window: item -> start of the newest slot holding it (dropped with the window).
function LAST.newest_key(slots_key)
  return keyspace.sibling_key(slots_key, 'slots', 'newest')
end

-- An item's window score over the slots `starts` (newest first), or nil when none holds it; the
-- slots read; on last the start of the slot it came from; and its tiebreak (`order`: the board's, nil
-- when none).
local function best_over(mode, slots_key, starts, item, order)
  local best, best_tb, reads = nil, 0, 0
  for _, start in ipairs(starts) do
    local value = redis.call('HGET', best_slot_key(slots_key, start), item)
    reads = reads + 1
    if value then
      local score, _, tb = best_decode(mode, value)
      -- last: the newest slot holding the item holds its latest event.
      if mode == 'last' then return score, reads, start, tb end
      if best == nil or best_beats(mode, score, 0, best, 0, order, tb, best_tb) then best, best_tb = score, tb end
    end
  end
  return best, reads, nil, best_tb
end

-- Drained `item` (what it recorded in the slot starting at `slot_start`, `value`) on a last window:
-- when that slot was its newest, no live slot holds it and it leaves; else its score stands. Answers
-- false for an item with no newest entry (written before the hash: the caller recomputes it).
function LAST.settle(slots_key, top_key, slot_start, item, changed)
  local newest_key = LAST.newest_key(slots_key)
  local newest = redis.call('HGET', newest_key, item)
  if not newest then return false end
  if tonumber(newest) == slot_start then
    redis.call('HDEL', newest_key, item)
    if redis.call('ZREM', top_key, item) == 1 then changed(top_key, item, 0) end
  end
  return true
end

-- After expiry deleted `entries` (item, value pairs, HGETALL shape) from the expired slot starting at
-- `slot_start` of a window whose live slots start at `live_from` or later: each item whose window score
-- (and tiebreak) equals the drained one gets the best of the live slots, or leaves the window when none
-- holds it (last: when the drained slot was its newest). Returns the slots read.
local function best_settle(mode, slots_key, top_key, slot_start, live_from, entries, changed)
  local starts, reads = nil, 0
  for i = 1, #entries, 2 do
    local item = entries[i]
    if not (mode == 'last' and LAST.settle(slots_key, top_key, slot_start, item, changed)) then
      local held = redis.call('ZSCORE', top_key, item)
      local drained, _, drained_tb = best_decode(mode, entries[i + 1])
      local order, held_tb = tiebreak_of(top_key, item)
      if held and tonumber(held) == drained and (not order or tonumber(held_tb or '0') == drained_tb) then
        starts = starts or redis.call('ZRANGE', slots_key, '+inf', live_from, 'BYSCORE', 'REV')
        local best, spent, _, best_tb = best_over(mode, slots_key, starts, item, order)
        reads = reads + spent
        if best == nil then
          redis.call('ZREM', top_key, item)
          changed(top_key, item, 0)
        elseif best ~= tonumber(held) or (order and best_tb ~= drained_tb) then
          redis.call('ZADD', top_key, best, item)
          changed(top_key, item, best, order and string.format('%.0f', best_tb) or nil)
        end
      end
    end
  end
  return reads
end

-- On last, whether the window takes an event of `item` in the slot starting at `slot_start` (it does
-- unless a newer slot holds the item), the newest slot entered for the item. `held_before`: the
-- window's score of the item before (false: none holds it, so no newer slot does either).
function LAST.takes(slots_key, slot_start, item, held_before)
  local newest_key = LAST.newest_key(slots_key)
  local newest = tonumber(redis.call('HGET', newest_key, item))
  if newest == nil and held_before then
    -- Written before the hash existed: the newest slot holding it, found once.
    local newer = redis.call('ZRANGE', slots_key, '+inf', '(' .. slot_start, 'BYSCORE', 'REV')
    local _, _, found = best_over('last', slots_key, newer, item)
    if found then
      redis.call('HSET', newest_key, item, found)
      return false
    end
  end
  if newest ~= nil and newest > slot_start then return false end
  if newest ~= slot_start then redis.call('HSET', newest_key, item, slot_start) end
  return true
end

-- Records an event (score and event time as their decimal strings) of an item in the slot starting
-- at `slot_start` of one window (already indexed) and answers the item's window score. The slot keeps
-- the event when it beats what the item holds there; the window then takes it on max (ZADD GT) and
-- min (ZADD LT), and on last when no newer slot holds the item (a late event changes only its slot).
-- On a board with a tiebreak `score_arg` may read "<score>,<tiebreak>": best_record_pair.
local function best_record(mode, slots_key, top_key, slot_start, item, score_arg, at_arg, changed)
  local order, held_tb = tiebreak_of(top_key, item)
  if order then return aggregate.best_record_pair(mode, slots_key, top_key, slot_start, item, score_arg, at_arg, changed, order, held_tb) end
  local slot_key = best_slot_key(slots_key, slot_start)
  local score, at_ms = tonumber(score_arg), tonumber(at_arg)
  local before = redis.call('ZSCORE', top_key, item)
  local held = redis.call('HGET', slot_key, item)
  if held then
    local held_score, held_at = best_decode(mode, held)
    if not best_beats(mode, score, at_ms, held_score, held_at) then return tonumber(before) end
  end
  redis.call('HSET', slot_key, item, mode == 'last' and (at_arg .. ':' .. score_arg) or score_arg)
  if mode == 'max' then
    redis.call('ZADD', top_key, 'GT', score, item)
  elseif mode == 'min' then
    redis.call('ZADD', top_key, 'LT', score, item)
  elseif LAST.takes(slots_key, slot_start, item, before) then
    redis.call('ZADD', top_key, score, item)
  end
  local after = tonumber(redis.call('ZSCORE', top_key, item))
  if before == false or tonumber(before) ~= after then changed(top_key, item, after) end
  return after
end

-- best_record of the pair (score, tiebreak) `score_arg` on a board whose tiebreak has `order`; the
-- item's window tiebreak is `held_tb` (nil: none held). The slot keeps the better pair (last: the later
-- event); a max / min window takes a better pair than it holds, a last window the pair of its newest slot.
function aggregate.best_record_pair(mode, slots_key, top_key, slot_start, item, score_arg, at_arg, changed, order, held_tb)
  local slot_key = best_slot_key(slots_key, slot_start)
  local score_text, tb_text = string.match(score_arg, '^(-?%d+),?(-?%d*)$')
  if tb_text == '' then tb_text = '0' end
  local score, tb, at_ms = tonumber(score_text), tonumber(tb_text), tonumber(at_arg)
  local before = redis.call('ZSCORE', top_key, item)
  local held = redis.call('HGET', slot_key, item)
  if held then
    local held_score, held_at, held_slot_tb = best_decode(mode, held)
    if not best_beats(mode, score, at_ms, held_score, held_at, order, tb, held_slot_tb) then return tonumber(before) end
  end
  local pair = score_text .. ',' .. tb_text
  redis.call('HSET', slot_key, item, mode == 'last' and (at_arg .. ':' .. pair) or pair)
  local takes
  if mode == 'last' then
    takes = LAST.takes(slots_key, slot_start, item, before)
  else
    takes = before == false or best_beats(mode, score, 0, tonumber(before), 0, order, tb, tonumber(held_tb or '0'))
  end
  if not takes then return tonumber(before) end
  if before ~= false and tonumber(before) == score and tonumber(held_tb or '0') == tb and held_tb then return score end
  redis.call('ZADD', top_key, score, item)
  changed(top_key, item, score, tb_text)
  return score
end

-- The aggregate of the call's board (sum, max, min, last): its config as version_error read it; sum
-- before (call_lib resets the config's key as each call begins).
local CONFIG = call_state.CONFIG
local function mode()
  return CONFIG.cfg_key and CONFIG.aggregate or 'sum'
end

-- A batch entry's score on a max / min / last board (the batch increment), in the slot starting at
-- `slot_start` of the window planned by board_write.batch_window: indexed once per call as
-- add_batch_entry does, then best_record. Answers the due time of a slot this created, or nil.
local function record_batch_score(win, slot_start, item, score_arg, at_arg)
  local new_due_ms = nil
  if not win.indexed[slot_start] then
    win.indexed[slot_start] = true
    new_due_ms = slot_due.index_slot(win.slots_key, slot_start, win.period_sec)
  end
  best_record(mode(), win.slots_key, win.top_key, slot_start, item, score_arg, at_arg, window.results_changed)
  return new_due_ms
end

-- Hook slots_kept: a max / min / last window's slots hold records, not sums. A pass drains budget /
-- slots fields, at least one (each may read every live slot); best_settle recomputes what they gave.
local SLOTS_KEPT = {
  per_pass = function(slots_key, budget) return math.max(1, math.floor(budget / redis.call('ZCARD', slots_key))) end,
  settle = function(slots_key, top_key, slot_start, live_from, entries, changed)
    return best_settle(mode(), slots_key, top_key, slot_start, live_from, entries, changed)
  end,
}
hooks.register('slots_kept', function() if mode() ~= 'sum' then return SLOTS_KEPT end end, 'aggregate')
hooks.register('any_sign', function(cfg_key)
  local stored = call_state.config_field(cfg_key, 'aggregate') -- every sign a max / min / last window records
  return stored ~= false and stored ~= nil and stored ~= 'sum'
end, 'aggregate')
call_state.config_field_add('aggregate', 'aggregate', true)

hooks.export_all(aggregate, { 'mode', mode, 'best_record', best_record, 'record_batch_score', record_batch_score })
