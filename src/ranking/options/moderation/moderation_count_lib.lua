-- module: moderation_count
-- requires: call_state, hooks, keyspace, order, reader
-- moderation_count_lib: a write's count of the exceptions (moderation_lib's hidden items, or on a review board its
-- allowed ones) ahead of its record in each window, inside Redis (hooks_lib `exceptions_ahead`), and the index it
-- counts in: per window "<base>exheld", a sorted set of the exceptions the window's results hold, at their scores
-- there, kept from call to call so a mid-table write does not intersect the exceptions with every window's results
-- again (~0.8 M Redis instructions a window at the moderation maxima). Built by the first write's call on the board
-- after a change of them, a few a call before it applies (indexes_opened; a segment's by the first write counting in
-- it), by ZINTERSTORE, then kept by every change of the results (hook results_changed: an exception's score, or its leaving
-- them), dropped whole when the exceptions change (hook exceptions_changed) and with its window (window_dropped).
-- Per shard "<tag>:exidx", the set of the results keys whose index is built (one empty holds no key): at most one a
-- window and segment of the board. Each index holds at most the exceptions' limit (the item and group states'); a
-- board's drop unlinks both (board_drop_step).
-- KEYS: 0

-- A write counts the exceptions ahead of its record inside Redis (exceptions_ahead) from this many on: fewer are scored
-- in Lua by order_lib as a read scores them (one ZMSCORE), which costs less than the keys the count writes.
local STORED_COUNT_FLOOR = 16

-- What a write's count of the exceptions ahead weighs (call_state.CALL.work, which a coalesced increment stops at:
-- increment.lua's WORK_BUDGET): a window counted in (PLACE, the request's own write there included), a window's index
-- built (INTERSECTION). At the moderation maxima (8 windows, 8 views, 400 exceptions), a coalesced mid-table request
-- of 8 places ~1.8 M Redis instructions, an index's intersection ~0.8 M (bench/write-instructions.ts).
local WORK = { PLACE = 1, INTERSECTION = 3 }

-- The exceptions each config hash's set (exasked) holds in this call (call_state.call_cache): ex.asked.
local stored_sets = { seq = 0, by = {} }

-- Whether each results key's index is built, as this call knows it (call_state.call_cache): key -> boolean.
local built_in_call = { seq = 0, by = {} }

-- Each list of exceptions the call asked as a set (call_state.call_cache): list -> { item -> true }.
local member_sets = { seq = 0, by = {} }

local function registry_key(cfg_key)
  return keyspace.sibling_key(cfg_key, 'cfg', 'exidx')
end

local function index_key(top_key)
  return keyspace.sibling_key(top_key, 'top', 'exheld')
end

-- Whether the index of the results `top_key` is built (exidx names it), asked once a call.
local function index_built(top_key)
  local by = call_state.call_cache(built_in_call)
  if by[top_key] == nil then
    by[top_key] = redis.call('SISMEMBER', registry_key(call_state.cfg_key_of_top(top_key)), top_key) == 1
  end
  return by[top_key]
end

-- hooks_lib `watches`: every change of a shard's results that may hold exceptions takes the watched path, whose
-- results_changed keeps the index (an index built mid-call is kept by the call's later writes too).
local function watches(top_key)
  if call_state.of_group_board(top_key) then return false end
  local cfg_key = call_state.cfg_key_of_top(top_key)
  return (call_state.config_field(cfg_key, 'modheld') or call_state.config_field(cfg_key, 'modgroups')
    or call_state.config_field(cfg_key, 'modreview') == '1') and true or false
end

-- hooks_lib `results_changed`: an exception's score in a window whose index is built goes there too (0: it left the
-- results, or on a max / min / last board holds 0: the results tell).
local function index_changed(top_key, item, score)
  if not index_built(top_key) then return end
  local ex = order.exceptions_asked(top_key)
  if not ex then return end
  local sets = call_state.call_cache(member_sets)
  local items = sets[ex.items]
  if not items then
    items = {}
    for _, one in ipairs(ex.items) do items[one] = true end
    sets[ex.items] = items
  end
  if not items[item] then return end
  local held = tonumber(score) ~= 0 and score or redis.call('ZSCORE', top_key, item)
  if held then return redis.call('ZADD', index_key(top_key), held, item) end
  redis.call('ZREM', index_key(top_key), item)
end

-- hooks_lib `exceptions_changed` and `windows_dropped`: every index of the shard goes (built again as writes count).
local function drop_indexes(cfg_key)
  local registry = registry_key(cfg_key)
  local tops = redis.call('SMEMBERS', registry)
  for from = 1, #tops, 1000 do
    local chunk = {}
    for i = from, math.min(from + 999, #tops) do chunk[#chunk + 1] = index_key(tops[i]) end
    redis.call('UNLINK', unpack(chunk))
  end
  redis.call('UNLINK', registry)
  built_in_call.by = {}
end

-- hooks_lib `window_dropped`: the window's index goes with it.
local function index_dropped(base)
  local top_key = base .. 'top'
  if redis.call('SREM', registry_key(call_state.cfg_key_of_top(top_key)), top_key) == 0 then return end
  redis.call('UNLINK', index_key(top_key))
  call_state.call_cache(built_in_call)[top_key] = nil
end

-- The set of `ex`'s exceptions on the shard of `cfg_key`, stored once a call (every window's count intersects it)
-- and kept till the call answers (reader.keep_till_answer); again when the exceptions changed within the call.
local function asked_set(cfg_key, ex)
  local asked = keyspace.sibling_key(cfg_key, 'cfg', 'exasked')
  local stored = call_state.call_cache(stored_sets)
  if not reader.keep_till_answer(asked) and stored[cfg_key] == ex.asked then return asked end
  -- A set a call that failed left (its members now stale) is freed off the main thread, as every kept key.
  redis.call('UNLINK', asked)
  for from = 1, #ex.asked, 1000 do redis.call('SADD', asked, unpack(ex.asked, from, math.min(from + 999, #ex.asked))) end
  stored[cfg_key] = ex.asked
  return asked
end

-- How many of `ex`'s items the results `top_key` hold at scores within low..high (ZRANGE BYSCORE bounds, both
-- inclusive), read row by row; those of the record's very `score` only when placed before its `count` leading places
-- (`before`), else only when placed after.
local function exceptions_within(top_key, ex, low, high, score, count, before)
  local rows, found = redis.call('ZRANGE', top_key, low, high, 'BYSCORE', 'WITHSCORES'), 0
  for i = 1, #rows, 2 do
    local item = rows[i]
    if ex.items[item] and (tonumber(rows[i + 1]) ~= score or (order.placed(top_key, ex, item) < count) == before) then
      found = found + 1
    end
  end
  return found
end

-- stored_ahead's count of a listed record's score when an end of the results is near it: the exceptions ahead read
-- among the rows from the top down to its score (a like of a leading item), or all the exceptions held (ZINTERCARD)
-- less those among the rows from its score down to the bottom (a new item's small first score); nil when both ends
-- are farther than `#ex.asked` rows, where reading them would cost more than the intersection.
local function near_end_ahead(top_key, ex, count, score, at)
  local ahead, behind = { at, '+inf' }, { '-inf', at }
  if order.ascending(top_key) then ahead, behind = behind, ahead end
  local near = #ex.asked
  -- The rows of a score at least the record's are at least the `count` places before it.
  if count <= near and redis.call('ZCOUNT', top_key, ahead[1], ahead[2]) <= near then
    return exceptions_within(top_key, ex, ahead[1], ahead[2], score, count, true)
  end
  if redis.call('ZCOUNT', top_key, behind[1], behind[2]) > near then return nil end
  local held = index_built(top_key) and redis.call('ZCARD', index_key(top_key))
    or redis.call('ZINTERCARD', 2, top_key, asked_set(call_state.cfg_key_of_top(top_key), ex))
  return held - exceptions_within(top_key, ex, behind[1], behind[2], score, count, false)
end

-- The index of the results `top_key` built: the exceptions' scores there stored in `held` (ZINTERSTORE of the results
-- and `asked`, their set) and noted in the shard's exidx, once for every call till the exceptions change.
local function held_scores(top_key, held, asked)
  call_state.CALL.work = call_state.CALL.work + WORK.INTERSECTION
  redis.call('ZINTERSTORE', held, 2, top_key, asked, 'WEIGHTS', 1, 0)
  redis.call('SADD', registry_key(call_state.cfg_key_of_top(top_key)), top_key)
  call_state.call_cache(built_in_call)[top_key] = true
end

-- The most window indexes a write's call builds before it applies its requests (indexes_opened): each ~0.8 M Redis
-- instructions at the moderation maxima, and the call that applies a mid-table write of 8 windows after building 3 of
-- them was 8.0-8.3 M (bench/write-instructions.ts; 11.7-13.6 M building all 8), so 2 keep it near 7 M.
local INDEXES_PER_CALL = 2

-- The error a write's call answers once it built INDEXES_PER_CALL indexes with more missing, having applied nothing
-- (snapshot_lib's TB_CROSSING: the service sends the same call again, which finds those built).
local INDEXES_LEFT_ERROR = 'TB_CROSSING moderation indexes built, the rest left for the next call'

-- hooks_lib `write_opened`: the missing indexes of the call's board windows (one SMISMEMBER, which index_built then
-- answers from the call's cache) built before anything is applied, INDEXES_PER_CALL at most, the rest left to the call
-- sent again: no write's call intersects all its windows at once after a moderation change. A segment's windows,
-- named by each request, still build theirs as the request counts in them (stored_ahead).
local function indexes_opened(windows)
  local first = windows.tops[0]
  if not call_state.CALL.writes or not first or not watches(first) then return end
  local answer = order.exceptions_asked(first)
  if not answer or #answer.items < STORED_COUNT_FLOOR then return end
  local tops = {}
  for w = 0, windows.count - 1 do tops[w + 1] = windows.tops[w] end
  local cfg_key = call_state.cfg_key_of_top(first)
  local built = redis.call('SMISMEMBER', registry_key(cfg_key), unpack(tops))
  local by, missing = call_state.call_cache(built_in_call), {}
  for i, top_key in ipairs(tops) do
    by[top_key] = built[i] == 1
    if not by[top_key] then missing[#missing + 1] = top_key end
  end
  if #missing == 0 then return end
  local asked = asked_set(cfg_key, { asked = answer.items })
  for i = 1, math.min(#missing, INDEXES_PER_CALL) do held_scores(missing[i], index_key(missing[i]), asked) end
  if #missing > INDEXES_PER_CALL then error({ err = INDEXES_LEFT_ERROR }) end
end

-- hooks_lib `exceptions_ahead` in a write (call_state.CALL.writes; a read is no-writes) of at least STORED_COUNT_FLOOR
-- exceptions: counted near an end of the results (near_end_ahead), else in the window's index (built first if it is
-- not: held_scores), one ZCOUNT of those listed and better, and those of that very score placed. A ZMSCORE of them
-- read into Lua costs about 6 000 instructions an exception (each score written and parsed as text), the index's
-- intersection a few thousand (~0.8 M a window of 400 exceptions, bench/write-instructions.ts), a count in a built
-- index a few thousand in all.
local function stored_ahead(top_key, ex, count, score)
  if #ex.asked < STORED_COUNT_FLOOR or not call_state.CALL.writes then return nil end
  call_state.CALL.work = call_state.CALL.work + WORK.PLACE
  local at, every_sign = string.format('%.17g', score), order.listed(top_key, 0)
  -- A listed record where every score the near end reads is listed too (on a sum board the best first and above 0).
  if every_sign or (score > 0 and not order.ascending(top_key)) then
    local near = near_end_ahead(top_key, ex, count, score, at)
    if near then return near end
  end
  local held = index_key(top_key)
  if not index_built(top_key) then held_scores(top_key, held, asked_set(call_state.cfg_key_of_top(top_key), ex)) end
  local low, high = '(' .. at, '+inf'
  if order.ascending(top_key) then low, high = '-inf', '(' .. at end
  if not every_sign and (low == '-inf' or score < 0) then low = '(0' end
  local below = redis.call('ZCOUNT', held, low, high)
  local same = (every_sign or score > 0) and redis.call('ZRANGE', held, at, at, 'BYSCORE') or {}
  for _, item in ipairs(same) do
    if order.placed(top_key, ex, item) < count then below = below + 1 end
  end
  return below
end

hooks.register_all('moderation', { 'exceptions_ahead', stored_ahead, 'watches', watches, 'results_changed', index_changed,
  'write_opened', indexes_opened, 'exceptions_changed', drop_indexes, 'windows_dropped', drop_indexes, 'window_dropped', index_dropped })
