-- module: segment_list
-- requires: call_state, segmentation
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

-- One live segment's row fields (items each window lists, scores <= 0 counting as absent), drained
-- first when something of it is due (segdue). Returns the counts (nil when expired data remains, the
-- budget spent), the budget left and whether it was drained.
local function segment_counts(windows, name, now_ms, budget)
  local due, more, _ = segmentation.segment_drain_due(name, now_ms, false), false, nil
  if due then budget, _, more = segmentation.drain_segment(windows, name, now_ms, budget) end
  -- A boundary left for the next call answers as expired data does (more): nothing of it was read.
  if more then return nil, budget, due end
  local counts = {}
  for w = 0, windows.count - 1 do
    counts[w + 1] = redis.call('ZCOUNT', segmentation.segment_window_key(windows.tops[w], 'top', name), '(0', '+inf')
  end
  return counts, budget, due
end

-- One page of the shard's live segments after `after` (byte order; "" from the first), at most
-- `limit`, weighing at most `units` (a name looked at 1, a segment listed 1 per window, drained 4 per
-- window more): { draining (0|1), ended (0|1), last (name looked at, "" none), rows = { name_1,
-- items_1_1 .. items_1_W, ... } }; the caller adds the items up over the shards. ended 1: no name after
-- the last one looked at. draining 1: the page stopped before a segment still holding expired data
-- once the drain budget was spent (counted then, it would count what fell out of its windows); the
-- next call goes on.
local function segment_rows(windows, now_ms, after, limit, budget, units)
  local segs = segmentation.segment_indexes(CALL.cfg_key)
  local names_key, now_sec = segmentation.segment_names_key(CALL.cfg_key), math.floor(now_ms / 1000)
  index_segment_names(names_key, segs, now_sec)
  local out, listed, spent, from = { draining = 0, ended = 0, last = '', rows = {} }, 0, 0, after == '' and '-' or '(' .. after
  local rows = out.rows
  while listed < limit and spent < units do
    local names = redis.call('ZRANGE', names_key, from, '+', 'BYLEX', 'LIMIT', 0, math.min(limit - listed, units - spent))
    if #names == 0 then out.ended = 1 break end
    for _, name in ipairs(names) do
      if listed >= limit or spent >= units then break end
      local live_until = tonumber(redis.call('ZSCORE', segs, name))
      spent = spent + 1
      if not live_until or live_until <= now_sec then
        redis.call('ZREM', names_key, name)
      else
        local counts, due
        counts, budget, due = segment_counts(windows, name, now_ms, budget)
        if not counts then return { draining = 1, ended = 0, last = out.last, rows = rows } end
        rows[#rows + 1] = name
        for w = 1, windows.count do rows[#rows + 1] = counts[w] end
        listed, spent = listed + 1, spent + windows.count * (due and 5 or 1)
      end
      out.last, from = name, '(' .. name
    end
  end
  return out
end

segment_list.segment_rows = segment_rows
