-- module: view_decay
-- requires: call_state, keyspace
-- view_decay_lib: the decay mode of trending views (views_lib binds, loads and reads them): its forward-decay
-- scores, the chunked rebase of their landmark, and the listing a read merges while a rebase runs.
-- KEYS: 0

local CALL = call_state.CALL
-- The running call's share of rebase work (rebase_left; nil: nothing moved yet), made whole by new_call.
local DECAY = { rebase_left = nil }

local function view_num(x) return string.format('%.17g', x) end

-- Decay is forward decay: the zset holds g = sum of amount * 2^((slot start - L) / halfLife) for a
-- landmark L, and the value as of now is g * 2^((L - now) / halfLife) (one factor for every item, so
-- the zset's order is the view's order). L is the start of the current epoch of rebaseHalfLives
-- half-lives, so exponents stay within about +-(rebaseHalfLives + the window's half-lives) however
-- long the board lives, far from overflow. When the epoch changes, every g is multiplied by
-- 2^(old L - new L) / halfLife = 2^(-k * rebaseHalfLives): a power of two, so the rebase is exact and
-- changes no order. L never moves back (an instance with a late clock keeps the newer landmark).
-- Forward decay rather than log space: amounts may be negative (log space holds no sign), and adding
-- and subtracting a slot's exact share is what lets expiry take out exactly what the slot put in.
--
-- The rebase is chunked, never one pass over the whole view: meta's `next` names the new landmark
-- while members move, from <view>:top (old scale) to <view>:next (new scale), one rebaseChunk (an admin
-- step's CALL.rebase_chunk) per script call shared by the decay views it loads in turn (the board's, then each segment's a step or
-- a write visits; DECAY.rebase_left: what is left of it, nil: nothing moved yet), so a call meeting
-- many rebases at once (a board idle for weeks) does the work of one. An item lives in exactly one
-- zset, a write goes to the one holding it (new items to the new one), and a read merges the two
-- (view_listing): every answer stays exact meanwhile. The last chunk renames next to top.
local function decay_finish(view)
  if redis.call('EXISTS', view.next_top) == 1 then redis.call('RENAME', view.next_top, view.top) end
  redis.call('HSET', view.meta, 'landmark', view.next_landmark); redis.call('HDEL', view.meta, 'next')
  view.landmark, view.next_landmark = view.next_landmark, nil
end

-- Moves up to `count` members to the new scale in one ZADD, answering how many (none left: done).
-- Removing first: on a full Redis a script may grow memory only once it has written.
local function decay_migrate(view, count)
  local members = redis.call('ZRANGE', view.top, 0, count - 1, 'WITHSCORES')
  local names, moved = {}, {}
  for i = 1, #members, 2 do
    names[#names + 1] = members[i]
    local g = tonumber(members[i + 1]) * view.factor
    if g ~= 0 then moved[#moved + 1], moved[#moved + 2] = view_num(g), members[i] end
  end
  if #names > 0 then redis.call('ZREM', view.top, unpack(names)) end
  if #moved > 0 then redis.call('ZADD', view.next_top, unpack(moved)) end
  if #names < count then decay_finish(view) end
  return #names
end

local function decay_rebase(view, now_sec)
  local epoch_sec = view.halfLifeSec * view.rebaseHalfLives
  local wanted = math.floor(now_sec / epoch_sec) * epoch_sec
  local meta = redis.call('HMGET', view.meta, 'landmark', 'next')
  local stored, next_landmark = tonumber(meta[1] or ''), tonumber(meta[2] or '')
  if not stored then
    redis.call('HSET', view.meta, 'landmark', wanted)
    stored = wanted
  elseif not next_landmark and wanted > stored then
    next_landmark = wanted
    redis.call('HSET', view.meta, 'next', wanted)
  end
  view.landmark, view.next_landmark = stored, next_landmark
  if next_landmark then
    view.factor = 2 ^ ((stored - next_landmark) / view.halfLifeSec)
    DECAY.rebase_left = DECAY.rebase_left or CALL.rebase_chunk or view.rebaseChunk or 256 -- wave 2: DECAY_REBASE_CHUNK's
    if DECAY.rebase_left > 0 then DECAY.rebase_left = DECAY.rebase_left - decay_migrate(view, DECAY.rebase_left) end
  end
end

-- The slot's share is replaced whole (old sum's out, new sum's in; the slot hash holds the new sum, `slot_sum`
-- when the caller just wrote it, else read), not `delta`'s added: an item in one slot scores round(sum * factor)
-- whatever the order of writes.
local function decay_add(view, item, slot_start, delta, slot_sum)
  local top, landmark, held = view.top, view.landmark, redis.call('ZSCORE', view.top, item)
  -- While a rebase runs, an item not yet moved stays at the old scale; the others are at the new one.
  if view.next_landmark and not held then
    top, landmark = view.next_top, view.next_landmark
    held = redis.call('ZSCORE', top, item)
  end
  local factor = 2 ^ ((slot_start - landmark) / view.halfLifeSec)
  if not slot_sum then
    local slot_key = keyspace.sibling_key(view.source_slots, 'slots', 'slot:' .. slot_start)
    slot_sum = tonumber(redis.call('HGET', slot_key, item) or '0')
  end
  local g = (tonumber(held or '0') - (slot_sum - delta) * factor) + slot_sum * factor
  -- What is left once an item's last slot is taken out is rounding only (older slots weigh less than
  -- newer ones, so a real remainder is never this small next to what was just added or taken).
  if math.abs(g) > view.zeroTolerance * math.abs(delta * factor) then return redis.call('ZADD', top, view_num(g), item) end
  redis.call('ZREM', top, item)
end

-- A decay view under a chunked rebase, read as one listing at the new scale: its two zsets merged
-- (their scales differ by an exact power of two, so nothing is rounded). Pages deeper than
-- max_depth answer nil: the caller drains more of the rebase first (like an expired slot).
local function merged_listing(view, max_depth)
  local factor = view.factor
  local listing = {}
  function listing.score(item)
    local score = redis.call('ZSCORE', view.next_top, item)
    if score then return score end
    score = redis.call('ZSCORE', view.top, item)
    return score and view_num(tonumber(score) * factor) or nil
  end
  function listing.count(lowest)
    local old_lowest = lowest
    if lowest ~= '-inf' and lowest ~= '(0' then old_lowest = '(' .. view_num(tonumber(lowest:sub(2)) / factor) end
    return redis.call('ZCOUNT', view.next_top, lowest, '+inf') + redis.call('ZCOUNT', view.top, old_lowest, '+inf')
  end
  function listing.page(offset, limit)
    local depth = offset + limit
    if depth > max_depth then return nil end
    local new = redis.call('ZREVRANGE', view.next_top, 0, depth - 1, 'WITHSCORES')
    local old = redis.call('ZREVRANGE', view.top, 0, depth - 1, 'WITHSCORES')
    local rows, i, j = {}, 1, 1
    while #rows < 2 * depth and (i <= #new or j <= #old) do
      local old_score = j <= #old and tonumber(old[j + 1]) * factor
      local take_new = i <= #new
        and (not old_score or tonumber(new[i + 1]) > old_score
          or (tonumber(new[i + 1]) == old_score and new[i] > old[j]))
      if take_new then
        rows[#rows + 1], rows[#rows + 2], i = new[i], new[i + 1], i + 2
      else
        rows[#rows + 1], rows[#rows + 2], j = old[j], view_num(old_score), j + 2
      end
    end
    local page = {}
    for k = 2 * offset + 1, #rows do page[#page + 1] = rows[k] end
    return page
  end
  -- 0-based position of a listed item in the merged order (ties in descending byte order of id), or
  -- nil when it has more ties than max_depth (the caller drains more of the rebase first).
  function listing.position(item, score)
    local above_count = listing.count('(' .. score)
    local tied_before = 0
    for _, pair in ipairs({ { view.next_top, score }, { view.top, view_num(tonumber(score) / factor) } }) do
      local tied = redis.call('ZRANGE', pair[1], pair[2], pair[2], 'BYSCORE', 'LIMIT', 0, max_depth)
      if #tied >= max_depth then return nil end
      for _, other in ipairs(tied) do
        if other > item then tied_before = tied_before + 1 end
      end
    end
    return above_count + tied_before
  end
  return listing
end

view_decay.view_num = view_num
view_decay.new_call = function() DECAY.rebase_left = nil end
view_decay.rebase = decay_rebase
view_decay.add = decay_add
view_decay.merged_listing = merged_listing
