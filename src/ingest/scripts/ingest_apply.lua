-- ingest_apply: applies the events of one stream batch that land on one board shard, entry by entry,
-- and records in the same call how far the source got on this shard, so a message delivered again is
-- recognised. The general path: redeliveries, refusals, max / min / last boards (ingest_groups is the
-- fast path of a fresh batch on a sum board and hands everything else to this one).
-- KEYS: dynamic
-- KEYS[1]        board config hash (holds the config version)
-- KEYS[2w], KEYS[2w+1] (w = 1..W): window w's slots index zset and results zset
-- KEYS[2W+2]     the source's progress hash on this shard (same hash tag):
--                  last     the highest message id applied here ("<hi>-<lo>": stream id; JetStream: "<seq>-0")
--                  epoch    the highest lease epoch of the source's consumer seen here
--                  applied  events applied here, all time
--                  r:<id>   why message <id> was refused here, until its dead letter is written
-- ARGV[1]        config version the caller built its keys from
-- ARGV[2]        now, unix milliseconds
-- ARGV[3]        expiry budget: most expired-slot fields drained by this call
-- ARGV[4]        W, number of windows
-- ARGV[5+4(w-1)] .. ARGV[8+4(w-1)]: window w's period (s), interval (s), creation time (unix ms), origin (window_lib)
-- ARGV[5+4W]     the caller's lease epoch: a lower one than recorded is refused (a consumer that lost
--                its lease to another instance must not write behind the new holder's back)
-- ARGV[6+4W]     segments.max, most live segments on this shard (0: the board takes none)
-- ARGV[7+4W ...] quintuples of message id, item, amount (integer, non-zero), event time (unix ms),
--                segments (joined by commas, "" for none), ids ascending
-- Reply: { draining (0|1), due time for the index (unix ms, 0: none), events applied now, then one
--        outcome per entry: "a" applied now, "s" applied before, "r:<reason>" refused (now or before:
--        dead-letter it; AGGREGATE_MISMATCH on a max / min / last board, AT_OUT_OF_SPAN,
--        SEGMENT_LIMIT, BOARD_FULL) }
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG (nothing applied), TB_INGEST_FENCED <epoch> (nothing applied)

-- Message ids "<hi>-<lo>" as two numbers (exact up to 2^53: stream ids' milliseconds and sequences are).
local function id_of(text)
  local hi, lo = string.match(text, '^(%d+)-(%d+)$')
  return tonumber(hi), tonumber(lo)
end

local function after(a_hi, a_lo, b_hi, b_lo)
  return a_hi > b_hi or (a_hi == b_hi and a_lo > b_lo)
end

-- Growth on this shard: new items are admitted in order until the board's cap (see board_write_lib).
-- Answers admit(item, take): whether the item may be written (true for an item the shard already
-- holds); with `take` it is counted as admitted.
local function ingest_admitter(window_count)
  local cap = item_cap(KEYS[1])
  local held = nil
  local admitted = {}
  return function(item, take)
    if cap == 0 or admitted[item] then return true end
    if new_items(2, window_count, { item }) == 0 then
      admitted[item] = true
      return true
    end
    if held == nil then
      held = 0
      for w = 0, window_count - 1 do held = math.max(held, redis.call('ZCARD', KEYS[3 + 2 * w])) end
    end
    if held + 1 > cap then return false end
    if take then
      held = held + 1
      admitted[item] = true
    end
    return true
  end
end

-- Segments on this shard: new segments are admitted in order until segments.max (as segment_refusal
-- counts them: a segment is live while its newest slot has not expired). Answers admit(names, take).
local function ingest_segment_admitter(max, now_sec)
  local segs = segment_indexes(KEYS[1])
  local live, known = nil, {}
  return function(names, take)
    local fresh = {}
    for _, name in ipairs(names) do
      if known[name] == nil then
        local live_until = tonumber(redis.call('ZSCORE', segs, name))
        known[name] = live_until ~= nil and live_until > now_sec
      end
      if not known[name] then fresh[#fresh + 1] = name end
    end
    if #fresh == 0 then return true end
    live = live or redis.call('ZCOUNT', segs, '(' .. now_sec, '+inf')
    if live + #fresh > max then return false end
    if take then
      live = live + #fresh
      for _, name in ipairs(fresh) do known[name] = true end
    end
    return true
  end
end

-- Checks one event (its item at ARGV[base + 1], time at ARGV[base + 3], segments at ARGV[base + 4])
-- against the windows, segments.max and the item cap, in that order (as the HTTP batch does), and
-- takes its share of both limits when it passes. Answers nil (accepted) or the refusal's reason.
-- `checks`: { holding_at (second -> windows holding it, or false), admit, admit_segments, now_sec, window_count }.
local function ingest_check(checks, base)
  local at_sec = math.floor(tonumber(ARGV[base + 3]) / 1000)
  local holding_at = checks.holding_at
  if holding_at[at_sec] == nil then holding_at[at_sec] = window_holds(at_sec, checks.now_sec, checks.window_count) or false end
  if not holding_at[at_sec] then return 'AT_OUT_OF_SPAN' end
  -- Most events name no segment: no list is made for them.
  local names = ARGV[base + 4] ~= '' and segment_names(ARGV[base + 4]) or nil
  if names and not checks.admit_segments(names, false) then return 'SEGMENT_LIMIT' end
  if not checks.admit(ARGV[base + 1], true) then return 'BOARD_FULL' end
  if names then checks.admit_segments(names, true) end
  return nil
end

local function ingest_checks(now_sec, window_count, segments_max)
  return { holding_at = {}, admit = ingest_admitter(window_count), now_sec = now_sec, window_count = window_count,
    admit_segments = ingest_segment_admitter(segments_max, now_sec) }
end

-- One window's part of the accepted events (arg positions `base`: item, amount, time from base + 1),
-- event by event (add_batch_entry: ties and views told of each change, in order). Answers the
-- earliest due time of a slot it created, or nil.
local function ingest_add_window(w, accepted, holding_at)
  local slots_key, top_key = KEYS[2 + 2 * w], KEYS[3 + 2 * w]
  local period_sec, interval_sec, origin_sec = window_rule(5, w)
  local indexed, slot_at, new_due_ms = {}, {}, nil
  for _, base in ipairs(accepted) do
    local at_ms = tonumber(ARGV[base + 3])
    local at_sec = math.floor(at_ms / 1000)
    if holding_at[at_sec][w] then
      slot_at[at_sec] = slot_at[at_sec] or current_slot(at_sec, interval_sec, origin_sec)
      local due = add_batch_entry(slots_key, top_key, indexed, slot_at[at_sec], period_sec, ARGV[base + 1], tonumber(ARGV[base + 2]), at_ms / 1000)
      if due then new_due_ms = math.min(new_due_ms or math.huge, due) end
    end
  end
  return new_due_ms
end

-- Adds the accepted events (arg positions `base`: item, amount, time, segments from base + 1) to the
-- windows holding them, then to their segments; answers the earliest due time of a slot this
-- created, or nil.
local function ingest_add(accepted, holding_at, window_count)
  local new_due_ms = nil
  for w = 0, window_count - 1 do new_due_ms = earliest_due(new_due_ms, ingest_add_window(w, accepted, holding_at)) end
  for _, base in ipairs(accepted) do
    if ARGV[base + 4] ~= '' then
      local at_sec = math.floor(tonumber(ARGV[base + 3]) / 1000)
      local due = segment_add(2, window_count, segment_names(ARGV[base + 4]), ARGV[base + 1], tonumber(ARGV[base + 2]), at_sec, holding_at[at_sec])
      new_due_ms = earliest_due(new_due_ms, due)
    end
  end
  return new_due_ms
end

-- The start every ingest call shares: the config version and the lease epoch checked. Answers an error
-- reply, or nil and the call's state { window_count, progress, epoch, last, stored_epoch }.
local function ingest_begin()
  local err = version_error(KEYS[1], ARGV[1])
  if err then return redis.error_reply(err) end
  local window_count = tonumber(ARGV[4])
  local progress = KEYS[2 * window_count + 2]
  local epoch = tonumber(ARGV[5 + WINDOW_ARGS * window_count])
  local stored = redis.call('HMGET', progress, 'last', 'epoch')
  if stored[2] and tonumber(stored[2]) > epoch then return redis.error_reply('TB_INGEST_FENCED ' .. stored[2]) end
  return nil, { window_count = window_count, progress = progress, epoch = epoch, last = stored[1] or '0-0',
    stored_epoch = tonumber(stored[2]) }
end

-- Adds `accepted` and records the progress with it: events applied, the highest id (nil: none new)
-- and the epoch. Answers the due time for the index (0: none).
local function ingest_write(call, accepted, events, holding_at, new_last, now_sec)
  local new_due_ms = nil
  if events > 0 then
    bump_version(KEYS[1])
    new_due_ms = ingest_add(accepted, holding_at, call.window_count)
    redis.call('HINCRBY', call.progress, 'applied', events)
  end
  if new_last then redis.call('HSET', call.progress, 'last', new_last) end
  if not call.stored_epoch or call.stored_epoch < call.epoch then redis.call('HSET', call.progress, 'epoch', call.epoch) end
  return due_to_index(2, call.window_count, with_snapshot_due(new_due_ms, 2, call.window_count, now_sec))
end

-- Sorts the entries into outcomes ("s" seen before, "r:<reason>" refused, recorded now, "a" to apply)
-- and answers them, the arg positions of the entries to apply and the highest new message id (nil: none).
local function ingest_classify(call, checks, first)
  local last_hi, last_lo = id_of(call.last)
  local outcomes, accepted = {}, {}
  local new_last = nil
  for i = first, #ARGV, 5 do
    local id = ARGV[i]
    local hi, lo = id_of(id)
    if not after(hi, lo, last_hi, last_lo) then
      local refused = redis.call('HGET', call.progress, 'r:' .. id)
      outcomes[#outcomes + 1] = refused and ('r:' .. refused) or 's'
    else
      new_last = id
      -- A stream event adds an amount: a max / min / last board takes only scores (POST .../score).
      local reason = BOARD.aggregate ~= 'sum' and 'AGGREGATE_MISMATCH' or ingest_check(checks, i)
      if reason then
        redis.call('HSET', call.progress, 'r:' .. id, reason)
        outcomes[#outcomes + 1] = 'r:' .. reason
      else
        accepted[#accepted + 1] = i
        outcomes[#outcomes + 1] = 'a'
      end
    end
  end
  return outcomes, accepted, new_last
end

local function ingest_apply(keys, args)
  begin_call(keys, args)
  local err, call = ingest_begin()
  if err then return err end
  local window_count = call.window_count
  local now_sec = math.floor(tonumber(ARGV[2]) / 1000)
  cross_all(2, window_count, 5, now_sec)
  local draining = expire_all(2, window_count, 5, now_sec, tonumber(ARGV[3]))
  local checks = ingest_checks(now_sec, window_count, tonumber(ARGV[6 + WINDOW_ARGS * window_count]))
  local outcomes, accepted, new_last = ingest_classify(call, checks, 7 + WINDOW_ARGS * window_count)
  local due_ms = ingest_write(call, accepted, #accepted, checks.holding_at, new_last, now_sec)
  local reply = { draining, due_ms, #accepted }
  for _, outcome in ipairs(outcomes) do reply[#reply + 1] = outcome end
  return reply
end
