-- module: segment_list
-- requires: call_state, drains, segmentation
-- segment_list_lib: the page of a shard's live segments a segment listing reads (segment_page), each
-- with the items its windows list, drained first where due as segment_lib drains before a write.
-- KEYS: 0

local CALL = call_state.CALL

-- Data written before the name index existed: its live names are indexed once, at the first listing.
local function index_segment_names(names_key, segs, now_sec)
  if redis.call('EXISTS', names_key) == 1 then return end
  for _, name in ipairs(redis.call('ZRANGE', segs, '(' .. now_sec, '+inf', 'BYSCORE')) do
    redis.call('ZADD', names_key, 0, name)
  end
end

-- Lists one live segment's row (its name, then the items each window lists, scores <= 0 counting as
-- absent) into `rows`, drained first when something of it is due (`due_ms`, its segdue score, nil:
-- none) from what `drain` (the page's, drain_lib's) has left, each field weighed as its board window's.
-- Returns whether it was listed (false when expired data remains, the drain spent) and whether it was drained.
local function list_segment(windows, rows, name, due_ms, now_ms, drain)
  local due, more, _ = due_ms ~= nil and due_ms <= now_ms, false, nil
  if due then _, more = segmentation.drain_segment(windows, name, now_ms, drain) end
  -- A boundary left for the next call answers as expired data does (more): nothing of it was read.
  if more then return false, due end
  local tops, n = windows.tops, #rows + 1
  rows[n] = name
  for w = 0, windows.count - 1 do
    rows[n + w + 1] = redis.call('ZCOUNT', segmentation.segment_window_key(tops[w], 'top', name), '(0', '+inf')
  end
  return true, due
end

-- The names to read next: as many as could still be listed (each live one weighs at least 1 + a unit per
-- window), so that their live ends and due times, read together, are those of names the page looks at.
local function next_names(names_key, from, left, units_left, windows)
  local count = math.min(left, math.ceil(units_left / (1 + windows.count)))
  return redis.call('ZRANGE', names_key, from, '+', 'BYLEX', 'LIMIT', 0, count)
end

-- One page of the shard's live segments after `after` (byte order; "" from the first), at most
-- `limit`, weighing at most `units` (a name looked at 1, a segment listed 1 per window, drained 4 per
-- window more): { draining (0|1), ended (0|1), last (name looked at, "" none), rows = { name_1,
-- items_1_1 .. items_1_W, ... } }; the caller adds the items up over the shards. ended 1: no name after
-- the last one looked at. draining 1: the page stopped before a segment still holding expired data
-- once its drain of `budget` fields' worth (drain_lib's call_drain) was spent (counted then, it would
-- count what fell out of its windows); the next call goes on. The live ends and due times of the names
-- read together are read with one ZMSCORE each: a drain changes only its own segment's due time, and
-- no live end.
local function segment_rows(windows, now_ms, after, limit, budget, units)
  local segs, segdue = segmentation.segment_indexes(CALL.cfg_key)
  local names_key, now_sec = segmentation.segment_names_key(CALL.cfg_key), math.floor(now_ms / 1000)
  index_segment_names(names_key, segs, now_sec)
  local out, listed, spent, from = { draining = 0, ended = 0, last = '', rows = {} }, 0, 0, after == '' and '-' or '(' .. after
  local drain = drains.call_drain(budget)
  local rows = out.rows
  while listed < limit and spent < units do
    local names = next_names(names_key, from, limit - listed, units - spent, windows)
    if #names == 0 then out.ended = 1 break end
    local ends, dues = redis.call('ZMSCORE', segs, unpack(names)), redis.call('ZMSCORE', segdue, unpack(names))
    for i, name in ipairs(names) do
      if listed >= limit or spent >= units then break end
      local live_until = tonumber(ends[i])
      spent = spent + 1
      if not live_until or live_until <= now_sec then
        redis.call('ZREM', names_key, name)
      else
        local counted, due = list_segment(windows, rows, name, tonumber(dues[i]), now_ms, drain)
        if not counted then return { draining = 1, ended = 0, last = out.last, rows = rows } end
        listed, spent = listed + 1, spent + windows.count * (due and 5 or 1)
      end
      out.last, from = name, '(' .. name
    end
  end
  return out
end

segment_list.segment_rows = segment_rows
