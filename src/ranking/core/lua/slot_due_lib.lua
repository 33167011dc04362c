-- module: slot_due
-- requires: call_state, reader
-- slot_due_lib: when a shard's windows next have a slot to expire, kept in its config so that a call
-- asks Redis nothing more to learn that nothing expired, and the due time a write tells the scheduler's
-- index (due_to_index); a module of the ranking function library (and of the ingest one), before
-- window_lib, whose expiry and slot index use it.
-- KEYS: 0

-- The running call's state (call_lib): the same tables for every call.
local CONFIG = call_state.CONFIG
-- The config's seconds as numbers: a shard's calls read the same texts call after call, and a memo's
-- lookup costs a small part of tonumber's two parses.
local memo_number = reader.memo_number

-- Due times (unix ms) feed the scheduler's due index: a slot starting at s (unix s) of a window of
-- period P is expired once the current slot reaches s + P (expire_window's cutoff), so at (s + P) s; a
-- calendar window's slot (P its period's length) at its period's end.
local function slot_due_ms(slot_start, period_sec)
  return (slot_start + period_sec) * 1000
end

-- The shard's slot due, cfg field slotDueSec (unix s): no slot of the shard's rolling windows (its own,
-- not its segments') expires before that second, so a call made earlier has nothing to expire there and
-- asks nothing (expire_window), its one HMGET (read_config) told it. A rolling window's slot s expires
-- at s + P exactly (P is a multiple of the interval). Kept a lower bound: every slot a board window
-- gets goes through index_slot, which lowers it; removing slots (expiry, retraction) only leaves it
-- early; a board or shard put clears it (board_put, shard_sync: periods may change). Absent (a board
-- older than the field, a cleared one) or reached, a call checks each window's oldest slot as before,
-- and a call that checked every window (settle_slot_due) stores the new value. NO_SLOT_DUE: no slot.
local NO_SLOT_DUE = 4503599627370496

-- Whether `slots_key` is a segment's or a metric's (its name holds "~"), by key, kept from call to call
-- (a pure function of it; emptied when it holds `max` keys): every increment asks it, and a lookup
-- costs a small part of string.find's call. Hot callers look `by` up first, and call tilde_key on a miss.
local TILDE = { by = {}, size = 0, max = 1024 }

local function tilde_key(slots_key)
  local known = string.find(slots_key, '~', 1, true) ~= nil
  if TILDE.size >= TILDE.max then TILDE.by, TILDE.size = {}, 0 end
  TILDE.by[slots_key], TILDE.size = known, TILDE.size + 1
  return known
end

-- Whether the window of `slots_key` certainly holds no expired slot at `now_sec`: a rolling window of
-- the board (a segment's keys hold "~", a calendar window has an origin) before the shard's slot due.
local function nothing_due(slots_key, now_sec, origin_sec)
  local due = CONFIG.slotDueSec
  if not due or not CONFIG.cfg_key or (origin_sec or 0) > 0 or now_sec >= memo_number(due) then return false end
  local tilde = TILDE.by[slots_key]
  if tilde == nil then tilde = tilde_key(slots_key) end
  return not tilde
end

-- Lowers the shard's slot due (when stored) to `due_sec`, a slot just indexed there.
local function lower_slot_due(due_sec)
  local stored = CONFIG.slotDueSec
  if stored and CONFIG.cfg_key and due_sec < tonumber(stored) then
    CONFIG.slotDueSec = string.format('%d', due_sec)
    redis.call('HSET', CONFIG.cfg_key, 'slotDueSec', CONFIG.slotDueSec)
  end
end

-- Stores the slot due expire_all found in this call, if it found one (the caller passed every window
-- of the board, its own keys: increments, batches, scores, likes, ingest, the scheduler's expire).
local function settle_slot_due()
  local due = CONFIG.settle_due
  if due == nil or CONFIG.cfg_key == nil then return end
  CONFIG.settle_due = nil
  local value = string.format('%d', due)
  if CONFIG.slotDueSec == value then return end
  redis.call('HSET', CONFIG.cfg_key, 'slotDueSec', value)
  CONFIG.slotDueSec = value
end

-- Indexes the slot starting at `slot_start` in a board window (period `period_sec`); answers its due
-- time (unix ms) when it is new there, else nil.
local function index_slot(slots_key, slot_start, period_sec)
  if redis.call('ZADD', slots_key, 'NX', slot_start, slot_start) ~= 1 then return nil end
  lower_slot_due(slot_start + period_sec)
  return slot_due_ms(slot_start, period_sec)
end

-- The shard's indexed second, cfg field indexedSec (unix s): a time t whose slot, in every rolling
-- window of the board, is in that window's slots index, so an increment in the same slots (the common
-- case: events at now) adds to them without a ZADD NX. Exact while every one of those slots is
-- indexed: an event a window holds has a live slot there, which only expiry (expire_window, after the
-- slot is gone from every caller's live span) or a board put (board_put, shard_sync: cleared with the
-- slot due) removes, and expire_window forgets the field whenever it removes a slot. Set by an
-- increment at now that had to index a slot (event_adder); absent: every slot is indexed as before.
-- The board's own windows only: `slots_key` (when given) of a segment or a metric ("~") never is.
local function slot_known(slot_start, interval_sec, origin_sec, slots_key)
  local t = CONFIG.indexedSec
  if not t or not CONFIG.cfg_key or (origin_sec or 0) > 0 then return false end
  if slots_key then
    local tilde = TILDE.by[slots_key]
    if tilde == nil then tilde = tilde_key(slots_key) end
    if tilde then return false end
  end
  t = memo_number(t)
  return t - t % interval_sec == slot_start
end

-- Indexes a board window's slot of now (index_slot) unless the shard's indexed second names it
-- (slot_known). Answers the slot's due time when it is new to the index (else nil), and whether a
-- rolling window's slot had to be looked at, so the caller, having done every window, notes now as the
-- indexed second (note_indexed).
local function index_unless_known(slots_key, slot_start, period_sec, interval_sec, origin_sec)
  -- A metric's windows ("~", the metrics option) are indexed each time, and never noted as the shard's.
  if string.find(slots_key, '~', 1, true) then return index_slot(slots_key, slot_start, period_sec), false end
  if slot_known(slot_start, interval_sec, origin_sec) then return nil, false end
  return index_slot(slots_key, slot_start, period_sec), (origin_sec or 0) == 0
end

-- Stores `at_sec` as the shard's indexed second (its slots were just indexed in every window).
local function note_indexed(at_sec)
  if not CONFIG.cfg_key then return end
  CONFIG.indexedSec = string.format('%d', at_sec)
  redis.call('HSET', CONFIG.cfg_key, 'indexedSec', CONFIG.indexedSec)
end

-- Forgets the indexed second of the shard holding `slots_key` (a slot just left its index): the next
-- increment indexes its slots again.
local function forget_indexed(slots_key)
  local cfg_key = string.match(slots_key, '^[^}]*}') .. ':cfg'
  if cfg_key == CONFIG.cfg_key then
    if not CONFIG.indexedSec then return end
    CONFIG.indexedSec = false
  end
  redis.call('HDEL', cfg_key, 'indexedSec')
end

-- The earliest due time of the oldest slots of the call's `windows` (bind_windows); nil when no
-- window holds a slot.
local function earliest_slot_due_ms(windows)
  local earliest = nil
  for w = 0, windows.count - 1 do
    local oldest = redis.call('ZRANGE', windows.slots[w], 0, 0)
    if #oldest > 0 then
      local due = slot_due_ms(tonumber(oldest[1]), windows.period_sec[w])
      if earliest == nil or due < earliest then earliest = due end
    end
  end
  return earliest
end

-- What a write answers for the due index: the due time of the slots it created when one of them is
-- now the shard's earliest (the service then lowers the board's index entry to it, ZADD LT), else 0.
-- Any older slot of the shard is already covered by the index (an entry at or before its due time,
-- or a claim whose completion re-enters it), so the common write, which creates no slot or a slot
-- later than the oldest, costs nothing more. `new_due_ms`: the earliest due of the new slots, or nil.
local function due_to_index(windows, new_due_ms)
  if new_due_ms == nil then return 0 end
  if earliest_slot_due_ms(windows) < new_due_ms then return 0 end
  return new_due_ms
end

slot_due.slot_due_ms = slot_due_ms
slot_due.nothing_due = nothing_due
slot_due.settle_slot_due = settle_slot_due
slot_due.index_slot = index_slot
slot_due.slot_known = slot_known
slot_due.index_unless_known = index_unless_known
slot_due.note_indexed = note_indexed
slot_due.forget_indexed = forget_indexed
slot_due.NO_SLOT_DUE = NO_SLOT_DUE
slot_due.earliest_slot_due_ms = earliest_slot_due_ms
slot_due.due_to_index = due_to_index
