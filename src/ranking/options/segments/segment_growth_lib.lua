-- module: segment_growth
-- requires: actor_log, board_views, call_state, hooks, keyspace, seg_index, segmentation, window
-- segment_growth_lib: what a write's entries would make new in actor contributions and segment
-- entries (the quotas' growth kinds), worked out before the write changes anything; and the segments
-- option's part of the board config (src/ranking/options/segments/): its setting (`segments: { max }`,
-- the config field segmentsMax) planned and stored through the config hooks, and the segments' windows
-- going with the board's (window_copies); and the take-back of a like's segments over bounded calls
-- (like).
-- KEYS: 0

local CALL = call_state.CALL

-- The growth of a write's entries the quotas count (actorEntries, segmentEntries), worked out before
-- anything changes, so a write past its allowance is refused whole: `actors`, the contributions an
-- entry makes new (actor_lib: a field of a window's act:<start>, a board's or a segment's window, and
-- the item's distinct-actor count there when it is the item's first actor in that window), and
-- `segments`, the fields it makes new in a segment window's slot (an item's first amount there). `seen`:
-- the fields counted so far in the request (two entries of a batch creating one field count once).
local GROWTH = { actors = 0, segments = 0, seen = {} }

function GROWTH.begin()
  GROWTH.actors, GROWTH.segments, GROWTH.seen = 0, 0, {}
end

-- 1 when field `field` of hash `key` is absent and not counted yet in this request, else 0.
function GROWTH.new_field(key, field)
  local id = key .. '\0' .. field
  if GROWTH.seen[id] then return 0 end
  GROWTH.seen[id] = true
  return redis.call('HEXISTS', key, field) == 1 and 0 or 1
end

-- The keys segment `name` makes on this shard when it is not live here (not counted yet in this
-- request): each window's slots and results zsets and each view's four keys (write-rules.ts
-- segmentKeysOf), counted as that many segment entries; 0 for a live one.
function GROWTH.new_segment(name, window_count)
  local id = 'segment\0' .. name
  if GROWTH.seen[id] then return 0 end
  GROWTH.seen[id] = true
  local live_until = seg_index.known_end(name)
  if live_until == nil then live_until = tonumber(redis.call('ZSCORE', segmentation.segment_indexes(CALL.cfg_key), name)) end
  if live_until and live_until > math.floor(call_state.now_ms() / 1000) then return 0 end
  if board_views.VIEWS.loaded ~= CALL.seq then board_views.views_load(CALL.cfg_key, call_state.now_ms()) end
  return 2 * window_count + 4 * #board_views.VIEWS.list
end

-- Counts what one entry (item, actor "" for none, segment names) creates in the windows of `covering`
-- (see window_holds) at the slot of `at_sec`, of the call's `windows` (call_state.bind_windows).
function GROWTH.of_entry(windows, covering, at_sec, item, actor, names)
  if actor == '' and #names == 0 then return end
  for _, name in ipairs(names) do GROWTH.segments = GROWTH.segments + GROWTH.new_segment(name, windows.count) end
  local pair = actor .. actor_log.ACTORS.SEP .. item
  for w = 0, windows.count - 1 do
    if covering[w] then
      local _, interval_sec, origin_sec = window.window_rule(windows, w)
      local slot_start = window.current_slot(at_sec, interval_sec, origin_sec)
      local slots_key = windows.slots[w]
      if actor ~= '' then GROWTH.actors = GROWTH.actors + actor_log.ACTORS.new_entries(GROWTH.new_field, slots_key, slot_start, item, pair) end
      for _, name in ipairs(names) do
        local segment_slots = segmentation.segment_window_key(slots_key, 'slots', name)
        GROWTH.segments = GROWTH.segments + GROWTH.new_field(window.slot_key_of(segment_slots, slot_start), item)
        if actor ~= '' then
          GROWTH.actors = GROWTH.actors + actor_log.ACTORS.new_entries(GROWTH.new_field, segment_slots, slot_start, item, pair)
        end
      end
    end
  end
end

-- The refusal of the growth counted since GROWTH.begin past the allowances (-1: no quota), or nil.
function GROWTH.refusal(actor_allowance, segment_allowance)
  if actor_allowance >= 0 and GROWTH.actors > actor_allowance then
    return 'TB_QUOTA actorEntries ' .. GROWTH.actors
  end
  if segment_allowance >= 0 and GROWTH.segments > segment_allowance then
    return 'TB_QUOTA segmentEntries ' .. GROWTH.segments
  end
  return nil
end

-- Whether a write with these allowances counts its growth (some quota is on): with none, nothing is read.
function GROWTH.counted(actor_allowance, segment_allowance)
  return actor_allowance >= 0 or segment_allowance >= 0
end

segment_growth.GROWTH = GROWTH

-- A board PUT: the segments.max asked (absent: the stored one, none for a new board). A change is a new
-- config version (the writes take the max from their args) and keeps every window's data.
local function segments_planned(cfg_key, settings, reset, plan)
  local stored = plan and tonumber(redis.call('HGET', cfg_key, 'segmentsMax') or '') or nil
  if settings.segmentsMax == nil then settings.segmentsMax = stored end
  if plan and settings.segmentsMax ~= stored then plan.changed = true end
end

-- Stores segments.max (config field `segmentsMax`, absent: none); the option has no hot hook to enable.
local function segments_stored(cfg_key, settings)
  local max = settings.segmentsMax or 0
  if max > 0 then redis.call('HSET', cfg_key, 'segmentsMax', max) else redis.call('HDEL', cfg_key, 'segmentsMax') end
  return false
end

-- The bases of the window `window_name` of every segment holding slots ("<tag>:segdue"): they go with
-- the board's window (window_lib's drop_window).
local function segment_windows(cfg_key, window_name)
  local bases = {}
  for _, segment in ipairs(redis.call('ZRANGE', keyspace.sibling_key(cfg_key, 'cfg', 'segdue'), 0, -1)) do
    bases[#bases + 1] = keyspace.sibling_key(cfg_key, 'cfg', window_name .. '~' .. segment .. ':')
  end
  return bases
end

-- Take-backs: an unlike takes the like out of the board's windows and of at most `most` of the
-- segments it was counted in (the service's share of WRITE_COST_PER_CALL: a like stored past the write
-- bound may name more); the segments left are recorded in the shard's "liketb" hash, "<item><US><user>"
-- -> "<liked ms>,<segment>,...", and taken back by the next calls (an unlike, or the service's resume),
-- `most` each. A member is never both held (likes zset) and recorded: a like is refused while its
-- take-back is recorded (TB_LIKE_TAKE_BACK_PENDING), a take-back is recorded only as the like leaves.
local function take_back_key(likes_key)
  return keyspace.sibling_key(likes_key, 'likes', 'liketb')
end

local function take_back_pending(likes_key, member)
  return redis.call('HEXISTS', take_back_key(likes_key), member) == 1
end

-- The take-back an unlike runs: of the held like made at `liked_ms` (its recorded segments), else of
-- one recorded, nil when there is none. A recorded one whose user or item a retraction blocks
-- (`refused()`) is forgotten: the retraction takes its counts out. { liked_ms, held, chunk (the
-- segments this call takes it out of), rest (those left) }.
local function take_back_plan(likes_key, member, liked_ms, most, refused)
  local names
  local plan = { liked_ms = liked_ms, held = liked_ms ~= nil, chunk = {}, rest = {} }
  if plan.held then
    names = segmentation.segment_names(redis.call('HGET', keyspace.sibling_key(likes_key, 'likes', 'likesegs'), member) or '')
  else
    local record = redis.call('HGET', take_back_key(likes_key), member)
    if not record then return nil end
    if refused() then
      redis.call('HDEL', take_back_key(likes_key), member)
      return nil
    end
    names = segmentation.segment_names(record)
    plan.liked_ms = tonumber(table.remove(names, 1))
  end
  for i, name in ipairs(names) do
    if i <= most then plan.chunk[#plan.chunk + 1] = name else plan.rest[#plan.rest + 1] = name end
  end
  return plan
end

-- Applies the record of `plan` (take_back_plan): the held like leaves the likes zset and its recorded
-- segments; the segments left are recorded, or the record forgotten. The counts are the caller's.
local function record_take_back(likes_key, member, plan)
  local key = take_back_key(likes_key)
  if plan.held then
    redis.call('ZREM', likes_key, member)
    redis.call('HDEL', keyspace.sibling_key(likes_key, 'likes', 'likesegs'), member)
  end
  if #plan.rest > 0 then
    redis.call('HSET', key, member, plan.liked_ms .. ',' .. table.concat(plan.rest, ','))
  elseif not plan.held then
    redis.call('HDEL', key, member)
  end
end

hooks.export_all(segment_growth, { 'take_back_pending', take_back_pending, 'take_back_plan', take_back_plan,
  'record_take_back', record_take_back })

hooks.register_all('segments', { 'window_copies', segment_windows, 'config_planned', segments_planned,
  'config_stored', segments_stored })
