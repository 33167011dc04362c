-- requires: aggregate, ingest, reader
-- ingest_groups: the fast path of ingest_apply for a batch part no earlier call has seen, on a sum
-- board: the caller sends the part's events summed per (item, second, segments; an event with an
-- actor alone), in the order of each group's last event (so `ties: first` orders items as
-- event-by-event adding would), with only the part's first and last message ids. Applied whole, with
-- the progress, or not at all: when a message of the part was applied before, or any group would be
-- refused, nothing is added and the caller sends the part entry by entry to ingest_apply (which records each refusal for its dead letter).
-- Keys: as ingest_apply (cfg, each window's slots index and results, the source's progress hash)
-- Args (reader.read_call, CALLS.ingest_groups): the header, epoch and segments_max as ingest_apply, then
--   first_id  the part's first (lowest) message id
--   last_id   its last (highest)
--   events    the number of events (messages) the part holds
--   groups    JSON list of the groups, each { item, amount (the group's sum, an integer), at_ms (event
--             time, unix ms, the group's earliest), segments (joined by commas, "" for none), actor (""
--             for none: a group with an actor is one event, its contribution counted as one, see actor_lib) }
-- Reply (reader.answer, CALLS.ingest_groups): taken (0: not applied, send the part to ingest_apply;
--   the other fields 0), draining (0|1), due_ms (due time for the index, unix ms, 0: none), applied
--   (events applied)
-- Errors: as ingest_apply

-- The answer of a part this path does not apply: the caller sends it to ingest_apply.
local function not_taken()
  return reader.answer(CALLS.ingest_groups, { taken = 0, draining = 0, due_ms = 0, applied = 0 })
end

local function ingest_groups(keys, args)
  local cfg_key = keys[1]
  local refused, header, arg, call = ingest.ingest_begin(keys, args, CALLS.ingest_groups)
  if refused then return refused end
  local last_hi, last_lo = ingest.id_of(call.last)
  local first_hi, first_lo = ingest.id_of(arg.first_id)
  if aggregate.mode() ~= 'sum' or not ingest.after(first_hi, first_lo, last_hi, last_lo) then return not_taken() end
  local draining, checks = ingest.ingest_prepare(call, header, tonumber(arg.segments_max))
  local groups = cjson.decode(arg.groups)
  for _, group in ipairs(groups) do
    if ingest.ingest_check(checks, group) then return not_taken() end
  end
  local events = tonumber(arg.events)
  local due_ms = ingest.ingest_write(cfg_key, call, groups, events, checks.holding_at, arg.last_id, header.now_sec)
  return reader.answer(CALLS.ingest_groups, { taken = 1, draining = draining, due_ms = due_ms, applied = events })
end
