-- module: window_event
-- requires: window
-- window_event_lib: a write of one item at one time in every window of a board (like, record_score),
-- a module of the function libraries on boards beside window_lib: in each window the event lands in,
-- the write's own add, then the item's rank; in the others the item's standing as it is.
-- KEYS: 0

-- Appends to `flat` each window's score and rank of `item` after an event at `at_sec` (unix s): a
-- window of `lands` (0-based index -> true) gets `add(slots_key, top_key, slot_start, rule)`, which
-- answers the item's new score there and the due time of a slot it created (nil: none); a window the
-- event is too old for answers the item's standing (rank 0 when it holds none, which a 0 score would
-- otherwise rank on a board listing every sign). Window w's slots and results keys are
-- keys[first_key + 2w] and keys[first_key + 2w + 1]. Answers the earliest due time of a slot created.
local function standings_after(flat, keys, first_key, header, item, at_sec, lands, add)
  local new_due_ms = nil
  for w = 0, #header.windows - 1 do
    local slots_key, top_key = keys[first_key + 2 * w], keys[first_key + 1 + 2 * w]
    local score, rank
    if lands[w] then
      local rule = header.windows[w + 1]
      local slot_start = window.current_slot(at_sec, rule.interval_sec, rule.origin_sec)
      local due_ms
      score, due_ms = add(slots_key, top_key, slot_start, rule)
      if due_ms then new_due_ms = math.min(new_due_ms or math.huge, due_ms) end
      rank = window.item_rank(top_key, item, score)
    else
      score, rank = window.standing(top_key, item)
    end
    flat[#flat + 1] = score
    flat[#flat + 1] = rank
  end
  return new_due_ms
end

window_event.standings_after = standings_after
