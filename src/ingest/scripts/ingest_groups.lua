-- requires: call_state, ingest, slot_due, snapshot, window
-- ingest_groups: the fast path of ingest_apply for a batch part no earlier call has seen, on a sum
-- board: the caller sends the part's events summed per (item, second, segments; an event with an
-- actor alone), in the order of each group's last event (so `ties: first` orders items as
-- event-by-event adding would), with only the part's first and last message ids. Applied whole, with
-- the progress, or not at all: when a message of the part was applied before, or any group would be
-- refused, nothing is added and the caller sends the part entry by entry to ingest_apply (which records each refusal for its dead letter).
-- KEYS: dynamic
-- KEYS[1]        board config hash (holds the config version)
-- KEYS[2w], KEYS[2w+1] (w = 1..W): window w's slots index zset and results zset
-- KEYS[2W+2]     the source's progress hash on this shard (as ingest_apply)
-- ARGV[1] .. ARGV[6+4W]: as ingest_apply (config version, now, expiry budget, W, window arguments,
--                lease epoch, segments.max)
-- ARGV[7+4W]     the part's first (lowest) message id, ARGV[8+4W] its last (highest)
-- ARGV[9+4W]     the number of events (messages) the part holds
-- ARGV[10+4W ...] quintuples of item, amount (the group's sum, an integer), event time (unix ms, the
--                group's earliest), segments (joined by commas, "" for none), actor ("" for none: a
--                group with an actor is one event, its contribution counted as one, see actor_lib)
-- Reply: { draining (0|1), due time for the index (unix ms, 0: none), events applied } or { -1 }: not
--        applied, send the part to ingest_apply
-- Errors: as ingest_apply

-- The running call's state (call_lib): the same tables for every call.
local BOARD = call_state.BOARD

local function ingest_groups(keys, args)
  call_state.begin_call(keys, args)
  local err, call = ingest.ingest_begin()
  if err then return err end
  local window_count = call.window_count
  local first = 10 + window.WINDOW_ARGS * window_count
  local last_hi, last_lo = ingest.id_of(call.last)
  local first_hi, first_lo = ingest.id_of(ARGV[7 + window.WINDOW_ARGS * window_count])
  if BOARD.aggregate ~= 'sum' or not ingest.after(first_hi, first_lo, last_hi, last_lo) then return { -1 } end
  local now_sec = math.floor(tonumber(ARGV[2]) / 1000)
  snapshot.cross_all(2, window_count, 5, now_sec)
  local draining = window.expire_all(2, window_count, 5, now_sec, tonumber(ARGV[3]))
  slot_due.settle_slot_due()
  local checks = ingest.ingest_checks(now_sec, window_count, tonumber(ARGV[6 + window.WINDOW_ARGS * window_count]))
  local accepted = {}
  for i = first, #ARGV, 5 do
    -- Arg positions as ingest_apply's (item at base + 1), the id's place left out.
    if ingest.ingest_check(checks, i - 1) then return { -1 } end
    accepted[#accepted + 1] = i - 1
  end
  local events = tonumber(ARGV[9 + window.WINDOW_ARGS * window_count])
  local due_ms = ingest.ingest_write(call, accepted, events, checks.holding_at, ARGV[8 + window.WINDOW_ARGS * window_count], now_sec)
  return { draining, due_ms, events }
end
