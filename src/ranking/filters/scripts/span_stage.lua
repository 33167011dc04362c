-- requires: actor_log, board_write, order, reader, span, window
-- span_stage: a span's sums (with min_actors its items' distinct actors too) made once for one filtered
-- read and kept under its token until the read drops them (group_page's span_token reads them), so no
-- call sums and sorts the whole span: the first call counts the span's fields and copies its slots (their
-- packed records on a tail board, and contributions) under the token, each next one adds at most `step` fields of the copies to the listing
-- zset (the zset grows a share a call; a union of per-call parts would build it whole in one), the
-- last one takes out the board's exceptions (as span_lib's span_shown leaves them out) and sums at or
-- below 0. A span of at most `step` fields is summed in the first call. The copies fix what the read sums: writes and expiry between its calls change
-- none of it. Every key lapses after ttl_ms (a read that never drops them), and at most most_reads
-- staged reads live on the window of a shard at once (the registry, lapsed entries taken out first).
-- Keys: cfg (the board config hash: holds the config version), slots (the window's slots index zset),
--       top (the window's results zset: names the listing whose exceptions the span leaves out)
-- Args (reader.read_call, CALLS.span_stage): the header with the one window, then span_sec (the span),
--       most_fields (most slot fields, with min_actors contributions too, the span may hold), token (the
--       read's), min_actors (0: no actor counts), step (most fields a call sums), ttl_ms, most_reads, and
--       drop (1: remove what the token holds and its registry entry, nothing else)
-- Reply (reader.answer, CALLS.span_stage): summed (0: the span holds more than most_fields, nothing
--   kept), fields (that the span holds), busy (1: most_reads are staged, nothing kept), done (1: the
--   listing is made, or dropped)
-- Errors: TB_NO_BOARD, TB_STALE_CONFIG

-- args: most arguments one command of the stage takes (Lua's unpack bound is 8 000); pair_weight: the
-- fields of `step` an actor contribution weighs (about twice a slot field's work: callgrind);
-- record_weight: a tail board's packed record's (decoded from its part first: 1.2 times a field's work,
-- bench/tail-span-instructions.ts).
local STAGE = { args = 2000, pair_weight = 2, record_weight = 1.5 }

-- Runs `command` on `key` with `list` in parts of at most STAGE.args arguments.
local function in_parts(command, key, list)
  for first = 1, #list, STAGE.args do
    redis.call(command, key, unpack(list, first, math.min(first + STAGE.args - 1, #list)))
  end
end

-- Adds the table `sums` (member -> amount) to the zset `key` lapsing after `ttl_ms`: the scores it holds
-- read by ZMSCORE and the sums written by ZADD, in parts of STAGE.args (a few commands a call, whatever
-- its members: a command a member cost more than the sums); each the held score plus the amount, as
-- ZINCRBY adds them.
local function add_to(key, sums, ttl_ms)
  local members = {}
  for member in pairs(sums) do members[#members + 1] = member end
  if #members == 0 then return end
  local held = redis.call('EXISTS', key) == 1
  local flat = {}
  for first = 1, #members, STAGE.args do
    local last = math.min(first + STAGE.args - 1, #members)
    local scores = held and redis.call('ZMSCORE', key, unpack(members, first, last)) or {}
    for i = first, last do
      local member, score = members[i], scores[i - first + 1]
      flat[#flat + 1] = score and tonumber(score) + tonumber(sums[member]) or sums[member]
      flat[#flat + 1] = member
    end
  end
  in_parts('ZADD', key, flat)
  redis.call('PEXPIRE', key, ttl_ms)
end

local function add_entries(sums, entries)
  for i = 1, #entries, 2 do
    local member, held = entries[i], sums[entries[i]]
    if held == nil then
      sums[member] = entries[i + 1]
    else
      sums[member] = tonumber(held) + tonumber(entries[i + 1])
    end
  end
end

-- Counts as text (as add_entries keeps amounts), made once each: a call's counts are mostly 1.
local COUNT_TEXTS = {}
local function count_text(n)
  local text = COUNT_TEXTS[n]
  if text == nil then
    text = string.format('%d', n)
    COUNT_TEXTS[n] = text
  end
  return text
end

-- Copies `key` (when it exists) as unit `units + 1`; the units then held.
local function copy_unit(staged, units, key, ttl_ms)
  if redis.call('COPY', key, staged.unit(units + 1)) == 0 then return units end
  redis.call('PEXPIRE', staged.unit(units + 1), ttl_ms)
  return units + 1
end

-- The distinct actors each item gains from the contributions `pairs_seen` (pair -> true) that no call
-- counted before (the staged pairs set), added to the staged counts.
local function count_pairs(staged, pairs_seen, ttl_ms)
  local list = {}
  for pair in pairs(pairs_seen) do list[#list + 1] = pair end
  if #list == 0 then return end
  local known = redis.call('SMISMEMBER', staged.pairs, unpack(list))
  local counts, fresh = {}, {}
  for i, pair in ipairs(list) do
    if known[i] == 0 then
      -- An actor id holds no US: the item follows the first one.
      local item = string.sub(pair, string.find(pair, actor_log.ACTORS.SEP, 1, true) + 1)
      fresh[#fresh + 1], counts[item] = pair, (counts[item] or 0) + 1
    end
  end
  if #fresh == 0 then return end
  for item, count in pairs(counts) do counts[item] = count_text(count) end
  in_parts('SADD', staged.pairs, fresh)
  redis.call('PEXPIRE', staged.pairs, ttl_ms)
  add_to(staged.counts, counts, ttl_ms)
end

-- The listing without the board's exceptions (order_lib's exceptions_asked: hidden items, or on a review
-- board all but the allowed ones) and without sums at or below 0: as span_lib's span_shown and best_rows.
local function shown_only(sums_key, top_key, ttl_ms)
  local exceptions = order.exceptions_asked(top_key)
  if exceptions and exceptions.only then
    local scores = #exceptions.items > 0 and redis.call('ZMSCORE', sums_key, unpack(exceptions.items)) or {}
    local kept = {}
    for i, item in ipairs(exceptions.items) do
      if scores[i] then kept[#kept + 1], kept[#kept + 2] = scores[i], item end
    end
    redis.call('DEL', sums_key)
    in_parts('ZADD', sums_key, kept)
    redis.call('PEXPIRE', sums_key, ttl_ms)
  elseif exceptions then
    in_parts('ZREM', sums_key, exceptions.items)
  end
  redis.call('ZREMRANGEBYSCORE', sums_key, '-inf', 0)
end

-- The last step: the listing as shown, the pairs no longer needed.
local function finish(staged, top_key, ttl_ms)
  shown_only(staged.sums, top_key, ttl_ms)
  redis.call('DEL', staged.pairs)
  redis.call('HSET', staged.state, 'done', 1)
end

-- About `budget` fields of unit `at` from `cursor`, into `sums` (a slot's copy, by HSCAN of what nothing
-- writes: every field once; a copy of its packed records, whole parts popped) or `pairs_seen` (a copy of
-- contributions): the budget left, the cursor, and whether the unit is done (its copy dropped by the caller).
local function take_unit(staged, state, at, cursor, budget, sums, pairs_seen)
  local unit = staged.unit(at)
  if at > tonumber(state.slot_units) and at <= tonumber(state.packed_units or state.slot_units) then
    local entries, taken = span.packed_take(unit, budget / STAGE.record_weight)
    add_entries(sums, entries)
    return budget - STAGE.record_weight * math.max(1, taken), '0', redis.call('EXISTS', unit) == 0
  end
  -- A contribution weighs STAGE.pair_weight fields: it is checked against the pairs counted, added, counted.
  local weight = at <= tonumber(state.slot_units) and 1 or STAGE.pair_weight
  local scanned = redis.call('HSCAN', unit, cursor, 'COUNT', math.ceil(budget / weight))
  if weight == 1 then
    add_entries(sums, scanned[2])
  else
    for i = 1, #scanned[2], 2 do pairs_seen[scanned[2][i]] = true end
  end
  return budget - weight * #scanned[2] / 2, scanned[1], scanned[1] == '0'
end

-- One step: up to `step` fields of the copies summed from where the last stopped, or the last step
-- when they are all summed.
local function sum_step(staged, state, top_key, arg)
  local budget, ttl_ms = tonumber(arg.step), tonumber(arg.ttl_ms)
  local at, cursor, units = tonumber(state.at), state.cursor, tonumber(state.units)
  if at > units then return finish(staged, top_key, ttl_ms) end
  local sums, pairs_seen, done_units = {}, {}, {}
  while budget > 0 and at <= units do
    local done
    budget, cursor, done = take_unit(staged, state, at, cursor, budget, sums, pairs_seen)
    if done then done_units[#done_units + 1], at = staged.unit(at), at + 1 end
  end
  -- The units read to their end, in one command (a packed copy popped empty is gone already).
  if #done_units > 0 then redis.call('DEL', unpack(done_units)) end
  add_to(staged.sums, sums, ttl_ms)
  count_pairs(staged, pairs_seen, ttl_ms)
  redis.call('HSET', staged.state, 'at', at, 'cursor', cursor)
end

-- A span of at most `step` fields summed at once from its slots (no copies), its actor counts with it.
local function sum_at_once(staged, slots_key, starts, actors, ttl_ms)
  local sums = {}
  for _, start in ipairs(starts) do
    add_entries(sums, redis.call('HGETALL', window.slot_key_of(slots_key, start)))
    add_entries(sums, span.packed_of(slots_key, start, true))
  end
  add_to(staged.sums, sums, ttl_ms)
  if not actors then return end
  local every = setmetatable({}, { __index = function() return true end })
  add_to(staged.counts, actor_log.ACTORS.span_actor_counts(slots_key, starts, every), ttl_ms)
end

-- The first call: the span's fields counted (refused past most_fields, or past most_reads staged reads),
-- then its slots, their packed records (hooks_lib slot_packed: a list each) and contributions copied,
-- each summed by the next calls; a span of at most `step` fields summed at once.
local function open_stage(staged, keys, header, arg)
  local slots_key, ttl_ms, now_ms = keys[2], tonumber(arg.ttl_ms), tonumber(header.now_ms)
  redis.call('ZREMRANGEBYSCORE', staged.registry, '-inf', now_ms)
  if redis.call('ZCARD', staged.registry) >= tonumber(arg.most_reads) then return { busy = 1 } end
  local starts = span.span_starts(slots_key, header.now_sec, header.windows[1].interval_sec, tonumber(arg.span_sec))
  local actors = tonumber(arg.min_actors) > 0
  local fields = span.span_fields(slots_key, starts) + (actors and actor_log.ACTORS.span_held(slots_key, starts) or 0)
  if fields > tonumber(arg.most_fields) then return { summed = 0, fields = fields } end
  redis.call('ZADD', staged.registry, now_ms + ttl_ms, arg.token)
  redis.call('PEXPIRE', staged.registry, ttl_ms)
  local state = { units = 0, slot_units = 0, packed_units = 0, at = 1, cursor = '0', fields = fields, done = 0 }
  if fields <= tonumber(arg.step) then
    sum_at_once(staged, slots_key, starts, actors, ttl_ms)
  else
    for _, start in ipairs(starts) do
      state.units = copy_unit(staged, state.units, window.slot_key_of(slots_key, start), ttl_ms)
    end
    state.slot_units = state.units
    for _, start in ipairs(starts) do
      local packed = span.packed_key_of(slots_key, start)
      if packed then state.units = copy_unit(staged, state.units, packed, ttl_ms) end
    end
    state.packed_units = state.units
    for _, start in ipairs(actors and starts or {}) do
      state.units = copy_unit(staged, state.units, actor_log.ACTORS.slot_key(slots_key, start), ttl_ms)
    end
  end
  local flat = {}
  for field, value in pairs(state) do flat[#flat + 1], flat[#flat + 2] = field, value end
  redis.call('HSET', staged.state, unpack(flat))
  redis.call('PEXPIRE', staged.state, ttl_ms)
  if fields <= tonumber(arg.step) then finish(staged, keys[3], ttl_ms) end
  return { fields = fields, done = fields <= tonumber(arg.step) and 1 or 0 }
end

-- What the token holds goes, and its registry entry.
local function drop(staged, token)
  local held = redis.call('HMGET', staged.state, 'at', 'units')
  local names = { staged.state, staged.sums, staged.counts, staged.pairs }
  for k = tonumber(held[1]) or 1, tonumber(held[2]) or 0 do names[#names + 1] = staged.unit(k) end
  redis.call('DEL', unpack(names))
  redis.call('ZREM', staged.registry, token)
end

local function span_stage(keys, args)
  local refused, header, arg = board_write.begin_board_call(keys, args, CALLS.span_stage)
  if refused then return refused end
  local staged = span.staged_keys(keys[2], arg.token)
  local reply = { summed = 1, fields = 0, busy = 0, done = 1 }
  if arg.drop == '1' then
    drop(staged, arg.token)
    return reader.answer(CALLS.span_stage, reply)
  end
  local held = redis.call('HGETALL', staged.state)
  if #held == 0 then
    for field, value in pairs(open_stage(staged, keys, header, arg)) do reply[field] = value end
    return reader.answer(CALLS.span_stage, reply)
  end
  local state = {}
  for i = 1, #held, 2 do state[held[i]] = held[i + 1] end
  reply.fields = tonumber(state.fields)
  if state.done ~= '1' then
    sum_step(staged, state, keys[3], arg)
    reply.done = redis.call('HGET', staged.state, 'done') == '1' and 1 or 0
  end
  return reader.answer(CALLS.span_stage, reply)
end
