-- module: drains
-- requires: actor_log, call_state, hooks
-- drain_lib: a drain of expired slots weighed by window (window_lib's expire_all `drain`), a module of
-- the ranking function library. A drained field runs what the board's options run for it (actor_lib's
-- drained_weight: two commands on a window no option follows, ~14 on a `groups: true` board, whose
-- every leaving item goes out of the groups map), so a drain given fields alone held Redis as long as
-- its options made it: a write's drain of EXPIRE_CHUNK fields on a groups board ran 1 420 commands
-- (13.3 ms at the worst-case harness's full size, issue #45). A drain spends units (about a Redis
-- command each), each field weighed for its window, and at most `chunk` fields in all; it takes one
-- field at least, whatever its units, so every call gets further.
-- KEYS: 0

local ACTORS = actor_log.ACTORS

-- The units of an expired field of `top_key`: actor_lib's drained_weight, and the options' own
-- (hooks_lib drained_weight), asked once a drain.
local function weight(drain, top_key)
  local known = drain.weights[top_key]
  if known then return known end
  local units = drain.weigh(top_key)
  for _, extra in ipairs(call_state.hooks_of_top(top_key).drained_weight) do units = units + extra(top_key) end
  known = math.max(1, units)
  drain.weights[top_key] = known
  return known
end

-- The fields the drain may take next from the window `top_key`: what its units pay for there (the
-- first field of the drain whatever they pay), while its chunk lasts.
local function fields(drain, top_key)
  local count = math.floor(drain.units / weight(drain, top_key))
  if count < 1 and not drain.took then count = 1 end
  return math.max(0, math.min(drain.chunk, count))
end

-- The window `top_key`, given `given` fields, left `rest` of them: those it took come off the drain's
-- chunk and units (`noted`, when given, told). Answers the chunk left (expire_all goes on with it).
local function spent(drain, top_key, given, rest)
  local took = given - rest
  drain.chunk, drain.units = drain.chunk - took, drain.units - took * weight(drain, top_key)
  if took > 0 then
    drain.took = true
    if drain.noted then drain.noted() end
  end
  return drain.chunk
end

-- A drain of `units` and at most `chunk` fields, a field of a window weighing `weigh(top_key)` and its
-- options' own; `noted` (nil: none) is called when a window gave fields.
local function weighed(chunk, units, weigh, noted)
  return { chunk = chunk, units = units, weigh = weigh, weights = {}, took = false, fields = fields, spent = spent,
    noted = noted }
end

-- The units of a field of a window no option follows: what a drain of `chunk` such fields spends.
local function plain_weight()
  return ACTORS.STEP.DRAINED + ACTORS.STEP.LEFT * #hooks.item_left
end

-- A write's (or a read's) drain of the header's `chunk` fields: as many fields as before on a window no
-- option follows, fewer where each runs more.
local function call_drain(chunk)
  return weighed(chunk, chunk * plain_weight(), ACTORS.drained_weight)
end

-- The fields a read's drain of the header's `chunk` fields takes from its one window `top_key`: as a write's
-- (call_drain), fewer where the board's options run more for each (archive_read's drain_budget).
local function read_fields(chunk, top_key)
  local drain = call_drain(chunk)
  return drain.fields(drain, top_key)
end

hooks.export_all(drains, { 'weighed', weighed, 'call_drain', call_drain, 'read_fields', read_fields })
