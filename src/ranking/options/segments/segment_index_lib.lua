-- module: seg_index
-- requires: call_state, keyspace, seg_views
-- segment_index_lib: a shard's segment indexes (segment_lib's segs, segdue, segnames) as a write reads and
-- writes them: the named segments' live ends read once for the limit and the growth, each segment's due read
-- with the others', the live ends and names written once a write; a segment's window keys.
-- KEYS: 0

local CALL = call_state.CALL

-- The shard's segment indexes: live ends and due times.
local function segment_indexes(cfg_key)
  return keyspace.sibling_key(cfg_key, 'cfg', 'segs'), keyspace.sibling_key(cfg_key, 'cfg', 'segdue')
end

-- The segment's key for a board window key "<tag>:<window>:<suffix>", kept from call to call (a pure function of
-- the three: a write of 8 segments asks some 200, each a concatenation and a sibling_key), emptied when it
-- holds `max`.
local SEGMENT_KEYS = { by = {}, size = 0, max = 4096 }

local function segment_window_key(board_key, suffix, segment)
  local of_key = SEGMENT_KEYS.by[suffix]
  of_key = of_key and of_key[board_key]
  local known = of_key and of_key[segment]
  if known then return known end
  local key = keyspace.sibling_key(board_key, ':' .. suffix, '~' .. segment .. ':' .. suffix)
  if SEGMENT_KEYS.size >= SEGMENT_KEYS.max then SEGMENT_KEYS.by, SEGMENT_KEYS.size = {}, 0 end
  local of_suffix = SEGMENT_KEYS.by[suffix] or {}
  SEGMENT_KEYS.by[suffix] = of_suffix
  of_key = of_suffix[board_key] or {}
  of_suffix[board_key] = of_key
  of_key[segment], SEGMENT_KEYS.size = key, SEGMENT_KEYS.size + 1
  return key
end

-- Segment `name`'s slots and results keys of the board's window `w` of `windows` (call_state.bind_windows), as
-- segment_window_key makes them, kept by board window and segment from call to call (emptied when they hold `max`):
-- a write asks them in each window of each segment it names, and its crossing again.
local SEGMENT_WINDOWS = { by = {}, size = 0, max = 4096 }

local function segment_keys(windows, w, name)
  local board_slots = windows.slots[w]
  local of_window = SEGMENT_WINDOWS.by[board_slots]
  local keys = of_window and of_window[name]
  if keys then return keys[1], keys[2] end
  if SEGMENT_WINDOWS.size >= SEGMENT_WINDOWS.max then SEGMENT_WINDOWS.by, SEGMENT_WINDOWS.size, of_window = {}, 0, nil end
  if not of_window then
    of_window = {}
    SEGMENT_WINDOWS.by[board_slots] = of_window
  end
  keys = { segment_window_key(board_slots, 'slots', name), segment_window_key(windows.tops[w], 'top', name) }
  of_window[name], SEGMENT_WINDOWS.size = keys, SEGMENT_WINDOWS.size + 1
  return keys[1], keys[2]
end

-- The shard's segment names, all scored 0 so the zset is in byte order ("<tag>:segnames"): a name is
-- added with its first slot (segment_add) and pruned by the listing once no longer live, so a page
-- reads the names after a cursor in one bounded ZRANGE BYLEX instead of sorting every live one.
local function segment_names_key(cfg_key)
  return keyspace.sibling_key(cfg_key, 'cfg', 'segnames')
end

-- The live ends (segs, unix s; false: none) segment_refusal last read in the call `seq`, by segment, for the
-- growth the same request counts next (GROWTH.new_segment), before anything changes; forgotten when segs is
-- written (list_segments, forget_ends).
local ENDS = { seq = 0, by = {} }

local function forget_ends() ENDS.seq = 0 end

-- Segment `name`'s live end segment_refusal read in this call (false: none), or nil when it did not read it.
local function known_end(name)
  if ENDS.seq ~= CALL.seq then return nil end
  return ENDS.by[name]
end

-- Refuses, before anything is written, an event naming segments that would make more than `max`
-- segments live on this shard: 'TB_SEGMENT_LIMIT <live> <max> <new>', else nil. A segment whose
-- newest slot has expired (even if not drained yet) is not live: naming it again makes it new.
local function segment_refusal(cfg_key, names, max, now_sec)
  if #names == 0 then return nil end
  local segs = segment_indexes(cfg_key)
  local new = 0
  ENDS.seq, ENDS.by = CALL.seq, {}
  -- The names' ends read a thousand at a time (8 segments: one command, not 8; unpack takes fewer than 8 000).
  for first = 1, #names, 1000 do
    local last = math.min(#names, first + 999)
    local ends = redis.call('ZMSCORE', segs, unpack(names, first, last))
    for i = 1, last - first + 1 do
      local live_until = tonumber(ends[i])
      ENDS.by[names[first + i - 1]] = live_until or false
      if not live_until or live_until <= now_sec then new = new + 1 end
    end
  end
  if new == 0 then return nil end
  local live = redis.call('ZCOUNT', segs, '(' .. now_sec, '+inf')
  if live + new > max then return 'TB_SEGMENT_LIMIT ' .. live .. ' ' .. max .. ' ' .. new end
  return nil
end

-- What a write does first to segment `name` (segment_add), its due time `due_ms` (unix ms, segdue; nil: none):
-- 'drain' (drain_segment) where something of it is due (segment_drain_due), or on a board keeping snapshots where
-- it holds nothing yet; 'cross' (its boundaries only) on such a board where nothing is due before a later time:
-- none of its slots has expired and its next boundary is later (its due is the earlier of both), so a drain would
-- expire nothing and store the due it holds, unless an option settles windows with no expired slot
-- (window_settled: then it drains). nil: nothing.
local function write_drain(due_ms, now_ms, keeps_snapshots)
  if due_ms ~= nil and due_ms <= now_ms then return 'drain' end
  if not keeps_snapshots then return nil end
  if due_ms == nil or #call_state.hooks_of(CALL.cfg_key).window_settled > 0 then return 'drain' end
  return 'cross'
end

-- The due times (segdue, unix ms; false: none) of those of `names` this call has not written yet (segment_seen),
-- a thousand in one ZMSCORE (unpack takes fewer than 8 000); each is taken once (segment_due_of).
local function unseen_dues(segdue, names)
  local unseen, dues = {}, {}
  for _, name in ipairs(names) do
    if not seg_views.segment_seen(name) then unseen[#unseen + 1] = name end
  end
  for first = 1, #unseen, 1000 do
    local last = math.min(#unseen, first + 999)
    local got = redis.call('ZMSCORE', segdue, unpack(unseen, first, last))
    for i = 1, last - first + 1 do dues[unseen[first + i - 1]] = tonumber(got[i]) or false end
  end
  return dues
end

-- The due time of segment `name` (nil: none) from `dues` (unseen_dues), taken once: a name repeated later
-- in the same write (after its drain may have moved it) is read again.
local function segment_due_of(dues, segdue, name)
  local due = dues[name]
  dues[name] = nil
  if due == nil then due = tonumber(redis.call('ZSCORE', segdue, name)) end
  return due or nil
end

-- The segments' live ends and names (segment_lib's segment_add: `listed`: end, name, ...) written in one ZADD each to the
-- shard's indexes (segs, segnames), as each segment's own pair of ZADDs would leave them.
local function list_segments(segs, listed)
  if #listed == 0 then return end
  forget_ends()
  local names = {}
  for i = 2, #listed, 2 do names[#names + 1], names[#names + 2] = '0', listed[i] end
  redis.call('ZADD', segs, 'GT', unpack(listed))
  redis.call('ZADD', segment_names_key(CALL.cfg_key), unpack(names))
end

seg_index.segment_indexes = segment_indexes
seg_index.segment_window_key = segment_window_key
seg_index.segment_keys = segment_keys
seg_index.segment_names_key = segment_names_key
seg_index.write_drain = write_drain
seg_index.unseen_dues = unseen_dues
seg_index.segment_due_of = segment_due_of
seg_index.list_segments = list_segments
seg_index.segment_refusal = segment_refusal
seg_index.known_end = known_end
seg_index.forget_ends = forget_ends
