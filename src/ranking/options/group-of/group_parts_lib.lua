-- module: group_parts
-- requires: archive, call_state, group_members, group_of, snapshot
-- group_parts_lib: a group board's history over a sharded member board M. No call holds two shards'
-- keys, so no crossing sees a group whole: each shard's crossing of the member window W (hook
-- boundary_crossing, group_history_lib) records its part of the listing at the boundary, the
-- groups it holds members of with their best `top` listed members then (the shard's group zsets are
-- exact there, as an unsharded W's are), and a settle round of the group board (a read, the
-- scheduler's visit) merges the parts of each boundary into the listing shard 0 keeps, where the
-- group board's scores live (src/ranking/group-boards/group-history.ts, group_history_store.lua).
-- A listing is kept at a boundary only where every shard's part is known: recorded there, or empty
-- (the shard held no member of the group board then: attached later, <base>since); a calendar
-- period's from the parts of the shards that wrote in it. Keys, on each shard, base "<tag>:<W>%<G>:":
--   <base>since     string the slot start (unix s) of the shard's first membership change (before it,
--                   its part of every boundary is empty)
--   <base>parts     zset   at -> at: the boundaries whose parts the shard recorded, the newest
--                          PARTS_KEPT (a read or the scheduler's visit of the group board merges them
--                          every few seconds: an older part is dropped, its boundary keeps no listing)
--   <base>part:<at> hash   "g\31<group>" -> the group's best `top` listed members on the shard at the
--                          boundary ("\30<item>\31<score>" rows, best first; "\31x" after a score:
--                          retracted since, counted as held but worth nothing); "i\31<item>" -> its
--                          group; "o\31<k>" the k-th group recorded, "<members>\31<group>" (k from 1:
--                          the merge reads a part a page of groups at a time, read_page); "\29k" the
--                          groups recorded; "\29n" next group (sorted ids) to record (-1: done);
--                          "\29c" the members recorded; "\29o" 1: over its room (no listing kept at
--                          the boundary)
-- A part holds at most floor(rcap / (PARTS_KEPT x shards)) members, so the parts of all shards hold
-- at most MAX_RECORDED_MEMBERS_PER_BOARD (rcap), as shard 0's records of the merged listings do.
-- KEYS: 0

local PARTS_KEPT = 4
-- The crossing rows a recorded member weighs: read, then written as a hash field and a row of its
-- group's text (about twice a snapshot row's instructions: bench/group-history-instructions.ts).
local PART_ROW_WEIGHT = 2
local NEXT, COUNT, OVER, GROUP, ITEM = '\29n', '\29c', '\29o', 'g\31', 'i\31'
local ORDINAL, GROUPS = 'o\31', '\29k'
local RETRACTED = '\31x'

local function part_key(base, at) return base .. 'part:' .. at end

-- The members one shard's part of a listing may hold (see above).
local function part_room(cfg_key, base)
  local shards = tonumber(call_state.config_field(cfg_key, 'shards') or '1')
  return math.floor(tonumber(redis.call('GET', base .. 'rcap') or '0') / (PARTS_KEPT * shards))
end

-- The group's rows (item, score pairs, best first) into the hash `key` as a group's text and each
-- item's group: a part's, and a kept listing's record (group_history_out_lib). Answers the members.
local function record_rows(key, group, rows)
  local text, fields = {}, { GROUP .. group, '' }
  for i = 1, #rows, 2 do
    text[#text + 1] = archive.SNAP_ROW .. rows[i] .. archive.SNAP_FIELD .. rows[i + 1]
    fields[#fields + 1], fields[#fields + 2] = ITEM .. rows[i], group
  end
  fields[2] = table.concat(text)
  redis.call('HSET', key, unpack(fields))
  return #rows / 2
end

-- Where the record at `key` (a part, or a kept listing's record) goes on: its next group to record and
-- the members recorded, with the group board's rule and its `top`; nil once it is done or the group
-- board keeps no rule.
local function resumed(key, base)
  local held = redis.call('HMGET', key, NEXT, COUNT)
  local first = tonumber(held[1] or '0')
  if first < 0 then return nil end
  local rule = redis.call('GET', base .. 'rule')
  if not rule then return nil end
  return first, tonumber(held[2] or '0'), rule, tonumber(string.match(rule, '^(%d+) '))
end

-- Records the shard's part of the listing at `at` from the first group not recorded yet, within the
-- call's crossing rows: true once done (or over its room). `member_top`: W's results on the shard.
local function recorded(cfg_key, base, at, member_top)
  local key = part_key(base, at)
  local first, count, _, top = resumed(key, base)
  if not first then return true end
  local room = part_room(cfg_key, base)
  local index = base .. 'parts'
  redis.call('ZADD', index, at, at)
  for _, old in ipairs(redis.call('ZRANGE', index, 0, -(PARTS_KEPT + 1))) do
    redis.call('UNLINK', part_key(base, old))
    redis.call('ZREM', index, old)
  end
  local held = redis.call('HGET', key, GROUPS)
  if first > 0 and not held then
    -- Begun before its groups were numbered: not readable a page at a time (read_parts), kept as over.
    redis.call('HSET', key, OVER, 1, NEXT, -1)
    return true
  end
  held = tonumber(held or '0')
  local groups, ex = redis.call('HKEYS', base .. 'groups'), group_members.exceptions_of(member_top)
  table.sort(groups)
  for i = first + 1, #groups do
    if snapshot.crossing_work(0) <= 0 then
      redis.call('HSET', key, NEXT, i - 1, COUNT, count, GROUPS, held)
      return false
    end
    local rows, read = group_members.best_rows(group_of.GROUP_OF.group_key(base, groups[i]), top, ex)
    snapshot.crossing_work(PART_ROW_WEIGHT * read + 1)
    if count + #rows / 2 > room then
      redis.call('HSET', key, OVER, 1)
      break
    end
    if #rows > 0 then
      count, held = count + record_rows(key, groups[i], rows), held + 1
      redis.call('HSET', key, ORDINAL .. held, (#rows / 2) .. '\31' .. groups[i])
    end
  end
  redis.call('HSET', key, NEXT, -1, COUNT, count, GROUPS, held)
  return true
end

-- The shard's recorded parts (done ones only), oldest first: { at, over (0|1), groups recorded } each,
-- and since (-1: the shard never held a member). Their groups: read_page.
local function read_parts(base)
  local parts = {}
  for _, at in ipairs(redis.call('ZRANGE', base .. 'parts', 0, -1)) do
    local held = redis.call('HMGET', part_key(base, at), NEXT, OVER, GROUPS)
    -- A part recorded before its groups were numbered ("\29k") cannot be read a page at a time: as
    -- one over its room, its boundary keeps no listing.
    local over = (held[2] or not held[3]) and 1 or 0
    if held[1] == '-1' then parts[#parts + 1] = { tonumber(at), over, tonumber(held[3] or '0') } end
  end
  return parts, tonumber(redis.call('GET', base .. 'since') or '-1')
end

-- The groups of the part at `at` after the `after`-th recorded, while their members fit `rows` (at
-- least one group): [[group, [item, score, retracted (0|1), ...]], ...], and the last group answered
-- (-1: the part's last, or no such part).
local function read_page(base, at, after, rows)
  local key, groups, taken = part_key(base, at), {}, 0
  local last = tonumber(redis.call('HGET', key, GROUPS) or '0')
  for k = after + 1, last do
    local size, group = string.match(redis.call('HGET', key, ORDINAL .. k), '^(%d+)\31(.*)$')
    if #groups > 0 and taken + tonumber(size) > rows then return groups, k - 1 end
    local members = {}
    for item, score, mark in string.gmatch(redis.call('HGET', key, GROUP .. group) or '', '\30([^\30\31]*)\31([^\30\31]*)(\31?x?)') do
      members[#members + 1], members[#members + 2], members[#members + 3] = item, score, mark == RETRACTED and 1 or 0
    end
    groups[#groups + 1], taken = { group, members }, taken + tonumber(size)
  end
  return groups, -1
end

-- Drops the shard's parts at or before `upto` (merged, or never to be).
local function dropped(base, upto)
  for _, at in ipairs(redis.call('ZRANGE', base .. 'parts', '-inf', upto, 'BYSCORE')) do
    redis.call('UNLINK', part_key(base, at))
    redis.call('ZREM', base .. 'parts', at)
  end
end

-- The item's rows in the shard's parts marked retracted (the merge then counts them as held, worth
-- nothing: the member past `top` does not move in). Answers the units left.
local function item_out(base, item, budget, costs)
  for _, at in ipairs(redis.call('ZRANGE', base .. 'parts', 0, -1)) do
    local key = part_key(base, at)
    local group = redis.call('HGET', key, ITEM .. item)
    if group then
      local rows = redis.call('HGET', key, GROUP .. group) or ''
      local marked = string.gsub(rows, '(\30' .. string.gsub(item, '%W', '%%%0') .. '\31[^\30\31]*)', '%1' .. RETRACTED, 1)
      redis.call('HSET', key, GROUP .. group, marked)
      redis.call('HDEL', key, ITEM .. item)
      budget = budget - costs.listing
    end
  end
  return budget
end

-- The shard's first membership change of the group board at `base`, in the slot starting at `slot`.
local function attached(base, slot)
  redis.call('SET', base .. 'since', slot, 'NX')
end

group_parts.recorded = recorded
group_parts.read_parts = read_parts
group_parts.read_page = read_page
group_parts.dropped = dropped
group_parts.item_out = item_out
group_parts.attached = attached
group_parts.record_rows = record_rows
group_parts.resumed = resumed
